/**
 * What herd-launch tells a child through its environment (docs/protocol.md, "The child's
 * environment"), read once.
 */

/** The child's side of the protocol variables. */
export interface ChildConfig {
	/** `PI_SUBAGENT_ID`: empty in a session herd did not start. */
	readonly runId: string;
	/** The session file the sidecars sit beside (`PI_SUBAGENT_SESSION`). */
	readonly sessionFile: string;
	readonly name: string;
	/** `PI_SUBAGENT_AGENT`: the role the child runs as, when it has one. */
	readonly agent: string;
	/** `PI_SUBAGENT_AUTO_EXIT=1`: the child ends when its turn settles. */
	readonly autoExit: boolean;
	/** `PI_SUBAGENT_PERSISTENT=1`: a specialist that takes tasks from its inbox. */
	readonly persistent: boolean;
	readonly generationId: string;
	/** The persistent specialist's first task. */
	readonly taskId: string;
	readonly activityFile: string;
	/** The accept spec (`PI_SUBAGENT_ACCEPT_FILE`), when the run has a check. */
	readonly acceptFile: string;
	/** `PI_DENY_TOOLS`: tools removed from the session. */
	readonly deniedTools: readonly string[];
	/** `HERD_PROJECT_TRUST`: the project-trust decision herd-launch handed down. */
	readonly projectTrusted: boolean;
	/** `HERD_BIN_DIR`: where the herd programs are; empty means `PATH`. */
	readonly binDir: string;
	/** `HERD_ARTIFACTS`: where herd-launch records runs by default. */
	readonly artifacts: string;
	/** Pi runs in print mode (no terminal): it quits when its first prompt returns. */
	readonly printMode: boolean;
}

export function readConfig(env: NodeJS.ProcessEnv, argv: readonly string[]): ChildConfig {
	return {
		runId: env.PI_SUBAGENT_ID ?? "",
		sessionFile: env.PI_SUBAGENT_SESSION ?? env.PI_HERDR_AGENTS_SESSION ?? "",
		name: env.PI_SUBAGENT_NAME ?? "subagent",
		agent: env.PI_SUBAGENT_AGENT ?? "",
		autoExit: env.PI_SUBAGENT_AUTO_EXIT === "1",
		persistent: env.PI_SUBAGENT_PERSISTENT === "1",
		generationId: env.PI_SUBAGENT_GENERATION_ID ?? "",
		taskId: env.PI_SUBAGENT_TASK_ID ?? "",
		activityFile: env.PI_SUBAGENT_ACTIVITY_FILE ?? "",
		acceptFile: env.PI_SUBAGENT_ACCEPT_FILE ?? "",
		deniedTools: (env.PI_DENY_TOOLS ?? "")
			.split(",")
			.map((t) => t.trim())
			.filter((t) => t.length > 0),
		projectTrusted: env.HERD_PROJECT_TRUST === "trusted",
		binDir: env.HERD_BIN_DIR ?? "",
		artifacts: env.HERD_ARTIFACTS ?? "",
		printMode: argv.includes("-p") || argv.includes("--print"),
	};
}
