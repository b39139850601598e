/**
 * The request rules of the Pi Herd face's `subagent` tool (docs/pi-herd.md, Validation): five
 * actions, each (and each `assign` form) with its exact allowed fields, strings that hold
 * non-whitespace text, labels of `^[a-z][a-z0-9_-]{0,31}$`, and a startup `timeoutMs` of 5001 to
 * 300000. Anything else is `invalid_request`, decided here before any binary runs, so a refused
 * call changes nothing.
 *
 * Pure: no file, no process, no Pi.
 */
import { isObject } from "../../shared/decode.ts";
import { LABEL_PATTERN } from "../../shared/piherd-records.ts";

/** The five actions, in Pi Herd's order. */
export const ACTIONS = ["list", "assign", "steer", "reply", "close"] as const;
export type Action = (typeof ACTIONS)[number];

/** Every field any action takes. */
export const FIELDS = ["action", "agent", "label", "cwd", "task", "files", "reusable", "fork", "session", "timeoutMs", "message"] as const;
type Field = (typeof FIELDS)[number];

export { LABEL_PATTERN };
/** A full Pi session UUID. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const TIMEOUT_MIN_MS = 5001;
export const TIMEOUT_MAX_MS = 300_000;
/** The part of the startup budget kept for one bounded diagnostic read. */
export const DIAGNOSTIC_RESERVE_MS = 2000;
/** The total when `timeoutMs` is omitted: 300000 ms for the child plus the reserve. */
export const TIMEOUT_DEFAULT_MS = TIMEOUT_MAX_MS + DIAGNOSTIC_RESERVE_MS;

/** The public error categories (Pi Herd's errors). */
export type Category =
	| "invalid_request"
	| "agent_label_exists"
	| "target_not_found"
	| "target_ambiguous"
	| "agent_busy"
	| "pane_not_ready"
	| "rollback_failure"
	| "internal_failure";

/** A structured public error: what the tool answers instead of throwing. */
export interface PiHerdError {
	category: Category;
	message: string;
	operation: string;
	field?: string | undefined;
	/** What herd answered, when a binary refused. */
	herd?: string | undefined;
}

export class Refusal extends Error {
	readonly error: PiHerdError;
	constructor(error: PiHerdError) {
		super(error.message);
		this.error = error;
	}
}

export function refuse(category: Category, operation: string, message: string, field?: string): never {
	throw new Refusal({ category, operation, message, field });
}

export type Request =
	| { action: "list" }
	| {
			action: "assign";
			form: "fresh";
			agent: string;
			task: string;
			label?: string | undefined;
			cwd?: string | undefined;
			files: string[];
			reusable?: boolean | undefined;
			fork?: string | undefined;
			timeoutMs?: number | undefined;
	  }
	| {
			action: "assign";
			form: "session";
			session: string;
			task: string;
			label?: string | undefined;
			cwd?: string | undefined;
			files: string[];
			reusable?: boolean | undefined;
			timeoutMs?: number | undefined;
	  }
	| { action: "assign"; form: "live"; label: string; task: string; files: string[] }
	| { action: "steer"; label: string; message: string; files: string[] }
	| { action: "reply"; label: string; message: string; files: string[] }
	| { action: "close"; label: string };

/** The allowed fields of each action and `assign` form (docs/pi-herd.md, Parameters). */
export const ALLOWED: Record<"list" | "fresh" | "session" | "live" | "steer" | "reply" | "close", readonly Field[]> = {
	list: ["action"],
	fresh: ["action", "agent", "label", "cwd", "task", "files", "reusable", "fork", "timeoutMs"],
	session: ["action", "session", "label", "cwd", "task", "files", "reusable", "timeoutMs"],
	live: ["action", "label", "task", "files"],
	steer: ["action", "label", "message", "files"],
	reply: ["action", "label", "message", "files"],
	close: ["action", "label"],
};

function invalid(message: string, field?: string): never {
	refuse("invalid_request", "validate", message, field);
}

function text(params: Record<string, unknown>, field: Field): string | undefined {
	const value = params[field];
	if (value === undefined) return undefined;
	if (typeof value !== "string") invalid(`\`${field}\` must be a string`, field);
	if (value.trim().length === 0) invalid(`\`${field}\` must contain non-whitespace text`, field);
	return value;
}

function required(params: Record<string, unknown>, field: Field, form: string): string {
	const value = text(params, field);
	if (value === undefined) invalid(`${form} requires \`${field}\``, field);
	return value;
}

function label(params: Record<string, unknown>): string | undefined {
	const value = text(params, "label");
	if (value !== undefined && !LABEL_PATTERN.test(value)) {
		invalid(`\`label\` must match ^[a-z][a-z0-9_-]{0,31}$ (got ${JSON.stringify(value.slice(0, 40))})`, "label");
	}
	return value;
}

