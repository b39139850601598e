//! The one place that starts child processes: a time budget, a process group, TERM → grace →
//! KILL, and capped output.
//!
//! Every external call herd makes (git, tmux, herdr, the accept command) goes through [`run`] or
//! [`run_with_cancel`]; clippy's `disallowed-methods` keeps `std::process::Command` out of every
//! other module. The guarantees:
//!
//! - **Nothing waits without a deadline.** A [`Command`] cannot be built without a budget. When
//!   it runs out, the child's process group gets SIGTERM, then SIGKILL after the grace period
//!   (default [`DEFAULT_GRACE`]), and [`Output::timed_out`] says so.
//! - **The whole group goes.** The child leads a process group of its own. When the child
//!   exits on its own, whatever else is left in its group gets the same SIGTERM, grace period
//!   and SIGKILL, and [`run`] returns only once no member of the group is running. The child
//!   itself is not reaped until the group has been dealt with, so the group ID cannot be reused
//!   by an unrelated process while herd still signals it.
//! - **Nothing reads without a bound.** stdout and stderr are drained concurrently, each into a
//!   buffer that never holds more than its cap (default [`DEFAULT_CAP`]), keeping the head or the
//!   tail as asked; the total byte count and a `truncated` flag say what was dropped.
//! - **Filtered environments.** Variables can be removed by name, by prefix (every
//!   `PI_SUBAGENT_*`), or all at once, and set, in the order the builder calls say.
//!
//! # Limits
//!
//! A process that leaves the group (`setsid`, `setpgid`) is out of reach: it is neither signalled
//! nor waited for. If it still holds the child's stdout or stderr, [`run`] stops reading once the
//! group is gone and returns what it has; later output is lost. Without cgroups there is no
//! reliable way to follow such a process, and herd does not try.
//!
//! Members of the group other than the child are reparented when the child exits and are reaped
//! by whichever process adopts them, not by herd. A member that is dead but not yet reaped (a
//! zombie) counts as gone.
//!
//! # Other entry points
//!
//! - [`spawn_detached`] starts a child in a session of its own, with output appended to log
//!   files, and returns its PID without waiting: the caller supervises it through
//!   [`crate::identity`].
//! - [`termination_signals`] turns SIGTERM and SIGINT of the current process into a channel that
//!   [`run_with_cancel`] watches.
//! - [`sibling_binary`] is how one herd binary finds another.

use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, select};

use crate::ErrorCode;

/// The grace period between SIGTERM and SIGKILL unless the command says otherwise.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(5);

/// The cap of each captured stream unless the command says otherwise (DESIGN §6: 1 MiB).
pub const DEFAULT_CAP: usize = 1024 * 1024;

/// The longest budget or grace period a command accepts; anything longer is a mistake.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// The environment variable that overrides where [`sibling_binary`] looks.
pub const BIN_DIR_ENV: &str = "HERD_BIN_DIR";

/// How long [`run`] waits, after SIGKILL, for the group to vanish before it gives up.
///
/// SIGKILL cannot be caught, so this only matters for a process stuck in the kernel
/// (uninterruptible sleep, e.g. on a dead network filesystem).
const KILL_WAIT: Duration = Duration::from_secs(5);

/// The largest step of the poll for the rest of the group, whose deaths raise no event here.
const GROUP_POLL_MAX: Duration = Duration::from_millis(20);

/// The size of one read from a child's pipe.
const CHUNK: usize = 64 * 1024;

/// How much the final drain reads from a stream after the group is gone.
///
/// Everything a dead process wrote is already in the pipe (at most the pipe's capacity, 1 MiB by
/// default); the bound only stops a process that escaped the group from keeping us reading.
const FINAL_DRAIN_LIMIT: usize = 4 * 1024 * 1024;

/// The bound of one `/proc/<pid>/stat` read; the line is a few hundred bytes.
const STAT_READ_LIMIT: usize = 4096;

/// Which part of a stream to keep when it is longer than its cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Keep {
    /// The first bytes: right for answers parsed from the start (git, herdr replies).
    #[default]
    Head,
    /// The last bytes: right for logs and failing checks, where the end says what went wrong.
    Tail,
    /// No bytes: only how many of them equal the given byte ([`Captured::counted`]), for a
    /// listing that is counted as it streams and never held (the cap is not used).
    Count(u8),
}

/// The standard input of a [`Command`].
#[derive(Clone, PartialEq, Eq, Default)]
enum Input {
    #[default]
    Null,
    Bytes(Vec<u8>),
}

/// One change to the inherited environment, applied in the order the builder calls came.
#[derive(Debug, Clone, PartialEq, Eq)]
enum EnvOp {
    Set(OsString, OsString),
    Remove(OsString),
    RemovePrefix(OsString),
    Clear,
}

/// What every child has: a program, its arguments, a working directory and an environment.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Spec {
    program: OsString,
    args: Vec<OsString>,
    cwd: Option<PathBuf>,
    env: Vec<EnvOp>,
}

impl Spec {
    fn new(program: OsString) -> Spec {
        Spec {
            program,
            args: Vec::new(),
            cwd: None,
            env: Vec::new(),
        }
    }

    fn program_name(&self) -> String {
        self.program.to_string_lossy().into_owned()
    }

