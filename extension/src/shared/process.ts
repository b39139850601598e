/**
 * The one way the extensions run a program: in its own process group, within a time budget
 * (SIGTERM to the group when it runs out, SIGKILL to the group a grace later), with a bound on
 * the output kept (the start of stdout, the end of stderr). It never rejects: a program that
 * cannot start says so in `error`.
 *
 * Node starts a process group only as a new session (`detached`), which has no terminal; a
 * program that must reach the session's terminal (`herd-watch notify` writes OSC 777/9 to
 * `/dev/tty`) runs with `terminal: true`, in this process's group, and its budget signals it alone.
 */
import { type ChildProcess, type ChildProcessWithoutNullStreams, spawn } from "node:child_process";

/** How a program ended. */
export interface Ran {
	/** Its exit code; null when a signal ended it or it never started. */
	readonly code: number | null;
	/** The first `stdoutLimit` characters of its standard output. */
	readonly stdout: string;
	/** The last `stderrLimit` characters of its standard error. */
	readonly stderr: string;
	/** Whether its budget ran out (it was signalled for it). */
	readonly timedOut: boolean;
	/** Why it could not start, or its output could not be read. */
	readonly error?: string;
}

/** What a running program offers its caller. */
export interface Running {
	readonly pid: number;
	/** Sends `signal` to the program's group (to the program alone with `terminal`). */
	signal(signal: NodeJS.Signals): void;
}

export interface RunOptions {
	readonly cwd?: string | undefined;
	readonly env?: NodeJS.ProcessEnv | undefined;
	/** Written to stdin, which is then closed; without it stdin is empty. */
	readonly input?: string | undefined;
	/** After this long the group gets SIGTERM. */
	readonly budgetMs: number;
	/** After SIGTERM, this long until SIGKILL (default 2 s). */
	readonly graceMs?: number | undefined;
	readonly stdoutLimit: number;
	readonly stderrLimit: number;
	/** The program stays in this process's session, for the terminal (see the module). */
	readonly terminal?: boolean | undefined;
	/** Called once the program runs. */
	readonly started?: ((running: Running) => void) | undefined;
}

export const DEFAULT_GRACE_MS = 2000;

/** Signals the group `pid` leads, or `pid` alone when `alone`; one already gone is no error. */
export function signalProcess(pid: number, signal: NodeJS.Signals, alone = false): void {
	try {
		process.kill(alone ? pid : -pid, signal);
	} catch {
		// Already gone.
	}
}

/** SIGTERM to the group of `pid` now and SIGKILL `graceMs` later, unless `ended` says it is gone. */
function terminate(pid: number, alone: boolean, graceMs: number, ended: () => boolean): void {
	signalProcess(pid, "SIGTERM", alone);
	setTimeout(() => {
		if (!ended()) signalProcess(pid, "SIGKILL", alone);
	}, graceMs).unref?.();
}

/** Runs `program args` to its end, bounded in time and output. */
export function runProcess(program: string, args: readonly string[], options: RunOptions): Promise<Ran> {
	return new Promise((resolve) => {
		const grace = options.graceMs ?? DEFAULT_GRACE_MS;
		const alone = options.terminal === true;
		let child: ChildProcess;
		try {
			child = spawn(program, args, {
				cwd: options.cwd,
				env: options.env,
				detached: !alone,
				stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
			});
		} catch (err) {
			resolve({ code: null, stdout: "", stderr: "", timedOut: false, error: String(err) });
			return;
		}
		let stdout = "";
		let stderr = "";
		let error: string | undefined;
		let timedOut = false;
		let exited = false;
		let settled = false;
		const pid = child.pid;
		const budget =
			pid === undefined
				? undefined
				: setTimeout(() => {
						timedOut = true;
						terminate(pid, alone, grace, () => exited);
					}, options.budgetMs);
		const finish = (code: number | null) => {
			if (settled) return;
			settled = true;
			if (budget) clearTimeout(budget);
			const ran = { code, stdout, stderr, timedOut };
			resolve(error === undefined ? ran : { ...ran, error });
		};
		if (pid !== undefined) options.started?.({ pid, signal: (signal) => signalProcess(pid, signal, alone) });
		child.stdout?.setEncoding("utf8");
		child.stdout?.on("data", (chunk: string) => {
			if (stdout.length < options.stdoutLimit) stdout = (stdout + chunk).slice(0, options.stdoutLimit);
		});
		child.stderr?.setEncoding("utf8");
		child.stderr?.on("data", (chunk: string) => {
			stderr = (stderr + chunk).slice(-options.stderrLimit);
		});
		if (child.stdin) {
			child.stdin.on("error", () => {
				// A program that exits before reading its input says why on stderr.
			});
			child.stdin.end(options.input ?? "");
		}
		// A program that cannot start reports `error` (and maybe `close` after it).
		child.on("error", (err) => {
			error = String(err);
			if (pid === undefined) finish(null);
		});
		child.on("exit", (code) => {
			exited = true;
			// Its output ends with `close`; a descendant that kept the pipes open is not waited
			// for beyond the grace.
			setTimeout(() => {
				child.stdout?.destroy();
				child.stderr?.destroy();
				finish(code);
			}, grace).unref?.();
		});
		child.on("close", (code) => finish(code));
	});
}

/**
 * Starts `program args` for a conversation on its pipes (`herd-watch follow --ack`), in its own
 * process group; `stopProcess` ends it. Throws when it cannot be started.
 */
export function startProcess(program: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv }): ChildProcessWithoutNullStreams {
	return spawn(program, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ["pipe", "pipe", "pipe"] });
}

/** Ends a program `startProcess` started: its stdin closed, SIGTERM to its group, SIGKILL a grace later. */
export function stopProcess(child: ChildProcess, graceMs = DEFAULT_GRACE_MS): void {
	child.stdin?.end();
	const pid = child.pid;
	if (pid === undefined) return;
	terminate(pid, false, graceMs, () => child.exitCode !== null || child.signalCode !== null);
}
