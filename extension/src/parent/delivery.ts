/**
 * Results into the transcript, exactly once.
 *
 * One `herd-watch follow --json --ack` per artifacts directory emits each result, failure, help
 * request, task result and cancellation; the extension hands it to Pi as one `subagent_result`
 * custom message (herd's message verbatim) that starts or steers a turn, and acknowledges its key
 * on the follower's stdin once Pi has put the message in the transcript. Only then does herd mark
 * it delivered, so a result lost with Pi (a crash, a quit, a queued message Escape dropped) is
 * emitted again, and a result already in the transcript is acknowledged without a second send.
 */
import * as path from "node:path";
import type { RunRecord, WatchAck, WatchEvent } from "../generated/protocol.ts";
import { decode, decodeValue, literal, object, string, where } from "../shared/decode.ts";
import { statusWidget, watchEvent } from "../shared/formats.ts";
import { startProcess, stopProcess } from "../shared/process.ts";
import { readRecord } from "../shared/runs.ts";
import { run } from "./bins.ts";
import { type Pending, hub, pendingKey, withLive } from "./hub.ts";
import { consumesResults } from "./context.ts";
import { cancelRun, handOver, queue } from "./notices.ts";
import { decorate, registryWindow } from "../shared/piherd-result.ts";
import { redraw } from "./widget.ts";
import { notifier } from "./notifications.ts";

export const RESULT_TYPE = "subagent_result";
export const STATUS_TYPE = "subagent_status";

/** The longest line a follower may print; a longer one is dropped (herd bounds its messages). */
const LINE_LIMIT = 4 * 1024 * 1024;
/** The backoff of a follower that exited while runs of its directory were still undelivered. */
const RESTART_MS = [250, 1000, 5000];

/** Starts the follower of `dir` unless one runs, or this session leaves results to another consumer. */
export function ensureFollower(dir: string, binDir: string): void {
	if (!consumesResults()) return;
	const h = hub();
	h.dirs.add(dir);
	if (h.followers.has(dir)) return;
	let child;
	try {
		// A parent takes its own children's results, a child its own: never each other's.
		const owner = process.env.PI_SUBAGENT_ID ? ["--launched-by", process.env.PI_SUBAGENT_ID] : ["--top-level"];
		child = startProcess(path.join(binDir, "herd-watch"), ["--artifacts", dir, "follow", "--json", "--ack", ...owner], {
			cwd: dir,
			env: { ...process.env, HERD_BIN_DIR: binDir },
		});
	} catch {
		return;
	}
	const follower = { child, restarts: 0 };
	h.followers.set(dir, follower);
	child.stdin.on("error", () => {
		// The follower ended; its exit handler decides what comes next.
	});
	child.stderr.resume();
	child.stdout.setEncoding("utf8");
	let buffer = "";
	child.stdout.on("data", (chunk: string) => {
		buffer += chunk;
		let at = buffer.indexOf("\n");
		while (at >= 0) {
			const line = buffer.slice(0, at);
			buffer = buffer.slice(at + 1);
			onLine(dir, line);
			at = buffer.indexOf("\n");
		}
		if (buffer.length > LINE_LIMIT) buffer = "";
	});
	child.on("error", () => {
		// Reported through `close`.
	});
	child.on("close", () => {
		if (h.followers.get(dir) === follower) h.followers.delete(dir);
		redraw();
		if (!h.live) return;
		void undelivered(dir, binDir).then((waiting) => {
			if (!waiting) return;
			const delay = RESTART_MS[Math.min(follower.restarts, RESTART_MS.length - 1)];
			setTimeout(() => {
				const live = h.live;
				if (!live || h.followers.has(dir)) return;
				ensureFollower(dir, live.binDir);
				const next = h.followers.get(dir);
				if (next) next.restarts = follower.restarts + 1;
			}, delay).unref?.();
		});
	});
	redraw();
}

/** Whether this session's follower takes on the run `record` (who launched it). */
function ours(record: RunRecord | undefined): boolean {
	if (!record) return false;
	const launcher = record.parent_run_id;
	const me = process.env.PI_SUBAGENT_ID;
	return me ? launcher === me : launcher === undefined || launcher === null;
}

