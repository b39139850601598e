/**
 * herd's Pi child extension: the child side of the on-disk protocol between a Pi child and herd
 * (the pi-herdr-agents formats, protocol.md §1).
 *
 * Loaded by `pi -e <this file>` in every Pi child herd-launch starts; it does nothing in a session
 * without `PI_SUBAGENT_ID`. It provides:
 *
 * - `caller_ping` (always) and `subagent_done` (for children that do not exit by themselves and
 *   for persistent specialists), the child-only tools;
 * - the activity snapshot `PI_SUBAGENT_ACTIVITY_FILE` (§1.3), written atomically, throttled for
 *   streaming events, frozen at `done`;
 * - the completion sidecar `<session>.exit` (§1.2): `done`, `error` or `ping`;
 * - auto-exit: a child with `PI_SUBAGENT_AUTO_EXIT=1` ends when its turn settles normally;
 * - the child side of an accept check (`PI_SUBAGENT_ACCEPT_FILE`): `sh -c <run>` in the child's
 *   directory after its turn, the last 4,000 characters of a failure fed back for another turn, at
 *   most `maxRetries` times, and the count of checks run in `<session>.accept-tries.json`;
 * - an auto-exit child that launched children of its own stays open until each has delivered:
 *   it waits for them with `herd-watch wait`, each result starts a turn, and it ends when none is
 *   outstanding;
 * - the persistent inbox (§1.11): tasks and stop directives from `<session>.task-inbox.*.json`,
 *   task events in `<session>.tasks`;
 * - `PI_DENY_TOOLS`: denied tools are removed from the session.
 *
 * Everything it reads is bounded and everything it writes is small; a failing write never breaks
 * the child's session (the activity recorder disables itself after three failures in a row).
 */
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

const env = process.env;
const runId = env.PI_SUBAGENT_ID ?? "";
const sessionFile = env.PI_SUBAGENT_SESSION ?? env.PI_HERDR_AGENTS_SESSION ?? "";
const childName = env.PI_SUBAGENT_NAME ?? "subagent";
const autoExit = env.PI_SUBAGENT_AUTO_EXIT === "1";
const persistent = env.PI_SUBAGENT_PERSISTENT === "1";
const generationId = env.PI_SUBAGENT_GENERATION_ID ?? "";
const activityFile = env.PI_SUBAGENT_ACTIVITY_FILE ?? "";
const acceptFile = env.PI_SUBAGENT_ACCEPT_FILE ?? "";
const deniedTools = (env.PI_DENY_TOOLS ?? "")
	.split(",")
	.map((t) => t.trim())
	.filter((t) => t.length > 0);

/** The bound of the accept spec read and of a task inbox entry. */
const READ_LIMIT = 1024 * 1024;
/** How much of a failed check's output goes back to the child. */
const CHECK_FEEDBACK_CHARS = 4000;
/** How much of a task's final text goes into its task event. */
const TASK_MESSAGE_CHARS = 16000;
/** The throttle of streaming activity events. */
const THROTTLE_MS = 500;
/** The idle poll of the persistent inbox. */
const INBOX_POLL_MS = 1000;
/** SIGTERM to SIGKILL of a check that ran out of time. */
const CHECK_KILL_GRACE_MS = 5000;
/** What a quit in print mode allows each retry turn of an auto-exit child's settlement. */
const SETTLE_TURN_MS = 30 * 60 * 1000;
/** How often a quit in print mode looks whether the settlement is done. */
const SETTLE_POLL_MS = 50;
/** The longest an auto-exit child is held open for one child of its own to deliver. */
const HOLD_CHILD_MS = 2 * 60 * 60 * 1000;
/** The bound of a run record read while looking for a child's own children. */
const RECORD_LIMIT = 256 * 1024;
/** The bound of what `herd-watch wait` prints: one result document. */
const RESULT_LIMIT = 2 * 1024 * 1024;
/** Pi runs in print mode (no terminal): it quits when its first prompt returns. */
const printMode = process.argv.includes("-p") || process.argv.includes("--print");

type Phase = "starting" | "active" | "waiting" | "done";

/** Reads a small file, or undefined when it is missing or too large. */
function readSmall(file: string, limit = READ_LIMIT): string | undefined {
	try {
		const stat = fs.statSync(file);
		if (!stat.isFile() || stat.size > limit) return undefined;
		return fs.readFileSync(file, "utf8");
	} catch {
		return undefined;
	}
}

