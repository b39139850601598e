/**
 * The Pi Herd face's worker records: which herd runs carry which labelled worker and which
 * assignment, and the public state seed 000 projects from herd's own evidence.
 *
 * A worker is a small file of the face in the artifacts directory, beside herd's runs:
 * `pi-herd/root/<label>.json` for the top-level session's workers, `pi-herd/children/<run
 * id>/<label>.json` for the workers a managed parent (that child run) owns. It holds only the
 * correlation herd has no word for: the label, the agent definition, the assignment request ids
 * and the runs, asks, steers and specialist tasks of each. Whether a worker works, waits, asked
 * or ended is never stored here: it is read from herd (`herd-watch status`, the run records,
 * `herd-launch roles`) every time, so supervision, delivery and cleanup stay herd's alone.
 */
import { randomUUID } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { RUN_ID_PATTERN } from "../../generated/protocol.ts";
import { type JsonObject, isObject, parseObject } from "../bins.ts";
import { LABEL_PATTERN } from "./validate.ts";

export const FORMAT_VERSION = 1;
/** The bound of a worker file or a run record read here. */
const READ_LIMIT = 256 * 1024;

export interface Ask {
	/** The herd run whose help request is the question. */
	ask_id: string;
	/** The reply's request id, once answered. */
	reply_request_id: string | null;
}

export interface Assignment {
	request_id: string;
	/** herd's runs of this assignment, oldest first: a reply resumes the session in a new run. */
	runs: string[];
	/** A persistent specialist's task of this assignment. */
	task_id: string | null;
	started_at_ms: number;
	asks: Ask[];
	steers: string[];
}

export interface WorkerFile {
	format_version: number;
	label: string;
	/** The run that owns the worker (a managed parent), or null for the top-level session. */
	owner_run_id: string | null;
	owner_session_id: string;
	agent: string | null;
	reusable: boolean;
	created_at_ms: number;
	closed_at_ms: number | null;
	assignments: Assignment[];
}

/** The directory of an owner's workers. */
export function ownerDir(artifacts: string, owner: string | null): string {
	return owner === null ? path.join(artifacts, "pi-herd", "root") : path.join(artifacts, "pi-herd", "children", owner);
}

export function workerPath(artifacts: string, owner: string | null, label: string): string {
	return path.join(ownerDir(artifacts, owner), `${label}.json`);
}

function readBounded(file: string): JsonObject | undefined {
	try {
		if (fs.statSync(file).size > READ_LIMIT) return undefined;
		return parseObject(fs.readFileSync(file, "utf8"));
	} catch {
		return undefined;
	}
}

function strings(value: unknown): string[] | undefined {
	return Array.isArray(value) && value.every((v) => typeof v === "string") ? (value as string[]) : undefined;
}

