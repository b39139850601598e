//! `herd-accept check --json`: one run of the check.

use herd_core::exit;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How one run of the check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CheckOutcome {
    /// Exit 0.
    Passed,
    /// A non-zero exit.
    Failed,
    /// The timeout ran out; the group was terminated.
    TimedOut,
    /// A signal ended the shell.
    Signalled,
    /// The directory to run in does not exist.
    DirectoryMissing,
    /// The shell could not be started.
    CouldNotStart,
    /// herd-accept was told to stop; the group was terminated.
    Cancelled,
}

impl CheckOutcome {
    /// Whether the check gave an answer (passed or failed).
    pub fn answered(self) -> bool {
        matches!(self, CheckOutcome::Passed | CheckOutcome::Failed)
    }

    /// `herd-accept check`'s exit code: 0 passed, 1 failed, 4 no answer.
    pub fn exit_code(self) -> i32 {
        match self {
            CheckOutcome::Passed => exit::SUCCESS,
            CheckOutcome::Failed => exit::NEGATIVE,
            _ => exit::NO_ANSWER,
        }
    }
}

/// The result of one run of the check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CheckRun {
    pub outcome: CheckOutcome,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub cancelled: bool,
    pub duration_ms: u64,
    /// The last 4,000 characters of the joined output.
    pub output: String,
    /// Whether output before those characters was left out.
    pub output_truncated: bool,
    /// How many bytes the check printed in all.
    pub output_bytes: u64,
    /// Why the check gave no answer, when it could not start or its directory is missing.
    pub error: Option<String>,
}

impl CheckRun {
    /// A run that never started: `outcome` says why, `error` in words.
    pub fn not_started(outcome: CheckOutcome, error: String) -> CheckRun {
        CheckRun {
            outcome,
            exit_code: None,
            signal: None,
            timed_out: false,
            cancelled: false,
            duration_ms: 0,
            output: String::new(),
            output_truncated: false,
            output_bytes: 0,
            error: Some(error),
        }
    }

    /// A one-line summary for people: `check passed (exit 0) in 12 ms`.
    pub fn summary(&self, timeout_sec: u64) -> String {
        let what = match self.outcome {
            CheckOutcome::Passed => "check passed (exit 0)".to_owned(),
            CheckOutcome::Failed => format!("check failed (exit {})", self.exit_code.unwrap_or(-1)),
            CheckOutcome::TimedOut => format!("check timed out after {timeout_sec}s"),
            CheckOutcome::Signalled => {
                format!("check killed by signal {}", self.signal.unwrap_or(0))
            }
            CheckOutcome::DirectoryMissing => "check not run: directory missing".to_owned(),
            CheckOutcome::CouldNotStart => "check could not start".to_owned(),
            CheckOutcome::Cancelled => "check cancelled".to_owned(),
        };
        match &self.error {
            Some(error) => format!("{what}: {error}"),
            None => format!("{what} in {} ms", self.duration_ms),
        }
    }
}

/// What `herd-accept check` prints: one run of the check. Exit 0 passed, 1 failed, 4 no answer.
///
/// Its schema keeps the name `CheckRun`, which the child extension imports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "CheckRun")]
pub struct AcceptCheck {
    #[serde(flatten)]
    pub run: CheckRun,
    /// The version of this document's shape; unlike most documents, this one prints it.
    #[schemars(range(min = 1))]
    pub format_version: u64,
    pub passed: bool,
    /// The SHA-256 of the command, which names it without repeating it.
    #[schemars(pattern("^[0-9a-f]{64}$"))]
    pub command_sha256: String,
    pub cwd: String,
    #[schemars(range(min = 1))]
    pub timeout_sec: u64,
}

impl AcceptCheck {
    /// The version of this document's shape, printed as `format_version`.
    pub const FORMAT_VERSION: u64 = 1;

    /// The document of `run`, of the command named by `command_sha256`, run in `cwd`.
    pub fn new(run: CheckRun, command_sha256: String, cwd: String, timeout_sec: u64) -> Self {
        AcceptCheck {
            passed: run.outcome == CheckOutcome::Passed,
            run,
            format_version: AcceptCheck::FORMAT_VERSION,
            command_sha256,
            cwd,
            timeout_sec,
        }
    }
}
