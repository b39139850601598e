//! Running a herd binary from a test: one bounded run, its exit code and both outputs.
//!
//! The run is `herd_core::subprocess`'s, like every child herd starts: its own process group, a
//! deadline after which the group gets SIGTERM and then SIGKILL, and capped output. A test builds
//! the command (arguments, environment, directory, stdin) and hands it to [`run`]; a run that
//! does not end within its budget fails the test with what it printed so far.
//!
//! ```no_run
//! let run = herd_e2e::cli::run(&herd_e2e::cli::command(herd_e2e::bin("herd-docs")).arg("--help"));
//! assert_eq!(run.code, 0, "{run}");
//! ```

use std::ffi::OsString;
use std::fmt;
use std::time::Duration;

use herd_core::subprocess::{self, Command, Keep};
use serde_json::Value;

/// The time one run may take: generous, so a run that hangs fails its test and not the suite.
pub const RUN_BUDGET: Duration = Duration::from_secs(120);

/// Bytes kept of stdout: a whole `--json` document of a long test.
const STDOUT_CAP: usize = 16 * 1024 * 1024;

/// A command running `program` for at most [`RUN_BUDGET`], keeping up to 16 MiB of stdout.
pub fn command(program: impl Into<OsString>) -> Command {
    within(program, RUN_BUDGET)
}

/// A command running `program` for at most `budget`, keeping up to 16 MiB of stdout.
pub fn within(program: impl Into<OsString>, budget: Duration) -> Command {
    Command::new(program, budget).stdout_cap(STDOUT_CAP, Keep::Head)
}

/// What a run printed and how it ended.
#[derive(Debug)]
pub struct Run {
    /// The exit code; `-1` when a signal ended the child.
    pub code: i32,
    /// The signal that ended the child, when one did.
    pub signal: Option<i32>,
    /// Standard output, lossily decoded.
    pub stdout: String,
    /// Standard error, lossily decoded.
    pub stderr: String,
    /// Whether the budget ran out and the child's group was terminated ([`try_run`] only:
    /// [`run`] fails the test instead).
    pub timed_out: bool,
}

impl Run {
    /// Whether the child exited 0 within its budget.
    pub fn success(&self) -> bool {
        self.code == 0 && self.signal.is_none() && !self.timed_out
    }

    /// Standard output as one JSON document.
    ///
    /// # Panics
    ///
    /// When it is not one, with the whole run.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|err| panic!("stdout is not one JSON document ({err}):\n{self}"))
    }

    /// Decodes the one JSON document on stdout as the herd document `T`.
    ///
    /// # Panics
    ///
    /// When stdout is not one `T`, with what the command printed.
    pub fn doc<T: serde::de::DeserializeOwned>(&self) -> T {
        serde_json::from_str(&self.stdout).unwrap_or_else(|err| {
            panic!(
                "stdout is not one {} ({err}):\n{self}",
                std::any::type_name::<T>()
            )
        })
    }

    /// Standard output then standard error, as one text.
    pub fn text(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

/// Renders the run as stdout, a separator, stderr and the exit status, for assertion messages.
impl fmt::Display for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, text) in [&self.stdout, &self.stderr].into_iter().enumerate() {
            if i == 1 {
                writeln!(f, "------- stderr -------")?;
            }
            write!(f, "{text}")?;
            if !text.is_empty() && !text.ends_with('\n') {
                writeln!(f)?;
            }
        }
        match self.signal {
            Some(signal) => write!(f, "[killed by signal {signal}]")?,
            None => write!(f, "[exit status: {}]", self.code)?,
        }
        if self.timed_out {
            write!(f, " [timed out]")?;
        }
        Ok(())
    }
}

/// Runs `cmd` until it exits or its budget is spent.
///
/// # Panics
///
/// When the program cannot be started, or when the budget ran out (the child's group is then
/// already terminated), with what it printed.
pub fn run(cmd: &Command) -> Run {
    let run = try_run(cmd);
    assert!(
        !run.timed_out,
        "{} ran out of its budget of {:?}:\n{run}",
        cmd.program().to_string_lossy(),
        cmd.budget()
    );
    run
}

/// Like [`run`], for a test that lets a run reach its budget (a `--forever` follower, a run
/// it expects to be stopped): the child's group is terminated then, and the run says so.
///
/// # Panics
///
/// When the program cannot be started.
pub fn try_run(cmd: &Command) -> Run {
    let program = cmd.program().to_string_lossy().into_owned();
    let out = subprocess::run(cmd).unwrap_or_else(|err| panic!("cannot run {program}: {err}"));
    Run {
        code: out.code.unwrap_or(-1),
        signal: out.signal,
        stdout: out.stdout.text().into_owned(),
        stderr: out.stderr.text().into_owned(),
        timed_out: out.timed_out,
    }
}
