//! Pi's session files, as herd reads them: one tolerant reader of a session's JSON lines for
//! every place that looks into a child's session (its report and model, why it made no
//! progress, what it cost).
//!
//! A session is Pi's, not herd's, and newer Pi versions add entry kinds and fields: a line is
//! read into the few fields herd uses, an unknown kind is [`Entry::Other`], a field of an
//! unexpected shape is absent, and a line that is not JSON is no entry at all.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The version of Pi's session format herd writes a header in.
pub const SESSION_VERSION: u64 = 3;

/// The header herd writes when it creates a child's session (before Pi opens it): the first
/// line, which Pi reads for the session's id, where it ran and the session it continues.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename = "session", rename_all = "camelCase")]
pub struct NewHeader {
    /// [`SESSION_VERSION`].
    pub version: u64,
    pub id: String,
    /// ISO 8601, UTC.
    pub timestamp: String,
    pub cwd: String,
    /// The parent's session, for a forked or lineage-only child.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_session: Option<String>,
}

/// One line of a session file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Entry {
    /// The header, the first line: where the session ran.
    Session {
        #[serde(default, deserialize_with = "lenient")]
        id: Option<String>,
        #[serde(default, deserialize_with = "lenient")]
        cwd: Option<String>,
    },
    Message {
        message: Message,
    },
    ModelChange {
        #[serde(default, deserialize_with = "lenient")]
        provider: Option<String>,
        #[serde(default, rename = "modelId", deserialize_with = "lenient")]
        model_id: Option<String>,
    },
    ThinkingLevelChange {
        #[serde(default, rename = "thinkingLevel", deserialize_with = "lenient")]
        thinking_level: Option<String>,
    },
    /// A usage entry of Pi's own (a request outside the conversation).
    Usage {
        #[serde(default, deserialize_with = "lenient")]
        provider: Option<String>,
        #[serde(default, deserialize_with = "lenient")]
        model: Option<String>,
        #[serde(default)]
        usage: Option<Value>,
    },
    BranchSummary {
        #[serde(default)]
        usage: Option<Value>,
    },
    Compaction {
        #[serde(default)]
        usage: Option<Value>,
    },
    #[serde(other)]
    Other,
}

/// A message of the conversation.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Message {
    #[serde(deserialize_with = "lenient")]
    pub role: Option<String>,
    /// A list of blocks (assistant messages, tool results) or a string (a user's text).
    pub content: Value,
    #[serde(deserialize_with = "lenient")]
    pub stop_reason: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub error_message: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub provider: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub model: Option<String>,
    /// The model the provider says answered, when it differs from the one asked.
    #[serde(deserialize_with = "lenient")]
    pub response_model: Option<String>,
    /// The tool call a tool result answers.
    #[serde(deserialize_with = "lenient")]
    pub tool_call_id: Option<String>,
    pub usage: Option<Value>,
}

impl Message {
    /// Whether the assistant wrote it.
    pub fn is_assistant(&self) -> bool {
        self.role.as_deref() == Some("assistant")
    }

    /// Whether it is a tool's result.
    pub fn is_tool_result(&self) -> bool {
        self.role.as_deref() == Some("toolResult")
    }

    /// The content blocks whose `type` is `kind`.
    pub fn blocks<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Value> {
        self.content
            .as_array()
            .into_iter()
            .flatten()
            .filter(move |b| b.get("type").and_then(Value::as_str) == Some(kind))
    }

    /// The texts of its text blocks, joined by newlines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .blocks("text")
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect();
        texts.join("\n")
    }

    /// The ids of its tool calls.
    pub fn tool_call_ids(&self) -> impl Iterator<Item = &str> {
        self.blocks("toolCall")
            .filter_map(|b| b.get("id").and_then(Value::as_str))
    }
}

/// Reads one line; `None` when it is not a JSON object with a `type`.
pub fn parse_line(line: &str) -> Option<Entry> {
    serde_json::from_str(line).ok()
}

/// `provider/model`, unless the model id already carries its provider.
pub fn qualified(provider: &str, model: &str) -> String {
    if model.starts_with(&format!("{provider}/")) {
        model.to_owned()
    } else {
        format!("{provider}/{model}")
    }
}

/// A string field; absent when it is missing or not a string.
fn lenient<'de, D: serde::Deserializer<'de>>(de: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(de)? {
        Value::String(s) => Some(s),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_herd_writes_reads_back_as_the_header() {
        let header = NewHeader {
            version: SESSION_VERSION,
            id: "a1".into(),
            timestamp: "2026-12-03T12:00:00.000Z".into(),
            cwd: "/src/proj".into(),
            parent_session: Some("/sessions/parent.jsonl".into()),
        };
        let line = serde_json::to_string(&header).unwrap();
        assert!(
            line.starts_with(r#"{"type":"session","version":3,"#),
            "{line}"
        );
        assert!(
            line.contains(r#""parentSession":"/sessions/parent.jsonl""#),
            "{line}"
        );
        assert_eq!(
            parse_line(&line),
            Some(Entry::Session {
                id: Some("a1".into()),
                cwd: Some("/src/proj".into()),
            })
        );
        let standalone = NewHeader {
            parent_session: None,
            ..header
        };
        assert!(
            !serde_json::to_string(&standalone)
                .unwrap()
                .contains("parentSession")
        );
    }

    #[test]
    fn the_header_says_where_the_session_ran_and_a_cwd_of_another_shape_is_absent() {
        assert_eq!(
            parse_line(r#"{"type":"session","version":3,"id":"s1","cwd":"/w"}"#),
            Some(Entry::Session {
                id: Some("s1".into()),
                cwd: Some("/w".into())
            })
        );
        assert_eq!(
            parse_line(r#"{"type":"session","cwd":7}"#),
            Some(Entry::Session {
                id: None,
                cwd: None
            })
        );
        assert_eq!(parse_line(r#"{"cwd":"/w"}"#), None, "no type, no entry");
    }

    #[test]
    fn lines_of_every_shape_read_into_what_herd_uses() {
        let assistant = r#"{"type":"message","id":"1","message":{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"toolCall","id":"c1","name":"bash"},{"type":"text","text":"b"}],"stopReason":"toolUse","provider":"fake","model":"m","usage":{"input":1},"newField":{"x":1}}}"#;
        let Some(Entry::Message { message }) = parse_line(assistant) else {
            panic!("an assistant message");
        };
        assert!(message.is_assistant());
        assert_eq!(message.text(), "a\nb");
        assert_eq!(message.tool_call_ids().collect::<Vec<_>>(), ["c1"]);
        assert_eq!(message.stop_reason.as_deref(), Some("toolUse"));
        assert!(message.usage.is_some());

        let user =
            r#"{"type":"message","message":{"role":"user","content":"hello","timestamp":1}}"#;
        let Some(Entry::Message { message }) = parse_line(user) else {
            panic!("a user message with string content");
        };
        assert_eq!(message.text(), "");

        let change = r#"{"type":"model_change","provider":"fake","modelId":7}"#;
        assert_eq!(
            parse_line(change),
            Some(Entry::ModelChange {
                provider: Some("fake".into()),
                model_id: None
            })
        );
        assert_eq!(
            parse_line(r#"{"type":"some_future_kind","x":1}"#),
            Some(Entry::Other)
        );
        assert_eq!(parse_line("not json"), None);
        assert_eq!(parse_line(r#"{"no":"type"}"#), None);
        assert_eq!(qualified("fake", "fake/m"), "fake/m");
        assert_eq!(qualified("fake", "m"), "fake/m");
    }
}
