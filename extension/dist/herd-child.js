// herd's child extension, bundled from extension/herd-child.ts by `cargo xtask docs`; sources sha256 49fc5eaead2ee3a87f6aac5240348eeb88ec5b3d6c9aa3d4727e74906f345f1f
// src/child/files.ts
import * as fs from "node:fs";
import * as path from "node:path";
var READ_LIMIT = 1024 * 1024;
function readSmall(file, limit = READ_LIMIT) {
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile() || stat.size > limit) return void 0;
    return fs.readFileSync(file, "utf8");
  } catch {
    return void 0;
  }
}
function writeAtomic(file, text, tmpSuffix) {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 448 });
  const tmp = `${file}.${process.pid}.${tmpSuffix}.tmp`;
  fs.rmSync(tmp, { force: true });
  fs.writeFileSync(tmp, text, { mode: 384, flag: "wx" });
  fs.renameSync(tmp, file);
}
function appendPrivate(file, line) {
  const { O_APPEND, O_CREAT, O_WRONLY, O_NOFOLLOW } = fs.constants;
  const fd = fs.openSync(file, O_APPEND | O_CREAT | O_WRONLY | O_NOFOLLOW, 384);
  try {
    fs.writeSync(fd, line);
  } finally {
    fs.closeSync(fd);
  }
}
function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
function parseObject(text) {
  if (text === void 0) return void 0;
  try {
    const value = JSON.parse(text);
    return isObject(value) ? value : void 0;
  } catch {
    return void 0;
  }
}
function stringAt(object, key) {
  const value = object?.[key];
  return typeof value === "string" ? value : void 0;
}
function integerAt(object, key) {
  const value = object?.[key];
  return typeof value === "number" && Number.isInteger(value) ? value : void 0;
}
function label(value) {
  if (typeof value !== "string" || value.length === 0) return void 0;
  return value.replace(/[\r\n]+/g, " ").slice(0, 200);
}

// src/child/programs.ts
import { spawn } from "node:child_process";
import * as path2 from "node:path";
function herdProgram(binDir, name) {
  return binDir ? path2.join(binDir, name) : name;
}
function killGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {
  }
}
var STDERR_TAIL = 4e3;
function runProgram(program, args, options) {
  return new Promise((resolve2) => {
    let stdout = "";
    let stderr = "";
    let error;
    let child;
    try {
      child = spawn(program, args, { detached: true, stdio: ["ignore", "pipe", "pipe"] });
    } catch (err) {
      resolve2({ code: null, stdout, stderr, error: String(err) });
      return;
    }
    if (child.pid !== void 0) options.started?.(child.pid);
    child.stdout.on("data", (chunk) => {
      if (stdout.length < options.stdoutLimit) stdout += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_TAIL);
    });
    let settled = false;
    const finish = (code) => {
      if (settled) return;
      settled = true;
      resolve2(error === void 0 ? { code, stdout, stderr } : { code, stdout, stderr, error });
    };
    child.on("error", (err) => {
      error = String(err);
      if (child.pid === void 0) finish(null);
    });
    child.on("close", finish);
  });
}

// src/child/accept.ts
var CHECK_FEEDBACK_CHARS = 4e3;
var CHECK_KILL_GRACE_MS = 5e3;
var CHECK_SLACK_MS = 3e4;
var ANSWER_LIMIT = 256 * 1024;
function readAcceptLimits(file) {
  if (!file) return void 0;
  const spec = parseObject(readSmall(file));
  const run = stringAt(spec, "run");
  if (integerAt(spec, "version") !== 1 || !run) return void 0;
  const maxRetries = integerAt(spec, "maxRetries");
  const timeoutSec = integerAt(spec, "timeoutSec");
  return {
    maxRetries: maxRetries === void 0 ? 1 : Math.min(Math.max(maxRetries, 0), 5),
    timeoutSec: timeoutSec === void 0 ? 600 : Math.min(Math.max(timeoutSec, 1), 3600)
  };
}
var AcceptChecks = class {
  constructor(binDir) {
    this.binDir = binDir;
  }
  binDir;
  running = /* @__PURE__ */ new Set();
  /** Runs the check of the spec at `specFile` once in `cwd`. */
  async run(specFile, cwd, limits) {
    const program = herdProgram(this.binDir, "herd-accept");
    let pid;
    const guard = setTimeout(
      () => {
        if (pid !== void 0) killGroup(pid, "SIGTERM");
      },
      limits.timeoutSec * 1e3 + CHECK_KILL_GRACE_MS + CHECK_SLACK_MS
    );
    const run = await runProgram(program, ["check", "--spec", specFile, "--cwd", cwd, "--json"], {
      stdoutLimit: ANSWER_LIMIT,
      started: (started) => {
        pid = started;
        this.running.add(started);
      }
    });
    clearTimeout(guard);
    if (pid !== void 0) this.running.delete(pid);
    const answer = parseObject(run.stdout);
    if (!answer || typeof answer.passed !== "boolean") {
      const why = run.error ?? `${program} exited with ${run.code ?? "a signal"}: ${run.stderr.trim()}`;
      return { passed: false, exitCode: null, timedOut: false, output: why, why: `could not run (${why})` };
    }
    return checkResultOf(answer);
  }
  /**
   * Asks every running herd-accept to stop: it terminates its check's group (SIGTERM, then
   * SIGKILL a second later), so it is never killed outright here.
   */
  stop() {
    for (const pid of this.running) killGroup(pid, "SIGTERM");
  }
};
function checkResultOf(answer) {
  const exitCode = integerAt(answer, "exit_code") ?? null;
  const outcome = stringAt(answer, "outcome");
  const timedOut = answer.timed_out === true;
  const output = stringAt(answer, "output") ?? "";
  let why;
  switch (outcome) {
    case "passed":
      why = "passed";
      break;
    case "timed-out":
      why = `timed out after ${integerAt(answer, "timeout_sec") ?? "its timeout of"}s`;
      break;
    case "signalled":
      why = `was ended by signal ${integerAt(answer, "signal") ?? "?"}`;
      break;
    case "cancelled":
      why = "was cancelled";
      break;
    case "directory-missing":
    case "could-not-start":
      why = `could not run (${stringAt(answer, "error") ?? outcome})`;
      break;
    default:
      why = `exited with ${exitCode}`;
  }
  return {
    passed: answer.passed === true,
    exitCode,
    timedOut,
    output: output || (stringAt(answer, "error") ?? ""),
    why
  };
}

