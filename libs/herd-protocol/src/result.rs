//! The delivered result: `runs/<run-id>.result.json` (or `runs/<run-id>.task-<task>.result.json`
//! for a persistent specialist's task), settled once and delivered once by `herd-watch`, and
//! [`Outcome`] and [`RunOutcome`], the answers to "how did it end" (four cases for the wait's
//! exit code, five with a failed model provider told apart).
//!
//! The result's [`Details`] are raw values for structured consumers; their keys are camelCase
//! and each is present only when it applies. Their fields are declared in the byte order of
//! their keys, the order the map they replace printed them in; the documents they hold (the
//! re-check's verdict, the acceptance ledger) print their keys in the same order.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::worktree::WorktreeInspect;

/// The newest result version this build reads and writes.
pub const FORMAT_VERSION: u64 = 1;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Completed,
    Failed,
    Cancelled,
    Help,
}

impl Outcome {
    /// The exit code of `herd-watch wait` for this outcome.
    pub fn exit_code(self) -> i32 {
        match self {
            Outcome::Completed => herd_core::exit::SUCCESS,
            Outcome::Failed => herd_core::exit::NEGATIVE,
            Outcome::Cancelled => herd_core::exit::CANCELLED,
            Outcome::Help => herd_core::exit::HELP,
        }
    }

    /// The outcome with a failed model provider told apart, as the outcome ledger and the parent
    /// re-check name it: the one conversion of the wait's four cases into the five of
    /// [`RunOutcome`].
    pub fn with_provider_error(self, provider_error: bool) -> RunOutcome {
        match self {
            Outcome::Completed => RunOutcome::Completed,
            Outcome::Failed if provider_error => RunOutcome::ProviderError,
            Outcome::Failed => RunOutcome::Failed,
            Outcome::Cancelled => RunOutcome::Cancelled,
            Outcome::Help => RunOutcome::Help,
        }
    }
}

/// How a child's run ended.
// The result's `Outcome` with a failure of the model provider told apart from other failures:
// the `outcome` of a line of `outcomes.jsonl` and of the verdict (`herd-accept verdict
// --outcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum RunOutcome {
    /// It finished normally with exit 0.
    Completed,
    /// It exited non-zero.
    Failed,
    Cancelled,
    /// It asked its parent for help.
    Help,
    /// Its model provider failed.
    ProviderError,
}

/// `runs/<run-id>.result.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunResult {
    pub format_version: u64,
    pub run_id: String,
    pub name: String,
    pub outcome: Outcome,
    /// The message the parent receives: host lines, the report block, evidence, continuation.
    pub message: String,
    /// Raw values for structured consumers (error message, accept, worktree, cancellation…).
    pub details: Details,
    pub settled_at_ms: u64,
    /// The persistent specialist's task this result answers; absent for a run's own result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
}

/// The most a read of a result takes in.
pub const READ_LIMIT: u64 = 1024 * 1024;

impl RunResult {
    /// Reads the settled result of run `run_id`, or of its persistent specialist's `task`:
    /// `Ok(None)` when there is none; an error when it is larger than [`READ_LIMIT`], malformed,
    /// or of a newer version than this build knows.
    pub fn load(
        artifacts: &crate::layout::Artifacts,
        run_id: &str,
        task: Option<&str>,
    ) -> Result<Option<RunResult>, herd_core::sidecar::Error> {
        herd_core::sidecar::read_versioned(
            &artifacts
                .runs_dir()
                .join(format!("{}.result.json", stem(run_id, task))),
            READ_LIMIT,
            "format_version",
            FORMAT_VERSION,
        )
    }

    /// The exit code of `herd-watch wait` for this result: the outcome's, except that a completed
    /// run whose parent re-check rejected it is a valid negative answer (1), and one whose check
    /// gave no answer (it timed out or could not start) is 4, as docs/exit-codes.md gives them.
    pub fn exit_code(&self) -> i32 {
        match (self.outcome, self.details.verdict()) {
            (Outcome::Completed, Some("rejected")) => herd_core::exit::NEGATIVE,
            (Outcome::Completed, Some("error")) => herd_core::exit::NO_ANSWER,
            (outcome, _) => outcome.exit_code(),
        }
    }

