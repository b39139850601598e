/**
 * The child-only tools: `caller_ping` (always) and `subagent_done` (for children that do not
 * exit by themselves and for persistent specialists).
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";

const CALLER_PING_DESCRIPTION =
	"Send a help request to the parent agent and exit this session. Use it when you cannot continue without the parent's answer.";

/** `caller_ping` in a session herd did not start: it says so. */
export function registerOutsideHerd(pi: ExtensionAPI): void {
	pi.registerTool({
		name: "caller_ping",
		label: "Caller ping",
		description: "Send a help request to the parent agent and exit this session.",
		parameters: Type.Object({ message: Type.String({ description: "What you need help with" }) }),
		async execute() {
			throw new Error("caller_ping is only available inside a subagent started by herd");
		},
	});
}

/** What the tools do in a child. */
export interface ChildToolHandlers {
	/** `caller_ping`: the help request; returns the tool's answer to the model. */
	ping(message: string, ctx: ExtensionContext): string;
	/** `subagent_done`: returns the tool's answer to the model. */
	done(ctx: ExtensionContext): string;
}

/** Registers `caller_ping`, and `subagent_done` when `withDone`. Both end the turn. */
export function registerChildTools(pi: ExtensionAPI, withDone: boolean, handlers: ChildToolHandlers): void {
	pi.registerTool({
		name: "caller_ping",
		label: "Caller ping",
		description: CALLER_PING_DESCRIPTION,
		promptSnippet: "Ask the parent agent for help (ends this session)",
		parameters: Type.Object({ message: Type.String({ description: "What you need help with" }) }),
		async execute(_id, params, _signal, _onUpdate, ctx) {
			// Pi validates the arguments; a model's text is still no promise.
			const message = (typeof params.message === "string" ? params.message.trim() : "") || "(no message)";
			return {
				content: [{ type: "text", text: handlers.ping(message, ctx) }],
				details: { message },
				terminate: true,
			};
		},
	});
	if (!withDone) return;
	pi.registerTool({
		name: "subagent_done",
		label: "Subagent done",
		description:
			"Call this tool when you have completed your task. Your final message before it is your report to the parent.",
		promptSnippet: "Finish this subagent's task",
		parameters: Type.Object({}),
		async execute(_id, _params, _signal, _onUpdate, ctx) {
			return { content: [{ type: "text", text: handlers.done(ctx) }], details: {}, terminate: true };
		},
	});
}