/**
 * Writes a file by writing a temporary file beside it and renaming it into place. Like every file
 * herd writes, it is private (0600, its directories 0700), and the temporary file is created
 * exclusively, so nothing left at its name (a symlink) is written through.
 */
function writeAtomic(file: string, text: string, tmpSuffix: string): void {
	fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
	const tmp = `${file}.${process.pid}.${tmpSuffix}.tmp`;
	fs.rmSync(tmp, { force: true });
	fs.writeFileSync(tmp, text, { mode: 0o600, flag: "wx" });
	fs.renameSync(tmp, file);
}

/** A host-safe short string: at most 200 characters, no CR or LF. */
function label(value: unknown): string | undefined {
	if (typeof value !== "string" || value.length === 0) return undefined;
	return value.replace(/[\r\n]+/g, " ").slice(0, 200);
}

/** The activity recorder of protocol.md §1.3. */
class Activity {
	private sequence = 0;
	private readonly createdAt = Date.now();
	private phase: Phase = "starting";
	private latestEvent = "session_start";
	private agentActive = false;
	private turnActive = false;
	private providerActive = false;
	private streaming = false;
	private toolActive = false;
	private activeSince?: number;
	private waitingSince?: number;
	private turnIndex?: number;
	private messageEventType?: string;
	private toolCallId?: string;
	private toolName?: string;
	private toolStartedAt?: number;
	private toolEndedAt?: number;
	private frozen = false;
	private failures = 0;
	private lastFlush = 0;
	private pending?: ReturnType<typeof setTimeout>;

	constructor() {
		// A persistent specialist's sequence never resets, not even across a restart of Pi.
		const previous = activityFile ? readSmall(activityFile) : undefined;
		if (previous) {
			try {
				const snapshot = JSON.parse(previous);
				if (snapshot?.runningChildId === runId && Number.isInteger(snapshot.sequence)) {
					this.sequence = snapshot.sequence;
				}
			} catch {
				// A torn or foreign file: start from zero.
			}
		}
	}

	/** Records `event`; `update` changes the state first. Streaming events are throttled. */
	record(event: string, update?: (a: Activity) => void, throttled = false): void {
		if (!activityFile || this.failures >= 3) return;
		if (this.frozen && !(persistent && event === "input")) return;
		this.frozen = false;
		update?.(this);
		this.latestEvent = event;
		this.sequence += 1;
		this.derivePhase();
		if (throttled) {
			const wait = this.lastFlush + THROTTLE_MS - Date.now();
			if (wait > 0) {
				if (!this.pending) this.pending = setTimeout(() => this.flush(), wait);
				return;
			}
		}
		this.flush();
	}

	/** Records a final event: phase `done`, then no more writes until a persistent task starts. */
	finish(event: string): void {
		if (!activityFile || this.frozen) return;
		this.agentActive = this.turnActive = this.providerActive = this.streaming = this.toolActive = false;
		this.latestEvent = event;
		this.sequence += 1;
		this.phase = "done";
		this.flush();
		this.frozen = true;
	}

	setAgent(active: boolean): void {
		this.agentActive = active;
		if (!active) this.turnActive = this.providerActive = this.streaming = this.toolActive = false;
	}
	setTurn(active: boolean, index?: number): void {
		this.turnActive = active;
		if (index !== undefined) this.turnIndex = index;
		if (!active) this.providerActive = this.streaming = false;
	}
	setProvider(active: boolean): void {
		this.providerActive = active;
	}
	setStreaming(active: boolean, type?: string): void {
		this.streaming = active;
		if (type) this.messageEventType = label(type);
	}
	startTool(id: unknown, name: unknown): void {
		this.toolActive = true;
		this.toolCallId = label(id);
		this.toolName = label(name);
		this.toolStartedAt = Date.now();
		this.toolEndedAt = undefined;
	}
	endTool(): void {
		this.toolActive = false;
		this.toolEndedAt = Date.now();
	}

	private scope(): string | undefined {
		if (this.toolActive) return "tool";
		if (this.providerActive) return "provider";
		if (this.streaming) return "streaming";
		if (this.turnActive) return "turn";
		if (this.agentActive) return "agent";
		return undefined;
	}

	private derivePhase(): void {
		const now = Date.now();
		if (this.agentActive || this.turnActive || this.toolActive) {
			if (this.phase !== "active") this.activeSince = now;
			this.phase = "active";
			this.waitingSince = undefined;
		} else if (this.phase === "active" || this.latestEvent === "agent_end") {
			this.phase = "waiting";
			this.waitingSince = now;
			this.activeSince = undefined;
		}
	}

