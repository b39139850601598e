//! A command with a budget, what [`super::run`] takes, and how it ended.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use super::capture::{Captured, Keep};
use super::spec::{EnvOp, Spec, spec_methods};
use super::{DEFAULT_CAP, DEFAULT_GRACE, Error, MAX_DURATION};

/// The standard input of a [`Command`].
#[derive(Clone, PartialEq, Eq, Default)]
pub(super) enum Input {
    #[default]
    Null,
    Bytes(Vec<u8>),
}

/// A command to run with a budget: what [`run`] and [`run_with_cancel`] take.
///
/// [`run`]: super::run
/// [`run_with_cancel`]: super::run_with_cancel
///
/// ```no_run
/// use std::time::Duration;
/// use herd_core::subprocess::{self, Command, Keep};
///
/// let cmd = Command::new("sh", Duration::from_secs(600))
///     .args(["-c", "cargo test"])
///     .cwd("/tmp/checkout")
///     .env_remove_prefix("PI_SUBAGENT_")
///     .stdout_cap(4000, Keep::Tail)
///     .stderr_cap(4000, Keep::Tail);
/// let out = subprocess::run(&cmd)?;
/// if out.timed_out { /* the check ran out of time */ }
/// # Ok::<(), subprocess::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Command {
    pub(super) spec: Spec,
    pub(super) stdin: Input,
    pub(super) budget: Duration,
    pub(super) grace: Duration,
    pub(super) stdout: (usize, Keep),
    pub(super) stderr: (usize, Keep),
}

impl Command {
    /// Starts a command that may run for at most `budget` before its group is terminated.
    ///
    /// A program without a `/` is looked up on the `PATH` the child gets.
    #[must_use]
    pub fn new(program: impl Into<OsString>, budget: Duration) -> Command {
        Command {
            spec: Spec::new(program.into()),
            stdin: Input::Null,
            budget,
            grace: DEFAULT_GRACE,
            stdout: (DEFAULT_CAP, Keep::Head),
            stderr: (DEFAULT_CAP, Keep::Head),
        }
    }

    spec_methods!();

    /// Connects standard input to `/dev/null` (the default).
    #[must_use]
    pub fn stdin_null(mut self) -> Command {
        self.stdin = Input::Null;
        self
    }

    /// Feeds `bytes` to standard input, then closes it.
    ///
    /// A child that exits without reading everything is fine: the rest is dropped.
    #[must_use]
    pub fn stdin_bytes(mut self, bytes: impl Into<Vec<u8>>) -> Command {
        self.stdin = Input::Bytes(bytes.into());
        self
    }

    /// Sets the time between SIGTERM and SIGKILL (default [`DEFAULT_GRACE`]).
    #[must_use]
    pub fn grace(mut self, grace: Duration) -> Command {
        self.grace = grace;
        self
    }

    /// Keeps at most `cap` bytes of stdout, the first or the last ones (default 1 MiB, head).
    #[must_use]
    pub fn stdout_cap(mut self, cap: usize, keep: Keep) -> Command {
        self.stdout = (cap, keep);
        self
    }

    /// Keeps at most `cap` bytes of stderr, the first or the last ones (default 1 MiB, head).
    #[must_use]
    pub fn stderr_cap(mut self, cap: usize, keep: Keep) -> Command {
        self.stderr = (cap, keep);
        self
    }

    /// Returns the time budget.
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// Returns the grace period between SIGTERM and SIGKILL.
    pub fn grace_period(&self) -> Duration {
        self.grace
    }

    pub(super) fn validate(&self) -> Result<(), Error> {
        self.spec.validate()?;
        check_duration("budget", self.budget)?;
        check_duration("grace period", self.grace)
    }
}

