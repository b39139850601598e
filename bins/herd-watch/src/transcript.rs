//! `herd-watch status --transcript`: a run's conversation, for a person and for `--json`.
//!
//! `--json` keeps one encoded line per message (`role: text`); a person reads the messages as a
//! transcript: a heading per role, the text's own line breaks, the last `lines` lines. The
//! text is the child's, so every control character but the line break and the tab is shown as
//! `\u{…}`, never sent to the terminal, and each line is bounded.
//!
//! A run on another machine is read from its host: the host's `--json` lines, decoded here and
//! shown the same way, under the same bounds (the host is trusted no more than the child).

use std::path::Path;

use herd_cli::Output;
use herd_core::{Error, ErrorCode, escape};
use herd_protocol::layout::Artifacts;
use herd_protocol::run::{RemoteRun, RunRecord, Runner};
use herd_protocol::watch::{StatusTranscript, WatchStatus};

use crate::evidence;

/// The longest line shown; a longer one ends with `…`.
const LINE_MAX_CHARS: usize = 2_000;

/// One message of the transcript: who spoke (none for a command's output) and what.
struct Said {
    role: Option<String>,
    text: String,
}

/// The transcript of `record`: its last `lines` messages for `--json`, its last `lines` lines for
/// a person.
pub fn show(record: &RunRecord, artifacts: &Artifacts, lines: usize) -> Result<Output, Error> {
    let unavailable = |e: std::io::Error| {
        Error::new(
            ErrorCode::Unavailable,
            format!("cannot read the transcript: {e}"),
        )
    };
    let said: Vec<Said> = match record.runner {
        Runner::Pi => {
            let tail =
                evidence::read_tail_lines(Path::new(&record.session_file), evidence::SESSION_TAIL)
                    .map_err(unavailable)?;
            tail.unwrap_or_default()
                .lines()
                .filter_map(message)
                .collect()
        }
        Runner::Exec => {
            let tail = evidence::read_tail_lines(&artifacts.stdout_log(&record.run_id), 256 * 1024)
                .map_err(unavailable)?;
            tail.unwrap_or_default()
                .lines()
                .map(|l| Said {
                    role: None,
                    text: l.to_owned(),
                })
                .collect()
        }
    };
    let json_lines: Vec<String> = said.iter().map(json_line).collect();
    let start = json_lines.len().saturating_sub(lines);
    let json = WatchStatus::Transcript(StatusTranscript {
        run_id: record.run_id.clone(),
        lines: json_lines[start..].to_vec(),
    });
    Ok(Output::ok(json, for_people(&said, lines)))
}

/// The transcript of `record`, a run on another machine, as its host reads it.
pub fn show_remote(record: &RunRecord, remote: &RemoteRun, lines: usize) -> Result<Output, Error> {
    let count = lines.to_string();
    let args = ["status", "--transcript", "--lines", count.as_str()];
    let (doc, code) = crate::relay::ask(record, remote, &args)?;
    let host = &remote.host;
    if let Some(body) = doc
        .get("error")
        .and_then(|e| serde_json::from_value::<herd_core::error::ErrorBody>(e.clone()).ok())
    {
        let said = escape::encode_host_value(&body.message, 500);
        return Err(Error::new(body.code, format!("{host} answered: {said}")));
    }
    let answered = serde_json::from_value::<StatusTranscript>(doc)
        .ok()
        .filter(|_| code == herd_core::exit::SUCCESS);
    let Some(answered) = answered else {
        return Err(Error::new(
            ErrorCode::Unavailable,
            format!(
                "{host} answered the transcript of {} with no transcript",
                record.run_id
            ),
        ));
    };
    let start = answered.lines.len().saturating_sub(lines);
    let json_lines: Vec<String> = answered.lines[start..]
        .iter()
        .map(|l| escape::encode_host_line(l, JSON_LINE_MAX_CHARS))
        .collect();
    let said: Vec<Said> = json_lines
        .iter()
        .map(|l| decoded(l, record.runner))
        .collect();
    let mut human = format!(
        "Transcript of {} on {host}:\n",
        escape::json_string(&record.name)
    );
    human.push_str(&for_people(&said, lines));
    let json = WatchStatus::Transcript(StatusTranscript {
        run_id: record.run_id.clone(),
        lines: json_lines,
    });
    Ok(Output::ok(json, human))
}

/// The longest line of `--json` read from a host: a message's text and its role.
const JSON_LINE_MAX_CHARS: usize = 2_100;

/// One `--json` line as the message it encodes: `role: text` of a Pi run, the text of a
/// command's. A line that does not decode is shown as it is.
fn decoded(line: &str, runner: Runner) -> Said {
    let (role, encoded) = match (runner, line.split_once(": ")) {
        (Runner::Pi, Some((role, rest))) if !role.is_empty() && !role.contains(' ') => {
            (Some(role.to_owned()), rest)
        }
        _ => (None, line),
    };
    let text = serde_json::from_str::<String>(&format!("\"{encoded}\""))
        .unwrap_or_else(|_| encoded.to_owned());
    Said { role, text }
}

/// One message as `--json` carries it: `role: text`, encoded on one line.
fn json_line(said: &Said) -> String {
    match &said.role {
        Some(role) => format!("{role}: {}", escape::encode_host_value(&said.text, 2_000)),
        None => escape::encode_host_value(&said.text, 2_000),
    }
}

