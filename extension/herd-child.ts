/**
 * herd's Pi child extension: the child side of the on-disk protocol between a Pi child and herd
 * (the pi-herdr-agents formats, protocol.md §1).
 *
 * Loaded by `pi -e <this file>` in every Pi child herd-launch starts; it does nothing in a session
 * without `PI_SUBAGENT_ID`. It provides:
 *
 * - `caller_ping` (always) and `subagent_done` (for children that do not exit by themselves and
 *   for persistent specialists), the child-only tools (`src/child/tools.ts`);
 * - the activity snapshot `PI_SUBAGENT_ACTIVITY_FILE` (§1.3, `src/child/activity.ts`);
 * - the completion sidecar `<session>.exit` (§1.2): `done`, `error` or `ping`;
 * - `<session>.needs-input.json`: a dialog open, or the run settled (`src/child/needs-input.ts`);
 * - auto-exit: a child with `PI_SUBAGENT_AUTO_EXIT=1` ends when its turn settles, by the state
 *   machine of `src/child/settlement.ts`; a follow-up herd-watch queued for it
 *   (`<session>.steering-queued.json`, `src/child/steering.ts`) is typed at that settlement and
 *   the child works on;
 * - the child side of an accept check (`PI_SUBAGENT_ACCEPT_FILE`): `herd-accept check` after its
 *   turn, the last 4,000 characters of a failure fed back for another turn, at most `maxRetries`
 *   times, and the count of checks run in `<session>.accept-tries.json` (`src/child/accept.ts`);
 * - an auto-exit child that launched children of its own stays open until each has delivered
 *   (`src/child/own-children.ts`), a Pi Herd worker's result with seed 000's envelope and details
 *   (`src/shared/piherd-result.ts`);
 * - the persistent inbox (§1.11): tasks and stop directives from `<session>.task-inbox.*.json`,
 *   task events in `<session>.tasks` (`src/child/inbox.ts`);
 * - `PI_DENY_TOOLS`: denied tools are removed from the session;
 * - seed 003's tools widget, `[scout] — 12 tools · 4 denied` (`src/child/widget.ts`);
 * - Pi 1.6's project trust: the child never asks, it takes `HERD_PROJECT_TRUST`.
 *
 * It imports only types from Pi (and `typebox`, which Pi provides to every extension), so the same
 * files load in Pi 0.73 and 1.6. Everything it reads is bounded and everything it writes is small;
 * a failing write never breaks the child's session.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";

import { AcceptChecks, CHECK_FEEDBACK_CHARS, CHECK_KILL_GRACE_MS, readAcceptLimits } from "./src/child/accept.ts";
import { Activity } from "./src/child/activity.ts";
import { readConfig } from "./src/child/config.ts";
import { Inbox } from "./src/child/inbox.ts";
import { NeedsInput } from "./src/child/needs-input.ts";
import { type Answer, lastAnswer, sessionLastAnswer } from "./src/child/messages.ts";
import { HOLD_CHILD_MS, type OwnResult, OwnChildren } from "./src/child/own-children.ts";
import { type SettlementAction, type SettlementEvent, type SettlementState, step, unsettled } from "./src/child/settlement.ts";
import { appendTaskEvent, type Completion, ExitSidecar, type TaskEventType, writeAcceptTries } from "./src/child/sidecars.ts";
import { STEERING_HOLD_MS, STEERING_POLL_MS, steeringQueued } from "./src/child/steering.ts";
import { registerChildTools, registerOutsideHerd } from "./src/child/tools.ts";
import { drawToolsWidget } from "./src/child/widget.ts";
import { sessionFile } from "./src/generated/run-files.ts";
import { registryWindow } from "./src/shared/piherd-result.ts";

/** The custom message of a Pi Herd worker's result, the type the parent extension delivers. */
const RESULT_TYPE = "subagent_result";
/** What a quit in print mode allows each turn of an auto-exit child's settlement. */
const SETTLE_TURN_MS = 30 * 60 * 1000;
/** How often a quit in print mode looks whether the settlement is done. */
const SETTLE_POLL_MS = 50;