// src/child/activity.ts
var THROTTLE_MS = 500;
var Activity = class {
  /**
   * `file` is the snapshot; `runId` the run it speaks for. A persistent specialist's sequence
   * never resets, not even across a restart of Pi, so it goes on from the snapshot it finds.
   */
  constructor(file, runId, persistent) {
    this.file = file;
    this.runId = runId;
    this.persistent = persistent;
    const previous = file ? parseObject(readSmall(file)) : void 0;
    const sequence = integerAt(previous, "sequence");
    if (stringAt(previous, "runningChildId") === runId && sequence !== void 0) {
      this.sequence = sequence;
      this.inputs = integerAt(previous, "inputCount") ?? 0;
    }
  }
  file;
  runId;
  persistent;
  sequence = 0;
  /** The inputs Pi took (`inputCount`): a steer is delivered once it grows after its keys. */
  inputs = 0;
  createdAt = Date.now();
  phase = "starting";
  latestEvent = "session_start";
  agentActive = false;
  turnActive = false;
  providerActive = false;
  streaming = false;
  toolActive = false;
  activeSince = void 0;
  waitingSince = void 0;
  turnIndex = void 0;
  messageEventType = void 0;
  toolCallId = void 0;
  toolName = void 0;
  toolStartedAt = void 0;
  toolEndedAt = void 0;
  frozen = false;
  failures = 0;
  lastFlush = 0;
  pending = void 0;
  /** Records `event`; `update` changes the state first. Streaming events are throttled. */
  record(event, update, throttled = false) {
    if (!this.file || this.failures >= 3) return;
    if (this.frozen && !(this.persistent && event === "input")) return;
    this.frozen = false;
    update?.(this);
    this.latestEvent = event;
    this.sequence += 1;
    this.derivePhase();
    if (throttled) {
      const wait = this.lastFlush + THROTTLE_MS - Date.now();
      if (wait > 0) {
        this.pending ??= setTimeout(() => this.flush(), wait);
        return;
      }
    }
    this.flush();
  }
  /** Records a final event: phase `done`, then no more writes until a persistent task starts. */
  finish(event) {
    if (!this.file || this.frozen) return;
    this.agentActive = this.turnActive = this.providerActive = this.streaming = this.toolActive = false;
    this.latestEvent = event;
    this.sequence += 1;
    this.phase = "done";
    this.flush();
    this.frozen = true;
  }
  /** Pi took one more input: a message typed or sent to it, not one this extension started. */
  tookInput() {
    this.inputs += 1;
    this.setAgent(true);
  }
  setAgent(active) {
    this.agentActive = active;
    if (!active) this.turnActive = this.providerActive = this.streaming = this.toolActive = false;
  }
  setTurn(active, index) {
    this.turnActive = active;
    if (index !== void 0) this.turnIndex = index;
    if (!active) this.providerActive = this.streaming = false;
  }
  setProvider(active) {
    this.providerActive = active;
  }
  setStreaming(active, type) {
    this.streaming = active;
    if (type) this.messageEventType = label(type);
  }
  startTool(id, name) {
    this.toolActive = true;
    this.toolCallId = label(id);
    this.toolName = label(name);
    this.toolStartedAt = Date.now();
    this.toolEndedAt = void 0;
  }
  endTool() {
    this.toolActive = false;
    this.toolEndedAt = Date.now();
  }
  scope() {
    if (this.toolActive) return "tool";
    if (this.providerActive) return "provider";
    if (this.streaming) return "streaming";
    if (this.turnActive) return "turn";
    if (this.agentActive) return "agent";
    return void 0;
  }
  derivePhase() {
    const now = Date.now();
    if (this.agentActive || this.turnActive || this.toolActive) {
      if (this.phase !== "active") this.activeSince = now;
      this.phase = "active";
      this.waitingSince = void 0;
    } else if (this.phase === "active" || this.latestEvent === "agent_end") {
      this.phase = "waiting";
      this.waitingSince = now;
      this.activeSince = void 0;
    }
  }
  flush() {
    if (this.pending) {
      clearTimeout(this.pending);
      this.pending = void 0;
    }
    const snapshot = {
      version: 1,
      runningChildId: this.runId,
      createdAt: this.createdAt,
      updatedAt: Date.now(),
      sequence: this.sequence,
      latestEvent: this.latestEvent,
      phase: this.phase,
      agentActive: this.agentActive,
      turnActive: this.turnActive,
      providerActive: this.providerActive,
      toolActive: this.toolActive
    };
    const optional = {
      activeScope: this.scope(),
      activeSince: this.activeSince,
      waitingSince: this.waitingSince,
      turnIndex: this.turnIndex,
      messageEventType: this.messageEventType,
      toolCallId: this.toolCallId,
      toolName: this.toolName,
      toolStartedAt: this.toolStartedAt,
      toolEndedAt: this.toolEndedAt,
      inputCount: this.inputs > 0 ? this.inputs : void 0
    };
    for (const [key, value] of Object.entries(optional)) {
      if (value !== void 0) Object.assign(snapshot, { [key]: value });
    }
    try {
      writeAtomic(this.file, `${JSON.stringify(snapshot)}
`, String(this.sequence));
      this.failures = 0;
      this.lastFlush = Date.now();
    } catch {
      this.failures += 1;
    }
  }
};

// src/child/config.ts
function readConfig(env, argv) {
  return {
    runId: env.PI_SUBAGENT_ID ?? "",
    sessionFile: env.PI_SUBAGENT_SESSION ?? env.PI_HERDR_AGENTS_SESSION ?? "",
    name: env.PI_SUBAGENT_NAME ?? "subagent",
    agent: env.PI_SUBAGENT_AGENT ?? "",
    autoExit: env.PI_SUBAGENT_AUTO_EXIT === "1",
    persistent: env.PI_SUBAGENT_PERSISTENT === "1",
    generationId: env.PI_SUBAGENT_GENERATION_ID ?? "",
    taskId: env.PI_SUBAGENT_TASK_ID ?? "",
    activityFile: env.PI_SUBAGENT_ACTIVITY_FILE ?? "",
    acceptFile: env.PI_SUBAGENT_ACCEPT_FILE ?? "",
    deniedTools: (env.PI_DENY_TOOLS ?? "").split(",").map((t) => t.trim()).filter((t) => t.length > 0),
    projectTrusted: env.HERD_PROJECT_TRUST === "trusted",
    binDir: env.HERD_BIN_DIR ?? "",
    artifacts: env.HERD_ARTIFACTS ?? "",
    printMode: argv.includes("-p") || argv.includes("--print")
  };
}

// src/child/inbox.ts
import * as fs2 from "node:fs";
import * as path4 from "node:path";