/// The transcript as a person reads it: `── user ──` before each change of speaker, the text's
/// lines as they are (made safe for a terminal), the last `lines` of them.
fn for_people(said: &[Said], lines: usize) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut speaker: Option<&str> = None;
    for s in said {
        if let Some(role) = s.role.as_deref() {
            if speaker != Some(role) {
                if !out.is_empty() {
                    out.push(String::new());
                }
                out.push(format!("── {role} ──"));
                speaker = Some(role);
            }
        }
        out.extend(s.text.lines().map(terminal_safe));
    }
    let start = out.len().saturating_sub(lines);
    let mut shown = out[start..].to_vec();
    if start > 0 {
        shown.insert(0, format!("[… {start} earlier lines; --lines shows more]"));
    }
    shown.join("\n")
}

/// One line of child text for a terminal: control characters (escape sequences included) as
/// `\u{…}`, at most [`LINE_MAX_CHARS`].
fn terminal_safe(line: &str) -> String {
    let mut out = String::new();
    for (n, c) in line.chars().enumerate() {
        if n == LINE_MAX_CHARS {
            out.push('…');
            break;
        }
        match c {
            '\t' => out.push(c),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

/// One session entry as a message: its role and its text blocks (a tool call as `[tool name]`).
fn message(line: &str) -> Option<Said> {
    let Some(herd_protocol::session::Entry::Message { message }) =
        herd_protocol::session::parse_line(line)
    else {
        return None;
    };
    let role = message.role.as_deref()?;
    if role == "system" {
        // Pi 1.6's record of the prompt and the declared tools, not the conversation.
        return None;
    }
    let text: Vec<String> = message
        .content
        .as_array()?
        .iter()
        .filter_map(|block| match block.get("type")?.as_str()? {
            "text" => Some(block.get("text")?.as_str()?.to_owned()),
            "toolCall" => Some(format!("[tool {}]", block.get("name")?.as_str()?)),
            _ => None,
        })
        .collect();
    Some(Said {
        role: Some(role.to_owned()),
        text: text.join("\n"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line_of(line: &str) -> Option<String> {
        message(line).as_ref().map(json_line)
    }

    #[test]
    fn the_transcript_is_the_conversation() {
        // Lines of a real Pi 1.6.0 session (shortened).
        let system = r#"{"type":"message","id":"9517073d","parentId":"e48c8983","timestamp":"2026-12-01T21:06:40.806Z","message":{"role":"system","content":[{"type":"text","text":"You are a coding assistant."}],"sections":{"preamble":"You are a coding assistant."},"toolsAdded":[{"name":"bash","description":"Run a command","parameters":{"type":"object"}}],"timestamp":1796159200800}}"#;
        let user = r#"{"type":"message","id":"cdf50a66","parentId":"9517073d","timestamp":"2026-12-01T21:06:40.806Z","message":{"role":"user","content":[{"type":"text","text":"say"}],"timestamp":1796159200800}}"#;
        let call = r#"{"type":"message","id":"abcad389","parentId":"cdf50a66","timestamp":"2026-12-01T21:06:41.211Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"call_0_0","name":"bash","arguments":{"command":"echo hi"}}],"stopReason":"toolUse"}}"#;
        // A system message's content is `""` today; one with blocks is still not shown.
        assert_eq!(line_of(system), None);
        assert_eq!(
            line_of(&system.replace(
                r#"[{"type":"text","text":"You are a coding assistant."}]"#,
                r#""""#
            )),
            None
        );
        assert_eq!(line_of(user).as_deref(), Some("user: say"));
        assert_eq!(line_of(call).as_deref(), Some("assistant: [tool bash]"));
    }

    #[test]
    fn a_person_reads_roles_real_line_breaks_and_nothing_for_the_terminal() {
        let said = [
            Said {
                role: Some("user".into()),
                text: "Count the files.\nOnly in src/.".into(),
            },
            Said {
                role: Some("assistant".into()),
                text: "[tool bash]".into(),
            },
            Said {
                role: Some("assistant".into()),
                text: "There are \"3\".\n\x1b]0;owned\x07done".into(),
            },
        ];
        insta::assert_snapshot!(for_people(&said, 50), @r#"
        ── user ──
        Count the files.
        Only in src/.

        ── assistant ──
        [tool bash]
        There are "3".
        \u{1b}]0;owned\u{7}done
        "#);
        assert_eq!(
            for_people(&said, 2),
            "[… 6 earlier lines; --lines shows more]\nThere are \"3\".\n\\u{1b}]0;owned\\u{7}done"
        );
    }

    #[test]
    fn a_hosts_lines_read_back_as_the_messages_they_encode() {
        let said = Said {
            role: Some("assistant".into()),
            text: "There are \"3\".\n\x1b]0;owned\x07done \\o/".into(),
        };
        let back = decoded(&json_line(&said), Runner::Pi);
        assert_eq!(back.role.as_deref(), Some("assistant"));
        assert_eq!(back.text, said.text);
        // A command's output has no speaker, whatever its text looks like.
        let back = decoded(r"user: hi\nthere", Runner::Exec);
        assert_eq!((back.role, back.text.as_str()), (None, "user: hi\nthere"));
        // A line that is not an encoding is shown as it came (then made safe).
        let back = decoded(r#"user: a"b\"#, Runner::Pi);
        assert_eq!(back.text, r#"a"b\"#);
    }
}
