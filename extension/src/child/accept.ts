/**
 * The child side of an accept check (`PI_SUBAGENT_ACCEPT_FILE`): after a turn the check runs once
 * through `herd-accept check --json`, the one implementation of running it in the project (its
 * own process group, no `PI_SUBAGENT_*` variable, the timeout, the last 4,000 characters of
 * output). This module only reads the spec's limits and herd-accept's answer.
 */
import type { AcceptSpec, CheckRun } from "../generated/protocol.ts";
import { integerAt, type JsonObject, parseObject, readSmall, stringAt } from "./files.ts";
import { herdProgram, killGroup, runProgram } from "./programs.ts";

/** How much of a failed check's output goes back to the child (what herd-accept reports). */
export const CHECK_FEEDBACK_CHARS = 4000;
/** What herd-accept allows the check after its timeout: SIGTERM, then SIGKILL 5 s later. */
export const CHECK_KILL_GRACE_MS = 5000;
/** What the child allows herd-accept beyond that before it stops it. */
const CHECK_SLACK_MS = 30_000;
/** The bound of herd-accept's answer: one small JSON document. */
const ANSWER_LIMIT = 256 * 1024;

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
	const spec = parseObject(readSmall(file));
	const run = stringAt<AcceptSpec>(spec, "run");
	if (integerAt<AcceptSpec>(spec, "version") !== 1 || !run) return undefined;
	const maxRetries = integerAt<AcceptSpec>(spec, "maxRetries");
	const timeoutSec = integerAt<AcceptSpec>(spec, "timeoutSec");
	return {
		maxRetries: maxRetries === undefined ? 1 : Math.min(Math.max(maxRetries, 0), 5),
		timeoutSec: timeoutSec === undefined ? 600 : Math.min(Math.max(timeoutSec, 1), 3600),
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
	private readonly running = new Set<number>();

	constructor(private readonly binDir: string) {}

	/** Runs the check of the spec at `specFile` once in `cwd`. */
	async run(specFile: string, cwd: string, limits: AcceptLimits): Promise<CheckResult> {
		const program = herdProgram(this.binDir, "herd-accept");
		let pid: number | undefined;
		const guard = setTimeout(
			() => {
				if (pid !== undefined) killGroup(pid, "SIGTERM");
			},
			limits.timeoutSec * 1000 + CHECK_KILL_GRACE_MS + CHECK_SLACK_MS,
		);
		const run = await runProgram(program, ["check", "--spec", specFile, "--cwd", cwd, "--json"], {
			stdoutLimit: ANSWER_LIMIT,
			started: (started) => {
				pid = started;
				this.running.add(started);
			},
		});
		clearTimeout(guard);
		if (pid !== undefined) this.running.delete(pid);
		const answer = parseObject(run.stdout);
		if (!answer || typeof answer.passed !== "boolean") {
			const why = run.error ?? `${program} exited with ${run.code ?? "a signal"}: ${run.stderr.trim()}`;
			return { passed: false, exitCode: null, timedOut: false, output: why, why: `could not run (${why})` };
		}
		return checkResultOf(answer);
	}

	/**
	 * Asks every running herd-accept to stop: it terminates its check's group (SIGTERM, then
	 * SIGKILL a second later), so it is never killed outright here.
	 */
	stop(): void {
		for (const pid of this.running) killGroup(pid, "SIGTERM");
	}
}

/** Reads `herd-accept check --json`'s document (docs/schemas/accept-check.schema.json). */
function checkResultOf(answer: JsonObject): CheckResult {
	const exitCode = integerAt<CheckRun>(answer, "exit_code") ?? null;
	const outcome = stringAt<CheckRun>(answer, "outcome");
	const timedOut = answer.timed_out === true;
	const output = stringAt<CheckRun>(answer, "output") ?? "";
	let why: string;
	switch (outcome) {
		case "passed":
			why = "passed";
			break;
		case "timed-out":
			why = `timed out after ${integerAt<CheckRun>(answer, "timeout_sec") ?? "its timeout of"}s`;
			break;
		case "signalled":
			why = `was ended by signal ${integerAt<CheckRun>(answer, "signal") ?? "?"}`;
			break;
		case "cancelled":
			why = "was cancelled";
			break;
		case "directory-missing":
		case "could-not-start":
			why = `could not run (${stringAt<CheckRun>(answer, "error") ?? outcome})`;
			break;
		default:
			why = `exited with ${exitCode}`;
	}
	return {
		passed: answer.passed === true,
		exitCode,
		timedOut,
		output: output || (stringAt<CheckRun>(answer, "error") ?? ""),
		why,
	};
}
