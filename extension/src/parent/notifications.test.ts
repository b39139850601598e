/**
 * Notices once per change: the edge, the delivery window, the cooldown, suppression while the
 * person looks at the child's pane, and the off switch.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import type { WatchEvent, WatchEventLabel, WatchEventOutcome } from "../generated/protocol.ts";
import { COOLDOWN_MS, DELIVERY_WINDOW_MS, type Notice, Notifier, type Shown, notificationsEnabled } from "./notifications.ts";

/** A notifier on a hand-moved clock, recording what it showed where. */
function rig(opts: { enabled?: () => boolean; surface?: Shown } = {}) {
	let clock = 1_000_000;
	const timers: { at: number; fn: () => void }[] = [];
	const onSurface: Notice[] = [];
	const inPi: Notice[] = [];
	const notifier = new Notifier({
		enabled: opts.enabled ?? (() => true),
		now: () => clock,
		later: (fn, ms) => timers.push({ at: clock + ms, fn }),
		surface: async (n) => {
			onSurface.push(n);
			return opts.surface ?? "shown";
		},
		inPi: (n) => inPi.push(n),
	});
	const advance = async (ms: number) => {
		clock += ms;
		for (const t of timers.splice(0).filter((t) => t.at <= clock || (timers.push(t), false))) t.fn();
		await new Promise((resolve) => setImmediate(resolve));
	};
	return { notifier, onSurface, inPi, advance };
}

const waiting = (runId = "r1"): WatchEvent => ({ event: "needs_input", run_id: runId, name: "Scout", reason: "dialog", since_ms: 1, message: '"Scout" is waiting for input: dialog.' });
const status = (label: WatchEventLabel, runId = "r1"): WatchEvent => ({ event: "status", run_id: runId, name: "Scout", label, detail: null, since_ms: null });
const result = (outcome: WatchEventOutcome, runId = "r1"): WatchEvent => ({ event: "result", run_id: runId, name: "Scout", outcome, key: runId, message: "", details: {} });

test("a run that starts waiting is told once, on the surface and in Pi", async () => {
	const { notifier, onSurface, inPi, advance } = rig();
	notifier.observe("/art", waiting());
	// The same state said again (a restarted follower) is no new transition.
	notifier.observe("/art", waiting());
	notifier.observe("/art", status("waiting for input"));
	await advance(DELIVERY_WINDOW_MS);
	assert.deepEqual(
		onSurface.map((n) => n.text),
		['"Scout" is waiting for input: dialog.'],
	);
	assert.equal(inPi.length, 1);
});

test("leaving the state and coming back is a new transition, after the cooldown", async () => {
	const { notifier, onSurface, advance } = rig();
	notifier.observe("/art", waiting());
	await advance(DELIVERY_WINDOW_MS);
	notifier.observe("/art", status("active"));
	notifier.observe("/art", waiting());
	await advance(DELIVERY_WINDOW_MS);
	// Within the cooldown: not told again.
	assert.equal(onSurface.length, 1);
	await advance(COOLDOWN_MS);
	notifier.observe("/art", status("active"));
	notifier.observe("/art", waiting());
	await advance(DELIVERY_WINDOW_MS);
	assert.equal(onSurface.length, 2);
	// Another run has a cooldown of its own.
	notifier.observe("/art", waiting("r2"));
	await advance(DELIVERY_WINDOW_MS);
	assert.equal(onSurface.length, 3);
});

test("a result delivered as a message within the second is not told; one held back is", async () => {
	const { notifier, onSurface, advance } = rig();
	notifier.observe("/art", result("completed"));
	notifier.delivered("/art", "r1");
	await advance(DELIVERY_WINDOW_MS);
	assert.equal(onSurface.length, 0);
	// A help request: the message and its needs_input come together; nothing either.
	notifier.delivered("/art", "r3");
	notifier.observe("/art", result("help", "r3"));
	notifier.observe("/art", waiting("r3"));
	await advance(DELIVERY_WINDOW_MS);
	assert.equal(onSurface.length, 0);
	// No live session took it: the person is told.
	notifier.observe("/art", result("failed", "r2"));
	await advance(DELIVERY_WINDOW_MS);
	assert.deepEqual(
		onSurface.map((n) => [n.kind, n.text]),
		[["failed", '"Scout" failed.']],
	);
	// A run ends once.
	notifier.observe("/art", result("failed", "r2"));
	await advance(DELIVERY_WINDOW_MS + COOLDOWN_MS);
	assert.equal(onSurface.length, 1);
});

test("a waiting run that moved on within the second is not told", async () => {
	const { notifier, onSurface, advance } = rig();
	notifier.observe("/art", waiting());
	notifier.observe("/art", status("active"));
	await advance(DELIVERY_WINDOW_MS);
	assert.equal(onSurface.length, 0);
});

test("while the person looks at the child's pane nothing is shown in Pi either", async () => {
	const { notifier, onSurface, inPi, advance } = rig({ surface: "looking" });
	notifier.observe("/art", waiting());
	await advance(DELIVERY_WINDOW_MS);
	assert.equal(onSurface.length, 1);
	assert.equal(inPi.length, 0);
});

test("one setting turns everything off", async () => {
	let on = false;
	const { notifier, onSurface, inPi, advance } = rig({ enabled: () => on });
	notifier.observe("/art", waiting());
	await advance(DELIVERY_WINDOW_MS);
	assert.equal(onSurface.length + inPi.length, 0);
	on = true;
	notifier.observe("/art", waiting("r2"));
	await advance(DELIVERY_WINDOW_MS);
	assert.equal(onSurface.length, 1);

	assert.equal(notificationsEnabled({}, {}), true);
	assert.equal(notificationsEnabled({ HERD_NOTIFY: "0" }, {}), false);
	assert.equal(notificationsEnabled({ HERD_NOTIFY: "off" }, {}), false);
	assert.equal(notificationsEnabled({}, { herd: { notifications: false } }), false);
	// The environment wins over the setting.
	assert.equal(notificationsEnabled({ HERD_NOTIFY: "1" }, { herd: { notifications: false } }), true);
});
