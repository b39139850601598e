/**
 * The registry's tools as Pi tools: each call becomes one binary call, whose text is the answer.
 */
import * as path from "node:path";
import type { AgentToolResult, ExtensionAPI, ExtensionContext, ToolDefinition } from "@earendil-works/pi-coding-agent";
import { type JsonObject, isObject } from "../shared/decode.ts";
import { type Binary, type Ran, failureText, run } from "./bins.ts";
import { artifactsDir, binaryEnv, launchPlace, surface } from "./context.ts";
import { ensureFollower, stopAsked } from "./delivery.ts";
import type { ToolEntry } from "./registry.ts";

/** Budgets of the binaries: a launch may take a worktree acquisition's 120 s and more. */
const LAUNCH_MS = 10 * 60 * 1000;
const CONTROL_MS = 2 * 60 * 1000;

/** The child-only tools, which the child extension owns. */
export const CHILD_ONLY = new Set(["caller_ping", "subagent_done"]);

/** Everything a call needs: this instance's `pi`, the binaries and the call's context. */
export interface Call {
	pi: ExtensionAPI;
	ctx: ExtensionContext;
	binDir: string;
}

/** A binary's run with the session's environment, in the session's directory. */
export function runBinary(call: Call, binary: Binary, args: string[], input?: string, timeoutMs = CONTROL_MS): Promise<Ran> {
	return run(path.join(call.binDir, binary), args, {
		cwd: call.ctx.cwd,
		env: binaryEnv(call.pi, call.ctx, call.binDir),
		input,
		timeoutMs,
	});
}

function text(value: string): AgentToolResult<Record<string, unknown>> {
	return { content: [{ type: "text", text: value }], details: {} };
}

/** The result of a binary: its text on success (and on the exit codes listed), else an error. */
function answer(ran: Ran, accepted: number[] = [0]): AgentToolResult<Record<string, unknown>> {
	if (ran.code !== null && accepted.includes(ran.code)) return text(ran.stdout.trim() || "done");
	throw new Error(failureText(ran));
}

/** The sentence after a launch: results come to the parent, it does not look for them. */
const NO_POLL = "Its result arrives later as a subagent_result message; do not poll for it.";

/** A launch or resume: exit 0 launched, 3 uncertain (still followed), anything else an error. */
async function launch(call: Call, args: string[], input?: string): Promise<AgentToolResult<Record<string, unknown>>> {
	const ran = await runBinary(call, "herd-launch", args, input, LAUNCH_MS);
	if (ran.code === 0 || ran.code === 3) {
		ensureFollower(artifactsDir(call.ctx), call.binDir);
		return text(`${ran.stdout.trim()}\n${NO_POLL}`);
	}
	throw new Error(failureText(ran));
}

function target(params: JsonObject): string[] {
	if (typeof params.id === "string" && params.id) return ["--run", params.id];
	if (typeof params.name === "string" && params.name) return ["--name", params.name];
	throw new Error("give the exact id or name of the run");
}

/** What each tool does, by name. */
type Handler = (call: Call, params: JsonObject) => Promise<AgentToolResult<Record<string, unknown>>>;

