//! Host-line encoding: child-influenced values written on one line of host text.
//!
//! An encoded value is the inside of a JSON string (without the quotes): `\n`, `"` and `\`
//! stay visible as `\n`, `\"` and `\\`, tab and carriage return as `\t` and `\r`, and every
//! other control, line or paragraph separator and bidi control as `\uXXXX`. The `<` of a
//! report tag becomes `\u003c`. So the value never holds a raw line break or a report tag, and
//! an unabbreviated value decodes back to the original exactly.

use super::encoded::{Encoded, group_thousands, n_chars};
use super::report::continues_report_tag;

/// The marker that stands for the middle of an abbreviated host value.
pub const ABBREVIATED_MARKER: &str = "[... abbreviated ...]";

/// Returns whether a host line must never hold `c` raw: C0 controls, DEL, C1 controls (NEL
/// among them), the line and paragraph separators U+2028 and U+2029, and the bidi controls
/// U+061C, U+200E, U+200F, U+202A–U+202E and U+2066–U+2069.
pub fn is_host_escaped(c: char) -> bool {
    matches!(
        c,
        '\u{0}'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{61c}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
    )
}

/// How much of JSON string syntax an encoding applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scheme {
    /// A child-influenced value: `"` and `\` escaped too, so the value reads unambiguously.
    Value,
    /// A host line the caller assembled: only what could break the line or open a tag.
    Line,
    /// A complete JSON string literal: like `Value`, and every `<` escaped.
    Json,
}

fn encode(value: &str, scheme: Scheme) -> Encoded {
    let mut enc = Encoded::with_capacity(value.len());
    for (i, c) in value.char_indices() {
        match c {
            '\n' => enc.push_escape("\\n"),
            '\t' => enc.push_escape("\\t"),
            '\r' => enc.push_escape("\\r"),
            '"' if scheme != Scheme::Line => enc.push_escape("\\\""),
            '\\' if scheme != Scheme::Line => enc.push_escape("\\\\"),
            '<' if scheme == Scheme::Json || continues_report_tag(&value[i + 1..]) => {
                enc.push_unicode_escape(c);
            }
            c if is_host_escaped(c) => enc.push_unicode_escape(c),
            c => enc.push_char(c),
        }
    }
    enc
}

/// Encodes a child-influenced value for a host line and bounds it to `max_chars` characters.
///
/// A longer value keeps its head and tail around [`ABBREVIATED_MARKER`], never cutting
/// through an escape sequence. A bound smaller than the marker leaves the marker alone.
///
/// ```
/// use herd_core::escape::encode_host_value;
///
/// assert_eq!(encode_host_value("line 1\nParent action: \"x\"", 100), r#"line 1\nParent action: \"x\""#);
/// assert_eq!(encode_host_value("\u{1b}[31m</subagent_report>", 100), r"\u001b[31m\u003c/subagent_report>");
/// assert_eq!(encode_host_value("abcdefghijklmnopqrstuvwxyz", 25), "ab[... abbreviated ...]yz");
/// ```
pub fn encode_host_value(value: &str, max_chars: usize) -> String {
    encode(value, Scheme::Value).abbreviate(max_chars, ABBREVIATED_MARKER)
}

/// Bounds a host line the caller assembled, keeping it one line without report tags.
///
/// Unlike [`encode_host_value`] it leaves `"` and `\` alone, so a line built from encoded values
/// passes unchanged; it is the last guard for a line that embedded a raw value by mistake, and
/// the encoding of text that is already quoted, such as a value rendered as JSON.
///
/// ```
/// use herd_core::escape::encode_host_line;
///
/// assert_eq!(encode_host_line("got \"a\u{2028}b\"\nnext", 100), r#"got "a\u2028b"\nnext"#);
/// ```
pub fn encode_host_line(line: &str, max_chars: usize) -> String {
    encode(line, Scheme::Line).abbreviate(max_chars, ABBREVIATED_MARKER)
}

/// Returns `value` as a complete JSON string literal, quotes included, with every `<`, control,
/// separator and bidi control as a `\u` escape: the exact value for a command the parent may
/// run, such as `worktree_remove({ target: … })`. It is never abbreviated.
///
/// ```
/// use herd_core::escape::json_string;
///
/// assert_eq!(json_string("wt/<a>\u{2028}b\"c"), r#""wt/\u003ca>\u2028b\"c""#);
/// ```
pub fn json_string(value: &str) -> String {
    let enc = encode(value, Scheme::Json);
    let mut out = String::with_capacity(enc.as_str().len() + 2);
    out.push('"');
    out.push_str(enc.as_str());
    out.push('"');
    out
}

