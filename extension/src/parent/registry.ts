/**
 * The tool registry of the installed binaries (`herd-docs schemas --json`): the tools and
 * commands a session registers, with the schemas the binaries validate against.
 */
import * as path from "node:path";
import type { RegistryExposure, RegistrySession } from "../generated/protocol.ts";
import { type JsonObject, isObject, parseObject, run } from "./bins.ts";

export type SessionKind = RegistrySession;
export type Exposure = RegistryExposure;

export interface ToolEntry {
	name: string;
	sessions: SessionKind[];
	exposure: Exposure;
	description: string;
	parameters: JsonObject;
}

export interface CommandUsage {
	text: string;
	sessions?: SessionKind[] | undefined;
}

export interface CommandEntry {
	name: string;
	sessions: SessionKind[];
	usage: CommandUsage[];
	description: string;
}

export interface Registry {
	tools: ToolEntry[];
	commands: CommandEntry[];
}

/** The registry format this extension reads. */
const FORMAT_VERSION = 1;

function sessions(value: unknown): SessionKind[] {
	return Array.isArray(value) ? value.filter((s): s is SessionKind => s === "parent" || s === "child") : [];
}

/** A schema without its `x-*` keys, which some providers reject; herd validates them anyway. */
export function withoutExtensions(value: unknown): unknown {
	if (Array.isArray(value)) return value.map(withoutExtensions);
	if (!isObject(value)) return value;
	const out: Record<string, unknown> = {};
	for (const [key, inner] of Object.entries(value)) {
		if (!key.startsWith("x-")) out[key] = withoutExtensions(inner);
	}
	return out;
}

/** Reads the registry document; undefined when it is not one this extension understands. */
export function parseRegistry(text: string): Registry | undefined {
	const doc = parseObject(text);
	if (!doc || doc.format_version !== FORMAT_VERSION || !Array.isArray(doc.tools) || !Array.isArray(doc.commands)) {
		return undefined;
	}
	const tools: ToolEntry[] = [];
	for (const t of doc.tools) {
		if (!isObject(t) || typeof t.name !== "string" || typeof t.description !== "string" || !isObject(t.parameters)) continue;
		const exposure: Exposure = t.exposure === "deferred" || t.exposure === "inactive" ? t.exposure : "direct";
		tools.push({
			name: t.name,
			sessions: sessions(t.sessions),
			exposure,
			description: t.description,
			parameters: withoutExtensions(t.parameters) as JsonObject,
		});
	}
	const commands: CommandEntry[] = [];
	for (const c of doc.commands) {
		if (!isObject(c) || typeof c.name !== "string" || typeof c.description !== "string") continue;
		const usage: CommandUsage[] = [];
		for (const u of Array.isArray(c.usage) ? c.usage : []) {
			if (isObject(u) && typeof u.text === "string") {
				usage.push({ text: u.text, sessions: u.sessions === undefined ? undefined : sessions(u.sessions) });
			}
		}
		commands.push({ name: c.name, sessions: sessions(c.sessions), usage, description: c.description });
	}
	return { tools, commands };
}

/** Runs `herd-docs schemas --json` of the binaries in `binDir`. */
export async function loadRegistry(binDir: string, env: NodeJS.ProcessEnv): Promise<Registry | undefined> {
	const ran = await run(path.join(binDir, "herd-docs"), ["schemas", "--json"], {
		cwd: process.cwd(),
		env,
		timeoutMs: 15_000,
	});
	return ran.code === 0 ? parseRegistry(ran.stdout) : undefined;
}
