//! Completion evidence and what a child left behind: the `.exit` sidecar, the shell sentinel,
//! activity snapshots, and the result text of a Pi session (protocol.md §1.2, §1.3, §1.7).
//!
//! Everything here reads files a child wrote, so every read is bounded and every parse is
//! defensive: a torn or malformed file is "not yet" or "invalid", never a crash and never a
//! claim the child did not make.

use std::path::Path;

use herd_core::sidecar;

/// The bound of a `.exit` sidecar read.
const EXIT_READ_LIMIT: u64 = 256 * 1024;
/// The bound of an activity snapshot read.
const ACTIVITY_READ_LIMIT: u64 = 64 * 1024;
/// How much of a session's end is read for its result.
pub const SESSION_TAIL: u64 = 4 * 1024 * 1024;
/// How much of a session's end the no-progress classification reads (protocol.md §1.7).
pub const NO_PROGRESS_TAIL: u64 = 128 * 1024;

/// What a `.exit` sidecar says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Completion {
    /// `{"type":"done"}`: the child finished normally.
    Done,
    /// `{"type":"error",…}`: the last assistant message ended in an error.
    Error { message: String },
    /// `{"type":"ping",…}`: the child asked for help.
    Ping { message: String },
}

/// The outcome of reading a `.exit` sidecar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExitRead {
    Missing,
    /// Present but not parseable: the child may be mid-write; read again later.
    NotYet,
    Found(Completion),
}

/// The fallback sentence for an error sidecar without a message.
pub const ERROR_FALLBACK: &str = "the child ended with a provider error and wrote no message";

/// Reads the `.exit` sidecar of `record`'s session, ignoring one written before the run was
/// created: a resumed session keeps the sidecar of the run it continues (its help request, its
/// result), which is that earlier run's evidence, not this one's.
pub fn read_run_exit(record: &herd_protocol::run::RunRecord) -> ExitRead {
    let path = record.session_files().exit();
    let written_ms = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    if written_ms.is_some_and(|at| at < record.created_at_ms) {
        return ExitRead::Missing;
    }
    read_exit(&path)
}

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

/// Reads the `.exit` sidecar at `path`.
pub fn read_exit(path: &Path) -> ExitRead {
    let bytes = match sidecar::read_bounded(path, EXIT_READ_LIMIT) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return ExitRead::Missing,
        // Oversized or unreadable: treat as torn and look again; supervision has other evidence.
        Err(_) => return ExitRead::NotYet,
    };
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return ExitRead::NotYet;
    };
    let text = |key: &str| {
        value
            .get(key)
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    let completion = match value.get("type").and_then(serde_json::Value::as_str) {
        Some("done") => Completion::Done,
        Some("error") => Completion::Error {
            message: text("errorMessage")
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| ERROR_FALLBACK.to_owned()),
        },
        Some("ping") => Completion::Ping {
            message: text("message").unwrap_or_default(),
        },
        other => Completion::Error {
            message: format!(
                "unsupported completion payload type {}",
                serde_json::json!(other)
            ),
        },
    };
    ExitRead::Found(completion)
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

/// Finds the last shell sentinel `__SUBAGENT_DONE_<code>__` in `text` and returns its code.
pub fn find_sentinel(text: &str) -> Option<i32> {
    const PREFIX: &str = "__SUBAGENT_DONE_";
    let mut found = None;
    let mut rest = text;
    while let Some(idx) = rest.find(PREFIX) {
        let after = &rest[idx + PREFIX.len()..];
        let digits_len = after
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b'-')
            .count();
        if digits_len > 0 && after[digits_len..].starts_with("__") {
            if let Ok(code) = after[..digits_len].parse::<i32>() {
                found = Some(code);
            }
        }
        rest = after;
    }
    found
}

/// The phase of an activity snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Starting,
    Active,
    Waiting,
    Done,
}

/// The fields of an activity snapshot the host uses (protocol.md §1.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activity {
    pub sequence: u64,
    pub updated_at_ms: u64,
    pub phase: Phase,
    pub latest_event: String,
    pub active_scope: Option<String>,
    pub tool_name: Option<String>,
}

impl Activity {
    /// The label an active snapshot adds to `active`: the tool name, `provider`, `streaming`,
    /// or the scope.
    pub fn label(&self) -> Option<String> {
        if self.phase != Phase::Active {
            return None;
        }
        match self.active_scope.as_deref() {
            Some("tool") => Some(self.tool_name.clone().unwrap_or_else(|| "tool".to_owned())),
            Some(scope) => Some(scope.to_owned()),
            None => self.tool_name.clone(),
        }
    }
}

/// The outcome of reading an activity snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActivityRead {
    Missing,
    /// Malformed, of another version, or for another run.
    Invalid(String),
    Found(Activity),
}