/**
 * Whether a run of `dir` that this session's follower takes on is not delivered yet (it may
 * still be running). herd says which runs are open (`herd-watch status --widget --json`: the
 * open-run set, without the attempts a fallback replaced); a run's record says who launched it.
 * This only decides whether a follower runs: delivering once is the follower's and its markers'.
 */
export async function undelivered(dir: string, binDir: string): Promise<boolean> {
	const ran = await run(path.join(binDir, "herd-watch"), ["--artifacts", dir, "status", "--widget", "--json"], {
		cwd: dir,
		env: { ...process.env, HERD_BIN_DIR: binDir },
		timeoutMs: STATUS_MS,
	});
	const doc = ran.code === 0 ? decode(ran.stdout, statusWidget, "herd-watch status --widget --json") : undefined;
	if (!doc?.ok) return false;
	return doc.value.runs.some((row) => !row.delivered && ours(readRecord(dir, row.run_id)));
}

/** The budget of that status. */
const STATUS_MS = 10_000;

/** Stops every follower: Pi quits. Undelivered results wait on disk for the next start. */
export function stopFollowers(): void {
	const h = hub();
	for (const { child } of h.followers.values()) stopProcess(child, 1000);
	h.followers.clear();
}

function onLine(dir: string, line: string): void {
	const read = decode(line, watchEvent, "a line of herd-watch follow --json", LINE_LIMIT);
	if (!read.ok) return;
	const event = read.value;
	switch (event.event) {
		case "result":
			onResult(dir, event);
			break;
		case "stalled":
		case "recovered":
			onStall(dir, event);
			break;
		case "notice":
			queue(hub().notices, { dir, runId: event.run_id, message: event.message });
			flushNotices();
			break;
		default:
			break;
	}
	// After the result was handed to Pi: a result delivered as a message is not told again.
	notifier().observe(dir, event);
	redraw();
}

function onResult(dir: string, event: Extract<WatchEvent, { event: "result" }>): void {
	const { run_id: runId, key, message, name, outcome, details } = event;
	const result: Pending = { dir, key, runId, name, outcome, message, details };
	// A Pi Herd worker's result begins with its envelope (shared/piherd-result.ts); the
	// window of its model's context is the one this session's Pi knows.
	const worker = decorate(dir, event, result.message, result.details, (provider, model) =>
		registryWindow(hub().live?.ctx.modelRegistry, provider, model),
	);
	const h = hub();
	if (worker?.settledByClose) {
		// The end of a reusable worker its owner closed: the close's answer told it.
		if (event.task === undefined) cancelRun(h.notices, dir, runId);
		acknowledge(dir, key);
		return;
	}
	if (worker) Object.assign(result, { message: worker.message, details: worker.details });
	const id = pendingKey(dir, result.key);
	if (!h.pending.has(id)) h.pending.set(id, result);
	// The run's own result (not a specialist's task result) is its verified end: what it still
	// had to say as a notice is moot.
	if (event.task === undefined) cancelRun(h.notices, dir, runId);
	flush();
}

/** What a `subagent_result` message's details say of the result it carries. */
interface Carried {
	key: string;
	artifacts: string;
}

const carried = object<Carried>({ key: string, artifacts: string });

/** Whether a transcript entry is the `subagent_result` message of the result `key` of `dir`. */
export function carries(entry: { type: string; customType?: string; details?: unknown }, dir: string, key: string): boolean {
	if (entry.type !== "custom_message" || entry.customType !== RESULT_TYPE) return false;
	const details = decodeValue(entry.details, carried, "the message's details");
	return details.ok && details.value.key === key && details.value.artifacts === dir;
}

/** Whether the live transcript already holds the result `key` of `dir`. */
function inTranscript(dir: string, key: string): boolean {
	let found = false;
	withLive(({ ctx }) => {
		found = ctx.sessionManager.getEntries().some((entry) => carries(entry, dir, key));
	});
	return found;
}

