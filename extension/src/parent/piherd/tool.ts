/**
 * Pi Herd's `subagent` tool (docs/pi-herd.md): one tool, five actions, registered by the Pi Herd
 * face instead of herd's own tools (they share the name). Every answer is one JSON document: `ok:
 * true` with the action's fields, or `ok: false` with a structured error (`category`, `message`,
 * `operation`, `field`), never an unstructured exception for a public error.
 */
import type { AgentToolResult, ExtensionAPI, ToolDefinition } from "@earendil-works/pi-coding-agent";
import * as fs from "node:fs";
import { type JsonObject, decode, object, string } from "../../shared/decode.ts";
import { perform } from "./actions.ts";
import { Refusal, validate } from "./validate.ts";

/**
 * The tool's schema, its root `description` the tool's: the one source herd-docs renders into
 * `docs/pi-herd.md`. Its types are the first check; `validate.ts` decides the combinations.
 */
const SCHEMA_FILE = new URL("./subagent.schema.json", import.meta.url);

/** The tool's schema as far as the face reads it: a JSON Schema object with the tool's description. */
export interface ToolSchema {
	readonly description: string;
	readonly [key: string]: unknown;
}

const toolSchemaShape = object<ToolSchema>({ description: string });

/** The schema file, read once per load of the extension. */
export function toolSchema(): ToolSchema {
	const doc = decode(fs.readFileSync(SCHEMA_FILE, "utf8"), toolSchemaShape, SCHEMA_FILE.pathname);
	if (!doc.ok) throw new Error(`${SCHEMA_FILE.pathname} is not the Pi Herd tool's schema: ${doc.error}`);
	return doc.value;
}

function withoutClosure(schema: ToolSchema): JsonObject {
	const { additionalProperties: _closed, ...open } = schema;
	return open;
}

function answer(doc: JsonObject): AgentToolResult<JsonObject> {
	return { content: [{ type: "text", text: JSON.stringify(doc) }], details: doc };
}

/** The tool; `binDir` holds herd's binaries. */
export function piHerdTool(binDir: string, pi: ExtensionAPI): ToolDefinition {
	const schema = toolSchema();
	return {
		name: "subagent",
		label: "subagent",
		description: schema.description,
		// Without `additionalProperties: false`: an unknown field reaches the face's own
		// `invalid_request` instead of Pi's schema error.
		parameters: withoutClosure(schema),
		promptSnippet: "Assign, steer, answer, list and close Pi Herd workers; results arrive later as messages",
		promptGuidelines: [
			"After `subagent` assign, do not poll: the worker's one result arrives as a `subagent_result` message beginning with its envelope.",
			"Use a worker's `label` for control; pane and session ids are evidence only.",
		],
		async execute(_id, params, _signal, _onUpdate, ctx) {
			try {
				return answer(await perform({ pi, ctx, binDir }, validate(params)));
			} catch (err) {
				if (err instanceof Refusal) return answer({ ok: false, error: { ...err.error } });
				return answer({ ok: false, error: { category: "internal_failure", operation: "subagent", message: String(err instanceof Error ? err.message : err) } });
			}
		},
	};
}
