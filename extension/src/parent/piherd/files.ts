/**
 * The face's `files` (docs/pi-herd.md, `files`): each path resolved from the controller's cwd, a
 * readable regular file, canonicalised with realpath, the first canonical occurrence kept.
 * Complete strict UTF-8 text is embedded while the embedded total fits the bound; any other file
 * is a canonical reference (path and size), never copied. A missing, unreadable or non-regular
 * file refuses the whole call before anything runs.
 *
 * The rendering goes into herd's task artifact (assign), its steer text or its resume message
 * (reply). File contents may have been written by a child, so they are framed the way herd
 * frames what a child can influence: the frame's own tags are escaped inside, and the path is
 * encoded for one attribute.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { Refusal, refuse } from "./validate.ts";

/** The most bytes embedded in one request, all files together (Pi Herd's default). */
export const INLINE_LIMIT_BYTES = 128 * 1024;

export interface Attachment {
	/** The canonical path. */
	path: string;
	bytes: number;
	/** The text, when embedded. */
	text?: string | undefined;
	/** Why a file is a reference and not embedded. */
	reason?: string | undefined;
}

const STRICT = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Whether `bytes` are complete strict UTF-8 text: decodable, no NUL, no control character but
 * tab, newline and carriage return. `typed` (a steer, typed into the child's input, which takes
 * only newlines) also excludes tab and carriage return.
 */
export function asText(bytes: Uint8Array, typed: boolean): string | undefined {
	let decoded: string;
	try {
		decoded = STRICT.decode(bytes);
	} catch {
		return undefined;
	}
	const controls = typed ? /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/ : /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
	return controls.test(decoded) ? undefined : decoded;
}

/** Resolves `paths` from `cwd`; throws an `invalid_request` refusal for any bad one. */
export function resolveFiles(paths: readonly string[], cwd: string, typed: boolean, limit = INLINE_LIMIT_BYTES): Attachment[] {
	const seen = new Set<string>();
	const out: Attachment[] = [];
	let embedded = 0;
	for (const [i, given] of paths.entries()) {
		let canonical: string;
		let size: number;
		try {
			canonical = fs.realpathSync(path.resolve(cwd, given));
			const stat = fs.statSync(canonical);
			if (!stat.isFile()) refuse("invalid_request", "files", `files[${i}] (${given}) is not a regular file`, "files");
			size = stat.size;
			fs.accessSync(canonical, fs.constants.R_OK);
		} catch (err) {
			if (err instanceof Refusal) throw err;
			refuse("invalid_request", "files", `files[${i}] (${given}) is not a readable file: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, "files");
		}
		if (seen.has(canonical)) continue;
		seen.add(canonical);
		if (embedded + size > limit) {
			out.push({ path: canonical, bytes: size, reason: "larger than the embedding bound left" });
			continue;
		}
		let text: string | undefined;
		try {
			text = asText(fs.readFileSync(canonical), typed);
		} catch (err) {
			refuse("invalid_request", "files", `files[${i}] (${given}) could not be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, "files");
		}
		if (text === undefined) {
			out.push({ path: canonical, bytes: size, reason: typed ? "not text a steer can carry" : "not strict UTF-8 text" });
			continue;
		}
		embedded += size;
		out.push({ path: canonical, bytes: size, text });
	}
	return out;
}

/** A value for one attribute: quotes, angle brackets, ampersands and controls escaped. */
function attribute(value: string): string {
	return value.replace(/[&"<>\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => {
		switch (c) {
			case "&":
				return "&amp;";
			case '"':
				return "&quot;";
			case "<":
				return "&lt;";
			case ">":
				return "&gt;";
			default:
				return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
		}
	});
}

/** The text inside a frame: its own tags (and herd's report tags) cannot be closed or opened. */
function body(text: string): string {
	return text.replace(/<(\/?)(file|subagent_report)\b/gi, "&lt;$1$2");
}

/** The attachments after `text`: each file framed, embedded or referenced. */
export function withFiles(text: string, attachments: readonly Attachment[]): string {
	if (attachments.length === 0) return text;
	const parts = [text, "", "Supporting files (resolved by the owner; embedded text, or a local reference to read yourself):"];
	for (const a of attachments) {
		if (a.text !== undefined) {
			parts.push(`<file path="${attribute(a.path)}" bytes="${a.bytes}">`, body(a.text.endsWith("\n") ? a.text.slice(0, -1) : a.text), "</file>");
		} else {
			parts.push(`<file path="${attribute(a.path)}" bytes="${a.bytes}" reference="${attribute(a.reason ?? "reference")}" />`);
		}
	}
	return parts.join("\n");
}
