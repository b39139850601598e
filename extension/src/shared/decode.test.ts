/**
 * One decode: a document is its generated type at the fields a reader relies on, or it is refused
 * with the reason; the size bound holds before anything is parsed.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { decode, decodeValue } from "./decode.ts";
import { launchAck, statusRuns, watchEvent } from "./formats.ts";

test("a follow line decodes as the event its tag names", () => {
	const line = JSON.stringify({ event: "result", run_id: "r1", key: "r1", name: "Scout", outcome: "completed", message: "done", details: { elapsedMs: 5 } });
	const read = decode(line, watchEvent, "line");
	assert.ok(read.ok);
	assert.equal(read.value.event, "result");
	if (read.value.event === "result") assert.equal(read.value.details.elapsedMs, 5);
});

test("a field of another type, a missing one, an unknown tag: refused, naming where", () => {
	const bad = decode(JSON.stringify({ event: "result", run_id: 7, key: "r1", name: "x", outcome: "completed", message: "", details: {} }), watchEvent, "line");
	assert.deepEqual(bad, { ok: false, error: "line.run_id is a number, not a string" });
	const missing = decode(JSON.stringify({ event: "notice", run_id: "r1" }), watchEvent, "line");
	assert.equal(missing.ok, false);
	const outcome = decode(JSON.stringify({ event: "result", run_id: "r1", key: "r1", name: "x", outcome: "finished", message: "", details: {} }), watchEvent, "line");
	assert.match(outcome.ok ? "" : outcome.error, /line\.outcome is the string "finished", not one of/);
	const tag = decodeValue({ event: "later", run_id: "r1" }, watchEvent, "line");
	assert.match(tag.ok ? "" : tag.error, /line\.event is the string "later", not one this reader knows/);
});

test("optional and nullable fields may be absent or null, nothing else", () => {
	const ack = { run_id: "r1", session_file: "/s/a.jsonl", status: "launched" };
	assert.ok(decodeValue(ack, launchAck, "ack").ok);
	assert.ok(decodeValue({ ...ack, pane_id: "p1" }, launchAck, "ack").ok);
	assert.equal(decodeValue({ ...ack, pane_id: null }, launchAck, "ack").ok, false);
	const row = { run_id: "r1", label: "active", detail: null, since_ms: null, elapsed_ms: 3, outcome: null, delivered: false };
	assert.ok(decodeValue({ runs: [row] }, statusRuns, "status").ok);
	const wrong = decodeValue({ runs: [row, { ...row, delivered: "no" }] }, statusRuns, "status");
	assert.deepEqual(wrong, { ok: false, error: "status.runs[1].delivered is the string \"no\", not a boolean" });
});

test("text that is empty, torn or over the bound is no document", () => {
	assert.equal(decode("", statusRuns, "status").ok, false);
	assert.equal(decode('{"runs": [', statusRuns, "status").ok, false);
	assert.deepEqual(decode(JSON.stringify({ runs: [] }), statusRuns, "status", 5), { ok: false, error: "status is larger than 5 characters" });
});
