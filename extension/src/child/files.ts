/**
 * Small bounded reads and atomic writes: everything the child reads was written by another
 * process and may be torn, foreign or too large (it is decoded by shared/decode.ts).
 */
import * as fs from "node:fs";
import * as path from "node:path";

/**
 * Reads a small file, or undefined when it is missing, not a file, or larger than `limit` (a read
 * bound of generated/run-files.ts, herd's own for the file).
 */
export function readSmall(file: string, limit: number): string | undefined {
	try {
		const stat = fs.statSync(file);
		if (!stat.isFile() || stat.size > limit) return undefined;
		return fs.readFileSync(file, "utf8");
	} catch {
		return undefined;
	}
}

/**
 * Writes a file by writing a temporary file beside it and renaming it into place. Like every file
 * herd writes, it is private (0600, its directories 0700), and the temporary file is created
 * exclusively, so nothing left at its name (a symlink) is written through.
 */
export function writeAtomic(file: string, text: string, tmpSuffix: string): void {
	fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
	const tmp = `${file}.${process.pid}.${tmpSuffix}.tmp`;
	fs.rmSync(tmp, { force: true });
	fs.writeFileSync(tmp, text, { mode: 0o600, flag: "wx" });
	fs.renameSync(tmp, file);
}

/** Appends a line to a private file (0600), never through a symlink at its name. */
export function appendPrivate(file: string, line: string): void {
	const { O_APPEND, O_CREAT, O_WRONLY, O_NOFOLLOW } = fs.constants;
	const fd = fs.openSync(file, O_APPEND | O_CREAT | O_WRONLY | O_NOFOLLOW, 0o600);
	try {
		fs.writeSync(fd, line);
	} finally {
		fs.closeSync(fd);
	}
}

/** A host-safe short string: at most 200 characters, no CR or LF. */
export function label(value: unknown): string | undefined {
	if (typeof value !== "string" || value.length === 0) return undefined;
	return value.replace(/[\r\n]+/g, " ").slice(0, 200);
}
