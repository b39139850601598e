/**
 * The tool registry of the installed binaries (`herd-docs schemas --json`): the tools and
 * commands a session registers, with the schemas the binaries validate against.
 */
import * as path from "node:path";
import type { RegistryExposure, RegistrySession } from "../generated/protocol.ts";
import { type JsonObject, decode, isObject } from "../shared/decode.ts";
import { registry } from "../shared/formats.ts";
import { run } from "./bins.ts";

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

/** A schema without its `x-*` keys, which some providers reject; herd validates them anyway. */
export function withoutExtensions(schema: JsonObject): JsonObject {
	const out: Record<string, unknown> = {};
	for (const [key, inner] of Object.entries(schema)) if (!key.startsWith("x-")) out[key] = withoutExtensionsIn(inner);
	return out;
}

function withoutExtensionsIn(value: unknown): unknown {
	if (Array.isArray(value)) return value.map(withoutExtensionsIn);
	return isObject(value) ? withoutExtensions(value) : value;
}

/** Reads the registry document; undefined when it is not one this extension understands. */
export function parseRegistry(text: string): Registry | undefined {
	const doc = decode(text, registry, "herd-docs schemas --json");
	if (!doc.ok) return undefined;
	return {
		tools: doc.value.tools.map((t) => ({ ...t, parameters: withoutExtensions(t.parameters) })),
		commands: doc.value.commands.map((c) => ({
			name: c.name,
			sessions: c.sessions,
			description: c.description,
			usage: c.usage.map((u) => ({ text: u.text, sessions: u.sessions === undefined ? undefined : (u.sessions ?? []) })),
		})),
	};
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
