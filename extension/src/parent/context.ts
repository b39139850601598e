/**
 * What a session hands the binaries: its artifacts directory, the environment of every binary,
 * and the surface.
 */
import * as path from "node:path";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";

/** The Pi flag that overrides the surface. */
export const SURFACE_FLAG = "herd-surface";
const SURFACES = ["auto", "herdr", "tmux", "process"] as const;
export type Surface = (typeof SURFACES)[number];

/** Whether this Pi runs as a child herd launched (the child-context hint, not a security boundary). */
export function inChild(env: NodeJS.ProcessEnv = process.env): boolean {
	return Boolean(env.PI_SUBAGENT_ID);
}

/**
 * Whether this session takes its children's results itself: every session but an auto-exit
 * child, whose child extension waits for its own children (two consumers would race).
 */
export function consumesResults(env: NodeJS.ProcessEnv = process.env): boolean {
	return !(inChild(env) && env.PI_SUBAGENT_AUTO_EXIT === "1");
}

/** The tools a child's launch policy denied (`PI_DENY_TOOLS`, also `spawning: false`). */
export function deniedTools(env: NodeJS.ProcessEnv = process.env): Set<string> {
	return new Set(
		(env.PI_DENY_TOOLS ?? "")
			.split(",")
			.map((t) => t.trim())
			.filter((t) => t.length > 0),
	);
}

/** The surface: the Pi flag, else `HERD_SURFACE`, else herd's own `auto`. */
export function surface(pi: ExtensionAPI): Surface {
	const flag = pi.getFlag(SURFACE_FLAG);
	for (const value of [flag, process.env.HERD_SURFACE]) {
		if (typeof value === "string" && (SURFACES as readonly string[]).includes(value)) return value as Surface;
	}
	return "auto";
}

/**
 * Where a session's runs live. A parent: `<dir of its session file>/artifacts/<session id>/`,
 * what herd derives from `--parent-session`. A child: its own directory, the one its activity
 * snapshot is in. A session without a file: the per-user state directory, per session id.
 */
export function artifactsDir(ctx: ExtensionContext, env: NodeJS.ProcessEnv = process.env): string {
	if (env.PI_SUBAGENT_ID && env.PI_SUBAGENT_ACTIVITY_FILE) {
		return path.resolve(path.dirname(path.dirname(env.PI_SUBAGENT_ACTIVITY_FILE)));
	}
	const id = ctx.sessionManager.getSessionId();
	const file = ctx.sessionManager.getSessionFile();
	if (file) return path.join(path.dirname(path.resolve(file)), "artifacts", id);
	const state = env.XDG_STATE_HOME || path.join(env.HOME ?? ".", ".local", "state");
	return path.join(state, "herd", "artifacts", `pi-${id}`);
}

/** The environment of every binary this session runs. */
export function binaryEnv(pi: ExtensionAPI, ctx: ExtensionContext, binDir: string): NodeJS.ProcessEnv {
	const env: NodeJS.ProcessEnv = { ...process.env, HERD_BIN_DIR: binDir };
	if (ctx.model) env.HERD_PARENT_MODEL = `${ctx.model.provider}/${ctx.model.id}`;
	try {
		env.HERD_PARENT_THINKING = pi.getThinkingLevel();
	} catch {
		// Left to the child's defaults.
	}
	// A child inherits this session's project-trust decision, never a wider one.
	try {
		env.HERD_PROJECT_TRUST = ctx.isProjectTrusted() ? "trusted" : "untrusted";
	} catch {
		// A Pi without project trust (0.73): herd's default, untrusted.
	}
	// Children run the parent's own Pi.
	if (!env.HERD_PI && process.argv[1]) env.HERD_PI = process.argv[1];
	// A shared artifacts directory would let one parent's follower deliver another's results.
	delete env.HERD_ARTIFACTS;
	return env;
}
