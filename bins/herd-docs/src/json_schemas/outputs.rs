//! Schemas of `--json` outputs built with `json!`: each function names the code it mirrors, and
//! the tests run that code and validate what it prints against the schema.

use schemars::Schema;
use serde_json::{Value, json};

use super::sidecars::run_id;
use super::{amend, hand, printed_schema};

fn string_or_null() -> Value {
    json!({"type": ["string", "null"]})
}

/// The projected labels (`herd_watch::projection::Label::as_str`).
pub(crate) fn label() -> Value {
    json!({
        "enum": [
            "starting", "active", "blocked", "waiting", "interrupted", "stalled", "running",
            "finalizing", "completed", "failed", "cancelling…", "cancel unconfirmed"
        ],
        "description": "The projected status label."
    })
}

/// `herd_launch::run`, `Command::Send`.
pub fn launch_send() -> Schema {
    hand(
        "LaunchSend",
        "What `herd-launch send` prints when it dispatched a task to an idle persistent specialist.",
        json!({
            "type": "object",
            "properties": {
                "status": {"const": "dispatched"},
                "run_id": run_id(),
                "name": {"type": "string"},
                "task_id": {"type": "string"},
                "inbox": {"type": "string", "description": "The inbox file the task was written to."}
            },
            "required": ["status", "run_id", "name", "task_id", "inbox"]
        }),
    )
}

/// `herd_protocol::watch::WatchWait`, its details amended as the result's are.
pub fn watch_wait() -> Schema {
    let mut schema = printed_schema::<herd_protocol::watch::WatchWait>();
    super::sidecars::amend_details(&mut schema);
    schema
}

/// `herd_protocol::watch::WatchEvent`, the details of its `result` amended as the result's are.
pub fn watch_event() -> Schema {
    let mut schema = printed_schema::<herd_protocol::watch::WatchEvent>();
    super::sidecars::amend_details(&mut schema);
    schema
}

/// `herd_protocol::watch::WatchStatus`, amended with the bound `herd_watch::status` puts on a
/// transcript, which serde does not know, and with what tells its shapes apart.
pub fn watch_status() -> Schema {
    let mut schema = printed_schema::<herd_protocol::watch::WatchStatus>();
    // serde reads an untagged document as the first shape that fits, a widget before plain runs;
    // JSON Schema has no order, so plain runs say they are not a widget.
    if let Some(runs) = schema
        .pointer_mut("/$defs/StatusRuns")
        .and_then(Value::as_object_mut)
    {
        runs.insert("not".into(), json!({"required": ["widget"]}));
    }
    if let Some(lines) = schema
        .pointer_mut("/$defs/StatusTranscript/properties/lines")
        .and_then(Value::as_object_mut)
    {
        lines.insert(
            "maxItems".into(),
            herd_watch::status::TRANSCRIPT_MAX_LINES.into(),
        );
    }
    schema
}

/// `herd_protocol::watch::WatchSteer`, amended with what the ledger keeps as text: the mode's
/// three values, and the request id, never empty.
pub fn watch_steer() -> Schema {
    let mut schema = printed_schema::<herd_protocol::watch::WatchSteer>();
    amend(
        &mut schema,
        None,
        json!({
            "mode": {"enum": ["steer", "follow_up", "auto"]},
            "request_id": {"type": "string", "minLength": 1}
        }),
        &[],
    );
    schema
}

/// `herd_docs::report_output`.
pub fn docs_report() -> Schema {
    hand(
        "DocsReport",
        "What `herd-docs --json` (and `cargo xtask docs --json`) prints: in check mode what is stale (exit 1 when anything is), in write mode what was rewritten.",
        json!({
            "type": "object",
            "properties": {
                "mode": {"enum": ["write", "check"]},
                "fresh": {"type": "boolean"},
                "findings": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "file": {"type": "string"},
                            "block": string_or_null(),
                            "problem": {"enum": ["stale", "missing", "orphan"]}
                        },
                        "required": ["file", "block", "problem"]
                    }
                }
            },
            "required": ["mode", "fresh", "findings"]
        }),
    )
}
