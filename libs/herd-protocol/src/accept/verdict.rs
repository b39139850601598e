//! `herd-accept verdict --json` and its `--out` file: the verdict on a run's accept check
//! (docs/lifecycle.md, "Accept checks").

use std::fmt;

use herd_core::exit;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::result::RunOutcome;

/// What the child said of its own last check run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum ChildReport {
    Pass,
    Fail,
}

/// The verdict of a parent re-check: accepted, rejected, error, skipped or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Accepted,
    Rejected,
    Error,
    Skipped,
    None,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Accepted => "accepted",
            Verdict::Rejected => "rejected",
            Verdict::Error => "error",
            Verdict::Skipped => "skipped",
            Verdict::None => "none",
        }
    }

    /// `herd-accept verdict`'s exit code: 0 accepted or none, 1 rejected, 4 error, 5 skipped.
    pub fn exit_code(self) -> i32 {
        match self {
            Verdict::Accepted | Verdict::None => exit::SUCCESS,
            Verdict::Rejected => exit::NEGATIVE,
            Verdict::Error => exit::NO_ANSWER,
            Verdict::Skipped => exit::CANCELLED,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a verdict is `error` or `skipped`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    TimedOut,
    KilledBySignal,
    DirectoryMissing,
    CouldNotStart,
    Cancelled,
    AskedForHelp,
    ProviderError,
    ExitedNonZero,
}

/// The structured details of a verdict: what `--json` prints and `--out` writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct VerdictDetails {
    pub format_version: u64,
    pub verdict: Verdict,
    pub reason: Option<Reason>,
    pub outcome: RunOutcome,
    pub tries: Option<u32>,
    pub child_reported: Option<ChildReport>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub timeout_sec: Option<u64>,
    /// The SHA-256 of the command, which names it without repeating it.
    pub command_sha256: Option<String>,
    pub recheck_dir: Option<String>,
    pub shared_checkout: bool,
    /// Changed files under the spec's `paths`, raw.
    pub changed_check_files: Vec<String>,
    /// Up to 4,000 raw characters of the re-check's output.
    pub output: String,
    pub output_truncated: bool,
    pub duration_ms: Option<u64>,
    /// Why the re-check gave no answer, when it could not start or its directory is missing.
    pub error: Option<String>,
    /// The `Check:` host line.
    pub check_line: String,
    /// The `Check output (last 1,500 characters, encoded): …` host line, for `rejected` and
    /// `error` when there was output.
    pub check_output_line: Option<String>,
}

impl VerdictDetails {
    /// The version of this document's shape, printed as `format_version`.
    pub const FORMAT_VERSION: u64 = 1;

    /// The `Check:` host line.
    pub fn check_line(&self) -> &str {
        &self.check_line
    }

    /// The encoded output line that follows the report for `rejected` and `error`.
    pub fn check_output_line(&self) -> Option<&str> {
        self.check_output_line.as_deref()
    }

    pub fn exit_code(&self) -> i32 {
        self.verdict.exit_code()
    }

    /// The human output of `herd-accept verdict`: the `Check:` line, then the output line.
    pub fn human(&self) -> String {
        match &self.check_output_line {
            Some(line) => format!("{}\n{line}", self.check_line),
            None => self.check_line.clone(),
        }
    }
}

/// A result's parent re-check when the accept spec cannot be read: `{verdict: "error", error}`
/// in place of the [`VerdictDetails`] of a re-check that ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UnreadableSpec {
    pub verdict: Verdict,
    pub error: String,
}

impl UnreadableSpec {
    pub fn new(error: String) -> UnreadableSpec {
        UnreadableSpec {
            verdict: Verdict::Error,
            error,
        }
    }
}