const HANDLERS: Record<string, Handler> = {
	subagent: (call, params) =>
		launch(call, [...launchPlace(call.ctx), "spawn", "--request", "-", "--surface", surface(call.pi)], JSON.stringify(params)),
	subagent_resume: (call, params) => {
		const args = [...launchPlace(call.ctx), "resume", "--session", String(params.sessionPath ?? ""), "--surface", surface(call.pi)];
		if (typeof params.message === "string") args.push("--message", params.message);
		if (typeof params.autoExit === "boolean") args.push("--auto-exit", String(params.autoExit));
		if (typeof params.name === "string") args.push("--name", params.name);
		return launch(call, args);
	},
	subagent_send: async (call, params) =>
		answer(
			await runBinary(call, "herd-launch", ["--artifacts", artifactsDir(call.ctx), "send", ...target(params), "--message", String(params.message ?? "")]),
			[0, 7],
		),
	subagent_cancel: async (call, params) =>
		answer(await runBinary(call, "herd-watch", ["--artifacts", artifactsDir(call.ctx), "cancel", ...target(params)]), [0, 3]),
	subagent_interrupt: async (call, params) =>
		answer(await runBinary(call, "herd-watch", ["--artifacts", artifactsDir(call.ctx), "interrupt", ...target(params)])),
	subagent_stop: async (call, params) => {
		// A new stop attempt cancels the notice of the old one (notices.ts).
		stopAsked(artifactsDir(call.ctx), {
			runId: typeof params.id === "string" ? params.id : undefined,
			name: typeof params.name === "string" ? params.name : undefined,
		});
		return answer(await runBinary(call, "herd-watch", ["--artifacts", artifactsDir(call.ctx), "stop", ...target(params)]), [0, 3]);
	},
	subagents_list: async (call) =>
		answer(await runBinary(call, "herd-launch", ["--artifacts", artifactsDir(call.ctx), "roles", "--cwd", call.ctx.cwd])),
	subagents_write_task_models: async (call, params) =>
		answer(await runBinary(call, "herd-launch", ["write-task-models", "--request", "-", "--cwd", call.ctx.cwd], JSON.stringify(params))),
	worktree_list: async (call) =>
		answer(await runBinary(call, "herd-cleanup", ["--artifacts", artifactsDir(call.ctx), "list", "--session-cwd", call.ctx.cwd]), [0]),
	worktree_remove: async (call, params) => {
		const args = ["--artifacts", artifactsDir(call.ctx), "remove"];
		// A worktree on another machine: the host's own herd-cleanup removes it there; the target
		// and the session cwd are the host's (by default herd's own directory there).
		if (typeof params.host === "string" && params.host) args.push("--host", params.host);
		else args.push("--session-cwd", call.ctx.cwd);
		if (params.preserve === true) args.push("--preserve");
		args.push("--", String(params.target ?? ""));
		return answer(await runBinary(call, "herd-cleanup", args), [0, 1]);
	},
};

/**
 * The naming of coordinated children (docs/tools.md, "Tool loading"), word for word: part of the
 * tool's own guidelines, so they stand whether or not the model catalog joins them.
 */
export const NAMING_GUIDELINE =
	"Before launching a new group, choose a short task slug and label each new child `<task>-<role>[-n]`, " +
	"such as `login-api` or `login-test2`. Roles are `plan`, `research`, `ui`, `api`, `build`, `test`, " +
	"`review`, `browser`, `security`, `perf`, and `merge`. Leave existing labels unchanged.";

/** The launch roster (docs/tools.md, "Tool loading"), word for word. */
export const ROSTER_GUIDELINE =
	"After the final launch, print a markdown table with the header row `| name | agent kind | role | model | worktree |`, " +
	"a separator row, and one row per child (worktree `none` when there is none), and use each name in prompts, " +
	"handoffs, and results.";

/** How to get a child that exits after its answer, or one that waits for the person (docs/tools.md). */
export const INTERACTIVE_GUIDELINE =
	"A child answers and exits by itself; pass `interactive: true` for one that stays in its pane and waits for " +
	"the person after each answer (its result comes when it ends).";

/** The label Pi shows for a tool: its name with spaces. */
function label(name: string): string {
	return name.replace(/_/g, " ");
}

/** Pi's definition of one registry tool; `exposureSupported` says whether Pi knows `exposure`. */
export function definition(
	entry: ToolEntry,
	binDir: string,
	pi: ExtensionAPI,
): ToolDefinition | undefined {
	const handler = HANDLERS[entry.name];
	if (!handler) return undefined;
	const tool: ToolDefinition = {
		name: entry.name,
		label: label(entry.name),
		description: entry.description,
		parameters: entry.parameters,
		async execute(_id, params, _signal, _onUpdate, ctx) {
			return handler({ pi, ctx, binDir }, isObject(params) ? params : {});
		},
	};
	if (entry.exposure === "deferred") tool.exposure = "deferred";
	if (entry.exposure === "inactive") tool.defaultActive = false;
	if (entry.name === "subagent") {
		tool.promptSnippet = "Launch a subagent; its result arrives later as a message";
		tool.promptGuidelines = [
			"After `subagent`, do not poll: each result arrives as a `subagent_result` message.",
			NAMING_GUIDELINE,
			ROSTER_GUIDELINE,
			INTERACTIVE_GUIDELINE,
		];
	}
	return tool;
}