    /// `self` as it is written: within [`READ_LIMIT`], so that every reader can read it. A
    /// result larger than that (a child's files or session can make its details any size)
    /// leaves out its largest details, one at a time, each named in `details.omitted` and in a
    /// line of the message, until it fits; a message still too large is cut.
    #[must_use]
    pub fn within_bound(self) -> RunResult {
        // Room for the pretty printer's indentation of what is kept, and the note.
        const ROOM: usize = 64 * 1024;
        let bound = usize::try_from(READ_LIMIT).unwrap_or(usize::MAX) - ROOM;
        let size = |value: &serde_json::Value| serde_json::to_vec(value).map_or(0, |b| b.len());
        let Ok(mut doc) = serde_json::to_value(&self) else {
            return self;
        };
        if size(&doc) <= bound {
            return self;
        }
        // Each detail left out by its key, and with its size for the message.
        let (mut keys, mut sized) = (Vec::new(), Vec::new());
        while size(&doc) > bound {
            let Some(details) = doc["details"].as_object_mut() else {
                break;
            };
            let largest = details
                .iter()
                .filter(|(key, _)| *key != "omitted")
                .max_by_key(|(_, value)| size(value))
                .map(|(key, value)| (key.clone(), size(value)));
            let Some((key, bytes)) = largest else {
                break;
            };
            details.remove(&key);
            sized.push(format!("{key} ({bytes} bytes)"));
            keys.push(serde_json::Value::from(key));
            details.insert("omitted".into(), serde_json::Value::from(keys.clone()));
        }
        let mut out: RunResult = serde_json::from_value(doc).unwrap_or(self);
        if !sized.is_empty() {
            out.message.push_str(&format!(
                "\nDetails left out to keep the result within its {} KiB bound: {}.",
                READ_LIMIT / 1024,
                sized.join(", ")
            ));
        }
        // The message alone past the bound (it is bounded where it is made): cut.
        if out.message.len() > bound {
            let mut at = bound;
            while !out.message.is_char_boundary(at) {
                at -= 1;
            }
            out.message.truncate(at);
            out.message
                .push_str("\n[… cut to keep the result within its bound]");
        }
        out
    }

    /// The file-name stem of this result's files, which is also the key a consumer acknowledges
    /// it by: `<run-id>` or `<run-id>.task-<task>`.
    pub fn key(&self) -> String {
        stem(&self.run_id, self.task.as_deref())
    }

    /// The outcome as the outcome ledger names it: a failure with a provider error and no exit
    /// code is `provider-error`.
    pub fn run_outcome(&self) -> RunOutcome {
        let provider_error =
            self.details.error_message.is_some() && self.details.exit_code.is_none();
        self.outcome.with_provider_error(provider_error)
    }
}

/// Prints a document the details hold with its keys in byte order, as the map it replaced did.
fn keys_in_byte_order<T: Serialize, S: serde::Serializer>(
    value: &T,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serde_json::to_value(value)
        .map_err(serde::ser::Error::custom)?
        .serialize(serializer)
}

/// A result's parent re-check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ParentCheck {
    /// The re-check ran or was skipped: the document of `herd-accept verdict`.
    Ran(Box<crate::accept::VerdictDetails>),
    /// The accept spec cannot be read.
    Unreadable(crate::accept::UnreadableSpec),
}

impl ParentCheck {
    pub fn verdict(&self) -> crate::accept::Verdict {
        match self {
            ParentCheck::Ran(details) => details.verdict,
            ParentCheck::Unreadable(unreadable) => unreadable.verdict,
        }
    }

    /// How many times the child ran its own check, when it said.
    pub fn tries(&self) -> Option<u32> {
        match self {
            ParentCheck::Ran(details) => details.tries,
            ParentCheck::Unreadable(_) => None,
        }
    }
}

/// A result's acceptance: the ledger of the gate applied to the final report, or why
/// the gate was not applied; `status` tells them apart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Acceptance {
    /// The gate was applied: the ledger `herd-accept report --json` prints.
    Applied(Box<crate::accept::Ledger>),
    NotApplied(crate::accept::NotApplied),
}

impl Acceptance {
    /// The `status` the outcome ledger keeps.
    pub fn status(&self) -> &'static str {
        match self {
            Acceptance::Applied(ledger) => ledger.status.as_str(),
            Acceptance::NotApplied(crate::accept::NotApplied::Error { .. }) => "error",
            Acceptance::NotApplied(crate::accept::NotApplied::NotEvaluated { .. }) => {
                "not-evaluated"
            }
        }
    }
}