/** Parses a worker file strictly; anything off is undefined (an unknown worker, never a guess). */
export function parseWorker(doc: JsonObject | undefined): WorkerFile | undefined {
	if (!doc || doc.format_version !== FORMAT_VERSION || typeof doc.label !== "string" || !LABEL_PATTERN.test(doc.label)) return undefined;
	if (!(doc.owner_run_id === null || (typeof doc.owner_run_id === "string" && RUN_ID_PATTERN.test(doc.owner_run_id)))) return undefined;
	if (typeof doc.owner_session_id !== "string" || !(doc.agent === null || typeof doc.agent === "string")) return undefined;
	if (typeof doc.reusable !== "boolean" || typeof doc.created_at_ms !== "number") return undefined;
	if (!(doc.closed_at_ms === null || typeof doc.closed_at_ms === "number") || !Array.isArray(doc.assignments)) return undefined;
	const assignments: Assignment[] = [];
	for (const a of doc.assignments) {
		if (!isObject(a) || typeof a.request_id !== "string" || typeof a.started_at_ms !== "number") return undefined;
		const runs = strings(a.runs);
		const steers = strings(a.steers);
		if (!runs || !runs.every((r) => RUN_ID_PATTERN.test(r)) || !steers || !Array.isArray(a.asks)) return undefined;
		if (!(a.task_id === null || typeof a.task_id === "string")) return undefined;
		const asks: Ask[] = [];
		for (const k of a.asks) {
			if (!isObject(k) || typeof k.ask_id !== "string" || !(k.reply_request_id === null || typeof k.reply_request_id === "string")) return undefined;
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
	};
}

/** The worker file of `label` of `owner`, if present and well-formed. */
export function readWorker(artifacts: string, owner: string | null, label: string): WorkerFile | undefined {
	return parseWorker(readBounded(workerPath(artifacts, owner, label)));
}

/** Every well-formed worker file of `owner`. */
export function listWorkers(artifacts: string, owner: string | null): WorkerFile[] {
	const dir = ownerDir(artifacts, owner);
	let names: string[];
	try {
		names = fs.readdirSync(dir);
	} catch {
		return [];
	}
	const out: WorkerFile[] = [];
	for (const name of names.sort()) {
		if (!name.endsWith(".json")) continue;
		const worker = parseWorker(readBounded(path.join(dir, name)));
		if (worker && `${worker.label}.json` === name) out.push(worker);
	}
	return out;
}

/** The owners that have workers in `artifacts`: null (the top level) and child run ids. */
export function owners(artifacts: string): (string | null)[] {
	const found: (string | null)[] = [];
	if (fs.existsSync(ownerDir(artifacts, null))) found.push(null);
	try {
		for (const name of fs.readdirSync(path.join(artifacts, "pi-herd", "children")).sort()) {
			if (RUN_ID_PATTERN.test(name)) found.push(name);
		}
	} catch {
		// No managed parent has workers here.
	}
	return found;
}

/** Writes `worker` atomically (temp file, rename), private to the user. */
export function writeWorker(artifacts: string, worker: WorkerFile): void {
	const dir = ownerDir(artifacts, worker.owner_run_id);
	fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
	const file = workerPath(artifacts, worker.owner_run_id, worker.label);
	const temp = path.join(dir, `.${worker.label}.${process.pid}.${randomUUID()}.tmp`);
	fs.writeFileSync(temp, `${JSON.stringify(worker)}\n`, { mode: 0o600, flag: "wx" });
	fs.renameSync(temp, file);
}

/**
 * Writes `worker` only if its label has no file yet (a hard link of the temporary file, which
 * fails when the name exists): two assignments racing for one label cannot both have it.
 */
export function claimWorker(artifacts: string, worker: WorkerFile): boolean {
	const dir = ownerDir(artifacts, worker.owner_run_id);
	fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
	const temp = path.join(dir, `.${worker.label}.${process.pid}.${randomUUID()}.tmp`);
	fs.writeFileSync(temp, `${JSON.stringify(worker)}\n`, { mode: 0o600, flag: "wx" });
	try {
		fs.linkSync(temp, workerPath(artifacts, worker.owner_run_id, worker.label));
		return true;
	} catch (err) {
		if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
		throw err;
	} finally {
		fs.rmSync(temp, { force: true });
	}
}

/** A run record of herd, as far as the face reads it. */
export interface RunFacts {
	run_id: string;
	name: string;
	agent: string | null;
	parent_run_id: string | null;
	persistent: boolean;
	surface: string;
	session_file: string;
	cwd: string;
	model: string | null;
	thinking: string | null;
	auto_exit: boolean;
	pane: { pane_id: string; workspace_id: string | null; tab_id: string | null } | null;
	updated_at_ms: number;
}

/** herd's run record `runs/<id>.json`, or undefined. */
export function readRun(artifacts: string, runId: string): RunFacts | undefined {
	if (!RUN_ID_PATTERN.test(runId)) return undefined;
	const r = readBounded(path.join(artifacts, "runs", `${runId}.json`));
	if (!r || typeof r.run_id !== "string" || typeof r.name !== "string" || typeof r.session_file !== "string") return undefined;
	const pane = isObject(r.pane) && typeof r.pane.pane_id === "string" ? r.pane : undefined;
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
		pane: pane
			? {
					pane_id: pane.pane_id as string,
					workspace_id: typeof pane.workspace_id === "string" ? pane.workspace_id : null,
					tab_id: typeof pane.tab_id === "string" ? pane.tab_id : null,
				}
			: null,
		updated_at_ms: typeof r.updated_at_ms === "number" ? r.updated_at_ms : 0,
	};
}

/** Every run id of `artifacts` whose record names `parent` as its launcher. */
export function childRuns(artifacts: string, parent: string): string[] {
	let names: string[];
	try {
		names = fs.readdirSync(path.join(artifacts, "runs"));
	} catch {
		return [];
	}
	const out: string[] = [];
	for (const name of names.sort()) {
		const id = name.endsWith(".json") ? name.slice(0, -".json".length) : "";
		if (!RUN_ID_PATTERN.test(id)) continue;
		if (readRun(artifacts, id)?.parent_run_id === parent) out.push(id);
	}
	return out;
}

