//! What a Pi child writes for its host, in pi-herdr-agents' formats (docs/sidecars.md): the
//! completion sidecar `<session>.exit` and the activity snapshot
//! `subagent-activity/<run-id>.json`, with their tolerant readers.
//!
//! Everything here is child-written, so every read is bounded and every parse is defensive: a
//! torn or malformed file reads as "not yet" or "invalid", never as a crash and never as a claim
//! the child did not make.

use std::path::Path;

use herd_core::sidecar;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

use crate::run::RunRecord;

/// The bound of a `.exit` sidecar read.
pub const EXIT_READ_LIMIT: u64 = 256 * 1024;
/// The bound of an activity snapshot read.
pub const ACTIVITY_READ_LIMIT: u64 = 64 * 1024;
/// The version of an activity snapshot, which the child writes and herd reads.
pub const ACTIVITY_VERSION: u64 = 1;
/// The longest text of a snapshot field, in characters.
pub const SHORT_TEXT_MAX: usize = 200;
/// The rule of a snapshot's text: one line.
pub const ONE_LINE_PATTERN: &str = "^[^\\r\\n]*$";

/// `<session>.exit` as the child writes it just before it shuts down.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "lowercase")]
#[schemars(
    title = "Completion",
    description = "`<session>.exit`, the completion sidecar the child writes just before it shuts down (pi-herdr-agents format). Any other `type` is read as an error with an unsupported payload; unparseable content is read as not written yet."
)]
pub enum CompletionFile {
    /// The child finished normally.
    Done,
    /// The last assistant message ended in an error.
    Error {
        #[serde(
            rename = "errorMessage",
            default,
            deserialize_with = "lenient_text",
            skip_serializing_if = "Option::is_none"
        )]
        #[schemars(with = "String")]
        error_message: Option<String>,
        #[serde(
            rename = "stopReason",
            default,
            deserialize_with = "lenient_text",
            skip_serializing_if = "Option::is_none"
        )]
        #[schemars(with = "String", extend("const" = "error"))]
        stop_reason: Option<String>,
    },
    /// The child asked for help.
    Ping {
        #[serde(
            default,
            deserialize_with = "lenient_text",
            skip_serializing_if = "Option::is_none"
        )]
        #[schemars(with = "String")]
        name: Option<String>,
        #[serde(
            default,
            deserialize_with = "lenient_text",
            skip_serializing_if = "Option::is_none"
        )]
        #[schemars(with = "String")]
        message: Option<String>,
    },
}

/// A text field that is read as absent when it holds anything but a string.
fn lenient_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(serde_json::Value::deserialize(d)?
        .as_str()
        .map(str::to_owned))
}

/// What a `.exit` sidecar says, as the host acts on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Completion {
    /// `{"type":"done"}`: the child finished normally.
    Done,
    /// `{"type":"error",…}`, or a payload of another type.
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
    let completion = match CompletionFile::deserialize(&value) {
        Ok(CompletionFile::Done) => Completion::Done,
        Ok(CompletionFile::Error { error_message, .. }) => Completion::Error {
            message: error_message
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| ERROR_FALLBACK.to_owned()),
        },
        Ok(CompletionFile::Ping { message, .. }) => Completion::Ping {
            message: message.unwrap_or_default(),
        },
        Err(_) => Completion::Error {
            message: format!(
                "unsupported completion payload type {}",
                value.get("type").unwrap_or(&serde_json::Value::Null)
            ),
        },
    };
    ExitRead::Found(completion)
}

/// Reads the `.exit` sidecar of `record`'s session, ignoring one written before the run was
/// created: a resumed session keeps the sidecar of the run it continues (its help request, its
/// result), which is that earlier run's evidence, not this one's.
pub fn read_run_exit(record: &RunRecord) -> ExitRead {
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

/// `subagent-activity/<run-id>.json`: the child's activity snapshot, written atomically by the
/// child extension after every event it records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(
    title = "Activity",
    description = "`subagent-activity/<run-id>.json`: the child's activity snapshot (pi-herdr-agents format), written atomically by the child extension. A snapshot that breaks these rules is read as invalid and ignored."
)]
pub struct Activity {
    #[schemars(schema_with = "crate::version_is::<{ ACTIVITY_VERSION }>")]
    pub version: u64,
    /// Must equal the run id.
    #[schemars(length(max = SHORT_TEXT_MAX), pattern(ONE_LINE_PATTERN))]
    pub running_child_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64")]
    pub created_at: Option<u64>,
    pub updated_at: u64,
    /// +1 per event; a snapshot with a lower sequence than one already seen is ignored.
    pub sequence: u64,
    #[schemars(length(max = SHORT_TEXT_MAX), pattern(ONE_LINE_PATTERN))]
    pub latest_event: String,
    pub phase: Phase,
    #[serde(default)]
    pub agent_active: bool,
    #[serde(default)]
    pub turn_active: bool,
    #[serde(default)]
    pub provider_active: bool,
    #[serde(default)]
    pub tool_active: bool,
    #[serde(default)]
    pub active_scope: Option<ActiveScope>,
    #[serde(default)]
    pub active_since: Option<u64>,
    #[serde(default)]
    pub waiting_since: Option<u64>,
    #[serde(default)]
    pub turn_index: Option<u64>,
    #[serde(default)]
    #[schemars(length(max = SHORT_TEXT_MAX), pattern(ONE_LINE_PATTERN))]
    pub message_event_type: Option<String>,
    #[serde(default)]
    #[schemars(length(max = SHORT_TEXT_MAX), pattern(ONE_LINE_PATTERN))]
    pub tool_call_id: Option<String>,
    #[serde(default)]
    #[schemars(length(max = SHORT_TEXT_MAX), pattern(ONE_LINE_PATTERN))]
    pub tool_name: Option<String>,
    #[serde(default)]
    pub tool_started_at: Option<u64>,
    #[serde(default)]
    pub tool_ended_at: Option<u64>,
    /// How many inputs the child's Pi took (its `input` event: a typed or sent user message),
    /// counted on through a persistent specialist's tasks. A steer is delivered once this grows
    /// after its keys were typed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_count: Option<u64>,
}

