/**
 * The five actions of the Pi Herd face's `subagent` (docs/pi-herd.md), each a few calls of herd's
 * own programs over the session's runs: `herd-launch spawn`/`resume`/`send` start and continue
 * work, `herd-watch status`/`steer`/`cancel`/`stop` observe and control it, `herd-launch roles`
 * lists the definitions. The worker files (workers.ts) only correlate labels and request ids with
 * herd's runs; results reach the owner through the one follower of `delivery.ts`.
 */
import { randomUUID } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import type { LaunchAck, RolesListingRoleRow } from "../../generated/protocol.ts";
import { runFile } from "../../generated/run-files.ts";
import { type Decoded, type Shape, decode } from "../../shared/decode.ts";
import { launchAck, launchSend, rolesListing, statusRuns, watchCancel, watchSteer, watchStop } from "../../shared/formats.ts";
import { type Ran, failureText, run } from "../bins.ts";
import { artifactsDir, binaryEnv, launchPlace, surface } from "../context.ts";
import { carries, ensureFollower } from "../delivery.ts";
import type { Call } from "../tools.ts";
import { type Attachment, resolveFiles, withFiles } from "./files.ts";
import { type Category, DIAGNOSTIC_RESERVE_MS, LABEL_PATTERN, type Request, UUID_PATTERN, refuse } from "./validate.ts";
import {
	type Assignment,
	type Evidence,
	FORMAT_VERSION,
	type Projected,
	type RunFacts,
	type StatusFacts,
	type WorkerFile,
	childRuns,
	claimWorker,
	current,
	listWorkers,
	owners,
	project,
	readRun,
	readWorker,
	sessionId,
	sessionRefusal,
	statusFacts,
	workerPath,
	writeWorker,
} from "./workers.ts";

/** One answer of the tool, built here (tool.ts prints it). */
type Answer = Record<string, unknown>;

const LAUNCH_MS = 10 * 60 * 1000;
const CONTROL_MS = 2 * 60 * 1000;
const NO_POLL = "The result arrives later as one subagent_result message that begins with the worker's envelope; do not poll.";

/** The owner this session is: a managed parent (its run id) or the top level (null). */
export function self(env: NodeJS.ProcessEnv = process.env): string | null {
	const id = env.PI_SUBAGENT_ID;
	return id ? id : null;
}

interface Context {
	call: Call;
	dir: string;
	owner: string | null;
}

function binary(c: Context, name: "herd-launch" | "herd-watch", args: string[], input?: string, timeoutMs = CONTROL_MS, extraEnv: NodeJS.ProcessEnv = {}): Promise<Ran> {
	return run(path.join(c.call.binDir, name), args, {
		cwd: c.call.ctx.cwd,
		env: { ...binaryEnv(c.call.pi, c.call.ctx, c.call.binDir), ...extraEnv },
		input,
		timeoutMs,
	});
}

/** A herd refusal as a public error: its exit code's category, herd's own message. */
function herdFailed(operation: string, ran: Ran): never {
	const category: Category = ran.code === 2 ? "invalid_request" : ran.code === 7 ? "agent_busy" : ran.code === 5 ? "target_not_found" : "internal_failure";
	refuse(category, operation, `herd refused ${operation}: ${failureText(ran)}`);
}

/** A binary's `--json` document as `shape`'s type, when it exited 0 (or with one of `codes`). */
function answered<T>(ran: Ran, shape: Shape<T>, what: string, codes: readonly number[] = [0]): Decoded<T> {
	if (ran.code === null || !codes.includes(ran.code)) return { ok: false, error: failureText(ran) };
	return decode(ran.stdout, shape, what);
}

/**
 * herd's status of every run of the directory (the attempts a fallback replaced aside): the face
 * learns which runs there are from herd, never by listing `runs/` itself.
 */
async function statusRows(c: Context): Promise<Map<string, StatusFacts>> {
	const doc = answered(await binary(c, "herd-watch", ["--artifacts", c.dir, "status", "--json"]), statusRuns, "herd-watch status --json");
	// An empty directory has no runs yet; anything else unreadable leaves every worker unknown.
	return doc.ok ? statusFacts(doc.value) : new Map();
}

export interface Roles {
	roles: RolesListingRoleRow[];
	specialists: Map<string, string>;
}

