/**
 * A result of a Pi Herd worker, as Pi Herd delivers it (docs/pi-herd.md, Results): the
 * model-visible text begins with the compact envelope (exact `label`, `agent`, `request` and
 * `status`), then herd's own message (its host lines, its one `<subagent_report>` block, its
 * evidence), and the details carry the completion details under `piHerd`, once.
 *
 * Both deliveries decorate with it: the parent extension's (`parent/delivery.ts`, the results of
 * the session's own workers) and the child extension's (`child/own-children.ts`, the results of
 * an auto-exit managed parent's own workers), each with its own acknowledgement and exactly-once.
 * A run that no worker file claims (herd's own tools of docs/tools.md, `/subagent`) passes
 * unchanged, whichever face the session shows.
 */
import * as fs from "node:fs";
import { runFile } from "../generated/run-files.ts";
import { decoded, number, object, optional, string, variants } from "./decode.ts";
import { type Assignment, LABEL_PATTERN, type WorkerFile, readRun, readWorker } from "./piherd-records.ts";

/** The public status of a delivered result. */
export type ResultStatus = "completed" | "failed" | "cancelled" | "closed" | "blocked";

export function resultStatus(outcome: string, closed: boolean): ResultStatus {
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

/** The first line of the model-visible text. */
export function envelope(label: string, agent: string | null, request: string, status: ResultStatus): string {
	return `Pi Herd worker result · label: ${JSON.stringify(label)} · agent: ${agent === null ? "none" : JSON.stringify(agent)} · request: ${request} · status: ${status}`;
}

/** herd's markers of a shortened message (herd-core's escape::message). */
export function truncated(message: string): boolean {
	return message.includes("[... result abbreviated") || /Host note: \d[\d,]* evidence lines? omitted/.test(message);
}

/** The assignment of `worker` that a result of run `runId` (task `task`) belongs to. */
export function assignmentOf(worker: WorkerFile, runId: string, task: string | undefined): Assignment | undefined {
	const mine = worker.assignments.filter((a) => a.runs.includes(runId));
	const found = task === undefined ? mine[0] : (mine.find((a) => a.task_id === task) ?? mine.find((a) => a.task_id === null));
	if (found) return found;
	// A launch is acknowledged after its child started: an assignment still waiting for its run
	// id is the one a result of a run named like its worker belongs to.
	const last = worker.assignments.at(-1);
	return last && last.runs.length === 0 ? last : undefined;
}

/**
 * Pi Herd's context usage of a worker: the context its last response filled, in the window of
 * its model, as Pi reports a session's (`ContextUsage`). Each is null when it is not known.
 */
export type ContextUsage = { tokens: number | null; contextWindow: number | null; percent: number | null };

/** The context window of a model, when the caller's Pi knows the model. */
export type WindowOf = (provider: string, model: string) => number | undefined;

/** How much of a session file's end is read for its last usage: never the whole file. */
export const SESSION_TAIL_BYTES = 1024 * 1024;

/** The last `limit` bytes of `file` as its complete lines, or undefined when it cannot be read. */
function tailLines(file: string, limit: number): string[] | undefined {
	let fd: number | undefined;
	try {
		fd = fs.openSync(file, "r");
		const stat = fs.fstatSync(fd);
		if (!stat.isFile()) return undefined;
		const start = Math.max(0, stat.size - limit);
		const buffer = Buffer.alloc(stat.size - start);
		let got = 0;
		while (got < buffer.length) {
			const n = fs.readSync(fd, buffer, got, buffer.length - got, start + got);
			if (n === 0) break;
			got += n;
		}
		const lines = buffer.subarray(0, got).toString("utf8").split("\n");
		// The first line of a window that starts inside the file is the end of an earlier one.
		if (start > 0) lines.shift();
		return lines;
	} catch {
		return undefined;
	} finally {
		if (fd !== undefined) fs.closeSync(fd);
	}
}

/** A line of a Pi session file, as far as its last usage is read from it; other lines are skipped. */
type PiEntry = { type: "compaction" } | { type: "model_change"; provider: string; modelId: string } | { type: "message"; message: PiMessage };

interface PiMessage {
	role: string;
	provider?: string;
	model?: string;
	stopReason?: string;
	usage?: PiUsage;
}

/** Pi's usage of one response (`Usage`). */
interface PiUsage {
	totalTokens?: number;
	input?: number;
	output?: number;
	cacheRead?: number;
	cacheWrite?: number;
}

const count = optional(number);
const piEntry = variants<PiEntry, "type">("type", {
	compaction: {},
	model_change: { provider: string, modelId: string },
	message: {
		message: object<PiMessage>({
			role: string,
			provider: optional(string),
			model: optional(string),
			stopReason: optional(string),
			usage: optional(object<PiUsage>({ totalTokens: count, input: count, output: count, cacheRead: count, cacheWrite: count })),
		}),
	},
});

/** Pi's context tokens of one response's usage: its total, else the sum of its parts. */
function usageTokens(usage: PiUsage | undefined): number | undefined {
	if (!usage) return undefined;
	const total = usage.totalTokens;
	if (total !== undefined && total > 0) return total;
	const parts = [usage.input, usage.output, usage.cacheRead, usage.cacheWrite];
	if (parts.some((p) => p === undefined || p < 0)) return undefined;
	const sum = parts.reduce<number>((a, p) => a + (p ?? 0), 0);
	return sum > 0 ? sum : undefined;
}

/**
 * The context usage of the worker whose Pi session is `sessionFile`, read from the usage Pi
 * records on each assistant message, in the file's last `limit` bytes only. As Pi counts it: the
 * last response that has usage (not an aborted or failed one), unknown after a compaction that
 * no response followed. The window is the model's (of the last model change or response), from
 * `windowOf`. Null when the file names neither.
 */
export function contextUsage(sessionFile: string | null, windowOf: WindowOf | undefined, limit = SESSION_TAIL_BYTES): ContextUsage | null {
	if (sessionFile === null) return null;
	const lines = tailLines(sessionFile, limit);
	if (!lines) return null;
	let tokens: number | undefined;
	let model: { provider: string; id: string } | undefined;
	let compacted = false;
	for (let i = lines.length - 1; i >= 0 && (model === undefined || (tokens === undefined && !compacted)); i--) {
		// A torn line, a foreign one, or one of another type is skipped.
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
		if (model === undefined && message.provider !== undefined && message.model !== undefined) model = { provider: message.provider, id: message.model };
		if (tokens !== undefined || compacted || message.stopReason === "aborted" || message.stopReason === "error") continue;
		tokens = usageTokens(message.usage);
	}
	let window: number | undefined;
	if (model && windowOf) {
		try {
			const found = windowOf(model.provider, model.id);
			window = typeof found === "number" && Number.isFinite(found) && found > 0 ? found : undefined;
		} catch {
			window = undefined;
		}
	}
	if (tokens === undefined && window === undefined) return null;
	return {
		tokens: tokens ?? null,
		contextWindow: window ?? null,
		percent: tokens !== undefined && window !== undefined ? (tokens / window) * 100 : null,
	};
}

/** The part of a Pi session's model registry (`ctx.modelRegistry`) that knows a model's window. */
export interface ModelWindows {
	find(provider: string, model: string): { readonly contextWindow?: number } | undefined;
}

/** The window of a model as a Pi session's model registry knows it. */
export function registryWindow(registry: ModelWindows | undefined, provider: string, model: string): number | undefined {
	return registry?.find(provider, model)?.contextWindow;
}

/** Pi Herd's completion details of one delivered result (`piHerd`, docs/pi-herd.md). */
export type PiHerdDetails = {
	requestId: string;
	workerLabel: string;
	agentDefinition: string | null;
	status: ResultStatus;
	final: boolean;
	askId?: string;
	elapsedMs: number | null;
	contextUsage: ContextUsage | null;
	truncated: boolean;
	resultPath: string;
	fullOutputPath: string | null;
	workerError: string | null;
};

export interface Delivered<D> {
	message: string;
	details: D & { piHerd: PiHerdDetails };
	/**
	 * The result is no assignment's: the end of a reusable worker that its owner closed after
	 * each assignment had its final result. The close's answer says how the run ended, so the
	 * owner is not told again: the delivery settles it without a message.
	 */
	settledByClose?: boolean;
}

/**
 * Whether the result of run `runId` (no task: the run's own end) of the reusable worker
 * `worker` is the end its close made, after its last assignment's final result was delivered
 * (`runs/<run>.task-<task>.delivered`).
 */
function endOfClosedReusable(dir: string, worker: WorkerFile, runId: string, persistent: boolean, task: string | undefined): boolean {
	if (!persistent || task !== undefined || worker.closed_at_ms === null) return false;
	const last = worker.assignments.filter((a) => a.runs.includes(runId)).at(-1);
	if (!last || last.task_id === null) return false;
	return fs.existsSync(runFile(dir, `${runId}.task-${last.task_id}`, "delivered"));
}

/** What the decoration reads of a result (a `result` event of `follow --json`, `wait --json`'s document). */
export interface ResultEvent {
	readonly run_id: string;
	readonly outcome: string;
	/** What the follower acknowledges; a waited-for result is its run's own. */
	readonly key?: string;
	readonly task?: string | null | undefined;
}

/** What the decoration reads of a result's details (herd's, as `formats.ts` checks them). */
export interface ResultDetails {
	readonly elapsedMs?: number | null;
	readonly errorMessage?: string | null;
	readonly error?: string | null;
	readonly sessionFile?: string | null;
	readonly stdoutFile?: string | null;
}

/**
 * The result `event` of `dir`, with Pi Herd's envelope and details when a worker file claims
 * its run, else `undefined`. `details` are herd's, kept as they are beside `piHerd`.
 */
export function decorate<D extends ResultDetails>(dir: string, event: ResultEvent, message: string, details: D, windowOf?: WindowOf): Delivered<D> | undefined {
	const runId = event.run_id;
	const record = readRun(dir, runId);
	if (!record || !LABEL_PATTERN.test(record.name)) return undefined;
	const worker = readWorker(dir, record.parent_run_id, record.name);
	if (!worker) return undefined;
	const task = event.task ?? undefined;
	// Seed 000: "An accepted assignment has one correlated final result": the end a close made
	// is the close's, correlated to the last assignment and not a final result of it.
	const settledByClose = endOfClosedReusable(dir, worker, runId, record.persistent, task);
	const assignment = settledByClose ? worker.assignments.filter((a) => a.runs.includes(runId)).at(-1) : assignmentOf(worker, runId, task);
	if (!assignment) return undefined;
	const outcome = event.outcome;
	const status = settledByClose ? "closed" : resultStatus(outcome, worker.closed_at_ms !== null);
	const key = event.key ?? runId;
	const agent = worker.agent ?? record.agent;
	const error = details.errorMessage ?? details.error ?? null;
	const session = details.sessionFile ?? null;
	const full = session ?? details.stdoutFile ?? null;
	const piHerd: PiHerdDetails = {
		requestId: assignment.request_id,
		workerLabel: worker.label,
		agentDefinition: agent,
		status,
		final: status !== "blocked" && !settledByClose,
		elapsedMs: details.elapsedMs ?? null,
		contextUsage: contextUsage(session, windowOf),
		truncated: truncated(message),
		resultPath: runFile(dir, key, "result"),
		fullOutputPath: full,
		workerError: status === "failed" ? (error ?? outcome) : null,
	};
	if (status === "blocked") piHerd.askId = runId;
	const head = envelope(worker.label, agent, assignment.request_id, status);
	const note =
		status === "blocked"
			? `The worker asked its owner (ask_owner, ask ${runId}); answer with subagent({action: "reply", label: ${JSON.stringify(worker.label)}, message}).`
			: undefined;
	return {
		message: [head, ...(note ? [note] : []), message].join("\n"),
		details: { ...details, piHerd },
		...(settledByClose ? { settledByClose } : {}),
	};
}
