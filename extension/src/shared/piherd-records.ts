/**
 * The files the Pi Herd face (docs/pi-herd.md, worker files) reads beside herd's runs, as both
 * sides of the extension read them: the parent's face and the child extension, which delivers the
 * results of an auto-exit managed parent's own workers (so herd-launch ships this module to every
 * child).
 *
 * A worker file is `pi-herd/root/<label>.json` for the top-level session's workers and
 * `pi-herd/children/<run id>/<label>.json` for the workers a managed parent (that child run)
 * owns. It holds only the correlation herd has no word for: the label, the agent definition, the
 * assignment request ids and the runs, asks, steers and specialist tasks of each. Whether a
 * worker works, waits, asked or ended is never stored in it: that is read from herd every time.
 *
 * Reading only, every file bounded: the parent's face alone writes worker files.
 */
import * as path from "node:path";
import { RUN_ID_PATTERN } from "../generated/protocol.ts";
import { array, boolean, decoded, integer, nullable, number, object, optional, string, where } from "./decode.ts";
import { readLimited, readRecord } from "./runs.ts";

/** Pi Herd's label: the public live identity of a worker, and its herd run name. */
export const LABEL_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;

export const FORMAT_VERSION = 1;
/** The bound of a worker file read here. */
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
	/**
	 * Why the last `close` could not prove that every run of the worker ended (each run and what
	 * herd answered), until a close succeeds; listed as `cleanup_error`.
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

const runId = where(string, (id) => RUN_ID_PATTERN.test(id), "a run id");

/** A worker file, strictly: anything off is no worker (an unknown worker, never a guess). */
const workerFile = object<WorkerFile>({
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
		object<Assignment>({
			request_id: string,
			runs: array(runId),
			task_id: nullable(string),
			started_at_ms: number,
			asks: array(object<Ask>({ ask_id: string, reply_request_id: nullable(string) })),
			steers: array(string),
		}),
	),
});

/** Reads a worker file's text; a file written before `cleanup_error` existed has none (null). */
export function parseWorker(text: string | undefined): WorkerFile | undefined {
	const worker = decoded(text, workerFile, "a worker file", READ_LIMIT);
	return worker && { ...worker, cleanup_error: worker.cleanup_error ?? null };
}

/** The worker file of `label` of `owner`, if present and well-formed. */
export function readWorker(artifacts: string, owner: string | null, label: string): WorkerFile | undefined {
	return parseWorker(readLimited(workerPath(artifacts, owner, label), READ_LIMIT));
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

/** herd's run record `runs/<id>.json`, as far as the face reads it, or undefined. */
export function readRun(artifacts: string, runId: string): RunFacts | undefined {
	const r = readRecord(artifacts, runId);
	if (!r) return undefined;
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
		updated_at_ms: r.updated_at_ms ?? 0,
	};
}
