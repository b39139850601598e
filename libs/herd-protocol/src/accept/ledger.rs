//! `herd-accept report --json`: the ledger of a run's acceptance gate, everything the host decided about
//! a run's acceptance. herd-watch puts it into a result's details as `acceptance`.

use herd_core::exit;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{AcceptanceReport, Gate, ReportSource};

/// The version of the ledger document.
pub const LEDGER_VERSION: u64 = 1;

/// Where a run stands on its acceptance gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    NotRequired,
    /// The child finished without structured evidence.
    Claimed,
    /// The child returned a valid structured report.
    Attested,
    /// The host's structural checks passed.
    Checked,
    /// The host's verification commands passed.
    Verified,
    /// The evidence holds and an independent review is still to come.
    ReviewRequired,
    /// An independent reviewer's result is present and has no blockers.
    Reviewed,
    Rejected,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::NotRequired => "not-required",
            Status::Claimed => "claimed",
            Status::Attested => "attested",
            Status::Checked => "checked",
            Status::Verified => "verified",
            Status::ReviewRequired => "review-required",
            Status::Reviewed => "reviewed",
            Status::Rejected => "rejected",
        }
    }
}

/// The outcome of one runtime check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CheckStatus {
    Passed,
    Failed,
    NotApplicable,
}

/// One structural check the host made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RuntimeCheck {
    /// `acceptance-report`, `criterion:<id>`, `evidence:<kind>` or `no-staged-files`.
    pub id: String,
    pub status: CheckStatus,
    pub message: String,
}

/// How a verify command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum VerifyStatus {
    Passed,
    Failed,
    TimedOut,
    /// It failed and the caller allowed that.
    AllowedFailure,
    /// herd-accept was told to stop while it ran.
    Cancelled,
}

/// One verify command as the host ran it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct VerifyRun {
    pub id: String,
    pub command: String,
    pub cwd: String,
    pub status: VerifyStatus,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub duration_ms: u64,
    /// The head of stdout and stderr, secrets redacted (see herd-accept's `report::host`).
    pub stdout: String,
    pub stderr: String,
    pub truncated: bool,
    /// Why it could not start, when it could not.
    pub error: Option<String>,
    /// Whether this is an earlier run's result, reused because the command, its directory, its
    /// environment and the workspace state were the same (the verify memo,
    /// `verify-memo/<key>.json`).
    #[serde(default)]
    pub reused: bool,
}

/// Everything the host decided about a run's acceptance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Ledger {
    pub format_version: u64,
    pub status: Status,
    pub evidence_status: Status,
    pub explicit: bool,
    pub gate: Gate,
    pub report_source: Option<ReportSource>,
    pub child_report: Option<AcceptanceReport>,
    pub child_report_parse_error: Option<Vec<String>>,
    pub runtime_checks: Vec<RuntimeCheck>,
    pub verify_runs: Vec<VerifyRun>,
    /// A verify command was stopped because herd-accept was told to stop.
    pub cancelled: bool,
}

impl Ledger {
    /// The version of this document's shape, printed as `format_version`.
    pub const FORMAT_VERSION: u64 = LEDGER_VERSION;

    /// `herd-accept report`'s exit code: 0 when the gate holds (including "not required" and
    /// "review still required"), 1 when it is rejected, 5 when verification was cancelled.
    pub fn exit_code(&self) -> i32 {
        if self.cancelled {
            exit::CANCELLED
        } else if self.status == Status::Rejected {
            exit::NEGATIVE
        } else {
            exit::SUCCESS
        }
    }
}

/// What a result's details hold as `acceptance` in place of a [`Ledger`] when the run's gate was
/// not applied; `status` tells it from a ledger's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum NotApplied {
    /// The run's gate cannot be read, which is not a gate that held.
    Error { error: String },
    /// The run did not complete: the gate it had, unapplied.
    NotEvaluated { explicit: bool, gate: Gate },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accept::Level;

    #[test]
    fn a_gate_not_applied_is_told_by_its_status() {
        let error = NotApplied::Error {
            error: "cannot access x".into(),
        };
        assert_eq!(
            serde_json::to_string(&error).unwrap(),
            r#"{"status":"error","error":"cannot access x"}"#
        );
        let gate = Gate {
            level: Level::Checked,
            explicit: true,
            inferred_level: Level::Attested,
            criteria: Vec::new(),
            evidence: Vec::new(),
            verify: Vec::new(),
            review: None,
            stop_rules: Vec::new(),
            reason: None,
        };
        let value = serde_json::to_value(NotApplied::NotEvaluated {
            explicit: true,
            gate: gate.clone(),
        })
        .unwrap();
        assert_eq!(
            value,
            serde_json::json!({"status": "not-evaluated", "explicit": true, "gate": gate})
        );
    }
}
