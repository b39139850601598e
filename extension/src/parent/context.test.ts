/**
 * What a session hands its binaries: the Pi its children run, and where a launch places a run.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import type { ExtensionContext } from "@earendil-works/pi-coding-agent";

import { artifactsDir, launchPlace, piCommand } from "./context.ts";

test("a child runs this Pi's script on this Pi's own Node, whatever PATH finds first", () => {
	const pi = piCommand({ argv: ["/opt/node22/bin/node", "/opt/pi/dist/cli.js", "--mode", "rpc"], execPath: "/opt/node22/bin/node", versions: process.versions });
	assert.deepEqual(pi, { HERD_PI: "/opt/pi/dist/cli.js", HERD_PI_NODE: "/opt/node22/bin/node" });
});

test("a Pi compiled into one executable is that executable", () => {
	const pi = piCommand({ argv: ["/usr/local/bin/pi", "/$bunfs/root/pi"], execPath: "/usr/local/bin/pi", versions: { ...process.versions, bun: "1.3.0" } });
	assert.deepEqual(pi, { HERD_PI: "/usr/local/bin/pi" });
});

function session(id: string, file: string | undefined): ExtensionContext {
	const sessionManager = { getSessionId: () => id, getSessionFile: () => file };
	return { sessionManager } as unknown as ExtensionContext;
}

test("a launch names the session's own artifacts directory, by Pi's session id, and the file beside it", () => {
	const ctx = session("0b9c5e7a", "/home/u/work/parent.jsonl");
	assert.equal(artifactsDir(ctx, {}), "/home/u/work/artifacts/0b9c5e7a");
	assert.deepEqual(launchPlace(ctx, {}), ["--artifacts", "/home/u/work/artifacts/0b9c5e7a", "--parent-session", "/home/u/work/parent.jsonl"]);
});

test("a child's launch places its runs in its own directory and names no parent session", () => {
	const ctx = session("c1", "/s/c1.jsonl");
	const env = { PI_SUBAGENT_ID: "r1", PI_SUBAGENT_ACTIVITY_FILE: "/art/subagent-activity/r1.json" };
	assert.deepEqual(launchPlace(ctx, env), ["--artifacts", "/art"]);
});