// src/generated/run-files.ts
import * as path3 from "node:path";
var RUNS_DIR = "runs";
var RUN_FILES = {
  record: ".json",
  events: ".events.jsonl",
  result: ".result.json",
  launcher: ".launcher.json",
  steerLock: ".steer.lock",
  usageLock: ".usage.lock",
  delivered: ".delivered",
  ledgered: ".ledgered",
  launchRequest: ".request.json",
  execPrompt: ".prompt.md",
  execSession: ".session.jsonl",
  runnerExit: ".runner-exit.json",
  leader: ".leader.json",
  cancel: ".cancel.json",
  interrupt: ".interrupt.json",
  timeout: ".timeout.json",
  steer: ".steer.json",
  steering: ".steering.json",
  superseded: ".superseded.json",
  predecessor: ".predecessor.json",
  resurrected: ".resurrected.json",
  acceptance: ".acceptance.json",
  review: ".review.json",
  remote: ".remote.json",
  usage: ".usage.json"
};
function runFileName(runId, kind) {
  return `${runId}${RUN_FILES[kind]}`;
}
function runFile(dir, runId, kind) {
  return path3.join(dir, RUNS_DIR, runFileName(runId, kind));
}
function recordRunId(name) {
  return name.endsWith(RUN_FILES.record) ? name.slice(0, -RUN_FILES.record.length) : void 0;
}
var SESSION_FILES = {
  exit: ".exit",
  process: ".process.json",
  policy: ".pi-herdr-subagent-policy.json",
  tasks: ".tasks",
  ledger: ".ledger",
  ledgerLock: ".ledger.lock",
  needsInput: ".needs-input.json",
  acceptTries: ".accept-tries.json"
};
function sessionFile(session, kind) {
  return `${session}${SESSION_FILES[kind]}`;
}
var TASK_INBOX_PREFIX = ".task-inbox.";
var TASK_INBOX_SUFFIX = ".json";

// src/child/inbox.ts
var INBOX_POLL_MS = 1e3;
function entryOf(text) {
  const entry = parseObject(text);
  const task = stringAt(entry, "task");
  if (integerAt(entry, "version") !== 1 || task === void 0) return void 0;
  if (entry?.type === "stop") return { type: "stop", task };
  const message = stringAt(entry, "message");
  if (entry?.type === "task" && message !== void 0) return { type: "task", task, message };
  return void 0;
}
var Inbox = class {
  constructor(sessionFile2, handlers) {
    this.handlers = handlers;
    this.dir = path4.dirname(sessionFile2);
    this.prefix = `${path4.basename(sessionFile2)}${TASK_INBOX_PREFIX}`;
  }
  handlers;
  timer = void 0;
  dir;
  prefix;
  start() {
    if (this.timer) return;
    for (const name of this.list(`${TASK_INBOX_SUFFIX}.consuming`)) {
      try {
        fs2.renameSync(path4.join(this.dir, name), path4.join(this.dir, name.slice(0, -".consuming".length)));
      } catch {
      }
    }
    this.timer = setInterval(() => this.poll(), INBOX_POLL_MS);
    this.timer.unref();
  }
  stop() {
    if (this.timer) clearInterval(this.timer);
    this.timer = void 0;
  }
  list(suffix) {
    try {
      return fs2.readdirSync(this.dir).filter(
        (n) => n.startsWith(this.prefix) && n.endsWith(suffix) && /^\d{12}$/.test(n.slice(this.prefix.length, this.prefix.length + 12))
      ).sort();
    } catch {
      return [];
    }
  }
  poll() {
    if (this.handlers.closed()) return;
    const busy = this.handlers.busy();
    const name = this.list(TASK_INBOX_SUFFIX)[0];
    if (name === void 0) return;
    const file = path4.join(this.dir, name);
    const claimed = `${file}.consuming`;
    let text;
    try {
      if (busy && !(readSmall(file) ?? "").includes('"stop"')) return;
      fs2.renameSync(file, claimed);
      text = readSmall(claimed);
    } catch {
      return;
    }
    const entry = entryOf(text);
    if (!entry) {
      try {
        fs2.renameSync(claimed, `${file}.invalid`);
      } catch {
      }
      return;
    }
    try {
      fs2.unlinkSync(claimed);
    } catch {
    }
    this.handlers.take(entry);
  }
};

// src/child/needs-input.ts
var NeedsInput = class {
  /** `file` is `<session>.needs-input.json`; `runId` the run it speaks for. */
  constructor(file, runId, now = Date.now) {
    this.file = file;
    this.runId = runId;
    this.now = now;
    const previous = file ? parseObject(readSmall(file)) : void 0;
    const sequence = integerAt(previous, "sequence");
    if (stringAt(previous, "runningChildId") === runId && sequence !== void 0) this.sequence = sequence;
  }
  file;
  runId;
  now;
  sequence = 0;
  /** The open dialog, outermost: Pi brackets nested prompts as one. */
  dialog = void 0;
  /** Since when the run has been settled, while nothing new started. */
  settledSince = void 0;
  written = void 0;
  /** Pi opened a dialog (`ui_prompt_start`). */
  dialogOpened(kind, title) {
    this.dialog ??= { kind: label(kind), title: label(title), since: this.now() };
    this.write();
  }
  /** Pi closed it (`ui_prompt_end`). */
  dialogClosed() {
    this.dialog = void 0;
    this.write();
  }
  /** The run settled (`agent_settled`): nothing runs until someone gives the child work. */
  settled() {
    this.settledSince ??= this.now();
    this.write();
  }
  /** New work began (`input`, `agent_start`). */
  working() {
    this.settledSince = void 0;
    this.write();
  }
  /** What the file says now. */
  get state() {
    if (this.dialog) return "dialog";
    return this.settledSince !== void 0 ? "settled" : "working";
  }
  write() {
    if (!this.file) return;
    const state = this.state;
    const doc = {
      version: 1,
      runningChildId: this.runId,
      sequence: this.sequence + 1,
      state,
      since: state === "dialog" ? this.dialog?.since ?? this.now() : state === "settled" ? this.settledSince ?? this.now() : this.now()
    };
    if (state === "dialog") {
      if (this.dialog?.kind) doc.kind = this.dialog.kind;
      if (this.dialog?.title) doc.title = this.dialog.title;
    }
    const key = `${state}|${doc.kind ?? ""}|${doc.title ?? ""}|${state === "working" ? "" : doc.since}`;
    if (key === this.written) return;
    try {
      writeAtomic(this.file, `${JSON.stringify(doc)}
`, `input${doc.sequence}`);
      this.sequence = doc.sequence;
      this.written = key;
    } catch {
    }
  }
};