/// Reads and validates the activity snapshot of `run_id` at `path`.
pub fn read_activity(path: &Path, run_id: &str) -> ActivityRead {
    let bytes = match sidecar::read_bounded(path, ACTIVITY_READ_LIMIT) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return ActivityRead::Missing,
        Err(e) => return ActivityRead::Invalid(e.to_string()),
    };
    match parse_activity(&bytes, run_id) {
        Ok(activity) => ActivityRead::Found(activity),
        Err(reason) => ActivityRead::Invalid(reason),
    }
}

fn parse_activity(bytes: &[u8], run_id: &str) -> Result<Activity, String> {
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
    if value.get("version").and_then(serde_json::Value::as_u64) != Some(1) {
        return Err("version is not 1".into());
    }
    let short = |key: &str| -> Result<Option<String>, String> {
        match value.get(key) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::String(s))
                if s.chars().count() <= 200 && !s.contains(['\r', '\n']) =>
            {
                Ok(Some(s.clone()))
            }
            Some(_) => Err(format!("`{key}` is not a short one-line string")),
        }
    };
    if short("runningChildId")?.as_deref() != Some(run_id) {
        return Err("runningChildId names another run".into());
    }
    let number = |key: &str| {
        value
            .get(key)
            .and_then(serde_json::Value::as_u64)
            .ok_or(format!("`{key}` is missing"))
    };
    let phase = match short("phase")?.as_deref() {
        Some("starting") => Phase::Starting,
        Some("active") => Phase::Active,
        Some("waiting") => Phase::Waiting,
        Some("done") => Phase::Done,
        _ => return Err("`phase` is not one of starting, active, waiting, done".into()),
    };
    let active_scope = short("activeScope")?;
    if let Some(scope) = &active_scope {
        if !["agent", "turn", "provider", "streaming", "tool"].contains(&scope.as_str()) {
            return Err("`activeScope` is not a known scope".into());
        }
    }
    Ok(Activity {
        sequence: number("sequence")?,
        updated_at_ms: number("updatedAt")?,
        phase,
        latest_event: short("latestEvent")?.ok_or("`latestEvent` is missing")?,
        active_scope,
        tool_name: short("toolName")?,
    })
}

/// What the end of a Pi session says about the run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionSummary {
    /// The joined text of the last assistant message.
    pub last_text: Option<String>,
    /// Its stop reason (`stop`, `error`, `aborted`, `toolUse`, `length`).
    pub stop_reason: Option<String>,
    pub error_message: Option<String>,
    /// `provider/model` from the last model change or assistant message.
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

/// `provider/model`, unless the model id already carries its provider.
fn qualified(provider: &str, model: &str) -> String {
    if model.starts_with(&format!("{provider}/")) {
        model.to_owned()
    } else {
        format!("{provider}/{model}")
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

/// Summarises the end of a Pi session file (bounded to its last [`SESSION_TAIL`] bytes).
pub fn summarize_session(path: &Path) -> std::io::Result<Option<SessionSummary>> {
    let Some(text) = read_tail_lines(path, SESSION_TAIL)? else {
        return Ok(None);
    };
    Ok(Some(summarize_session_text(&text)))
}

fn summarize_session_text(text: &str) -> SessionSummary {
    let mut summary = SessionSummary::default();
    for line in text.lines() {
        let Ok(entry) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let str_of = |v: &serde_json::Value, key: &str| {
            v.get(key)
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned)
        };
        match entry.get("type").and_then(serde_json::Value::as_str) {
            Some("model_change") => {
                if let (Some(provider), Some(model)) =
                    (str_of(&entry, "provider"), str_of(&entry, "modelId"))
                {
                    summary.model = Some(qualified(&provider, &model));
                }
            }
            Some("thinking_level_change") => summary.thinking = str_of(&entry, "thinkingLevel"),
            Some("message") => {
                let Some(message) = entry.get("message") else {
                    continue;
                };
                if message.get("role").and_then(serde_json::Value::as_str) != Some("assistant") {
                    continue;
                }
                let texts: Vec<&str> = blocks_of(message, "text")
                    .filter_map(|b| b.get("text").and_then(serde_json::Value::as_str))
                    .collect();
                summary.last_text = Some(texts.join("\n"));
                summary.stop_reason = str_of(message, "stopReason");
                summary.error_message = str_of(message, "errorMessage");
                if let (Some(provider), Some(model)) =
                    (str_of(message, "provider"), str_of(message, "model"))
                {
                    summary.model = Some(qualified(&provider, &model));
                }
            }
            _ => {}
        }
    }
    summary
}

/// The content blocks of a session message whose `type` is `kind`.
fn blocks_of<'a>(
    message: &'a serde_json::Value,
    kind: &'a str,
) -> impl Iterator<Item = &'a serde_json::Value> {
    message
        .get("content")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .filter(move |b| b.get("type").and_then(serde_json::Value::as_str) == Some(kind))
}

