/**
 * The tools widget's line, as widget.ts writes it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { toolsLine } from "./widget.ts";

test("the line names the child and counts its tools", () => {
	assert.equal(toolsLine("scout", 12, 4), "[scout] — 12 tools · 4 denied");
	assert.equal(toolsLine("scout", 1, 0), "[scout] — 1 tool · 0 denied");
});