/** One `herd-watch status --json` row, as far as the face reads it. */
export interface StatusFacts {
	run_id: string;
	label: string;
	detail: string | null;
	since_ms: number | null;
	elapsed_ms: number;
	outcome: string | null;
	delivered: boolean;
}

export function parseStatus(doc: JsonObject | undefined): Map<string, StatusFacts> {
	const rows = new Map<string, StatusFacts>();
	for (const r of Array.isArray(doc?.runs) ? doc.runs : []) {
		if (!isObject(r) || typeof r.run_id !== "string" || typeof r.label !== "string") continue;
		rows.set(r.run_id, {
			run_id: r.run_id,
			label: r.label,
			detail: typeof r.detail === "string" ? r.detail : null,
			since_ms: typeof r.since_ms === "number" ? r.since_ms : null,
			elapsed_ms: typeof r.elapsed_ms === "number" ? r.elapsed_ms : 0,
			outcome: typeof r.outcome === "string" ? r.outcome : null,
			delivered: r.delivered === true,
		});
	}
	return rows;
}

/** Seed 000's public states, plus `finished` (not listed, the label is free again). */
export type State = "working" | "blocked" | "settling" | "unknown" | "ready" | "finished";

/** What herd says of a worker's current run. */
export interface Evidence {
	row?: StatusFacts | undefined;
	record?: RunFacts | undefined;
	/** `herd-launch roles`' state of the run when it is a live persistent specialist. */
	specialist?: string | undefined;
	/** Whether the current specialist task's result is delivered. */
	taskDelivered?: boolean | undefined;
}

export interface Projected {
	state: State;
	steerable: boolean;
	/** The outstanding ask of the current assignment. */
	pendingAsk?: string | undefined;
}

const WORKING = new Set(["active", "running", "waiting", "interrupted", "stalled"]);
const SETTLING = new Set(["starting", "finalizing", "cancelling…", "cancel unconfirmed"]);
const TERMINAL = new Set(["completed", "failed", "cancelled", "stopped"]);

/** The current assignment and run of `worker`. */
export function current(worker: WorkerFile): { assignment?: Assignment | undefined; run?: string | undefined } {
	const assignment = worker.assignments.at(-1);
	return { assignment, run: assignment?.runs.at(-1) };
}

/**
 * The public state of `worker` from herd's evidence of its current run. Fail-closed: evidence
 * that cannot be read is `unknown`, which allows nothing; idleness alone is never `ready`.
 */
export function project(worker: WorkerFile, evidence: Evidence): Projected {
	const none: Projected = { state: "unknown", steerable: false };
	if (worker.closed_at_ms !== null) return { state: "finished", steerable: false };
	const { assignment, run } = current(worker);
	if (!assignment || !run) return { state: "settling", steerable: false };
	const { row, record } = evidence;
	if (!row || !record || record.run_id !== run) return none;
	if (row.outcome === "help") {
		const ask = assignment.asks.find((a) => a.ask_id === run);
		if (!ask || ask.reply_request_id === null) return { state: row.delivered ? "blocked" : "settling", steerable: false, pendingAsk: run };
		// Answered: the reply's run is the current one; until it is recorded, settling.
		return { state: "settling", steerable: false };
	}
	if (record.persistent && evidence.specialist !== undefined) {
		if (evidence.specialist === "idle") return { state: evidence.taskDelivered === false ? "settling" : "ready", steerable: false };
		if (evidence.specialist.startsWith("working")) return { state: "working", steerable: record.surface !== "process" };
		return { state: "settling", steerable: false };
	}
	if (WORKING.has(row.label)) return { state: "working", steerable: record.surface !== "process" };
	if (row.label === "blocked") return { state: "blocked", steerable: false };
	if (SETTLING.has(row.label)) return { state: "settling", steerable: false };
	if (TERMINAL.has(row.label)) return { state: row.delivered ? "finished" : "settling", steerable: false };
	return none;
}

/** The Pi session id in the header of `file`, when Pi has written it. */
export function sessionId(file: string): string | null {
	try {
		const fd = fs.openSync(file, "r");
		try {
			const buffer = Buffer.alloc(4096);
			const n = fs.readSync(fd, buffer, 0, buffer.length, 0);
			const first = buffer.subarray(0, n).toString("utf8").split("\n")[0] ?? "";
			const header = parseObject(first);
			return header?.type === "session" && typeof header.id === "string" ? header.id : null;
		} finally {
			fs.closeSync(fd);
		}
	} catch {
		return null;
	}
}
