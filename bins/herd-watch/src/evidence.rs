//! Completion evidence and what a child left behind: when it ended, the shell sentinel, and the
//! result text of a Pi session (docs/protocol.md, "Pi's session file"). The `.exit` sidecar and the
//! activity snapshot are read by `herd_protocol::child`.
//!
//! Everything here reads files a child wrote, so every read is bounded and every parse is
//! defensive: a torn or malformed file is "not yet" or "invalid", never a crash and never a
//! claim the child did not make.

use std::path::Path;

use herd_core::sidecar;
use herd_protocol::session::{self, Entry, qualified};

/// How much of a session's end is read for its result.
pub const SESSION_TAIL: u64 = 4 * 1024 * 1024;
/// How much of a session's end the no-progress classification reads.
pub const NO_PROGRESS_TAIL: u64 = 128 * 1024;

/// When the child itself ended, as its completion evidence was written: the earlier of its
/// `.exit` sidecar and its runner's exit record (`runs/<id>.runner-exit.json`), never before
/// the launch; `None` without either. The run time is the child's own, not the time until a
/// watcher came to look.
pub fn ended_at_ms(
    artifacts: &herd_protocol::layout::Artifacts,
    record: &herd_protocol::run::RunRecord,
) -> Option<u64> {
    let written_ms = |path: &Path| {
        std::fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .filter(|at| *at >= record.created_at_ms)
    };
    let sidecar = written_ms(&record.session_files().exit());
    let runner = written_ms(&herd_surface::runner_exit_file(artifacts, &record.run_id));
    sidecar.into_iter().chain(runner).min()
}

/// A provider error as a host line shows it (`Error:`, `Subagent error:`).
///
/// Pi 1.6 writes an HTTP error as `<status>: <body>` (or `<prefix> (<status>): <body>`), the
/// body being the provider's JSON error object, where Pi 0.73 wrote `<status> <message>`: for
/// `500: {"code":null,"message":"scripted outage","type":"server_error"}` this returns
/// `500 scripted outage`, as 0.73 said it. Any other text (0.73's own, a connection error, a body
/// without a message) is returned as it is. The raw text stays in the result's details
/// (`errorMessage`).
pub fn provider_error_text(raw: &str) -> std::borrow::Cow<'_, str> {
    let Some((head, body)) = raw.split_once(": ") else {
        return raw.into();
    };
    let is_status = |s: &str| s.len() == 3 && s.bytes().all(|b| b.is_ascii_digit());
    let prefix = if is_status(head) {
        None
    } else {
        match head.strip_suffix(')').and_then(|h| h.rsplit_once(" (")) {
            Some((prefix, status)) if is_status(status) => Some((prefix, status)),
            _ => return raw.into(),
        }
    };
    let Ok(serde_json::Value::Object(body)) = serde_json::from_str(body.trim()) else {
        return raw.into();
    };
    let message = body
        .get("message")
        .or_else(|| body.get("error").and_then(|e| e.get("message")))
        .and_then(serde_json::Value::as_str)
        .map(str::trim)
        .filter(|m| !m.is_empty());
    match (message, prefix) {
        (Some(message), None) => format!("{head} {message}").into(),
        (Some(message), Some((prefix, status))) => format!("{prefix} ({status}): {message}").into(),
        (None, _) => raw.into(),
    }
}

/// The last shell sentinel `__SUBAGENT_DONE_<code>__` in a text: the surface's reading, which the
/// proof of a live child uses too.
use herd_surface::find_sentinel;

/// What the end of a Pi session says about the run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionSummary {
    /// The joined text of the last assistant message.
    pub last_text: Option<String>,
    /// Its stop reason (`stop`, `error`, `aborted`, `toolUse`, `length`).
    pub stop_reason: Option<String>,
    pub error_message: Option<String>,
    /// `provider/model` of the last assistant message that answered (not one that failed).
    pub model: Option<String>,
    pub thinking: Option<String>,
}

impl SessionSummary {
    /// The child's report: the last assistant text, or `Subagent error: …` when it ended in an
    /// error with no text.
    pub fn report(&self) -> Option<String> {
        match (&self.last_text, self.stop_reason.as_deref()) {
            (Some(text), _) if !text.trim().is_empty() => Some(text.clone()),
            (_, Some("error")) => Some(format!(
                "Subagent error: {}",
                self.error_message
                    .as_deref()
                    .map_or("unknown error".into(), provider_error_text)
            )),
            _ => None,
        }
    }
}

/// Reads the last `limit` bytes of `path` as whole lines: a torn first line is dropped. A FIFO
/// or other special file a child left in place is refused, never waited on.
pub fn read_tail_lines(path: &Path, limit: u64) -> std::io::Result<Option<String>> {
    sidecar::read_tail_lines(path, limit).map_err(|e| std::io::Error::other(e.to_string()))
}

