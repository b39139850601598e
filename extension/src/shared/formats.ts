/**
 * The shapes of herd's documents the extensions read, each over its generated type: the fields
 * the extensions rely on, checked by `decode` (decode.ts). A field not listed here is taken as
 * the type says and read by nobody who needs it checked.
 */
import type {
	ErrorDocument,
	ErrorDocumentErrorBody,
	LaunchAck,
	LaunchAckLaunchStatus,
	LaunchAckPersistentIds,
	LaunchModels,
	LaunchSend,
	Registry,
	RegistryCommand,
	RegistryTool,
	RegistryUsage,
	RolesListing,
	RolesListingRoleRow,
	RolesListingSpecialistRow,
	RunRecord,
	RunRecordLaunchStatus,
	RunRecordPaneRef,
	RunRecordSurfaceKind,
	WatchCancel,
	WatchCancelCancelStatus,
	WatchEvent,
	WatchEventCancelError,
	WatchEventDetails,
	WatchEventLabel,
	WatchNotify,
	WatchNotifyNotifyTold,
	WatchStatusLabel,
	WatchStatusStatusRow,
	WatchStatusStatusRuns,
	WatchStatusStatusWidget,
	WatchSteer,
	WatchSteerSteerState,
	WatchStop,
	WatchStopStopStatus,
	WatchWait,
	WatchWaitDetails,
} from "../generated/protocol.ts";
import { type Shape, array, boolean, integer, literal, member, nullable, number, object, optional, string, variants, where } from "./decode.ts";

/** An optional field that may also be null. */
const maybeString = optional(nullable(string));

/** `{"error":{"code","message","field"}}`, what a binary prints with `--json` when it fails. */
export const errorDocument: Shape<ErrorDocument> = object<ErrorDocument>({ error: object<ErrorDocumentErrorBody>({ message: string }) });

/** A run record `runs/<id>.json`: what the extensions read of it. */
export const runRecord: Shape<RunRecord> = object<RunRecord>({
	run_id: string,
	name: string,
	session_file: string,
	agent: maybeString,
	parent_run_id: maybeString,
	persistent: optional(boolean),
	interactive: optional(boolean),
	auto_exit: optional(boolean),
	status: member<RunRecordLaunchStatus>(),
	surface: member<RunRecordSurfaceKind>(),
	cwd: string,
	model: maybeString,
	thinking: maybeString,
	updated_at_ms: optional(number),
	pane: optional(nullable(object<RunRecordPaneRef>({ pane_id: string, workspace_id: maybeString, tab_id: maybeString }))),
});

/** The fields of a result's details the Pi Herd decoration reads (shared/piherd-result.ts). */
const detailFields = {
	elapsedMs: optional(nullable(number)),
	errorMessage: maybeString,
	error: optional(nullable(member<WatchEventCancelError>())),
	sessionFile: maybeString,
	stdoutFile: maybeString,
} as const;

const outcome = literal("completed", "failed", "cancelled", "help");

/** One line of `herd-watch follow --json`; an event this extension does not read is refused. */
export const watchEvent: Shape<WatchEvent> = variants<WatchEvent, "event">("event", {
	result: { run_id: string, name: string, key: string, message: string, outcome, task: maybeString, details: object<WatchEventDetails>(detailFields) },
	status: { run_id: string, name: string, label: member<WatchEventLabel>() },
	stalled: { run_id: string, name: string, message: string },
	recovered: { run_id: string, name: string, message: string },
	notice: { run_id: string, message: string },
	needs_input: { run_id: string, name: string, message: string },
});

/** `herd-watch wait --json`: the settled result. */
export const watchWait: Shape<WatchWait> = object<WatchWait>({ run_id: string, name: string, message: string, outcome, details: object<WatchWaitDetails>(detailFields) });

const statusRow: Shape<WatchStatusStatusRow> = object<WatchStatusStatusRow>({
	run_id: string,
	label: member<WatchStatusLabel>(),
	detail: nullable(string),
	since_ms: nullable(number),
	elapsed_ms: number,
	outcome: nullable(outcome),
	delivered: boolean,
});

/** `herd-watch status --json`: every run of the directory but the attempts a fallback replaced. */
export const statusRuns: Shape<WatchStatusStatusRuns> = object<WatchStatusStatusRuns>({ runs: array(statusRow) });

/** `herd-watch status --widget --json`: the widget, and the runs not yet delivered. */
export const statusWidget: Shape<WatchStatusStatusWidget> = object<WatchStatusStatusWidget>({
	widget: string,
	accent: literal("blue", "amber"),
	active: integer,
	open: integer,
	runs: array(statusRow),
});

/** `herd-watch notify --json`. */
export const watchNotify: Shape<WatchNotify> = object<WatchNotify>({ looking: boolean, told: array(object<WatchNotifyNotifyTold>({ shown: boolean })) });

/** `herd-watch steer --json`. */
export const watchSteer: Shape<WatchSteer> = object<WatchSteer>({ request_id: string, state: member<WatchSteerSteerState>() });

/** `herd-watch cancel --json`. */
export const watchCancel: Shape<WatchCancel> = object<WatchCancel>({ status: member<WatchCancelCancelStatus>() });

/** `herd-watch stop --json`. */
export const watchStop: Shape<WatchStop> = object<WatchStop>({ status: member<WatchStopStopStatus>() });

/** `herd-launch spawn --json` and `resume --json`. */
export const launchAck: Shape<LaunchAck> = object<LaunchAck>({
	run_id: string,
	session_file: string,
	status: member<LaunchAckLaunchStatus>(),
	pane_id: optional(string),
	persistent_ids: optional(object<LaunchAckPersistentIds>({ task_id: string })),
});

/** `herd-launch send --json`. */
export const launchSend: Shape<LaunchSend> = object<LaunchSend>({ run_id: string, task_id: string });

/** `herd-launch models --json`: the catalog. */
export const launchModels: Shape<LaunchModels> = object<LaunchModels>({ guideline: string, launch_roster: boolean });

const strings = array(string);

/** `herd-launch roles --json`. */
export const rolesListing: Shape<RolesListing> = object<RolesListing>({
	roles: array(
		object<RolesListingRoleRow>({
			name: string,
			scope: string,
			error: maybeString,
			description: maybeString,
			model: maybeString,
			thinking: maybeString,
			tools: optional(nullable(strings)),
			deny_tools: optional(strings),
			skills: optional(nullable(strings)),
			spawning: optional(nullable(boolean)),
		}),
	),
	specialists: array(object<RolesListingSpecialistRow>({ run_id: string, state: string })),
});

const session = literal("parent", "child");

/** `herd-docs schemas --json`: the tool registry, in the one format version this extension reads. */
export const registry: Shape<Registry> = object<Registry>({
	format_version: where(integer, (v) => v === 1, "format version 1"),
	tools: array(
		object<RegistryTool>({
			name: string,
			description: string,
			exposure: literal("deferred", "direct", "inactive"),
			parameters: object({}),
			sessions: array(session),
		}),
	),
	commands: array(
		object<RegistryCommand>({
			name: string,
			description: string,
			sessions: array(session),
			usage: array(object<RegistryUsage>({ text: string, sessions: optional(nullable(array(session))) })),
		}),
	),
});
