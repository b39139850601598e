//! Reading Pi's session JSONL the way a supervisor does: the file may not exist yet, and the
//! last line may still be being written.

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

/// The largest session file read.
pub const MAX_SESSION: u64 = 64 * 1024 * 1024;

/// Returns every complete entry of the session at `path`; an absent file has none.
///
/// A last line without its newline is still being written and is left out.
///
/// # Panics
///
/// When the file cannot be read, is larger than [`MAX_SESSION`], or a complete line is not JSON.
pub fn entries(path: &Path) -> Vec<Value> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(err) => panic!("cannot open {}: {err}", path.display()),
    };
    let mut bytes = Vec::new();
    file.take(MAX_SESSION + 1)
        .read_to_end(&mut bytes)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
    assert!(
        bytes.len() as u64 <= MAX_SESSION,
        "{} is larger than {MAX_SESSION} bytes",
        path.display()
    );
    let complete = bytes
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |pos| pos + 1);
    String::from_utf8_lossy(&bytes[..complete])
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(idx, line)| {
            serde_json::from_str(line).unwrap_or_else(|err| {
                panic!(
                    "{} line {} is not JSON ({err}): {line}",
                    path.display(),
                    idx + 1
                )
            })
        })
        .collect()
}

/// Returns the `message` objects of the session's `message` entries, in order.
pub fn messages(path: &Path) -> Vec<Value> {
    entries(path)
        .into_iter()
        .filter(|e| e["type"] == "message")
        .map(|mut e| e["message"].take())
        .collect()
}

/// Returns the last assistant message of the session, if any.
pub fn last_assistant(path: &Path) -> Option<Value> {
    messages(path)
        .into_iter()
        .rev()
        .find(|m| m["role"] == "assistant")
}

/// Returns whether an assistant message ended its turn: stopReason `stop`, `length`, `error`
/// or `aborted` (and not `toolUse`, after which Pi calls the model again).
pub fn is_final(message: &Value) -> bool {
    matches!(
        message["stopReason"].as_str(),
        Some("stop" | "length" | "error" | "aborted")
    )
}

/// Returns the text blocks of a message, joined.
pub fn text(message: &Value) -> String {
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// Returns the `toolCall` blocks of a message.
pub fn tool_calls(message: &Value) -> Vec<Value> {
    message["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "toolCall")
        .cloned()
        .collect()
}

/// Waits until the session's last message is an assistant message that ended its turn, and
/// returns it.
///
/// # Panics
///
/// When that does not happen within `budget`.
pub fn wait_for_final_assistant(path: &Path, budget: Duration) -> Value {
    crate::wait::wait_for(
        &format!("a final assistant message in {}", path.display()),
        budget,
        || {
            messages(path)
                .pop()
                .filter(|m| m["role"] == "assistant" && is_final(m))
        },
    )
}

/// Returns the `custom_message` entries of `custom_type` (a `subagent_result`, say).
pub fn custom_entries(path: &Path, custom_type: &str) -> Vec<Value> {
    entries(path)
        .into_iter()
        .filter(|e| e["type"] == "custom_message" && e["customType"] == custom_type)
        .collect()
}

/// Waits until the session's last message is a final assistant text equal to `text`.
///
/// # Panics
///
/// When that does not happen within `budget`.
pub fn wait_for_answer(path: &Path, text: &str, budget: Duration) {
    crate::wait::wait_for(
        &format!("the answer {text:?} in {}", path.display()),
        budget,
        || {
            messages(path)
                .pop()
                .filter(|m| m["role"] == "assistant" && is_final(m) && self::text(m) == text)
        },
    );
}