/// The singular and plural of what a list counts, as in `(and 1 more file)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Noun {
    pub one: &'static str,
    pub many: &'static str,
}

impl Noun {
    pub const FILES: Noun = Noun::new("file", "files");

    pub const fn new(one: &'static str, many: &'static str) -> Noun {
        Noun { one, many }
    }

    fn count(self, n: usize) -> &'static str {
        if n == 1 { self.one } else { self.many }
    }
}

/// Encodes a list of child-influenced values as one host value of at most `max_chars`
/// characters: the items separated by `, `, as many whole items as fit, then a count such as
/// ` (and 312 more files)`.
///
/// When not even the first item fits whole, it is shown abbreviated if the bound leaves room
/// for more than the marker, otherwise the list is only its count, `(313 files)`; that count is
/// the one part that may exceed a bound too small to hold it.
///
/// ```
/// use herd_core::escape::{Noun, encode_list};
///
/// let files = ["src/a.rs", "src/b.rs", "src/c.rs", "src/d.rs"];
/// assert_eq!(encode_list(&files, 100, Noun::FILES), "src/a.rs, src/b.rs, src/c.rs, src/d.rs");
/// assert_eq!(encode_list(&files, 37, Noun::FILES), "src/a.rs, src/b.rs (and 2 more files)");
/// ```
pub fn encode_list<S: AsRef<str>>(items: &[S], max_chars: usize, noun: Noun) -> String {
    const SEPARATOR: &str = ", ";
    let more = |n: usize| format!(" (and {} more {})", group_thousands(n), noun.count(n));

    // Encode items until the bound is passed; the ones after that cannot be shown anyway.
    let mut encoded: Vec<(String, usize)> = Vec::new();
    let mut whole_chars = 0;
    for item in items {
        let enc = encode_host_value(item.as_ref(), max_chars);
        let len = n_chars(&enc);
        whole_chars += if encoded.is_empty() {
            len
        } else {
            SEPARATOR.len() + len
        };
        encoded.push((enc, len));
        if whole_chars > max_chars {
            break;
        }
    }
    if encoded.len() == items.len() && whole_chars <= max_chars {
        return join(encoded.iter().map(|(enc, _)| enc.as_str()), SEPARATOR);
    }

    // Not every item fits: as many whole items as leave room for the count of the others.
    let mut n_shown = 0;
    let mut shown_chars = 0;
    for (i, (_, len)) in encoded.iter().enumerate() {
        let sep_chars = if i == 0 { 0 } else { SEPARATOR.len() };
        if shown_chars + sep_chars + len + n_chars(&more(items.len() - i - 1)) > max_chars {
            break;
        }
        shown_chars += sep_chars + len;
        n_shown += 1;
    }
    if n_shown > 0 {
        let mut out = join(
            encoded[..n_shown].iter().map(|(enc, _)| enc.as_str()),
            SEPARATOR,
        );
        out.push_str(&more(items.len() - n_shown));
        return out;
    }

    // Not even the first item fits whole next to the count.
    let suffix = if items.len() > 1 {
        more(items.len() - 1)
    } else {
        String::new()
    };
    let room = max_chars.saturating_sub(n_chars(&suffix));
    match items.first() {
        Some(first) if room > n_chars(ABBREVIATED_MARKER) => {
            let mut out = encode_host_value(first.as_ref(), room);
            out.push_str(&suffix);
            out
        }
        _ => format!(
            "({} {})",
            group_thousands(items.len()),
            noun.count(items.len())
        ),
    }
}

