/**
 * The tools widget, shown in every child session: one line naming the child and counting
 * its available and denied tools, `[scout] — 12 tools · 4 denied`.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";

/** The widget's key: one line, replaced when it is drawn again. */
export const TOOLS_WIDGET = "herd-child-tools";

/** The widget's line. */
export function toolsLine(label: string, available: number, denied: number): string {
	return `[${label}] — ${available} ${available === 1 ? "tool" : "tools"} · ${denied} denied`;
}

/** Draws the widget from the session's active tools; a session without a UI shows nothing. */
export function drawToolsWidget(pi: ExtensionAPI, ctx: ExtensionContext, label: string, denied: number): void {
	if (!ctx.hasUI) return;
	try {
		ctx.ui.setWidget(TOOLS_WIDGET, [toolsLine(label, pi.getActiveTools().length, denied)]);
	} catch {
		// A UI that draws no widgets.
	}
}
