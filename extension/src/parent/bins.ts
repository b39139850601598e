/**
 * Where herd's binaries are, and how the parent runs them (shared/process.ts, with its bounds).
 *
 * The binaries are found through `HERD_BIN_DIR`, then `PATH`, then `~/.cargo/bin` (a Pi started
 * from a launcher often lacks that on its `PATH`). The directory found is passed on as
 * `HERD_BIN_DIR` to every binary, so a child finds the same herd.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { decoded } from "../shared/decode.ts";
import { errorDocument } from "../shared/formats.ts";
import { type Ran, runProcess } from "../shared/process.ts";

/** The six binaries herd installs; the extension needs all of them. */
export const BINARIES = ["herd-launch", "herd-watch", "herd-accept", "herd-worktree", "herd-cleanup", "herd-docs"] as const;
export type Binary = (typeof BINARIES)[number];

/** How to install the binaries, for the message shown when they are missing. */
export const INSTALL_HINT =
	"herd's binaries were not found (looked in $HERD_BIN_DIR, on PATH and in ~/.cargo/bin). " +
	"Install them from a herd checkout with `cargo xtask install`, or set HERD_BIN_DIR to the directory that holds herd-launch.";

function executable(file: string): boolean {
	try {
		fs.accessSync(file, fs.constants.X_OK);
		return fs.statSync(file).isFile();
	} catch {
		return false;
	}
}

/** The directory holding every herd binary, or undefined. */
export function findBinDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
	const complete = (dir: string) => BINARIES.every((name) => executable(path.join(dir, name)));
	if (env.HERD_BIN_DIR) {
		// Set means meant: a directory that lacks a binary is not silently replaced by another herd.
		return complete(env.HERD_BIN_DIR) ? path.resolve(env.HERD_BIN_DIR) : undefined;
	}
	for (const dir of (env.PATH ?? "").split(path.delimiter)) {
		if (dir && executable(path.join(dir, "herd-launch"))) return complete(dir) ? path.resolve(dir) : undefined;
	}
	const cargo = path.join(env.CARGO_HOME ?? path.join(os.homedir(), ".cargo"), "bin");
	return complete(cargo) ? cargo : undefined;
}

export type { Ran } from "../shared/process.ts";

/** The most of each stream kept from a binary's output. */
const OUTPUT_LIMIT = 4 * 1024 * 1024;

/** Options of one run. */
export interface RunOptions {
	cwd: string;
	env: NodeJS.ProcessEnv;
	/** Written to stdin, which is then closed; without it stdin is empty. */
	input?: string | undefined;
	/** The run's budget: SIGTERM to its process group after this long, SIGKILL shortly after. */
	timeoutMs: number;
	/** It writes to this session's terminal (`herd-watch notify`), see shared/process.ts. */
	terminal?: boolean | undefined;
}

/** Runs `program args` asynchronously, bounded in time and output; never rejects. */
export function run(program: string, args: string[], options: RunOptions): Promise<Ran> {
	return runProcess(program, args, {
		cwd: options.cwd,
		env: options.env,
		input: options.input,
		budgetMs: options.timeoutMs,
		stdoutLimit: OUTPUT_LIMIT,
		stderrLimit: OUTPUT_LIMIT,
		terminal: options.terminal,
	});
}

/** The `message` of a binary's `--json` error document, else its stderr, else its exit code. */
export function failureText(ran: Ran): string {
	const doc = decoded(ran.stdout, errorDocument, "the error document");
	if (doc) return doc.error.message;
	const stderr = ran.stderr.trim();
	if (stderr) return stderr;
	if (ran.error !== undefined) return ran.error;
	if (ran.timedOut) return "the herd binary ran out of time and was stopped";
	return ran.code === null ? "the herd binary was killed" : `the herd binary exited with ${ran.code}`;
}
