//! The expanded view of a report in the terminal, where child text is fenced off line by line.

use super::encoded::Encoded;
use super::host::{encode_host_value, is_host_escaped};
use super::report::{NAME_MAX_CHARS, ReportKind, abbreviate_name};

/// Returns whether `c` ends a line of child text: LF, CR, VT, FF, NEL, U+2028 or U+2029.
fn is_line_separator(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r' | '\u{b}' | '\u{c}' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// Splits child text on every line separator, CRLF counting as one; a separator at the very
/// end does not start an empty last line.
fn split_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if !is_line_separator(c) {
            continue;
        }
        lines.push(&text[start..i]);
        start = i + c.len_utf8();
        if c == '\r' && chars.peek().is_some_and(|&(_, next)| next == '\n') {
            chars.next();
            start += 1;
        }
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// Shows a line of child text without anything a terminal would act on: every control except
/// tab, DEL, the C1 controls and the bidi controls become `\uXXXX`.
///
/// Tab stays because it only moves the cursor forward and code is indented with it.
fn view_line(line: &str) -> String {
    let mut enc = Encoded::with_capacity(line.len());
    for c in line.chars() {
        if c != '\t' && is_host_escaped(c) {
            enc.push_unicode_escape(c)
        } else {
            enc.push_char(c)
        }
    }
    enc.into_string()
}

/// Returns the expanded view of a report: child text between a `┌ Child report from <name>
/// (<kind>)` rule and a `└ end of child report` rule, each of its lines prefixed with `│ `.
///
/// Lines are joined with `\n`; the text does not end with one.
///
/// ```
/// use herd_core::escape::{ReportKind, expanded_view};
///
/// assert_eq!(
///     expanded_view("scout", ReportKind::Result, "found it\u{2028}\u{1b}[2J└ end of child report"),
///     "┌ Child report from scout (result)\n│ found it\n│ \\u001b[2J└ end of child report\n└ end of child report",
/// );
/// ```
pub fn expanded_view(name: &str, kind: ReportKind, body: &str) -> String {
    // An escape is at most 6 characters, so this bound never cuts the abbreviated name.
    let name = encode_host_value(&abbreviate_name(name), NAME_MAX_CHARS * 6);
    let mut out = format!("┌ Child report from {name} ({kind})");
    for line in split_lines(body) {
        out.push('\n');
        if line.is_empty() {
            out.push('│');
        } else {
            out.push_str("│ ");
            out.push_str(&view_line(line));
        }
    }
    out.push_str("\n└ end of child report");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(body: &str, expect: &[&str]) {
        let view = expanded_view("n", ReportKind::Result, body);
        let mut want = vec!["┌ Child report from n (result)"];
        want.extend_from_slice(expect);
        want.push("└ end of child report");
        assert_eq!(
            view.split('\n').collect::<Vec<_>>(),
            want,
            "expanded_view({body:?})"
        );
    }

    #[test]
    fn child_text_is_split_on_every_line_separator() {
        check("", &[]);
        check("one", &["│ one"]);
        check("one\n", &["│ one"]);
        check(
            "a\nb\rc\r\nd\u{b}e\u{c}f\u{85}g\u{2028}h\u{2029}i",
            &[
                "│ a", "│ b", "│ c", "│ d", "│ e", "│ f", "│ g", "│ h", "│ i",
            ],
        );
        check("a\n\nb\r\r\nc", &["│ a", "│", "│ b", "│", "│ c"]);
        check("\n", &["│"]);
        check("\n\n", &["│", "│"]);
    }

    #[test]
    fn terminal_controls_are_shown_not_acted_on() {
        check("\u{1b}[31mred\u{1b}[0m", &[r"│ \u001b[31mred\u001b[0m"]);
        check("a\u{8}\u{8}b\u{7}\u{0}", &[r"│ a\u0008\u0008b\u0007\u0000"]);
        check("\tindented", &["│ \tindented"]);
        check("\u{7f}\u{9b}2J\u{90}", &[r"│ \u007f\u009b2J\u0090"]);
        check(
            "abc\u{202e}fed\u{2066}x\u{2069}\u{61c}\u{200e}\u{200f}",
            &[r"│ abc\u202efed\u2066x\u2069\u061c\u200e\u200f"],
        );
        check(
            "<subagent_report> \\u001b",
            &["│ <subagent_report> \\u001b"],
        );
    }

    #[test]
    fn the_header_encodes_the_name() {
        let view = expanded_view("a\nb\u{1b}\"", ReportKind::HelpRequest, "x");
        assert_eq!(
            view,
            "┌ Child report from a\\nb\\u001b\\\" (help-request)\n│ x\n└ end of child report"
        );
        let long = expanded_view(&"n".repeat(90), ReportKind::TaskResult, "");
        assert_eq!(
            long,
            format!(
                "┌ Child report from {}… (task-result)\n└ end of child report",
                "n".repeat(79)
            )
        );
    }
}
