/**
 * The model catalog in the `subagent` guidelines (docs/tools.md, "Tool loading").
 *
 * At each session start the installed `herd-launch models --json` says which models Pi has
 * credentials for and which task categories they serve, and writes the guideline text (its
 * rules and its bound are the binary's). The extension only re-registers `subagent` with that
 * text among its `promptGuidelines`, so the catalog stays deferred with the tool: Pi shows a
 * tool's guidelines only once the tool is active, which for `subagent` is after `tool_search`
 * loads it. Nothing is kept across sessions: a later session asks again.
 */
import type { ExtensionAPI, ExtensionContext, ToolDefinition } from "@earendil-works/pi-coding-agent";
import { decode } from "../shared/decode.ts";
import { launchModels } from "../shared/formats.ts";
import { failureText } from "./bins.ts";
import { ROSTER_GUIDELINE, runBinary } from "./tools.ts";

/** Longer than the binary's own 30 s bound on asking Pi. */
const CATALOG_MS = 45 * 1000;
/** The most of a failure shown in the guideline that replaces the catalog. */
const FAILURE_CHARS = 300;

/** What the session's `subagent` guidelines take from `herd-launch models --json`. */
export interface Catalog {
	/** The catalog's guideline text, or why there is none. */
	guideline: string;
	/** `guidelines.launchRoster` of the configuration: false drops the roster instruction. */
	launchRoster: boolean;
}

/** The guideline text `herd-launch models --json` printed, or why there is none. */
export async function catalogGuideline(pi: ExtensionAPI, ctx: ExtensionContext, binDir: string): Promise<Catalog> {
	const ran = await runBinary({ pi, ctx, binDir }, "herd-launch", ["models", "--json", "--cwd", ctx.cwd], undefined, CATALOG_MS);
	const doc = ran.code === 0 ? decode(ran.stdout, launchModels, "herd-launch models --json") : undefined;
	if (doc?.ok && doc.value.guideline.length > 0) return { guideline: doc.value.guideline, launchRoster: doc.value.launch_roster };
	const why = doc === undefined ? failureText(ran) : doc.ok ? "herd-launch models printed no guideline" : doc.error;
	// One line, bounded: the failure is host text, but it must not break the rules section.
	const line = why.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, " ").slice(0, FAILURE_CHARS);
	return {
		guideline: `Model catalog for \`subagent\`: unavailable (${line}); pass an exact provider/model-id you know Pi has credentials for.`,
		launchRoster: doc?.ok ? doc.value.launch_roster : true,
	};
}

/**
 * `tool` with the catalog's guideline after its own guidelines; without the launch roster
 * instruction when the configuration turns it off (`guidelines.launchRoster: false`), the rest
 * of the naming guidance kept.
 */
export function withGuideline(tool: ToolDefinition, catalog: Catalog): ToolDefinition {
	const own = (tool.promptGuidelines ?? []).filter((g) => catalog.launchRoster || g !== ROSTER_GUIDELINE);
	return { ...tool, promptGuidelines: [...own, catalog.guideline] };
}
