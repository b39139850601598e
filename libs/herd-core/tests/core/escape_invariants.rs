//! The invariants of `herd_core::escape`, checked the same way by the property tests and the
//! fuzz targets.
//!
//! Each check is written independently of the code under test (its own case folding, its own
//! list of line breaks) and answers `Err` with what went wrong, so a fuzz target can panic on it
//! and a property test can report it.

#![allow(dead_code, reason = "each includer uses a different subset")]

use herd_core::escape::{
    ABBREVIATED_MARKER, BODY_MAX_CHARS, CONTINUATION_LINE, EVIDENCE_MAX_CHARS, EvidenceClass,
    MESSAGE_MAX_CHARS, Message, RESULT_ABBREVIATED_MARKER, Rendered, SESSION_MAX_CHARS,
    encode_host_value, escape_report_tags,
};

/// Every character a reader (a model, a terminal, an editor) may take for the end of a line.
pub const LINE_BREAKS: [char; 7] = [
    '\n', '\r', '\u{b}', '\u{c}', '\u{85}', '\u{2028}', '\u{2029}',
];

/// Returns whether `c` must never appear raw in host text: controls, separators, bidi controls.
pub fn is_forbidden_in_host_text(c: char) -> bool {
    c.is_control()
        || LINE_BREAKS.contains(&c)
        || matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Lowers ASCII letters and folds `ſ` to `s`: what a case-insensitive reader of the tag sees.
pub fn fold(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c == '\u{17f}' {
                's'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

pub fn n_start_tags(text: &str) -> usize {
    fold(text).matches("<subagent_report").count()
}

pub fn n_end_tags(text: &str) -> usize {
    fold(text).matches("</subagent_report").count()
}

fn n_chars(text: &str) -> usize {
    text.chars().count()
}

fn decode(encoded: &str) -> Option<String> {
    serde_json::from_str(&format!("\"{encoded}\"")).ok()
}

/// Checks an encoded host value: one line, no report tag, bounded, and either the whole value
/// (decoding back to it exactly) or its head and tail around the marker, cut between escapes.
pub fn check_host_value(value: &str, encoded: &str, max_chars: usize) -> Result<(), String> {
    if let Some(c) = encoded.chars().find(|&c| is_forbidden_in_host_text(c)) {
        return Err(format!("{encoded:?} holds raw {c:?}"));
    }
    if n_start_tags(encoded) + n_end_tags(encoded) > 0 {
        return Err(format!("{encoded:?} holds a report tag"));
    }
    if max_chars >= n_chars(ABBREVIATED_MARKER) && n_chars(encoded) > max_chars {
        return Err(format!("{} chars exceed {max_chars}", n_chars(encoded)));
    }
    let full = encode_host_value(value, usize::MAX);
    if decode(&full).as_deref() != Some(value) {
        return Err(format!("{full:?} does not decode back to {value:?}"));
    }
    if encoded == full {
        return Ok(());
    }
    let (Some(first), Some(last)) = (
        encoded.find(ABBREVIATED_MARKER),
        encoded.rfind(ABBREVIATED_MARKER),
    ) else {
        return Err(format!("{encoded:?} is neither whole nor abbreviated"));
    };
    let head = &encoded[..first];
    let tail = &encoded[last + ABBREVIATED_MARKER.len()..];
    match (decode(head), decode(tail)) {
        (Some(h), Some(t)) if value.starts_with(&h) && value.ends_with(&t) => Ok(()),
        _ => Err(format!("{encoded:?} cuts through an escape of {full:?}")),
    }
}

/// Checks a rendered message against the message it came from.
pub fn check_message(message: &Message, rendered: &Rendered, limit: usize) -> Result<(), String> {
    let text = &rendered.text;
    if rendered.within_limit != (n_chars(text) <= limit) {
        return Err(format!(
            "within_limit is {} for {} chars",
            rendered.within_limit,
            n_chars(text)
        ));
    }
    if limit == MESSAGE_MAX_CHARS && !rendered.within_limit {
        return Err(format!("{} chars exceed the default limit", n_chars(text)));
    }
    if !rendered.within_limit {
        let all_dropped = rendered.n_dropped_evidence == message.evidence.len();
        if !all_dropped {
            return Err("over the limit with evidence left".into());
        }
    }

    let (before, after) = match &message.report {
        Some(report) => {
            if n_start_tags(text) != 1 || n_end_tags(text) != 1 {
                return Err(format!(
                    "{} start and {} end tags",
                    n_start_tags(text),
                    n_end_tags(text)
                ));
            }
            // Folding turns each character into one character, so a position in the folded
            // text is the same position in the text.
            let folded: Vec<char> = fold(text).chars().collect();
            let chars: Vec<char> = text.chars().collect();
            let open = find(&folded, "<subagent_report").ok_or("no start tag")?;
            let close = find(&folded, "</subagent_report>").ok_or("no end tag")?;
            if close < open {
                return Err("the end tag comes before the start tag".into());
            }
            let open_line_end = open
                + chars[open..]
                    .iter()
                    .position(|&c| c == '\n')
                    .ok_or("start tag line")?;
            let before: String = chars[..open].iter().collect();
            let open_line: String = chars[open..open_line_end].iter().collect();
            let body: String = chars[open_line_end + 1..close.saturating_sub(1)]
                .iter()
                .collect();
            let after: String = chars[close + "</subagent_report>".len()..].iter().collect();
            if !open_line.ends_with(&format!(" kind=\"{}\">", report.kind)) {
                return Err(format!("start tag line {open_line:?}"));
            }
            if !before.is_empty() && !before.ends_with('\n') {
                return Err("the start tag does not begin a line".into());
            }
            if chars.get(close.wrapping_sub(1)) != Some(&'\n') {
                return Err("the end tag does not begin a line".into());
            }
            let escaped = escape_report_tags(&report.body);
            if rendered.body_abbreviated {
                let marker = format!("\n{RESULT_ABBREVIATED_MARKER}\n");
                let (Some(first), Some(last)) = (body.find(&marker), body.rfind(&marker)) else {
                    return Err("an abbreviated body without the marker".into());
                };
                if !escaped.starts_with(&body[..first])
                    || !escaped.ends_with(&body[last + marker.len()..])
                {
                    return Err("an abbreviated body is not the head and tail of the text".into());
                }
            } else if body != escaped {
                return Err("the body changed without being abbreviated".into());
            }
            (before, after)
        }
        None => {
            if n_start_tags(text) + n_end_tags(text) != 0 {
                return Err("a report tag in a message without a report".into());
            }
            (String::new(), format!("\n{text}"))
        }
    };

    for host in [&before, &after] {
        if let Some(c) = host
            .chars()
            .find(|&c| c != '\n' && is_forbidden_in_host_text(c))
        {
            return Err(format!("host text holds raw {c:?}"));
        }
    }
    let n_before = before.matches('\n').count();
    let want_before = match &message.report {
        Some(_) => 1 + usize::from(message.check.is_some()) + 1,
        None => 0,
    };
    if n_before != want_before {
        return Err(format!(
            "{n_before} host lines before the block, expected {want_before}"
        ));
    }
    let after_lines: Vec<&str> = after.split('\n').skip(1).collect();
    let n_kept = message.evidence.len() - rendered.n_dropped_evidence;
    let mut want_after = n_kept + usize::from(rendered.n_dropped_evidence > 0) + 1;
    want_after += usize::from(message.session.is_some());
    if message.report.is_none() {
        want_after += 1 + usize::from(message.check.is_some());
    }
    if after_lines.len() != want_after {
        return Err(format!(
            "{} host lines after the block, expected {want_after}",
            after_lines.len()
        ));
    }
    if message.continuation == CONTINUATION_LINE && after_lines.last() != Some(&CONTINUATION_LINE) {
        return Err("the continuation line is not last".into());
    }
    let session = message.session.as_deref();
    let before_last = after_lines.get(after_lines.len().wrapping_sub(2)).copied();
    if session.is_some_and(|line| is_clean(line, SESSION_MAX_CHARS)) && before_last != session {
        return Err("the session reference did not survive".into());
    }
    // The body shrinks below its own bound only once every evidence line is gone.
    if let Some(report) = &message.report {
        let own_bound = n_chars(&escape_report_tags(&report.body)) <= BODY_MAX_CHARS;
        if rendered.body_abbreviated
            && own_bound
            && rendered.n_dropped_evidence != message.evidence.len()
        {
            return Err("the body shrank while evidence was left".into());
        }
    }
    // Evidence gives way file lists first, each class from its last line up. The kept lines
    // can be named exactly when every line is already clean host text.
    if message
        .evidence
        .iter()
        .all(|e| is_clean(&e.line, EVIDENCE_MAX_CHARS))
    {
        let n_file_lists = message
            .evidence
            .iter()
            .filter(|e| e.class == EvidenceClass::FileList)
            .count();
        let n_details = message.evidence.len() - n_file_lists;
        let n_dropped = rendered.n_dropped_evidence;
        let (keep_file_lists, keep_details) = if n_dropped <= n_file_lists {
            (n_file_lists - n_dropped, n_details)
        } else {
            (0, n_details - (n_dropped - n_file_lists).min(n_details))
        };
        let (mut seen_file_lists, mut seen_details) = (0, 0);
        let mut expect = Vec::new();
        for e in &message.evidence {
            let seen = if e.class == EvidenceClass::FileList {
                &mut seen_file_lists
            } else {
                &mut seen_details
            };
            *seen += 1;
            let keep = if e.class == EvidenceClass::FileList {
                keep_file_lists
            } else {
                keep_details
            };
            if *seen <= keep {
                expect.push(e.line.as_str());
            }
        }
        let first = if message.report.is_none() {
            1 + usize::from(message.check.is_some())
        } else {
            0
        };
        if after_lines[first..first + n_kept] != expect[..] {
            return Err(format!(
                "kept evidence {:?}, expected {expect:?}",
                &after_lines[first..first + n_kept]
            ));
        }
    }
    Ok(())
}

/// Returns whether a host line passes rendering unchanged.
fn is_clean(line: &str, max_chars: usize) -> bool {
    n_chars(line) <= max_chars
        && !line.chars().any(is_forbidden_in_host_text)
        && n_start_tags(line) + n_end_tags(line) == 0
}

fn find(haystack: &[char], needle: &str) -> Option<usize> {
    let needle: Vec<char> = needle.chars().collect();
    haystack
        .windows(needle.len())
        .position(|window| window == needle.as_slice())
}
