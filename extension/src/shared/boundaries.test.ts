/**
 * The extensions read what other processes wrote only through decode.ts and run programs only
 * through process.ts: no other module parses JSON or imports `node:child_process` for a value.
 * A file's version is written and checked, and a file of herd's read within its bound, only
 * through the generated table (generated/run-files.ts, made from herd-protocol's): no module
 * spells one.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";

const ROOT = path.resolve(import.meta.dirname, "..", "..");

/** Every TypeScript source of the extensions but the tests and the generated files. */
function sources(dir: string): string[] {
	const out: string[] = [];
	for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
		const file = path.join(dir, entry.name);
		if (entry.isDirectory() && entry.name !== "node_modules" && entry.name !== "generated" && entry.name !== "dist") out.push(...sources(file));
		else if (entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) out.push(file);
	}
	return out;
}

test("only decode.ts parses JSON and only process.ts starts programs", () => {
	const files = sources(ROOT);
	assert.ok(files.some((f) => f.endsWith(path.join("shared", "decode.ts"))));
	const parses = files.filter((f) => !f.endsWith(path.join("shared", "decode.ts")) && fs.readFileSync(f, "utf8").includes("JSON.parse("));
	assert.deepEqual(parses.map((f) => path.relative(ROOT, f)), []);
	const spawns = files.filter((f) => !f.endsWith(path.join("shared", "process.ts")) && /^import (?!type )[^\n]*"node:child_process"/m.test(fs.readFileSync(f, "utf8")));
	assert.deepEqual(spawns.map((f) => path.relative(ROOT, f)), []);
});

/** The lines of `text` that write or check a file's `version` as a number of their own. */
export function versionLiterals(text: string): string[] {
	const literal = [/\bversion\s*:\s*(?:literal\(\s*)?\d/, /\bversion\s*:\s*where\([^\n]*===\s*\d/];
	return text
		.split("\n")
		.filter((line) => !/^\s*(?:\/\/|\/\*|\*)/.test(line))
		.filter((line) => literal.some((re) => re.test(line)))
		.map((line) => line.trim());
}

test("no version of a file is spelled outside the generated table", () => {
	const sample = [
		"const doc = { version: 1, tries };",
		"const entry = object<TaskInbox>({ version: literal(1), type: string });",
		'\tversion: where(integer, (v) => v === 1, "version 1"),',
		" * `{\"version\":1,\"tries\":N}`; version: 1 in a comment",
		"const doc = { version: SESSION_FILE_VERSIONS.needsInput, format_version: FORMAT_VERSION };",
		"{ type: \"session\", versions: process.versions }",
	].join("\n");
	assert.equal(versionLiterals(sample).length, 3);
	const found = sources(ROOT).flatMap((f) => versionLiterals(fs.readFileSync(f, "utf8")).map((line) => `${path.relative(ROOT, f)}: ${line}`));
	assert.deepEqual(found, []);
});

/** The bounded readers of a file, and the decoders of what they read. */
const READS = /\b(?:readSmall|readLimited|readDocument|decoded?)\(/;

/**
 * The lines of `text`, when it is a module that reads herd's files (it imports
 * generated/run-files.ts), that read or decode a file within a bound of their own rather than the
 * generated table's: a number (`16 * 1024`, `65536`), a constant of the module's own
 * (`READ_LIMIT`), or no bound at all, where a reader's default would choose it. A program's
 * output (`.stdout`) is not a file, and keeps its own bound.
 */
export function boundLiterals(text: string): string[] {
	if (!/from\s+"[^"]*generated\/run-files\.ts"/.test(text)) return [];
	const number = /\b\d+\s*\*\s*1024\b|\b\d{4,}\b/;
	const constant = /(?<![\w.])[A-Z][A-Z0-9]*_[A-Z0-9_]*\b(?![\w.])/;
	const unbounded = /\b(?:readSmall|readLimited)\(\s*[^,()]*\)/;
	return text
		.split("\n")
		.filter((line) => !/^\s*(?:\/\/|\/\*|\*)/.test(line))
		.filter((line) => READS.test(line) && !line.includes(".stdout"))
		.filter((line) => !/^\s*export function /.test(line))
		.filter((line) => number.test(line) || constant.test(line) || unbounded.test(line))
		.map((line) => line.trim());
}

test("no read bound of a file is spelled outside the generated table", () => {
	const reader = 'import { SESSION_FILE_READ_LIMITS, sessionFile } from "../generated/run-files.ts";\n';
	const sample = [
		"const text = readSmall(sessionFile(session, \"needsInput\"), 16 * 1024);",
		"\tconst entry = decoded(text, taskInbox, \"an inbox entry\", READ_LIMIT);",
		"\treturn readDocument(file, runRecord, 262144);",
		"\tif (busy && !(readSmall(file) ?? \"\").includes('\"stop\"')) return;",
		"\tconst previous = decoded(readSmall(file, SESSION_FILE_READ_LIMITS.needsInput), PREVIOUS, file, SESSION_FILE_READ_LIMITS.needsInput);",
		"\tconst answer = decode(run.stdout, checkRun, \"herd-accept check --json\", ANSWER_LIMIT);",
		"export function readSmall(file: string, limit: number): string | undefined {",
		" * read at most 16 * 1024 bytes with readSmall(file)",
	].join("\n");
	assert.equal(boundLiterals(reader + sample).length, 4);
	assert.equal(boundLiterals(sample).length, 0, "a module that reads none of herd's files");
	const found = sources(ROOT).flatMap((f) => boundLiterals(fs.readFileSync(f, "utf8")).map((line) => `${path.relative(ROOT, f)}: ${line}`));
	assert.deepEqual(found, []);
});
