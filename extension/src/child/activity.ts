/**
 * The activity snapshot (`PI_SUBAGENT_ACTIVITY_FILE`, `subagent-activity/<run-id>.json`,
 * docs/sidecars.md and docs/schemas/activity.schema.json): written atomically,
 * throttled for streaming events, frozen at `done`. A recorder that fails three writes in a row
 * stops writing; the host has other evidence.
 */
import type { Activity as Snapshot } from "../generated/protocol.ts";
import { ARTIFACT_FILE_READ_LIMITS, ARTIFACT_FILE_VERSIONS } from "../generated/run-files.ts";
import { decoded, integer, nullable, object, optional, string } from "../shared/decode.ts";
import { label, readSmall, writeAtomic } from "./files.ts";

/** The throttle of streaming activity events. */
const THROTTLE_MS = 500;

type Phase = Snapshot["phase"];
type Scope = NonNullable<Snapshot["activeScope"]>;

/** What a snapshot left by an earlier process of this run carries on: its sequence and inputs. */
const PREVIOUS = object<Snapshot>({ runningChildId: string, sequence: integer, inputCount: optional(nullable(integer)) });

export class Activity {
	private sequence = 0;
	/** The inputs Pi took (`inputCount`): a steer is delivered once it grows after its keys. */
	private inputs = 0;
	private readonly createdAt = Date.now();
	private phase: Phase = "starting";
	private latestEvent = "session_start";
	private agentActive = false;
	private turnActive = false;
	private providerActive = false;
	private streaming = false;
	private toolActive = false;
	private activeSince: number | undefined = undefined;
	private waitingSince: number | undefined = undefined;
	private turnIndex: number | undefined = undefined;
	private messageEventType: string | undefined = undefined;
	private toolCallId: string | undefined = undefined;
	private toolName: string | undefined = undefined;
	private toolStartedAt: number | undefined = undefined;
	private toolEndedAt: number | undefined = undefined;
	private frozen = false;
	private failures = 0;
	private lastFlush = 0;
	private pending: ReturnType<typeof setTimeout> | undefined = undefined;

	/**
	 * `file` is the snapshot; `runId` the run it speaks for. A persistent specialist's sequence
	 * never resets, not even across a restart of Pi, so it goes on from the snapshot it finds.
	 */
	constructor(
		private readonly file: string,
		private readonly runId: string,
		private readonly persistent: boolean,
	) {
		const previous = file ? decoded(readSmall(file, ARTIFACT_FILE_READ_LIMITS.activity), PREVIOUS, file, ARTIFACT_FILE_READ_LIMITS.activity) : undefined;
		if (previous?.runningChildId === runId) {
			this.sequence = previous.sequence;
			this.inputs = previous.inputCount ?? 0;
		}
	}

	/** Records `event`; `update` changes the state first. Streaming events are throttled. */
	record(event: string, update?: (a: Activity) => void, throttled = false): void {
		if (!this.file || this.failures >= 3) return;
		if (this.frozen && !(this.persistent && event === "input")) return;
		this.frozen = false;
		update?.(this);
		this.latestEvent = event;
		this.sequence += 1;
		this.derivePhase();
		if (throttled) {
			const wait = this.lastFlush + THROTTLE_MS - Date.now();
			if (wait > 0) {
				this.pending ??= setTimeout(() => this.flush(), wait);
				return;
			}
		}
		this.flush();
	}

	/** Records a final event: phase `done`, then no more writes until a persistent task starts. */
	finish(event: string): void {
		if (!this.file || this.frozen) return;
		this.agentActive = this.turnActive = this.providerActive = this.streaming = this.toolActive = false;
		this.latestEvent = event;
		this.sequence += 1;
		this.phase = "done";
		this.flush();
		this.frozen = true;
	}

	/** Pi took one more input: a message typed or sent to it, not one this extension started. */
	tookInput(): void {
		this.inputs += 1;
		this.setAgent(true);
	}

	setAgent(active: boolean): void {
		this.agentActive = active;
		if (!active) this.turnActive = this.providerActive = this.streaming = this.toolActive = false;
	}

	setTurn(active: boolean, index?: number): void {
		this.turnActive = active;
		if (index !== undefined) this.turnIndex = index;
		if (!active) this.providerActive = this.streaming = false;
	}

	setProvider(active: boolean): void {
		this.providerActive = active;
	}

	setStreaming(active: boolean, type?: string): void {
		this.streaming = active;
		if (type) this.messageEventType = label(type);
	}

	startTool(id: unknown, name: unknown): void {
		this.toolActive = true;
		this.toolCallId = label(id);
		this.toolName = label(name);
		this.toolStartedAt = Date.now();
		this.toolEndedAt = undefined;
	}

	endTool(): void {
		this.toolActive = false;
		this.toolEndedAt = Date.now();
	}

	private scope(): Scope | undefined {
		if (this.toolActive) return "tool";
		if (this.providerActive) return "provider";
		if (this.streaming) return "streaming";
		if (this.turnActive) return "turn";
		if (this.agentActive) return "agent";
		return undefined;
	}

	private derivePhase(): void {
		const now = Date.now();
		if (this.agentActive || this.turnActive || this.toolActive) {
			if (this.phase !== "active") this.activeSince = now;
			this.phase = "active";
			this.waitingSince = undefined;
		} else if (this.phase === "active" || this.latestEvent === "agent_end") {
			this.phase = "waiting";
			this.waitingSince = now;
			this.activeSince = undefined;
		}
	}

	private flush(): void {
		if (this.pending) {
			clearTimeout(this.pending);
			this.pending = undefined;
		}
		const snapshot: Snapshot = {
			version: ARTIFACT_FILE_VERSIONS.activity,
			runningChildId: this.runId,
			createdAt: this.createdAt,
			updatedAt: Date.now(),
			sequence: this.sequence,
			latestEvent: this.latestEvent,
			phase: this.phase,
			agentActive: this.agentActive,
			turnActive: this.turnActive,
			providerActive: this.providerActive,
			toolActive: this.toolActive,
		};
		// Each field the snapshot has only while it applies.
		const optional: { [K in keyof Snapshot]?: Snapshot[K] | undefined } = {
			activeScope: this.scope(),
			activeSince: this.activeSince,
			waitingSince: this.waitingSince,
			turnIndex: this.turnIndex,
			messageEventType: this.messageEventType,
			toolCallId: this.toolCallId,
			toolName: this.toolName,
			toolStartedAt: this.toolStartedAt,
			toolEndedAt: this.toolEndedAt,
			inputCount: this.inputs > 0 ? this.inputs : undefined,
		};
		for (const [key, value] of Object.entries(optional)) {
			if (value !== undefined) Object.assign(snapshot, { [key]: value });
		}
		try {
			writeAtomic(this.file, `${JSON.stringify(snapshot)}\n`, String(this.sequence));
			this.failures = 0;
			this.lastFlush = Date.now();
		} catch {
			this.failures += 1;
		}
	}
}