/// The file-name stem of a result's files: `<run-id>` or `<run-id>.task-<task>`.
pub fn stem(run_id: &str, task: Option<&str>) -> String {
    match task {
        Some(task) => format!("{run_id}.task-{task}"),
        None => run_id.to_owned(),
    }
}

/// Raw values for structured consumers; keys are camelCase and each is present only when it
/// applies.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Details {
    /// The parent re-check.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "keys_in_byte_order"
    )]
    pub accept: Option<ParentCheck>,
    /// The acceptance gate.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "keys_in_byte_order"
    )]
    pub acceptance: Option<Acceptance>,
    /// The hard budget the run reached and what it had spent: the watcher stopped it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<crate::intents::BudgetStop>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancellation: Option<Cancellation>,
    /// How long the child ran, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<u64>,
    /// `timed out` when the cancel was the watcher's, at the run's time limit; `budget spent`
    /// when it was the watcher's, at the run's hard budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<CancelError>,
    /// The provider error, or why completion evidence is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// The runner's exit code, when it exited without a completion sidecar.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The models that failed before this attempt, oldest first, each with its raw error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_failures: Option<Vec<FallbackFailure>>,
    /// The host the child ran on, for a run on another machine: the paths in these details
    /// and in the message are that host's (the message marks them `<host>:/path`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Why the child could not be launched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_failure: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The details left out to keep the result within its read bound ([`READ_LIMIT`]), each
    /// by its key, largest first; the message says so too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub omitted: Option<Vec<String>>,
    /// What a renderer shows in the expanded view: the raw report, bounded as the block is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<ReportView>,
    /// A reviewer's decision of the run it reviews, as `review.schema.json` describes it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "in_byte_order"
    )]
    pub review: Option<crate::accept::ReviewRecord>,
    /// A failed child's pane screen as herd kept it, `logs/<run-id>.screen` (a child on tmux or
    /// Herdr whose output went to its pane).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen_file: Option<String>,
    /// A failed child whose output went to its pane: the last lines of its kept screen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen_tail: Option<String>,
    /// The child's Pi session (the pi runner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_file: Option<String>,
    /// The runner's stderr log, `logs/<run-id>.err`: the exec runner's on every surface, and
    /// a failed Pi child's on the process surface.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr_file: Option<String>,
    /// A runner that failed with its stderr logged: the last lines of that log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr_tail: Option<String>,
    /// The exec runner's stdout log, `logs/<run-id>.out`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout_file: Option<String>,
    /// The steering ledger: every request's receipt, as the `requests` of
    /// `steering.schema.json`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "in_byte_order"
    )]
    pub steering: Option<Vec<crate::intents::SteerReceipt>>,
    /// A persistent specialist that ended on its stop directive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<bool>,
    /// The persistent specialist's task this result answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// The run's time limit, in milliseconds, when it outlived it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_limit_ms: Option<u64>,
    /// The run outlived its time limit (`herd-launch spawn --timeout-ms`) and was terminated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timed_out: Option<bool>,
    /// Steering messages still queued when the run ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undelivered_steering: Option<Vec<String>>,
    /// What the run cost: its session's usage with its nested children's rolled up (a
    /// persistent specialist's task: that task's part of the session).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "keys_in_byte_order"
    )]
    pub usage: Option<crate::usage::RunUsage>,
    /// The handoff, as `worktree-inspect.schema.json` describes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<WorktreeInspect>,
}

impl Details {
    /// The parent re-check's verdict, when the run had one.
    pub fn verdict(&self) -> Option<&'static str> {
        Some(self.accept.as_ref()?.verdict().as_str())
    }
}

/// Why a cancelled run's result is an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum CancelError {
    #[serde(rename = "cancelled")]
    Cancelled,
    #[serde(rename = "timed out")]
    TimedOut,
    #[serde(rename = "budget spent")]
    BudgetSpent,
}

/// The `cancellation` record of a cancelled result's details.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Cancellation {
    /// When its process's exit was confirmed; `null` until it was.
    #[serde(default)]
    pub confirmed_at: Option<u64>,
    pub requested_at: u64,
    pub termination: CancelTermination,
}

/// How far a cancel's termination got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CancelTermination {
    Requested,
    Confirmed,
    Unconfirmed,
}

/// One model that failed before a run's attempt, with its raw provider error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FallbackFailure {
    pub run_id: String,
    pub model: Option<String>,
    pub error: String,
}