    /// Rejects what the kernel would reject, with a message that names the culprit.
    fn validate(&self) -> Result<(), Error> {
        let invalid = |reason: String| Err(Error::Invalid { reason });
        if self.program.is_empty() {
            return invalid("the program name is empty".into());
        }
        if has_nul(&self.program) {
            return invalid("the program name contains a NUL byte".into());
        }
        if let Some(idx) = self.args.iter().position(|arg| has_nul(arg)) {
            return invalid(format!("argument {} contains a NUL byte", idx + 1));
        }
        if let Some(cwd) = &self.cwd {
            if has_nul(cwd.as_os_str()) {
                return invalid("the working directory contains a NUL byte".into());
            }
        }
        for op in &self.env {
            let (name, value) = match op {
                EnvOp::Set(name, value) => (name, Some(value)),
                EnvOp::Remove(name) => (name, None),
                EnvOp::RemovePrefix(_) | EnvOp::Clear => continue,
            };
            if name.is_empty() || has_nul(name) || name.as_bytes().contains(&b'=') {
                return invalid(format!(
                    "environment variable name {:?} is empty or contains `=` or NUL",
                    name
                ));
            }
            if value.is_some_and(|value| has_nul(value)) {
                return invalid(format!(
                    "the value of environment variable {} contains a NUL byte",
                    name.to_string_lossy()
                ));
            }
        }
        Ok(())
    }

    /// Fails with [`Error::Cwd`] unless the working directory, if any, is a directory.
    fn check_cwd(&self) -> Result<(), Error> {
        let Some(cwd) = &self.cwd else {
            return Ok(());
        };
        match std::fs::metadata(cwd) {
            Ok(meta) if meta.is_dir() => Ok(()),
            Ok(_) => Err(Error::Cwd {
                path: cwd.clone(),
                source: io::Error::from(io::ErrorKind::NotADirectory),
            }),
            Err(source) => Err(Error::Cwd {
                path: cwd.clone(),
                source,
            }),
        }
    }

    /// Builds the `std` command: program, arguments, working directory and environment.
    #[expect(
        clippy::disallowed_methods,
        reason = "this module is the one place allowed to build a std::process::Command"
    )]
    fn to_std(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(&self.program);
        cmd.args(&self.args);
        if let Some(cwd) = &self.cwd {
            cmd.current_dir(cwd);
        }
        if !self.env.is_empty() {
            // The whole environment is handed over explicitly, so a prefix can be matched
            // against the inherited names and the result does not depend on how `std` merges.
            cmd.env_clear();
            cmd.envs(resolve_env(&self.env, std::env::vars_os()));
        }
        cmd
    }

    /// Turns a failed spawn into a typed error, telling a missing program from a missing cwd.
    fn spawn_error(&self, source: io::Error) -> Error {
        if source.kind() == io::ErrorKind::NotFound {
            // chdir and exec both fail with ENOENT; the directory was checked before the spawn,
            // so look again in case it vanished since.
            if let Err(err) = self.check_cwd() {
                return err;
            }
            return Error::ProgramNotFound {
                program: self.program_name(),
                source,
            };
        }
        if source.kind() == io::ErrorKind::NotADirectory && self.cwd.is_some() {
            if let Err(err) = self.check_cwd() {
                return err;
            }
        }
        Error::Spawn {
            program: self.program_name(),
            source,
        }
    }
}

fn has_nul(value: &OsStr) -> bool {
    value.as_bytes().contains(&0)
}

/// Applies `ops` in order to `base` and returns the environment the child gets.
fn resolve_env(
    ops: &[EnvOp],
    base: impl IntoIterator<Item = (OsString, OsString)>,
) -> BTreeMap<OsString, OsString> {
    let mut env: BTreeMap<OsString, OsString> = base.into_iter().collect();
    for op in ops {
        match op {
            EnvOp::Set(name, value) => {
                env.insert(name.clone(), value.clone());
            }
            EnvOp::Remove(name) => {
                env.remove(name);
            }
            EnvOp::RemovePrefix(prefix) => {
                env.retain(|name, _| !name.as_bytes().starts_with(prefix.as_bytes()));
            }
            EnvOp::Clear => env.clear(),
        }
    }
    env
}

/// Generates the builder methods shared by [`Command`] and [`Detached`].
macro_rules! spec_methods {
    () => {
        /// Adds one argument.
        #[must_use]
        pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
            self.spec.args.push(arg.into());
            self
        }

        /// Adds arguments in order.
        #[must_use]
        pub fn args<I>(mut self, args: I) -> Self
        where
            I: IntoIterator,
            I::Item: Into<OsString>,
        {
            self.spec.args.extend(args.into_iter().map(Into::into));
            self
        }

        /// Sets the working directory; it must exist when the child is started.
        #[must_use]
        pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
            self.spec.cwd = Some(dir.into());
            self
        }

        /// Sets a variable in the child's environment.
        ///
        /// Environment changes apply in the order they are made, starting from the environment
        /// of the current process.
        #[must_use]
        pub fn env(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> Self {
            self.spec.env.push(EnvOp::Set(name.into(), value.into()));
            self
        }

        /// Removes a variable from the child's environment.
        #[must_use]
        pub fn env_remove(mut self, name: impl Into<OsString>) -> Self {
            self.spec.env.push(EnvOp::Remove(name.into()));
            self
        }

        /// Removes every variable whose name starts with `prefix`, such as `PI_SUBAGENT_`.
        #[must_use]
        pub fn env_remove_prefix(mut self, prefix: impl Into<OsString>) -> Self {
            self.spec.env.push(EnvOp::RemovePrefix(prefix.into()));
            self
        }

        /// Removes every variable; only those set afterwards reach the child.
        #[must_use]
        pub fn env_clear(mut self) -> Self {
            self.spec.env.push(EnvOp::Clear);
            self
        }

        /// Returns the program as given.
        pub fn program(&self) -> &OsStr {
            &self.spec.program
        }
    };
}