// src/child/messages.ts
function answerOf(message) {
  if (!isObject(message) || message.role !== "assistant") return void 0;
  const content = Array.isArray(message.content) ? message.content : [];
  const text = content.filter(isObject).filter((block) => block.type === "text").map((block) => stringAt(block, "text")).filter((t) => t !== void 0).join("\n");
  return {
    stopReason: stringAt(message, "stopReason"),
    errorMessage: stringAt(message, "errorMessage"),
    text
  };
}
function lastAnswer(messages) {
  if (!Array.isArray(messages)) return void 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const answer = answerOf(messages[i]);
    if (answer) return answer;
  }
  return void 0;
}
function sessionLastAnswer(ctx) {
  let entries;
  try {
    entries = ctx.sessionManager.getBranch();
  } catch {
    return void 0;
  }
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i];
    if (isObject(entry) && entry.type === "message") {
      const answer = answerOf(entry.message);
      if (answer) return answer;
    }
  }
  return void 0;
}

// src/child/own-children.ts
import * as fs5 from "node:fs";
import * as path6 from "node:path";

// src/generated/protocol.ts
var RUN_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

// src/shared/piherd-result.ts
import * as fs4 from "node:fs";

// src/shared/piherd-records.ts
import * as fs3 from "node:fs";
import * as path5 from "node:path";
var LABEL_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;
var FORMAT_VERSION = 1;
var READ_LIMIT2 = 256 * 1024;
function isDoc(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
function readBounded(file) {
  try {
    if (fs3.statSync(file).size > READ_LIMIT2) return void 0;
    const value = JSON.parse(fs3.readFileSync(file, "utf8"));
    return isDoc(value) ? value : void 0;
  } catch {
    return void 0;
  }
}
function ownerDir(artifacts, owner) {
  return owner === null ? path5.join(artifacts, "pi-herd", "root") : path5.join(artifacts, "pi-herd", "children", owner);
}
function workerPath(artifacts, owner, label2) {
  return path5.join(ownerDir(artifacts, owner), `${label2}.json`);
}
function strings(value) {
  return Array.isArray(value) && value.every((v) => typeof v === "string") ? value : void 0;
}
function parseWorker(doc) {
  if (!doc || doc.format_version !== FORMAT_VERSION || typeof doc.label !== "string" || !LABEL_PATTERN.test(doc.label)) return void 0;
  if (!(doc.owner_run_id === null || typeof doc.owner_run_id === "string" && RUN_ID_PATTERN.test(doc.owner_run_id))) return void 0;
  if (typeof doc.owner_session_id !== "string" || !(doc.agent === null || typeof doc.agent === "string")) return void 0;
  if (typeof doc.reusable !== "boolean" || typeof doc.created_at_ms !== "number") return void 0;
  if (!(doc.closed_at_ms === null || typeof doc.closed_at_ms === "number") || !Array.isArray(doc.assignments)) return void 0;
  const cleanup = doc.cleanup_error === void 0 || doc.cleanup_error === null ? null : strings(doc.cleanup_error);
  if (cleanup === void 0) return void 0;
  const assignments = [];
  for (const a of doc.assignments) {
    if (!isDoc(a) || typeof a.request_id !== "string" || typeof a.started_at_ms !== "number") return void 0;
    const runs = strings(a.runs);
    const steers = strings(a.steers);
    if (!runs || !runs.every((r) => RUN_ID_PATTERN.test(r)) || !steers || !Array.isArray(a.asks)) return void 0;
    if (!(a.task_id === null || typeof a.task_id === "string")) return void 0;
    const asks = [];
    for (const k of a.asks) {
      if (!isDoc(k) || typeof k.ask_id !== "string" || !(k.reply_request_id === null || typeof k.reply_request_id === "string")) return void 0;
      asks.push({ ask_id: k.ask_id, reply_request_id: k.reply_request_id });
    }
    assignments.push({ request_id: a.request_id, runs, task_id: a.task_id, started_at_ms: a.started_at_ms, asks, steers });
  }
  return {
    format_version: FORMAT_VERSION,
    label: doc.label,
    owner_run_id: doc.owner_run_id,
    owner_session_id: doc.owner_session_id,
    agent: doc.agent,
    reusable: doc.reusable,
    created_at_ms: doc.created_at_ms,
    closed_at_ms: doc.closed_at_ms,
    assignments,
    cleanup_error: cleanup
  };
}
function readWorker(artifacts, owner, label2) {
  return parseWorker(readBounded(workerPath(artifacts, owner, label2)));
}
function readRun(artifacts, runId) {
  if (!RUN_ID_PATTERN.test(runId)) return void 0;
  const r = readBounded(runFile(artifacts, runId, "record"));
  if (!r || typeof r.run_id !== "string" || typeof r.name !== "string" || typeof r.session_file !== "string") return void 0;
  const pane = isDoc(r.pane) && typeof r.pane.pane_id === "string" ? r.pane : void 0;
  return {
    run_id: r.run_id,
    name: r.name,
    agent: typeof r.agent === "string" ? r.agent : null,
    parent_run_id: typeof r.parent_run_id === "string" ? r.parent_run_id : null,
    persistent: r.persistent === true,
    surface: typeof r.surface === "string" ? r.surface : "process",
    session_file: r.session_file,
    cwd: typeof r.cwd === "string" ? r.cwd : "",
    model: typeof r.model === "string" ? r.model : null,
    thinking: typeof r.thinking === "string" ? r.thinking : null,
    auto_exit: r.auto_exit !== false,
    pane: pane ? {
      pane_id: pane.pane_id,
      workspace_id: typeof pane.workspace_id === "string" ? pane.workspace_id : null,
      tab_id: typeof pane.tab_id === "string" ? pane.tab_id : null
    } : null,
    updated_at_ms: typeof r.updated_at_ms === "number" ? r.updated_at_ms : 0
  };
}

// src/shared/piherd-result.ts
function resultStatus(outcome, closed) {
  switch (outcome) {
    case "completed":
      return "completed";
    case "help":
      return "blocked";
    case "cancelled":
      return closed ? "closed" : "cancelled";
    default:
      return "failed";
  }
}
function envelope(label2, agent, request, status) {
  return `Pi Herd worker result \xB7 label: ${JSON.stringify(label2)} \xB7 agent: ${agent === null ? "none" : JSON.stringify(agent)} \xB7 request: ${request} \xB7 status: ${status}`;
}
function truncated(message) {
  return message.includes("[... result abbreviated") || /Host note: \d[\d,]* evidence lines? omitted/.test(message);
}
function assignmentOf(worker, runId, task) {
  const mine = worker.assignments.filter((a) => a.runs.includes(runId));
  const found = task === void 0 ? mine[0] : mine.find((a) => a.task_id === task) ?? mine.find((a) => a.task_id === null);
  if (found) return found;
  const last = worker.assignments.at(-1);
  return last && last.runs.length === 0 ? last : void 0;
}
var SESSION_TAIL_BYTES = 1024 * 1024;
function tailLines(file, limit) {
  let fd;
  try {
    fd = fs4.openSync(file, "r");
    const stat = fs4.fstatSync(fd);
    if (!stat.isFile()) return void 0;
    const start = Math.max(0, stat.size - limit);
    const buffer = Buffer.alloc(stat.size - start);
    let got = 0;
    while (got < buffer.length) {
      const n = fs4.readSync(fd, buffer, got, buffer.length - got, start + got);
      if (n === 0) break;
      got += n;
    }
    const lines = buffer.subarray(0, got).toString("utf8").split("\n");
    if (start > 0) lines.shift();
    return lines;
  } catch {
    return void 0;
  } finally {
    if (fd !== void 0) fs4.closeSync(fd);
  }
}
function count(value) {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : void 0;
}
function usageTokens(usage) {
  if (!isDoc(usage)) return void 0;
  const total = count(usage.totalTokens);
  if (total !== void 0 && total > 0) return total;
  const parts = [usage.input, usage.output, usage.cacheRead, usage.cacheWrite].map(count);
  if (parts.some((p) => p === void 0)) return void 0;
  const sum = parts.reduce((a, p) => a + (p ?? 0), 0);
  return sum > 0 ? sum : void 0;
}
function contextUsage(sessionFile2, windowOf, limit = SESSION_TAIL_BYTES) {
  if (sessionFile2 === null) return null;
  const lines = tailLines(sessionFile2, limit);
  if (!lines) return null;
  let tokens;
  let model;
  let compacted = false;
  for (let i = lines.length - 1; i >= 0 && (model === void 0 || tokens === void 0 && !compacted); i--) {
    let entry;
    try {
      entry = JSON.parse(lines[i] ?? "");
    } catch {
      continue;
    }
    if (!isDoc(entry)) continue;
    if (entry.type === "compaction") {
      compacted = true;
      continue;
    }
    if (entry.type === "model_change" && model === void 0) {
      if (typeof entry.provider === "string" && typeof entry.modelId === "string") model = { provider: entry.provider, id: entry.modelId };
      continue;
    }
    const message = entry.type === "message" && isDoc(entry.message) ? entry.message : void 0;
    if (!message || message.role !== "assistant") continue;
    if (model === void 0 && typeof message.provider === "string" && typeof message.model === "string") {
      model = { provider: message.provider, id: message.model };
    }
    if (tokens !== void 0 || compacted || message.stopReason === "aborted" || message.stopReason === "error") continue;
    tokens = usageTokens(message.usage);
  }
  let window;
  if (model && windowOf) {
    try {
      const found = windowOf(model.provider, model.id);
      window = typeof found === "number" && Number.isFinite(found) && found > 0 ? found : void 0;
    } catch {
      window = void 0;
    }
  }
  if (tokens === void 0 && window === void 0) return null;
  return {
    tokens: tokens ?? null,
    contextWindow: window ?? null,
    percent: tokens !== void 0 && window !== void 0 ? tokens / window * 100 : null
  };
}
function registryWindow(registry, provider, model) {
  if (typeof registry !== "object" || registry === null) return void 0;
  const find = registry.find;
  if (typeof find !== "function") return void 0;
  const found = find.call(registry, provider, model);
  return isDoc(found) && typeof found.contextWindow === "number" ? found.contextWindow : void 0;
}
function decorate(dir, event, message, details, windowOf) {
  const runId = event.run_id;
  if (typeof runId !== "string") return void 0;
  const record = readRun(dir, runId);
  if (!record || !LABEL_PATTERN.test(record.name)) return void 0;
  const worker = readWorker(dir, record.parent_run_id, record.name);
  if (!worker) return void 0;
  const task = typeof event.task === "string" ? event.task : void 0;
  const assignment = assignmentOf(worker, runId, task);
  if (!assignment) return void 0;
  const outcome = typeof event.outcome === "string" ? event.outcome : "failed";
  const status = resultStatus(outcome, worker.closed_at_ms !== null);
  const key = typeof event.key === "string" ? event.key : runId;
  const agent = worker.agent ?? record.agent;
  const error = typeof details.errorMessage === "string" ? details.errorMessage : typeof details.error === "string" ? details.error : null;
  const session = typeof details.sessionFile === "string" ? details.sessionFile : null;
  const full = session ?? (typeof details.stdoutFile === "string" ? details.stdoutFile : null);
  const piHerd = {
    requestId: assignment.request_id,
    workerLabel: worker.label,
    agentDefinition: agent,
    status,
    final: status !== "blocked",
    elapsedMs: typeof details.elapsedMs === "number" ? details.elapsedMs : null,
    contextUsage: contextUsage(session, windowOf),
    truncated: truncated(message),
    resultPath: runFile(dir, key, "result"),
    fullOutputPath: full,
    workerError: status === "failed" ? error ?? outcome : null
  };
  if (status === "blocked") piHerd.askId = runId;
  const head = envelope(worker.label, agent, assignment.request_id, status);
  const note = status === "blocked" ? `The worker asked its owner (ask_owner, ask ${runId}); answer with subagent({action: "reply", label: ${JSON.stringify(worker.label)}, message}).` : void 0;
  return {
    message: [head, ...note ? [note] : [], message].join("\n"),
    details: { ...details, piHerd }
  };
}

// src/child/own-children.ts
var HOLD_CHILD_MS = 2 * 60 * 60 * 1e3;
var RECORD_LIMIT = 256 * 1024;
var RESULT_LIMIT = 2 * 1024 * 1024;
function artifactsDirs(config) {
  const dirs = /* @__PURE__ */ new Set();
  if (config.activityFile) dirs.add(path6.resolve(path6.dirname(path6.dirname(config.activityFile))));
  if (config.artifacts) dirs.add(path6.resolve(config.artifacts));
  return [...dirs];
}
function outstandingChildren(config) {
  const found = [];
  for (const dir of artifactsDirs(config)) {
    const runs = path6.join(dir, RUNS_DIR);
    let names;
    try {
      names = fs5.readdirSync(runs);
    } catch {
      continue;
    }
    for (const name of names) {
      const id = recordRunId(name) ?? "";
      if (!RUN_ID_PATTERN.test(id) || id === config.runId) continue;
      const record = parseObject(readSmall(path6.join(runs, name), RECORD_LIMIT));
      if (!record || record.parent_run_id !== config.runId || record.status === "failed") continue;
      if (record.persistent === true) continue;
      if (fs5.existsSync(runFile(dir, id, "result"))) continue;
      if (fs5.existsSync(runFile(dir, id, "superseded"))) continue;
      found.push({ dir, id, name: stringAt(record, "name") ?? id });
    }
  }
  return found;
}
var OwnChildren = class {
  /**
   * `deliver` receives each result (or why there is none), once per own child; `windowOf` knows
   * the context window of a worker's model, for a Pi Herd result's context usage.
   */
  constructor(config, deliver, windowOf) {
    this.config = config;
    this.deliver = deliver;
    this.windowOf = windowOf;
  }
  config;
  deliver;
  windowOf;
  /** `herd-watch wait` of each own child still outstanding, by `<dir>/<run id>`. */
  watchers = /* @__PURE__ */ new Map();
  /** Own children already waited for, so each result is given once. */
  seen = /* @__PURE__ */ new Set();
  /** How many own children are still being waited for. */
  get waiting() {
    return this.watchers.size;
  }
  /** Starts waiting for every own child not waited for yet. */
  watchOutstanding() {
    for (const own of outstandingChildren(this.config)) this.watch(own);
  }
  /**
   * Stops the waits. A wait only watches: the children run on, and any later `herd-watch`
   * delivers their results.
   */
  stop() {
    for (const pid of this.watchers.values()) if (pid !== void 0) killGroup(pid, "SIGTERM");
  }
  watch(own) {
    const key = `${own.dir}/${own.id}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.watchers.set(key, void 0);
    let pid;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (pid !== void 0) killGroup(pid, "SIGKILL");
    }, HOLD_CHILD_MS);
    const program = herdProgram(this.config.binDir, "herd-watch");
    void runProgram(program, ["--artifacts", own.dir, "wait", "--run", own.id, "--json"], {
      stdoutLimit: RESULT_LIMIT,
      started: (started) => {
        pid = started;
        this.watchers.set(key, started);
      }
    }).then((run) => {
      clearTimeout(timer);
      this.watchers.delete(key);
      const doc = parseObject(run.stdout);
      const message = stringAt(doc, "message");
      if (doc && message !== void 0) {
        this.deliver(this.result(own, doc, message));
        return;
      }
      const reason = timedOut ? `no result within ${HOLD_CHILD_MS / 6e4} minutes` : run.error !== void 0 ? `no result (${run.error})` : `no result (herd-watch exited with ${run.code})`;
      this.deliver({
        text: `Subagent ${JSON.stringify(own.name)} (${own.id}) gave ${reason}; see \`herd-watch status --run ${own.id}\`.`
      });
    });
  }
  /** herd's result `doc` of `own`, decorated when a Pi Herd worker file of this run claims it. */
  result(own, doc, message) {
    const herd = isObject(doc.details) ? doc.details : {};
    const worker = decorate(own.dir, doc, message, herd, this.windowOf);
    if (!worker) return { text: message };
    const outcome = stringAt(doc, "outcome") ?? "";
    return { text: worker.message, details: { ...worker.details, runId: own.id, name: own.name, outcome } };
  }
};