/** Tells the follower of `dir` that `key` is in a transcript. */
function acknowledge(dir: string, key: string): void {
	const h = hub();
	h.pending.delete(pendingKey(dir, key));
	h.sent.delete(pendingKey(dir, key));
	const follower = h.followers.get(dir);
	if (!follower || follower.child.stdin.destroyed) return;
	// Without a follower the marker waits: the next one emits the result again, and the
	// transcript check acknowledges it without a second message.
	const line: WatchAck = { ack: key };
	follower.child.stdin.write(`${JSON.stringify(line)}\n`);
}

/** Hands every pending result, and every waiting notice, to the live session once. */
export function flush(): void {
	const h = hub();
	if (!h.live) return;
	flushNotices();
	for (const [id, result] of h.pending) {
		if (h.sent.has(id)) continue;
		if (inTranscript(result.dir, result.key)) {
			acknowledge(result.dir, result.key);
			continue;
		}
		withLive(({ pi, ctx }) => {
			// A run being aborted never takes a steer it is handed now, and an aborted run leaves
			// it queued for whatever runs next: the result waits for the settlement instead
			// (`resendDropped`), so it is never both queued and sent again.
			if (ctx.signal?.aborted) return;
			pi.sendMessage(
				{
					customType: RESULT_TYPE,
					content: result.message,
					display: true,
					details: {
						...result.details,
						key: result.key,
						runId: result.runId,
						name: result.name,
						outcome: result.outcome,
						artifacts: result.dir,
					},
				},
				{ triggerTurn: true, deliverAs: "steer" },
			);
			h.sent.add(id);
			notifier().delivered(result.dir, result.runId);
		});
	}
}

/** A `message_end` of a result: it is in the transcript once Pi's own handler ran. */
export function onMessageEnd(message: unknown): void {
	const ended = decodeValue(message, endedResult, "the ended message");
	if (!ended.ok) return;
	const { key, artifacts } = ended.value.details;
	// Pi persists the message right after the extensions' handlers.
	setTimeout(() => acknowledge(artifacts, key), 0);
}

/**
 * The agent settled: a result handed over but never ended as a message was dropped (an aborted
 * turn, a cleared queue) and goes again.
 */
export function resendDropped(): void {
	const h = hub();
	let idle = false;
	withLive(({ ctx }) => {
		// A result sent since (it started a run of its own) is not dropped.
		idle = ctx.isIdle() && !ctx.hasPendingMessages();
	});
	if (!idle) return;
	h.sent.clear();
	flush();
}

/** A custom message Pi ended, as far as a result's acknowledgement reads it. */
interface EndedResult {
	role: "custom";
	customType: string;
	details: Carried;
}

const endedResult = object<EndedResult>({ role: literal("custom"), customType: where(string, (t) => t === RESULT_TYPE, RESULT_TYPE), details: carried });

/** Whether run `runId` of `dir` was launched interactive (its record says so). */
function interactive(dir: string, runId: string): boolean {
	return readRecord(dir, runId)?.interactive === true;
}

/** `stalled` and `recovered` steer the parent so it can react, only for runs nobody drives by hand. */
function onStall(dir: string, event: Extract<WatchEvent, { event: "stalled" | "recovered" }>): void {
	const { run_id: runId, message } = event;
	if (interactive(dir, runId)) return;
	withLive(({ pi }) => {
		pi.sendMessage(
			{ customType: STATUS_TYPE, content: message, display: true, details: { runId } },
			{ triggerTurn: true, deliverAs: "steer" },
		);
	});
}

/** Shows the waiting notices in the live session; a notice never starts a turn. */
function flushNotices(): void {
	const h = hub();
	handOver(h.notices, ({ runId, message }) => {
		const live = h.live;
		if (!live) throw new Error("no live session");
		live.pi.sendMessage({ customType: STATUS_TYPE, content: message, display: true, details: { runId } }, { triggerTurn: false });
	});
}

/** A new stop of run `runId` of `dir` (or of the runs named `name` there) drops its old notices. */
export function stopAsked(dir: string, target: { runId?: string | undefined; name?: string | undefined }): void {
	const h = hub();
	if (target.runId !== undefined) cancelRun(h.notices, dir, target.runId);
	if (target.name === undefined) return;
	for (const runId of new Set(h.notices.filter((n) => n.dir === dir).map((n) => n.runId))) {
		if (readRecord(dir, runId)?.name === target.name) cancelRun(h.notices, dir, runId);
	}
}