/// A command to run with a budget: what [`run`] and [`run_with_cancel`] take.
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
    spec: Spec,
    stdin: Input,
    budget: Duration,
    grace: Duration,
    stdout: (usize, Keep),
    stderr: (usize, Keep),
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

    fn validate(&self) -> Result<(), Error> {
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

fn check_duration(what: &str, value: Duration) -> Result<(), Error> {
    if value > MAX_DURATION {
        return Err(Error::Invalid {
            reason: format!("the {what} of {value:?} is longer than a year"),
        });
    }
    Ok(())
}

/// What a child printed on one stream, bounded by its cap.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Captured {
    /// The kept bytes: at most the cap, the head or the tail of the stream.
    pub bytes: Vec<u8>,
    /// How many bytes the child wrote in total (as far as they were read).
    pub total: u64,
    /// Whether bytes were dropped because the stream was longer than its cap (never for
    /// [`Keep::Count`], which keeps none by design).
    pub truncated: bool,
    /// With [`Keep::Count`], how many bytes of the stream equal the counted one; else 0.
    pub counted: u64,
}

impl Captured {
    /// Returns the kept bytes as text, with invalid UTF-8 replaced (a tail may start mid-char).
    pub fn text(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.bytes)
    }
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
    /// Whether a cancel arrived and the group was terminated ([`run_with_cancel`]).
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

/// Why a child could not be started or supervised.
///
/// A child that starts and then fails, times out or is cancelled is not an error: that is an
/// [`Output`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid command: {reason}")]
    Invalid { reason: String },
    #[error("program `{program}` not found")]
    ProgramNotFound {
        program: String,
        #[source]
        source: io::Error,
    },
    #[error("working directory {} is not an existing directory", path.display())]
    Cwd {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot start `{program}`")]
    Spawn {
        program: String,
        #[source]
        source: io::Error,
    },
    #[error("cannot open {}", path.display())]
    File {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot supervise `{program}`")]
    Supervise {
        program: String,
        #[source]
        source: io::Error,
    },
    #[error("`{program}` (pid {pid}) did not exit after SIGKILL")]
    Unkillable { program: String, pid: u32 },
    #[error("cannot install handlers for SIGTERM and SIGINT")]
    Signals {
        #[source]
        source: io::Error,
    },
}

impl Error {
    /// Returns the error kind a binary reports.
    ///
    /// A missing program is `unavailable` (a tool herd needs is not installed, exit 4); a
    /// caller that ran a program the user named may report it differently. A missing working
    /// directory is `not_found`.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Invalid { .. } => ErrorCode::InvalidRequest,
            Error::Cwd { .. } => ErrorCode::NotFound,
            Error::ProgramNotFound { .. } | Error::Spawn { .. } | Error::File { .. } => {
                ErrorCode::Unavailable
            }
            Error::Unkillable { .. } => ErrorCode::Uncertain,
            Error::Supervise { .. } | Error::Signals { .. } => ErrorCode::Internal,
        }
    }
}

impl From<Error> for crate::Error {
    fn from(err: Error) -> crate::Error {
        crate::error::report(err.code(), &err)
    }
}

/// Runs `cmd` to completion, its budget, or the end of its grace period, and returns how it
/// ended.
///
/// Returns once the child has exited and been reaped and no other member of its process group
/// is running (see the module docs for processes that leave the group). That is at most the
/// budget plus the grace period plus a short settling time, unless a process is stuck in the
/// kernel, which is [`Error::Unkillable`].
pub fn run(cmd: &Command) -> Result<Output, Error> {
    run_inner(cmd, crossbeam_channel::never::<()>(), Duration::ZERO)
}

/// Runs `cmd` like [`run`], and also stops it when a message arrives on `cancel`.
///
/// On a message the group gets SIGTERM, then SIGKILL after `cancel_grace` (or the command's
/// own grace, if that runs out first), and [`Output::cancelled`] is set. The message is
/// consumed. A disconnected channel never cancels. A cancel that arrives while the group is
/// already being terminated for its budget shortens the wait to `cancel_grace`.
pub fn run_with_cancel<T>(
    cmd: &Command,
    cancel: &Receiver<T>,
    cancel_grace: Duration,
) -> Result<Output, Error> {
    check_duration("cancel grace period", cancel_grace)?;
    run_inner(cmd, cancel.clone(), cancel_grace)
}

