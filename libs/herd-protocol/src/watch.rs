//! The `--json` documents of `herd-watch`: `wait`, the lines of `follow`, and the replies of
//! `cancel`, `interrupt` and `stop`; and [`Label`], the projected status a run shows.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::result::{Details, Outcome, RunResult};

/// The projected label of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Label {
    #[serde(rename = "starting")]
    Starting,
    #[serde(rename = "active")]
    Active,
    #[serde(rename = "blocked")]
    Blocked,
    #[serde(rename = "waiting")]
    Waiting,
    #[serde(rename = "interrupted")]
    Interrupted,
    #[serde(rename = "stalled")]
    Stalled,
    #[serde(rename = "running")]
    Running,
    #[serde(rename = "finalizing")]
    Finalizing,
    #[serde(rename = "completed")]
    Completed,
    #[serde(rename = "failed")]
    Failed,
    #[serde(rename = "cancelled")]
    Cancelled,
    #[serde(rename = "cancelling…")]
    Cancelling,
    #[serde(rename = "cancel unconfirmed")]
    CancelUnconfirmed,
}

impl Label {
    pub fn as_str(self) -> &'static str {
        match self {
            Label::Starting => "starting",
            Label::Active => "active",
            Label::Blocked => "blocked",
            Label::Waiting => "waiting",
            Label::Interrupted => "interrupted",
            Label::Stalled => "stalled",
            Label::Running => "running",
            Label::Finalizing => "finalizing",
            Label::Completed => "completed",
            Label::Failed => "failed",
            Label::Cancelled => "cancelled",
            Label::Cancelling => "cancelling…",
            Label::CancelUnconfirmed => "cancel unconfirmed",
        }
    }

    /// Whether the widget counts the run as active (the rest are open).
    pub fn is_active(self) -> bool {
        matches!(
            self,
            Label::Active | Label::Starting | Label::Running | Label::Blocked
        )
    }
}

/// The settled result `herd-watch wait` prints. Exit 0 completed, 1 failed, 5 cancelled, 6 help.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WatchWait {
    pub run_id: String,
    pub name: String,
    pub outcome: Outcome,
    /// The message the parent receives: host lines, the report block, evidence, continuation.
    pub message: String,
    /// Raw values for structured consumers, as in `run-result.schema.json`.
    pub details: Details,
}

impl WatchWait {
    /// The version of this document's shape (not printed; see the crate docs).
    pub const FORMAT_VERSION: u64 = 1;

    pub fn of(result: &RunResult) -> WatchWait {
        WatchWait {
            run_id: result.run_id.clone(),
            name: result.name.clone(),
            outcome: result.outcome,
            message: result.message.clone(),
            details: result.details.clone(),
        }
    }
}

/// One line of `herd-watch follow --json`, selected by `event`. A `result` is delivered exactly
/// once across restarts of any watcher; it carries the run id so a consumer can recognise the
/// one repeat a crash between emitting and marking can cause.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum WatchEvent {
    Status {
        run_id: String,
        name: String,
        label: Label,
        detail: Option<String>,
        since_ms: Option<u64>,
    },
    Stalled {
        run_id: String,
        name: String,
        /// The one-line notice the parent hears.
        message: String,
    },
    Recovered {
        run_id: String,
        name: String,
        /// The one-line notice the parent hears.
        message: String,
    },
    Notice {
        run_id: String,
        message: String,
    },
    Result {
        run_id: String,
        name: String,
        outcome: Outcome,
        /// The message the parent receives: host lines, the report block, evidence,
        /// continuation.
        message: String,
        /// Raw values for structured consumers, as in `run-result.schema.json`.
        details: Box<Details>,
        /// What `follow --ack` expects back on stdin, `{"ack":"<key>"}`: `<run_id>`, or
        /// `<run_id>.task-<task>` for a persistent specialist's task result.
        key: String,
        /// The persistent specialist's task this result answers; absent for a run's own result.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task: Option<String>,
    },
}

impl WatchEvent {
    /// The version of this document's shape (not printed; see the crate docs).
    pub const FORMAT_VERSION: u64 = 1;

    /// The `result` line of a delivered result.
    pub fn result(result: &RunResult) -> WatchEvent {
        WatchEvent::Result {
            run_id: result.run_id.clone(),
            name: result.name.clone(),
            outcome: result.outcome,
            message: result.message.clone(),
            details: Box::new(result.details.clone()),
            key: result.key(),
            task: result.task.clone(),
        }
    }
}

/// What `herd-watch cancel` answers (seed 003's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CancelStatus {
    Confirmed,
    Requested,
    Unconfirmed,
    AlreadyTerminal,
}

impl CancelStatus {
    pub fn exit_code(self) -> i32 {
        match self {
            CancelStatus::Confirmed | CancelStatus::AlreadyTerminal => herd_core::exit::SUCCESS,
            CancelStatus::Requested | CancelStatus::Unconfirmed => herd_core::exit::UNCERTAIN,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            CancelStatus::Confirmed => "confirmed",
            CancelStatus::Requested => "requested",
            CancelStatus::Unconfirmed => "unconfirmed",
            CancelStatus::AlreadyTerminal => "already-terminal",
        }
    }
}

/// What `herd-watch cancel` prints. Exit 0 `confirmed` or `already-terminal`; exit 3
/// `requested` (the launch is still acquiring its owner) or `unconfirmed` (termination was not
/// confirmed within 5 s: state is kept, do not retry blindly).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WatchCancel {
    pub run_id: String,
    pub name: String,
    pub status: CancelStatus,
    pub requested_at_ms: Option<u64>,
    /// Why termination was not confirmed.
    pub error: Option<String>,
}

impl WatchCancel {
    /// The version of this document's shape (not printed; see the crate docs).
    pub const FORMAT_VERSION: u64 = 1;
}

/// The one status of an interrupt that printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Interrupted {
    Interrupted,
}

/// What `herd-watch interrupt` prints after it sent Escape to the child's pane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WatchInterrupt {
    pub run_id: String,
    pub name: String,
    pub status: Interrupted,
    pub at_ms: u64,
}

impl WatchInterrupt {
    /// The version of this document's shape (not printed; see the crate docs).
    pub const FORMAT_VERSION: u64 = 1;
}

/// Where a stop of a persistent specialist got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum StopStatus {
    Stopped,
    StopPending,
    StopUnconfirmed,
    StopFailed,
}

impl StopStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            StopStatus::Stopped => "stopped",
            StopStatus::StopPending => "stop-pending",
            StopStatus::StopUnconfirmed => "stop-unconfirmed",
            StopStatus::StopFailed => "stop-failed",
        }
    }
}

/// What `herd-watch stop` prints for a persistent specialist. Exit 0 `stopped`; exit 3
/// `stop-pending` (a task still runs; it ends first) or `stop-unconfirmed` (nothing held it, yet
/// its exit was not confirmed by the deadline, or cannot be told); exit 4 `stop-failed` (the
/// directive could not be published, nothing changed, `error` says why; ask again).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WatchStop {
    pub run_id: String,
    pub name: String,
    pub status: StopStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl WatchStop {
    /// The version of this document's shape (not printed; see the crate docs).
    pub const FORMAT_VERSION: u64 = 1;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_serialize_as_they_read() {
        for label in [Label::Cancelling, Label::CancelUnconfirmed, Label::Active] {
            assert_eq!(
                serde_json::to_value(label).unwrap(),
                serde_json::Value::from(label.as_str())
            );
        }
    }
}