async function roles(c: Context): Promise<Roles> {
	const doc = answered(await binary(c, "herd-launch", ["--artifacts", c.dir, "roles", "--cwd", c.call.ctx.cwd, "--json"]), rolesListing, "herd-launch roles --json");
	if (!doc.ok) return { roles: [], specialists: new Map() };
	return { roles: doc.value.roles, specialists: new Map(doc.value.specialists.map((s) => [s.run_id, s.state])) };
}

function evidence(c: Context, worker: WorkerFile, rows: Map<string, StatusFacts>, specialists: Map<string, string>): Evidence {
	const { assignment, run: id } = current(worker);
	if (!id) return {};
	const task = assignment?.task_id;
	const row = rows.get(id);
	return {
		// A result already in this session's transcript is delivered, though its marker is not
		// written yet: an ask the parent just read is `blocked`, not `settling`.
		row: row && !row.delivered && delivered(c, id) ? { ...row, delivered: true } : row,
		record: readRun(c.dir, id),
		specialist: specialists.get(id),
		taskDelivered: task ? delivered(c, `${id}.task-${task}`) : undefined,
	};
}

/**
 * Whether the result `key` reached its owner: herd's delivered marker, or this session's
 * transcript holding it (the marker follows the acknowledgement a moment later).
 */
function delivered(c: Context, key: string): boolean {
	if (fs.existsSync(runFile(c.dir, key, "delivered"))) return true;
	try {
		return c.call.ctx.sessionManager.getEntries().some((entry) => carries(entry, c.dir, key));
	} catch {
		return false;
	}
}

async function projectOne(c: Context, worker: WorkerFile): Promise<{ projected: Projected; evidence: Evidence }> {
	const [rows, r] = await Promise.all([statusRows(c), roles(c)]);
	const ev = evidence(c, worker, rows, r.specialists);
	return { projected: project(worker, ev), evidence: ev };
}

function iso(ms: number | null | undefined): string | null {
	return typeof ms === "number" && ms > 0 ? new Date(ms).toISOString() : null;
}

/** A worker that is not `finished` holds its label. */
async function labelTaken(c: Context, label: string): Promise<boolean> {
	const worker = readWorker(c.dir, c.owner, label);
	if (!worker) return fs.existsSync(workerPath(c.dir, c.owner, label)) /* unreadable: not free */;
	return (await projectOne(c, worker)).projected.state !== "finished";
}

/** A label from a definition's name: lower case, the allowed characters, numbered when taken. */
async function freeLabel(c: Context, base: string): Promise<string> {
	let stem = base.toLowerCase().replace(/[^a-z0-9_-]+/g, "-").replace(/^[^a-z]+/, "");
	if (!stem) stem = "worker";
	stem = stem.slice(0, 32);
	for (let n = 1; n < 1000; n++) {
		const suffix = n === 1 ? "" : `-${n}`;
		const candidate = stem.slice(0, 32 - suffix.length) + suffix;
		if (LABEL_PATTERN.test(candidate) && !(await labelTaken(c, candidate))) return candidate;
	}
	refuse("agent_label_exists", "assign", `no free label from ${JSON.stringify(base)}`, "label");
}

function newWorker(c: Context, label: string, agent: string | null, reusable: boolean, requestId: string): WorkerFile {
	return {
		format_version: FORMAT_VERSION,
		label,
		owner_run_id: c.owner,
		owner_session_id: c.call.ctx.sessionManager.getSessionId(),
		agent,
		reusable,
		created_at_ms: Date.now(),
		closed_at_ms: null,
		assignments: [{ request_id: requestId, runs: [], task_id: null, started_at_ms: Date.now(), asks: [], steers: [] }],
	};
}

/** The acknowledgement of a launch, or the refusal. Exit 3 (uncertain) is still followed. */
function ack(operation: string, ran: Ran): LaunchAck {
	if (ran.code !== 0 && ran.code !== 3) herdFailed(operation, ran);
	const doc = decode(ran.stdout, launchAck, "herd-launch's acknowledgement");
	if (!doc.ok) refuse("internal_failure", operation, `herd printed no acknowledgement (${doc.error}): ${failureText(ran)}`);
	return doc.value;
}

/** What `assigned` reports of a launch: its acknowledgement's, or a live worker's record's. */
type Launched = Pick<LaunchAck, "run_id" | "session_file"> & { pane_id?: string | undefined; status: LaunchAck["status"] | "dispatched" };