fn run_inner<T>(
    cmd: &Command,
    cancel: Receiver<T>,
    cancel_grace: Duration,
) -> Result<Output, Error> {
    cmd.validate()?;
    cmd.spec.check_cwd()?;
    let program = cmd.spec.program_name();
    let supervise = |source: io::Error| Error::Supervise {
        program: program.clone(),
        source,
    };

    // Created before the spawn, close-on-exec, so the child never holds it.
    let (wake_rx, wake_tx) = pipe().map_err(supervise)?;

    let mut std_cmd = cmd.spec.to_std();
    std_cmd.process_group(0);
    std_cmd.stdin(match cmd.stdin {
        Input::Null => Stdio::null(),
        Input::Bytes(_) => Stdio::piped(),
    });
    std_cmd.stdout(Stdio::piped());
    std_cmd.stderr(Stdio::piped());
    // The clock starts before the spawn: the child may run (and a busy machine may keep this
    // thread off its core) before the spawn returns, and the budget covers the start too.
    let started = Instant::now();
    let mut child = spawn(&mut std_cmd).map_err(|err| cmd.spec.spawn_error(err))?;
    let mut group = Group::new(&child);

    let pump = Pump::new(&mut child, cmd, wake_rx).map_err(supervise)?;
    let io_thread = thread::Builder::new()
        .name("herd-subprocess-io".into())
        .spawn(move || pump.run())
        .map_err(supervise)?;
    let (exit_tx, exit_rx) = crossbeam_channel::bounded(1);
    let leader = group.pgid;
    thread::Builder::new()
        .name("herd-subprocess-wait".into())
        .spawn(move || {
            // The receiver is gone only when `run` gave up on an unkillable child.
            let _ = exit_tx.send(wait_exited(leader));
        })
        .map_err(supervise)?;

    let mut watch = Watch {
        pgid: group.pgid,
        exited: exit_rx,
        exited_at: None,
        cancel,
        cancel_grace,
        cancelled: false,
    };
    let deadline = started + cmd.budget;
    let mut timed_out = false;
    if !watch.wait_leader(deadline).map_err(supervise)? {
        let grace = if watch.cancelled {
            cancel_grace.min(cmd.grace)
        } else {
            timed_out = true;
            cmd.grace
        };
        watch.stop_group(grace).map_err(supervise)?;
    } else if group_has_live_members(watch.pgid) {
        // The child is done; anything it left running in its group goes with it.
        watch.stop_group(cmd.grace).map_err(supervise)?;
    }
    let Some(exited_at) = watch.exited_at else {
        return Err(Error::Unkillable {
            program,
            pid: child.id(),
        });
    };

    // The group is gone, so everything it wrote is in the pipes: the pump reads what is left
    // and returns without waiting for writers that escaped the group.
    drop(wake_tx);
    let captured = io_thread.join();
    // Reaping frees the PID (and with it the group ID): from here on the group is not signalled.
    group.disarm();
    let status = child.wait().map_err(supervise)?;
    let (stdout, stderr) =
        captured.map_err(|_| supervise(io::Error::other("output reader panicked")))?;
    Ok(Output {
        code: status.code(),
        signal: status.signal(),
        timed_out,
        cancelled: watch.cancelled,
        elapsed: exited_at.saturating_duration_since(started),
        stdout,
        stderr,
    })
}