/// The raw report a renderer shows in the expanded view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReportView {
    pub kind: herd_core::escape::ReportKind,
    pub text: String,
    /// `text` fenced for a terminal (`herd_core::escape::expanded_view`): a `┌ Child report
    /// from <name> (<kind>)` rule, each line of the report after `│ ` with its controls shown as
    /// `\uXXXX`, and a `└ end of child report` rule, joined by `\n`. What the expanded view
    /// shows line by line; absent in results written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view: Option<String>,
}

/// `runs/<run-id>.delivered` (and `runs/<run-id>.task-<task>.delivered`): created once, after
/// the result was emitted (or acknowledged); its existence means the result was delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Delivered {
    pub delivered_at_ms: u64,
    pub format_version: u64,
}

impl Delivered {
    /// The newest version of the marker.
    pub const FORMAT_VERSION: u64 = 1;
}

/// The version of a line of `outcomes.jsonl`.
pub const LEDGER_LINE_VERSION: u64 = 1;

/// One line of `outcomes.jsonl`, the outcome ledger at the root of the artifacts directory: one
/// line per model attempt, appended once when the result is delivered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LedgerLine {
    #[schemars(schema_with = "crate::version_is::<{ LEDGER_LINE_VERSION }>")]
    pub version: u64,
    pub at: u64,
    #[schemars(pattern(crate::layout::RUN_ID_PATTERN))]
    pub run_id: String,
    pub name: String,
    pub agent: Option<String>,
    pub model: Option<String>,
    pub thinking: Option<String>,
    #[schemars(range(min = 1))]
    pub attempt: u64,
    /// The models tried before this one, this one, and the fallbacks left.
    pub candidates: Vec<String>,
    pub outcome: RunOutcome,
    pub exit_code: Option<i32>,
    /// The parent re-check's verdict.
    pub check: crate::accept::Verdict,
    /// The acceptance status, when the run had a gate.
    #[serde(default)]
    pub acceptance: Option<String>,
    pub tries: Option<u64>,
    pub elapsed_ms: Option<u64>,
    pub worktree: bool,
    pub persistent: bool,
    /// What the run cost, its nested children rolled up (`details.usage` of its result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::usage::Figures>,
}

/// The version of the [`Ledgered`] marker.
pub const LEDGERED_VERSION: u64 = 1;

/// `runs/<run-id>.ledgered`: created once, after the run's line was appended to
/// `outcomes.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Ledgered {
    #[schemars(schema_with = "crate::format_version")]
    pub format_version: u64,
}

