//! Schemas of `--json` outputs built with `json!`: each function names the code it mirrors, and
//! the tests run that code and validate what it prints against the schema.

use schemars::Schema;
use serde_json::{Value, json};

use super::hand;
use super::sidecars::{ms, run_id};

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

/// How a run ended (`herd_watch::delivery::Outcome`).
fn outcome() -> Value {
    json!({"enum": ["completed", "failed", "cancelled", "help"]})
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

/// The keys a result carries in `wait` and in a `result` event.
fn result_properties() -> Value {
    json!({
        "run_id": run_id(),
        "name": {"type": "string"},
        "outcome": outcome(),
        "message": {"type": "string", "description": "The message the parent receives: host lines, the report block, evidence, continuation."},
        "details": {"type": "object", "description": "Raw values for structured consumers, as in `run-result.schema.json`."}
    })
}

/// `herd_watch::wait`.
pub fn watch_wait() -> Schema {
    hand(
        "WatchWait",
        "The settled result `herd-watch wait` prints. Exit 0 completed, 1 failed, 5 cancelled, 6 help.",
        json!({
            "type": "object",
            "properties": result_properties(),
            "required": ["run_id", "name", "outcome", "message", "details"]
        }),
    )
}

/// `herd_watch::supervise::Event::to_json`.
pub fn watch_event() -> Schema {
    let mut result = result_properties();
    if let Some(map) = result.as_object_mut() {
        map.insert("event".into(), json!({"const": "result"}));
        map.insert(
            "key".into(),
            json!({"type": "string", "description": "What `follow --ack` expects back on stdin, `{\"ack\":\"<key>\"}`: `<run_id>`, or `<run_id>.task-<task>` for a persistent specialist's task result."}),
        );
        map.insert(
            "task".into(),
            json!({"type": "string", "description": "The persistent specialist's task this result answers; absent for a run's own result."}),
        );
    }
    let line = |event: &str| {
        json!({
            "type": "object",
            "properties": {
                "event": {"const": event},
                "run_id": run_id(),
                "name": {"type": "string"},
                "message": {"type": "string", "description": "The one-line notice the parent hears."}
            },
            "required": ["event", "run_id", "name", "message"]
        })
    };
    hand(
        "WatchEvent",
        "One line of `herd-watch follow --json`, selected by `event`. A `result` is delivered exactly once across restarts of any watcher; it carries the run id so a consumer can recognise the one repeat a crash between emitting and marking can cause.",
        json!({
            "oneOf": [
                {
                    "type": "object",
                    "properties": {
                        "event": {"const": "status"},
                        "run_id": run_id(),
                        "name": {"type": "string"},
                        "label": label(),
                        "detail": string_or_null(),
                        "since_ms": {"type": ["integer", "null"], "minimum": 0}
                    },
                    "required": ["event", "run_id", "name", "label", "detail", "since_ms"]
                },
                line("stalled"),
                line("recovered"),
                {
                    "type": "object",
                    "properties": {
                        "event": {"const": "notice"},
                        "run_id": run_id(),
                        "message": {"type": "string"}
                    },
                    "required": ["event", "run_id", "message"]
                },
                {
                    "type": "object",
                    "properties": result,
                    "required": ["event", "run_id", "name", "outcome", "message", "details", "key"]
                }
            ]
        }),
    )
}

/// `herd_watch::status::status` and `transcript_of`.
pub fn watch_status() -> Schema {
    let row = json!({
        "type": "object",
        "properties": {
            "run_id": run_id(),
            "name": {"type": "string"},
            "agent": string_or_null(),
            "surface": {"enum": ["herdr", "tmux", "process"]},
            "label": label(),
            "detail": string_or_null(),
            "since_ms": {"type": ["integer", "null"], "minimum": 0},
            "elapsed_ms": ms(),
            "outcome": {"enum": ["completed", "failed", "cancelled", "help", null]},
            "delivered": {"type": "boolean"}
        },
        "required": [
            "run_id", "name", "agent", "surface", "label", "detail", "since_ms", "elapsed_ms",
            "outcome", "delivered"
        ]
    });
    hand(
        "WatchStatus",
        "What `herd-watch status --json` prints: the runs, computed from their files alone; with `--widget` the runs not yet delivered (the open-run set) and the widget; with `--transcript` the last lines of one run's transcript instead.",
        json!({
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"runs": {"type": "array", "items": row.clone()}},
                    "required": ["runs"],
                    "not": {"required": ["widget"]}
                },
                {
                    "type": "object",
                    "properties": {
                        "widget": {"type": "string", "description": "The widget as text."},
                        "accent": {"enum": ["blue", "amber"]},
                        "active": {"type": "integer", "minimum": 0},
                        "open": {"type": "integer", "minimum": 0},
                        "runs": {"type": "array", "items": row}
                    },
                    "required": ["widget", "accent", "active", "open", "runs"]
                },
                {
                    "type": "object",
                    "properties": {
                        "run_id": run_id(),
                        "lines": {"type": "array", "items": {"type": "string"}, "maxItems": 500, "description": "Transcript lines, each encoded for one line."}
                    },
                    "required": ["run_id", "lines"]
                }
            ]
        }),
    )
}

