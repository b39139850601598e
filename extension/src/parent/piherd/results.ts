/**
 * A result of a Pi Herd worker, as seed 000 delivers it: the model-visible text begins with the
 * compact envelope (exact `label`, `agent`, `request` and `status`), then herd's own message
 * (its host lines, its one `<subagent_report>` block, its evidence), and the details carry the
 * completion details under `piHerd`, once.
 *
 * It decorates what herd's follower emitted, in the one delivery of `delivery.ts`: the same
 * acknowledgement, the same exactly-once. A run that no worker file claims (seed 003's tools,
 * `/subagent`) passes unchanged, whichever face the session shows.
 */
import * as path from "node:path";
import { type JsonObject, isObject } from "../bins.ts";
import { type Assignment, type WorkerFile, readRun, readWorker } from "./workers.ts";
import { LABEL_PATTERN } from "./validate.ts";

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

export interface Delivered {
	message: string;
	details: JsonObject;
}

/**
 * The result `event` of `dir` with seed 000's envelope and details when a worker file claims
 * its run, else `undefined`.
 */
export function decorate(dir: string, event: JsonObject, message: string, details: JsonObject): Delivered | undefined {
	const runId = event.run_id;
	if (typeof runId !== "string") return undefined;
	const record = readRun(dir, runId);
	if (!record || !LABEL_PATTERN.test(record.name)) return undefined;
	const worker = readWorker(dir, record.parent_run_id, record.name);
	if (!worker) return undefined;
	const task = typeof event.task === "string" ? event.task : undefined;
	const assignment = assignmentOf(worker, runId, task);
	if (!assignment) return undefined;
	const outcome = typeof event.outcome === "string" ? event.outcome : "failed";
	const status = resultStatus(outcome, worker.closed_at_ms !== null);
	const key = typeof event.key === "string" ? event.key : runId;
	const agent = worker.agent ?? record.agent;
	const error = typeof details.errorMessage === "string" ? details.errorMessage : typeof details.error === "string" ? details.error : null;
	const full = typeof details.sessionFile === "string" ? details.sessionFile : typeof details.stdoutFile === "string" ? details.stdoutFile : null;
	const piHerd: JsonObject = {
		requestId: assignment.request_id,
		workerLabel: worker.label,
		agentDefinition: agent,
		status,
		final: status !== "blocked",
		elapsedMs: typeof details.elapsedMs === "number" ? details.elapsedMs : null,
		// herd keeps no context usage of a child.
		contextUsage: null,
		truncated: truncated(message),
		resultPath: path.join(dir, "runs", `${key}.result.json`),
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
		details: { ...details, piHerd: isObject(piHerd) ? piHerd : {} },
	};
}
