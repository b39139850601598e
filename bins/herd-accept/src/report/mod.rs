//! Acceptance gates (docs/tools.md, "Acceptance gates") applied to a child's final output: validate
//! the caller's acceptance configuration, find and read the child's `acceptance-report`, run the
//! structural checks and the host's own verification commands, and keep the result in a ledger.
//!
//! The order is fixed: configuration errors are refused before anything runs; the child's report
//! is evidence, and only what the host runs itself (the git index, the verify commands) verifies.

pub mod config;
pub mod host;
pub mod intent;
pub mod memo;
pub mod parse;
pub mod prompt;
pub mod review;

use std::fmt;
use std::path::Path;

use herd_core::escape::{encode_host_line, encode_host_value};
use herd_core::{Error, ErrorCode};
use herd_protocol::accept::{
    AcceptanceReport, CheckStatus, CriterionStatus, EvidenceKind, Gate, LEDGER_VERSION, Ledger,
    Level, RuntimeCheck, Severity, Status, VerifyCommand, VerifyRun, VerifyStatus,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use config::AcceptanceInput;
pub use parse::{Found, find_report, strip_report};

/// One problem found while validating, with the path of the field it concerns.
///
/// Both are host text that may carry the child's (a key of its report, a value it sent): they are
/// kept on one line without report tags, as every host line is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub path: String,
    pub message: String,
}

impl Diagnostic {
    fn new(path: impl Into<String>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            path: encode_host_line(&path.into(), DIAGNOSTIC_PATH_MAX_CHARS),
            message: encode_host_line(&message.into(), DIAGNOSTIC_MESSAGE_MAX_CHARS),
        }
    }
}

/// The bound of a diagnostic's field path.
const DIAGNOSTIC_PATH_MAX_CHARS: usize = 300;
/// The bound of a diagnostic's message.
const DIAGNOSTIC_MESSAGE_MAX_CHARS: usize = 1_000;
/// The bound of one staged file name in the `no-staged-files` message.
const STAGED_PATH_MAX_CHARS: usize = 300;

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Every problem found, in the order found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    pub fn one(path: impl Into<String>, message: impl Into<String>) -> Diagnostics {
        Diagnostics(vec![Diagnostic::new(path, message)])
    }

    pub fn push(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.0.push(Diagnostic::new(path, message));
    }

    pub fn extend(&mut self, other: Diagnostics) {
        self.0.extend(other.0);
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether some diagnostic already concerns `prefix` or a field below it.
    pub fn has_path_prefix(&self, prefix: &str) -> bool {
        self.0.iter().any(|d| d.path.starts_with(prefix))
    }

    pub fn to_strings(&self) -> Vec<String> {
        self.0.iter().map(ToString::to_string).collect()
    }

    /// The `invalid_request` a binary reports: every diagnostic in the message, the first
    /// one's path as the field.
    pub fn into_error(self) -> Error {
        let field = self.0.first().map(|d| d.path.clone());
        let message = self.to_strings().join("; ");
        let mut err = Error::new(ErrorCode::InvalidRequest, message);
        err.field = field;
        err
    }
}

/// Lower-cases and turns runs of whitespace, `_` and `-` into one `-`: how criterion ids and
/// enum values are compared.
pub(crate) fn normalized_token(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending_dash = false;
    for ch in text.trim().chars() {
        if ch.is_whitespace() || ch == '_' || ch == '-' {
            pending_dash = !out.is_empty();
        } else {
            if pending_dash {
                out.push('-');
                pending_dash = false;
            }
            out.extend(ch.to_lowercase());
        }
    }
    out
}

/// Renders a value for a diagnostic as compact JSON, shortened to 80 characters.
pub(crate) fn render_value(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 80 {
        text
    } else {
        let mut short: String = text.chars().take(77).collect();
        short.push_str("...");
        short
    }
}

