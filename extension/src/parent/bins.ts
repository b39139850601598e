/**
 * Where herd's binaries are, and one bounded way to run them.
 *
 * The binaries are found through `HERD_BIN_DIR`, then `PATH`, then `~/.cargo/bin` (a Pi started
 * from a launcher often lacks that on its `PATH`). The directory found is passed on as
 * `HERD_BIN_DIR` to every binary, so a child finds the same herd.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

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

/** What a binary did: its exit code (or null after a signal), its stdout and its stderr. */
export interface Ran {
	code: number | null;
	stdout: string;
	stderr: string;
}

/** The most of each stream kept from a binary's output. */
const OUTPUT_LIMIT = 4 * 1024 * 1024;

/** Options of one run. */
export interface RunOptions {
	cwd: string;
	env: NodeJS.ProcessEnv;
	/** Written to stdin, which is then closed; without it stdin is empty. */
	input?: string | undefined;
	/** The run is killed (SIGKILL) after this long. */
	timeoutMs: number;
}

/** Runs `program args` asynchronously, bounded in time and output; never rejects. */
export function run(program: string, args: string[], options: RunOptions): Promise<Ran> {
	return new Promise((resolve) => {
		let stdout = "";
		let stderr = "";
		let child;
		try {
			child = spawn(program, args, { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"] });
		} catch (err) {
			resolve({ code: null, stdout: "", stderr: String(err) });
			return;
		}
		const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
		child.stdout.on("data", (chunk: Buffer) => {
			if (stdout.length < OUTPUT_LIMIT) stdout += chunk.toString("utf8");
		});
		child.stderr.on("data", (chunk: Buffer) => {
			if (stderr.length < OUTPUT_LIMIT) stderr += chunk.toString("utf8");
		});
		child.stdin.on("error", () => {
			// A binary that exits before reading its input says why on stderr.
		});
		child.stdin.end(options.input ?? "");
		child.on("error", (err) => {
			clearTimeout(timer);
			resolve({ code: null, stdout, stderr: stderr + String(err) });
		});
		child.on("close", (code) => {
			clearTimeout(timer);
			resolve({ code, stdout, stderr });
		});
	});
}

/** A JSON value as far as the extension looks into it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** Parses `text` as one JSON object, or undefined. */
export function parseObject(text: string): JsonObject | undefined {
	try {
		const value: unknown = JSON.parse(text);
		return isObject(value) ? (value as JsonObject) : undefined;
	} catch {
		return undefined;
	}
}

export function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The `message` of a binary's `--json` error document, else its stderr, else its exit code. */
export function failureText(ran: Ran): string {
	const doc = parseObject(ran.stdout);
	const error = doc?.error;
	if (isObject(error) && typeof error.message === "string") return error.message;
	const stderr = ran.stderr.trim();
	if (stderr) return stderr;
	return ran.code === null ? "the herd binary was killed" : `the herd binary exited with ${ran.code}`;
}
