/**
 * Telling the person, once per change, that a run completed, failed or started waiting for input:
 * in the parent Pi (`ctx.ui.notify`) and on the surface (`herd-watch notify`: Herdr's
 * notification, tmux's message and bell on the parent's client, a desktop notification by OSC
 * 777/9 where the terminal has one).
 *
 * - Edge-triggered: one notice per transition (a run that leaves `waiting for input` and comes
 *   back is a new one; a run's end is told once).
 * - Nothing for a run whose result this extension delivers as a message within the same second:
 *   that message is what the person reads.
 * - Suppressed while the person looks at that child's pane (`herd-watch notify` says so).
 * - A cooldown per run: a child flapping in and out of a dialog is told once per cooldown.
 * - All off with `HERD_NOTIFY=0` or the setting `"herd": { "notifications": false }`.
 */
import * as path from "node:path";
import type { WatchEvent } from "../generated/protocol.ts";
import { boolean, decode, decodeValue, object, optional } from "../shared/decode.ts";
import { watchNotify } from "../shared/formats.ts";
import { run } from "./bins.ts";
import { hub, withLive } from "./hub.ts";

export type NotifyKind = "completed" | "failed" | "waiting";

/** How long a notice waits for the run's message to be delivered before it is shown. */
export const DELIVERY_WINDOW_MS = 1000;
/** The least time between two notices of one run. */
export const COOLDOWN_MS = 30_000;

/** One notice to show. */
export interface Notice {
	dir: string;
	runId: string;
	kind: NotifyKind;
	/** One line, host-encoded by herd where a child wrote part of it. */
	text: string;
}

/** What the surface did with a notice. */
export type Shown = "shown" | "looking" | "not-shown";

export interface NotifierDeps {
	/** Whether notifications are on now. */
	enabled(): boolean;
	now(): number;
	/** Runs `fn` after `ms` (a timer that does not hold Pi open). */
	later(fn: () => void, ms: number): void;
	/** Shows the notice on the surface; says whether the person looks at the child's pane. */
	surface(notice: Notice): Promise<Shown>;
	/** Shows the notice in the parent Pi. */
	inPi(notice: Notice): void;
}

interface RunState {
	/** Whether the run is in `waiting for input` as far as notices go. */
	waiting: boolean;
	/** Whether its end was told (or dropped): once per run. */
	ended: boolean;
	/** When its last notice was shown. */
	lastAt?: number | undefined;
	/** When this extension last delivered a message of it. */
	deliveredAt?: number | undefined;
}

/** Whether notifications are on: `HERD_NOTIFY` (`0`, `off`, `false`, `no` turn them off), else the Pi setting. */
export function notificationsEnabled(env: NodeJS.ProcessEnv, settings: unknown): boolean {
	const flag = env.HERD_NOTIFY?.trim().toLowerCase();
	if (flag !== undefined && flag !== "") return !["0", "off", "false", "no"].includes(flag);
	const read = decodeValue(settings, HERD_SETTINGS, "the settings");
	return !(read.ok && read.value.herd?.notifications === false);
}

/** herd's part of Pi's settings (`"herd": { "notifications": false }`). */
interface HerdSettings {
	herd?: { notifications?: boolean };
}

const HERD_SETTINGS = object<HerdSettings>({ herd: optional(object<NonNullable<HerdSettings["herd"]>>({ notifications: optional(boolean) })) });

export class Notifier {
	private readonly runs = new Map<string, RunState>();
	private readonly deps: NotifierDeps;

	constructor(deps: NotifierDeps) {
		this.deps = deps;
	}

	private state(dir: string, runId: string): RunState {
		const key = `${dir}\n${runId}`;
		let found = this.runs.get(key);
		if (!found) {
			found = { waiting: false, ended: false };
			this.runs.set(key, found);
		}
		return found;
	}

	/** This extension just handed run `runId`'s message to Pi. */
	delivered(dir: string, runId: string): void {
		this.state(dir, runId).deliveredAt = this.deps.now();
	}

	/** A line of `herd-watch follow --json`. */
	observe(dir: string, event: WatchEvent): void {
		const runId = event.run_id;
		const run = this.state(dir, runId);
		switch (event.event) {
			case "needs_input": {
				if (run.waiting || run.ended) return;
				run.waiting = true;
				this.hold(run, { dir, runId, kind: "waiting", text: event.message });
				return;
			}
			case "status":
				if (event.label !== "waiting for input") run.waiting = false;
				return;
			case "result": {
				// A persistent specialist's task result is not the end of the run.
				if (event.task !== undefined && event.task !== null) return;
				if (run.ended) return;
				run.ended = true;
				const outcome = event.outcome;
				if (outcome !== "completed" && outcome !== "failed") return;
				const text = `${JSON.stringify(event.name)} ${outcome === "completed" ? "completed" : "failed"}.`;
				this.hold(run, { dir, runId, kind: outcome, text });
				return;
			}
			default:
				return;
		}
	}

	/** Waits out the delivery window, then shows `notice` unless something says not to. */
	private hold(run: RunState, notice: Notice): void {
		const at = this.deps.now();
		const deliveredNear = () => run.deliveredAt !== undefined && Math.abs(run.deliveredAt - at) <= DELIVERY_WINDOW_MS;
		if (deliveredNear()) return;
		this.deps.later(() => {
			if (deliveredNear()) return;
			void this.show(run, notice);
		}, DELIVERY_WINDOW_MS);
	}

	private async show(run: RunState, notice: Notice): Promise<void> {
		if (!this.deps.enabled()) return;
		// A notice of a run that has since left the state it tells of is moot.
		if (notice.kind === "waiting" && !run.waiting) return;
		const now = this.deps.now();
		if (run.lastAt !== undefined && now - run.lastAt < COOLDOWN_MS) return;
		run.lastAt = now;
		let shown: Shown;
		try {
			shown = await this.deps.surface(notice);
		} catch {
			shown = "not-shown";
		}
		if (shown === "looking") return;
		this.deps.inPi(notice);
	}
}

const NOTIFIER = Symbol.for("herd.parent.notifier.v1");

/** The process's notifier (it outlives `/reload` like the hub), telling through the live session. */
export function notifier(): Notifier {
	const holder = globalThis as typeof globalThis & { [NOTIFIER]?: Notifier };
	holder[NOTIFIER] ??= new Notifier({
		enabled: () => {
			let settings: unknown;
			withLive(({ pi }) => {
				settings = pi.getSettings();
			});
			return notificationsEnabled(process.env, settings);
		},
		now: () => Date.now(),
		later: (fn, ms) => {
			setTimeout(fn, ms).unref?.();
		},
		surface: async (notice) => {
			const binDir = hub().live?.binDir;
			if (!binDir) return "not-shown";
			const ran = await run(
				path.join(binDir, "herd-watch"),
				["--artifacts", notice.dir, "notify", "--run", notice.runId, "--kind", notice.kind, "--json"],
				{ cwd: notice.dir, env: { ...process.env, HERD_BIN_DIR: binDir }, timeoutMs: 10_000, terminal: true },
			);
			const doc = ran.code === 0 ? decode(ran.stdout, watchNotify, "herd-watch notify --json") : undefined;
			if (!doc?.ok) return "not-shown";
			if (doc.value.looking) return "looking";
			return doc.value.told.some((t) => t.shown) ? "shown" : "not-shown";
		},
		inPi: (notice) => {
			withLive(({ ctx }) => {
				ctx.ui.notify(notice.text, notice.kind === "failed" ? "error" : notice.kind === "waiting" ? "warning" : "info");
			});
		},
	});
	return holder[NOTIFIER];
}