// src/child/settlement.ts
var PROVIDER_FAILED = "the provider failed and retries were exhausted";
var none = { type: "none" };
var done = { type: "end", completion: { type: "done" } };
function step(state, event) {
  if (state.kind === "ended") return { state, action: none };
  switch (event.type) {
    case "turn-started":
      return state.kind === "checking" ? { state, action: none } : { state: { kind: "working" }, action: none };
    case "turn-ended": {
      if (state.kind === "checking") return { state, action: none };
      const stopReason = event.answer?.stopReason;
      if (stopReason === "aborted") {
        return { state: { kind: "idle" }, action: none };
      }
      if (stopReason === "error") {
        const errorMessage = event.answer?.errorMessage || PROVIDER_FAILED;
        return {
          state: { kind: "ended" },
          action: { type: "end", completion: { type: "error", errorMessage, stopReason: "error" } }
        };
      }
      if (!event.terminating && event.resultsQueued) return { state: { kind: "working" }, action: { type: "deliver" } };
      if (!event.terminating && event.childrenOutstanding) return { state: { kind: "holding" }, action: none };
      if (event.hasCheck) return { state: { kind: "checking" }, action: { type: "check" } };
      return { state: { kind: "ended" }, action: done };
    }
    case "check-done":
      if (state.kind !== "checking") return { state, action: none };
      if (!event.passed && event.retriesLeft && !event.terminating) {
        return { state: { kind: "working" }, action: { type: "retry" } };
      }
      return { state: { kind: "ended" }, action: done };
    case "result-arrived":
      if (state.kind === "holding" && !event.terminating && event.idle) {
        return { state: { kind: "working" }, action: { type: "deliver" } };
      }
      return { state, action: none };
  }
}
function unsettled(state) {
  return state.kind === "working" || state.kind === "checking" || state.kind === "holding";
}