/// Why an active run made no progress, from the end of its session (protocol.md §1.7).
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
    for line in session_tail.lines() {
        let Ok(entry) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let Some(message) = entry.get("message") else {
            continue;
        };
        match message.get("role").and_then(serde_json::Value::as_str) {
            Some("assistant") => {
                let calls: Vec<String> = blocks_of(message, "toolCall")
                    .filter_map(|b| b.get("id").and_then(serde_json::Value::as_str))
                    .map(str::to_owned)
                    .collect();
                last_tool_use_without_call = calls.is_empty()
                    && message
                        .get("stopReason")
                        .and_then(serde_json::Value::as_str)
                        == Some("toolUse");
                pending_calls.extend(calls);
            }
            Some("toolResult") => {
                if let Some(id) = message
                    .get("toolCallId")
                    .and_then(serde_json::Value::as_str)
                {
                    pending_calls.retain(|c| c != id);
                }
            }
            _ => {}
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

    fn exit_of(text: &str) -> ExitRead {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl.exit");
        std::fs::write(&path, text).unwrap();
        read_exit(&path)
    }

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
    fn exit_sidecar_forms() {
        assert_eq!(
            exit_of(r#"{"type":"done"}"#),
            ExitRead::Found(Completion::Done)
        );
        assert_eq!(
            exit_of(r#"{"type":"error","errorMessage":"429 rate limited","stopReason":"error"}"#),
            ExitRead::Found(Completion::Error {
                message: "429 rate limited".into()
            })
        );
        assert_eq!(
            exit_of(r#"{"type":"error"}"#),
            ExitRead::Found(Completion::Error {
                message: ERROR_FALLBACK.into()
            })
        );
        assert_eq!(
            exit_of(r#"{"type":"ping","name":"W","message":"which schema?"}"#),
            ExitRead::Found(Completion::Ping {
                message: "which schema?".into()
            })
        );
        assert!(matches!(
            exit_of(r#"{"type":"weird"}"#),
            ExitRead::Found(Completion::Error { .. })
        ));
        // A torn write is not an error: the child may be mid-write.
        assert_eq!(exit_of(r#"{"type":"do"#), ExitRead::NotYet);
        assert_eq!(
            read_exit(Path::new("/nonexistent/x.exit")),
            ExitRead::Missing
        );
    }

    #[test]
    fn a_sidecar_older_than_the_run_belongs_to_an_earlier_run() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("s.jsonl");
        std::fs::write(
            dir.path().join("s.jsonl.exit"),
            r#"{"type":"ping","message":"?"}"#,
        )
        .unwrap();
        let record = |created_at_ms| {
            serde_json::from_value::<herd_protocol::run::RunRecord>(serde_json::json!({
                "format_version": 1, "run_id": "r1", "name": "n", "created_at_ms": created_at_ms,
                "updated_at_ms": created_at_ms, "runner": "pi", "surface": "process",
                "status": "launched", "cwd": "/", "session_file": session,
            }))
            .unwrap()
        };
        assert!(matches!(
            read_run_exit(&record(0)),
            ExitRead::Found(Completion::Ping { .. })
        ));
        let resumed_later = herd_core::time::now_ms() + 60_000;
        assert_eq!(read_run_exit(&record(resumed_later)), ExitRead::Missing);
    }

    #[test]
    fn sentinel_takes_the_last_complete_marker() {
        assert_eq!(find_sentinel("x\n__SUBAGENT_DONE_0__\n"), Some(0));
        assert_eq!(
            find_sentinel("__SUBAGENT_DONE_1__ then __SUBAGENT_DONE_143__"),
            Some(143)
        );
        assert_eq!(find_sentinel("__SUBAGENT_DONE_12"), None);
        assert_eq!(find_sentinel("echo __SUBAGENT_DONE_$?__"), None);
    }

    #[test]
    fn activity_is_validated() {
        let good = r#"{"version":1,"runningChildId":"r1","createdAt":1,"updatedAt":5,"sequence":3,
            "latestEvent":"tool_execution_start","phase":"active","agentActive":true,"turnActive":true,
            "providerActive":false,"toolActive":true,"activeScope":"tool","toolName":"read"}"#;
        let activity = parse_activity(good.as_bytes(), "r1").unwrap();
        assert_eq!(activity.label().as_deref(), Some("read"));
        assert_eq!(activity.sequence, 3);
        assert!(parse_activity(good.as_bytes(), "other").is_err());
        let bad_phase = good.replace("\"active\",\"agentActive", "\"dancing\",\"agentActive");
        assert!(parse_activity(bad_phase.as_bytes(), "r1").is_err());
        let newline_tool = good.replace("\"read\"", "\"re\\nad\"");
        assert!(parse_activity(newline_tool.as_bytes(), "r1").is_err());
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