	private flush(): void {
		if (this.pending) {
			clearTimeout(this.pending);
			this.pending = undefined;
		}
		const snapshot: Record<string, unknown> = {
			version: 1,
			runningChildId: runId,
			createdAt: this.createdAt,
			updatedAt: Date.now(),
			sequence: this.sequence,
			latestEvent: this.latestEvent,
			phase: this.phase,
			agentActive: this.agentActive,
			turnActive: this.turnActive,
			providerActive: this.providerActive,
			toolActive: this.toolActive,
		};
		const optional: Record<string, unknown> = {
			activeScope: this.scope(),
			activeSince: this.activeSince,
			waitingSince: this.waitingSince,
			turnIndex: this.turnIndex,
			messageEventType: this.messageEventType,
			toolCallId: this.toolCallId,
			toolName: this.toolName,
			toolStartedAt: this.toolStartedAt,
			toolEndedAt: this.toolEndedAt,
		};
		for (const [key, value] of Object.entries(optional)) {
			if (value !== undefined) snapshot[key] = value;
		}
		try {
			writeAtomic(activityFile, `${JSON.stringify(snapshot)}\n`, String(this.sequence));
			this.failures = 0;
			this.lastFlush = Date.now();
		} catch {
			this.failures += 1;
		}
	}
}

/** The completion sidecar `<session>.exit`, written once. */
let exitWritten = false;
function writeExit(payload: Record<string, unknown>): void {
	if (exitWritten || !sessionFile) return;
	exitWritten = true;
	try {
		writeAtomic(`${sessionFile}.exit`, `${JSON.stringify(payload)}\n`, "exit");
	} catch {
		// The host still sees the process exit and the shell sentinel.
	}
}

/**
 * Records the child's own accept checks in `<session>.accept-tries.json`, after each one:
 * `{"version":1,"tries":N,"last":"pass"|"fail"}`. The parent's verdict reads it for the
 * `Check: accepted (N tries)` line; a failed write only loses that count.
 */
function writeAcceptTries(tries: number, passed: boolean): void {
	if (!sessionFile) return;
	try {
		writeAtomic(
			`${sessionFile}.accept-tries.json`,
			`${JSON.stringify({ version: 1, tries, last: passed ? "pass" : "fail" })}\n`,
			`tries${tries}`,
		);
	} catch {
		// The verdict then names no count.
	}
}

/** Appends a persistent task event to `<session>.tasks`. */
function taskEvent(type: "task-done" | "help-request", task: string, message?: string): void {
	if (!sessionFile || !task) return;
	const event: Record<string, unknown> = {
		version: 1,
		type,
		task,
		generation: generationId,
		at: new Date().toISOString(),
	};
	if (message !== undefined) event.message = message.slice(0, TASK_MESSAGE_CHARS);
	try {
		fs.appendFileSync(`${sessionFile}.tasks`, `${JSON.stringify(event)}\n`, {
			mode: 0o600,
			flag: fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_WRONLY | fs.constants.O_NOFOLLOW,
		});
	} catch {
		// The host reads the session transcript too.
	}
}

/** The last assistant message of a list of messages. */
function lastAssistant(messages: unknown[] | undefined): any {
	if (!Array.isArray(messages)) return undefined;
	for (let i = messages.length - 1; i >= 0; i--) {
		const m: any = messages[i];
		if (m?.role === "assistant") return m;
	}
	return undefined;
}

function assistantText(message: any): string {
	if (!Array.isArray(message?.content)) return "";
	return message.content
		.filter((c: any) => c?.type === "text" && typeof c.text === "string")
		.map((c: any) => c.text)
		.join("\n");
}

/** The last assistant message of the session's current branch. */
function sessionLastAssistant(ctx: any): any {
	try {
		const entries = ctx.sessionManager.getBranch();
		for (let i = entries.length - 1; i >= 0; i--) {
			const e: any = entries[i];
			if (e?.type === "message" && e.message?.role === "assistant") return e.message;
		}
	} catch {
		// No session state to read.
	}
	return undefined;
}

/** The accept spec, as herd-accept writes it. */
interface AcceptSpec {
	run: string;
	maxRetries: number;
	timeoutSec: number;
}