// src/child/sidecars.ts
var TASK_MESSAGE_CHARS = 16e3;
var ExitSidecar = class {
  constructor(sessionFile2) {
    this.sessionFile = sessionFile2;
  }
  sessionFile;
  written = false;
  get isWritten() {
    return this.written;
  }
  write(completion) {
    if (this.written || !this.sessionFile) return;
    this.written = true;
    try {
      writeAtomic(`${this.sessionFile}${SESSION_FILES.exit}`, `${JSON.stringify(completion)}
`, "exit");
    } catch {
    }
  }
};
function writeAcceptTries(sessionFile2, tries, passed) {
  if (!sessionFile2) return;
  try {
    writeAtomic(
      `${sessionFile2}${SESSION_FILES.acceptTries}`,
      `${JSON.stringify({ version: 1, tries, last: passed ? "pass" : "fail" })}
`,
      `tries${tries}`
    );
  } catch {
  }
}
function appendTaskEvent(sessionFile2, generationId, type, task, message) {
  if (!sessionFile2 || !task) return;
  const event = {
    version: 1,
    type,
    task,
    generation: generationId,
    at: (/* @__PURE__ */ new Date()).toISOString()
  };
  if (message !== void 0) event.message = message.slice(0, TASK_MESSAGE_CHARS);
  try {
    appendPrivate(`${sessionFile2}${SESSION_FILES.tasks}`, `${JSON.stringify(event)}
`);
  } catch {
  }
}

