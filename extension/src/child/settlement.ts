/**
 * The settlement of an auto-exit child, as an explicit state machine (the TypeScript side of
 * what `projection.rs::Lifecycle` is for a run in herd-watch).
 *
 * A child's turn ending is not yet its end: results of children it launched come back as turns
 * of their own, a failed accept check sends it back to work, and it ends only when a turn settles
 * with nothing left to do. [`step`] is the whole rule: it takes the state and what happened and
 * returns the next state and the one thing to do; the extension does it and feeds back what it
 * learned (a check's verdict, a result that arrived).
 *
 * ```text
 *            turn-started              turn-ended: own results queued → deliver
 *   idle ───────────────▶ working ◀──────────────────────────────────────────┐
 *    ▲                     │  │ turn-ended: own children outstanding          │
 *    │ turn-ended:         │  └──────────────▶ holding ── result-arrived ──────┘
 *    │ aborted             │ turn-ended: a check to run
 *    └─────────────────────┤──────────────▶ checking ── check-done: failed, retries left → retry
 *                          │                   │                      (back to working)
 *                          │ turn-ended:       │ check-done: passed, or no retry left
 *                          ▼ error or done     ▼
 *                        ended ◀───────────────┘
 *
 *   working ── turn-ended: steering queued ──▶ steering ── turn-started ──▶ working
 *                                                 │ steering-done (none came)
 *                                                 ▼ as a turn's end without it
 * ```
 *
 * A follow-up the parent queued for the child's next turn boundary (seed 004: "`follow_up`
 * waits for the next turn boundary") is that boundary's: a turn that ends while one is queued
 * does not end the child; it waits (`steering`) for herd-watch to type it, and works on.
 */
import type { Answer } from "./messages.ts";
import type { Completion } from "./sidecars.ts";

export type SettlementState =
	/** No turn was asked for yet, or the last one was interrupted: nothing to settle. */
	| { readonly kind: "idle" }
	/** A turn runs, or the next one was asked for. */
	| { readonly kind: "working" }
	/** The accept check runs after a turn. */
	| { readonly kind: "checking" }
	/** The turn settled; children the child launched have yet to deliver. */
	| { readonly kind: "holding" }
	/** The turn settled with a follow-up queued for it; herd-watch types it. */
	| { readonly kind: "steering" }
	/** The completion sidecar is written and Pi was asked to quit. */
	| { readonly kind: "ended" };

export type SettlementEvent =
	| { readonly type: "turn-started" }
	| {
			readonly type: "turn-ended";
			/** The turn's last assistant message. */
			readonly answer: Answer | undefined;
			/** Results of the child's own children wait to be given to it. */
			readonly resultsQueued: boolean;
			/** Own children are still being waited for. */
			readonly childrenOutstanding: boolean;
			/** herd-watch queued steering for this turn boundary (`<session>.steering-queued.json`). */
			readonly steeringQueued: boolean;
			/** The run has an accept check. */
			readonly hasCheck: boolean;
			/** A signal is ending Pi: nothing more is started. */
			readonly terminating: boolean;
	  }
	| {
			/** The queued steering is no longer waiting, and no turn started from it. */
			readonly type: "steering-done";
			readonly resultsQueued: boolean;
			readonly childrenOutstanding: boolean;
			readonly hasCheck: boolean;
			readonly terminating: boolean;
	  }
	| {
			readonly type: "check-done";
			readonly passed: boolean;
			/** Another turn is allowed (`maxRetries`). */
			readonly retriesLeft: boolean;
			readonly terminating: boolean;
	  }
	| {
			readonly type: "result-arrived";
			readonly terminating: boolean;
			/** Pi is idle, so a turn can start now. */
			readonly idle: boolean;
	  };

export type SettlementAction =
	| { readonly type: "none" }
	/** Write the completion sidecar and quit. */
	| { readonly type: "end"; readonly completion: Completion }
	/** Start a turn with the next queued result of an own child. */
	| { readonly type: "deliver" }
	/** Run the accept check. */
	| { readonly type: "check" }
	/** Start a turn with the failed check's output. */
	| { readonly type: "retry" }
	/** Wait for the queued steering to be typed (or to stop waiting). */
	| { readonly type: "await-steering" };

/** What the error sidecar says when the provider gave no message. */
const PROVIDER_FAILED = "the provider failed and retries were exhausted";

const none: SettlementAction = { type: "none" };
const done: SettlementAction = { type: "end", completion: { type: "done" } };

/** The next state and what to do, for `event` in `state`. */
export function step(
	state: SettlementState,
	event: SettlementEvent,
): { readonly state: SettlementState; readonly action: SettlementAction } {
	if (state.kind === "ended") return { state, action: none };
	switch (event.type) {
		case "turn-started":
			// A turn cannot start while the check runs: the agent waits for its handler.
			return state.kind === "checking" ? { state, action: none } : { state: { kind: "working" }, action: none };
		case "turn-ended": {
			if (state.kind === "checking") return { state, action: none };
			const stopReason = event.answer?.stopReason;
			if (stopReason === "aborted") {
				// An interrupted run stays open, whatever it is.
				return { state: { kind: "idle" }, action: none };
			}
			if (stopReason === "error") {
				// A provider error ends the run whatever is outstanding (docs/lifecycle.md, "Children that launch children").
				const errorMessage = event.answer?.errorMessage || PROVIDER_FAILED;
				return {
					state: { kind: "ended" },
					action: { type: "end", completion: { type: "error", errorMessage, stopReason: "error" } },
				};
			}
			// Children this child launched deliver first: each result is a turn of its own.
			if (!event.terminating && event.resultsQueued) return { state: { kind: "working" }, action: { type: "deliver" } };
			if (!event.terminating && event.childrenOutstanding) return { state: { kind: "holding" }, action: none };
			// Then what the parent queued for this boundary, before the check judges the work.
			if (!event.terminating && event.steeringQueued) return { state: { kind: "steering" }, action: { type: "await-steering" } };
			return afterWork(event);
		}
		case "steering-done":
			if (state.kind !== "steering") return { state, action: none };
			if (!event.terminating && event.resultsQueued) return { state: { kind: "working" }, action: { type: "deliver" } };
			if (!event.terminating && event.childrenOutstanding) return { state: { kind: "holding" }, action: none };
			return afterWork(event);
		case "check-done":
			if (state.kind !== "checking") return { state, action: none };
			if (!event.passed && event.retriesLeft && !event.terminating) {
				return { state: { kind: "working" }, action: { type: "retry" } };
			}
			// A check that still fails with no retry left ends the run too: the parent's
			// re-check gives the verdict.
			return { state: { kind: "ended" }, action: done };
		case "result-arrived":
			if (state.kind === "holding" && !event.terminating && event.idle) {
				return { state: { kind: "working" }, action: { type: "deliver" } };
			}
			// Queued: given at the next settlement.
			return { state, action: none };
	}
}

/** A settled turn with nothing left to give the child: the check, else the end. */
function afterWork(event: { readonly hasCheck: boolean }): { readonly state: SettlementState; readonly action: SettlementAction } {
	if (event.hasCheck) return { state: { kind: "checking" }, action: { type: "check" } };
	return { state: { kind: "ended" }, action: done };
}

/** Whether a child in `state` still has settling to do (a quit waits for it). */
export function unsettled(state: SettlementState): boolean {
	return state.kind === "working" || state.kind === "checking" || state.kind === "holding" || state.kind === "steering";
}
