//! `runs/<run-id>.acceptance.json`: the acceptance gate of a run, the effective gate herd-launch
//! resolved and the run a reviewer reviews. herd-accept validates what a caller asked for and
//! resolves it into a [`Gate`]; these are the values it resolves to.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use herd_core::sidecar;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An acceptance level, in increasing strictness.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    None,
    Attested,
    Checked,
    Verified,
}

impl Level {
    pub const ALL: [Level; 4] = [
        Level::None,
        Level::Attested,
        Level::Checked,
        Level::Verified,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Level::None => "none",
            Level::Attested => "attested",
            Level::Checked => "checked",
            Level::Verified => "verified",
        }
    }

    /// The level spelled `text`, exactly as it is serialized.
    pub fn parse(text: &str) -> Option<Level> {
        Level::ALL.into_iter().find(|level| level.as_str() == text)
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The closed set of evidence kinds.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum EvidenceKind {
    ChangedFiles,
    TestsAdded,
    CommandsRun,
    ValidationOutput,
    ResidualRisks,
    NoStagedFiles,
    DiffSummary,
    ReviewFindings,
    ManualNotes,
}

impl EvidenceKind {
    pub const ALL: [EvidenceKind; 9] = [
        EvidenceKind::ChangedFiles,
        EvidenceKind::TestsAdded,
        EvidenceKind::CommandsRun,
        EvidenceKind::ValidationOutput,
        EvidenceKind::ResidualRisks,
        EvidenceKind::NoStagedFiles,
        EvidenceKind::DiffSummary,
        EvidenceKind::ReviewFindings,
        EvidenceKind::ManualNotes,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EvidenceKind::ChangedFiles => "changed-files",
            EvidenceKind::TestsAdded => "tests-added",
            EvidenceKind::CommandsRun => "commands-run",
            EvidenceKind::ValidationOutput => "validation-output",
            EvidenceKind::ResidualRisks => "residual-risks",
            EvidenceKind::NoStagedFiles => "no-staged-files",
            EvidenceKind::DiffSummary => "diff-summary",
            EvidenceKind::ReviewFindings => "review-findings",
            EvidenceKind::ManualNotes => "manual-notes",
        }
    }

    /// The kind spelled `text`, exactly as it is serialized.
    pub fn parse(text: &str) -> Option<EvidenceKind> {
        EvidenceKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == text)
    }
}

/// Whether a criterion must be satisfied for the gate to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    Required,
    Recommended,
}

/// One acceptance criterion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Criterion {
    /// The normalised id (`criterion-N` for a criterion given as a bare string).
    pub id: String,
    pub must: String,
    /// Evidence this criterion asks for beyond the gate's own.
    pub evidence: Vec<EvidenceKind>,
    pub severity: Severity,
}

/// One host-run verification command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct VerifyCommand {
    pub id: String,
    pub command: String,
    pub timeout_ms: u64,
    /// Resolved against the run's directory.
    pub cwd: Option<String>,
    /// Laid over the host's environment.
    pub env: BTreeMap<String, String>,
    pub allow_failure: bool,
}

/// The review gate; herd records it and never runs a reviewer itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Review {
    pub agent: Option<String>,
    pub focus: Option<String>,
    pub required: bool,
}

/// The effective gate of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Gate {
    pub level: Level,
    /// The caller asked for acceptance explicitly; an explicit gate failure fails the run.
    pub explicit: bool,
    pub inferred_level: Level,
    pub criteria: Vec<Criterion>,
    pub evidence: Vec<EvidenceKind>,
    pub verify: Vec<VerifyCommand>,
    pub review: Option<Review>,
    pub stop_rules: Vec<String>,
    pub reason: Option<String>,
}

/// The version of `runs/<id>.acceptance.json`.
pub const RUN_GATE_VERSION: u64 = 1;

/// The largest acceptance gate file read.
pub const RUN_GATE_READ_LIMIT: u64 = 1024 * 1024;

/// `runs/<id>.acceptance.json`: the gate herd-launch resolved for a run, which herd-watch applies
/// to the child's final report when the run settles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RunGate {
    pub format_version: u64,
    pub gate: Gate,
    /// The run this one reviews (the request's `reviews`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviews: Option<ReviewTarget>,
}

impl RunGate {
    /// The version herd-launch writes and the one a reader accepts.
    pub const FORMAT_VERSION: u64 = RUN_GATE_VERSION;
}

/// The run a reviewer reviews.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReviewTarget {
    pub run_id: String,
    pub name: String,
}

/// Reads a run's gate: `None` when the run has none; an error for a file that is too large, is
/// not a gate, or is of another version, because a gate that cannot be read is not one that held.
pub fn read_run_gate(path: &Path) -> Result<Option<RunGate>, sidecar::Error> {
    sidecar::read_versioned(
        path,
        RUN_GATE_READ_LIMIT,
        "format_version",
        RUN_GATE_VERSION,
    )
}