/// The phase of an activity snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Starting,
    Active,
    Waiting,
    Done,
}

/// What is active, the innermost first: tool > provider > turn > agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ActiveScope {
    Agent,
    Turn,
    Provider,
    Streaming,
    Tool,
}

impl ActiveScope {
    pub fn as_str(self) -> &'static str {
        match self {
            ActiveScope::Agent => "agent",
            ActiveScope::Turn => "turn",
            ActiveScope::Provider => "provider",
            ActiveScope::Streaming => "streaming",
            ActiveScope::Tool => "tool",
        }
    }
}

/// The outcome of reading an activity snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActivityRead {
    Missing,
    /// Malformed, of another version, or for another run.
    Invalid(String),
    Found(Box<Activity>),
}

/// Reads the activity snapshot at `path`, which must be of run `run_id`.
pub fn read_activity(path: &Path, run_id: &str) -> ActivityRead {
    let bytes = match sidecar::read_bounded(path, ACTIVITY_READ_LIMIT) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return ActivityRead::Missing,
        Err(e) => return ActivityRead::Invalid(e.to_string()),
    };
    match parse_activity(&bytes, run_id) {
        Ok(activity) => ActivityRead::Found(Box::new(activity)),
        Err(reason) => ActivityRead::Invalid(reason),
    }
}

/// Parses a snapshot and checks what serde cannot: the version, the run, one-line short texts.
pub fn parse_activity(bytes: &[u8], run_id: &str) -> Result<Activity, String> {
    let activity: Activity =
        serde_json::from_slice(bytes).map_err(|e| format!("not a snapshot: {e}"))?;
    if activity.version != ACTIVITY_VERSION {
        return Err(format!("version is not {ACTIVITY_VERSION}"));
    }
    let texts = [
        ("runningChildId", Some(&activity.running_child_id)),
        ("latestEvent", Some(&activity.latest_event)),
        ("messageEventType", activity.message_event_type.as_ref()),
        ("toolCallId", activity.tool_call_id.as_ref()),
        ("toolName", activity.tool_name.as_ref()),
    ];
    for (key, text) in texts {
        if text.is_some_and(|t| t.chars().count() > SHORT_TEXT_MAX || t.contains(['\r', '\n'])) {
            return Err(format!("`{key}` is not a short one-line string"));
        }
    }
    if activity.running_child_id != run_id {
        return Err("runningChildId names another run".into());
    }
    Ok(activity)
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
        for no_message in [
            r#"{"type":"error"}"#,
            r#"{"type":"error","errorMessage":7}"#,
        ] {
            assert_eq!(
                exit_of(no_message),
                ExitRead::Found(Completion::Error {
                    message: ERROR_FALLBACK.into()
                })
            );
        }
        assert_eq!(
            exit_of(r#"{"type":"ping","name":"W","message":"which schema?"}"#),
            ExitRead::Found(Completion::Ping {
                message: "which schema?".into()
            })
        );
        assert_eq!(
            exit_of(r#"{"type":"weird"}"#),
            ExitRead::Found(Completion::Error {
                message: "unsupported completion payload type \"weird\"".into()
            })
        );
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
            serde_json::from_value::<RunRecord>(serde_json::json!({
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
    fn activity_is_validated() {
        let good = r#"{"version":1,"runningChildId":"r1","createdAt":1,"updatedAt":5,"sequence":3,
            "latestEvent":"tool_execution_start","phase":"active","agentActive":true,"turnActive":true,
            "providerActive":false,"toolActive":true,"activeScope":"tool","toolName":"read"}"#;
        let activity = parse_activity(good.as_bytes(), "r1").unwrap();
        assert_eq!(activity.tool_name.as_deref(), Some("read"));
        assert_eq!(activity.active_scope, Some(ActiveScope::Tool));
        assert_eq!(activity.sequence, 3);
        assert!(parse_activity(good.as_bytes(), "other").is_err());
        let bad_phase = good.replace("\"active\",\"agentActive", "\"dancing\",\"agentActive");
        assert!(parse_activity(bad_phase.as_bytes(), "r1").is_err());
        let newline_tool = good.replace("\"read\"", "\"re\\nad\"");
        assert!(parse_activity(newline_tool.as_bytes(), "r1").is_err());
        let long_event = good.replace("tool_execution_start", &"e".repeat(201));
        assert!(parse_activity(long_event.as_bytes(), "r1").is_err());
        let bad_scope = good.replace("\"activeScope\":\"tool\"", "\"activeScope\":\"nap\"");
        assert!(parse_activity(bad_scope.as_bytes(), "r1").is_err());
        let version_two = good.replace("\"version\":1", "\"version\":2");
        assert!(parse_activity(version_two.as_bytes(), "r1").is_err());
    }
}
