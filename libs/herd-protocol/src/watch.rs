//! The `--json` documents of `herd-watch`: `wait`, the lines of `follow`, `status`, and the
//! replies of `cancel`, `interrupt`, `stop` and `steer`; and [`Label`], the projected status a
//! run shows.

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
    // The child waits for a person: a help request, an open dialog, an interactive child's
    // settled run (`needs_input` says which).
    #[serde(rename = "waiting for input")]
    WaitingForInput,
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
    // A persistent specialist that ended on its stop directive.
    #[serde(rename = "stopped")]
    Stopped,
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
            Label::WaitingForInput => "waiting for input",
            Label::Interrupted => "interrupted",
            Label::Stalled => "stalled",
            Label::Running => "running",
            Label::Finalizing => "finalizing",
            Label::Completed => "completed",
            Label::Stopped => "stopped",
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

/// The widget's accent: blue while anything is active, amber when every row is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Accent {
    Blue,
    Amber,
}

/// One run as `herd-watch status` shows it, computed from its files alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StatusRow {
    pub run_id: String,
    pub name: String,
    pub agent: Option<String>,
    pub surface: crate::run::SurfaceKind,
    pub label: Label,
    pub detail: Option<String>,
    pub since_ms: Option<u64>,
    pub elapsed_ms: u64,
    pub outcome: Option<Outcome>,
    pub delivered: bool,
    /// What a run `waiting for input` waits on; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_input: Option<crate::needs_input::NeedsInput>,
    /// What the run cost so far, its nested children rolled up; absent for a run that has no
    /// session to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::usage::Figures>,
    /// The artifacts directory the run is in: set by `status --all`, which looks through every
    /// directory of the user's index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<String>,
}

/// `herd-watch status --json`: the runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StatusRuns {
    pub runs: Vec<StatusRow>,
}

/// `herd-watch status --widget --json`: the runs not yet delivered (the open-run set) and the
/// widget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StatusWidget {
    /// The widget as text.
    pub widget: String,
    pub accent: Accent,
    pub active: usize,
    pub open: usize,
    pub runs: Vec<StatusRow>,
}

/// The most lines `herd-watch status --transcript` prints, whatever `--lines` asks for.
pub const TRANSCRIPT_MAX_LINES: usize = 500;

/// `herd-watch status --transcript --json`: the last lines of one run's transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StatusTranscript {
    pub run_id: String,
    /// Transcript lines, each encoded for one line.
    #[schemars(length(max = TRANSCRIPT_MAX_LINES))]
    pub lines: Vec<String>,
}

/// What `herd-watch status --json` prints: the runs, computed from their files alone; with
/// `--widget` the runs not yet delivered (the open-run set) and the widget; with `--transcript`
/// the last lines of one run's transcript instead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum WatchStatus {
    Widget(StatusWidget),
    Transcript(StatusTranscript),
    Runs(StatusRuns),
}

impl WatchStatus {
    /// The version of this document's shape (not printed; see the crate docs).
    pub const FORMAT_VERSION: u64 = 1;
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
    /// The run started waiting for a person, once per transition; the `status` line that
    /// follows its end says what it does next.
    NeedsInput {
        run_id: String,
        name: String,
        reason: crate::needs_input::InputReason,
        since_ms: u64,
        /// A dialog's kind and title, raw (child text).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kind: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The one-line notice a person is shown.
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

/// What `herd-watch cancel` answers (docs/lifecycle.md, "Cancel").
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

/// A line of `herd-watch follow --ack`'s stdin: a result's receiver holds it (in a transcript, or
/// durably on another machine), so the follower marks it delivered. Any other line is refused
/// and the result is emitted again by the next follower.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WatchAck {
    /// The `key` of the [`WatchEvent::Result`] it acknowledges.
    pub ack: String,
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

/// The state of one steering request (its receipt).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SteerState {
    /// Recorded, and not known taken: its keys not yet known sent (a command killed here
    /// leaves it so), or typed (`typed_at_ms`) while the child's Pi did not take it within
    /// three seconds (`note`).
    Pending,
    /// Taken now: a Pi child's Pi took the message (its input), within three seconds of the
    /// keys; a child with no Pi had its keys typed into its input.
    Delivered,
    /// Held in the run's FIFO for the next turn boundary.
    Queued,
    /// Held in the run's FIFO because its child has not started yet (no runner identity is
    /// recorded): it is delivered, as a queued one, once the started child is between turns.
    Scheduled,
    /// Not delivered and not queued; `error` says why.
    Failed,
}

impl SteerState {
    pub fn as_str(self) -> &'static str {
        match self {
            SteerState::Pending => "pending",
            SteerState::Delivered => "delivered",
            SteerState::Queued => "queued",
            SteerState::Scheduled => "scheduled",
            SteerState::Failed => "failed",
        }
    }

