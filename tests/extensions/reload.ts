/**
 * A test helper for the RPC parent scenarios: `/test-reload` reloads the session's extensions,
 * as `/reload` does in the TUI (RPC has no reload command of its own).
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function reloadCommand(pi: ExtensionAPI): void {
	pi.registerCommand("test-reload", {
		description: "Reload the extensions (test helper)",
		handler: async (_args, ctx) => {
			await ctx.reload();
		},
	});
}