/// The end of an output log, as a report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputTail {
    pub text: String,
    /// The log's size, when more of it was written than `text` shows.
    pub abbreviated_from: Option<u64>,
}

/// Reads the last `limit` bytes of the output log `path` as a report: whole lines, unless the
/// last line alone is longer than `limit`, whose end is kept rather than nothing. A log larger
/// than `limit` is marked abbreviated. The launch script's shell sentinel is not part of it.
/// `Ok(None)` when it does not exist.
pub fn read_output_tail(path: &Path, limit: u64) -> std::io::Result<Option<OutputTail>> {
    let Some(mut file) = sidecar::open_file(path).map_err(std::io::Error::other)? else {
        return Ok(None);
    };
    let len = file.metadata()?.len();
    let start = len.saturating_sub(limit);
    std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(start))?;
    let mut buf = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(file, limit), &mut buf)?;
    let text = String::from_utf8_lossy(&buf);
    let text = without_sentinel(&text);
    if start == 0 {
        return Ok(Some(OutputTail {
            text,
            abbreviated_from: None,
        }));
    }
    // A start inside the log is inside a line: that torn line is dropped, unless nothing else
    // would be left.
    let text = match text.split_once('\n') {
        Some((_, rest)) if !rest.trim().is_empty() => rest.to_owned(),
        _ => text,
    };
    Ok(Some(OutputTail {
        text,
        abbreviated_from: Some(len),
    }))
}

/// `text` without the shell sentinel `__SUBAGENT_DONE_<code>__`, which ends a line of its own,
/// or the child's last line when the child ended without a newline.
fn without_sentinel(text: &str) -> String {
    const PREFIX: &str = "__SUBAGENT_DONE_";
    text.lines()
        .filter_map(|line| match line.rfind(PREFIX) {
            Some(at) if find_sentinel(&line[at..]).is_some() => {
                Some(&line[..at]).filter(|kept| !kept.is_empty())
            }
            _ => Some(line),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Where a failed child's last output is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kept {
    /// The runner's stderr log, `logs/<id>.err`.
    Stderr,
    /// The pane's kept screen, `logs/<id>.screen`.
    Screen,
}

impl Kept {
    /// The name of the host line that shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            Kept::Stderr => "Stderr",
            Kept::Screen => "Screen",
        }
    }
}

/// The last lines of what a failed child left where herd can read it, and where they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastLines {
    pub kept: Kept,
    pub file: String,
    /// The lines, joined by newlines: raw child text, for the details and an encoded host value.
    pub text: String,
    pub n_lines: usize,
}

/// The last `max` non-empty lines of `text` before its last shell sentinel (a pane's shell
/// prints its prompt after it), or of the whole text without one; `None` when none is left.
pub fn last_lines(text: &str, max: usize) -> Option<(String, usize)> {
    const PREFIX: &str = "__SUBAGENT_DONE_";
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .iter()
        .rposition(|line| {
            line.rfind(PREFIX)
                .is_some_and(|at| find_sentinel(&line[at..]).is_some())
        })
        .unwrap_or(lines.len());
    let before_sentinel = lines[..end].iter().copied().chain(
        // The child's last line may end in the sentinel when it wrote no newline.
        lines.get(end).and_then(|line| {
            let at = line.rfind(PREFIX)?;
            Some(&line[..at]).filter(|kept| !kept.trim().is_empty())
        }),
    );
    let kept: Vec<&str> = before_sentinel
        .map(str::trim_end)
        .filter(|line| !line.is_empty())
        .collect();
    let from = kept.len().saturating_sub(max);
    let shown = &kept[from..];
    (!shown.is_empty()).then(|| (shown.join("\n"), shown.len()))
}

/// Summarises the end of a Pi session file (bounded to its last [`SESSION_TAIL`] bytes).
pub fn summarize_session(path: &Path) -> std::io::Result<Option<SessionSummary>> {
    let Some(text) = read_tail_lines(path, SESSION_TAIL)? else {
        return Ok(None);
    };
    Ok(Some(summarize_session_text(&text)))
}

fn summarize_session_text(text: &str) -> SessionSummary {
    let mut summary = SessionSummary::default();
    for entry in text.lines().filter_map(session::parse_line) {
        match entry {
            Entry::ThinkingLevelChange { thinking_level } => summary.thinking = thinking_level,
            Entry::Message { message } if message.is_assistant() => {
                summary.last_text = Some(message.text());
                // The model that answered: not the one a model change set up, nor one whose
                // call failed (an unknown model ends in an error before any answer).
                if let (Some(provider), Some(model), false) = (
                    &message.provider,
                    &message.model,
                    message.stop_reason.as_deref() == Some("error"),
                ) {
                    summary.model = Some(qualified(provider, model));
                }
                summary.stop_reason = message.stop_reason;
                summary.error_message = message.error_message;
            }
            _ => {}
        }
    }
    summary
}