function budgetEnv(timeoutMs: number | undefined): NodeJS.ProcessEnv {
	// herd-launch gives each startup operation its own budget; an explicit total caps each of
	// them, less the diagnostic reserve.
	return timeoutMs === undefined ? {} : { HERD_LAUNCH_BUDGET_MS: String(timeoutMs - DIAGNOSTIC_RESERVE_MS) };
}

function assigned(c: Context, worker: WorkerFile, doc: Launched, requestId: string): Answer {
	ensureFollower(c.dir, c.call.binDir);
	const session = doc.session_file || null;
	return {
		ok: true,
		action: "assign",
		label: worker.label,
		pane_id: doc.pane_id ?? null,
		session_id: session ? sessionId(session) : null,
		session_path: session,
		request_id: requestId,
		run_id: doc.run_id,
		launch: doc.status,
		note: NO_POLL,
	};
}

function attach(c: Context, files: readonly string[], typed: boolean): Attachment[] {
	return resolveFiles(files, c.call.ctx.cwd, typed);
}

async function assignFresh(c: Context, req: Extract<Request, { form: "fresh" }>): Promise<Answer> {
	const attachments = attach(c, req.files, false);
	const cwd = req.cwd === undefined ? c.call.ctx.cwd : path.resolve(c.call.ctx.cwd, req.cwd);
	try {
		if (!fs.statSync(cwd).isDirectory()) throw new Error("not a directory");
	} catch {
		refuse("invalid_request", "assign", `cwd ${cwd} is not a directory`, "cwd");
	}
	let fork: boolean | undefined;
	if (req.fork !== undefined) {
		// herd forks the controller's own conversation only; any other source is refused.
		const own = c.call.ctx.sessionManager.getSessionFile();
		const ownId = c.call.ctx.sessionManager.getSessionId();
		const named = UUID_PATTERN.test(req.fork) ? req.fork === ownId : own !== undefined && realpath(path.resolve(c.call.ctx.cwd, req.fork)) === realpath(own);
		if (!named) refuse("invalid_request", "assign", "herd forks only this session's own conversation: `fork` must name this session's path or UUID (use `session` to continue another)", "fork");
		fork = true;
	}
	if (req.label !== undefined && (await labelTaken(c, req.label))) {
		refuse("agent_label_exists", "assign", `a live worker is already labelled ${JSON.stringify(req.label)}`, "label");
	}
	const requestId = randomUUID();
	const { worker, previous } = await take(c, req.label, req.agent, (label) => newWorker(c, label, req.agent, req.reusable === true, requestId));
	const label = worker.label;
	const request: Answer = { name: label, agent: req.agent, task: withFiles(req.task, attachments), cwd };
	if (req.reusable === true) request.persistent = true;
	if (fork !== undefined) request.fork = fork;
	const ran = await binary(c, "herd-launch", [...launchPlace(c.call.ctx), "spawn", "--request", "-", "--surface", surface(c.call.pi), "--json"], JSON.stringify(request), LAUNCH_MS, budgetEnv(req.timeoutMs));
	let doc: LaunchAck;
	try {
		doc = ack("assign", ran);
	} catch (err) {
		// Nothing launched: the label is as it was.
		restore(c, label, previous);
		throw err;
	}
	const first = worker.assignments[0] as Assignment;
	first.runs.push(doc.run_id);
	if (doc.persistent_ids) first.task_id = doc.persistent_ids.task_id;
	writeWorker(c.dir, worker);
	return assigned(c, worker, doc, requestId);
}

/**
 * Takes a label for a new worker: `wanted` (refused when a live worker holds it), else a free
 * one made from `base`. A label without a file is claimed exclusively, so parallel assignments
 * never share one; a finished worker's file is replaced. Returns what it replaced.
 */
async function take(c: Context, wanted: string | undefined, base: string, make: (label: string) => WorkerFile): Promise<{ worker: WorkerFile; previous: WorkerFile | undefined }> {
	for (let attempt = 0; attempt < 8; attempt++) {
		const label = wanted ?? (await freeLabel(c, base));
		if (wanted !== undefined && (await labelTaken(c, wanted))) break;
		const worker = make(label);
		const previous = readWorker(c.dir, c.owner, label);
		if (previous) {
			writeWorker(c.dir, worker);
			return { worker, previous };
		}
		if (claimWorker(c.dir, worker)) return { worker, previous: undefined };
	}
	refuse("agent_label_exists", "assign", `a live worker is already labelled ${JSON.stringify(wanted ?? base)}`, "label");
}

