/**
 * `<session>.steering-queued.json`: the steering herd-watch queued for the child's next turn
 * boundary (docs/sidecars.md). An auto-exit child reads it when its turn settles: a follow-up
 * queued for it (seed 004: "`follow_up` waits for the next turn boundary") is that boundary's,
 * so the child stays open for herd-watch to type it and works on, instead of ending with the
 * message never given. herd-watch lists a request until it has typed it and judged its receipt,
 * so a child that took the message has started its turn before the list empties.
 */
import type { SteeringQueued } from "../generated/protocol.ts";
import { SESSION_FILE_READ_LIMITS, SESSION_FILE_VERSIONS } from "../generated/run-files.ts";
import { array, decoded, literal, object, string } from "../shared/decode.ts";
import { readSmall } from "./files.ts";

/** The longest a settled child waits for queued steering to be typed (a watcher that is not running types nothing). */
export const STEERING_HOLD_MS = 30_000;
/** How often a waiting child looks whether steering is still queued. */
export const STEERING_POLL_MS = 200;

const shape = object<SteeringQueued>({
	version: literal(SESSION_FILE_VERSIONS.steeringQueued),
	runningChildId: string,
	requestIds: array(string),
});

/** Whether `file` lists steering queued for run `runId`; a missing, foreign or broken file lists none. */
export function steeringQueued(file: string, runId: string): boolean {
	if (!file) return false;
	const limit = SESSION_FILE_READ_LIMITS.steeringQueued;
	const queued = decoded(readSmall(file, limit), shape, file, limit);
	return queued !== undefined && queued.runningChildId === runId && queued.requestIds.length > 0;
}