impl fmt::Debug for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stdin = match &self.stdin {
            Input::Null => "null".to_string(),
            Input::Bytes(bytes) => format!("{} bytes", bytes.len()),
        };
        f.debug_struct("Command")
            .field("program", &self.spec.program)
            .field("args", &self.spec.args)
            .field("cwd", &self.spec.cwd)
            .field("env", &self.spec.env)
            .field("stdin", &stdin)
            .field("budget", &self.budget)
            .field("grace", &self.grace)
            .field("stdout", &self.stdout)
            .field("stderr", &self.stderr)
            .finish()
    }
}

pub(super) fn check_duration(what: &str, value: Duration) -> Result<(), Error> {
    if value > MAX_DURATION {
        return Err(Error::Invalid {
            reason: format!("the {what} of {value:?} is longer than a year"),
        });
    }
    Ok(())
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// The exit code, when the child exited on its own.
    pub code: Option<i32>,
    /// The signal that ended the child, when one did.
    pub signal: Option<i32>,
    /// Whether the budget ran out and the group was terminated.
    pub timed_out: bool,
    /// Whether a cancel arrived and the group was terminated
    /// ([`run_with_cancel`](super::run_with_cancel)).
    pub cancelled: bool,
    /// The time from the start of the child to its exit.
    pub elapsed: Duration,
    pub stdout: Captured,
    pub stderr: Captured,
}

impl Output {
    /// Returns whether the child exited with code 0 in time and was not cancelled.
    pub fn success(&self) -> bool {
        self.code == Some(0) && !self.timed_out && !self.cancelled
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;
    use std::time::Duration;

    use super::*;
    use crate::ErrorCode;
    use crate::subprocess::spec::resolve_env;

    fn os(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    #[test]
    fn env_ops_apply_in_order_to_the_inherited_environment() {
        let cmd = Command::new("true", Duration::from_secs(1))
            .env_remove_prefix("PI_SUBAGENT_")
            .env_remove("SECRET")
            .env("PI_SUBAGENT_ID", "set-after-the-filter");
        let base = os(&[
            ("PI_SUBAGENT_ACCEPT_FILE", "/spec"),
            ("PI_SUBAGENT_ID", "inherited"),
            ("PI_SUBAGENTS", "not-a-prefix-match"),
            ("PI_OTHER", "kept"),
            ("SECRET", "x"),
            ("HOME", "/home/u"),
        ]);
        let env = resolve_env(&cmd.spec.env, base);
        assert_eq!(
            env,
            os(&[
                ("HOME", "/home/u"),
                ("PI_OTHER", "kept"),
                ("PI_SUBAGENTS", "not-a-prefix-match"),
                ("PI_SUBAGENT_ID", "set-after-the-filter"),
            ])
            .into_iter()
            .collect()
        );
    }

    #[test]
    fn env_clear_keeps_only_what_comes_after() {
        let cmd = Command::new("true", Duration::from_secs(1))
            .env("BEFORE", "1")
            .env_clear()
            .env("AFTER", "2");
        let env = resolve_env(&cmd.spec.env, os(&[("HOME", "/h")]));
        assert_eq!(env, os(&[("AFTER", "2")]).into_iter().collect());
    }

    #[test]
    fn invalid_commands_are_refused_with_the_reason() {
        let budget = Duration::from_secs(1);
        let check = |cmd: Command, expect: &str| {
            let err = cmd.validate().unwrap_err();
            assert_eq!(err.code(), ErrorCode::InvalidRequest);
            assert!(err.to_string().contains(expect), "{err}");
        };
        check(Command::new("", budget), "program name is empty");
        check(Command::new("a\0b", budget), "program name contains a NUL");
        check(
            Command::new("sh", budget).args(["ok", "b\0d"]),
            "argument 2",
        );
        check(Command::new("sh", budget).env("A=B", "v"), "\"A=B\"");
        check(
            Command::new("sh", budget).env("A", "v\0"),
            "value of environment variable A",
        );
        check(Command::new("sh", MAX_DURATION * 2), "budget");
        check(
            Command::new("sh", budget).grace(MAX_DURATION * 2),
            "grace period",
        );
    }
}