/// Why an active run made no progress, from the end of its session (docs/lifecycle.md, "Notices
/// to the parent").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoProgress {
    /// An assistant tool call has no matching tool result.
    BlockedTool,
    /// The turn stopped for tool use but called no tool.
    TruncatedTurn,
    Generic,
}

impl NoProgress {
    pub fn as_str(self) -> &'static str {
        match self {
            NoProgress::BlockedTool => "blocked-tool",
            NoProgress::TruncatedTurn => "truncated-turn",
            NoProgress::Generic => "generic-no-progress",
        }
    }
}

/// Classifies the last [`NO_PROGRESS_TAIL`] bytes of a session.
pub fn classify_no_progress(session_tail: &str) -> NoProgress {
    let mut pending_calls: Vec<String> = Vec::new();
    let mut last_tool_use_without_call = false;
    for entry in session_tail.lines().filter_map(session::parse_line) {
        let Entry::Message { message } = entry else {
            continue;
        };
        if message.is_assistant() {
            let calls: Vec<String> = message.tool_call_ids().map(str::to_owned).collect();
            last_tool_use_without_call =
                calls.is_empty() && message.stop_reason.as_deref() == Some("toolUse");
            pending_calls.extend(calls);
        } else if message.is_tool_result() {
            if let Some(id) = &message.tool_call_id {
                pending_calls.retain(|c| c != id);
            }
        }
    }
    if !pending_calls.is_empty() {
        NoProgress::BlockedTool
    } else if last_tool_use_without_call {
        NoProgress::TruncatedTurn
    } else {
        NoProgress::Generic
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_errors_read_as_pi_073_wrote_them() {
        for (raw, shown) in [
            // Pi 1.6 (`formatProviderError`): the status and the provider's JSON body.
            (
                r#"500: {"code":null,"message":"scripted outage","type":"server_error"}"#,
                "500 scripted outage",
            ),
            (
                r#"429: {"error":{"message":"rate limited","type":"rate_limit"}}"#,
                "429 rate limited",
            ),
            (
                r#"OpenRouter (503): {"message":"no capacity"}"#,
                "OpenRouter (503): no capacity",
            ),
            // Pi 0.73, and text that is no such body, stay as they are.
            ("500 scripted outage", "500 scripted outage"),
            (
                "Connection error.: connect ECONNREFUSED 127.0.0.1:80",
                "Connection error.: connect ECONNREFUSED 127.0.0.1:80",
            ),
            (
                r#"500: {"type":"server_error"}"#,
                r#"500: {"type":"server_error"}"#,
            ),
            (r#"500: {"message":""}"#, r#"500: {"message":""}"#),
            ("500: not json", "500: not json"),
            (r#"5000: {"message":"x"}"#, r#"5000: {"message":"x"}"#),
        ] {
            assert_eq!(provider_error_text(raw), shown, "{raw}");
        }
    }

    #[test]
    fn a_pi_16_session_ending_in_a_provider_error_reports_the_message() {
        // The last two lines of a real Pi 1.6.0 session against the scripted model.
        let text = r#"{"type":"message","id":"9517073d","parentId":"e48c8983","timestamp":"2026-12-01T21:06:40.806Z","message":{"role":"system","content":"","sections":{"preamble":"You are a coding assistant.","tools":"<tools>"},"toolsAdded":[{"name":"bash","description":"Run a command","parameters":{"type":"object"}}],"timestamp":1796159200800}}
{"type":"message","id":"881b2b94","parentId":"e9d3909e","timestamp":"2026-12-01T21:06:43.403Z","message":{"role":"assistant","content":[],"api":"openai-completions","provider":"fake","model":"fake-model","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"error","timestamp":1796159203041,"errorMessage":"500: {\"code\":null,\"message\":\"scripted outage\",\"type\":\"server_error\"}","durationMs":345,"thinkingLevel":"off"}}"#;
        let summary = summarize_session_text(text);
        assert_eq!(
            summary.error_message.as_deref(),
            Some(r#"500: {"code":null,"message":"scripted outage","type":"server_error"}"#)
        );
        assert_eq!(
            summary.report().as_deref(),
            Some("Subagent error: 500 scripted outage")
        );
    }

    #[test]
    fn pi_16_system_messages_are_not_the_conversation() {
        // Pi 1.6 records the prompt and the declared tools as `role: "system"` messages: one
        // before the first user message, another when the loadout changes (here after a tool
        // result). They are neither the report nor a tool call.
        let text = r#"{"type":"message","id":"57d1e9f5","parentId":"abcad389","timestamp":"2026-12-01T21:06:41.292Z","message":{"role":"assistant","content":[{"type":"text","text":"DONE: searched"},{"type":"toolCall","id":"call_0_0","name":"tool_search","arguments":{"query":"subagent"}}],"stopReason":"toolUse","provider":"fake","model":"fake-model"}}
{"type":"message","id":"57d1e9f6","parentId":"57d1e9f5","timestamp":"2026-12-01T21:06:41.292Z","message":{"role":"toolResult","toolCallId":"call_0_0","toolName":"tool_search","content":[{"type":"text","text":"Loaded 1 tools."}],"isError":false,"durationMs":45,"timestamp":1796159201292}}
{"type":"message","id":"5a1e9f57","parentId":"57d1e9f6","timestamp":"2026-12-01T21:06:41.300Z","message":{"role":"system","content":"","sections":{"tools":"<tools>"},"toolsAdded":[{"name":"subagent","description":"Launch a subagent","parameters":{"type":"object"}}],"timestamp":1796159201300}}"#;
        let summary = summarize_session_text(text);
        assert_eq!(summary.last_text.as_deref(), Some("DONE: searched"));
        assert_eq!(summary.stop_reason.as_deref(), Some("toolUse"));
        assert_eq!(classify_no_progress(text), NoProgress::Generic);
    }

    #[test]
    fn session_summary_reads_the_last_assistant_message() {
        let text = r#"{"type":"session","version":3,"id":"u","timestamp":"t","cwd":"/"}
{"type":"model_change","provider":"fake","modelId":"m1"}
{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash"}],"stopReason":"toolUse","provider":"fake","model":"m1"}}
{"type":"message","message":{"role":"toolResult","toolCallId":"c1","content":[]}}
{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"DONE: wrote out.txt"}],"stopReason":"stop","provider":"fake","model":"m2"}}
"#;
        let summary = summarize_session_text(text);
        assert_eq!(summary.report().as_deref(), Some("DONE: wrote out.txt"));
        assert_eq!(summary.model.as_deref(), Some("fake/m2"));
        let failed = r#"{"type":"message","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"500 boom"}}"#;
        assert_eq!(
            summarize_session_text(failed).report().as_deref(),
            Some("Subagent error: 500 boom")
        );
        // Nothing answered: the default a model change set up is not named as the model used.
        let unanswered = r#"{"type":"model_change","provider":"fake","modelId":"parent"}
{"type":"message","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"model not found","provider":"nope","model":"x"}}"#;
        assert_eq!(summarize_session_text(unanswered).model, None);
    }

    #[test]
    fn last_lines_end_before_the_sentinel_and_skip_blank_lines() {
        let screen = "$ sh script.sh\nSyntaxError: bad flag\n\n    at main (cli.js:3)\n__SUBAGENT_DONE_1__\n$ \n";
        assert_eq!(
            last_lines(screen, 10),
            Some((
                "$ sh script.sh\nSyntaxError: bad flag\n    at main (cli.js:3)".into(),
                3
            ))
        );
        assert_eq!(
            last_lines(screen, 2),
            Some(("SyntaxError: bad flag\n    at main (cli.js:3)".into(), 2))
        );
        assert_eq!(
            last_lines("no newline__SUBAGENT_DONE_2__", 5),
            Some(("no newline".into(), 1))
        );
        assert_eq!(last_lines("\n__SUBAGENT_DONE_0__\n", 5), None);
        assert_eq!(last_lines("plain\nlog\n", 1), Some(("log".into(), 1)));
    }

    #[test]
    fn tail_read_drops_a_torn_first_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "first line\nsecond\nthird\n").unwrap();
        assert_eq!(
            read_tail_lines(&path, 100).unwrap().unwrap(),
            "first line\nsecond\nthird\n"
        );
        assert_eq!(read_tail_lines(&path, 10).unwrap().unwrap(), "third\n");
    }

    #[test]
    fn no_progress_classification() {
        let blocked = r#"{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"c9"}],"stopReason":"toolUse"}}"#;
        assert_eq!(classify_no_progress(blocked), NoProgress::BlockedTool);
        let truncated = r#"{"type":"message","message":{"role":"assistant","content":[],"stopReason":"toolUse"}}"#;
        assert_eq!(classify_no_progress(truncated), NoProgress::TruncatedTurn);
        assert_eq!(classify_no_progress(""), NoProgress::Generic);
    }
}
