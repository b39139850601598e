/**
 * The one runner: a program's process group ends with its budget (SIGTERM, then SIGKILL a grace
 * later), its output is kept within its bounds, and a program that cannot start says so.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";

import { runProcess } from "./process.ts";

/** Whether the process `pid` runs (a zombie waiting for its reaper has ended). */
function alive(pid: number): boolean {
	try {
		const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
		return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
	} catch {
		return false;
	}
}

test("a budget ends the whole group: a child that ignores SIGTERM is killed with its descendant", async () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herd-run-"));
	const pidFile = path.join(dir, "grandchild");
	// The shell ignores TERM; its background sleep would outlive a kill of the shell alone.
	const script = `trap '' TERM; sleep 30 & echo $! > ${pidFile}; wait; wait`;
	const ran = await runProcess("sh", ["-c", script], { budgetMs: 300, graceMs: 200, stdoutLimit: 100, stderrLimit: 100 });
	assert.equal(ran.timedOut, true);
	assert.equal(ran.code, null);
	const grandchild = Number(fs.readFileSync(pidFile, "utf8").trim());
	assert.ok(grandchild > 0);
	// SIGKILL reached the group, the sleep included.
	for (let i = 0; i < 50 && alive(grandchild); i++) await new Promise((resolve) => setTimeout(resolve, 20));
	assert.equal(alive(grandchild), false);
});

test("stdin is the input, stdout keeps its start and stderr its end within their bounds", async () => {
	const ran = await runProcess("sh", ["-c", "cat; printf 'abcdefghij' >&2"], { input: "0123456789", budgetMs: 5000, stdoutLimit: 4, stderrLimit: 3 });
	assert.equal(ran.code, 0);
	assert.equal(ran.stdout, "0123");
	assert.equal(ran.stderr, "hij");
	assert.equal(ran.timedOut, false);
});

test("a program that cannot start answers with why", async () => {
	const ran = await runProcess("/nonexistent/herd-none", [], { budgetMs: 1000, stdoutLimit: 10, stderrLimit: 10 });
	assert.equal(ran.code, null);
	assert.match(ran.error ?? "", /ENOENT/);
});