function readAcceptSpec(): AcceptSpec | undefined {
	if (!acceptFile) return undefined;
	const text = readSmall(acceptFile);
	if (!text) return undefined;
	try {
		const spec = JSON.parse(text);
		if (spec?.version !== 1 || typeof spec.run !== "string" || spec.run.length === 0) return undefined;
		const maxRetries = Number.isInteger(spec.maxRetries) ? Math.min(Math.max(spec.maxRetries, 0), 5) : 1;
		const timeoutSec = Number.isInteger(spec.timeoutSec) ? Math.min(Math.max(spec.timeoutSec, 1), 3600) : 600;
		return { run: spec.run, maxRetries, timeoutSec };
	} catch {
		return undefined;
	}
}

/**
 * The artifacts directories a child's own children are recorded in: its own (the parent of its
 * activity snapshot's directory) and `$HERD_ARTIFACTS`, where herd-launch puts runs by default.
 */
function artifactsDirs(): string[] {
	const dirs = new Set<string>();
	if (activityFile) dirs.add(path.resolve(path.dirname(path.dirname(activityFile))));
	if (env.HERD_ARTIFACTS) dirs.add(path.resolve(env.HERD_ARTIFACTS));
	return [...dirs];
}

/** A run this child launched (its record's `parent_run_id` is this run). */
interface OwnChild {
	dir: string;
	id: string;
	name: string;
}

/**
 * This child's own children that have not ended: a record naming this run as its parent, not a
 * definite launch failure, not a persistent specialist, and neither settled (`<id>.result.json`) nor superseded by a model
 * fallback (`<id>.superseded.json`, whose successor is another such record).
 */
function outstandingChildren(): OwnChild[] {
	const found: OwnChild[] = [];
	for (const dir of artifactsDirs()) {
		const runs = path.join(dir, "runs");
		let names: string[];
		try {
			names = fs.readdirSync(runs);
		} catch {
			continue;
		}
		for (const name of names) {
			const id = name.endsWith(".json") ? name.slice(0, -".json".length) : "";
			if (!/^[0-9a-f]{1,32}$/.test(id) || id === runId) continue;
			const text = readSmall(path.join(runs, name), RECORD_LIMIT);
			let record: any;
			try {
				record = JSON.parse(text ?? "");
			} catch {
				continue;
			}
			if (record?.parent_run_id !== runId || record?.status === "failed") continue;
			// A persistent specialist is long-lived by design and never holds the exit.
			if (record?.persistent === true) continue;
			if (fs.existsSync(path.join(runs, `${id}.result.json`))) continue;
			if (fs.existsSync(path.join(runs, `${id}.superseded.json`))) continue;
			found.push({ dir, id, name: typeof record.name === "string" ? record.name : id });
		}
	}
	return found;
}

/** `herd-watch`: beside the other herd programs (`$HERD_BIN_DIR`), else on `PATH`. */
function herdWatchProgram(): string {
	return env.HERD_BIN_DIR ? path.join(env.HERD_BIN_DIR, "herd-watch") : "herd-watch";
}

/** Running checks, killed with the session. */
const runningChecks = new Set<number>();

function killGroup(pid: number, signal: NodeJS.Signals): void {
	try {
		process.kill(-pid, signal);
	} catch {
		// Already gone.
	}
}

/** Runs the check once: `sh -c <run>` in `cwd`, in its own process group, with a deadline. */
function runCheck(spec: AcceptSpec, cwd: string): Promise<{ code: number | null; output: string; timedOut: boolean }> {
	return new Promise((resolve) => {
		const checkEnv: NodeJS.ProcessEnv = {};
		for (const [key, value] of Object.entries(process.env)) {
			if (!key.startsWith("PI_SUBAGENT_")) checkEnv[key] = value;
		}
		let output = "";
		const keep = (chunk: Buffer) => {
			output = (output + chunk.toString("utf8")).slice(-CHECK_FEEDBACK_CHARS * 4);
		};
		let child;
		try {
			child = spawn("sh", ["-c", spec.run], { cwd, env: checkEnv, detached: true, stdio: ["ignore", "pipe", "pipe"] });
		} catch (err) {
			resolve({ code: null, output: String(err), timedOut: false });
			return;
		}
		const pid = child.pid;
		if (pid !== undefined) runningChecks.add(pid);
		let timedOut = false;
		let killTimer: ReturnType<typeof setTimeout> | undefined;
		const timer = setTimeout(() => {
			timedOut = true;
			if (pid !== undefined) {
				killGroup(pid, "SIGTERM");
				killTimer = setTimeout(() => killGroup(pid, "SIGKILL"), CHECK_KILL_GRACE_MS);
			}
		}, spec.timeoutSec * 1000);
		child.stdout?.on("data", keep);
		child.stderr?.on("data", keep);
		child.on("error", (err) => keep(Buffer.from(String(err))));
		child.on("close", (code) => {
			clearTimeout(timer);
			if (killTimer) clearTimeout(killTimer);
			if (pid !== undefined) {
				// Whatever the check left in its group goes with it.
				killGroup(pid, "SIGKILL");
				runningChecks.delete(pid);
			}
			resolve({ code, output: output.slice(-CHECK_FEEDBACK_CHARS), timedOut });
		});
	});
}

