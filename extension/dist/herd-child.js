// herd's child extension, bundled from extension/herd-child.ts by `cargo xtask docs`; sources sha256 6ab2791d037c02da5c935440a1c4f94c995fb95721f72f228259a6ad529b17a9
// src/generated/run-files.ts
import * as path from "node:path";
var RUNS_DIR = "runs";
var RUN_FILES = {
  record: ".json",
  events: ".events.jsonl",
  result: ".result.json",
  unreadableResult: ".result.unreadable.json",
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
  children: ".children",
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
function runFileName(runId2, kind) {
  return `${runId2}${RUN_FILES[kind]}`;
}
function runFile(dir, runId2, kind) {
  return path.join(dir, RUNS_DIR, runFileName(runId2, kind));
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
  acceptTries: ".accept-tries.json",
  steeringQueued: ".steering-queued.json"
};
function sessionFile(session2, kind) {
  return `${session2}${SESSION_FILES[kind]}`;
}
var RUN_FILE_READ_LIMITS = {
  record: 262144,
  children: 262144,
  cancel: 16384,
  interrupt: 4096,
  timeout: 4096,
  steer: 1048576,
  steering: 1048576,
  superseded: 16384,
  predecessor: 65536,
  resurrected: 16384,
  acceptance: 1048576,
  review: 262144,
  remote: 65536,
  usage: 4194304
};
var SESSION_FILE_VERSIONS = {
  process: 1,
  policy: 2,
  needsInput: 1,
  acceptTries: 1,
  steeringQueued: 1,
  tasks: 1,
  taskInbox: 1
};
var SESSION_FILE_READ_LIMITS = {
  process: 65536,
  policy: 262144,
  needsInput: 16384,
  acceptTries: 4096,
  steeringQueued: 16384,
  taskInbox: 1048576
};
var ARTIFACT_FILE_VERSIONS = {
  activity: 1,
  acceptSpec: 1
};
var ARTIFACT_FILE_READ_LIMITS = {
  activity: 65536,
  acceptSpec: 262144
};
var TASK_INBOX_PREFIX = ".task-inbox.";
var TASK_INBOX_SUFFIX = ".json";

// src/shared/decode.ts
var DOCUMENT_LIMIT = 4 * 1024 * 1024;
function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
function shape(check) {
  return { check };
}
function described(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "string" ? `the string ${JSON.stringify(value.slice(0, 40))}` : `a ${typeof value}`;
}
var string = shape((v, at) => typeof v === "string" ? void 0 : `${at} is ${described(v)}, not a string`);
var boolean = shape((v, at) => typeof v === "boolean" ? void 0 : `${at} is ${described(v)}, not a boolean`);
var number = shape((v, at) => typeof v === "number" && Number.isFinite(v) ? void 0 : `${at} is ${described(v)}, not a number`);
var integer = shape((v, at) => Number.isInteger(v) ? void 0 : `${at} is ${described(v)}, not an integer`);
function member() {
  return shape((v, at) => string.check(v, at));
}
function where(inner, test, rule) {
  return shape((v, at) => inner.check(v, at) ?? (test(v) ? void 0 : `${at} is not ${rule}`));
}
function literal(...values) {
  return shape((v, at) => values.includes(v) ? void 0 : `${at} is ${described(v)}, not one of ${values.map((x) => JSON.stringify(x)).join(", ")}`);
}
function nullable(inner) {
  return shape((v, at) => v === null ? void 0 : inner.check(v, at));
}
function optional(inner) {
  return shape((v, at) => v === void 0 ? void 0 : inner.check(v, at));
}
function array(inner) {
  return shape((v, at) => {
    if (!Array.isArray(v)) return `${at} is ${described(v)}, not an array`;
    for (const [i, item] of v.entries()) {
      const why = inner.check(item, `${at}[${i}]`);
      if (why !== void 0) return why;
    }
    return void 0;
  });
}
function object(fields) {
  const entries = Object.entries(fields);
  return shape((v, at) => {
    if (!isObject(v)) return `${at} is ${described(v)}, not an object`;
    for (const [key, inner] of entries) {
      const why = inner.check(v[key], `${at}.${key}`);
      if (why !== void 0) return why;
    }
    return void 0;
  });
}
function variants(tag, cases) {
  const known = /* @__PURE__ */ new Map();
  for (const [name, fields] of Object.entries(cases)) if (fields) known.set(name, object(fields));
  return shape((v, at) => {
    if (!isObject(v)) return `${at} is ${described(v)}, not an object`;
    const value = v[tag];
    const inner = typeof value === "string" ? known.get(value) : void 0;
    return inner === void 0 ? `${at}.${tag} is ${described(value)}, not one this reader knows` : inner.check(v, at);
  });
}
function decodeValue(value, check, what) {
  const why = check.check(value, what);
  return why === void 0 ? { ok: true, value } : { ok: false, error: why };
}
function decode(text, check, what, limit = DOCUMENT_LIMIT) {
  if (text === void 0 || text.trim() === "") return { ok: false, error: `${what} is empty` };
  if (text.length > limit) return { ok: false, error: `${what} is larger than ${limit} characters` };
  let value;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `${what} is not JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  return decodeValue(value, check, what);
}
function decoded(text, check, what, limit = DOCUMENT_LIMIT) {
  const out = decode(text, check, what, limit);
  return out.ok ? out.value : void 0;
}

// src/shared/process.ts
import { spawn } from "node:child_process";
var DEFAULT_GRACE_MS = 2e3;
function signalProcess(pid, signal, alone = false) {
  try {
    process.kill(alone ? pid : -pid, signal);
  } catch {
  }
}
function terminate(pid, alone, graceMs, ended) {
  signalProcess(pid, "SIGTERM", alone);
  setTimeout(() => {
    if (!ended()) signalProcess(pid, "SIGKILL", alone);
  }, graceMs).unref?.();
}
function runProcess(program, args, options) {
  return new Promise((resolve2) => {
    const grace = options.graceMs ?? DEFAULT_GRACE_MS;
    const alone = options.terminal === true;
    let child;
    try {
      child = spawn(program, args, {
        cwd: options.cwd,
        env: options.env,
        detached: !alone,
        stdio: [options.input === void 0 ? "ignore" : "pipe", "pipe", "pipe"]
      });
    } catch (err) {
      resolve2({ code: null, stdout: "", stderr: "", timedOut: false, error: String(err) });
      return;
    }
    let stdout = "";
    let stderr = "";
    let error;
    let timedOut = false;
    let exited = false;
    let settled = false;
    const pid = child.pid;
    const budget = pid === void 0 ? void 0 : setTimeout(() => {
      timedOut = true;
      terminate(pid, alone, grace, () => exited);
    }, options.budgetMs);
    const finish = (code) => {
      if (settled) return;
      settled = true;
      if (budget) clearTimeout(budget);
      const ran = { code, stdout, stderr, timedOut };
      resolve2(error === void 0 ? ran : { ...ran, error });
    };
    if (pid !== void 0) options.started?.({ pid, signal: (signal) => signalProcess(pid, signal, alone) });
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (chunk) => {
      if (stdout.length < options.stdoutLimit) stdout = (stdout + chunk).slice(0, options.stdoutLimit);
    });
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk) => {
      stderr = (stderr + chunk).slice(-options.stderrLimit);
    });
    if (child.stdin) {
      child.stdin.on("error", () => {
      });
      child.stdin.end(options.input ?? "");
    }
    child.on("error", (err) => {
      error = String(err);
      if (pid === void 0) finish(null);
    });
    child.on("exit", (code) => {
      exited = true;
      setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish(code);
      }, grace).unref?.();
    });
    child.on("close", (code) => finish(code));
  });
}

// src/child/files.ts
import * as fs from "node:fs";
import * as path2 from "node:path";
function readSmall(file, limit) {
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile() || stat.size > limit) return void 0;
    return fs.readFileSync(file, "utf8");
  } catch {
    return void 0;
  }
}
function writeAtomic(file, text, tmpSuffix) {
  fs.mkdirSync(path2.dirname(file), { recursive: true, mode: 448 });
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
function label(value) {
  if (typeof value !== "string" || value.length === 0) return void 0;
  return value.replace(/[\r\n]+/g, " ").slice(0, 200);
}

// src/child/programs.ts
import * as path3 from "node:path";
function herdProgram(binDir, name) {
  return binDir ? path3.join(binDir, name) : name;
}

// src/child/accept.ts
var CHECK_FEEDBACK_CHARS = 4e3;
var CHECK_KILL_GRACE_MS = 5e3;
var CHECK_SLACK_MS = 3e4;
var ANSWER_LIMIT = 256 * 1024;
var STDERR_TAIL = 4e3;
var acceptSpec = object({
  version: where(integer, (v) => v === ARTIFACT_FILE_VERSIONS.acceptSpec, `version ${ARTIFACT_FILE_VERSIONS.acceptSpec}`),
  run: string,
  maxRetries: optional(nullable(integer)),
  timeoutSec: optional(nullable(integer))
});
var checkRun = object({
  passed: boolean,
  outcome: member(),
  exit_code: nullable(integer),
  timed_out: boolean,
  output: string,
  timeout_sec: integer,
  signal: nullable(integer),
  error: nullable(string)
});
function readAcceptLimits(file) {
  if (!file) return void 0;
  const spec = decoded(readSmall(file, ARTIFACT_FILE_READ_LIMITS.acceptSpec), acceptSpec, file, ARTIFACT_FILE_READ_LIMITS.acceptSpec);
  if (!spec || !spec.run) return void 0;
  const { maxRetries, timeoutSec } = spec;
  return {
    maxRetries: maxRetries == null ? 1 : Math.min(Math.max(maxRetries, 0), 5),
    timeoutSec: timeoutSec == null ? 600 : Math.min(Math.max(timeoutSec, 1), 3600)
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
    let running;
    const run = await runProcess(program, ["check", "--spec", specFile, "--cwd", cwd, "--json"], {
      // herd-accept ends its check itself; beyond that and the slack, it is stopped.
      budgetMs: limits.timeoutSec * 1e3 + CHECK_KILL_GRACE_MS + CHECK_SLACK_MS,
      graceMs: CHECK_KILL_GRACE_MS,
      stdoutLimit: ANSWER_LIMIT,
      stderrLimit: STDERR_TAIL,
      started: (started) => {
        running = started;
        this.running.add(started);
      }
    });
    if (running) this.running.delete(running);
    const answer = decode(run.stdout, checkRun, "herd-accept check --json", ANSWER_LIMIT);
    if (!answer.ok) {
      const why = run.error ?? `${program} exited with ${run.code ?? "a signal"}: ${run.stderr.trim()}`;
      return { passed: false, exitCode: null, timedOut: false, output: why, why: `could not run (${why})` };
    }
    return checkResultOf(answer.value);
  }
  /**
   * Asks every running herd-accept to stop: it terminates its check's group (SIGTERM, then
   * SIGKILL a second later), so it is never killed outright here.
   */
  stop() {
    for (const running of this.running) running.signal("SIGTERM");
  }
};
function checkResultOf(answer) {
  const exitCode = answer.exit_code;
  let why;
  switch (answer.outcome) {
    case "passed":
      why = "passed";
      break;
    case "timed-out":
      why = `timed out after ${answer.timeout_sec}s`;
      break;
    case "signalled":
      why = `was ended by signal ${answer.signal ?? "?"}`;
      break;
    case "cancelled":
      why = "was cancelled";
      break;
    case "directory-missing":
    case "could-not-start":
      why = `could not run (${answer.error ?? answer.outcome})`;
      break;
    default:
      why = `exited with ${exitCode}`;
  }
  return { passed: answer.passed, exitCode, timedOut: answer.timed_out, output: answer.output || (answer.error ?? ""), why };
}

// src/child/activity.ts
var THROTTLE_MS = 500;
var PREVIOUS = object({ runningChildId: string, sequence: integer, inputCount: optional(nullable(integer)) });
var Activity = class {
  /**
   * `file` is the snapshot; `runId` the run it speaks for. A persistent specialist's sequence
   * never resets, not even across a restart of Pi, so it goes on from the snapshot it finds.
   */
  constructor(file, runId2, persistent) {
    this.file = file;
    this.runId = runId2;
    this.persistent = persistent;
    const previous = file ? decoded(readSmall(file, ARTIFACT_FILE_READ_LIMITS.activity), PREVIOUS, file, ARTIFACT_FILE_READ_LIMITS.activity) : void 0;
    if (previous?.runningChildId === runId2) {
      this.sequence = previous.sequence;
      this.inputs = previous.inputCount ?? 0;
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
      version: ARTIFACT_FILE_VERSIONS.activity,
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
    const optional2 = {
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
    for (const [key, value] of Object.entries(optional2)) {
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
var INBOX_POLL_MS = 1e3;
var taskInbox = object({ version: literal(SESSION_FILE_VERSIONS.taskInbox), type: literal("task", "stop"), task: string, message: string });
function entryOf(text) {
  const entry = decoded(text, taskInbox, "an inbox entry", SESSION_FILE_READ_LIMITS.taskInbox);
  if (!entry) return void 0;
  return entry.type === "stop" ? { type: "stop", task: entry.task } : { type: "task", task: entry.task, message: entry.message };
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
      if (busy && !(readSmall(file, SESSION_FILE_READ_LIMITS.taskInbox) ?? "").includes('"stop"')) return;
      fs2.renameSync(file, claimed);
      text = readSmall(claimed, SESSION_FILE_READ_LIMITS.taskInbox);
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
var PREVIOUS2 = object({ runningChildId: string, sequence: integer });
var NeedsInput = class {
  /** `file` is `<session>.needs-input.json`; `runId` the run it speaks for. */
  constructor(file, runId2, now = Date.now) {
    this.file = file;
    this.runId = runId2;
    this.now = now;
    const previous = file ? decoded(readSmall(file, SESSION_FILE_READ_LIMITS.needsInput), PREVIOUS2, file, SESSION_FILE_READ_LIMITS.needsInput) : void 0;
    if (previous?.runningChildId === runId2) this.sequence = previous.sequence;
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
      version: SESSION_FILE_VERSIONS.needsInput,
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
var assistantMessage = object({
  role: literal("assistant"),
  content: optional(array(object({ type: string, text: optional(string) }))),
  stopReason: optional(string),
  errorMessage: optional(string)
});
var messageEntry = object({ type: literal("message") });
function answerOf(message) {
  const read = decodeValue(message, assistantMessage, "a message");
  if (!read.ok) return void 0;
  const { content = [], stopReason, errorMessage } = read.value;
  const text = content.filter((block) => block.type === "text").map((block) => block.text).filter((t) => t !== void 0).join("\n");
  return { stopReason, errorMessage, text };
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
    const entry = decodeValue(entries[i], messageEntry, "a session entry");
    if (entry.ok) {
      const answer = answerOf(entry.value.message);
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

// src/shared/formats.ts
var maybeString = optional(nullable(string));
var errorDocument = object({ error: object({ message: string }) });
var runRecord = object({
  run_id: string,
  name: string,
  session_file: string,
  agent: maybeString,
  parent_run_id: maybeString,
  persistent: optional(boolean),
  interactive: optional(boolean),
  auto_exit: optional(boolean),
  status: member(),
  surface: member(),
  cwd: string,
  model: maybeString,
  thinking: maybeString,
  updated_at_ms: optional(number),
  pane: optional(nullable(object({ pane_id: string, workspace_id: maybeString, tab_id: maybeString })))
});
var detailFields = {
  elapsedMs: optional(nullable(number)),
  errorMessage: maybeString,
  error: optional(nullable(member())),
  sessionFile: maybeString,
  stdoutFile: maybeString
};
var outcome = literal("completed", "failed", "cancelled", "help");
var watchEvent = variants("event", {
  result: { run_id: string, name: string, key: string, message: string, outcome, task: maybeString, details: object(detailFields) },
  status: { run_id: string, name: string, label: member() },
  stalled: { run_id: string, name: string, message: string },
  recovered: { run_id: string, name: string, message: string },
  notice: { run_id: string, message: string },
  needs_input: { run_id: string, name: string, message: string }
});
var watchWait = object({ run_id: string, name: string, message: string, outcome, details: object(detailFields) });
var statusRow = object({
  run_id: string,
  label: member(),
  detail: nullable(string),
  since_ms: nullable(number),
  elapsed_ms: number,
  outcome: nullable(outcome),
  delivered: boolean
});
var statusRuns = object({ runs: array(statusRow) });
var statusWidget = object({
  widget: string,
  accent: literal("blue", "amber"),
  active: integer,
  open: integer,
  runs: array(statusRow)
});
var watchNotify = object({ looking: boolean, told: array(object({ shown: boolean })) });
var watchSteer = object({ request_id: string, state: member() });
var watchCancel = object({ status: member() });
var watchStop = object({ status: member() });
var launchAck = object({
  run_id: string,
  session_file: string,
  status: member(),
  pane_id: optional(string),
  persistent_ids: optional(object({ task_id: string }))
});
var launchSend = object({ run_id: string, task_id: string });
var launchModels = object({ guideline: string, launch_roster: boolean });
var strings = array(string);
var rolesListing = object({
  roles: array(
    object({
      name: string,
      scope: string,
      error: maybeString,
      description: maybeString,
      model: maybeString,
      thinking: maybeString,
      tools: optional(nullable(strings)),
      deny_tools: optional(strings),
      skills: optional(nullable(strings)),
      spawning: optional(nullable(boolean))
    })
  ),
  specialists: array(object({ run_id: string, state: string }))
});
var session = literal("parent", "child");
var registry = object({
  format_version: where(integer, (v) => v === 1, "format version 1"),
  tools: array(
    object({
      name: string,
      description: string,
      exposure: literal("deferred", "direct", "inactive"),
      parameters: object({}),
      sessions: array(session)
    })
  ),
  commands: array(
    object({
      name: string,
      description: string,
      sessions: array(session),
      usage: array(object({ text: string, sessions: optional(nullable(array(session))) }))
    })
  )
});

// src/shared/piherd-result.ts
import * as fs4 from "node:fs";

// src/shared/piherd-records.ts
import * as path5 from "node:path";

// src/shared/runs.ts
import * as fs3 from "node:fs";
function readLimited(file, limit) {
  try {
    const stat = fs3.statSync(file);
    if (!stat.isFile() || stat.size > limit) return void 0;
    return fs3.readFileSync(file, "utf8");
  } catch {
    return void 0;
  }
}
function readDocument(file, shape3, limit) {
  return decoded(readLimited(file, limit), shape3, file, limit);
}
function readRecord(dir, runId2) {
  if (!RUN_ID_PATTERN.test(runId2)) return void 0;
  return readDocument(runFile(dir, runId2, "record"), runRecord, RUN_FILE_READ_LIMITS.record);
}

// src/shared/piherd-records.ts
var LABEL_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;
var FORMAT_VERSION = 1;
var READ_LIMIT = 256 * 1024;
function ownerDir(artifacts, owner) {
  return owner === null ? path5.join(artifacts, "pi-herd", "root") : path5.join(artifacts, "pi-herd", "children", owner);
}
function workerPath(artifacts, owner, label2) {
  return path5.join(ownerDir(artifacts, owner), `${label2}.json`);
}
var runId = where(string, (id) => RUN_ID_PATTERN.test(id), "a run id");
var workerFile = object({
  format_version: where(integer, (v) => v === FORMAT_VERSION, `format version ${FORMAT_VERSION}`),
  label: where(string, (l) => LABEL_PATTERN.test(l), "a label"),
  owner_run_id: nullable(runId),
  owner_session_id: string,
  agent: nullable(string),
  reusable: boolean,
  created_at_ms: number,
  closed_at_ms: nullable(number),
  cleanup_error: optional(nullable(array(string))),
  assignments: array(
    object({
      request_id: string,
      runs: array(runId),
      task_id: nullable(string),
      started_at_ms: number,
      asks: array(object({ ask_id: string, reply_request_id: nullable(string) })),
      steers: array(string)
    })
  )
});
function parseWorker(text) {
  const worker = decoded(text, workerFile, "a worker file", READ_LIMIT);
  return worker && { ...worker, cleanup_error: worker.cleanup_error ?? null };
}
function readWorker(artifacts, owner, label2) {
  return parseWorker(readLimited(workerPath(artifacts, owner, label2), READ_LIMIT));
}
function readRun(artifacts, runId2) {
  const r = readRecord(artifacts, runId2);
  if (!r) return void 0;
  return {
    run_id: r.run_id,
    name: r.name,
    agent: r.agent ?? null,
    parent_run_id: r.parent_run_id ?? null,
    persistent: r.persistent === true,
    surface: r.surface,
    session_file: r.session_file,
    cwd: r.cwd,
    model: r.model ?? null,
    thinking: r.thinking ?? null,
    auto_exit: r.auto_exit !== false,
    pane: r.pane ? { pane_id: r.pane.pane_id, workspace_id: r.pane.workspace_id ?? null, tab_id: r.pane.tab_id ?? null } : null,
    updated_at_ms: r.updated_at_ms ?? 0
  };
}

// src/shared/piherd-result.ts
function resultStatus(outcome2, closed) {
  switch (outcome2) {
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
function assignmentOf(worker, runId2, task) {
  const mine = worker.assignments.filter((a) => a.runs.includes(runId2));
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
var count = optional(number);
var piEntry = variants("type", {
  compaction: {},
  model_change: { provider: string, modelId: string },
  message: {
    message: object({
      role: string,
      provider: optional(string),
      model: optional(string),
      stopReason: optional(string),
      usage: optional(object({ totalTokens: count, input: count, output: count, cacheRead: count, cacheWrite: count }))
    })
  }
});
function usageTokens(usage) {
  if (!usage) return void 0;
  const total = usage.totalTokens;
  if (total !== void 0 && total > 0) return total;
  const parts = [usage.input, usage.output, usage.cacheRead, usage.cacheWrite];
  if (parts.some((p) => p === void 0 || p < 0)) return void 0;
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
    const entry = decoded(lines[i], piEntry, "a session line", limit);
    if (!entry) continue;
    if (entry.type === "compaction") {
      compacted = true;
      continue;
    }
    if (entry.type === "model_change") {
      model ??= { provider: entry.provider, id: entry.modelId };
      continue;
    }
    const message = entry.message;
    if (message.role !== "assistant") continue;
    if (model === void 0 && message.provider !== void 0 && message.model !== void 0) model = { provider: message.provider, id: message.model };
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
function registryWindow(registry2, provider, model) {
  return registry2?.find(provider, model)?.contextWindow;
}
function endOfClosedReusable(dir, worker, runId2, persistent, task) {
  if (!persistent || task !== void 0 || worker.closed_at_ms === null) return false;
  const last = worker.assignments.filter((a) => a.runs.includes(runId2)).at(-1);
  if (!last || last.task_id === null) return false;
  return fs4.existsSync(runFile(dir, `${runId2}.task-${last.task_id}`, "delivered"));
}
function decorate(dir, event, message, details, windowOf) {
  const runId2 = event.run_id;
  const record = readRun(dir, runId2);
  if (!record || !LABEL_PATTERN.test(record.name)) return void 0;
  const worker = readWorker(dir, record.parent_run_id, record.name);
  if (!worker) return void 0;
  const task = event.task ?? void 0;
  const settledByClose = endOfClosedReusable(dir, worker, runId2, record.persistent, task);
  const assignment = settledByClose ? worker.assignments.filter((a) => a.runs.includes(runId2)).at(-1) : assignmentOf(worker, runId2, task);
  if (!assignment) return void 0;
  const outcome2 = event.outcome;
  const status = settledByClose ? "closed" : resultStatus(outcome2, worker.closed_at_ms !== null);
  const key = event.key ?? runId2;
  const agent = worker.agent ?? record.agent;
  const error = details.errorMessage ?? details.error ?? null;
  const session2 = details.sessionFile ?? null;
  const full = session2 ?? details.stdoutFile ?? null;
  const piHerd = {
    requestId: assignment.request_id,
    workerLabel: worker.label,
    agentDefinition: agent,
    status,
    final: status !== "blocked" && !settledByClose,
    elapsedMs: details.elapsedMs ?? null,
    contextUsage: contextUsage(session2, windowOf),
    truncated: truncated(message),
    resultPath: runFile(dir, key, "result"),
    fullOutputPath: full,
    workerError: status === "failed" ? error ?? outcome2 : null
  };
  if (status === "blocked") piHerd.askId = runId2;
  const head = envelope(worker.label, agent, assignment.request_id, status);
  const note = status === "blocked" ? `The worker asked its owner (ask_owner, ask ${runId2}); answer with subagent({action: "reply", label: ${JSON.stringify(worker.label)}, message}).` : void 0;
  return {
    message: [head, ...note ? [note] : [], message].join("\n"),
    details: { ...details, piHerd },
    ...settledByClose ? { settledByClose } : {}
  };
}

// src/child/own-children.ts
var HOLD_CHILD_MS = 2 * 60 * 60 * 1e3;
var RESULT_LIMIT = 2 * 1024 * 1024;
var STDERR_TAIL2 = 4e3;
function artifactsDirs(config) {
  const dirs = /* @__PURE__ */ new Set();
  if (config.activityFile) dirs.add(path6.resolve(path6.dirname(path6.dirname(config.activityFile))));
  if (config.artifacts) dirs.add(path6.resolve(config.artifacts));
  return [...dirs];
}
function candidateIds(dir, config) {
  if (readRecord(dir, config.runId)?.extra?.links_children === true) {
    const list = runFile(dir, config.runId, "children");
    if (!fs5.existsSync(list)) return /* @__PURE__ */ new Set();
    const text = readSmall(list, RUN_FILE_READ_LIMITS.children);
    if (text !== void 0) return new Set(text.split("\n"));
  }
  try {
    return new Set(fs5.readdirSync(path6.join(dir, RUNS_DIR)).map((name) => recordRunId(name) ?? ""));
  } catch {
    return /* @__PURE__ */ new Set();
  }
}
function outstandingChildren(config) {
  const found = [];
  for (const dir of artifactsDirs(config)) {
    for (const id of candidateIds(dir, config)) {
      if (!RUN_ID_PATTERN.test(id) || id === config.runId) continue;
      const record = readRecord(dir, id);
      if (!record || record.parent_run_id !== config.runId || record.status === "failed") continue;
      if (record.persistent === true) continue;
      if (fs5.existsSync(runFile(dir, id, "result"))) continue;
      if (fs5.existsSync(runFile(dir, id, "superseded"))) continue;
      found.push({ dir, id, name: record.name });
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
    for (const running of this.watchers.values()) running?.signal("SIGTERM");
  }
  watch(own) {
    const key = `${own.dir}/${own.id}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.watchers.set(key, void 0);
    const program = herdProgram(this.config.binDir, "herd-watch");
    void runProcess(program, ["--artifacts", own.dir, "wait", "--run", own.id, "--json"], {
      budgetMs: HOLD_CHILD_MS,
      stdoutLimit: RESULT_LIMIT,
      stderrLimit: STDERR_TAIL2,
      started: (running) => this.watchers.set(key, running)
    }).then((run) => {
      this.watchers.delete(key);
      const doc = decode(run.stdout, watchWait, "herd-watch wait --json", RESULT_LIMIT);
      if (doc.ok) {
        this.deliver(this.result(own, doc.value));
        return;
      }
      const reason = run.timedOut ? `no result within ${HOLD_CHILD_MS / 6e4} minutes` : run.error !== void 0 ? `no result (${run.error})` : `no result (herd-watch exited with ${run.code})`;
      this.deliver({
        text: `Subagent ${JSON.stringify(own.name)} (${own.id}) gave ${reason}; see \`herd-watch status --run ${own.id}\`.`
      });
    });
  }
  /** herd's result `doc` of `own`, decorated when a Pi Herd worker file of this run claims it. */
  result(own, doc) {
    const worker = decorate(own.dir, doc, doc.message, doc.details, this.windowOf);
    if (!worker) return { text: doc.message };
    return { text: worker.message, details: { ...worker.details, runId: own.id, name: own.name, outcome: doc.outcome } };
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
      if (!event.terminating && event.steeringQueued) return { state: { kind: "steering" }, action: { type: "await-steering" } };
      return afterWork(event);
    }
    case "steering-done":
      if (state.kind !== "steering") return { state, action: none };
      if (!event.terminating && event.resultsQueued) return { state: { kind: "working" }, action: { type: "deliver" } };
      if (!event.terminating && event.childrenOutstanding) return { state: { kind: "holding" }, action: none };
      return afterWork(event);
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
function afterWork(event) {
  if (event.hasCheck) return { state: { kind: "checking" }, action: { type: "check" } };
  return { state: { kind: "ended" }, action: done };
}
function unsettled(state) {
  return state.kind === "working" || state.kind === "checking" || state.kind === "holding" || state.kind === "steering";
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
      `${JSON.stringify({ version: SESSION_FILE_VERSIONS.acceptTries, tries, last: passed ? "pass" : "fail" })}
`,
      `tries${tries}`
    );
  } catch {
  }
}
function appendTaskEvent(sessionFile2, generationId, type, task, message) {
  if (!sessionFile2 || !task) return;
  const event = {
    version: SESSION_FILE_VERSIONS.tasks,
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

// src/child/steering.ts
var STEERING_HOLD_MS = 3e4;
var STEERING_POLL_MS = 200;
var shape2 = object({
  version: literal(SESSION_FILE_VERSIONS.steeringQueued),
  runningChildId: string,
  requestIds: array(string)
});
function steeringQueued(file, runId2) {
  if (!file) return false;
  const limit = SESSION_FILE_READ_LIMITS.steeringQueued;
  const queued = decoded(readSmall(file, limit), shape2, file, limit);
  return queued !== void 0 && queued.runningChildId === runId2 && queued.requestIds.length > 0;
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
    if (settlement.kind === "steering") await settle({ type: "turn-started" }, void 0);
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
  const steeringFile = settles && !config.printMode && config.sessionFile ? sessionFile(config.sessionFile, "steeringQueued") : "";
  let steeringTimer = void 0;
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
      case "await-steering":
        awaitSteering(ctx);
        return;
    }
  }
  function awaitSteering(ctx) {
    stopSteeringWait();
    const until = Date.now() + STEERING_HOLD_MS;
    steeringTimer = setInterval(() => {
      if (settlement.kind !== "steering") return stopSteeringWait();
      if (!terminating && Date.now() < until && steeringQueued(steeringFile, config.runId)) return;
      stopSteeringWait();
      void settle(
        {
          type: "steering-done",
          resultsQueued: results.length > 0,
          childrenOutstanding: ownChildren.waiting > 0,
          hasCheck: config.acceptFile !== "",
          terminating
        },
        ctx ?? idleCtx
      );
    }, STEERING_POLL_MS);
  }
  function stopSteeringWait() {
    if (steeringTimer) clearInterval(steeringTimer);
    steeringTimer = void 0;
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
        { type: "turn-ended", answer, resultsQueued: false, childrenOutstanding: false, steeringQueued: false, hasCheck: false, terminating },
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
        steeringQueued: steeringQueued(steeringFile, config.runId),
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
    return tries * (checkMs + SETTLE_TURN_MS) + HOLD_CHILD_MS + SETTLE_TURN_MS + STEERING_HOLD_MS;
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
    stopSteeringWait();
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
