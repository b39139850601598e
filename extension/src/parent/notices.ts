/**
 * Notices that wait for a live parent.
 *
 * A notice belongs to one stop attempt and waits for a live parent across `/reload` and a
 * replaced session; a failed hand-over is contained and tried again; a new stop attempt, the
 * run's verified exit, or quitting cancels the old notice (docs/lifecycle.md, Notices to the
 * parent; docs/recovery.md). A notice herd emits
 * (a stop that did not confirm, a fallback, queued steering delivered, no progress) is queued in
 * the hub, which outlives an instance, and handed to the live session when there is one; one
 * whose hand-over throws stays queued for the next chance. The run's result (its exit verified)
 * and a new stop of the run drop its waiting notices; quitting drops them all.
 *
 * The queue is plain data on the hub, so an instance loaded by `/reload` works on the queue an
 * earlier one filled.
 */

/** One notice of one run of one artifacts directory. */
export interface Notice {
	dir: string;
	runId: string;
	message: string;
}

/** At most this many notices wait; the oldest go first when more arrive. */
export const NOTICES_MAX = 100;

/** Queues `notice` behind the others. */
export function queue(waiting: Notice[], notice: Notice): void {
	waiting.push(notice);
	if (waiting.length > NOTICES_MAX) waiting.splice(0, waiting.length - NOTICES_MAX);
}

/** Drops the waiting notices of run `runId` of `dir`. */
export function cancelRun(waiting: Notice[], dir: string, runId: string): void {
	for (let i = waiting.length - 1; i >= 0; i--) {
		const notice = waiting[i];
		if (notice && notice.dir === dir && notice.runId === runId) waiting.splice(i, 1);
	}
}

/**
 * Hands the waiting notices to `send` in order. A notice `send` accepted leaves the queue; at the
 * first that throws, it and the ones after it stay, to be tried again. Returns how many went.
 */
export function handOver(waiting: Notice[], send: (notice: Notice) => void): number {
	let sent = 0;
	while (waiting.length > 0) {
		const notice = waiting[0];
		if (!notice) break;
		try {
			send(notice);
		} catch {
			break;
		}
		waiting.shift();
		sent++;
	}
	return sent;
}