function files(params: Record<string, unknown>): string[] {
	const value = params.files;
	if (value === undefined) return [];
	if (!Array.isArray(value)) invalid("`files` must be an array of paths", "files");
	return value.map((item, i) => {
		if (typeof item !== "string" || item.trim().length === 0) invalid(`\`files[${i}]\` must be a path with non-whitespace text`, "files");
		return item;
	});
}

function reusable(params: Record<string, unknown>): boolean | undefined {
	const value = params.reusable;
	if (value === undefined) return undefined;
	if (typeof value !== "boolean") invalid("`reusable` must be a boolean", "reusable");
	return value;
}

function timeout(params: Record<string, unknown>): number | undefined {
	const value = params.timeoutMs;
	if (value === undefined) return undefined;
	if (typeof value !== "number" || !Number.isInteger(value) || value < TIMEOUT_MIN_MS || value > TIMEOUT_MAX_MS) {
		invalid(`\`timeoutMs\` must be an integer from ${TIMEOUT_MIN_MS} through ${TIMEOUT_MAX_MS}`, "timeoutMs");
	}
	return value;
}

/** A session source: an exact path (ending in `.jsonl`) or a full UUID. */
function sessionRef(params: Record<string, unknown>, field: "fork" | "session"): string | undefined {
	const value = text(params, field);
	if (value === undefined) return undefined;
	if (!UUID_PATTERN.test(value) && !value.endsWith(".jsonl")) {
		invalid(`\`${field}\` must be an exact Pi session path (.jsonl) or a full session UUID`, field);
	}
	return value;
}

function only(params: Record<string, unknown>, form: keyof typeof ALLOWED, what: string): void {
	const allowed: readonly string[] = ALLOWED[form];
	for (const key of Object.keys(params)) {
		if (!allowed.includes(key)) invalid(`${what} does not accept \`${key}\` (allowed: ${allowed.join(", ")})`, key);
	}
}

/** Validates one tool call; throws a `Refusal` (`invalid_request`) for anything Pi Herd refuses. */
export function validate(params: unknown): Request {
	if (!isObject(params)) invalid("the request must be an object");
	const p = params;
	for (const key of Object.keys(p)) {
		if (!(FIELDS as readonly string[]).includes(key)) invalid(`unknown field \`${key}\``, key);
	}
	const action = p.action;
	if (typeof action !== "string" || !(ACTIONS as readonly string[]).includes(action)) {
		invalid(`\`action\` must be one of ${ACTIONS.join(", ")}`, "action");
	}
	switch (action as Action) {
		case "list":
			only(p, "list", "list");
			return { action: "list" };
		case "close":
			only(p, "close", "close");
			required(p, "label", "close");
			return { action: "close", label: label(p) as string };
		case "steer":
		case "reply": {
			const a = action as "steer" | "reply";
			only(p, a, a);
			required(p, "label", a);
			const fields = { label: label(p) as string, message: required(p, "message", a), files: files(p) };
			return a === "steer" ? { action: "steer", ...fields } : { action: "reply", ...fields };
		}
		case "assign":
			return assign(p);
	}
}

function assign(p: Record<string, unknown>): Request {
	if (p.agent !== undefined && p.session !== undefined) {
		invalid("assign takes either `agent` (a fresh definition) or `session` (a historical session), not both", "session");
	}
	if (p.agent !== undefined) {
		only(p, "fresh", "assign of a fresh definition");
		return {
			action: "assign",
			form: "fresh",
			agent: required(p, "agent", "assign of a fresh definition"),
			task: required(p, "task", "assign of a fresh definition"),
			label: label(p),
			cwd: text(p, "cwd"),
			files: files(p),
			reusable: reusable(p),
			fork: sessionRef(p, "fork"),
			timeoutMs: timeout(p),
		};
	}
	if (p.session !== undefined) {
		only(p, "session", "assign of a historical session");
		return {
			action: "assign",
			form: "session",
			session: sessionRef(p, "session") as string,
			task: required(p, "task", "assign of a historical session"),
			label: label(p),
			cwd: text(p, "cwd"),
			files: files(p),
			reusable: reusable(p),
			timeoutMs: timeout(p),
		};
	}
	if (p.label === undefined) invalid("assign needs `agent` (fresh), `session` (historical) or `label` (a live reusable worker)", "agent");
	only(p, "live", "assign of a live reusable worker");
	return { action: "assign", form: "live", label: label(p) as string, task: required(p, "task", "assign of a live reusable worker"), files: files(p) };
}
