/**
 * The Pi Herd face's worker records: which herd runs carry which labelled worker and which
 * assignment, and the public state the face projects from herd's own evidence (docs/pi-herd.md,
 * `list`).
 *
 * A worker is a small file of the face in the artifacts directory, beside herd's runs (its
 * format and its reading are `shared/piherd-records.ts`, which the child extension reads too);
 * this module writes it. Whether a worker works, waits, asked or ended is never stored there: it
 * is read from herd (`herd-watch status`, the run records, `herd-launch roles`) every time, so
 * supervision, delivery and cleanup stay herd's alone.
 */
import { randomUUID } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { RUN_ID_PATTERN, type WatchStatusStatusRuns } from "../../generated/protocol.ts";
import { decoded, literal, object, string } from "../../shared/decode.ts";
import { type Assignment, type RunFacts, type WorkerFile, ownerDir, parseWorker, readRun, workerPath } from "../../shared/piherd-records.ts";
import { readLimited } from "../../shared/runs.ts";

// The worker file and the run record as the face and the child extension both read them.
export { FORMAT_VERSION, ownerDir, parseWorker, readRun, readWorker, workerPath } from "../../shared/piherd-records.ts";
export type { Ask, Assignment, RunFacts, WorkerFile } from "../../shared/piherd-records.ts";

/** The bound of a worker file read here. */
const WORKER_LIMIT = 256 * 1024;

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
		const worker = parseWorker(readLimited(path.join(dir, name), WORKER_LIMIT));
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

/**
 * Every run of `rows` (herd's status of the directory) whose record names `parent` as its
 * launcher, by run id.
 */
export function childRuns(artifacts: string, rows: ReadonlyMap<string, StatusFacts>, parent: string): string[] {
	return [...rows.keys()].sort().filter((id) => readRun(artifacts, id)?.parent_run_id === parent);
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

/** herd's status of every run, by run id. */
export function statusFacts(doc: WatchStatusStatusRuns): Map<string, StatusFacts> {
	const rows = new Map<string, StatusFacts>();
	for (const r of doc.runs) {
		const { run_id, label, detail, since_ms, elapsed_ms, outcome, delivered } = r;
		rows.set(run_id, { run_id, label, detail, since_ms, elapsed_ms, outcome, delivered });
	}
	return rows;
}

/** Pi Herd's public states, plus `finished` (not listed, the label is free again). */
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

/** The first line of a Pi session file, as far as its id is read from it. */
interface SessionHeader {
	type: "session";
	id: string;
}

const sessionHeader = object<SessionHeader>({ type: literal("session"), id: string });
/** The most of a session file read for its header. */
const HEADER_LIMIT = 4096;

/** The Pi session id in the header of `file`, when Pi has written it. */
export function sessionId(file: string): string | null {
	try {
		const fd = fs.openSync(file, "r");
		try {
			const buffer = Buffer.alloc(HEADER_LIMIT);
			const n = fs.readSync(fd, buffer, 0, buffer.length, 0);
			const first = buffer.subarray(0, n).toString("utf8").split("\n")[0];
			return decoded(first, sessionHeader, "a session header", HEADER_LIMIT)?.id ?? null;
		} finally {
			fs.closeSync(fd);
		}
	} catch {
		return null;
	}
}

/**
 * Why `owner` (a managed parent's run id, or null for the top level) may not take the saved
 * session whose herd runs are `runs`, or undefined when it may. A session belongs to whoever
 * launched its runs (`parent_run_id`, null for the top level) and to the owner of any worker file
 * that names one of them (`workers`: every owner's), finished or not: another owner's session is
 * never taken over. A managed parent takes only a session of its own runs; the top level also a
 * saved session herd never ran.
 */
export function sessionRefusal(owner: string | null, runs: readonly RunFacts[], workers: readonly WorkerFile[]): string | undefined {
	const name = (o: string | null): string => (o === null ? "the top-level session" : `run ${o}`);
	if (runs.length === 0) return owner === null ? undefined : "no run of this session was launched by this managed parent";
	const ids = new Set(runs.map((r) => r.run_id));
	for (const run of runs) {
		if (run.parent_run_id !== owner) return `the session belongs to ${name(run.parent_run_id)}, which launched its run ${run.run_id}`;
	}
	for (const worker of workers) {
		if (worker.owner_run_id === owner) continue;
		if (worker.assignments.some((a) => a.runs.some((r) => ids.has(r)))) {
			return `the session belongs to worker ${JSON.stringify(worker.label)} of ${name(worker.owner_run_id)}`;
		}
	}
	return undefined;
}
