/**
 * Tool loading (docs/tools.md, "Tool loading"): which of herd's tools are declared to the model
 * when a session starts.
 *
 * - The routine tools are `deferred`: Pi's own `tool_search` loads them. The host activates that
 *   search (recognised by the source Pi reports for it, `builtin:tool-search`, never by its name
 *   alone) and leaves every other tool as it was.
 * - When search is unavailable or turned off, every routine tool Pi kept is activated instead.
 * - `subagents_write_task_models` stays inactive until `/subagents-init`.
 * - A tool Pi's policy removed (`--tools`, `--exclude-tools`, a child's denied tools) is absent
 *   from `getAllTools()`, and the host only ever activates tools it finds there.
 */
import type { ExtensionAPI, ToolInfo } from "@earendil-works/pi-coding-agent";

export const SEARCH_TOOL = "tool_search";
export const SEARCH_SOURCE = "builtin:tool-search";
export const WRITER_TOOL = "subagents_write_task_models";

/** Whether `tool` is Pi's built-in search. */
function isBuiltinSearch(tool: ToolInfo): boolean {
	const info = tool.sourceInfo;
	return tool.name === SEARCH_TOOL && (info?.path === SEARCH_SOURCE || info?.source === SEARCH_SOURCE);
}

/** Whether the settings turn search off (`defaultTools: ["-tool_search"]`). */
function searchOffInSettings(pi: ExtensionAPI): boolean {
	try {
		const tools = pi.getSettings().defaultTools;
		if (!Array.isArray(tools)) return false;
		let off = false;
		for (const entry of tools) {
			if (entry === `-${SEARCH_TOOL}`) off = true;
			if (entry === `+${SEARCH_TOOL}` || entry === SEARCH_TOOL) off = false;
		}
		return off;
	} catch {
		return false;
	}
}

/**
 * Applies the loading rules at a session start; `routine` are the deferred tools this extension
 * registered, `writerOn` whether `/subagents-init` activated the writer.
 */
export function applyLoading(pi: ExtensionAPI, routine: readonly string[], writerOn: boolean): void {
	const all = pi.getAllTools();
	const kept = new Set(all.map((t) => t.name));
	const active = pi.getActiveTools();
	const next = new Set(active);
	const search = all.find((t) => t.name === SEARCH_TOOL);
	// A Pi without exposure (0.73) declares every registered tool: the same as search being unavailable.
	const exposureKnown = all.some((t) => typeof t.exposure === "string");
	const searching = exposureKnown && search !== undefined && isBuiltinSearch(search) && !searchOffInSettings(pi);
	if (searching) {
		next.add(SEARCH_TOOL);
	} else {
		for (const name of routine) if (kept.has(name)) next.add(name);
	}
	if (writerOn && kept.has(WRITER_TOOL)) next.add(WRITER_TOOL);
	else next.delete(WRITER_TOOL);
	const changed = next.size !== active.length || active.some((t) => !next.has(t));
	if (changed) pi.setActiveTools([...next]);
}

/** `/subagents-init`: the writer becomes active, if Pi kept it. */
export function activateWriter(pi: ExtensionAPI): boolean {
	if (!pi.getAllTools().some((t) => t.name === WRITER_TOOL)) return false;
	const active = pi.getActiveTools();
	if (!active.includes(WRITER_TOOL)) pi.setActiveTools([...active, WRITER_TOOL]);
	return true;
}
