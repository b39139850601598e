/**
 * The state that outlives one extension instance.
 *
 * Pi re-imports the extension on `/reload`, `/new`, `/resume` and `/fork` and invalidates the
 * old instance's `pi` and `ctx`, while child processes and timers of the old instance live on.
 * So the long-lived state is one object on `globalThis`, adopted by every later instance, and
 * every callback reads `hub.live` when it runs: nothing keeps a `pi` or a `ctx` of its own.
 */
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { WatchEventDetails } from "../generated/protocol.ts";
import type { Notice } from "./notices.ts";

/** The current instance: set between its `session_start` and its `session_shutdown`. */
export interface Live {
	pi: ExtensionAPI;
	ctx: ExtensionContext;
	/** The session's artifacts directory. */
	dir: string;
	binDir: string;
}

/** One `herd-watch follow --json --ack` of one artifacts directory. */
export interface Follower {
	child: ChildProcessWithoutNullStreams;
	/** Restarts in a row that delivered nothing, for the backoff. */
	restarts: number;
}

/** A result herd emitted, not yet acknowledged. */
export interface Pending {
	dir: string;
	key: string;
	runId: string;
	name: string;
	outcome: string;
	message: string;
	/** herd's details of the result, with a Pi Herd worker's `piHerd` beside them. */
	details: WatchEventDetails & { readonly piHerd?: unknown };
}

export interface Hub {
	live?: Live | undefined;
	followers: Map<string, Follower>;
	/** Every artifacts directory this process launched into or recovered. */
	dirs: Set<string>;
	/** Results received and not yet in a transcript, by `<dir>\n<key>`. */
	pending: Map<string, Pending>;
	/** Of those, the ones handed to `pi.sendMessage`, awaiting their `message_end`. */
	sent: Set<string>;
	/** Notices waiting for a live session (`notices.ts`). */
	notices: Notice[];
	/** The clock of the widget while any run is open. */
	widgetTimer?: ReturnType<typeof setInterval> | undefined;
	/** A widget redraw is running; another is due after it. */
	widgetBusy: boolean;
	widgetAgain: boolean;
	/** Whether a widget is drawn now. */
	widgetShown: boolean;
	/** Whether `/subagents-init` activated the task-model writer in this process. */
	writerActive: boolean;
}

const HUB = Symbol.for("herd.parent.v1");

/** The process's hub, created by the first instance. */
export function hub(): Hub {
	const holder = globalThis as typeof globalThis & { [HUB]?: Hub };
	let found = holder[HUB];
	if (!found) {
		found = {
			followers: new Map(),
			dirs: new Set(),
			pending: new Map(),
			sent: new Set(),
			notices: [],
			widgetBusy: false,
			widgetAgain: false,
			widgetShown: false,
			writerActive: false,
		};
		holder[HUB] = found;
	}
	return found;
}

/** The map key of a result. */
export function pendingKey(dir: string, key: string): string {
	return `${dir}\n${key}`;
}

/** Runs `use` with the live instance, if any; a stale object never throws out of a callback. */
export function withLive(use: (live: Live) => void): void {
	const live = hub().live;
	if (!live) return;
	try {
		use(live);
	} catch {
		// The instance went stale between the check and the call: the next one picks it up.
	}
}