/// The host line of a result: `Acceptance: <status> (level <level>, explicit|inferred,
/// evidence <evidence>)`, then the first failed check or the review that is due. Child text in it
/// (a diagnostic quoting the report) is kept on the line, as every host line is.
///
/// An inferred gate that was not met is only reported (the run is not failed for it), so it reads
/// as a note, not as a verdict beside the `Check:` line: `Acceptance note: the inferred gate was
/// not met (level <level>, evidence <evidence>)`.
pub fn host_line(ledger: &Ledger) -> String {
    let mut line = if !ledger.explicit && ledger.status == Status::Rejected {
        format!(
            "Acceptance note: the inferred gate was not met (level {}, evidence {})",
            ledger.gate.level,
            ledger.evidence_status.as_str()
        )
    } else {
        format!(
            "Acceptance: {} (level {}, {}, evidence {})",
            ledger.status.as_str(),
            ledger.gate.level,
            if ledger.explicit {
                "explicit"
            } else {
                "inferred"
            },
            ledger.evidence_status.as_str()
        )
    };
    let problem = ledger
        .child_report_parse_error
        .iter()
        .flatten()
        .next()
        .map(|d| format!("report: {d}"))
        .or_else(|| {
            ledger
                .runtime_checks
                .iter()
                .find(|c| c.status == CheckStatus::Failed)
                .map(|c| format!("{}: {}", c.id, c.message))
        })
        .or_else(|| {
            ledger
                .verify_runs
                .iter()
                .find(|r| {
                    !matches!(
                        r.status,
                        VerifyStatus::Passed | VerifyStatus::AllowedFailure
                    )
                })
                .map(|r| format!("verify {} did not pass", r.id))
        });
    if let Some(problem) = problem {
        line.push_str(" · ");
        line.push_str(&problem);
    } else if ledger.status == Status::ReviewRequired {
        let agent = ledger
            .gate
            .review
            .as_ref()
            .and_then(|r| r.agent.as_deref())
            .unwrap_or("reviewer");
        line.push_str(&format!(
            " · review required: launch a {agent} with `reviews` naming this run"
        ));
    }
    encode_host_line(&line, HOST_LINE_MAX_CHARS)
}

/// The bound of the `Acceptance:` line.
const HOST_LINE_MAX_CHARS: usize = 1_000;

/// What the git index says about staged changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Staged {
    /// The staged paths (empty: nothing staged).
    Paths(Vec<String>),
    /// git could not answer (not a repository, git missing, timed out): not applicable.
    Unavailable(String),
}

/// What the host runs for a gate: the real one is [`host::RealHost`].
pub trait Host {
    /// Reads the git index of the repository containing `cwd`.
    fn staged(&mut self, cwd: &Path) -> Staged;
    /// Runs one verify command with `cwd` as the run's directory.
    fn verify(&mut self, command: &VerifyCommand, cwd: &Path) -> VerifyRun;
}

/// A short human summary of a ledger: the status, then one line per failed check or command.
pub fn human(ledger: &Ledger) -> String {
    let mut out = format!(
        "acceptance: {} (level {}, evidence {}{})",
        ledger.status.as_str(),
        ledger.gate.level,
        ledger.evidence_status.as_str(),
        if ledger.explicit {
            ", explicit"
        } else {
            ", inferred"
        }
    );
    for diag in ledger.child_report_parse_error.iter().flatten() {
        out.push_str("\n  report: ");
        out.push_str(diag);
    }
    for check in ledger
        .runtime_checks
        .iter()
        .filter(|c| c.status == CheckStatus::Failed)
    {
        out.push_str(&format!("\n  {}: {}", check.id, check.message));
    }
    for run in &ledger.verify_runs {
        if !matches!(run.status, VerifyStatus::Passed) {
            let status = serde_json::to_value(run.status)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            out.push_str(&format!("\n  verify {}: {status}", run.id));
        }
    }
    out
}