export default function herdChild(pi: ExtensionAPI): void {
	if (!runId) {
		pi.registerTool({
			name: "caller_ping",
			label: "Caller ping",
			description: "Send a help request to the parent agent and exit this session.",
			parameters: Type.Object({ message: Type.String({ description: "What you need help with" }) }),
			async execute() {
				throw new Error("caller_ping is only available inside a subagent started by herd");
			},
		});
		return;
	}

	// Pi 1.6 asks whether to trust a folder with `.pi` resources before it starts; a child never
	// asks. It takes the decision herd-launch handed it (its parent's, never wider), and a child
	// without one is not trusted. Pi 0.73 has no such question and never fires this event.
	pi.on("project_trust", () => ({ trusted: env.HERD_PROJECT_TRUST === "trusted" ? "yes" : "no" }));

	const activity = new Activity();
	let currentTask = persistent ? (env.PI_SUBAGENT_TASK_ID ?? "") : "";
	let taskEnded = false;
	let stopRequested = false;
	let checkTries = 0;
	let checking = false;
	let shuttingDown = false;
	let idleCtx: any;
	/** Runs started and ended (their `agent_end` handled), for the settlement of a quit. */
	let agentStarts = 0;
	let agentEndsHandled = 0;
	/** A retry turn was asked for and its `agent_end` has not been handled yet. */
	let awaitingTurn = false;
	/** A signal is quitting Pi: nothing waits. */
	let terminating = false;

	const endChild = (ctx: any, payload: Record<string, unknown>, event: string) => {
		writeExit(payload);
		activity.finish(event);
		if (!shuttingDown) {
			shuttingDown = true;
			ctx.shutdown();
		}
	};

	/** Ends the current persistent task (once) with `type`. */
	const endTask = (type: "task-done" | "help-request", message?: string) => {
		if (!currentTask || taskEnded) return;
		taskEnded = true;
		taskEvent(type, currentTask, message);
		activity.finish(type === "help-request" ? "caller_ping" : "subagent_done");
	};

	pi.registerTool({
		name: "caller_ping",
		label: "Caller ping",
		description:
			"Send a help request to the parent agent and exit this session. Use it when you cannot continue without the parent's answer.",
		promptSnippet: "Ask the parent agent for help (ends this session)",
		parameters: Type.Object({ message: Type.String({ description: "What you need help with" }) }),
		async execute(_id: string, params: { message: string }, _signal: unknown, _onUpdate: unknown, ctx: any) {
			const message = String(params?.message ?? "").trim() || "(no message)";
			if (persistent) {
				endTask("help-request", message);
				return {
					content: [{ type: "text", text: "Help request sent to the parent. Wait for its answer as your next task." }],
					details: { message },
					terminate: true,
				};
			}
			endChild(ctx, { type: "ping", name: childName, message }, "caller_ping");
			return {
				content: [{ type: "text", text: "Help request sent to the parent; this session ends now." }],
				details: { message },
				terminate: true,
			};
		},
	});

	if (!autoExit || persistent) {
		pi.registerTool({
			name: "subagent_done",
			label: "Subagent done",
			description:
				"Call this tool when you have completed your task. Your final message before it is your report to the parent.",
			promptSnippet: "Finish this subagent's task",
			parameters: Type.Object({}),
			async execute(_id: string, _params: unknown, _signal: unknown, _onUpdate: unknown, ctx: any) {
				if (persistent) {
					endTask("task-done", assistantText(sessionLastAssistant(ctx)));
					return {
						content: [{ type: "text", text: "Task finished. Wait for the next task." }],
						details: {},
						terminate: true,
					};
				}
				endChild(ctx, { type: "done" }, "subagent_done");
				return { content: [{ type: "text", text: "Done; this session ends now." }], details: {}, terminate: true };
			},
		});
	}

	pi.on("session_start", async (_event: any, ctx: any) => {
		idleCtx = ctx;
		if (deniedTools.length > 0) {
			const denied = new Set(deniedTools);
			pi.setActiveTools(pi.getActiveTools().filter((tool: string) => !denied.has(tool)));
		}
		activity.record("session_start");
		if (persistent) startInbox();
	});

	pi.on("input", async () => {
		activity.record("input", (a) => a.setAgent(true));
	});
	pi.on("before_agent_start", async () => {
		activity.record("before_agent_start");
	});
	pi.on("agent_start", async () => {
		agentStarts += 1;
		activity.record("agent_start", (a) => a.setAgent(true));
	});
	pi.on("turn_start", async (event: any) => {
		activity.record("turn_start", (a) => a.setTurn(true, Number.isInteger(event?.turnIndex) ? event.turnIndex : undefined));
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
	pi.on("message_update", async (event: any) => {
		activity.record("message_update", (a) => a.setStreaming(true, event?.assistantMessageEvent?.type), true);
	});
	pi.on("tool_execution_start", async (event: any) => {
		activity.record("tool_execution_start", (a) => {
			a.setStreaming(false);
			a.startTool(event?.toolCallId, event?.toolName);
		});
	});
	pi.on("tool_call", async () => {
		activity.record("tool_call");
	});
	pi.on("tool_execution_update", async () => {
		activity.record("tool_execution_update", undefined, true);
	});
	pi.on("tool_result", async () => {
		activity.record("tool_result");
	});
	pi.on("tool_execution_end", async () => {
		activity.record("tool_execution_end", (a) => a.endTool());
	});

	// Settlement of an auto-exit child. Its turn ending is not yet its end: a failed accept check
	// sends it back to work, and it ends only when its turn settles with nothing left to do. In
	// print mode Pi quits as soon as the first turn's prompt returns, so `session_shutdown` holds
	// the quit until the child has settled (see `settleBudgetMs`); a signal never waits.
	if (printMode) {
		// Print mode has its own handlers for these (they quit Pi); this one only says that the
		// quit is a signal's, which must not wait for a settlement.
		for (const signal of ["SIGTERM", "SIGHUP", "SIGINT"] as const) {
			process.on(signal, () => {
				terminating = true;
			});
		}
	}

	pi.on("agent_end", async (event: any, ctx: any) => {
		idleCtx = ctx;
		awaitingTurn = false;
		try {
			await settle(event, ctx);
		} finally {
			agentEndsHandled += 1;
		}
	});

	async function settle(event: any, ctx: any): Promise<void> {
		activity.record("agent_end", (a) => a.setAgent(false));
		const last = lastAssistant(event?.messages) ?? sessionLastAssistant(ctx);
		const stopReason = last?.stopReason;
		if (stopReason === "aborted") {
			// An interrupted run stays open, whatever it is.
			return;
		}
		if (persistent) {
			if (stopReason === "error") {
				endTask("task-done", `Subagent error: ${last?.errorMessage ?? "provider error"}`);
			} else {
				endTask("task-done", assistantText(last));
			}
			if (stopRequested) finishStop(ctx);
			return;
		}
		if (!autoExit) return;
		if (stopReason === "error") {
			endChild(
				ctx,
				{ type: "error", errorMessage: last?.errorMessage || "the provider failed and retries were exhausted", stopReason: "error" },
				"agent_end",
			);
			return;
		}
		// Children this child launched deliver first: each result is a turn of its own, and the
		// child ends only when none is outstanding (seed 003, children that launch children).
		if (!terminating) {
			for (const own of outstandingChildren()) watchOwnChild(own);
			if (deliveries.length > 0) {
				steer(deliveries.shift() as string);
				return;
			}
			if (ownWatchers.size > 0) {
				holding = true;
				return;
			}
		}
		const spec = readAcceptSpec();
		if (spec && !checking) {
			checking = true;
			checkTries += 1;
			let result: { code: number | null; output: string; timedOut: boolean };
			try {
				result = await runCheck(spec, ctx.cwd ?? process.cwd());
			} finally {
				checking = false;
			}
			try {
				pi.appendEntry("herd-accept-check", {
					tries: checkTries,
					exitCode: result.code,
					timedOut: result.timedOut,
				});
			} catch {
				// Evidence only.
			}
			const passed = result.code === 0 && !result.timedOut;
			writeAcceptTries(checkTries, passed);
			if (!passed && checkTries <= spec.maxRetries && !terminating) {
				const why = result.timedOut ? `timed out after ${spec.timeoutSec}s` : `exited with ${result.code}`;
				awaitingTurn = true;
				pi.sendUserMessage(
					`The acceptance check failed (${why}, try ${checkTries} of ${spec.maxRetries + 1}). ` +
						`Its output, last ${CHECK_FEEDBACK_CHARS.toLocaleString("en-US")} characters:\n\n\`\`\`\n${result.output}\n\`\`\`\n\n` +
						"Fix the cause; the check runs again when you finish.",
					{ deliverAs: "followUp" },
				);
				return;
			}
		}
		endChild(ctx, { type: "done" }, "agent_end");
	}

	/** Results of this child's own children not yet given to it, oldest first. */
	const deliveries: string[] = [];
	/** `herd-watch wait` of each own child still outstanding, by `<dir>/<run id>`. */
	const ownWatchers = new Map<string, number | undefined>();
	/** Own children already waited for, so each result is given once. */
	const ownSeen = new Set<string>();
	/** The child's turn settled and it waits for its own children. */
	let holding = false;

	/** Starts a turn with `text`: a delivered result of one of the child's own children. */
	function steer(text: string): void {
		holding = false;
		awaitingTurn = true;
		activity.record("input", (a) => a.setAgent(true));
		pi.sendUserMessage(text, { deliverAs: "followUp" });
	}

	/** A result arrived: given now if the child is held open waiting, else at its next settlement. */
	function deliver(text: string): void {
		deliveries.push(text);
		if (holding && !terminating && idleCtx?.isIdle?.() !== false) steer(deliveries.shift() as string);
	}

	/**
	 * Waits for `own` with `herd-watch wait --json` (which supervises it, settles and delivers
	 * its result exactly once), bounded by `HOLD_CHILD_MS`; its result, or why there is none,
	 * becomes a delivery.
	 */
	function watchOwnChild(own: OwnChild): void {
		const key = `${own.dir}/${own.id}`;
		if (ownSeen.has(key)) return;
		ownSeen.add(key);
		let out = "";
		let child;
		try {
			child = spawn(herdWatchProgram(), ["--artifacts", own.dir, "wait", "--run", own.id, "--json"], {
				detached: true,
				stdio: ["ignore", "pipe", "ignore"],
			});
		} catch (err) {
			deliver(`Subagent ${JSON.stringify(own.name)} (${own.id}): its result cannot be waited for: ${String(err)}`);
			return;
		}
		const pid = child.pid;
		ownWatchers.set(key, pid);
		let timedOut = false;
		const timer = setTimeout(() => {
			timedOut = true;
			if (pid !== undefined) killGroup(pid, "SIGKILL");
		}, HOLD_CHILD_MS);
		child.stdout?.on("data", (chunk: Buffer) => {
			if (out.length < RESULT_LIMIT) out += chunk.toString("utf8");
		});
		let settled = false;
		const done = (why?: string) => {
			if (settled) return;
			settled = true;
			clearTimeout(timer);
			ownWatchers.delete(key);
			let message: string | undefined;
			try {
				const doc = JSON.parse(out);
				if (typeof doc?.message === "string") message = doc.message;
			} catch {
				// No result document: said below.
			}
			if (message === undefined) {
				const reason = timedOut ? `no result within ${HOLD_CHILD_MS / 60000} minutes` : (why ?? "no result");
				message = `Subagent ${JSON.stringify(own.name)} (${own.id}) gave ${reason}; see \`herd-watch status --run ${own.id}\`.`;
			}
			deliver(message);
		};
		child.on("error", (err) => done(String(err)));
		child.on("close", (code) => done(`no result (herd-watch exited with ${code})`));
	}

	/**
	 * Whether an auto-exit child still has settling to do: a check, a retry turn, an unhandled end,
	 * or its own children to hear from.
	 */
	function unsettled(): boolean {
		return (
			!exitWritten &&
			(checking || awaitingTurn || agentStarts > agentEndsHandled || holding || ownWatchers.size > 0 || deliveries.length > 0)
		);
	}

	/** The longest a quit waits for the settlement: every check and its retry turns, and the child's own children. */
	function settleBudgetMs(): number {
		const spec = readAcceptSpec();
		const tries = spec ? spec.maxRetries + 1 : 1;
		const checkMs = spec ? spec.timeoutSec * 1000 + CHECK_KILL_GRACE_MS : 0;
		return tries * (checkMs + SETTLE_TURN_MS) + HOLD_CHILD_MS + SETTLE_TURN_MS;
	}

	pi.on("session_shutdown", async (event: any, ctx: any) => {
		if (autoExit && !persistent && event?.reason === "quit" && !terminating && unsettled()) {
			const deadline = Date.now() + settleBudgetMs();
			while (unsettled() && !terminating && Date.now() < deadline) {
				await new Promise((resolve) => setTimeout(resolve, SETTLE_POLL_MS));
			}
		}
		for (const pid of runningChecks) {
			killGroup(pid, "SIGTERM");
			setTimeout(() => killGroup(pid, "SIGKILL"), 1000).unref?.();
		}
		// A watcher of an own child only watches: the child's children run on, and any later
		// `herd-watch` delivers their results.
		for (const pid of ownWatchers.values()) if (pid !== undefined) killGroup(pid, "SIGTERM");
		stopInbox();
		// A quit that came before the settlement (a signal, or a settlement that ran out of time):
		// the last assistant message still says how the child ended.
		if (autoExit && !persistent && !exitWritten && event?.reason === "quit") {
			const last = sessionLastAssistant(ctx);
			if (last?.stopReason === "error") {
				writeExit({ type: "error", errorMessage: last?.errorMessage || "the provider failed", stopReason: "error" });
			} else if (last && last.stopReason !== "aborted") {
				writeExit({ type: "done" });
			}
		}
		if (event?.reason === "quit") activity.finish("session_shutdown");
	});

	// The persistent inbox: claim the lowest entry, deliver it, one task at a time.
	let inboxTimer: ReturnType<typeof setInterval> | undefined;
	const inboxDir = sessionFile ? path.dirname(sessionFile) : "";
	const inboxPrefix = sessionFile ? `${path.basename(sessionFile)}.task-inbox.` : "";

	function startInbox(): void {
		if (!sessionFile || inboxTimer) return;
		// Claims left by an earlier process go back to the queue.
		for (const name of listInbox(".json.consuming")) {
			try {
				fs.renameSync(path.join(inboxDir, name), path.join(inboxDir, name.slice(0, -".consuming".length)));
			} catch {
				// Someone else took it.
			}
		}
		inboxTimer = setInterval(pollInbox, INBOX_POLL_MS);
		inboxTimer.unref?.();
	}

	function stopInbox(): void {
		if (inboxTimer) clearInterval(inboxTimer);
		inboxTimer = undefined;
	}

	function listInbox(suffix: string): string[] {
		try {
			return fs
				.readdirSync(inboxDir)
				.filter((n) => n.startsWith(inboxPrefix) && n.endsWith(suffix) && /^\d{12}$/.test(n.slice(inboxPrefix.length, inboxPrefix.length + 12)))
				.sort();
		} catch {
			return [];
		}
	}

	function finishStop(ctx: any): void {
		endChild(ctx, { type: "done" }, "session_shutdown");
	}

	function pollInbox(): void {
		const ctx = idleCtx;
		if (!ctx || shuttingDown) return;
		const busy = !ctx.isIdle() || (currentTask !== "" && !taskEnded);
		const names = listInbox(".json");
		if (names.length === 0) return;
		const name = names[0];
		const file = path.join(inboxDir, name);
		// Peek at the type: a stop may be taken while busy (it waits for the task's end).
		const claimed = `${file}.consuming`;
		let text: string | undefined;
		try {
			const peek = readSmall(file);
			if (busy && !(peek ?? "").includes('"stop"')) return;
			fs.renameSync(file, claimed);
			text = readSmall(claimed);
		} catch {
			return;
		}
		let entry: any;
		try {
			entry = JSON.parse(text ?? "");
		} catch {
			entry = undefined;
		}
		const valid =
			entry?.version === 1 &&
			(entry.type === "task" || entry.type === "stop") &&
			typeof entry.task === "string" &&
			(entry.type === "stop" || typeof entry.message === "string");
		if (!valid) {
			try {
				fs.renameSync(claimed, `${file}.invalid`);
			} catch {
				// Left claimed; the next start puts it back.
			}
			return;
		}
		try {
			fs.unlinkSync(claimed);
		} catch {
			// Already removed.
		}
		if (entry.type === "stop") {
			stopRequested = true;
			if (ctx.isIdle()) finishStop(ctx);
			return;
		}
		currentTask = entry.task;
		taskEnded = false;
		activity.record("input", (a) => a.setAgent(true));
		pi.sendUserMessage(entry.message);
	}
}
