/**
 * The registry's commands: `/subagent`, `/subagents-init` and `/worktree`, each a thin wrapper
 * over the same binary calls as the tools.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { AutocompleteItem } from "@earendil-works/pi-tui";
import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { failureText } from "./bins.ts";
import { artifactsDir, inChild, launchPlace, surface } from "./context.ts";
import { ensureFollower } from "./delivery.ts";
import { activateWriter } from "./exposure.ts";
import { hub } from "./hub.ts";
import type { CommandEntry } from "./registry.ts";
import { type Call, runBinary } from "./tools.ts";

/** The role names a project or the user defines, for completion. */
function roleNames(cwd: string): string[] {
	const agentDir = process.env.PI_CODING_AGENT_DIR ?? path.join(os.homedir(), ".pi", "agent");
	const names = new Set<string>();
	for (const dir of [path.join(cwd, ".pi", "agents"), path.join(agentDir, "agents")]) {
		try {
			for (const file of fs.readdirSync(dir)) if (file.endsWith(".md")) names.add(file.slice(0, -3));
		} catch {
			// No roles there.
		}
	}
	return [...names].sort();
}

function complete(prefix: string, choices: { value: string; description?: string }[]): AutocompleteItem[] | null {
	const found = choices.filter((c) => c.value.startsWith(prefix)).map((c): AutocompleteItem => (c.description === undefined ? { value: c.value, label: c.value } : { value: c.value, label: c.value, description: c.description }));
	return found.length > 0 ? found : null;
}

/** Says `text` to the person, as a notice (a command answers the person, not the model). */
function say(ctx: ExtensionContext, text: string, kind: "info" | "warning" | "error" = "info"): void {
	try {
		ctx.ui.notify(text, kind);
	} catch {
		// No UI to say it on.
	}
}

/** Splits the first word off `args`. */
function head(args: string): [string, string] {
	const trimmed = args.trim();
	const at = trimmed.search(/\s/);
	return at < 0 ? [trimmed, ""] : [trimmed.slice(0, at), trimmed.slice(at).trim()];
}

/** What this session's runs cost (`herd-watch usage`), as a section after the roles; none without runs. */
async function costOfRuns(call: Call, dir: string): Promise<string> {
	const ran = await runBinary(call, "herd-watch", ["--artifacts", dir, "usage"]);
	return ran.code === 0 && ran.stdout.includes("\nby run\n") ? `\n\nWhat the runs cost:\n${ran.stdout.trim()}` : "";
}

/** The runs in flight as the widget draws them (a waiting child `waiting for input · since …`); none when nothing is open. */
async function runsInFlight(call: Call, dir: string): Promise<string> {
	const ran = await runBinary(call, "herd-watch", ["--artifacts", dir, "status", "--widget"]);
	return ran.code === 0 && ran.stdout.trim() ? `\n\nIn flight:\n${ran.stdout.trimEnd()}` : "";
}

async function subagentCommand(pi: ExtensionAPI, binDir: string, args: string, ctx: ExtensionCommandContext): Promise<void> {
	const call: Call = { pi, ctx, binDir };
	const [agent, task] = head(args);
	if (agent === "list") {
		const ran = await runBinary(call, "herd-launch", ["--artifacts", artifactsDir(ctx), "roles", "--cwd", ctx.cwd]);
		say(ctx, ran.code === 0 ? ran.stdout.trim() + (await runsInFlight(call, artifactsDir(ctx))) + (await costOfRuns(call, artifactsDir(ctx))) : failureText(ran), ran.code === 0 ? "info" : "error");
		return;
	}
	if (agent === "resurrect") {
		await resurrectCommand(call, task);
		return;
	}
	if (!agent || !task) {
		say(ctx, "Usage: /subagent <agent> <task>, or /subagent list", "warning");
		return;
	}
	const ran = await runBinary(
		call,
		"herd-launch",
		[...launchPlace(ctx), "spawn", "--request", "-", "--surface", surface(pi)],
		JSON.stringify({ name: agent, agent, task }),
		10 * 60 * 1000,
	);
	if (ran.code === 0 || ran.code === 3) ensureFollower(artifactsDir(ctx), binDir);
	say(ctx, ran.code === 0 || ran.code === 3 ? ran.stdout.trim() : failureText(ran), ran.code === 0 ? "info" : "error");
}

/**
 * `/subagent resurrect [--dry-run]`: herd-launch resumes every lost run of this session once, each in
 * its exact session file, and lists the rest with why; the follower delivers the resumed runs' results.
 */
async function resurrectCommand(call: Call, rest: string): Promise<void> {
	const { ctx } = call;
	if (inChild()) {
		say(ctx, "Resurrecting lost runs belongs to the parent session: ask it, or run `herd-launch resurrect` there.", "warning");
		return;
	}
	const words = rest.split(/\s+/).filter((w) => w.length > 0);
	if (words.some((w) => w !== "--dry-run")) {
		say(ctx, "Usage: /subagent resurrect [--dry-run]", "warning");
		return;
	}
	const args = ["--artifacts", artifactsDir(ctx), "resurrect"];
	if (words.includes("--dry-run")) args.push("--dry-run");
	const ran = await runBinary(call, "herd-launch", args, undefined, 10 * 60 * 1000);
	const answered = ran.code === 0 || ran.code === 3 || ran.code === 4;
	if (answered && !words.includes("--dry-run")) ensureFollower(artifactsDir(ctx), call.binDir);
	say(ctx, answered ? ran.stdout.trim() : failureText(ran), ran.code === 0 ? "info" : answered ? "warning" : "error");
}