function restore(c: Context, label: string, previous: WorkerFile | undefined): void {
	if (previous) writeWorker(c.dir, previous);
	else fs.rmSync(workerPath(c.dir, c.owner, label), { force: true });
}

function realpath(file: string): string | undefined {
	try {
		return fs.realpathSync(file);
	} catch {
		return undefined;
	}
}

/**
 * The session file `ref` names (a path, or a UUID herd's runs know), and the runs that had it:
 * the runs herd's status lists (`rows`), each read from its record.
 */
function findSession(c: Context, rows: ReadonlyMap<string, StatusFacts>, ref: string): { file: string; runs: RunFacts[] } {
	const runs: RunFacts[] = [];
	for (const id of [...rows.keys()].sort()) {
		const record = readRun(c.dir, id);
		if (record) runs.push(record);
	}
	let file: string | undefined;
	if (UUID_PATTERN.test(ref)) {
		const matches = new Set(runs.filter((r) => sessionId(r.session_file) === ref || path.basename(r.session_file).includes(ref)).map((r) => realpath(r.session_file) ?? r.session_file));
		if (matches.size > 1) refuse("target_ambiguous", "assign", `session ${ref} names more than one saved session`, "session");
		file = [...matches][0];
		if (!file) refuse("target_not_found", "assign", `no saved session of this session's runs has the id ${ref}; pass its exact path`, "session");
	} else {
		file = realpath(path.resolve(c.call.ctx.cwd, ref));
		if (!file || !fs.statSync(file).isFile()) refuse("target_not_found", "assign", `no saved session at ${ref}`, "session");
	}
	const at = file;
	return { file: at, runs: runs.filter((r) => (realpath(r.session_file) ?? r.session_file) === at) };
}

async function assignSession(c: Context, req: Extract<Request, { form: "session" }>): Promise<Answer> {
	const attachments = attach(c, req.files, false);
	const [rows, r] = await Promise.all([statusRows(c), roles(c)]);
	const { file, runs } = findSession(c, rows, req.session);
	// Another owner's session is never taken over, finished or not (docs/pi-herd.md).
	const refusal = sessionRefusal(c.owner, runs, owners(c.dir).flatMap((owner) => listWorkers(c.dir, owner)));
	if (refusal !== undefined) refuse("target_not_found", "assign", `could not prove the session is this session's to continue: ${refusal}`, "session");
	// A live worker of this owner that already represents the session is reused.
	const live = listWorkers(c.dir, c.owner).filter((w) => {
		const id = current(w).run;
		const record = id ? readRun(c.dir, id) : undefined;
		return record && (realpath(record.session_file) ?? record.session_file) === file && project(w, evidence(c, w, rows, r.specialists)).state !== "finished";
	});
	if (live.length > 1) refuse("target_ambiguous", "assign", "more than one live worker represents this session", "session");
	const saved = runs.at(-1);
	if (req.cwd !== undefined && saved && realpath(path.resolve(c.call.ctx.cwd, req.cwd)) !== realpath(saved.cwd)) {
		refuse("invalid_request", "assign", `cwd does not resolve to the saved session's cwd ${saved.cwd}`, "cwd");
	}
	const reused = live[0];
	if (reused) {
		if (req.label !== undefined && req.label !== reused.label) refuse("invalid_request", "assign", `the live worker of this session is labelled ${JSON.stringify(reused.label)}`, "label");
		if (req.reusable !== undefined && req.reusable !== reused.reusable) refuse("invalid_request", "assign", "an explicit `reusable` cannot change a live worker's lifetime", "reusable");
		return assignLive(c, { action: "assign", form: "live", label: reused.label, task: req.task, files: [] }, attachments);
	}
	if (req.reusable === true) refuse("invalid_request", "assign", "herd resumes a saved session for one assignment; `reusable` needs a fresh definition", "reusable");
	if (req.label !== undefined && (await labelTaken(c, req.label))) refuse("agent_label_exists", "assign", `a live worker is already labelled ${JSON.stringify(req.label)}`, "label");
	const wanted = req.label ?? (saved && LABEL_PATTERN.test(saved.name) && !(await labelTaken(c, saved.name)) ? saved.name : undefined);
	const requestId = randomUUID();
	const { worker, previous } = await take(c, wanted, saved?.agent ?? "resume", (label) => newWorker(c, label, saved?.agent ?? null, false, requestId));
	const label = worker.label;
	const args = [...launchPlace(c.call.ctx), "resume", "--session", file, "--message", withFiles(req.task, attachments), "--name", label, "--surface", surface(c.call.pi), "--json"];
	const ran = await binary(c, "herd-launch", args, undefined, LAUNCH_MS, budgetEnv(req.timeoutMs));
	let doc: LaunchAck;
	try {
		doc = ack("assign", ran);
	} catch (err) {
		restore(c, label, previous);
		throw err;
	}
	(worker.assignments[0] as Assignment).runs.push(doc.run_id);
	writeWorker(c.dir, worker);
	return assigned(c, worker, doc, requestId);
}