#[expect(
    clippy::disallowed_methods,
    reason = "this module is the one place allowed to spawn"
)]
fn spawn(cmd: &mut std::process::Command) -> io::Result<Child> {
    // A script written a moment ago can still be open for writing in a child that another thread
    // forked before its exec closed the descriptor; exec then fails with ETXTBSY until that
    // exec happens. It is transient, so a few short retries settle it.
    let mut retries = 0;
    loop {
        match cmd.spawn() {
            Err(err) if err.raw_os_error() == Some(libc::ETXTBSY) && retries < ETXTBSY_RETRIES => {
                retries += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

/// How often a spawn that fails with ETXTBSY is tried again (10 ms apart).
const ETXTBSY_RETRIES: u32 = 20;

/// The child's process group; dropping it unreaped kills the group, so an early return or a
/// panic in [`run`] leaves nothing running.
struct Group {
    pgid: libc::pid_t,
    armed: bool,
}

impl Group {
    fn new(child: &Child) -> Group {
        Group {
            pgid: pid_t(child.id()),
            armed: true,
        }
    }

    fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if self.armed {
            signal_group(self.pgid, libc::SIGKILL);
        }
    }
}

fn pid_t(pid: u32) -> libc::pid_t {
    // PIDs are below 2^22 on Linux (pid_max); the conversion cannot fail for a real PID.
    libc::pid_t::try_from(pid).unwrap_or(libc::pid_t::MAX)
}

/// Sends `signal` to every member of the group; a group that is already empty is fine.
fn signal_group(pgid: libc::pid_t, signal: libc::c_int) {
    // SAFETY: kill has no memory effects; the group ID is pinned by the unreaped leader.
    unsafe {
        libc::kill(-pgid, signal);
    }
}

/// Blocks until the process `pid` (our child) has exited, without reaping it.
///
/// Leaving it a zombie keeps its PID, and with it the group ID, from being reused while the rest
/// of the group is still signalled.
fn wait_exited(pid: libc::pid_t) -> io::Result<()> {
    loop {
        // SAFETY: siginfo_t is plain data and zero is a valid bit pattern for it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid, writable siginfo_t.
        let res = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if res == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// The supervision state of one run: the leader's exit and the cancel channel.
struct Watch<T> {
    pgid: libc::pid_t,
    exited: Receiver<io::Result<()>>,
    exited_at: Option<Instant>,
    cancel: Receiver<T>,
    cancel_grace: Duration,
    cancelled: bool,
}

impl<T> Watch<T> {
    /// Waits until the leader exits, a cancel arrives, or `until`; returns whether it exited.
    fn wait_leader(&mut self, until: Instant) -> io::Result<bool> {
        if self.exited_at.is_some() {
            return Ok(true);
        }
        loop {
            let left = until.saturating_duration_since(Instant::now());
            select! {
                recv(self.exited) -> res => {
                    self.exited_at = Some(Instant::now());
                    // A closed channel means the waiter thread died, which it cannot do
                    // without sending; report it rather than trust it.
                    res.unwrap_or_else(|_| Err(io::Error::other("exit waiter vanished")))?;
                    return Ok(true);
                }
                recv(self.cancel) -> msg => match msg {
                    Ok(_) => {
                        self.cancelled = true;
                        return Ok(false);
                    }
                    Err(_) => self.cancel = crossbeam_channel::never(),
                },
                default(left) => return Ok(false),
            }
        }
    }

    /// Sends SIGTERM to the group, waits up to `grace` for the leader to exit and the rest of
    /// the group to die, then sends SIGKILL and waits up to [`KILL_WAIT`].
    fn stop_group(&mut self, grace: Duration) -> io::Result<()> {
        signal_group(self.pgid, libc::SIGTERM);
        // A stopped process would only see SIGTERM once continued; continue it now so it can
        // shut down cleanly within the grace period rather than be killed after it.
        signal_group(self.pgid, libc::SIGCONT);
        if self.wait_gone(Instant::now() + grace, true)? {
            return Ok(());
        }
        signal_group(self.pgid, libc::SIGKILL);
        self.wait_gone(Instant::now() + KILL_WAIT, false)?;
        Ok(())
    }

    /// Waits until the leader has exited and no other member of the group runs, or `until`.
    ///
    /// While `cancellable`, a cancel pulls `until` in to the cancel grace period.
    fn wait_gone(&mut self, mut until: Instant, cancellable: bool) -> io::Result<bool> {
        while !self.wait_leader(until)? {
            if cancellable && self.cancelled {
                // A cancel may have arrived while the group was being terminated for its budget.
                until = until.min(Instant::now() + self.cancel_grace);
            }
            if Instant::now() >= until {
                return Ok(false);
            }
        }
        let mut step = Duration::from_millis(1);
        loop {
            if !group_has_live_members(self.pgid) {
                return Ok(true);
            }
            let now = Instant::now();
            if now >= until {
                return Ok(false);
            }
            let nap = step.min(until - now);
            select! {
                recv(self.cancel) -> msg => match msg {
                    Ok(_) => {
                        self.cancelled = true;
                        if cancellable {
                            until = until.min(Instant::now() + self.cancel_grace);
                        }
                    }
                    Err(_) => self.cancel = crossbeam_channel::never(),
                },
                default(nap) => {}
            }
            step = (step * 2).min(GROUP_POLL_MAX);
        }
    }
}

/// Returns whether any process of group `pgid`, other than its leader, is running.
///
/// The leader is left out because [`run`] keeps it unreaped on purpose; zombies are left out
/// because they are dead and only wait for whoever adopted them. Each PID is asked for its group
/// with `getpgid`, which is far cheaper than reading its `stat`; only members are read. If
/// `/proc` cannot be listed, the answer is yes, so the caller falls back to its deadlines.
fn group_has_live_members(pgid: libc::pid_t) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return true;
    };
    let mut buf = [0u8; STAT_READ_LIMIT];
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = std::str::from_utf8(name.as_bytes())
            .ok()
            .and_then(|s| s.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        // SAFETY: getpgid only reads kernel state; a PID that vanished answers -1.
        if pid == pgid || unsafe { libc::getpgid(pid) } != pgid {
            continue;
        }
        // Between the two reads the process may have died or, in theory, left the group; the
        // stat line is the fresher answer.
        if let Some((state, group)) = read_state_and_group(pid, &mut buf) {
            if group == pgid && !matches!(state, b'Z' | b'X' | b'x') {
                return true;
            }
        }
    }
    false
}

/// Reads the state and the process group of `pid` from `/proc/<pid>/stat`.
fn read_state_and_group(pid: libc::pid_t, buf: &mut [u8]) -> Option<(u8, libc::pid_t)> {
    let mut file = File::open(format!("/proc/{pid}/stat")).ok()?;
    let mut len = 0;
    while len < buf.len() {
        match file.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    parse_state_and_group(&buf[..len])
}

/// Parses `pid (comm) state ppid pgrp ...`; the command name may contain anything, so the
/// fields are read after the last `)`.
fn parse_state_and_group(stat: &[u8]) -> Option<(u8, libc::pid_t)> {
    let close = stat.iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(&stat[close + 1..]).ok()?;
    let mut fields = rest.split_ascii_whitespace();
    let state = *fields.next()?.as_bytes().first()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, pgrp))
}

/// A buffer that holds at most `cap` bytes of a stream, its head or its tail.
struct Buffer {
    cap: usize,
    keep: Keep,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
    counted: u64,
}

impl Buffer {
    fn new((cap, keep): (usize, Keep)) -> Buffer {
        Buffer {
            cap,
            keep,
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
            counted: 0,
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        match self.keep {
            Keep::Head => {
                let room = self.cap - self.head.len();
                let take = &bytes[..bytes.len().min(room)];
                if !take.is_empty() {
                    // Exact reservations keep the allocation at the cap, not the next power of 2.
                    self.head.reserve_exact(take.len());
                    self.head.extend_from_slice(take);
                }
            }
            Keep::Tail => {
                let take = &bytes[bytes.len().saturating_sub(self.cap)..];
                let overflow = (self.tail.len() + take.len()).saturating_sub(self.cap);
                self.tail.drain(..overflow);
                self.tail.extend(take);
            }
            Keep::Count(byte) => {
                self.counted += bytes.iter().filter(|&&b| b == byte).count() as u64;
            }
        }
    }

    fn finish(self) -> Captured {
        let (bytes, truncated) = match self.keep {
            Keep::Head => {
                let truncated = self.total > self.head.len() as u64;
                (self.head, truncated)
            }
            Keep::Tail => {
                let truncated = self.total > self.tail.len() as u64;
                (Vec::from(self.tail), truncated)
            }
            Keep::Count(_) => (Vec::new(), false),
        };
        Captured {
            truncated,
            total: self.total,
            bytes,
            counted: self.counted,
        }
    }
}

/// Moves bytes between the child's pipes and the buffers, on a thread of its own.
///
/// All pipes are non-blocking and watched with one `poll`, so stdin is fed while stdout and
/// stderr are drained (a child that fills one pipe while we wait on another cannot deadlock
/// us). The pump ends when the wake pipe closes: it then reads what is left and returns, so
/// `run` decides when reading stops, not the child.
struct Pump {
    stdin: Option<(File, Vec<u8>, usize)>,
    streams: [(Option<File>, Buffer); 2],
    wake: OwnedFd,
}

impl Pump {
    fn new(child: &mut Child, cmd: &Command, wake: OwnedFd) -> io::Result<Pump> {
        let stdin = match (&cmd.stdin, child.stdin.take()) {
            (Input::Bytes(bytes), Some(pipe)) => Some((nonblocking(pipe)?, bytes.clone(), 0)),
            _ => None,
        };
        let stdout = child.stdout.take().map(nonblocking).transpose()?;
        let stderr = child.stderr.take().map(nonblocking).transpose()?;
        Ok(Pump {
            stdin,
            streams: [
                (stdout, Buffer::new(cmd.stdout)),
                (stderr, Buffer::new(cmd.stderr)),
            ],
            wake,
        })
    }

    fn run(mut self) -> (Captured, Captured) {
        block_sigpipe();
        let mut chunk = vec![0u8; CHUNK];
        loop {
            // Slot 0 is the wake pipe, 1 and 2 the output streams, 3 stdin; absent ones get
            // fd -1, which poll ignores.
            let mut fds = [
                pollfd(self.wake.as_raw_fd(), libc::POLLIN),
                pollfd(raw(&self.streams[0].0), libc::POLLIN),
                pollfd(raw(&self.streams[1].0), libc::POLLIN),
                pollfd(
                    self.stdin.as_ref().map_or(-1, |(f, _, _)| f.as_raw_fd()),
                    libc::POLLOUT,
                ),
            ];
            // SAFETY: `fds` is a valid array of pollfd of the length given.
            let res = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
            if res < 0 {
                if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                break;
            }
            if fds[0].revents != 0 {
                break;
            }
            for (idx, fd) in fds[1..3].iter().enumerate() {
                if fd.revents != 0 {
                    let (file, buffer) = &mut self.streams[idx];
                    read_some(file, buffer, &mut chunk);
                }
            }
            if fds[3].revents != 0 {
                self.feed();
            }
        }
        // The group is gone (or poll failed): take what is in the pipes, bounded, and stop.
        self.stdin = None;
        for (file, buffer) in &mut self.streams {
            let mut read = 0;
            while file.is_some() && read < FINAL_DRAIN_LIMIT {
                match read_some(file, buffer, &mut chunk) {
                    Some(n) => read += n,
                    None => break,
                }
            }
        }
        let [(_, out), (_, err)] = self.streams;
        (out.finish(), err.finish())
    }

    /// Writes the next part of stdin; closes it when everything is written or the child
    /// closed its end.
    fn feed(&mut self) {
        let Some((file, bytes, written)) = &mut self.stdin else {
            return;
        };
        match file.write(&bytes[*written..]) {
            Ok(n) => *written += n,
            Err(err)
                if matches!(
                    err.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                ) => {}
            Err(_) => *written = bytes.len(),
        }
        if *written >= bytes.len() {
            self.stdin = None;
        }
    }
}

/// Reads once from `file` into `buffer`; returns the bytes read, or `None` when nothing more
/// is there for now. Closes `file` at EOF or on an error.
fn read_some(file: &mut Option<File>, buffer: &mut Buffer, chunk: &mut [u8]) -> Option<usize> {
    let f = file.as_mut()?;
    match f.read(chunk) {
        Ok(0) => {
            *file = None;
            None
        }
        Ok(n) => {
            buffer.push(&chunk[..n]);
            Some(n)
        }
        Err(err) if err.kind() == io::ErrorKind::Interrupted => Some(0),
        Err(err) if err.kind() == io::ErrorKind::WouldBlock => None,
        Err(_) => {
            *file = None;
            None
        }
    }
}

fn pollfd(fd: RawFd, events: libc::c_short) -> libc::pollfd {
    libc::pollfd {
        fd,
        events,
        revents: 0,
    }
}

fn raw(file: &Option<File>) -> RawFd {
    file.as_ref().map_or(-1, AsRawFd::as_raw_fd)
}

/// Turns a child pipe into a non-blocking file.
fn nonblocking<P: Into<OwnedFd>>(pipe: P) -> io::Result<File> {
    let fd: OwnedFd = pipe.into();
    set_nonblocking(fd.as_raw_fd())?;
    Ok(File::from(fd))
}

fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor we own, with integer arguments only.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Blocks SIGPIPE on the calling thread, so a write to a closed stdin fails with EPIPE instead
/// of killing a process that left SIGPIPE at its default.
fn block_sigpipe() {
    // SAFETY: the set is initialised by sigemptyset before use; pthread_sigmask only changes
    // this thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Returns a close-on-exec pipe as (read end, write end).
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// A child to start in the background, for [`spawn_detached`].
///
/// ```no_run
/// use herd_core::subprocess::{self, Detached};
///
/// let pid = subprocess::spawn_detached(
///     &Detached::new("pi", "/tmp/run.stdout.log", "/tmp/run.stderr.log")
///         .args(["--session", "/tmp/run.jsonl"])
///         .cwd("/tmp/checkout")
///         .env("PI_SUBAGENT_ID", "run-1"),
/// )?;
/// # Ok::<(), subprocess::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detached {
    spec: Spec,
    stdin: Option<PathBuf>,
    stdout_log: PathBuf,
    stderr_log: PathBuf,
}

impl Detached {
    /// Starts a description of a detached child whose stdout and stderr are appended to the
    /// given files (created with mode 0600 if missing; they may be the same file).
    #[must_use]
    pub fn new(
        program: impl Into<OsString>,
        stdout_log: impl Into<PathBuf>,
        stderr_log: impl Into<PathBuf>,
    ) -> Detached {
        Detached {
            spec: Spec::new(program.into()),
            stdin: None,
            stdout_log: stdout_log.into(),
            stderr_log: stderr_log.into(),
        }
    }

    spec_methods!();

    /// Reads standard input from `path` instead of `/dev/null`.
    #[must_use]
    pub fn stdin_file(mut self, path: impl Into<PathBuf>) -> Detached {
        self.stdin = Some(path.into());
        self
    }
}

/// Starts `cmd` in a new session and returns its PID without waiting for it.
///
/// The child is started through an intermediate process that forks it and exits at once, so the
/// child is adopted by init (or the nearest subreaper) and never becomes a zombie of the caller:
/// a herd process may exit or keep running without reaping it. The child calls `setsid`, so it
/// leads a session and a process group whose IDs equal its PID, has no controlling terminal,
/// and is not in the caller's group.
///
/// Returns only after the child has exec'd its program: a missing program or working directory
/// is an error here, not a child that dies silently. The caller supervises the child through
/// its identity ([`crate::identity::capture`]).
pub fn spawn_detached(cmd: &Detached) -> Result<u32, Error> {
    cmd.spec.validate()?;
    cmd.spec.check_cwd()?;
    let program = cmd.spec.program_name();
    let supervise = |source: io::Error| Error::Supervise {
        program: program.clone(),
        source,
    };
    let stdin = match &cmd.stdin {
        Some(path) => Stdio::from(File::open(path).map_err(|source| Error::File {
            path: path.clone(),
            source,
        })?),
        None => Stdio::null(),
    };
    let stdout = open_log(&cmd.stdout_log)?;
    let stderr = open_log(&cmd.stderr_log)?;

    let (pid_rx, pid_tx) = pipe().map_err(supervise)?;
    let pid_tx_raw = pid_tx.as_raw_fd();
    let mut std_cmd = cmd.spec.to_std();
    std_cmd.stdin(stdin).stdout(stdout).stderr(stderr);
    let detach = move || -> io::Result<()> {
        // Runs in the forked child, before exec: only async-signal-safe calls from here.
        // SAFETY: fork, write, _exit and setsid are async-signal-safe, and the child of a fork
        // has a single thread, so the second fork cannot deadlock on another thread's lock.
        unsafe {
            let grandchild = libc::fork();
            if grandchild < 0 {
                return Err(io::Error::last_os_error());
            }
            if grandchild > 0 {
                // The intermediate process: report the PID and leave, so nobody has to reap
                // the grandchild. A short write is impossible for 4 bytes into an empty pipe.
                let bytes = grandchild.to_ne_bytes();
                libc::write(pid_tx_raw, bytes.as_ptr().cast(), bytes.len());
                libc::_exit(0);
            }
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            // The signals herd controls a child with start at their defaults, whatever the
            // launcher ignored: one started in the background ignores SIGINT and SIGQUIT, and
            // an ignored signal stays ignored across exec (a shell cannot even trap it).
            for signal in [libc::SIGINT, libc::SIGQUIT, libc::SIGTERM] {
                // SAFETY: sigaction is async-signal-safe; a zeroed action is SIG_DFL, no flags.
                let action: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, &action, std::ptr::null_mut()) < 0 {
                    return Err(io::Error::last_os_error());
                }
            }
        }
        Ok(())
    };
    // SAFETY: the closure only makes async-signal-safe calls (see inside).
    unsafe {
        std_cmd.pre_exec(detach);
    }
    // `spawn` returns once every copy of std's close-on-exec error pipe is closed: the
    // intermediate's at its exit, the grandchild's at its exec. An exec error in the grandchild
    // is written to that pipe, so it surfaces here as a spawn error.
    let mut intermediate = spawn(&mut std_cmd).map_err(|err| cmd.spec.spawn_error(err))?;
    drop(pid_tx);
    let reaped = reap_within(&mut intermediate, KILL_WAIT);
    let mut bytes = [0u8; 4];
    let mut pid_file = File::from(pid_rx);
    pid_file.read_exact(&mut bytes).map_err(supervise)?;
    reaped.map_err(supervise)?;
    let pid = libc::pid_t::from_ne_bytes(bytes);
    u32::try_from(pid).map_err(|_| supervise(io::Error::other("negative pid reported")))
}

/// Opens a log for appending: created 0600 if missing, never through a symlink in its place.
fn open_log(path: &Path) -> Result<Stdio, Error> {
    crate::sidecar::private()
        .append(true)
        .create(true)
        .open(path)
        .map(Stdio::from)
        .map_err(|source| Error::File {
            path: path.to_path_buf(),
            source,
        })
}

/// Reaps `child`, which is known to exit at once, waiting at most `bound`.
fn reap_within(child: &mut Child, bound: Duration) -> io::Result<()> {
    let deadline = Instant::now() + bound;
    loop {
        if child.try_wait()?.is_some() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the intermediate process did not exit",
            ));
        }
        thread::sleep(Duration::from_millis(1));
    }
}

