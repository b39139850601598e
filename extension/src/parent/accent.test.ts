/**
 * The widget's accent in the terminal: the frame amber when every row is open, blue while one
 * is active, the row text in the terminal's own colour.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { paintAccent } from "./accent.ts";

const AMBER = "\x1b[38;5;214m";
const BLUE = "\x1b[38;5;33m";
const RESET = "\x1b[0m";

const BOX = ["╭─ Subagents ──── 1 open ─╮", "│ 00:03  Scout   waiting │", "╰────────────────────────╯"];

test("every row open: the frame is amber and the row text is not", () => {
	const painted = paintAccent(BOX, "amber");
	assert.equal(painted[0], `${AMBER}╭─${RESET} Subagents ${AMBER}────${RESET} 1 open ${AMBER}─╮${RESET}`);
	assert.equal(painted[1], `${AMBER}│${RESET} 00:03  Scout   waiting ${AMBER}│${RESET}`);
	assert.equal(painted[2], `${AMBER}╰────────────────────────╯${RESET}`);
	// What the person reads is unchanged.
	assert.deepEqual(
		painted.map((l) => l.replaceAll(AMBER, "").replaceAll(RESET, "")),
		BOX,
	);
});

test("a run active: the frame is blue", () => {
	const painted = paintAccent(BOX, "blue");
	assert.ok(painted.every((l) => l.startsWith(BLUE) && !l.includes(AMBER)), painted.join("\n"));
});

test("an accent herd does not name leaves the lines as herd drew them", () => {
	assert.deepEqual(paintAccent(BOX, undefined), BOX);
	assert.deepEqual(paintAccent(BOX, "green"), BOX);
});
