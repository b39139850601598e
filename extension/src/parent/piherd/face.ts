/**
 * Which model-facing API a session shows: herd's ten tools (docs/tools.md, the default) or
 * Pi Herd's single `subagent` tool (docs/pi-herd.md), chosen per session by `HERD_API`. Never both:
 * the two share the tool name `subagent`. Both drive the same herd programs over the same runs.
 */

export type Face = "herd" | "pi-herd";

/** The face `HERD_API` names, or an error text for a value that names none. */
export function chooseFace(env: NodeJS.ProcessEnv = process.env): Face | { error: string } {
	const value = (env.HERD_API ?? "").trim();
	if (value === "" || value === "herd") return "herd";
	if (value === "pi-herd") return "pi-herd";
	return { error: `HERD_API=${JSON.stringify(value.slice(0, 40))} names no API herd has (herd or pi-herd); no delegation tool is registered.` };
}
