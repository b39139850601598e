/**
 * The files a child writes beside its session for the host (docs/sidecars.md, "Beside a child's
 * session file"): the completion sidecar `<session>.exit`, the count of accept checks
 * `<session>.accept-tries.json`, and a persistent specialist's task events `<session>.tasks`. A
 * failed write never breaks the session: the host has the process exit, the shell sentinel and the
 * transcript too.
 */

import type { AcceptTries, Completion as CompletionFile, TaskEvent } from "../generated/protocol.ts";
import { SESSION_FILE_VERSIONS, SESSION_FILES } from "../generated/run-files.ts";
import { appendPrivate, writeAtomic } from "./files.ts";

/** How much of a task's final text goes into its task event. */
const TASK_MESSAGE_CHARS = 16000;

/** What `<session>.exit` says: the format's variants, each with every field the child writes. */
export type Completion = Required<CompletionFile>;

/** The completion sidecar, written at most once. */
export class ExitSidecar {
	private written = false;

	constructor(private readonly sessionFile: string) {}

	get isWritten(): boolean {
		return this.written;
	}

	write(completion: Completion): void {
		if (this.written || !this.sessionFile) return;
		this.written = true;
		try {
			writeAtomic(`${this.sessionFile}${SESSION_FILES.exit}`, `${JSON.stringify(completion)}\n`, "exit");
		} catch {
			// The host still sees the process exit and the shell sentinel.
		}
	}
}

/**
 * Records the child's own accept checks in `<session>.accept-tries.json`, after each one:
 * `{"version":1,"tries":N,"last":"pass"|"fail"}`. The parent's verdict reads it for the
 * `Check: accepted (N tries)` line; a failed write only loses that count.
 */
export function writeAcceptTries(sessionFile: string, tries: number, passed: boolean): void {
	if (!sessionFile) return;
	try {
		writeAtomic(
			`${sessionFile}${SESSION_FILES.acceptTries}`,
			`${JSON.stringify({ version: SESSION_FILE_VERSIONS.acceptTries, tries, last: passed ? "pass" : "fail" } satisfies AcceptTries)}\n`,
			`tries${tries}`,
		);
	} catch {
		// The verdict then names no count.
	}
}

export type TaskEventType = TaskEvent["type"];

/** Appends a persistent task event to `<session>.tasks`. */
export function appendTaskEvent(
	sessionFile: string,
	generationId: string,
	type: TaskEventType,
	task: string,
	message?: string,
): void {
	if (!sessionFile || !task) return;
	const event: TaskEvent = {
		version: SESSION_FILE_VERSIONS.tasks,
		type,
		task,
		generation: generationId,
		at: new Date().toISOString(),
	};
	if (message !== undefined) event.message = message.slice(0, TASK_MESSAGE_CHARS);
	try {
		appendPrivate(`${sessionFile}${SESSION_FILES.tasks}`, `${JSON.stringify(event)}\n`);
	} catch {
		// The host reads the session transcript too.
	}
}
