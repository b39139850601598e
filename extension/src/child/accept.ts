/**
 * The child side of an accept check (`PI_SUBAGENT_ACCEPT_FILE`): after a turn the check runs once
 * through `herd-accept check --json`, the one implementation of running it in the project (its
 * own process group, no `PI_SUBAGENT_*` variable, the timeout, the last 4,000 characters of
 * output). This module only reads the spec's limits and herd-accept's answer.
 */
import type { AcceptSpec, CheckRun, CheckRunCheckOutcome } from "../generated/protocol.ts";
import { ARTIFACT_FILE_READ_LIMITS, ARTIFACT_FILE_VERSIONS } from "../generated/run-files.ts";
import { boolean, decode, decoded, integer, member, nullable, object, optional, string, where } from "../shared/decode.ts";
import { type Running, runProcess } from "../shared/process.ts";
import { readSmall } from "./files.ts";
import { herdProgram } from "./programs.ts";

/** How much of a failed check's output goes back to the child (what herd-accept reports). */
export const CHECK_FEEDBACK_CHARS = 4000;
/** What herd-accept allows the check after its timeout: SIGTERM, then SIGKILL 5 s later. */
export const CHECK_KILL_GRACE_MS = 5000;
/** What the child allows herd-accept beyond that before it stops it. */
const CHECK_SLACK_MS = 30_000;
/** The bound of herd-accept's answer: one small JSON document. */
const ANSWER_LIMIT = 256 * 1024;
/** The end of herd-accept's standard error kept, for why it gave no answer. */
const STDERR_TAIL = 4000;

/** What the child reads of an accept spec (docs/schemas/accept-spec.schema.json). */
const acceptSpec = object<AcceptSpec>({
	version: where(integer, (v) => v === ARTIFACT_FILE_VERSIONS.acceptSpec, `version ${ARTIFACT_FILE_VERSIONS.acceptSpec}`),
	run: string,
	maxRetries: optional(nullable(integer)),
	timeoutSec: optional(nullable(integer)),
});

/** What the child reads of `herd-accept check --json` (docs/schemas/accept-check.schema.json). */
const checkRun = object<CheckRun>({
	passed: boolean,
	outcome: member<CheckRunCheckOutcome>(),
	exit_code: nullable(integer),
	timed_out: boolean,
	output: string,
	timeout_sec: integer,
	signal: nullable(integer),
	error: nullable(string),
});

/** The limits of the spec the child needs itself: how often to retry, how long a check takes. */
export interface AcceptLimits {
	/** Extra turns after a failed check (0–5, default 1). */
	readonly maxRetries: number;
	/** The timeout of one check in seconds (1–3600, default 600). */
	readonly timeoutSec: number;
}

/** The limits of the spec at `file`, or undefined when there is no usable spec. */
export function readAcceptLimits(file: string): AcceptLimits | undefined {
	if (!file) return undefined;
	const spec = decoded(readSmall(file, ARTIFACT_FILE_READ_LIMITS.acceptSpec), acceptSpec, file, ARTIFACT_FILE_READ_LIMITS.acceptSpec);
	if (!spec || !spec.run) return undefined;
	const { maxRetries, timeoutSec } = spec;
	return {
		maxRetries: maxRetries == null ? 1 : Math.min(Math.max(maxRetries, 0), 5),
		timeoutSec: timeoutSec == null ? 600 : Math.min(Math.max(timeoutSec, 1), 3600),
	};
}

/** One check, as herd-accept answered. */
export interface CheckResult {
	readonly passed: boolean;
	readonly exitCode: number | null;
	readonly timedOut: boolean;
	/** The last characters of its output, or why there is none. */
	readonly output: string;
	/** Why it did not pass, for the child: `exited with 2`, `timed out after 30s`, … */
	readonly why: string;
}

/** Runs checks through herd-accept and stops those still running when the session ends. */
export class AcceptChecks {
	private readonly running = new Set<Running>();

	constructor(private readonly binDir: string) {}

	/** Runs the check of the spec at `specFile` once in `cwd`. */
	async run(specFile: string, cwd: string, limits: AcceptLimits): Promise<CheckResult> {
		const program = herdProgram(this.binDir, "herd-accept");
		let running: Running | undefined;
		const run = await runProcess(program, ["check", "--spec", specFile, "--cwd", cwd, "--json"], {
			// herd-accept ends its check itself; beyond that and the slack, it is stopped.
			budgetMs: limits.timeoutSec * 1000 + CHECK_KILL_GRACE_MS + CHECK_SLACK_MS,
			graceMs: CHECK_KILL_GRACE_MS,
			stdoutLimit: ANSWER_LIMIT,
			stderrLimit: STDERR_TAIL,
			started: (started) => {
				running = started;
				this.running.add(started);
			},
		});
		if (running) this.running.delete(running);
		const answer = decode(run.stdout, checkRun, "herd-accept check --json", ANSWER_LIMIT);
		if (!answer.ok) {
			const why = run.error ?? `${program} exited with ${run.code ?? "a signal"}: ${run.stderr.trim()}`;
			return { passed: false, exitCode: null, timedOut: false, output: why, why: `could not run (${why})` };
		}
		return checkResultOf(answer.value);
	}

	/**
	 * Asks every running herd-accept to stop: it terminates its check's group (SIGTERM, then
	 * SIGKILL a second later), so it is never killed outright here.
	 */
	stop(): void {
		for (const running of this.running) running.signal("SIGTERM");
	}
}

/** What herd-accept's answer says of the check. */
function checkResultOf(answer: CheckRun): CheckResult {
	const exitCode = answer.exit_code;
	let why: string;
	switch (answer.outcome) {
		case "passed":
			why = "passed";
			break;
		case "timed-out":
			why = `timed out after ${answer.timeout_sec}s`;
			break;
		case "signalled":
			why = `was ended by signal ${answer.signal ?? "?"}`;
			break;
		case "cancelled":
			why = "was cancelled";
			break;
		case "directory-missing":
		case "could-not-start":
			why = `could not run (${answer.error ?? answer.outcome})`;
			break;
		default:
			why = `exited with ${exitCode}`;
	}
	return { passed: answer.passed, exitCode, timedOut: answer.timed_out, output: answer.output || (answer.error ?? ""), why };
}
