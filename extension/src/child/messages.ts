/**
 * The last assistant message of a run, read defensively: Pi 0.73 and 1.6 write the same
 * `role`, `content`, `stopReason` and `errorMessage`, and 1.6 adds `role: "system"` messages,
 * which are never the child's answer.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";

import { array, decodeValue, literal, object, optional, string } from "../shared/decode.ts";

/** What the child reads of an assistant message. */
export interface Answer {
	/** `stop`, `length`, `toolUse`, `error` or `aborted`. */
	readonly stopReason: string | undefined;
	readonly errorMessage: string | undefined;
	/** Its text blocks, joined by newlines. */
	readonly text: string;
}

/** An assistant message as far as the child reads it. */
interface AssistantMessage {
	role: "assistant";
	content?: { type: string; text?: string }[];
	stopReason?: string;
	errorMessage?: string;
}

const assistantMessage = object<AssistantMessage>({
	role: literal("assistant"),
	content: optional(array(object({ type: string, text: optional(string) }))),
	stopReason: optional(string),
	errorMessage: optional(string),
});

/** A session entry that holds a message. */
interface MessageEntry {
	type: "message";
	message: unknown;
}

const messageEntry = object<MessageEntry>({ type: literal("message") });

function answerOf(message: unknown): Answer | undefined {
	const read = decodeValue(message, assistantMessage, "a message");
	if (!read.ok) return undefined;
	const { content = [], stopReason, errorMessage } = read.value;
	const text = content
		.filter((block) => block.type === "text")
		.map((block) => block.text)
		.filter((t) => t !== undefined)
		.join("\n");
	return { stopReason, errorMessage, text };
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
		const entry = decodeValue(entries[i], messageEntry, "a session entry");
		if (entry.ok) {
			const answer = answerOf(entry.value.message);
			if (answer) return answer;
		}
	}
	return undefined;
}
