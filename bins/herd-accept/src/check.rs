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

use herd_core::error::chain;
use herd_core::subprocess::{self, Cancel, Command, Keep};

use crate::spec::AcceptSpec;
use crate::tail::{self, CAPTURE_BYTES, CHILD_TAIL_CHARS};

use herd_protocol::accept::{CheckOutcome, CheckRun};

/// The grace between SIGTERM and SIGKILL when the check runs out of time.
pub const TIMEOUT_GRACE: Duration = Duration::from_secs(5);
/// The grace between SIGTERM and SIGKILL when herd-accept is told to stop.
pub const CANCEL_GRACE: Duration = Duration::from_secs(1);
/// The environment prefix a check never sees.
pub const SCRUBBED_PREFIX: &str = "PI_SUBAGENT_";

const SHELL: &str = "/bin/sh";
/// Joins stderr into stdout; one shell, no second exec, so a check costs what `sh -c` costs.
const JOIN_STREAMS: &str = "exec 2>&1; ";

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
pub fn run_check(spec: &AcceptSpec, cwd: &Path, cancel: &dyn Cancel) -> CheckRun {
    if !cwd.is_dir() {
        return CheckRun::not_started(
            CheckOutcome::DirectoryMissing,
            format!("{} is not an existing directory", cwd.display()),
        );
    }
    let cmd = check_command(spec, cwd);
    let out = match subprocess::run_with_cancel(&cmd, cancel, CANCEL_GRACE) {
        Ok(out) => out,
        Err(err @ subprocess::Error::Cwd { .. }) => {
            return CheckRun::not_started(CheckOutcome::DirectoryMissing, chain(&err));
        }
        Err(err) => {
            return CheckRun::not_started(CheckOutcome::CouldNotStart, chain(&err));
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