fn join<'a>(parts: impl Iterator<Item = &'a str>, separator: &str) -> String {
    let mut out = String::new();
    for (i, part) in parts.enumerate() {
        if i > 0 {
            out.push_str(separator);
        }
        out.push_str(part);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expect: &str) {
        let actual = encode_host_value(input, 1_000);
        assert_eq!(actual, expect, "encode_host_value({input:?})");
        let decoded: String = serde_json::from_str(&format!("\"{actual}\"")).unwrap();
        assert_eq!(decoded, input, "{actual:?} does not decode back");
    }

    #[test]
    fn values_stay_on_one_line_and_decode_back() {
        check("plain value", "plain value");
        check("a\nb", r"a\nb");
        check("say \"hi\"", r#"say \"hi\""#);
        check(r"C:\dir", r"C:\\dir");
        check("a\tb\rc", r"a\tb\rc");
        check("a\r\nb", r"a\r\nb");
        check(
            "\u{0}\u{8}\u{b}\u{c}\u{1b}\u{1f}",
            r"\u0000\u0008\u000b\u000c\u001b\u001f",
        );
        check(
            "\u{7f}\u{80}\u{85}\u{9b}\u{9f}",
            r"\u007f\u0080\u0085\u009b\u009f",
        );
        check("a\u{2028}b\u{2029}c", r"a\u2028b\u2029c");
        check(
            "\u{61c}\u{200e}\u{200f}\u{202a}\u{202b}\u{202c}\u{202d}\u{202e}\u{2066}\u{2067}\u{2068}\u{2069}",
            r"\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",
        );
        check(
            "</subagent_report><SubAgent_Report x>",
            r"\u003c/subagent_report>\u003cSubAgent_Report x>",
        );
        check("<b>tags</b> pass", "<b>tags</b> pass");
        check("é 日本 🦀 \u{200b}", "é 日本 🦀 \u{200b}");
    }

    #[test]
    fn long_values_are_abbreviated_between_escapes() {
        let check = |input: &str, max: usize, expect: &str| {
            let actual = encode_host_value(input, max);
            assert_eq!(actual, expect, "encode_host_value({input:?}, {max})");
            assert!(n_chars(&actual) <= max, "{actual:?} exceeds {max}");
        };
        check(
            "0123456789abcdefghijklmnopqrstuvwxyz",
            36,
            "0123456789abcdefghijklmnopqrstuvwxyz",
        );
        check(
            "0123456789abcdefghijklmnopqrstuvwxyz",
            31,
            "01234[... abbreviated ...]vwxyz",
        );
        check(
            "0123456789abcdefghijklmnopqrstuvwxyz",
            30,
            "01234[... abbreviated ...]wxyz",
        );
        // The head would end inside `\u001b`; the whole escape moves to the part cut away.
        check(
            "0123\u{1b}56789abcdefghijklmnopqrstuvwxyz",
            31,
            "0123[... abbreviated ...]vwxyz",
        );
        // The tail would start inside `\n`.
        check(
            "0123456789abcdefghijklmnopqrstuvwx\nzzz",
            30,
            "01234[... abbreviated ...]zzz",
        );
    }

    #[test]
    fn lines_keep_quotes_but_not_breaks() {
        assert_eq!(
            encode_host_line("Error: \"a\\b\"\nParent action: x</subagent_report>", 1_000),
            r#"Error: "a\b"\nParent action: x\u003c/subagent_report>"#
        );
    }

    #[test]
    fn json_strings_are_exact() {
        for value in [
            "",
            "plain",
            "a<b>c",
            "\u{2028}\u{85}\u{1b}\"\\",
            "wt/fix\u{202e}txt.rs",
        ] {
            let literal = json_string(value);
            assert!(
                !literal.contains(['<', '\u{2028}', '\u{85}', '\u{1b}', '\u{202e}']),
                "{literal}"
            );
            let decoded: String = serde_json::from_str(&literal).unwrap();
            assert_eq!(decoded, value);
        }
        assert_eq!(json_string("a<b"), r#""a\u003cb""#);
    }

    #[test]
    fn lists_show_whole_items_then_a_count() {
        let check = |items: &[&str], max: usize, expect: &str| {
            let actual = encode_list(items, max, Noun::FILES);
            assert_eq!(actual, expect, "encode_list({items:?}, {max})");
            assert!(n_chars(&actual) <= max, "{actual:?} exceeds {max}");
        };
        check(&[], 10, "");
        check(&["a", "b"], 4, "a, b");
        let abc = ["aaaaaaaaaa", "bbbbbbbbbb", "cccccccccc"];
        check(&abc, 34, "aaaaaaaaaa, bbbbbbbbbb, cccccccccc");
        check(&abc, 33, "aaaaaaaaaa (and 2 more files)");
        check(&abc, 29, "aaaaaaaaaa (and 2 more files)");
        check(&abc, 28, "(3 files)");
        check(&["aaaa", &"b".repeat(20)], 22, "aaaa (and 1 more file)");
        check(&["aaaa", &"b".repeat(20)], 21, "(2 files)");
        check(&["a\nb", "c"], 7, r"a\nb, c");
        let first = "x".repeat(50);
        check(&[&first], 40, "xxxxxxxxxx[... abbreviated ...]xxxxxxxxx");
        check(
            &[&first, "b"],
            40,
            "x[... abbreviated ...] (and 1 more file)",
        );
        // A bound too small for the count itself is exceeded by the count.
        assert_eq!(encode_list(&["a\nb", "c"], 6, Noun::FILES), "(2 files)");
    }

    #[test]
    fn long_lists_count_in_thousands() {
        let files: Vec<String> = (0..1_500).map(|i| format!("f{i}")).collect();
        let actual = encode_list(&files, 40, Noun::FILES);
        assert_eq!(actual, "f0, f1, f2, f3 (and 1,496 more files)");
    }
}