function owned(c: Context, label: string, operation: string): WorkerFile {
	const worker = readWorker(c.dir, c.owner, label);
	if (!worker || worker.closed_at_ms !== null) refuse("target_not_found", operation, `could not prove a worker labelled ${JSON.stringify(label)} directly owned by this session`, "label");
	return worker;
}

async function assignLive(c: Context, req: Extract<Request, { form: "live" }>, given?: Attachment[]): Promise<Answer> {
	const attachments = given ?? attach(c, req.files, false);
	const worker = owned(c, req.label, "assign");
	const { projected } = await projectOne(c, worker);
	if (projected.state !== "ready") {
		refuse(projected.state === "finished" ? "target_not_found" : "agent_busy", "assign", `worker ${JSON.stringify(req.label)} is ${projected.state}, not ready: only a reusable worker whose last result was delivered takes another assignment`, "label");
	}
	const runId = current(worker).run as string;
	const requestId = randomUUID();
	const assignment: Assignment = { request_id: requestId, runs: [runId], task_id: null, started_at_ms: Date.now(), asks: [], steers: [] };
	const before = structuredClone(worker);
	worker.assignments.push(assignment);
	writeWorker(c.dir, worker);
	const ran = await binary(c, "herd-launch", ["--artifacts", c.dir, "send", "--run", runId, "--message", withFiles(req.task, attachments), "--json"]);
	const doc = answered(ran, launchSend, "herd-launch send --json");
	if (!doc.ok) {
		writeWorker(c.dir, before);
		herdFailed("assign", ran);
	}
	assignment.task_id = doc.value.task_id;
	writeWorker(c.dir, worker);
	const record = readRun(c.dir, runId);
	return assigned(c, worker, { run_id: runId, session_file: record?.session_file ?? "", pane_id: record?.pane?.pane_id, status: "dispatched" }, requestId);
}

async function steer(c: Context, req: Extract<Request, { action: "steer" }>): Promise<Answer> {
	const attachments = attach(c, req.files, true);
	const worker = owned(c, req.label, "steer");
	const { projected, evidence: ev } = await projectOne(c, worker);
	const { assignment, run: runId } = current(worker);
	if (!assignment || !runId || projected.state !== "working" || !projected.steerable) {
		const why = projected.state === "working" ? "its surface takes no typed input (headless)" : `it is ${projected.state}`;
		refuse("invalid_request", "steer", `worker ${JSON.stringify(req.label)} is not steerable: ${why}`, "label");
	}
	const ran = await binary(c, "herd-watch", ["--artifacts", c.dir, "steer", "--run", runId, "--message", withFiles(req.message, attachments), "--json"]);
	const answer = answered(ran, watchSteer, "herd-watch steer --json");
	if (!answer.ok) herdFailed("steer", ran);
	const doc = answer.value;
	assignment.steers.push(doc.request_id);
	writeWorker(c.dir, worker);
	return {
		ok: true,
		action: "steer",
		request_id: doc.request_id,
		session_id: ev.record ? sessionId(ev.record.session_file) : null,
		assignment_request_id: assignment.request_id,
		delivery: doc.state,
	};
}

