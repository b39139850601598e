//! One run of an accept check: `sh -c <run>` in a directory, in its own process group, with no
//! `PI_SUBAGENT_*` variable, bounded in time and in what it may print.
//!
//! stdout and stderr are joined, in the order written, into one output, as a terminal would show
//! them: the shell runs `exec 2>&1; <run>`. The prefix shares the command's first line, so line
//! numbers in the shell's messages are the caller's, `$0` is `sh` and there are no positional
//! parameters, as with a plain `sh -c <run>`. A command the shell cannot even parse fails before
//! the prefix runs; its message then arrives on stderr, which is captured too and put first.

use std::path::Path;
use std::time::Duration;

use crossbeam_channel::Receiver;
use herd_core::error::chain;
use herd_core::exit;
use herd_core::subprocess::{self, Command, Keep};
use serde::{Deserialize, Serialize};

use crate::spec::AcceptSpec;
use crate::tail::{self, CAPTURE_BYTES, CHILD_TAIL_CHARS};

/// The grace between SIGTERM and SIGKILL when the check runs out of time.
pub const TIMEOUT_GRACE: Duration = Duration::from_secs(5);
/// The grace between SIGTERM and SIGKILL when herd-accept is told to stop.
pub const CANCEL_GRACE: Duration = Duration::from_secs(1);
/// The environment prefix a check never sees.
pub const SCRUBBED_PREFIX: &str = "PI_SUBAGENT_";

const SHELL: &str = "/bin/sh";
/// Joins stderr into stdout; one shell, no second exec, so a check costs what `sh -c` costs.
const JOIN_STREAMS: &str = "exec 2>&1; ";

/// How one run of the check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CheckRun {
    pub outcome: CheckOutcome,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub cancelled: bool,
    pub duration_ms: u64,
    /// The last 4,000 characters of the joined output (see [`crate::tail`]).
    pub output: String,
    /// Whether output before those characters was left out.
    pub output_truncated: bool,
    /// How many bytes the check printed in all.
    pub output_bytes: u64,
    /// Why the check gave no answer, when it could not start or its directory is missing.
    pub error: Option<String>,
}

impl CheckRun {
    fn failed_to_start(outcome: CheckOutcome, error: String) -> CheckRun {
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

/// Builds the command of one check run, for [`run_check`] and for benchmarks.
pub fn check_command(spec: &AcceptSpec, cwd: &Path) -> Command {
    let mut script = String::with_capacity(JOIN_STREAMS.len() + spec.run.len());
    script.push_str(JOIN_STREAMS);
    script.push_str(&spec.run);
    Command::new(SHELL, spec.timeout())
        .args(["-c", script.as_str()])
        .cwd(cwd)
        .env_remove_prefix(SCRUBBED_PREFIX)
        .grace(TIMEOUT_GRACE)
        .stdout_cap(CAPTURE_BYTES, Keep::Tail)
        // stderr is joined into stdout; this only catches what the outer shell says before that.
        .stderr_cap(CAPTURE_BYTES, Keep::Tail)
}

/// Runs the check once in `cwd`, stopping it when a message arrives on `cancel`.
///
/// Never fails: a check that cannot run is an outcome (`DirectoryMissing`, `CouldNotStart`),
/// because to the verdict that is an answer too.
pub fn run_check<T>(spec: &AcceptSpec, cwd: &Path, cancel: &Receiver<T>) -> CheckRun {
    if !cwd.is_dir() {
        return CheckRun::failed_to_start(
            CheckOutcome::DirectoryMissing,
            format!("{} is not an existing directory", cwd.display()),
        );
    }
    let cmd = check_command(spec, cwd);
    let out = match subprocess::run_with_cancel(&cmd, cancel, CANCEL_GRACE) {
        Ok(out) => out,
        Err(err @ subprocess::Error::Cwd { .. }) => {
            return CheckRun::failed_to_start(CheckOutcome::DirectoryMissing, chain(&err));
        }
        Err(err) => {
            return CheckRun::failed_to_start(CheckOutcome::CouldNotStart, chain(&err));
        }
    };
    // stderr holds anything only when the outer shell failed before joining the streams.
    let mut bytes = out.stderr.bytes;
    let mut head_cut = out.stderr.truncated;
    if !out.stdout.bytes.is_empty() {
        if bytes.is_empty() {
            head_cut = out.stdout.truncated;
        }
        bytes.extend_from_slice(&out.stdout.bytes);
    }
    let kept = tail::tail_chars(&bytes, head_cut, CHILD_TAIL_CHARS);
    let outcome = if out.cancelled {
        CheckOutcome::Cancelled
    } else if out.timed_out {
        CheckOutcome::TimedOut
    } else if out.signal.is_some() {
        CheckOutcome::Signalled
    } else if out.code == Some(0) {
        CheckOutcome::Passed
    } else {
        CheckOutcome::Failed
    };
    CheckRun {
        outcome,
        exit_code: out.code,
        signal: out.signal,
        timed_out: out.timed_out,
        cancelled: out.cancelled,
        duration_ms: u64::try_from(out.elapsed.as_millis()).unwrap_or(u64::MAX),
        output: kept.text,
        output_truncated: kept.truncated,
        output_bytes: out.stdout.total + out.stderr.total,
        error: None,
    }
}