    /// The `deliveryStatus`: `delivered` or `queued`, none for the other states.
    pub fn delivery_status(self) -> Option<DeliveryStatus> {
        match self {
            SteerState::Delivered => Some(DeliveryStatus::Delivered),
            SteerState::Queued | SteerState::Scheduled => Some(DeliveryStatus::Queued),
            SteerState::Pending | SteerState::Failed => None,
        }
    }
}

/// The `deliveryStatus` of a steering request that went somewhere: delivered or queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryStatus {
    Delivered,
    Queued,
}

/// Why a steering request failed: the error's code and its host text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SteerError {
    pub code: String,
    pub message: String,
}

/// What `herd-watch steer` prints: the request's receipt, which
/// `runs/<run-id>.steering.json` keeps. `delivered`: the child's Pi took it within three seconds
/// of its keys (a child with no Pi: its keys were typed); `pending`: typed, not seen taken
/// (`note` says so); `queued`: held
/// (at most 20) for the next turn boundary; `scheduled`: held so because the child has not
/// started yet; `failed`: neither, `error` says why, and the exit
/// code is the error's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WatchSteer {
    pub run_id: String,
    /// The run's display name (`steer` prints it; a receipt read back may not have it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[schemars(length(min = 1))]
    pub request_id: String,
    /// The request's state, as `state` says it.
    pub receipt: SteerState,
    pub state: SteerState,
    pub mode: SteerMode,
    #[serde(
        rename = "deliveryStatus",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub delivery_status: Option<DeliveryStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<SteerError>,
    /// When its keys were typed into the child's input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typed_at_ms: Option<u64>,
    /// What is known of a request that is not delivered (host text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl WatchSteer {
    /// The version of this document's shape (not printed; see the crate docs).
    pub const FORMAT_VERSION: u64 = 1;
}

/// How a steering message is delivered (`herd-watch steer --mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum SteerMode {
    /// Deliver now.
    Steer,
    /// Queue for the next turn boundary.
    // pi-subagents spells it `follow_up` (`mode: "follow_up"`), as the receipt does.
    #[cfg_attr(feature = "clap", value(alias = "follow_up"))]
    FollowUp,
    /// Queue during an active turn, deliver now between turns.
    Auto,
}

/// What `herd-watch notify` tells of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NotifyKind {
    Completed,
    Failed,
    Waiting,
}

/// One way `herd-watch notify` told the person: Herdr's notification, tmux's message and bell,
/// the terminal's own notification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NotifyTold {
    /// `herdr`, `tmux` or `osc`.
    pub via: String,
    pub shown: bool,
    /// What the surface said: Herdr's reason (`shown`, `disabled`, `rate_limited`,
    /// `no_foreground_client`, `busy`), the tmux clients told, or why nothing was shown.
    pub detail: String,
}

/// `herd-watch notify --json`: whether a person looks at the run's pane (then nothing is
/// shown), and what each way of telling did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WatchNotify {
    pub run_id: String,
    pub name: String,
    pub kind: NotifyKind,
    /// The one line shown, the run's name encoded.
    pub text: String,
    pub looking: bool,
    pub told: Vec<NotifyTold>,
}

/// The version of a line of `runs/<run-id>.events.jsonl`.
pub const RUN_EVENT_VERSION: u64 = 1;

/// One line of `runs/<run-id>.events.jsonl`: a status transition of the run, appended by
/// herd-watch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RunEvent {
    #[schemars(schema_with = "crate::format_version")]
    pub format_version: u64,
    pub at_ms: u64,
    pub event: RunEventKind,
    pub label: Label,
    /// What the run is doing (a tool name, `provider`, `streaming`), when active.
    pub detail: Option<String>,
}

/// What a line of the run's events says; a status transition is the only kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunEventKind {
    Status,
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