/// Turns SIGTERM and SIGINT of the current process into messages (the signal number) on a
/// channel, for [`run_with_cancel`].
///
/// From the first call on, these signals no longer end the process by themselves: the caller
/// must react to the messages (stop its children, then exit, typically with 128 + the signal).
/// The handlers stay installed for the life of the process; each call installs another set and
/// returns its own channel. A message is dropped when eight are already waiting.
pub fn termination_signals() -> Result<Receiver<i32>, Error> {
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
    ])
    .map_err(|source| Error::Signals { source })?;
    let (tx, rx) = crossbeam_channel::bounded(8);
    thread::Builder::new()
        .name("herd-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                let _ = tx.try_send(signal);
            }
        })
        .map_err(|source| Error::Signals { source })?;
    Ok(rx)
}

/// Returns the path of the herd binary `name`.
///
/// `$HERD_BIN_DIR/<name>` when that variable is set and not empty; else `<name>` beside the
/// running executable, if it exists there (or one directory up, when the running executable is
/// a test in cargo's `deps/`); else the plain name, to be looked up on `PATH`.
pub fn sibling_binary(name: &str) -> PathBuf {
    sibling_in(
        name,
        std::env::var_os(BIN_DIR_ENV),
        std::env::current_exe().ok(),
    )
}