export default function herdChild(pi: ExtensionAPI): void {
	const config = readConfig(process.env, process.argv);
	if (!config.runId) {
		registerOutsideHerd(pi);
		return;
	}

	// Pi 1.6 asks whether to trust a folder with `.pi` resources before it starts; a child never
	// asks. It takes the decision herd-launch handed it (its parent's, never wider), and a child
	// without one is not trusted. Pi 0.73 has no such question and never fires this event.
	pi.on("project_trust", () => ({ trusted: config.projectTrusted ? "yes" : "no" }));

	const widgetLabel = config.agent || config.name;
	const activity = new Activity(config.activityFile, config.runId, config.persistent);
	const exit = new ExitSidecar(config.sessionFile);
	// Whether the child waits for a person (a dialog, a settled run): `<session>.needs-input.json`.
	const needsInput = new NeedsInput(config.sessionFile ? sessionFile(config.sessionFile, "needsInput") : "", config.runId);
	const checks = new AcceptChecks(config.binDir);
	/** The context of the last event, for work that starts outside one (a result, the inbox). */
	let idleCtx: ExtensionContext | undefined;
	let shuttingDown = false;
	/** A signal is quitting Pi: nothing waits. */
	let terminating = false;

	/** Writes the completion sidecar and quits (once). */
	const endChild = (ctx: ExtensionContext, completion: Completion, event: string) => {
		exit.write(completion);
		activity.finish(event);
		if (!shuttingDown) {
			shuttingDown = true;
			ctx.shutdown();
		}
	};

	// A persistent specialist's current task.
	let currentTask = config.persistent ? config.taskId : "";
	let taskEnded = false;
	let stopRequested = false;

	/** Ends the current persistent task (once) with `type`. */
	const endTask = (type: TaskEventType, message?: string) => {
		if (!currentTask || taskEnded) return;
		taskEnded = true;
		appendTaskEvent(config.sessionFile, config.generationId, type, currentTask, message);
		activity.finish(type === "help-request" ? "caller_ping" : "subagent_done");
	};

	registerChildTools(pi, !config.autoExit || config.persistent, {
		ping(message, ctx) {
			if (config.persistent) {
				endTask("help-request", message);
				return "Help request sent to the parent. Wait for its answer as your next task.";
			}
			endChild(ctx, { type: "ping", name: config.name, message }, "caller_ping");
			return "Help request sent to the parent; this session ends now.";
		},
		done(ctx) {
			if (config.persistent) {
				endTask("task-done", sessionLastAnswer(ctx)?.text ?? "");
				return "Task finished. Wait for the next task.";
			}
			endChild(ctx, { type: "done" }, "subagent_done");
			return "Done; this session ends now.";
		},
	});

	const inbox = new Inbox(config.sessionFile, {
		closed: () => !idleCtx || shuttingDown,
		busy: () => idleCtx?.isIdle() === false || (currentTask !== "" && !taskEnded),
		take(entry) {
			const ctx = idleCtx;
			if (!ctx) return;
			if (entry.type === "stop") {
				stopRequested = true;
				if (ctx.isIdle()) endChild(ctx, { type: "done" }, "session_shutdown");
				return;
			}
			currentTask = entry.task;
			taskEnded = false;
			activity.record("input", (a) => a.setAgent(true));
			pi.sendUserMessage(entry.message);
		},
	});

	pi.on("session_start", async (_event, ctx) => {
		idleCtx = ctx;
		if (config.deniedTools.length > 0) {
			const denied = new Set(config.deniedTools);
			pi.setActiveTools(pi.getActiveTools().filter((tool) => !denied.has(tool)));
		}
		activity.record("session_start");
		if (config.persistent && config.sessionFile) inbox.start();
		drawToolsWidget(pi, ctx, widgetLabel, new Set(config.deniedTools).size);
	});

	pi.on("input", async (event) => {
		// Queued steering typed at the settlement: the child works on. Left before the input is
		// counted, so herd-watch, which judges the receipt by that count, never sees it ending.
		if (settlement.kind === "steering") await settle({ type: "turn-started" }, undefined);
		needsInput.working();
		// A message this extension sent itself (a result of its own child) is not one a steer
		// typed: only the others count among the inputs Pi took.
		activity.record("input", (a) => (event.source === "extension" ? a.setAgent(true) : a.tookInput()));
	});
	// Pi 1.6 brackets every blocking dialog an extension opens, and says when a run has settled
	// for good (no retry, compaction or queued message follows). Pi 0.73 fires neither.
	pi.on("ui_prompt_start", async (event) => {
		needsInput.dialogOpened(event.kind, event.title);
	});
	pi.on("ui_prompt_end", async () => {
		needsInput.dialogClosed();
	});
	pi.on("agent_settled", async () => {
		needsInput.settled();
	});
	pi.on("before_agent_start", async (_event, ctx) => {
		activity.record("before_agent_start");
		// Other extensions may have changed the active tools since the session started.
		drawToolsWidget(pi, ctx, widgetLabel, new Set(config.deniedTools).size);
	});
	pi.on("agent_start", async () => {
		needsInput.working();
		await settle({ type: "turn-started" }, undefined);
		activity.record("agent_start", (a) => a.setAgent(true));
	});
	pi.on("turn_start", async (event) => {
		const index = Number.isInteger(event.turnIndex) ? event.turnIndex : undefined;
		activity.record("turn_start", (a) => a.setTurn(true, index));
	});
	pi.on("turn_end", async () => {
		activity.record("turn_end", (a) => a.setTurn(false));
	});
	pi.on("before_provider_request", async () => {
		activity.record("before_provider_request", (a) => a.setProvider(true));
	});
	pi.on("after_provider_response", async () => {
		activity.record("after_provider_response", (a) => {
			a.setProvider(false);
			a.setStreaming(true);
		});
	});
	pi.on("message_update", async (event) => {
		const type: unknown = event.assistantMessageEvent?.type;
		activity.record("message_update", (a) => a.setStreaming(true, typeof type === "string" ? type : undefined), true);
	});
	pi.on("tool_execution_start", async (event) => {
		activity.record("tool_execution_start", (a) => {
			a.setStreaming(false);
			a.startTool(event.toolCallId, event.toolName);
		});
	});
	pi.on("tool_call", async () => {
		activity.record("tool_call");
	});
	pi.on("tool_execution_update", async () => {
		activity.record("tool_execution_update", undefined, true);
	});
	pi.on("tool_result", async () => {
		activity.record("tool_result");
	});
	pi.on("tool_execution_end", async () => {
		activity.record("tool_execution_end", (a) => a.endTool());
	});

	// The settlement of an auto-exit child (`src/child/settlement.ts`). In print mode Pi quits as
	// soon as the first turn's prompt returns, so `session_shutdown` holds the quit until the
	// child has settled (see `settleBudgetMs`); a signal never waits.
	const settles = config.autoExit && !config.persistent;
	let settlement: SettlementState = { kind: "idle" };
	/** Where herd-watch lists the steering queued for the next turn boundary; print mode takes no typed input. */
	const steeringFile = settles && !config.printMode && config.sessionFile ? sessionFile(config.sessionFile, "steeringQueued") : "";
	let steeringTimer: ReturnType<typeof setInterval> | undefined = undefined;
	/** Results of this child's own children not yet given to it, oldest first. */
	const results: OwnResult[] = [];
	/** How many accept checks ran. */
	let checkTries = 0;
	/** What the last failed check tells the child. */
	let checkFeedback = "";
	const ownChildren = new OwnChildren(
		config,
		(result) => {
			results.push(result);
			void settle({ type: "result-arrived", terminating, idle: idleCtx?.isIdle() !== false }, idleCtx);
		},
		(provider, model) => registryWindow(idleCtx?.modelRegistry, provider, model),
	);

	/**
	 * Feeds `event` to the settlement and does what it says. The `agent_end` handler awaits it, so
	 * a retry turn is queued before Pi decides that the run has settled.
	 */
	async function settle(event: SettlementEvent, ctx: ExtensionContext | undefined): Promise<void> {
		if (!settles) return;
		const next = step(settlement, event);
		settlement = next.state;
		await perform(next.action, ctx);
	}

	async function perform(action: SettlementAction, ctx: ExtensionContext | undefined): Promise<void> {
		switch (action.type) {
			case "none":
				return;
			case "end":
				if (ctx) endChild(ctx, action.completion, "agent_end");
				else exit.write(action.completion);
				return;
			case "deliver": {
				const result = results.shift();
				if (result !== undefined) startTurn(result);
				return;
			}
			case "check":
				if (ctx) await check(ctx);
				return;
			case "retry":
				pi.sendUserMessage(checkFeedback, { deliverAs: "followUp" });
				return;
			case "await-steering":
				awaitSteering(ctx);
				return;
		}
	}

	/**
	 * Waits, at most `STEERING_HOLD_MS`, while herd-watch still lists steering for this boundary;
	 * a message typed meanwhile starts the next turn (the `input` handler), else the settlement
	 * goes on as if none had been queued.
	 */
	function awaitSteering(ctx: ExtensionContext | undefined): void {
		stopSteeringWait();
		const until = Date.now() + STEERING_HOLD_MS;
		steeringTimer = setInterval(() => {
			if (settlement.kind !== "steering") return stopSteeringWait();
			if (!terminating && Date.now() < until && steeringQueued(steeringFile, config.runId)) return;
			stopSteeringWait();
			void settle(
				{
					type: "steering-done",
					resultsQueued: results.length > 0,
					childrenOutstanding: ownChildren.waiting > 0,
					hasCheck: config.acceptFile !== "",
					terminating,
				},
				ctx ?? idleCtx,
			);
		}, STEERING_POLL_MS);
	}

	function stopSteeringWait(): void {
		if (steeringTimer) clearInterval(steeringTimer);
		steeringTimer = undefined;
	}

	/**
	 * Starts a turn with a result of an own child: herd's message as the child's input, or a Pi
	 * Herd worker's result as the custom message a top-level owner receives, with its details.
	 */
	function startTurn(result: OwnResult): void {
		activity.record("input", (a) => a.setAgent(true));
		if (result.details) {
			pi.sendMessage(
				{ customType: RESULT_TYPE, content: result.text, display: true, details: result.details },
				{ triggerTurn: true, deliverAs: "followUp" },
			);
		} else {
			pi.sendUserMessage(result.text, { deliverAs: "followUp" });
		}
	}

	/** Runs the accept check once and feeds its verdict back. */
	async function check(ctx: ExtensionContext): Promise<void> {
		const limits = readAcceptLimits(config.acceptFile);
		if (!limits) {
			await settle({ type: "check-done", passed: true, retriesLeft: false, terminating }, ctx);
			return;
		}
		checkTries += 1;
		const result = await checks.run(config.acceptFile, ctx.cwd || process.cwd(), limits);
		try {
			pi.appendEntry("herd-accept-check", { tries: checkTries, exitCode: result.exitCode, timedOut: result.timedOut });
		} catch {
			// Evidence only.
		}
		writeAcceptTries(config.sessionFile, checkTries, result.passed);
		checkFeedback =
			`The acceptance check failed (${result.why}, try ${checkTries} of ${limits.maxRetries + 1}). ` +
			`Its output, last ${CHECK_FEEDBACK_CHARS.toLocaleString("en-US")} characters:\n\n\`\`\`\n${result.output}\n\`\`\`\n\n` +
			"Fix the cause; the check runs again when you finish.";
		const retriesLeft = checkTries <= limits.maxRetries;
		await settle({ type: "check-done", passed: result.passed, retriesLeft, terminating }, ctx);
	}

	if (config.printMode) {
		// Print mode has its own handlers for these (they quit Pi); this one only says that the
		// quit is a signal's, which must not wait for a settlement.
		for (const signal of ["SIGTERM", "SIGHUP", "SIGINT"] as const) {
			process.on(signal, () => {
				terminating = true;
			});
		}
	}

	pi.on("agent_end", async (event, ctx) => {
		idleCtx = ctx;
		activity.record("agent_end", (a) => a.setAgent(false));
		const answer: Answer | undefined = lastAnswer(event.messages) ?? sessionLastAnswer(ctx);
		if (answer?.stopReason === "aborted") {
			// An interrupted run stays open, whatever it is.
			await settle(
				{ type: "turn-ended", answer, resultsQueued: false, childrenOutstanding: false, steeringQueued: false, hasCheck: false, terminating },
				ctx,
			);
			return;
		}
		if (config.persistent) {
			endTask(
				"task-done",
				answer?.stopReason === "error" ? `Subagent error: ${answer.errorMessage ?? "provider error"}` : (answer?.text ?? ""),
			);
			if (stopRequested) endChild(ctx, { type: "done" }, "session_shutdown");
			return;
		}
		if (!settles) return;
		if (answer?.stopReason !== "error" && !terminating) ownChildren.watchOutstanding();
		await settle(
			{
				type: "turn-ended",
				answer,
				resultsQueued: results.length > 0,
				childrenOutstanding: ownChildren.waiting > 0,
				steeringQueued: steeringQueued(steeringFile, config.runId),
				hasCheck: config.acceptFile !== "",
				terminating,
			},
			ctx,
		);
	});

	/** The longest a quit waits for the settlement: every check and its retry turns, and the child's own children. */
	function settleBudgetMs(): number {
		const limits = readAcceptLimits(config.acceptFile);
		const tries = limits ? limits.maxRetries + 1 : 1;
		const checkMs = limits ? limits.timeoutSec * 1000 + CHECK_KILL_GRACE_MS : 0;
		return tries * (checkMs + SETTLE_TURN_MS) + HOLD_CHILD_MS + SETTLE_TURN_MS + STEERING_HOLD_MS;
	}

	pi.on("session_shutdown", async (event, ctx) => {
		const quit = event.reason === "quit";
		if (settles && quit && !terminating && !exit.isWritten && unsettled(settlement)) {
			const deadline = Date.now() + settleBudgetMs();
			while (!exit.isWritten && unsettled(settlement) && !terminating && Date.now() < deadline) {
				await new Promise((resolve) => setTimeout(resolve, SETTLE_POLL_MS));
			}
		}
		checks.stop();
		stopSteeringWait();
		ownChildren.stop();
		inbox.stop();
		// A quit that came before the settlement (a signal, or a settlement that ran out of time):
		// the last assistant message still says how the child ended.
		if (settles && quit && !exit.isWritten) {
			const last = sessionLastAnswer(ctx);
			if (last?.stopReason === "error") {
				exit.write({ type: "error", errorMessage: last.errorMessage || "the provider failed", stopReason: "error" });
			} else if (last && last.stopReason !== "aborted") {
				exit.write({ type: "done" });
			}
		}
		if (quit) activity.finish("session_shutdown");
	});
}
