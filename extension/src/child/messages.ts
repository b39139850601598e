/**
 * The last assistant message of a run, read defensively: Pi 0.73 and 1.6 write the same
 * `role`, `content`, `stopReason` and `errorMessage`, and 1.6 adds `role: "system"` messages,
 * which are never the child's answer.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";

import { isObject, stringAt } from "./files.ts";

/** What the child reads of an assistant message. */
export interface Answer {
	/** `stop`, `length`, `toolUse`, `error` or `aborted`. */
	readonly stopReason: string | undefined;
	readonly errorMessage: string | undefined;
	/** Its text blocks, joined by newlines. */
	readonly text: string;
}

function answerOf(message: unknown): Answer | undefined {
	if (!isObject(message) || message.role !== "assistant") return undefined;
	const content = Array.isArray(message.content) ? message.content : [];
	const text = content
		.filter(isObject)
		.filter((block) => block.type === "text")
		.map((block) => stringAt(block, "text"))
		.filter((t) => t !== undefined)
		.join("\n");
	return {
		stopReason: stringAt(message, "stopReason"),
		errorMessage: stringAt(message, "errorMessage"),
		text,
	};
}

/** The last assistant message of a list of messages (`agent_end`'s). */
export function lastAnswer(messages: unknown): Answer | undefined {
	if (!Array.isArray(messages)) return undefined;
	for (let i = messages.length - 1; i >= 0; i--) {
		const answer = answerOf(messages[i]);
		if (answer) return answer;
	}
	return undefined;
}

/** The last assistant message of the session's current branch. */
export function sessionLastAnswer(ctx: ExtensionContext): Answer | undefined {
	let entries: readonly unknown[];
	try {
		entries = ctx.sessionManager.getBranch();
	} catch {
		// No session state to read.
		return undefined;
	}
	for (let i = entries.length - 1; i >= 0; i--) {
		const entry = entries[i];
		if (isObject(entry) && entry.type === "message") {
			const answer = answerOf(entry.message);
			if (answer) return answer;
		}
	}
	return undefined;
}