/// Replaces the current process with `argv[0]` run with the rest of `argv`, looked up on `PATH`
/// when it has no slash. The environment, working directory and open descriptors are kept.
///
/// This starts nothing new, so no budget applies: the process stays the same process, with the
/// same PID and start time. That is the point of `herd-launch exec`, which records its own
/// identity and then becomes the runner. Returns only when the exec failed, with the reason.
#[expect(
    clippy::disallowed_methods,
    reason = "exec replaces this process image; nothing is spawned, so no budget or group applies"
)]
pub fn exec_replace(argv: &[OsString]) -> io::Error {
    let Some((program, args)) = argv.split_first() else {
        return io::Error::new(io::ErrorKind::InvalidInput, "no program to exec");
    };
    std::process::Command::new(program).args(args).exec()
}

fn sibling_in(name: &str, bin_dir: Option<OsString>, exe: Option<PathBuf>) -> PathBuf {
    if let Some(dir) = bin_dir.filter(|dir| !dir.is_empty()) {
        return PathBuf::from(dir).join(name);
    }
    if let Some(dir) = exe.as_deref().and_then(Path::parent) {
        let beside = dir.join(name);
        if beside.is_file() {
            return beside;
        }
        if dir.file_name() == Some(OsStr::new("deps")) {
            if let Some(above) = dir.parent().map(|parent| parent.join(name)) {
                if above.is_file() {
                    return above;
                }
            }
        }
    }
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn stat_fields_are_read_after_the_last_parenthesis() {
        assert_eq!(
            parse_state_and_group(b"42 (a) b) c) S 1 40 40 0 -1"),
            Some((b'S', 40))
        );
        assert_eq!(parse_state_and_group(b"42 (sh) Z 1 7 7"), Some((b'Z', 7)));
        assert_eq!(parse_state_and_group(b"42 (sh) R 1"), None);
        assert_eq!(parse_state_and_group(b"garbage"), None);
    }

    #[test]
    fn a_counted_stream_keeps_only_its_count() {
        let mut buffer = Buffer::new((0, Keep::Count(0)));
        buffer.push(b"a\0b\0");
        buffer.push(b"");
        buffer.push(b"\0c");
        let c = buffer.finish();
        assert_eq!(
            (c.bytes.len(), c.total, c.counted, c.truncated),
            (0, 6, 3, false)
        );
    }

    fn check_buffer(chunks: &[&[u8]], cap: usize, keep: Keep, expect: &[u8], truncated: bool) {
        let mut buffer = Buffer::new((cap, keep));
        for chunk in chunks {
            buffer.push(chunk);
        }
        let total: usize = chunks.iter().map(|c| c.len()).sum();
        let captured = buffer.finish();
        assert_eq!(captured.bytes, expect);
        assert_eq!(captured.total, total as u64);
        assert_eq!(captured.truncated, truncated);
    }

    #[test]
    fn buffers_keep_the_head_or_the_tail() {
        check_buffer(&[b"abc", b"def"], 4, Keep::Head, b"abcd", true);
        check_buffer(&[b"abc", b"def"], 4, Keep::Tail, b"cdef", true);
        check_buffer(&[b"abcdefgh"], 3, Keep::Tail, b"fgh", true);
        check_buffer(&[b"ab", b"", b"c"], 3, Keep::Head, b"abc", false);
        check_buffer(&[b"ab", b"c"], 3, Keep::Tail, b"abc", false);
        check_buffer(&[b"abc"], 0, Keep::Tail, b"", true);
        check_buffer(&[], 8, Keep::Head, b"", false);
    }

    proptest::proptest! {
        #[test]
        fn buffers_match_slicing_the_whole_stream(
            chunks in proptest::collection::vec(proptest::collection::vec(0u8..4, 0..40), 0..20),
            cap in 0usize..64,
        ) {
            let whole: Vec<u8> = chunks.concat();
            for keep in [Keep::Head, Keep::Tail] {
                let mut buffer = Buffer::new((cap, keep));
                for chunk in &chunks {
                    buffer.push(chunk);
                }
                let captured = buffer.finish();
                let kept = whole.len().min(cap);
                let expect = match keep {
                    Keep::Head => &whole[..kept],
                    Keep::Tail => &whole[whole.len() - kept..],
                    Keep::Count(_) => unreachable!("only Head and Tail are iterated"),
                };
                proptest::prop_assert_eq!(&captured.bytes[..], expect);
                proptest::prop_assert_eq!(captured.total, whole.len() as u64);
                proptest::prop_assert_eq!(captured.truncated, whole.len() > cap);
            }
        }
    }

    #[test]
    fn siblings_come_from_the_override_then_beside_the_executable_then_path() {
        let dir = tempfile::tempdir().unwrap();
        let deps = dir.path().join("deps");
        std::fs::create_dir(&deps).unwrap();
        std::fs::write(dir.path().join("herd-watch"), "").unwrap();
        std::fs::write(deps.join("herd-accept"), "").unwrap();
        let exe = Some(deps.join("test-binary"));

        assert_eq!(
            sibling_in("herd-watch", Some("/opt/herd/bin".into()), exe.clone()),
            PathBuf::from("/opt/herd/bin/herd-watch")
        );
        assert_eq!(
            sibling_in("herd-accept", Some("".into()), exe.clone()),
            deps.join("herd-accept")
        );
        assert_eq!(
            sibling_in("herd-watch", None, exe.clone()),
            dir.path().join("herd-watch")
        );
        assert_eq!(
            sibling_in("herd-docs", None, exe),
            PathBuf::from("herd-docs")
        );
        assert_eq!(
            sibling_in("herd-docs", None, None),
            PathBuf::from("herd-docs")
        );
    }
}
