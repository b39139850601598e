/**
 * A persistent specialist's inbox (docs/protocol.md, "A persistent specialist's files"): tasks and
 * stop directives arrive as `<session>.task-inbox.<12 digits>.json`; the lowest is claimed
 * (renamed to `.consuming`), delivered and removed, one task at a time. A stop may be taken while
 * a task runs: it waits for the task's end.
 */
import * as fs from "node:fs";
import * as path from "node:path";

import type { TaskInbox } from "../generated/protocol.ts";
import { SESSION_FILE_READ_LIMITS, SESSION_FILE_VERSIONS, TASK_INBOX_PREFIX, TASK_INBOX_SUFFIX } from "../generated/run-files.ts";
import { decoded, literal, object, string } from "../shared/decode.ts";
import { readSmall } from "./files.ts";

/** The idle poll of the inbox. */
const INBOX_POLL_MS = 1000;

/** One inbox entry. */
export type InboxEntry =
	| { readonly type: "task"; readonly task: string; readonly message: string }
	| { readonly type: "stop"; readonly task: string };

/** What the inbox asks of the specialist. */
export interface InboxHandlers {
	/** Whether nothing can be taken now: Pi is quitting, or has no session to deliver into. */
	closed(): boolean;
	/** Whether a task runs (only a stop is taken then). */
	busy(): boolean;
	/** Delivers an entry. */
	take(entry: InboxEntry): void;
}

/** An inbox entry as herd-launch and herd-watch write it (docs/schemas/task-inbox.schema.json). */
const taskInbox = object<TaskInbox>({ version: literal(SESSION_FILE_VERSIONS.taskInbox), type: literal("task", "stop"), task: string, message: string });

function entryOf(text: string | undefined): InboxEntry | undefined {
	const entry = decoded(text, taskInbox, "an inbox entry", SESSION_FILE_READ_LIMITS.taskInbox);
	if (!entry) return undefined;
	return entry.type === "stop" ? { type: "stop", task: entry.task } : { type: "task", task: entry.task, message: entry.message };
}

export class Inbox {
	private timer: ReturnType<typeof setInterval> | undefined = undefined;
	private readonly dir: string;
	private readonly prefix: string;

	constructor(
		sessionFile: string,
		private readonly handlers: InboxHandlers,
	) {
		this.dir = path.dirname(sessionFile);
		this.prefix = `${path.basename(sessionFile)}${TASK_INBOX_PREFIX}`;
	}

	start(): void {
		if (this.timer) return;
		// Claims left by an earlier process go back to the queue.
		for (const name of this.list(`${TASK_INBOX_SUFFIX}.consuming`)) {
			try {
				fs.renameSync(path.join(this.dir, name), path.join(this.dir, name.slice(0, -".consuming".length)));
			} catch {
				// Someone else took it.
			}
		}
		this.timer = setInterval(() => this.poll(), INBOX_POLL_MS);
		this.timer.unref();
	}

	stop(): void {
		if (this.timer) clearInterval(this.timer);
		this.timer = undefined;
	}

	private list(suffix: string): string[] {
		try {
			return fs
				.readdirSync(this.dir)
				.filter(
					(n) =>
						n.startsWith(this.prefix) &&
						n.endsWith(suffix) &&
						/^\d{12}$/.test(n.slice(this.prefix.length, this.prefix.length + 12)),
				)
				.sort();
		} catch {
			return [];
		}
	}

	private poll(): void {
		if (this.handlers.closed()) return;
		const busy = this.handlers.busy();
		const name = this.list(TASK_INBOX_SUFFIX)[0];
		if (name === undefined) return;
		const file = path.join(this.dir, name);
		const claimed = `${file}.consuming`;
		let text: string | undefined;
		try {
			// Peek at the type: a stop may be taken while busy (it waits for the task's end).
			if (busy && !(readSmall(file, SESSION_FILE_READ_LIMITS.taskInbox) ?? "").includes('"stop"')) return;
			fs.renameSync(file, claimed);
			text = readSmall(claimed, SESSION_FILE_READ_LIMITS.taskInbox);
		} catch {
			return;
		}
		const entry = entryOf(text);
		if (!entry) {
			try {
				fs.renameSync(claimed, `${file}.invalid`);
			} catch {
				// Left claimed; the next start puts it back.
			}
			return;
		}
		try {
			fs.unlinkSync(claimed);
		} catch {
			// Already removed.
		}
		this.handlers.take(entry);
	}
}
