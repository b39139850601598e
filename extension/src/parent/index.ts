/**
 * herd's parent extension: herd's tools and commands (docs/tools.md), the widget and result
 * delivery in a Pi session, with herd's binaries doing the work.
 *
 * Loaded in a top-level session it is the parent side; loaded in a child herd launched
 * (`PI_SUBAGENT_ID`) it registers the tools the registry lists for child sessions, so a child
 * delegates through `subagent`. It is a thin layer: validation, placement, supervision, message
 * text, escaping, bounds and exactly-once all stay in the binaries.
 */
import type { ExtensionAPI, ExtensionContext, ToolDefinition } from "@earendil-works/pi-coding-agent";
import { INSTALL_HINT, findBinDir } from "./bins.ts";
import { catalogGuideline, withGuideline } from "./catalog.ts";
import { registerCommand } from "./commands.ts";
import { SURFACE_FLAG, artifactsDir, consumesResults, deniedTools, inChild } from "./context.ts";
import { RESULT_TYPE, ensureFollower, flush, onMessageEnd, resendDropped, stopFollowers, undelivered } from "./delivery.ts";
import { applyLoading } from "./exposure.ts";
import { hub } from "./hub.ts";
import { chooseFace } from "./piherd/face.ts";
import { piHerdTool } from "./piherd/tool.ts";
import { type Registry, loadRegistry } from "./registry.ts";
import { resultRenderer } from "./render.ts";
import { CHILD_ONLY, definition } from "./tools.ts";
import { redraw, stopWidget } from "./widget.ts";

function notify(ctx: ExtensionContext, text: string): void {
	try {
		ctx.ui.notify(text, "warning");
	} catch {
		// No UI.
	}
}

export default async function herdParent(pi: ExtensionAPI): Promise<void> {
	pi.registerFlag(SURFACE_FLAG, {
		type: "string",
		description: "Where herd starts subagents: auto (default), herdr, tmux or process",
	});
	// Results keep their look in a transcript replayed later, even without herd's binaries.
	pi.registerMessageRenderer(RESULT_TYPE, resultRenderer);
	const binDir = findBinDir();
	const registry: Registry | undefined = binDir ? await loadRegistry(binDir, { ...process.env, HERD_BIN_DIR: binDir }) : undefined;
	if (!binDir || !registry) {
		const why = binDir ? `herd-docs in ${binDir} printed no tool registry this extension reads; reinstall herd.` : INSTALL_HINT;
		pi.on("session_start", (_event, ctx) => notify(ctx, why));
		return;
	}

	const child = inChild();
	const kind = child ? "child" : "parent";
	const denied = deniedTools();
	const routine: string[] = [];
	let subagent: ToolDefinition | undefined;
	// The Pi Herd face (docs/pi-herd.md) registers its one `subagent` instead of herd's tools.
	const face = chooseFace();
	if (typeof face !== "string") pi.on("session_start", (_event, ctx) => notify(ctx, face.error));
	const piHerd = face === "pi-herd";
	if (piHerd && !denied.has("subagent")) pi.registerTool(piHerdTool(binDir, pi));
	for (const entry of face === "herd" ? registry.tools : []) {
		if (CHILD_ONLY.has(entry.name) || !entry.sessions.includes(kind) || denied.has(entry.name)) continue;
		const tool = definition(entry, binDir, pi);
		if (!tool) continue;
		pi.registerTool(tool);
		if (entry.exposure === "deferred") routine.push(entry.name);
		if (entry.name === "subagent") subagent = tool;
	}
	// The catalog of this session's `subagent` guidelines, asked at its start (catalog.ts). A
	// top-level session's first run waits for it; a child takes it when it arrives.
	let catalog: Promise<void> | undefined;
	for (const entry of registry.commands) {
		if (entry.sessions.includes(kind)) registerCommand(pi, entry, binDir);
	}

	pi.on("session_start", (_event, ctx) => {
		// Idempotent: Pi may start a session twice (RPC `new_session`).
		const h = hub();
		const dir = artifactsDir(ctx);
		h.live = { pi, ctx, dir, binDir };
		// Whatever an earlier instance handed over without its `message_end` goes again, unless
		// the transcript already has it.
		h.sent.clear();
		if (!piHerd) applyLoading(pi, routine, h.writerActive);
		if (subagent) {
			const tool = subagent;
			catalog = catalogGuideline(pi, ctx, binDir).then((found) => {
				try {
					pi.registerTool(withGuideline(tool, found));
				} catch {
					// The instance went stale: the next session asks again.
				}
			});
		}
		if (consumesResults()) {
			h.dirs.add(dir);
			for (const known of h.dirs) {
				void undelivered(known, binDir).then((waiting) => {
					if (waiting) ensureFollower(known, binDir);
				});
			}
		}
		flush();
		redraw();
	});

	pi.on("session_shutdown", (event) => {
		const h = hub();
		h.live = undefined;
		if (event.reason === "quit") {
			// Quitting stops delivery; results wait on disk for the next start, and the notices
			// of this process are dropped.
			h.notices.length = 0;
			stopFollowers();
			stopWidget();
		}
	});

	pi.on("before_agent_start", async () => {
		if (!child && catalog) await catalog;
	});

	pi.on("message_end", (event) => {
		onMessageEnd(event.message);
	});

	pi.on("agent_settled", () => {
		resendDropped();
	});
}
