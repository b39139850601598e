/**
 * The herd programs a child runs, found as herd finds them: `$HERD_BIN_DIR/<name>`, else `<name>`
 * on `PATH`. They run through the extensions' one runner (shared/process.ts).
 */
import * as path from "node:path";

export function herdProgram(binDir: string, name: "herd-accept" | "herd-watch"): string {
	return binDir ? path.join(binDir, name) : name;
}