async function reply(c: Context, req: Extract<Request, { action: "reply" }>): Promise<Answer> {
	const attachments = attach(c, req.files, false);
	const worker = owned(c, req.label, "reply");
	const { projected, evidence: ev } = await projectOne(c, worker);
	const { assignment } = current(worker);
	const askId = projected.pendingAsk;
	if (!assignment || !askId || !ev.record) {
		refuse("invalid_request", "reply", `worker ${JSON.stringify(req.label)} has no outstanding ask_owner question (it is ${projected.state})`, "label");
	}
	const record = ev.record;
	const requestId = randomUUID();
	const before = structuredClone(worker);
	const ask = assignment.asks.find((a) => a.ask_id === askId);
	if (ask) ask.reply_request_id = requestId;
	else assignment.asks.push({ ask_id: askId, reply_request_id: requestId });
	writeWorker(c.dir, worker);
	const args = [
		...launchPlace(c.call.ctx),
		"resume",
		"--session",
		record.session_file,
		"--message",
		withFiles(req.message, attachments),
		"--name",
		worker.label,
		"--auto-exit",
		String(record.auto_exit),
		"--surface",
		surface(c.call.pi),
		"--json",
	];
	const ran = await binary(c, "herd-launch", args, undefined, LAUNCH_MS);
	let doc: LaunchAck;
	try {
		doc = ack("reply", ran);
	} catch (err) {
		writeWorker(c.dir, before);
		throw err;
	}
	assignment.runs.push(doc.run_id);
	writeWorker(c.dir, worker);
	ensureFollower(c.dir, c.call.binDir);
	const session = doc.session_file || record.session_file;
	return { ok: true, action: "reply", request_id: requestId, ask_id: askId, assignment_request_id: assignment.request_id, session_id: sessionId(session), run_id: doc.run_id, note: NO_POLL };
}

type Ended = {
	run_id: string;
	name: string;
	via: "cancel" | "stop" | "none";
	status: string;
};

const ENDED = new Set(["confirmed", "requested", "already-terminal", "stopped", "stop-pending"]);

async function endRun(c: Context, runId: string, rows: Map<string, StatusFacts>, out: Ended[]): Promise<void> {
	// Its own children first, each after theirs.
	for (const child of childRuns(c.dir, rows, runId)) await endRun(c, child, rows, out);
	const record = readRun(c.dir, runId);
	const row = rows.get(runId);
	if (!record) {
		out.push({ run_id: runId, name: "", via: "none", status: "unreadable record" });
		return;
	}
	if (row && row.outcome !== null && row.delivered) return;
	const via = record.persistent ? "stop" : "cancel";
	const ran = await binary(c, "herd-watch", ["--artifacts", c.dir, via, "--run", runId, "--json"]);
	// An exit that is no answer (uncertain, refused) still prints the document that says so.
	const doc = via === "stop" ? decode(ran.stdout, watchStop, "herd-watch stop --json") : decode(ran.stdout, watchCancel, "herd-watch cancel --json");
	out.push({ run_id: runId, name: record.name, via, status: doc.ok ? doc.value.status : failureText(ran) });
	// The workers that run owned as a managed parent are closed with it.
	for (const w of listWorkers(c.dir, runId)) {
		if (w.closed_at_ms === null) writeWorker(c.dir, { ...w, closed_at_ms: Date.now() });
	}
}

async function close(c: Context, req: Extract<Request, { action: "close" }>): Promise<Answer> {
	const worker = owned(c, req.label, "close");
	const rows = await statusRows(c);
	const ended: Ended[] = [];
	// Closing first, so the cancelled result that follows is delivered as `closed`; a close
	// that cannot prove every run ended leaves the worker as it was.
	writeWorker(c.dir, { ...worker, closed_at_ms: Date.now(), cleanup_error: null });
	const { assignment, run: runId } = current(worker);
	for (const id of assignment?.runs ?? []) {
		if (id !== runId) for (const child of childRuns(c.dir, rows, id)) await endRun(c, child, rows, ended);
	}
	if (runId) await endRun(c, runId, rows, ended);
	const failed = ended.filter((e) => !ENDED.has(e.status));
	if (failed.length > 0) {
		// Left open as it was, with the evidence its list record shows until a close succeeds.
		const cleanupError = failed.map((e) => `${e.name || e.run_id}: ${e.via} ${e.status}`);
		writeWorker(c.dir, { ...worker, cleanup_error: cleanupError });
		return {
			ok: false,
			error: {
				category: "internal_failure",
				operation: "close",
				message: `could not prove that every run of ${JSON.stringify(req.label)} ended; it stays open`,
				cleanup_error: cleanupError,
			},
			ended,
		};
	}
	return { ok: true, action: "close", label: worker.label, ended };
}