/// Applies `gate` to a child's `output`, running host checks through `host` in `cwd`.
pub fn evaluate(gate: &Gate, output: &str, cwd: &Path, host: &mut dyn Host) -> Ledger {
    let found = find_report(output);
    let mut ledger = Ledger {
        format_version: LEDGER_VERSION,
        status: Status::NotRequired,
        evidence_status: Status::NotRequired,
        explicit: gate.explicit,
        gate: gate.clone(),
        report_source: None,
        child_report: None,
        child_report_parse_error: None,
        runtime_checks: Vec::new(),
        verify_runs: Vec::new(),
        cancelled: false,
    };
    let report = match found {
        Found::Report { report, source } => {
            ledger.report_source = Some(source);
            ledger.child_report = Some((*report).clone());
            Some(*report)
        }
        Found::Invalid {
            diagnostics,
            source,
        } => {
            ledger.report_source = Some(source);
            ledger.child_report_parse_error = Some(diagnostics.to_strings());
            None
        }
        Found::NotFound => None,
    };
    if gate.level == Level::None {
        return ledger;
    }
    let Some(report) = report else {
        let (evidence, message) = if ledger.child_report_parse_error.is_some() {
            (Status::Rejected, "the acceptance report could not be read")
        } else {
            (Status::Claimed, "structured acceptance report not found")
        };
        ledger.runtime_checks.push(RuntimeCheck {
            id: "acceptance-report".to_owned(),
            status: CheckStatus::Failed,
            message: message.to_owned(),
        });
        ledger.evidence_status = evidence;
        ledger.status = Status::Rejected;
        return ledger;
    };
    ledger.runtime_checks.push(RuntimeCheck {
        id: "acceptance-report".to_owned(),
        status: CheckStatus::Passed,
        message: "structured acceptance report found".to_owned(),
    });
    let mut evidence = Status::Attested;
    if gate.level >= Level::Checked {
        let passed = structural_checks(gate, &report, cwd, host, &mut ledger.runtime_checks);
        evidence = if passed {
            Status::Checked
        } else {
            Status::Rejected
        };
    }
    if gate.level == Level::Verified && evidence == Status::Checked {
        let mut passed = true;
        for command in &gate.verify {
            let run = host.verify(command, cwd);
            match run.status {
                VerifyStatus::Passed | VerifyStatus::AllowedFailure => {}
                VerifyStatus::Cancelled => {
                    ledger.cancelled = true;
                    passed = false;
                }
                VerifyStatus::Failed | VerifyStatus::TimedOut => passed = false,
            }
            ledger.verify_runs.push(run);
            if ledger.cancelled {
                break;
            }
        }
        evidence = if passed {
            Status::Verified
        } else {
            Status::Rejected
        };
    }
    ledger.evidence_status = evidence;
    ledger.status = match (&gate.review, evidence) {
        (_, Status::Rejected) => Status::Rejected,
        (Some(review), _) if review.required => Status::ReviewRequired,
        _ => evidence,
    };
    ledger
}

/// Criteria, evidence and the git index; every check is recorded, and all must pass.
fn structural_checks(
    gate: &Gate,
    report: &AcceptanceReport,
    cwd: &Path,
    host: &mut dyn Host,
    checks: &mut Vec<RuntimeCheck>,
) -> bool {
    let mut passed = true;
    let mut record = |id: String, ok: Result<String, String>| {
        let (status, message) = match ok {
            Ok(message) => (CheckStatus::Passed, message),
            Err(message) => {
                passed = false;
                (CheckStatus::Failed, message)
            }
        };
        checks.push(RuntimeCheck {
            id,
            status,
            message,
        });
    };
    let reported = report.criteria_satisfied.as_deref().unwrap_or_default();
    let mut required_evidence = gate.evidence.clone();
    for criterion in &gate.criteria {
        if criterion.severity == Severity::Recommended {
            continue;
        }
        for kind in &criterion.evidence {
            if !required_evidence.contains(kind) {
                required_evidence.push(*kind);
            }
        }
        let status = reported
            .iter()
            .find(|r| r.id == criterion.id)
            .map(|r| r.status);
        let ok = match status {
            Some(CriterionStatus::Satisfied) => Ok("reported satisfied".to_owned()),
            Some(CriterionStatus::NotSatisfied) => Err("reported not satisfied".to_owned()),
            Some(CriterionStatus::NotApplicable) => {
                Err("reported not applicable; a required criterion must be satisfied".to_owned())
            }
            None => Err("not reported".to_owned()),
        };
        record(format!("criterion:{}", criterion.id), ok);
    }
    for kind in &required_evidence {
        record(
            format!("evidence:{}", kind.as_str()),
            evidence_present(*kind, report),
        );
    }
    if required_evidence.contains(&EvidenceKind::NoStagedFiles) {
        match host.staged(cwd) {
            Staged::Paths(paths) if paths.is_empty() => {
                record(
                    "no-staged-files".to_owned(),
                    Ok("the git index has no staged changes".to_owned()),
                );
            }
            Staged::Paths(paths) => {
                // File names are the child's: each encoded for the one line.
                let shown: Vec<String> = paths
                    .iter()
                    .take(10)
                    .map(|path| encode_host_value(path, STAGED_PATH_MAX_CHARS))
                    .collect();
                let more = paths.len().saturating_sub(shown.len());
                let mut message = format!("the git index has staged changes: {}", shown.join(", "));
                if more > 0 {
                    message.push_str(&format!(" (and {more} more)"));
                }
                record("no-staged-files".to_owned(), Err(message));
            }
            Staged::Unavailable(why) => checks.push(RuntimeCheck {
                id: "no-staged-files".to_owned(),
                status: CheckStatus::NotApplicable,
                message: format!("git could not answer: {why}"),
            }),
        }
    }
    passed
}

