/**
 * The notices that wait for a live parent: order, retry after a failed hand-over, and the
 * cancellations notices.ts names.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { NOTICES_MAX, type Notice, cancelRun, handOver, queue } from "./notices.ts";

const notice = (runId: string, message: string, dir = "/art"): Notice => ({ dir, runId, message });

test("notices wait in order until a live parent takes them", () => {
	const waiting: Notice[] = [];
	queue(waiting, notice("a1", "first"));
	queue(waiting, notice("b2", "second"));
	const seen: string[] = [];
	assert.equal(
		handOver(waiting, (n) => seen.push(n.message)),
		2,
	);
	assert.deepEqual(seen, ["first", "second"]);
	assert.equal(waiting.length, 0);
});

test("a notice whose hand-over fails stays, with those after it, and goes on the next try", () => {
	const waiting: Notice[] = [];
	queue(waiting, notice("a1", "first"));
	queue(waiting, notice("a1", "second"));
	let fail = true;
	const seen: string[] = [];
	const send = (n: Notice): void => {
		if (fail) throw new Error("the instance went stale");
		seen.push(n.message);
	};
	assert.equal(handOver(waiting, send), 0);
	assert.equal(waiting.length, 2);
	fail = false;
	assert.equal(handOver(waiting, send), 2);
	assert.deepEqual(seen, ["first", "second"]);
});

test("a run's result or a new stop drops its waiting notices, and only its own", () => {
	const waiting: Notice[] = [];
	queue(waiting, notice("a1", "a1 did not confirm its exit"));
	queue(waiting, notice("b2", "b2 hit a provider error"));
	queue(waiting, notice("a1", "a1 again", "/other"));
	cancelRun(waiting, "/art", "a1");
	assert.deepEqual(
		waiting.map((n) => `${n.dir} ${n.runId}`),
		["/art b2", "/other a1"],
	);
});

test("the queue is bounded: the oldest notices give way", () => {
	const waiting: Notice[] = [];
	for (let i = 0; i < NOTICES_MAX + 5; i++) queue(waiting, notice("a1", `n${i}`));
	assert.equal(waiting.length, NOTICES_MAX);
	assert.equal(waiting[0]?.message, "n5");
});
