/**
 * An auto-exit child that launched children of its own stays open until each has delivered
 * (docs/lifecycle.md, "Children that launch children"): it finds them in the run records, waits
 * for each with `herd-watch wait --json` (which supervises it, settles it and delivers its result
 * exactly once), and hands every result, or why there is none, to the settlement as a turn.
 *
 * A managed parent that assigned its workers through the Pi Herd face (docs/pi-herd.md)
 * receives each of their results as its own owner receives its own: with the face's envelope and
 * completion details (`shared/piherd-result.ts`, the decoration the parent extension's delivery
 * uses too), whenever a worker file of this run claims the result's run.
 */
import * as fs from "node:fs";
import * as path from "node:path";

import { RUN_ID_PATTERN, type WatchWait } from "../generated/protocol.ts";
import { RUN_FILE_READ_LIMITS, RUNS_DIR, recordRunId, runFile } from "../generated/run-files.ts";
import { decode } from "../shared/decode.ts";
import { watchWait } from "../shared/formats.ts";
import { type WindowOf, decorate } from "../shared/piherd-result.ts";
import { type Running, runProcess } from "../shared/process.ts";
import { readRecord } from "../shared/runs.ts";
import type { ChildConfig } from "./config.ts";
import { readSmall } from "./files.ts";
import { herdProgram } from "./programs.ts";

/** What an own child's end gives the child: herd's message, or a Pi Herd worker's result. */
export interface OwnResult {
	readonly text: string;
	/** The details of a Pi Herd worker's result (`piHerd` and herd's own), for a custom message. */
	readonly details?: { readonly [key: string]: unknown };
}

/** The longest an auto-exit child is held open for one child of its own to deliver. */
export const HOLD_CHILD_MS = 2 * 60 * 60 * 1000;
/** The bound of what `herd-watch wait` prints: one result document. */
const RESULT_LIMIT = 2 * 1024 * 1024;
/** The end of its standard error kept. */
const STDERR_TAIL = 4000;

/** A run this child launched (its record's `parent_run_id` is this run). */
interface OwnChild {
	readonly dir: string;
	readonly id: string;
	readonly name: string;
}

/**
 * The artifacts directories a child's own children are recorded in: its own (the parent of its
 * activity snapshot's directory) and `$HERD_ARTIFACTS`, where herd-launch puts runs by default.
 */
function artifactsDirs(config: ChildConfig): string[] {
	const dirs = new Set<string>();
	if (config.activityFile) dirs.add(path.resolve(path.dirname(path.dirname(config.activityFile))));
	if (config.artifacts) dirs.add(path.resolve(config.artifacts));
	return [...dirs];
}

/**
 * The ids of the runs in `dir` that may be this child's: its list of children when its record
 * there keeps one (`extra.links_children`: herd-launch adds each child before claiming it), else
 * every record's. A list too large to read is searched past too.
 */
function candidateIds(dir: string, config: ChildConfig): Set<string> {
	if (readRecord(dir, config.runId)?.extra?.links_children === true) {
		const list = runFile(dir, config.runId, "children");
		if (!fs.existsSync(list)) return new Set();
		const text = readSmall(list, RUN_FILE_READ_LIMITS.children);
		if (text !== undefined) return new Set(text.split("\n"));
	}
	try {
		return new Set(fs.readdirSync(path.join(dir, RUNS_DIR)).map((name) => recordRunId(name) ?? ""));
	} catch {
		return new Set();
	}
}

/**
 * This child's own children that have not ended: a record naming this run as its parent, not a
 * definite launch failure, not a persistent specialist, and neither settled (`<id>.result.json`) nor superseded by a model
 * fallback (`<id>.superseded.json`, whose successor is another such record).
 *
 * Listed from the files, not asked of `herd-watch status`: it runs at the end of every turn of an
 * auto-exit child, and the settlement that follows at once decides from `waiting` whether the
 * child may exit, so a child launched in that turn must be found synchronously (a status would
 * be a process, awaited, after every turn).
 */
function outstandingChildren(config: ChildConfig): OwnChild[] {
	const found: OwnChild[] = [];
	for (const dir of artifactsDirs(config)) {
		for (const id of candidateIds(dir, config)) {
			if (!RUN_ID_PATTERN.test(id) || id === config.runId) continue;
			const record = readRecord(dir, id);
			if (!record || record.parent_run_id !== config.runId || record.status === "failed") continue;
			// A persistent specialist is long-lived by design and never holds the exit.
			if (record.persistent === true) continue;
			if (fs.existsSync(runFile(dir, id, "result"))) continue;
			if (fs.existsSync(runFile(dir, id, "superseded"))) continue;
			found.push({ dir, id, name: record.name });
		}
	}
	return found;
}

/** The waits for this child's own children, each started once. */
export class OwnChildren {
	/** `herd-watch wait` of each own child still outstanding, by `<dir>/<run id>`. */
	private readonly watchers = new Map<string, Running | undefined>();
	/** Own children already waited for, so each result is given once. */
	private readonly seen = new Set<string>();

	/**
	 * `deliver` receives each result (or why there is none), once per own child; `windowOf` knows
	 * the context window of a worker's model, for a Pi Herd result's context usage.
	 */
	constructor(
		private readonly config: ChildConfig,
		private readonly deliver: (result: OwnResult) => void,
		private readonly windowOf?: WindowOf,
	) {}

	/** How many own children are still being waited for. */
	get waiting(): number {
		return this.watchers.size;
	}

	/** Starts waiting for every own child not waited for yet. */
	watchOutstanding(): void {
		for (const own of outstandingChildren(this.config)) this.watch(own);
	}

	/**
	 * Stops the waits. A wait only watches: the children run on, and any later `herd-watch`
	 * delivers their results.
	 */
	stop(): void {
		for (const running of this.watchers.values()) running?.signal("SIGTERM");
	}

	private watch(own: OwnChild): void {
		const key = `${own.dir}/${own.id}`;
		if (this.seen.has(key)) return;
		this.seen.add(key);
		this.watchers.set(key, undefined);
		const program = herdProgram(this.config.binDir, "herd-watch");
		void runProcess(program, ["--artifacts", own.dir, "wait", "--run", own.id, "--json"], {
			budgetMs: HOLD_CHILD_MS,
			stdoutLimit: RESULT_LIMIT,
			stderrLimit: STDERR_TAIL,
			started: (running) => this.watchers.set(key, running),
		}).then((run) => {
			this.watchers.delete(key);
			const doc = decode(run.stdout, watchWait, "herd-watch wait --json", RESULT_LIMIT);
			if (doc.ok) {
				this.deliver(this.result(own, doc.value));
				return;
			}
			const reason = run.timedOut
				? `no result within ${HOLD_CHILD_MS / 60000} minutes`
				: run.error !== undefined
					? `no result (${run.error})`
					: `no result (herd-watch exited with ${run.code})`;
			this.deliver({
				text: `Subagent ${JSON.stringify(own.name)} (${own.id}) gave ${reason}; see \`herd-watch status --run ${own.id}\`.`,
			});
		});
	}

	/** herd's result `doc` of `own`, decorated when a Pi Herd worker file of this run claims it. */
	private result(own: OwnChild, doc: WatchWait): OwnResult {
		const worker = decorate(own.dir, doc, doc.message, doc.details, this.windowOf);
		if (!worker) return { text: doc.message };
		return { text: worker.message, details: { ...worker.details, runId: own.id, name: own.name, outcome: doc.outcome } };
	}
}