// src/child/tools.ts
import { Type } from "typebox";
var CALLER_PING_DESCRIPTION = "Send a help request to the parent agent and exit this session. Use it when you cannot continue without the parent's answer.";
function registerOutsideHerd(pi) {
  pi.registerTool({
    name: "caller_ping",
    label: "Caller ping",
    description: "Send a help request to the parent agent and exit this session.",
    parameters: Type.Object({ message: Type.String({ description: "What you need help with" }) }),
    async execute() {
      throw new Error("caller_ping is only available inside a subagent started by herd");
    }
  });
}
function registerChildTools(pi, withDone, handlers) {
  pi.registerTool({
    name: "caller_ping",
    label: "Caller ping",
    description: CALLER_PING_DESCRIPTION,
    promptSnippet: "Ask the parent agent for help (ends this session)",
    parameters: Type.Object({ message: Type.String({ description: "What you need help with" }) }),
    async execute(_id, params, _signal, _onUpdate, ctx) {
      const message = (typeof params.message === "string" ? params.message.trim() : "") || "(no message)";
      return {
        content: [{ type: "text", text: handlers.ping(message, ctx) }],
        details: { message },
        terminate: true
      };
    }
  });
  if (!withDone) return;
  pi.registerTool({
    name: "subagent_done",
    label: "Subagent done",
    description: "Call this tool when you have completed your task. Your final message before it is your report to the parent.",
    promptSnippet: "Finish this subagent's task",
    parameters: Type.Object({}),
    async execute(_id, _params, _signal, _onUpdate, ctx) {
      return { content: [{ type: "text", text: handlers.done(ctx) }], details: {}, terminate: true };
    }
  });
}

// src/child/widget.ts
var TOOLS_WIDGET = "herd-child-tools";
function toolsLine(label2, available, denied) {
  return `[${label2}] \u2014 ${available} ${available === 1 ? "tool" : "tools"} \xB7 ${denied} denied`;
}
function drawToolsWidget(pi, ctx, label2, denied) {
  if (!ctx.hasUI) return;
  try {
    ctx.ui.setWidget(TOOLS_WIDGET, [toolsLine(label2, pi.getActiveTools().length, denied)]);
  } catch {
  }
}

