/**
 * `<session>.needs-input.json`: whether the child waits for a person, from Pi's own events. A
 * dialog is open between Pi 1.6's `ui_prompt_start` and `ui_prompt_end`; the run settled at
 * `agent_settled`; new work (`input`, `agent_start`) ends both. herd reads this file, never the
 * pane's screen, so a child that is merely slow writes nothing here and is not waiting.
 *
 * Written atomically, like every file the child writes, only when the state changes; a failed
 * write never breaks the session (the host then sees the child as working).
 */
import type { NeedsInputFile } from "../generated/protocol.ts";
import { SESSION_FILE_READ_LIMITS, SESSION_FILE_VERSIONS } from "../generated/run-files.ts";
import { decoded, integer, object, string } from "../shared/decode.ts";
import { label, readSmall, writeAtomic } from "./files.ts";

/** What a file left by an earlier process of this run carries on: its sequence. */
const PREVIOUS = object<NeedsInputFile>({ runningChildId: string, sequence: integer });

export type ChildState = NeedsInputFile["state"];

export class NeedsInput {
	private sequence = 0;
	/** The open dialog, outermost: Pi brackets nested prompts as one. */
	private dialog: { kind: string | undefined; title: string | undefined; since: number } | undefined = undefined;
	/** Since when the run has been settled, while nothing new started. */
	private settledSince: number | undefined = undefined;
	private written: string | undefined = undefined;

	/** `file` is `<session>.needs-input.json`; `runId` the run it speaks for. */
	constructor(
		private readonly file: string,
		private readonly runId: string,
		private readonly now: () => number = Date.now,
	) {
		// The sequence goes on from a file of this run (a resumed or restarted child).
		const previous = file ? decoded(readSmall(file, SESSION_FILE_READ_LIMITS.needsInput), PREVIOUS, file, SESSION_FILE_READ_LIMITS.needsInput) : undefined;
		if (previous?.runningChildId === runId) this.sequence = previous.sequence;
	}

	/** Pi opened a dialog (`ui_prompt_start`). */
	dialogOpened(kind: unknown, title: unknown): void {
		this.dialog ??= { kind: label(kind), title: label(title), since: this.now() };
		this.write();
	}

	/** Pi closed it (`ui_prompt_end`). */
	dialogClosed(): void {
		this.dialog = undefined;
		this.write();
	}

	/** The run settled (`agent_settled`): nothing runs until someone gives the child work. */
	settled(): void {
		this.settledSince ??= this.now();
		this.write();
	}

	/** New work began (`input`, `agent_start`). */
	working(): void {
		this.settledSince = undefined;
		this.write();
	}

	/** What the file says now. */
	get state(): ChildState {
		if (this.dialog) return "dialog";
		return this.settledSince !== undefined ? "settled" : "working";
	}

	private write(): void {
		if (!this.file) return;
		const state = this.state;
		const doc: NeedsInputFile = {
			version: SESSION_FILE_VERSIONS.needsInput,
			runningChildId: this.runId,
			sequence: this.sequence + 1,
			state,
			since: state === "dialog" ? (this.dialog?.since ?? this.now()) : state === "settled" ? (this.settledSince ?? this.now()) : this.now(),
		};
		if (state === "dialog") {
			if (this.dialog?.kind) doc.kind = this.dialog.kind;
			if (this.dialog?.title) doc.title = this.dialog.title;
		}
		// The same state again is no news (a second `input` of one run).
		const key = `${state}|${doc.kind ?? ""}|${doc.title ?? ""}|${state === "working" ? "" : doc.since}`;
		if (key === this.written) return;
		try {
			writeAtomic(this.file, `${JSON.stringify(doc)}\n`, `input${doc.sequence}`);
			this.sequence = doc.sequence;
			this.written = key;
		} catch {
			// The host sees the child as working.
		}
	}
}
