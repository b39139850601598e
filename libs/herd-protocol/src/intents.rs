//! What the parent asked of a run, as it stands on disk: the cancel intent, the last interrupt,
//! and the steering queue and its ledger of receipts.
//!
//! herd-watch's `control` writes these files and its `finish` reads them into a run's result;
//! a timed-out run's expiry is here too, because it reads as the cancel that follows it.

use crate::layout::Artifacts;
use crate::watch::{SteerError, SteerState, WatchSteer};
use serde::{Deserialize, Serialize};

/// How a termination attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Termination {
    Confirmed,
    Unconfirmed,
}

/// `runs/<id>.cancel.json`: the intent, written once, then the termination's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CancelIntent {
    pub format_version: u64,
    pub requested_at_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination: Option<Termination>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmed_at_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl CancelIntent {
    /// The `cancellation` record of a cancelled result's details.
    pub fn to_details(&self) -> crate::result::Cancellation {
        use crate::result::{CancelTermination, Cancellation};
        Cancellation {
            confirmed_at: self.confirmed_at_ms,
            requested_at: self.requested_at_ms,
            termination: self
                .termination
                .map_or(CancelTermination::Requested, |t| match t {
                    Termination::Confirmed => CancelTermination::Confirmed,
                    Termination::Unconfirmed => CancelTermination::Unconfirmed,
                }),
        }
    }
}

/// Reads the cancel intent of `run_id`, if one was recorded.
pub fn read_intent(artifacts: &Artifacts, run_id: &str) -> Option<CancelIntent> {
    artifacts.run(run_id).read().ok().flatten()
}

/// The version of the one-field stamps here ([`Interrupt`], [`Expiry`]) and of the intent.
pub const FORMAT_VERSION: u64 = 1;

/// `runs/<id>.interrupt.json`: when `herd-watch interrupt` last sent Escape to the child.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Interrupt {
    #[schemars(schema_with = "crate::format_version")]
    pub format_version: u64,
    pub at_ms: u64,
}

/// Reads when `run_id` was last interrupted.
pub fn read_interrupt(artifacts: &Artifacts, run_id: &str) -> Option<u64> {
    artifacts
        .run(run_id)
        .read::<Interrupt>()
        .ok()
        .flatten()
        .map(|stamp| stamp.at_ms)
}

/// `runs/<id>.timeout.json`: the limit that passed (`herd-launch spawn --timeout-ms`) and when
/// the watcher saw it pass; written once, before the cancel intent it leads to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Expiry {
    #[schemars(schema_with = "crate::format_version")]
    pub format_version: u64,
    pub limit_ms: u64,
    pub expired_at_ms: u64,
}

/// Reads the expiry of `run_id`, if its limit passed.
pub fn read_expiry(artifacts: &Artifacts, run_id: &str) -> Option<Expiry> {
    artifacts.run(run_id).read().ok().flatten()
}

/// `runs/<id>.budget.json`: the hard budget the run reached (`subagent`'s `budget`), what it had
/// spent when the watcher saw it and when; written once, before the cancel intent it leads to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BudgetStop {
    // In byte order: the result's details print their keys so.
    pub budget: crate::usage::Budget,
    #[schemars(schema_with = "crate::format_version")]
    pub format_version: u64,
    pub spent: crate::usage::Spent,
    pub stopped_at_ms: u64,
}

/// Reads the budget stop of `run_id`, if its budget was reached.
pub fn read_budget_stop(artifacts: &Artifacts, run_id: &str) -> Option<BudgetStop> {
    artifacts.run(run_id).read().ok().flatten()
}

/// One steering request as the ledger keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SteerReceipt {
    pub request_id: String,
    pub mode: crate::watch::SteerMode,
    pub state: SteerState,
    pub requested_at_ms: u64,
    /// When it was delivered: a Pi child's Pi took it (its input count grew), or, for a child
    /// with no Pi (the exec runner) or a message typed from the queue, its keys went out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivered_at_ms: Option<u64>,
    /// When its keys were typed into the child's input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typed_at_ms: Option<u64>,
    /// What is known of a request that is not `delivered`, in host words (its keys were typed
    /// but the child's Pi did not take it within [`STEER_ACK_WINDOW_MS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Why it failed (host text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The error's code, for the exit code of the command that made the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
}