// herd-child.ts
var RESULT_TYPE = "subagent_result";
var SETTLE_TURN_MS = 30 * 60 * 1e3;
var SETTLE_POLL_MS = 50;
function herdChild(pi) {
  const config = readConfig(process.env, process.argv);
  if (!config.runId) {
    registerOutsideHerd(pi);
    return;
  }
  pi.on("project_trust", () => ({ trusted: config.projectTrusted ? "yes" : "no" }));
  const widgetLabel = config.agent || config.name;
  const activity = new Activity(config.activityFile, config.runId, config.persistent);
  const exit = new ExitSidecar(config.sessionFile);
  const needsInput = new NeedsInput(config.sessionFile ? sessionFile(config.sessionFile, "needsInput") : "", config.runId);
  const checks = new AcceptChecks(config.binDir);
  let idleCtx;
  let shuttingDown = false;
  let terminating = false;
  const endChild = (ctx, completion, event) => {
    exit.write(completion);
    activity.finish(event);
    if (!shuttingDown) {
      shuttingDown = true;
      ctx.shutdown();
    }
  };
  let currentTask = config.persistent ? config.taskId : "";
  let taskEnded = false;
  let stopRequested = false;
  const endTask = (type, message) => {
    if (!currentTask || taskEnded) return;
    taskEnded = true;
    appendTaskEvent(config.sessionFile, config.generationId, type, currentTask, message);
    activity.finish(type === "help-request" ? "caller_ping" : "subagent_done");
  };
  registerChildTools(pi, !config.autoExit || config.persistent, {
    ping(message, ctx) {
      if (config.persistent) {
        endTask("help-request", message);
        return "Help request sent to the parent. Wait for its answer as your next task.";
      }
      endChild(ctx, { type: "ping", name: config.name, message }, "caller_ping");
      return "Help request sent to the parent; this session ends now.";
    },
    done(ctx) {
      if (config.persistent) {
        endTask("task-done", sessionLastAnswer(ctx)?.text ?? "");
        return "Task finished. Wait for the next task.";
      }
      endChild(ctx, { type: "done" }, "subagent_done");
      return "Done; this session ends now.";
    }
  });
  const inbox = new Inbox(config.sessionFile, {
    closed: () => !idleCtx || shuttingDown,
    busy: () => idleCtx?.isIdle() === false || currentTask !== "" && !taskEnded,
    take(entry) {
      const ctx = idleCtx;
      if (!ctx) return;
      if (entry.type === "stop") {
        stopRequested = true;
        if (ctx.isIdle()) endChild(ctx, { type: "done" }, "session_shutdown");
        return;
      }
      currentTask = entry.task;
      taskEnded = false;
      activity.record("input", (a) => a.setAgent(true));
      pi.sendUserMessage(entry.message);
    }
  });
  pi.on("session_start", async (_event, ctx) => {
    idleCtx = ctx;
    if (config.deniedTools.length > 0) {
      const denied = new Set(config.deniedTools);
      pi.setActiveTools(pi.getActiveTools().filter((tool) => !denied.has(tool)));
    }
    activity.record("session_start");
    if (config.persistent && config.sessionFile) inbox.start();
    drawToolsWidget(pi, ctx, widgetLabel, new Set(config.deniedTools).size);
  });
  pi.on("input", async (event) => {
    needsInput.working();
    activity.record("input", (a) => event.source === "extension" ? a.setAgent(true) : a.tookInput());
  });
  pi.on("ui_prompt_start", async (event) => {
    needsInput.dialogOpened(event.kind, event.title);
  });
  pi.on("ui_prompt_end", async () => {
    needsInput.dialogClosed();
  });
  pi.on("agent_settled", async () => {
    needsInput.settled();
  });
  pi.on("before_agent_start", async (_event, ctx) => {
    activity.record("before_agent_start");
    drawToolsWidget(pi, ctx, widgetLabel, new Set(config.deniedTools).size);
  });
  pi.on("agent_start", async () => {
    needsInput.working();
    await settle({ type: "turn-started" }, void 0);
    activity.record("agent_start", (a) => a.setAgent(true));
  });
  pi.on("turn_start", async (event) => {
    const index = Number.isInteger(event.turnIndex) ? event.turnIndex : void 0;
    activity.record("turn_start", (a) => a.setTurn(true, index));
  });
  pi.on("turn_end", async () => {
    activity.record("turn_end", (a) => a.setTurn(false));
  });
  pi.on("before_provider_request", async () => {
    activity.record("before_provider_request", (a) => a.setProvider(true));
  });
  pi.on("after_provider_response", async () => {
    activity.record("after_provider_response", (a) => {
      a.setProvider(false);
      a.setStreaming(true);
    });
  });
  pi.on("message_update", async (event) => {
    const type = event.assistantMessageEvent?.type;
    activity.record("message_update", (a) => a.setStreaming(true, typeof type === "string" ? type : void 0), true);
  });
  pi.on("tool_execution_start", async (event) => {
    activity.record("tool_execution_start", (a) => {
      a.setStreaming(false);
      a.startTool(event.toolCallId, event.toolName);
    });
  });
  pi.on("tool_call", async () => {
    activity.record("tool_call");
  });
  pi.on("tool_execution_update", async () => {
    activity.record("tool_execution_update", void 0, true);
  });
  pi.on("tool_result", async () => {
    activity.record("tool_result");
  });
  pi.on("tool_execution_end", async () => {
    activity.record("tool_execution_end", (a) => a.endTool());
  });
  const settles = config.autoExit && !config.persistent;
  let settlement = { kind: "idle" };
  const results = [];
  let checkTries = 0;
  let checkFeedback = "";
  const ownChildren = new OwnChildren(
    config,
    (result) => {
      results.push(result);
      void settle({ type: "result-arrived", terminating, idle: idleCtx?.isIdle() !== false }, idleCtx);
    },
    (provider, model) => registryWindow(idleCtx?.modelRegistry, provider, model)
  );
  async function settle(event, ctx) {
    if (!settles) return;
    const next = step(settlement, event);
    settlement = next.state;
    await perform(next.action, ctx);
  }
  async function perform(action, ctx) {
    switch (action.type) {
      case "none":
        return;
      case "end":
        if (ctx) endChild(ctx, action.completion, "agent_end");
        else exit.write(action.completion);
        return;
      case "deliver": {
        const result = results.shift();
        if (result !== void 0) startTurn(result);
        return;
      }
      case "check":
        if (ctx) await check(ctx);
        return;
      case "retry":
        pi.sendUserMessage(checkFeedback, { deliverAs: "followUp" });
        return;
    }
  }
  function startTurn(result) {
    activity.record("input", (a) => a.setAgent(true));
    if (result.details) {
      pi.sendMessage(
        { customType: RESULT_TYPE, content: result.text, display: true, details: result.details },
        { triggerTurn: true, deliverAs: "followUp" }
      );
    } else {
      pi.sendUserMessage(result.text, { deliverAs: "followUp" });
    }
  }
  async function check(ctx) {
    const limits = readAcceptLimits(config.acceptFile);
    if (!limits) {
      await settle({ type: "check-done", passed: true, retriesLeft: false, terminating }, ctx);
      return;
    }
    checkTries += 1;
    const result = await checks.run(config.acceptFile, ctx.cwd || process.cwd(), limits);
    try {
      pi.appendEntry("herd-accept-check", { tries: checkTries, exitCode: result.exitCode, timedOut: result.timedOut });
    } catch {
    }
    writeAcceptTries(config.sessionFile, checkTries, result.passed);
    checkFeedback = `The acceptance check failed (${result.why}, try ${checkTries} of ${limits.maxRetries + 1}). Its output, last ${CHECK_FEEDBACK_CHARS.toLocaleString("en-US")} characters:

\`\`\`
${result.output}
\`\`\`

Fix the cause; the check runs again when you finish.`;
    const retriesLeft = checkTries <= limits.maxRetries;
    await settle({ type: "check-done", passed: result.passed, retriesLeft, terminating }, ctx);
  }
  if (config.printMode) {
    for (const signal of ["SIGTERM", "SIGHUP", "SIGINT"]) {
      process.on(signal, () => {
        terminating = true;
      });
    }
  }
  pi.on("agent_end", async (event, ctx) => {
    idleCtx = ctx;
    activity.record("agent_end", (a) => a.setAgent(false));
    const answer = lastAnswer(event.messages) ?? sessionLastAnswer(ctx);
    if (answer?.stopReason === "aborted") {
      await settle(
        { type: "turn-ended", answer, resultsQueued: false, childrenOutstanding: false, hasCheck: false, terminating },
        ctx
      );
      return;
    }
    if (config.persistent) {
      endTask(
        "task-done",
        answer?.stopReason === "error" ? `Subagent error: ${answer.errorMessage ?? "provider error"}` : answer?.text ?? ""
      );
      if (stopRequested) endChild(ctx, { type: "done" }, "session_shutdown");
      return;
    }
    if (!settles) return;
    if (answer?.stopReason !== "error" && !terminating) ownChildren.watchOutstanding();
    await settle(
      {
        type: "turn-ended",
        answer,
        resultsQueued: results.length > 0,
        childrenOutstanding: ownChildren.waiting > 0,
        hasCheck: config.acceptFile !== "",
        terminating
      },
      ctx
    );
  });
  function settleBudgetMs() {
    const limits = readAcceptLimits(config.acceptFile);
    const tries = limits ? limits.maxRetries + 1 : 1;
    const checkMs = limits ? limits.timeoutSec * 1e3 + CHECK_KILL_GRACE_MS : 0;
    return tries * (checkMs + SETTLE_TURN_MS) + HOLD_CHILD_MS + SETTLE_TURN_MS;
  }
  pi.on("session_shutdown", async (event, ctx) => {
    const quit = event.reason === "quit";
    if (settles && quit && !terminating && !exit.isWritten && unsettled(settlement)) {
      const deadline = Date.now() + settleBudgetMs();
      while (!exit.isWritten && unsettled(settlement) && !terminating && Date.now() < deadline) {
        await new Promise((resolve2) => setTimeout(resolve2, SETTLE_POLL_MS));
      }
    }
    checks.stop();
    ownChildren.stop();
    inbox.stop();
    if (settles && quit && !exit.isWritten) {
      const last = sessionLastAnswer(ctx);
      if (last?.stopReason === "error") {
        exit.write({ type: "error", errorMessage: last.errorMessage || "the provider failed", stopReason: "error" });
      } else if (last && last.stopReason !== "aborted") {
        exit.write({ type: "done" });
      }
    }
    if (quit) activity.finish("session_shutdown");
  });
}
export {
  herdChild as default
};