/// Serializes a typed part of [`Details`] with its keys in byte order, as every key of a result
/// is (a JSON map orders them; a struct keeps its declaration order).
fn in_byte_order<T: Serialize, S: serde::Serializer>(
    value: &Option<T>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let value = serde_json::to_value(value).map_err(serde::ser::Error::custom)?;
    value.serialize(serializer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_print_their_keys_in_byte_order() {
        let details = Details {
            accept: Some(ParentCheck::Unreadable(crate::accept::UnreadableSpec::new(
                "x".into(),
            ))),
            acceptance: Some(Acceptance::NotApplied(crate::accept::NotApplied::Error {
                error: "x".into(),
            })),
            budget: Some(crate::intents::BudgetStop {
                format_version: 1,
                budget: crate::usage::Budget::default(),
                spent: crate::usage::Spent {
                    tokens: Some(1),
                    usd: crate::usage::Usd(0.0),
                    cost_unknown: false,
                },
                stopped_at_ms: 1,
            }),
            cancellation: Some(Cancellation {
                confirmed_at: None,
                requested_at: 1,
                termination: CancelTermination::Requested,
            }),
            elapsed_ms: Some(1),
            error: Some(CancelError::TimedOut),
            error_message: Some("e".into()),
            exit_code: Some(2),
            fallback_failures: Some(Vec::new()),
            host: Some("h".into()),
            launch_failure: Some("l".into()),
            model: Some("m".into()),
            omitted: Some(vec!["worktree".into()]),
            report: Some(ReportView {
                kind: herd_core::escape::ReportKind::Result,
                text: "t".into(),
                view: Some("v".into()),
            }),
            review: Some(crate::accept::ReviewRecord {
                format_version: 1,
                run_id: "r".into(),
                reviewer_run_id: "q".into(),
                reviewer_name: "n".into(),
                status: crate::accept::Status::Reviewed,
                blockers: Vec::new(),
                findings: Vec::new(),
                reason: "ok".into(),
                at_ms: 1,
            }),
            screen_file: Some("f".into()),
            screen_tail: Some("t".into()),
            session_file: Some("s".into()),
            stderr_file: Some("e".into()),
            stderr_tail: Some("t".into()),
            stdout_file: Some("o".into()),
            steering: Some(vec![crate::intents::SteerReceipt {
                request_id: "s1".into(),
                mode: crate::watch::SteerMode::Steer,
                state: crate::watch::SteerState::Delivered,
                requested_at_ms: 1,
                delivered_at_ms: Some(2),
                typed_at_ms: Some(2),
                note: None,
                error: None,
                error_code: None,
            }]),
            stopped: Some(true),
            task: Some("t".into()),
            time_limit_ms: Some(3),
            timed_out: Some(true),
            undelivered_steering: Some(Vec::new()),
            usage: Some(crate::usage::RunUsage::default()),
            worktree: None,
        };
        let text = serde_json::to_string(&details).unwrap();
        let map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text).unwrap();
        assert_eq!(serde_json::Value::Object(map).to_string(), text);
        assert!(text.contains(
            r#""cancellation":{"confirmedAt":null,"requestedAt":1,"termination":"requested"}"#
        ));
        assert!(text.contains(r#""error":"timed out""#));
    }

    #[test]
    fn the_five_endings_keep_their_spellings() {
        let spelled: Vec<String> = [
            Outcome::Completed.with_provider_error(true),
            Outcome::Failed.with_provider_error(false),
            Outcome::Failed.with_provider_error(true),
            Outcome::Cancelled.with_provider_error(true),
            Outcome::Help.with_provider_error(true),
        ]
        .iter()
        .map(|outcome| serde_json::to_string(outcome).unwrap())
        .collect();
        assert_eq!(
            spelled,
            [
                r#""completed""#,
                r#""failed""#,
                r#""provider-error""#,
                r#""cancelled""#,
                r#""help""#
            ]
        );
    }

    #[test]
    fn a_failure_without_an_exit_code_is_a_provider_error() {
        let result = |details: Details| RunResult {
            format_version: FORMAT_VERSION,
            run_id: "r1".into(),
            name: "scout".into(),
            outcome: Outcome::Failed,
            message: String::new(),
            details,
            settled_at_ms: 1,
            task: None,
        };
        let provider = result(Details {
            error_message: Some("overloaded".into()),
            ..Details::default()
        });
        assert_eq!(provider.run_outcome(), RunOutcome::ProviderError);
        let exited = result(Details {
            error_message: Some("x".into()),
            exit_code: Some(1),
            ..Details::default()
        });
        assert_eq!(exited.run_outcome(), RunOutcome::Failed);
    }

    #[test]
    fn a_result_past_its_read_bound_leaves_out_its_largest_details() {
        let result = RunResult {
            format_version: FORMAT_VERSION,
            run_id: "r1".into(),
            name: "scout".into(),
            outcome: Outcome::Completed,
            message: "Completed.".into(),
            details: Details {
                undelivered_steering: Some(vec!["s".repeat(600 * 1024); 3]),
                screen_tail: Some("t".repeat(100)),
                model: Some("fake/a".into()),
                ..Details::default()
            },
            settled_at_ms: 1,
            task: None,
        };
        assert!(serde_json::to_vec_pretty(&result).unwrap().len() as u64 > READ_LIMIT);
        let kept = result.clone().within_bound();
        let written = serde_json::to_vec_pretty(&kept).unwrap();
        assert!((written.len() as u64) < READ_LIMIT, "{}", written.len());
        assert_eq!(kept.details.undelivered_steering, None);
        assert_eq!(
            kept.details.omitted,
            Some(vec!["undeliveredSteering".to_owned()])
        );
        assert_eq!(
            kept.details.screen_tail, result.details.screen_tail,
            "the rest is kept"
        );
        assert!(
            kept.message.ends_with(
                "Details left out to keep the result within its 1024 KiB bound: undeliveredSteering (1843210 bytes)."
            ),
            "{}",
            kept.message
        );
        // A result within its bound is written as it is.
        let small = RunResult {
            details: Details::default(),
            ..result
        };
        assert_eq!(small.clone().within_bound(), small);
    }
}
