//! The `acceptance-report` a child writes at the end of its output (docs/tools.md, "Acceptance
//! gates"), as herd-accept reads it after normalisation, and where it was found.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A child's acceptance report after normalisation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcceptanceReport {
    pub criteria_satisfied: Option<Vec<CriterionReport>>,
    pub changed_files: Option<Vec<String>>,
    pub tests_added_or_updated: Option<Vec<String>>,
    pub commands_run: Option<Vec<CommandReport>>,
    pub validation_output: Option<Vec<String>>,
    pub residual_risks: Option<Vec<String>>,
    pub no_staged_files: Option<bool>,
    pub diff_summary: Option<String>,
    pub review_findings: Option<Vec<String>>,
    /// A reviewer's blocking findings; empty: none (what makes a review `reviewed`).
    pub blockers: Option<Vec<String>>,
    pub manual_notes: Option<String>,
    pub notes: Option<String>,
}

/// A criterion as the child reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CriterionReport {
    pub id: String,
    pub status: CriterionStatus,
    pub evidence: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CriterionStatus {
    Satisfied,
    NotSatisfied,
    NotApplicable,
}

/// A command the child says it ran; evidence only, never verification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CommandReport {
    pub command: String,
    pub result: CommandResult,
    pub summary: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CommandResult {
    Passed,
    Failed,
    NotRun,
}

/// Where the report was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ReportSource {
    AcceptanceFence,
    UnterminatedFence,
    JsonFence,
    Marker,
}