async function worktreeCommand(pi: ExtensionAPI, binDir: string, args: string, ctx: ExtensionCommandContext): Promise<void> {
	const call: Call = { pi, ctx, binDir };
	const [sub, rest] = head(args);
	if (sub === "list") {
		const ran = inChild()
			? await runBinary(call, "herd-worktree", ["list", "--cwd", ctx.cwd])
			: await runBinary(call, "herd-cleanup", ["--artifacts", artifactsDir(ctx), "list", "--session-cwd", ctx.cwd]);
		say(ctx, ran.code === 0 ? ran.stdout.trim() : failureText(ran), ran.code === 0 ? "info" : "error");
		return;
	}
	if (sub === "remove" && inChild()) {
		// Not a branch named `remove`: removal is the parent's, which owns the child's worktrees.
		say(ctx, "Removing a worktree belongs to the parent session: ask it, or run `herd-cleanup remove <target>` there.", "warning");
		return;
	}
	if (sub === "remove") {
		const words = rest.split(/\s+/).filter((w) => w.length > 0);
		const preserve = words.includes("--preserve");
		const targets = words.filter((w) => w !== "--preserve");
		if (targets.length !== 1) {
			say(ctx, "Usage: /worktree remove <target> [--preserve]", "warning");
			return;
		}
		const [target] = targets;
		if (target === undefined) return;
		const removeArgs = ["--artifacts", artifactsDir(ctx), "remove", target, "--session-cwd", ctx.cwd];
		if (preserve) removeArgs.push("--preserve");
		const ran = await runBinary(call, "herd-cleanup", removeArgs);
		say(ctx, ran.code === 0 || ran.code === 1 ? ran.stdout.trim() : failureText(ran), ran.code === 0 ? "info" : "warning");
		return;
	}
	if (!sub) {
		say(ctx, "Usage: /worktree <name> [task], /worktree list, /worktree remove <target> [--preserve]", "warning");
		return;
	}
	await handoff(call, sub, rest);
}

/**
 * `/worktree <name> [task]`: herd-launch hands this conversation branch to a new interactive Pi in
 * a fresh managed worktree, and focuses it once its start is confirmed.
 */
async function handoff(call: Call, branch: string, task: string): Promise<void> {
	const { ctx } = call;
	const from = ctx.sessionManager.getSessionFile();
	if (!from) {
		say(ctx, "/worktree needs a saved session to hand off: this session has no file.", "warning");
		return;
	}
	const args = [...launchPlace(ctx), "handoff", "--from", from, "--branch", branch, "--surface", surface(call.pi)];
	const leaf = ctx.sessionManager.getLeafId();
	if (leaf) args.push("--leaf", leaf);
	if (task) args.push("--task", task);
	const ran = await runBinary(call, "herd-launch", args, undefined, 5 * 60 * 1000);
	if (ran.code === 0) say(ctx, ran.stdout.trim());
	else if (ran.code === 3) say(ctx, ran.stdout.trim(), "warning");
	else say(ctx, failureText(ran), "error");
}

async function initCommand(pi: ExtensionAPI, args: string, ctx: ExtensionCommandContext): Promise<void> {
	if (!activateWriter(pi)) {
		say(ctx, "subagents_write_task_models is not available in this session.", "warning");
		return;
	}
	hub().writerActive = true;
	const preferences = args.trim();
	let models: string[] = [];
	try {
		models = ctx.modelRegistry.getAvailable().map((m) => `${m.provider}/${m.id}`);
	} catch {
		// The proposal then names no registry.
	}
	pi.sendUserMessage(
		"Draft task-category model preferences for herd's subagents (models.tasks: coding, review, recon, qa, architecture, docs) " +
			`from the authenticated models of this session's registry: ${models.length > 0 ? models.join(", ") : "(none listed)"}` +
			(preferences ? `; ranking preferences: ${preferences}` : "") +
			". Show the proposal and ask me to approve it; only after I approve, save it with subagents_write_task_models, " +
			"passing expectedConfigRevision (sha256: of the configuration file's bytes as you read them, or missing).",
	);
}

/** Registers `entry` (the commands of this kind of session only). */
export function registerCommand(pi: ExtensionAPI, entry: CommandEntry, binDir: string): void {
	const name = entry.name.replace(/^\//, "");
	const child = inChild();
	const usable = entry.usage.filter((u) => !u.sessions || u.sessions.includes(child ? "child" : "parent"));
	const description = `${entry.description} (${usable.map((u) => u.text).join(" · ")})`;
	switch (name) {
		case "subagent":
			pi.registerCommand(name, {
				description,
				getArgumentCompletions: (prefix) =>
					prefix.includes(" ")
						? null
						: complete(prefix, [
								{ value: "list", description: "list the roles" },
								...(child ? [] : [{ value: "resurrect", description: "resume the lost runs in their sessions" }]),
								...roleNames(process.cwd()).map((value) => ({ value })),
							]),
				handler: (args, ctx) => subagentCommand(pi, binDir, args, ctx),
			});
			break;
		case "worktree":
			pi.registerCommand(name, {
				description,
				getArgumentCompletions: (prefix) =>
					prefix.includes(" ") ? null : complete(prefix, child ? [{ value: "list" }] : [{ value: "list" }, { value: "remove" }]),
				handler: (args, ctx) => worktreeCommand(pi, binDir, args, ctx),
			});
			break;
		case "subagents-init":
			pi.registerCommand(name, { description, handler: (args, ctx) => initCommand(pi, args, ctx) });
			break;
		default:
			break;
	}
}
