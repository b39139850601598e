/**
 * Seed 000's `subagent` tool: one tool, five actions, registered by the Pi Herd face instead of
 * seed 003's tools (they share the name). Every answer is one JSON document: `ok: true` with the
 * action's fields, or `ok: false` with a structured error (`category`, `message`, `operation`,
 * `field`), never an unstructured exception for a public error.
 */
import type { AgentToolResult, ExtensionAPI, ToolDefinition } from "@earendil-works/pi-coding-agent";
import type { JsonObject } from "../bins.ts";
import { perform } from "./actions.ts";
import { PARAMETERS, Refusal, validate } from "./validate.ts";

export const DESCRIPTION =
	"Manage Pi Herd workers with exactly five actions: list, assign, steer, reply, close. " +
	"assign starts a fresh worker from an agent definition ({action, agent, task, label?, cwd?, files?, reusable?, fork?, timeoutMs?}), " +
	"restores a saved session ({action, session, task, label?, cwd?, files?, reusable?, timeoutMs?}) or gives a ready reusable worker its next task ({action, label, task, files?}). " +
	"steer ({action, label, message, files?}) changes a working worker's current assignment; reply ({action, label, message, files?}) answers its one outstanding ask_owner question; " +
	"close ({action, label}) ends one directly owned worker and its own workers first; list ({action}) shows the workers and agent definitions. " +
	"Labels match ^[a-z][a-z0-9_-]{0,31}$. Unknown fields or combinations fail with invalid_request and change nothing. " +
	"Each accepted assignment delivers one final result later as a subagent_result message beginning with its label, agent, request and status; do not poll.";

function answer(doc: JsonObject): AgentToolResult<JsonObject> {
	return { content: [{ type: "text", text: JSON.stringify(doc) }], details: doc };
}

/** The tool; `binDir` holds herd's binaries. */
export function piHerdTool(binDir: string, pi: ExtensionAPI): ToolDefinition {
	return {
		name: "subagent",
		label: "subagent",
		description: DESCRIPTION,
		parameters: PARAMETERS as unknown as ToolDefinition["parameters"],
		promptSnippet: "Assign, steer, answer, list and close Pi Herd workers; results arrive later as messages",
		promptGuidelines: [
			"After `subagent` assign, do not poll: the worker's one result arrives as a `subagent_result` message beginning with its envelope.",
			"Use a worker's `label` for control; pane and session ids are evidence only.",
		],
		async execute(_id, params, _signal, _onUpdate, ctx) {
			try {
				return answer(await perform({ pi, ctx, binDir }, validate(params)));
			} catch (err) {
				if (err instanceof Refusal) return answer({ ok: false, error: { ...err.error } as JsonObject });
				return answer({ ok: false, error: { category: "internal_failure", operation: "subagent", message: String(err instanceof Error ? err.message : err) } });
			}
		},
	};
}
