/**
 * The widget's accent in Pi's terminal (docs/tools.md, "What the parent sees"): the frame of a
 * directory's box is blue while any of its runs is active and amber when every row is open, as
 * `herd-watch status --widget` paints it in a terminal (256 colours: 33 blue, 214 amber). Row text
 * keeps the terminal's own colour. Only the TUI is painted: an RPC client gets the lines as herd
 * drew them, with the accent beside them in herd's document.
 */

const SGR: Record<string, string> = {
	blue: "\x1b[38;5;33m",
	amber: "\x1b[38;5;214m",
};
const RESET = "\x1b[0m";
/** The characters of the frame, as herd-watch's `paint` colours them. */
const FRAME = new Set(["╭", "╮", "╰", "╯", "│", "─"]);

/** `lines` with their frame in `accent` ("blue" or "amber"); any other value leaves them as they are. */
export function paintAccent(lines: string[], accent: string | undefined): string[] {
	const sgr = accent === undefined ? undefined : SGR[accent];
	if (sgr === undefined) return lines;
	return lines.map((line) => {
		let out = "";
		let framed = false;
		for (const c of line) {
			const frame = FRAME.has(c);
			if (frame !== framed) {
				out += frame ? sgr : RESET;
				framed = frame;
			}
			out += c;
		}
		return framed ? out + RESET : out;
	});
}
