/**
 * The files the Pi Herd face (seed 000's `subagent`) reads beside herd's runs, as both sides of
 * the extension read them: the parent's face and the child extension, which delivers the results
 * of an auto-exit managed parent's own workers (so herd-launch ships this module to every child).
 *
 * A worker file is `pi-herd/root/<label>.json` for the top-level session's workers and
 * `pi-herd/children/<run id>/<label>.json` for the workers a managed parent (that child run)
 * owns. It holds only the correlation herd has no word for: the label, the agent definition, the
 * assignment request ids and the runs, asks, steers and specialist tasks of each. Whether a
 * worker works, waits, asked or ended is never stored in it: that is read from herd every time.
 *
 * Reading only, every file bounded: the parent's face alone writes worker files.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { RUN_ID_PATTERN } from "../generated/protocol.ts";
import { runFile } from "../generated/run-files.ts";

/** Seed 000's label: the public live identity of a worker, and its herd run name. */
export const LABEL_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;

export const FORMAT_VERSION = 1;
/** The bound of a worker file or a run record read here. */
const READ_LIMIT = 256 * 1024;

/** A JSON object as far as these files are looked into. */
export type Doc = { readonly [key: string]: unknown };

export function isDoc(value: unknown): value is Doc {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The JSON object in `file`, or undefined when it is missing, larger than the bound or not one. */
export function readBounded(file: string): Doc | undefined {
	try {
		if (fs.statSync(file).size > READ_LIMIT) return undefined;
		const value: unknown = JSON.parse(fs.readFileSync(file, "utf8"));
		return isDoc(value) ? value : undefined;
	} catch {
		return undefined;
	}
}

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
	/**
	 * Why the last `close` could not prove that every run of the worker ended (each run and what
	 * herd answered), until a close succeeds; listed as seed 000's `cleanup_error`.
	 */
	cleanup_error?: string[] | null;
}

/** The directory of an owner's workers. */
export function ownerDir(artifacts: string, owner: string | null): string {
	return owner === null ? path.join(artifacts, "pi-herd", "root") : path.join(artifacts, "pi-herd", "children", owner);
}

export function workerPath(artifacts: string, owner: string | null, label: string): string {
	return path.join(ownerDir(artifacts, owner), `${label}.json`);
}

function strings(value: unknown): string[] | undefined {
	return Array.isArray(value) && value.every((v) => typeof v === "string") ? (value as string[]) : undefined;
}

/** Parses a worker file strictly; anything off is undefined (an unknown worker, never a guess). */
export function parseWorker(doc: Doc | undefined): WorkerFile | undefined {
	if (!doc || doc.format_version !== FORMAT_VERSION || typeof doc.label !== "string" || !LABEL_PATTERN.test(doc.label)) return undefined;
	if (!(doc.owner_run_id === null || (typeof doc.owner_run_id === "string" && RUN_ID_PATTERN.test(doc.owner_run_id)))) return undefined;
	if (typeof doc.owner_session_id !== "string" || !(doc.agent === null || typeof doc.agent === "string")) return undefined;
	if (typeof doc.reusable !== "boolean" || typeof doc.created_at_ms !== "number") return undefined;
	if (!(doc.closed_at_ms === null || typeof doc.closed_at_ms === "number") || !Array.isArray(doc.assignments)) return undefined;
	const cleanup = doc.cleanup_error === undefined || doc.cleanup_error === null ? null : strings(doc.cleanup_error);
	if (cleanup === undefined) return undefined;
	const assignments: Assignment[] = [];
	for (const a of doc.assignments) {
		if (!isDoc(a) || typeof a.request_id !== "string" || typeof a.started_at_ms !== "number") return undefined;
		const runs = strings(a.runs);
		const steers = strings(a.steers);
		if (!runs || !runs.every((r) => RUN_ID_PATTERN.test(r)) || !steers || !Array.isArray(a.asks)) return undefined;
		if (!(a.task_id === null || typeof a.task_id === "string")) return undefined;
		const asks: Ask[] = [];
		for (const k of a.asks) {
			if (!isDoc(k) || typeof k.ask_id !== "string" || !(k.reply_request_id === null || typeof k.reply_request_id === "string")) return undefined;
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
		cleanup_error: cleanup,
	};
}

/** The worker file of `label` of `owner`, if present and well-formed. */
export function readWorker(artifacts: string, owner: string | null, label: string): WorkerFile | undefined {
	return parseWorker(readBounded(workerPath(artifacts, owner, label)));
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
	const r = readBounded(runFile(artifacts, runId, "record"));
	if (!r || typeof r.run_id !== "string" || typeof r.name !== "string" || typeof r.session_file !== "string") return undefined;
	const pane = isDoc(r.pane) && typeof r.pane.pane_id === "string" ? r.pane : undefined;
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
