/**
 * The extensions read what other processes wrote only through decode.ts and run programs only
 * through process.ts: no other module parses JSON or imports `node:child_process` for a value.
 * A file's version is written and checked only through the generated table
 * (generated/run-files.ts, made from herd-protocol's): no module spells one.
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
