/**
 * The extensions read what other processes wrote only through decode.ts and run programs only
 * through process.ts: no other module parses JSON or imports `node:child_process` for a value.
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
