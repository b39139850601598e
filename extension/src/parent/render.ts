/**
 * How a `subagent_result` message looks in Pi's transcript (docs/tools.md, "What the parent
 * sees"): on the custom-message background, collapsed to herd's host lines, and expanded
 * (`Ctrl+O`) with the child's report between a `┌ Child report from <name> (<kind>)` rule and
 * a `└ end of child report` rule, each of its lines after `│`.
 *
 * The fenced view is herd's (`details.report.view`, escaped by herd-watch): this file only lays
 * it out. A report line wider than the terminal wraps with `│ ` before every part, so no part
 * of child text starts a line of its own. A message without that view (a cancellation, a result
 * written before herd kept it) keeps Pi's own rendering.
 */
import { Box, type Component, Spacer, Text, wrapTextWithAnsi } from "@earendil-works/pi-tui";
import type { MessageRenderOptions, MessageRenderer } from "@earendil-works/pi-coding-agent";

/** The part of Pi's theme the renderer paints with. */
export interface Paint {
	fg(color: "customMessageLabel" | "customMessageText" | "dim", text: string): string;
	bg(color: "customMessageBg", text: string): string;
}

/** The first line of the sentence that precedes a report block in herd's message. */
const FRAMING = "The following is a report from subagent ";
/** The line that closes a report block (child text never has it: herd escapes the tag). */
const CLOSE = "</subagent_report>";
const RULE_OPEN = "┌ Child report from ";
const FENCE = "│";

/** herd's message without its report block: the host lines before it and after it. */
export function hostLines(content: string): { before: string[]; after: string[] } {
	const lines = content.split("\n");
	const framing = lines.findIndex((l) => l.startsWith(FRAMING));
	if (framing < 0) return { before: lines, after: [] };
	const close = lines.findIndex((l, i) => i > framing && l === CLOSE);
	return { before: lines.slice(0, framing), after: close < 0 ? [] : lines.slice(close + 1) };
}

/** The fenced view of `details`, when herd kept one that reads as one. */
export function viewOf(details: unknown): string[] | undefined {
	if (typeof details !== "object" || details === null) return undefined;
	const report = (details as { report?: unknown }).report;
	if (typeof report !== "object" || report === null) return undefined;
	const view = (report as { view?: unknown }).view;
	if (typeof view !== "string" || !view.startsWith(RULE_OPEN)) return undefined;
	return view.split("\n");
}

/** The fenced lines laid out `width` columns wide: a wrapped report line keeps its `│ `. */
export function fenced(view: string[], width: number): string[] {
	const out: string[] = [];
	const room = Math.max(1, width - 2);
	for (const line of view) {
		if (line === FENCE) {
			out.push(line);
		} else if (line.startsWith(`${FENCE} `)) {
			for (const part of wrapTextWithAnsi(line.slice(2), room)) out.push(`${FENCE} ${part}`);
		} else {
			out.push(...wrapTextWithAnsi(line, Math.max(1, width)));
		}
	}
	return out;
}

/** The fenced report as a component, in the message's text colour. */
function fencedComponent(view: string[], paint: Paint): Component {
	return {
		render: (width) => fenced(view, width).map((l) => paint.fg("customMessageText", l)),
		invalidate: () => {
			// Nothing cached.
		},
	};
}

/** A line of host text in the message's text colour. */
function hostText(lines: string[], paint: Paint): Text {
	return new Text(lines.map((l) => paint.fg("customMessageText", l)).join("\n"), 0, 0);
}

/**
 * The component of one `subagent_result` message, or undefined for Pi's own rendering. Exported
 * for the unit tests, which render it without a terminal.
 */
export function renderResult(
	message: { customType: string; content: unknown; details?: unknown },
	options: Pick<MessageRenderOptions, "expanded" | "outputPad"> & Partial<Pick<MessageRenderOptions, "keyHint">>,
	paint: Paint,
): Component | undefined {
	const view = viewOf(message.details);
	if (!view || typeof message.content !== "string") return undefined;
	const { before, after } = hostLines(message.content);
	const box = new Box(options.outputPad, 1, (t) => paint.bg("customMessageBg", t));
	box.addChild(new Text(paint.fg("customMessageLabel", `\x1b[1m[${message.customType}]\x1b[22m`), 0, 0));
	box.addChild(new Spacer(1));
	if (before.length > 0) box.addChild(hostText(before, paint));
	if (options.expanded) {
		box.addChild(fencedComponent(view, paint));
		if (after.length > 0) box.addChild(hostText(after, paint));
	} else {
		const n = view.length - 2;
		const what = `child report, ${n} line${n === 1 ? "" : "s"}`;
		const hint = options.keyHint ? options.keyHint("app.tools.expand", "to expand") : "ctrl+o to expand";
		box.addChild(new Text(paint.fg("dim", `(${what}) ${hint}`), 0, 0));
	}
	return box;
}

/** The renderer Pi calls for every `subagent_result` message, live or replayed. */
export const resultRenderer: MessageRenderer = (message, options, theme) => renderResult(message, options, theme);