/// Whether the report carries one kind of evidence. Empty `changedFiles` and
/// `testsAddedOrUpdated` mean "not applicable" and count; other empty lists do not.
fn evidence_present(kind: EvidenceKind, report: &AcceptanceReport) -> Result<String, String> {
    let listed = |list: &Option<Vec<String>>, field: &str, empty_ok: bool| match list {
        Some(items) if !items.is_empty() => Ok(format!("{field}: {} item(s)", items.len())),
        Some(_) if empty_ok => Ok(format!("{field}: empty (not applicable)")),
        Some(_) => Err(format!("{field} is empty")),
        None => Err(format!("{field} is missing")),
    };
    let text = |value: &Option<String>, field: &str| match value {
        Some(text) if !text.trim().is_empty() => Ok(format!("{field} given")),
        Some(_) => Err(format!("{field} is empty")),
        None => Err(format!("{field} is missing")),
    };
    match kind {
        EvidenceKind::ChangedFiles => listed(&report.changed_files, "changedFiles", true),
        EvidenceKind::TestsAdded => {
            listed(&report.tests_added_or_updated, "testsAddedOrUpdated", true)
        }
        EvidenceKind::CommandsRun => match &report.commands_run {
            Some(commands) if !commands.is_empty() => Ok(format!(
                "commandsRun: {} command(s), as reported by the child",
                commands.len()
            )),
            Some(_) => Err("commandsRun is empty".to_owned()),
            None => Err("commandsRun is missing".to_owned()),
        },
        EvidenceKind::ValidationOutput => {
            listed(&report.validation_output, "validationOutput", false)
        }
        EvidenceKind::ResidualRisks => listed(&report.residual_risks, "residualRisks", false),
        EvidenceKind::NoStagedFiles => match report.no_staged_files {
            Some(true) => Ok("noStagedFiles: true".to_owned()),
            Some(false) => Err("the child reported staged files".to_owned()),
            None => Err("noStagedFiles is missing".to_owned()),
        },
        EvidenceKind::DiffSummary => text(&report.diff_summary, "diffSummary"),
        EvidenceKind::ReviewFindings => listed(&report.review_findings, "reviewFindings", false),
        EvidenceKind::ManualNotes => match (&report.manual_notes, &report.notes) {
            (Some(a), _) if !a.trim().is_empty() => Ok("manualNotes given".to_owned()),
            (_, Some(b)) if !b.trim().is_empty() => Ok("notes given".to_owned()),
            _ => Err("manualNotes (or notes) is missing or empty".to_owned()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tokens_normalise_case_spaces_and_underscores() {
        assert_eq!(normalized_token("  Keep  Scope_Now "), "keep-scope-now");
        assert_eq!(normalized_token("not--met"), "not-met");
        assert_eq!(normalized_token("N/A"), "n/a");
    }

    #[test]
    fn values_are_shortened_to_80_characters() {
        assert_eq!(render_value(&json!("ab")), "\"ab\"");
        let long = render_value(&json!("é".repeat(100)));
        assert_eq!(long.chars().count(), 80);
        assert!(long.ends_with("..."));
    }

    #[test]
    fn diagnostics_become_one_invalid_request() {
        let mut diags = Diagnostics::one("acceptance.level", "bad");
        diags.push("acceptance.reason", "missing");
        let err = diags.into_error();
        assert_eq!(err.field.as_deref(), Some("acceptance.level"));
        assert_eq!(
            err.message,
            "acceptance.level: bad; acceptance.reason: missing"
        );
        assert_eq!(err.exit_code(), 2);
    }
}
