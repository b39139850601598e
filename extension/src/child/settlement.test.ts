/**
 * The settlement's rules, one path each: `node --test` runs this file with the Node.js that
 * strips types (22.18 or newer; `.ci/run` uses the one pinned in tests/pi).
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import type { Answer } from "./messages.ts";
import { type SettlementEvent, type SettlementState, step, unsettled } from "./settlement.ts";

const answer = (stopReason: string, errorMessage?: string): Answer => ({ stopReason, errorMessage, text: "" });
const ended = (a: Answer, over: Partial<Extract<SettlementEvent, { type: "turn-ended" }>> = {}): SettlementEvent => ({
	type: "turn-ended",
	answer: a,
	resultsQueued: false,
	childrenOutstanding: false,
	steeringQueued: false,
	hasCheck: false,
	terminating: false,
	...over,
});
const steeringDone = (over: Partial<Extract<SettlementEvent, { type: "steering-done" }>> = {}): SettlementEvent => ({
	type: "steering-done",
	resultsQueued: false,
	childrenOutstanding: false,
	hasCheck: false,
	terminating: false,
	...over,
});

/** Runs `events` from `idle`; returns every state and action kind on the way. */
function run(...events: SettlementEvent[]): string[] {
	let state: SettlementState = { kind: "idle" };
	const seen: string[] = [];
	for (const event of events) {
		const next = step(state, event);
		state = next.state;
		seen.push(`${state.kind}:${next.action.type}`);
	}
	return seen;
}

test("a turn that ends with nothing left ends the child", () => {
	assert.deepEqual(run({ type: "turn-started" }, ended(answer("stop"))), ["working:none", "ended:end"]);
});

test("a provider error ends the child with its message, whatever is outstanding", () => {
	const next = step({ kind: "working" }, ended(answer("error", "500 boom"), { childrenOutstanding: true, hasCheck: true }));
	assert.deepEqual(next, {
		state: { kind: "ended" },
		action: { type: "end", completion: { type: "error", errorMessage: "500 boom", stopReason: "error" } },
	});
	const silent = step({ kind: "working" }, ended(answer("error")));
	assert.equal(silent.action.type === "end" && silent.action.completion.type === "error" && silent.action.completion.errorMessage, "the provider failed and retries were exhausted");
});

test("an interrupted turn stays open", () => {
	const next = step({ kind: "working" }, ended(answer("aborted"), { hasCheck: true }));
	assert.deepEqual(next, { state: { kind: "idle" }, action: { type: "none" } });
	assert.equal(unsettled(next.state), false);
});

test("a failed check sends the child back to work until its retries are spent", () => {
	assert.deepEqual(
		run(
			{ type: "turn-started" },
			ended(answer("stop"), { hasCheck: true }),
			{ type: "check-done", passed: false, retriesLeft: true, terminating: false },
			{ type: "turn-started" },
			ended(answer("stop"), { hasCheck: true }),
			{ type: "check-done", passed: false, retriesLeft: false, terminating: false },
		),
		["working:none", "checking:check", "working:retry", "working:none", "checking:check", "ended:end"],
	);
	// A signal: no retry turn.
	assert.equal(step({ kind: "checking" }, { type: "check-done", passed: false, retriesLeft: true, terminating: true }).state.kind, "ended");
});

test("own children deliver first, each result a turn, before the check", () => {
	assert.deepEqual(
		run(
			{ type: "turn-started" },
			ended(answer("stop"), { childrenOutstanding: true, hasCheck: true }),
			{ type: "result-arrived", terminating: false, idle: true },
			ended(answer("stop"), { hasCheck: true }),
			{ type: "check-done", passed: true, retriesLeft: true, terminating: false },
		),
		["working:none", "holding:none", "working:deliver", "checking:check", "ended:end"],
	);
	// A result that arrived during the turn is given when it ends.
	assert.deepEqual(step({ kind: "working" }, ended(answer("stop"), { resultsQueued: true })).action, { type: "deliver" });
	// One that arrives while a turn runs waits for it.
	assert.deepEqual(step({ kind: "working" }, { type: "result-arrived", terminating: false, idle: false }).state, { kind: "working" });
});

test("a signal does not wait for own children", () => {
	assert.deepEqual(step({ kind: "working" }, ended(answer("stop"), { childrenOutstanding: true, terminating: true })).state, { kind: "ended" });
});

test("nothing happens after the end, and a turn does not start during the check", () => {
	for (const event of [{ type: "turn-started" } as const, ended(answer("stop")), { type: "result-arrived", terminating: false, idle: true } as const]) {
		assert.deepEqual(step({ kind: "ended" }, event), { state: { kind: "ended" }, action: { type: "none" } });
	}
	assert.deepEqual(step({ kind: "checking" }, { type: "turn-started" }).state, { kind: "checking" });
	assert.deepEqual(step({ kind: "checking" }, ended(answer("stop"))).state, { kind: "checking" });
	assert.equal(unsettled({ kind: "checking" }), true);
	assert.equal(unsettled({ kind: "holding" }), true);
	assert.equal(unsettled({ kind: "ended" }), false);
});

// Seed 004: "`follow_up` waits for the next turn boundary"; a follow-up queued for a child
// about to settle reaches it before it ends, and the child continues.
test("a turn that ends with steering queued waits for it, then works on and ends after", () => {
	assert.deepEqual(
		run({ type: "turn-started" }, ended(answer("stop"), { steeringQueued: true }), { type: "turn-started" }, ended(answer("stop"))),
		["working:none", "steering:await-steering", "working:none", "ended:end"],
	);
	assert.equal(unsettled({ kind: "steering" }), true);
});

test("steering that never came ends the child as the turn would have, check first", () => {
	assert.deepEqual(run({ type: "turn-started" }, ended(answer("stop"), { steeringQueued: true }), steeringDone()), [
		"working:none",
		"steering:await-steering",
		"ended:end",
	]);
	assert.deepEqual(step({ kind: "steering" }, steeringDone({ hasCheck: true })), { state: { kind: "checking" }, action: { type: "check" } });
	assert.deepEqual(step({ kind: "steering" }, steeringDone({ resultsQueued: true })), { state: { kind: "working" }, action: { type: "deliver" } });
	// Only a child that waits for steering takes its end.
	assert.deepEqual(step({ kind: "working" }, steeringDone()), { state: { kind: "working" }, action: { type: "none" } });
});

test("own children's results go first, and a signal never waits for steering", () => {
	assert.equal(step({ kind: "working" }, ended(answer("stop"), { steeringQueued: true, resultsQueued: true })).action.type, "deliver");
	assert.deepEqual(step({ kind: "working" }, ended(answer("stop"), { steeringQueued: true, terminating: true })), {
		state: { kind: "ended" },
		action: { type: "end", completion: { type: "done" } },
	});
});
