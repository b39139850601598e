/**
 * The herd programs a child runs, found as herd finds them: `$HERD_BIN_DIR/<name>`, else `<name>`
 * on `PATH`; and the process groups they run in.
 */
import { spawn } from "node:child_process";
import * as path from "node:path";

export function herdProgram(binDir: string, name: "herd-accept" | "herd-watch"): string {
	return binDir ? path.join(binDir, name) : name;
}

/** Signals the process group `pid` leads; a group already gone is no error. */
export function killGroup(pid: number, signal: NodeJS.Signals): void {
	try {
		process.kill(-pid, signal);
	} catch {
		// Already gone.
	}
}

/** How a program run by [`runProgram`] ended. */
export interface ProgramRun {
	/** Its exit code; null when a signal ended it or it never started. */
	readonly code: number | null;
	/** Its standard output, at most `stdoutLimit` characters. */
	readonly stdout: string;
	/** The end of its standard error. */
	readonly stderr: string;
	/** Why it could not start, when it could not. */
	readonly error?: string;
}

export interface RunOptions {
	readonly stdoutLimit: number;
	/** Called with the pid once the program runs in its own process group. */
	readonly started?: (pid: number) => void;
}

/** The end of standard error kept. */
const STDERR_TAIL = 4000;

/** Runs `program` with `args` in its own process group, stdin closed, and collects its output. */
export function runProgram(program: string, args: readonly string[], options: RunOptions): Promise<ProgramRun> {
	return new Promise((resolve) => {
		let stdout = "";
		let stderr = "";
		let error: string | undefined;
		let child;
		try {
			child = spawn(program, args, { detached: true, stdio: ["ignore", "pipe", "pipe"] });
		} catch (err) {
			resolve({ code: null, stdout, stderr, error: String(err) });
			return;
		}
		if (child.pid !== undefined) options.started?.(child.pid);
		child.stdout.on("data", (chunk: Buffer) => {
			if (stdout.length < options.stdoutLimit) stdout += chunk.toString("utf8");
		});
		child.stderr.on("data", (chunk: Buffer) => {
			stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_TAIL);
		});
		let settled = false;
		const finish = (code: number | null) => {
			if (settled) return;
			settled = true;
			resolve(error === undefined ? { code, stdout, stderr } : { code, stdout, stderr, error });
		};
		// A program that cannot start reports `error` (and maybe `close` after it); one that runs
		// ends with `close`.
		child.on("error", (err) => {
			error = String(err);
			if (child.pid === undefined) finish(null);
		});
		child.on("close", finish);
	});
}
