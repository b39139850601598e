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

/**
 * Where a launch places its run: always this session's artifacts directory (the one its follower
 * watches, named by Pi's own session id), and the parent's session file beside it when there is
 * one, for a fork. Deriving the directory from the file alone would read a file that Pi has not
 * written yet at a session's first input, and fall back to its name (`parent.jsonl` → `parent`).
 */
export function launchPlace(ctx: ExtensionContext, env: NodeJS.ProcessEnv = process.env): string[] {
	const place = ["--artifacts", artifactsDir(ctx, env)];
	const file = ctx.sessionManager.getSessionFile();
	if (!inChild(env) && file) place.push("--parent-session", file);
	return place;
}

/**
 * The Pi a child runs: this session's own, on this session's own runtime. Pi's `cli.js` run
 * directly would start on whichever `node` comes first on `PATH` (`#!/usr/bin/env node`), which
 * need not be the one this Pi was started with by a launcher (nvm, volta, `npx`, a wrapper).
 * A Pi compiled into one executable (Bun) is that executable.
 */
export function piCommand(proc: Pick<NodeJS.Process, "argv" | "execPath" | "versions">): Record<string, string> {
	const script = proc.argv[1];
	if (proc.versions.bun || !script) return { HERD_PI: proc.execPath };
	return { HERD_PI: path.resolve(script), HERD_PI_NODE: proc.execPath };
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
	// Children run the parent's own Pi on its own runtime, unless the user named another.
	if (!env.HERD_PI) Object.assign(env, piCommand(process));
	// A shared artifacts directory would let one parent's follower deliver another's results.
	delete env.HERD_ARTIFACTS;
	return env;
}
