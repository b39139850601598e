/**
 * The widget (docs/lifecycle.md, Status), drawn by herd (`herd-watch status --widget --json`) and
 * shown by Pi: one box per artifacts directory with open runs, the current session's first,
 * cleared when nothing is open.
 */
import * as path from "node:path";
import { paintAccent } from "./accent.ts";
import { decode } from "../shared/decode.ts";
import { statusWidget } from "../shared/formats.ts";
import { run } from "./bins.ts";
import { hub, withLive } from "./hub.ts";

export const WIDGET_KEY = "herd-subagents";
/** How often the clocks of open runs move. */
const CLOCK_MS = 1000;

/** The widget lines of one directory, or none when nothing is open there; `tui`: accent painted. */
async function linesOf(dir: string, binDir: string, env: NodeJS.ProcessEnv, tui: boolean): Promise<string[]> {
	const ran = await run(path.join(binDir, "herd-watch"), ["--artifacts", dir, "status", "--widget", "--json"], {
		cwd: dir,
		env,
		timeoutMs: 10_000,
	});
	const doc = ran.code === 0 ? decode(ran.stdout, statusWidget, "herd-watch status --widget --json") : undefined;
	if (!doc?.ok || doc.value.active + doc.value.open === 0) return [];
	const { widget, accent } = doc.value;
	const lines = widget.split("\n");
	while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
	return tui ? paintAccent(lines, accent) : lines;
}

/** Redraws the widget now (or right after a redraw in progress). */
export function redraw(): void {
	const h = hub();
	if (h.widgetBusy) {
		h.widgetAgain = true;
		return;
	}
	const live = h.live;
	// A child's directory is its parent's: its rows would be its siblings, not its own children.
	if (!live || process.env.PI_SUBAGENT_ID) return;
	h.widgetBusy = true;
	const dirs = [live.dir, ...[...h.followers.keys()].filter((d) => d !== live.dir)];
	const env = { ...process.env, HERD_BIN_DIR: live.binDir };
	let tui = false;
	withLive((now) => {
		tui = now.ctx.mode === "tui";
	});
	void Promise.all(dirs.map((d) => linesOf(d, live.binDir, env, tui)))
		.then((boxes) => {
			const lines = boxes.flat();
			withLive((now) => {
				if (lines.length > 0) {
					now.ctx.ui.setWidget(WIDGET_KEY, lines);
					h.widgetShown = true;
				} else if (h.widgetShown) {
					now.ctx.ui.setWidget(WIDGET_KEY, undefined);
					h.widgetShown = false;
				}
			});
			clock(lines.length > 0);
		})
		.finally(() => {
			h.widgetBusy = false;
			if (h.widgetAgain) {
				h.widgetAgain = false;
				redraw();
			}
		});
}

/** Keeps the clock running while anything is open. */
function clock(open: boolean): void {
	const h = hub();
	if (open && !h.widgetTimer) {
		h.widgetTimer = setInterval(redraw, CLOCK_MS);
		h.widgetTimer.unref?.();
	} else if (!open && h.widgetTimer) {
		clearInterval(h.widgetTimer);
		h.widgetTimer = undefined;
	}
}

/** Stops the clock (Pi quits); the widget goes with Pi's UI. */
export function stopWidget(): void {
	const h = hub();
	if (h.widgetTimer) clearInterval(h.widgetTimer);
	h.widgetTimer = undefined;
	h.widgetShown = false;
}