impl SteerReceipt {
    /// The receipt as `herd-watch steer --json` prints it for the run `run_id` named `name`.
    pub fn document(&self, run_id: &str, name: &str) -> WatchSteer {
        WatchSteer {
            run_id: run_id.to_owned(),
            name: Some(name.to_owned()),
            request_id: self.request_id.clone(),
            receipt: self.state,
            state: self.state,
            mode: self.mode,
            delivery_status: self.state.delivery_status(),
            typed_at_ms: self.typed_at_ms,
            note: self.note.clone(),
            error: self.error.as_ref().map(|message| SteerError {
                code: self.error_code.as_deref().unwrap_or("internal").to_owned(),
                message: message.clone(),
            }),
        }
    }
}

/// `runs/<id>.steering.json`: the receipts of the run's last [`STEER_LEDGER_MAX`] requests,
/// oldest first (the persisted `steering` ledger).
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SteeringLedger {
    pub format_version: u64,
    pub requests: Vec<SteerReceipt>,
}

/// How long a steer waits for the child's Pi to take its message once its keys are typed
/// (three seconds; docs/lifecycle.md, "Interrupt, stop and steer").
pub const STEER_ACK_WINDOW_MS: u64 = 3_000;

/// How many requests the steering ledger retains.
pub const STEER_LEDGER_MAX: usize = 20;

/// `runs/<id>.steer.json`: the bounded FIFO of messages not yet delivered.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SteerQueue {
    pub format_version: u64,
    pub messages: Vec<String>,
    /// The request id of each message, in the same order (absent in a queue written before
    /// receipts were kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub request_ids: Vec<String>,
}

/// The steering ledger of `run_id` (empty when nothing was ever steered or it cannot be read).
pub fn steering_ledger(artifacts: &Artifacts, run_id: &str) -> SteeringLedger {
    artifacts
        .run(run_id)
        .read()
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// The steering messages still queued when a run ended (its result's details report them).
pub fn undelivered_steer(artifacts: &Artifacts, run_id: &str) -> Vec<String> {
    artifacts
        .run(run_id)
        .read::<SteerQueue>()
        .ok()
        .flatten()
        .map(|q| q.messages)
        .unwrap_or_default()
}

/// `<session>.steering-queued.json`: the request ids of the steering messages queued for the
/// child's next turn boundary, written by herd-watch each time its queue changes (and removed
/// when nothing is queued). An auto-exit child reads it when its turn settles: while it lists a
/// request, the child stays open for the watcher to type it, and continues with that turn
/// (seed 004: "`follow_up` waits for the next turn boundary").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(
    title = "SteeringQueued",
    description = "`<session>.steering-queued.json`: the request ids of the steering messages queued for the child's next turn boundary, written by herd-watch each time its queue changes and removed when nothing is queued. An auto-exit child that finds a request listed here when its turn settles stays open for the watcher to type it. A file that breaks these rules is read as nothing queued."
)]
pub struct SteeringQueued {
    #[schemars(schema_with = "crate::session_file::version_of::<SteeringQueued>")]
    pub version: u64,
    /// Must equal the run id.
    #[schemars(length(max = crate::child::SHORT_TEXT_MAX), pattern(crate::child::ONE_LINE_PATTERN))]
    pub running_child_id: String,
    /// Oldest first; a request leaves the list once the watcher has typed it and judged its
    /// receipt.
    #[schemars(length(max = 20))]
    pub request_ids: Vec<String>,
}

impl SteeringQueued {
    pub(crate) fn encode(&self) -> Result<Vec<u8>, herd_core::sidecar::Error> {
        crate::session_file::compact(&SteeringQueued {
            version: <SteeringQueued as crate::session_file::SessionFile>::VERSION,
            ..self.clone()
        })
    }

    pub(crate) fn decode(
        bytes: &[u8],
        path: &std::path::Path,
    ) -> Result<SteeringQueued, herd_core::sidecar::Error> {
        let file: SteeringQueued = serde_json::from_slice(bytes).map_err(|source| {
            herd_core::sidecar::Error::Malformed {
                path: path.to_path_buf(),
                source,
            }
        })?;
        let version = <SteeringQueued as crate::session_file::SessionFile>::VERSION;
        if file.version != version {
            return Err(herd_core::sidecar::Error::invalid(
                path,
                "version",
                format!("is {}, not {version}", file.version),
            ));
        }
        Ok(file)
    }
}