/** The definitions of `herd-launch roles` as Pi Herd's leaf metadata (`agent_definitions`). */
export function definitions(r: Roles, managed: boolean): Answer[] {
	return r.roles
		.filter((role) => role.error == null)
		.map((role) => {
			const d: Record<string, unknown> = { name: role.name, extensionSource: role.scope };
			if (typeof role.description === "string") d.description = role.description;
			if (typeof role.model === "string") d.model = role.model;
			if (typeof role.thinking === "string") d.thinking = role.thinking;
			if (role.tools) d.tools = role.tools;
			if (role.deny_tools && role.deny_tools.length > 0) d.excludeTools = role.deny_tools;
			if (role.skills) d.skills = role.skills;
			if (!managed && role.spawning === false) d.subagents = [];
			return d;
		});
}

async function list(c: Context): Promise<Answer> {
	const [rows, r] = await Promise.all([statusRows(c), roles(c)]);
	const visible = c.owner === null ? owners(c.dir) : [c.owner];
	const now = Date.now();
	const workers: Answer[] = [];
	for (const owner of visible) {
		const parent = owner === null ? undefined : readRun(c.dir, owner);
		const parentRow = owner === null ? undefined : rows.get(owner);
		// A child owner whose run is unreadable or has ended leaves its workers without ancestry.
		const broken = owner !== null && (!parent || (parentRow !== undefined && parentRow.outcome !== null && owner !== c.owner));
		for (const worker of listWorkers(c.dir, owner)) {
			const ev = evidence(c, worker, rows, r.specialists);
			const p = project(worker, ev);
			if (p.state === "finished") continue;
			const { assignment } = current(worker);
			const record = ev.record;
			const stale = ev.row?.label === "stalled";
			const entry: Answer = {
				label: worker.label,
				state: p.state,
				steerable: p.steerable && !broken && owner === c.owner,
				workspace_id: record?.pane?.workspace_id ?? null,
				pane_id: record?.pane?.pane_id ?? null,
				tab_id: record?.pane?.tab_id ?? null,
				cwd: record?.cwd ?? null,
				pi_session_id: record ? sessionId(record.session_file) : null,
				pi_session_path: record?.session_file ?? null,
				owner_session_id: worker.owner_session_id,
				agent_definition: worker.agent ?? record?.agent ?? null,
				model: record?.model ?? null,
				thinking: record?.thinking ?? null,
				active_request_id: p.state === "ready" ? null : (assignment?.request_id ?? null),
				last_activity_at: iso(ev.row?.since_ms),
				run_id: record?.run_id ?? null,
				surface: record?.surface ?? null,
				herd_label: ev.row?.label ?? null,
				direct: owner === c.owner,
			};
			if (p.pendingAsk) entry.pending_ask_id = p.pendingAsk;
			if (worker.cleanup_error && worker.cleanup_error.length > 0) entry.cleanup_error = worker.cleanup_error;
			if (stale) {
				entry.stale = true;
				entry.inactive_ms = ev.row?.since_ms ? now - ev.row.since_ms : null;
			}
			if (parent) entry.parent_label = parent.name;
			if (broken || (owner !== c.owner && c.owner !== null)) {
				entry.recovery_only = true;
				if (broken) entry.orphan = true;
			}
			if (p.state === "unknown" && c.owner === null) entry.diagnostic = "herd's status of the worker's run could not be read";
			workers.push(entry);
		}
	}
	return { ok: true, workers, agent_definitions: definitions(r, c.owner !== null) };
}

/** Runs one validated request. */
export async function perform(call: Call, req: Request): Promise<Answer> {
	const c: Context = { call, dir: artifactsDir(call.ctx), owner: self() };
	switch (req.action) {
		case "list":
			return list(c);
		case "assign":
			if (req.form === "fresh") return assignFresh(c, req);
			if (req.form === "session") return assignSession(c, req);
			return assignLive(c, req);
		case "steer":
			return steer(c, req);
		case "reply":
			return reply(c, req);
		case "close":
			return close(c, req);
	}
}
