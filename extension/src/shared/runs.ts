/**
 * herd's files of a run read by the extensions, each bounded and decoded as its generated type.
 */
import * as fs from "node:fs";
import type { RunRecord } from "../generated/protocol.ts";
import { RUN_ID_PATTERN } from "../generated/protocol.ts";
import { RUN_FILE_READ_LIMITS, runFile } from "../generated/run-files.ts";
import { type Shape, decoded } from "./decode.ts";
import { runRecord } from "./formats.ts";

/** The file's text when it is a regular file of at most `limit` bytes, else undefined. */
export function readLimited(file: string, limit: number): string | undefined {
	try {
		const stat = fs.statSync(file);
		if (!stat.isFile() || stat.size > limit) return undefined;
		return fs.readFileSync(file, "utf8");
	} catch {
		return undefined;
	}
}

/** The document in `file` as `shape`'s type, or undefined when it is missing, too large or not one. */
export function readDocument<T>(file: string, shape: Shape<T>, limit: number): T | undefined {
	return decoded(readLimited(file, limit), shape, file, limit);
}

/** The record `runs/<runId>.json` of `dir`, or undefined. */
export function readRecord(dir: string, runId: string): RunRecord | undefined {
	if (!RUN_ID_PATTERN.test(runId)) return undefined;
	return readDocument(runFile(dir, runId, "record"), runRecord, RUN_FILE_READ_LIMITS.record);
}