/// `herd_watch::run`, `Command::Cancel`.
pub fn watch_cancel() -> Schema {
    hand(
        "WatchCancel",
        "What `herd-watch cancel` prints. Exit 0 `confirmed` or `already-terminal`; exit 3 `requested` (the launch is still acquiring its owner) or `unconfirmed` (termination was not confirmed within 5 s: state is kept, do not retry blindly).",
        json!({
            "type": "object",
            "properties": {
                "run_id": run_id(),
                "name": {"type": "string"},
                "status": {"enum": ["confirmed", "requested", "unconfirmed", "already-terminal"]},
                "requested_at_ms": {"type": ["integer", "null"], "minimum": 0},
                "error": {"type": ["string", "null"], "description": "Why termination was not confirmed."}
            },
            "required": ["run_id", "name", "status", "requested_at_ms", "error"]
        }),
    )
}

/// `herd_watch::run`, `Command::Interrupt`.
pub fn watch_interrupt() -> Schema {
    hand(
        "WatchInterrupt",
        "What `herd-watch interrupt` prints after it sent Escape to the child's pane.",
        json!({
            "type": "object",
            "properties": {
                "run_id": run_id(),
                "name": {"type": "string"},
                "status": {"const": "interrupted"},
                "at_ms": ms()
            },
            "required": ["run_id", "name", "status", "at_ms"]
        }),
    )
}

/// `herd_watch::status::stop`.
pub fn watch_stop() -> Schema {
    hand(
        "WatchStop",
        "What `herd-watch stop` prints for a persistent specialist. Exit 0 `stopped`; exit 3 `stop-pending` (a task still runs; it ends first) or `stop-unconfirmed` (nothing held it, yet its exit was not confirmed by the deadline, or cannot be told); exit 4 `stop-failed` (the directive could not be published, nothing changed, `error` says why; ask again).",
        json!({
            "type": "object",
            "properties": {
                "run_id": run_id(),
                "name": {"type": "string"},
                "status": {"enum": ["stopped", "stop-pending", "stop-unconfirmed", "stop-failed"]},
                "error": {"type": "string"}
            },
            "required": ["run_id", "name", "status"]
        }),
    )
}

/// `herd_watch::run`, `Command::Steer`.
pub fn watch_steer() -> Schema {
    hand(
        "WatchSteer",
        "What `herd-watch steer` prints: the request's receipt (seed 004), which `runs/<run-id>.steering.json` keeps. `delivered`: typed into the child now; `queued`: held (at most 20) for the next turn boundary; `failed`: neither, `error` says why, and the exit code is the error's.",
        json!({
            "type": "object",
            "properties": {
                "run_id": run_id(),
                "name": {"type": "string"},
                "request_id": {"type": "string", "minLength": 1},
                "receipt": {"enum": ["delivered", "queued", "failed"]},
                "state": {"enum": ["delivered", "queued", "failed"]},
                "deliveryStatus": {"enum": ["delivered", "queued"]},
                "mode": {"enum": ["steer", "follow_up", "auto"]},
                "error": {
                    "type": "object",
                    "properties": {
                        "code": {"type": "string"},
                        "message": {"type": "string"}
                    },
                    "required": ["code", "message"]
                }
            },
            "required": ["run_id", "request_id", "receipt", "state", "mode"]
        }),
    )
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
