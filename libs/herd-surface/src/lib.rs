//! Where a child runs (docs/surfaces.md): one [`Surface`] trait and three implementations.
//!
//! - [`herdr::Herdr`]: a pane of the Herdr terminal multiplexer, driven through `herd-herdr`.
//! - [`tmux::Tmux`]: a pane of a tmux server (`split-window`/`new-window`, `capture-pane`,
//!   `send-keys`, `kill-pane`, `list-panes`).
//! - [`process::Process`]: no terminal; the launch script runs detached in its own session with
//!   its output in `logs/<run-id>.{out,err}`.
//!
//! Every operation takes a deadline and answers within it; a launch takes a budget per operation
//! ([`LaunchBudgets`]). The answers keep apart what is known
//! from what is not: a [`Presence`] of [`Presence::Absent`] is only ever the result of a
//! per-target query that proved absence (a listing proves presence, never absence), and a launch
//! that may have had an effect is a [`LaunchError::Uncertain`] or [`LaunchError::Unowned`],
//! never a plain failure.
//!
//! A [`Target`] is what a run record stores ([`Target::to_pane_ref`], [`open`]), so any program can
//! reach the child again from the files alone.

pub mod herdr;
pub mod live;
pub mod notify;
pub mod process;
pub mod tmux;

mod call;

pub use live::{Child, deliver, find_sentinel};

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use herd_core::ErrorCode;
/// The agent status Herdr reports for a pane: idle, working, blocked, done or unknown.
pub use herd_herdr::AgentStatus;
pub use herd_protocol::run::{PaneRef, SurfaceKind};
use herd_protocol::{layout::Artifacts, run::RunRecord};

/// The budget for confirming that a closed pane is gone.
pub const ABSENCE_CONFIRMATION: Duration = Duration::from_secs(5);
/// The budget for an ordinary request to a multiplexer.
pub const REQUEST_BUDGET: Duration = Duration::from_secs(10);
/// The budget for placing a pane, queue wait included.
pub const PLACEMENT_BUDGET: Duration = Duration::from_secs(30);
/// The budget for shell or Pi readiness.
pub const READINESS_BUDGET: Duration = Duration::from_secs(10);
/// The budget for a cosmetic rename.
pub const RENAME_BUDGET: Duration = Duration::from_secs(1);
/// The budget for dispatching the launch script into a ready pane: an ordinary request.
pub const DISPATCH_BUDGET: Duration = REQUEST_BUDGET;

/// The operations of a launch, each with a budget of its own: separate operation limits, not an
/// end-to-end launch deadline (docs/lifecycle.md, "Budgets").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// Creating the child's pane, queue wait included (on tmux, with the command in it).
    Placement,
    /// The cosmetic pane title.
    Rename,
    /// Waiting until the pane's shell is ready for the command.
    Readiness,
    /// Running the launch script in the pane.
    Dispatch,
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Operation::Placement => "pane placement",
            Operation::Rename => "pane rename",
            Operation::Readiness => "shell readiness",
            Operation::Dispatch => "dispatch",
        })
    }
}

/// The budget of each operation of one launch. Each starts when its operation starts, so a slow
/// operation within its own budget leaves every later one its whole budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchBudgets {
    pub placement: Duration,
    pub rename: Duration,
    pub readiness: Duration,
    pub dispatch: Duration,
}

impl Default for LaunchBudgets {
    /// The budgets of docs/lifecycle.md, "Budgets".
    fn default() -> LaunchBudgets {
        LaunchBudgets {
            placement: PLACEMENT_BUDGET,
            rename: RENAME_BUDGET,
            readiness: READINESS_BUDGET,
            dispatch: DISPATCH_BUDGET,
        }
    }
}

impl LaunchBudgets {
    /// Every budget at most `cap` (a test of a surface that hangs).
    pub fn capped(self, cap: Duration) -> LaunchBudgets {
        LaunchBudgets {
            placement: self.placement.min(cap),
            rename: self.rename.min(cap),
            readiness: self.readiness.min(cap),
            dispatch: self.dispatch.min(cap),
        }
    }

    /// The budget of `operation`.
    pub fn of(&self, operation: Operation) -> Duration {
        match operation {
            Operation::Placement => self.placement,
            Operation::Rename => self.rename,
            Operation::Readiness => self.readiness,
            Operation::Dispatch => self.dispatch,
        }
    }

    /// The deadline of `operation` if it starts now.
    pub fn deadline(&self, operation: Operation) -> Instant {
        Instant::now() + self.of(operation)
    }
}
/// How many lines of a pane a sentinel scan reads.
pub const SENTINEL_LINES: usize = 50;
/// The variable a surface's prologue exports inside a child's pane: the pane's own id.
pub const CHILD_PANE_ENV: &str = "PI_SUBAGENT_SURFACE";
/// The cap on output captured from a multiplexer client, per stream.
pub const OUTPUT_CAP: usize = 1024 * 1024;

/// What a surface needs to start one child.
#[derive(Debug, Clone)]
pub struct Launch<'a> {
    pub run_id: &'a str,
    /// The display name (pane title, window name).
    pub name: &'a str,
    /// The child's working directory.
    pub cwd: &'a Path,
    /// The launch script; the surface runs `sh <script>`.
    pub script: &'a Path,
    /// The child's session file (the process surface finds the identity record beside it).
    pub session_file: &'a Path,
    /// An existing pane to run in instead of a new one: a managed worktree's root pane, which
    /// is retained and never closed by herd (Herdr only).
    pub into: Option<&'a PaneRef>,
}

/// A child on a surface, as every later operation addresses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A terminal pane (herdr, tmux).
    Pane(PaneRef),
    /// A detached launch script (process surface), found through the run's files.
    Process(ProcessTarget),
}

/// The files of a child on the process surface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessTarget {
    pub run_id: String,
    /// The runner's identity record (`<session>.process.json`, written by `herd-launch exec`).
    pub identity: PathBuf,
    /// The identity of the launch script's shell, the leader of the child's session
    /// (`runs/<run-id>.leader.json`, written by herd-launch right after the spawn).
    pub leader: PathBuf,
    pub stdout: PathBuf,
    pub stderr: PathBuf,
    /// The runner's exit status, written by the launch script (`runs/<run-id>.runner-exit.json`).
    pub exit_status: PathBuf,
}

impl ProcessTarget {
    /// The files of `run_id` in `artifacts`, with the identity record beside `session_file`.
    pub fn new(artifacts: &Artifacts, run_id: &str, session_file: &Path) -> ProcessTarget {
        ProcessTarget {
            run_id: run_id.to_owned(),
            identity: herd_protocol::layout::SessionFiles::new(session_file).process(),
            leader: leader_record(artifacts, run_id),
            stdout: artifacts.stdout_log(run_id),
            stderr: artifacts.stderr_log(run_id),
            exit_status: runner_exit_file(artifacts, run_id),
        }
    }
}

/// `runs/<run-id>.runner-exit.json`: `{"format_version":1,"exit_code":N}`, written by the launch
/// script when the runner has exited, on every surface.
pub fn runner_exit_file(artifacts: &Artifacts, run_id: &str) -> PathBuf {
    artifacts.runner_exit(run_id)
}

/// `runs/<run-id>.leader.json`: the identity of a process-surface launch script's shell.
pub fn leader_record(artifacts: &Artifacts, run_id: &str) -> PathBuf {
    artifacts.leader(run_id)
}

/// Reads the exit code the launch script recorded; `None` while the runner has not exited.
pub fn read_runner_exit(path: &Path) -> Option<i32> {
    herd_protocol::launch::runner_exit::read(path)
}

impl Target {
    /// The pane, when the child has one.
    pub fn pane(&self) -> Option<&PaneRef> {
        match self {
            Target::Pane(pane) => Some(pane),
            Target::Process(_) => None,
        }
    }

    /// The pane reference a run record stores (`None` on the process surface).
    pub fn to_pane_ref(&self) -> Option<PaneRef> {
        self.pane().cloned()
    }
}

/// Whether a child's place on its surface is still there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Presence {
    /// The pane (or the detached script) is there and its command still runs; on Herdr, whose
    /// panes keep their shell, simply that the pane is there.
    Running,
    /// The pane is still there but its command has exited, with the status when known (a tmux pane
    /// kept after exit; a detached script that has finished, whose logs remain).
    Exited { status: Option<i32> },
    /// Proven absent by a query for this target.
    Absent,
}

impl std::fmt::Display for Presence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Presence::Running => f.write_str("running"),
            Presence::Exited { status: Some(code) } => write!(f, "exited with status {code}"),
            Presence::Exited { status: None } => f.write_str("exited"),
            Presence::Absent => f.write_str("absent"),
        }
    }
}

/// What one look at a child's place says: whether it is there, and what the surface says the
/// agent in it is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inspection {
    pub presence: Presence,
    /// Herdr's coarse status of the pane's agent (pane inspection is the authority for idle,
    /// working, blocked or done); `None` on a surface that has no such notion (tmux,
    /// process).
    pub agent: Option<AgentStatus>,
}

/// One row of a surface listing: proves presence only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub pane_id: String,
    /// Herdr's terminal id of the pane (a restarted Herdr reuses pane ids, never terminal ids);
    /// `None` on the other surfaces.
    pub terminal_id: Option<String>,
    pub presence: Presence,
    /// The agent status the listing gave for the pane, as in [`Inspection::agent`].
    pub agent: Option<AgentStatus>,
}

impl Listed {
    /// The row as an inspection of its pane.
    pub fn inspection(&self) -> Inspection {
        Inspection {
            presence: self.presence.clone(),
            agent: self.agent,
        }
    }
}

/// A key sent to a child.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    /// Interrupts an agent's turn.
    Escape,
    Enter,
    /// Ctrl+C (on the process surface: SIGINT to the verified identity, or to the verified
    /// command inside a confined child's sandbox).
    Interrupt,
    /// Literal text, typed as is.
    Text(String),
}

impl std::fmt::Display for Key {
    /// How a key is named in messages: never the text typed, which is the caller's.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Key::Escape => "Escape",
            Key::Enter => "Enter",
            Key::Interrupt => "Ctrl+C",
            Key::Text(_) => "text",
        })
    }
}

/// The errors of surface operations.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The surface cannot be used at all (no server, no binary); nothing happened.
    #[error("{surface} is not available: {reason}")]
    Unavailable {
        surface: &'static str,
        reason: String,
    },
    /// A command answered with a failure; it had no effect.
    #[error("`{command}` failed: {message}")]
    Failed { command: String, message: String },
    /// A command did not answer within its budget; it may still have had its effect.
    #[error("`{command}` did not answer within {budget_ms} ms")]
    Timeout { command: String, budget_ms: u64 },
    /// A command answered, but not in the expected shape; treated as uncertain, never success.
    #[error("`{command}` gave an unexpected reply: {detail}")]
    Malformed { command: String, detail: String },
    /// The target is not on the surface.
    #[error("{target} is not there")]
    NotFound { target: String },
    /// The surface cannot do this (e.g. Escape to a process without a terminal).
    #[error("the {surface} surface cannot {operation}")]
    Unsupported {
        surface: &'static str,
        operation: String,
    },
    /// The target belongs to another surface or another server.
    #[error("{0}")]
    WrongTarget(String),
    /// A file of the child could not be read or the identity could not be judged.
    #[error("{0}")]
    Io(String),
    /// The child is not the live program the target's input reaches (it has ended, or it was
    /// never shown to run): nothing was sent ([`live::deliver`]).
    #[error("{0}")]
    NotLive(String),
    /// An operation of a launch failed, within or at the end of its own budget.
    #[error("{operation} (its budget is {budget_ms} ms): {source}")]
    During {
        operation: Operation,
        budget_ms: u64,
        source: Box<Error>,
    },
}

impl Error {
    /// Whether the operation may have had its effect although it did not report success.
    pub fn is_uncertain(&self) -> bool {
        match self {
            Error::During { source, .. } => source.is_uncertain(),
            other => matches!(other, Error::Timeout { .. } | Error::Malformed { .. }),
        }
    }

    /// This error as the failure of `operation` of a launch, which had `budget`.
    pub fn during(self, operation: Operation, budget: Duration) -> Error {
        Error::During {
            operation,
            budget_ms: u64::try_from(budget.as_millis()).unwrap_or(u64::MAX),
            source: Box::new(self),
        }
    }

    /// The error itself, inside any [`Error::During`].
    pub fn innermost(&self) -> &Error {
        match self {
            Error::During { source, .. } => source.innermost(),
            other => other,
        }
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            Error::During { source, .. } => source.code(),
            Error::Unavailable { .. } | Error::Failed { .. } | Error::Io(_) => {
                ErrorCode::Unavailable
            }
            Error::Timeout { .. } => ErrorCode::Timeout,
            Error::Malformed { .. } => ErrorCode::Uncertain,
            Error::NotFound { .. } => ErrorCode::NotFound,
            Error::NotLive(_) => ErrorCode::Conflict,
            Error::Unsupported { .. } | Error::WrongTarget(_) => ErrorCode::InvalidRequest,
        }
    }
}

impl herd_core::error::Report for Error {
    fn code(&self) -> ErrorCode {
        Error::code(self)
    }

    fn field(&self) -> Option<&str> {
        matches!(self.innermost(), Error::Unsupported { .. }).then_some("surface")
    }
}

/// Why a launch did not succeed, and what may exist because of it.
#[derive(Debug)]
pub enum LaunchError {
    /// Nothing of the child exists: it was never created, or it was rolled back and its absence
    /// confirmed. A model fallback may follow.
    Definite(Error),
    /// An owner exists and the dispatch (or the rollback) is uncertain: keep it supervised until
    /// its end is confirmed; never fall back to another model.
    Uncertain { error: Error, owner: Box<Target> },
    /// A resource may have been created, but no owner was identified.
    Unowned(Error),
}

impl LaunchError {
    /// The same outcome, its error named as the failure of `operation`, which had `budget`.
    pub fn during(self, operation: Operation, budget: Duration) -> LaunchError {
        match self {
            LaunchError::Definite(e) => LaunchError::Definite(e.during(operation, budget)),
            LaunchError::Unowned(e) => LaunchError::Unowned(e.during(operation, budget)),
            LaunchError::Uncertain { error, owner } => LaunchError::Uncertain {
                error: error.during(operation, budget),
                owner,
            },
        }
    }

    pub fn error(&self) -> &Error {
        match self {
            LaunchError::Definite(e) | LaunchError::Unowned(e) => e,
            LaunchError::Uncertain { error, .. } => error,
        }
    }
}

/// The operations every surface offers.
pub trait Surface {
    fn kind(&self) -> SurfaceKind;

    /// Whether the child gets a terminal (Pi runs interactively) or not (Pi runs in print mode).
    fn has_terminal(&self) -> bool;

    /// Shell lines the launch script runs first on this surface: keeping the pane after exit,
    /// its title, and `PI_SUBAGENT_SURFACE` (the pane id, known only inside the pane).
    fn script_prologue(&self, name: &str) -> Vec<String>;

    /// The socket this surface talks to, recorded so other programs reach the same server.
    fn socket(&self) -> Option<PathBuf> {
        None
    }

    /// Places the child and starts `sh <script>` in it, each [`Operation`] within its own
    /// budget of `budgets`; a failure names the operation ([`Error::During`]).
    ///
    /// On a definite failure after placement the surface rolls back (closes what it created and
    /// confirms its absence, within [`ABSENCE_CONFIRMATION`]) before answering
    /// [`LaunchError::Definite`].
    fn launch(&self, launch: &Launch<'_>, budgets: &LaunchBudgets) -> Result<Target, LaunchError>;

    /// Queries one target. This is the only proof of absence.
    fn presence(&self, target: &Target, deadline: Instant) -> Result<Presence, Error>;

    /// Queries one target like [`Surface::presence`], in the same single query, with the agent
    /// status the surface reports of it (Herdr's `pane get`); without one, the agent is `None`.
    fn inspect(&self, target: &Target, deadline: Instant) -> Result<Inspection, Error> {
        Ok(Inspection {
            presence: self.presence(target, deadline)?,
            agent: None,
        })
    }

    /// Lists every pane of the surface in one call; proves presence only.
    fn list(&self, deadline: Instant) -> Result<Vec<Listed>, Error>;

    /// Reads the last `lines` lines of what the child shows (pane screen and scrollback, or the
    /// tail of the output logs).
    fn read_tail(&self, target: &Target, lines: usize, deadline: Instant) -> Result<String, Error>;

    /// Sends keys to the target, whatever runs there now. Deliveries to a child go through
    /// [`live::deliver`], which first proves that the child is the live program they reach.
    fn send_keys(&self, target: &Target, keys: &[Key], deadline: Instant) -> Result<(), Error>;

    /// Whether keys sent to `target` reach `runner`, the child's live runner: `None` when they
    /// do, else why not. The default asks [`Surface::presence`]: while the pane's (or the
    /// script's) own process runs, it is the child's launch script and no shell reads the keys. A
    /// surface whose panes keep an interactive shell (Herdr) proves that the runner, not the
    /// shell, is the pane's foreground program.
    fn input_reaches(
        &self,
        target: &Target,
        runner: &herd_core::identity::Record,
        deadline: Instant,
    ) -> Result<Option<String>, Error> {
        let _ = runner;
        Ok(match self.presence(target, deadline)? {
            Presence::Running => None,
            Presence::Exited { .. } => Some(match target {
                Target::Pane(_) => "its pane's command has exited".into(),
                Target::Process(_) => "its launch script has exited".into(),
            }),
            Presence::Absent => Some("its pane is gone".into()),
        })
    }

    /// Closes the pane, or terminates the process surface's verified identity. Returns once the
    /// request is made; [`close_confirmed`] also waits for proof of absence.
    fn close(&self, target: &Target, deadline: Instant) -> Result<(), Error>;

    /// The PID of the pane's own process (its shell, or the command it was made with), the root of
    /// every process that runs in it. Only surfaces with panes have one.
    fn pane_pid(&self, target: &Target, deadline: Instant) -> Result<u32, Error> {
        let _ = (target, deadline);
        Err(Error::Unsupported {
            surface: self.kind().as_str(),
            operation: "name a pane's process".into(),
        })
    }

    /// A watch that turns readable when the target's presence ends (the process surface's
    /// launch script exits), so a supervisor can wait for it instead of asking on a timer.
    /// `None` where presence has no process of its own to watch (panes), or the process is not
    /// running now: then [`Surface::presence`] is asked as before.
    fn exit_watch(&self, target: &Target) -> Option<herd_core::identity::ExitWatch> {
        let _ = target;
        None
    }

    /// Brings the target in front of the person: its tmux window and pane, its Herdr workspace.
    fn focus(&self, target: &Target, deadline: Instant) -> Result<(), Error> {
        let _ = (target, deadline);
        Err(Error::Unsupported {
            surface: self.kind().as_str(),
            operation: "focus a pane".into(),
        })
    }
}

/// How [`close_confirmed`] ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Closed {
    /// The target is proven absent (or, on the process surface, its identities have exited).
    Confirmed,
    /// The close was requested but absence was not proven before the deadline.
    Unconfirmed(String),
}

/// Closes `target` and polls [`Surface::presence`] until it is proven gone or `deadline` passes.
pub fn close_confirmed(surface: &dyn Surface, target: &Target, deadline: Instant) -> Closed {
    if let Err(err) = surface.close(target, deadline) {
        if !matches!(err, Error::NotFound { .. }) {
            // The close may still have happened (a timeout); only a presence query can tell. A
            // process target's close waits for the whole tree itself: its error is the answer.
            if Instant::now() >= deadline || matches!(target, Target::Process(_)) {
                return Closed::Unconfirmed(err.to_string());
            }
        }
    }
    let mut last;
    loop {
        match surface.presence(target, deadline) {
            Ok(Presence::Absent) => return Closed::Confirmed,
            Ok(Presence::Exited { .. }) if matches!(target, Target::Process(_)) => {
                return Closed::Confirmed;
            }
            Ok(other) => last = format!("still present ({other})"),
            Err(err) => last = err.to_string(),
        }
        if Instant::now() + Duration::from_millis(25) >= deadline {
            return Closed::Unconfirmed(last);
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Opens the surface a run record names and the target of its child.
pub fn open(
    record: &RunRecord,
    artifacts: &Artifacts,
) -> Result<(Box<dyn Surface>, Target), herd_core::Error> {
    match record.surface {
        SurfaceKind::Process => {
            let target =
                ProcessTarget::new(artifacts, &record.run_id, Path::new(&record.session_file));
            Ok((
                Box::new(process::Process::new(artifacts.clone())),
                Target::Process(target),
            ))
        }
        SurfaceKind::Tmux => {
            let pane = record.pane.clone().ok_or_else(|| {
                herd_core::Error::invalid(
                    "pane",
                    format!("run {} on tmux has no pane", record.run_id),
                )
            })?;
            let socket = pane.socket.clone().ok_or_else(|| {
                herd_core::Error::invalid(
                    "pane.socket",
                    format!("run {} has no tmux socket", record.run_id),
                )
            })?;
            let surface =
                tmux::Tmux::with_socket(tmux::find_program()?, PathBuf::from(socket), None);
            Ok((Box::new(surface), Target::Pane(pane)))
        }
        SurfaceKind::Herdr => {
            let pane = record.pane.clone().ok_or_else(|| {
                herd_core::Error::invalid(
                    "pane",
                    format!("run {} on herdr has no pane", record.run_id),
                )
            })?;
            let surface = herdr::Herdr::for_pane(&pane)?;
            Ok((Box::new(surface), Target::Pane(pane)))
        }
    }
}

/// The first wait between retries of a probe of an uncertain owner (supervision, termination).
pub const RETRY_FIRST: Duration = Duration::from_secs(1);
/// The longest wait between retries (docs/lifecycle.md, "Launch and uncertainty": from 1 second
/// to a 30-second cap).
pub const RETRY_CAP: Duration = Duration::from_secs(30);

/// The wait before retry number `attempt` (0-based) of a probe that keeps failing: 1 s, doubling,
/// capped at 30 s. It never triggers a model fallback or gives up the owner; it only paces probes.
pub fn retry_wait(attempt: u32) -> Duration {
    RETRY_FIRST
        .saturating_mul(1u32.checked_shl(attempt.min(31)).unwrap_or(u32::MAX))
        .min(RETRY_CAP)
}

/// Whether one of `pids` is a Pi child launched for `session`: its launch-time environment
/// (`/proc/<pid>/environ`, read with a bound) carries `PI_HERDR_AGENTS_SESSION=<session>`. Pi
/// rewrites its process title, so the command line is never evidence; the environment is.
pub fn pi_ready_among(pids: &[u32], session: &Path) -> bool {
    use std::io::Read;
    let mut wanted = b"PI_HERDR_AGENTS_SESSION=".to_vec();
    wanted.extend_from_slice(session.as_os_str().as_encoded_bytes());
    pids.iter().any(|pid| {
        let Ok(file) = std::fs::File::open(format!("/proc/{pid}/environ")) else {
            return false;
        };
        let mut buf = Vec::new();
        if file.take(1024 * 1024).read_to_end(&mut buf).is_err() {
            return false;
        }
        buf.split(|b| *b == 0)
            .any(|entry| entry == wanted.as_slice())
    })
}

/// The environment lookup of a process, as a function so tests can supply their own.
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Picks the surface for `--surface auto`: herdr when `HERDR_ENV=1` and its Herdr is there
/// ([`herd_herdr::program`]), tmux only when already inside tmux (`$TMUX`), else process.
pub fn auto_kind(env: Env<'_>) -> SurfaceKind {
    let path = env("PATH").unwrap_or_default();
    let herdr = herd_herdr::program(|key| env(key).map(Into::into));
    let found = if herdr.as_encoded_bytes().contains(&b'/') {
        Path::new(&herdr).is_file()
    } else {
        find_on_path(&herdr.to_string_lossy(), &path).is_some()
    };
    if env("HERDR_ENV").as_deref() == Some("1") && found {
        SurfaceKind::Herdr
    } else if env("TMUX").is_some_and(|t| !t.is_empty()) {
        SurfaceKind::Tmux
    } else {
        SurfaceKind::Process
    }
}

/// Finds an executable named `name` on the colon-separated `path`.
pub fn find_on_path(name: &str, path: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    path.split(':')
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Quotes `value` for a POSIX shell: `'…'`, with each `'` written as `'\''`.
pub fn shell_quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_prefers_herdr_then_tmux_then_process() {
        let dir = tempfile::tempdir().unwrap();
        let herdr = dir.path().join("herdr");
        std::fs::write(&herdr, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&herdr, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = dir.path().to_str().unwrap().to_owned();
        let env = |vars: &'static [(&'static str, &'static str)], path: String| {
            move |k: &str| {
                if k == "PATH" {
                    return Some(path.clone());
                }
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        let e = env(&[("HERDR_ENV", "1"), ("TMUX", "/tmp/t,1,0")], path.clone());
        assert_eq!(auto_kind(&e), SurfaceKind::Herdr);
        let e = env(&[("HERDR_ENV", "1"), ("TMUX", "/tmp/t,1,0")], String::new());
        assert_eq!(auto_kind(&e), SurfaceKind::Tmux);
        let e = env(&[("HERDR_ENV", "0")], path);
        assert_eq!(auto_kind(&e), SurfaceKind::Process);
        // Inside a Herdr pane whose Herdr is not on `PATH`: the pane's `HERDR_BIN_PATH` names it.
        let pane_bin = herdr.to_str().unwrap().to_owned();
        let in_pane = |k: &str| match k {
            "HERDR_ENV" => Some("1".to_owned()),
            "HERDR_BIN_PATH" => Some(pane_bin.clone()),
            _ => None,
        };
        assert_eq!(auto_kind(&in_pane), SurfaceKind::Herdr);
        let relative = |k: &str| match k {
            "HERDR_ENV" => Some("1".to_owned()),
            "HERDR_BIN_PATH" => Some("herdr".to_owned()),
            _ => None,
        };
        assert_eq!(auto_kind(&relative), SurfaceKind::Process);
    }

    #[test]
    fn runner_exit_reads_only_its_format() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.runner-exit.json");
        assert_eq!(read_runner_exit(&path), None);
        std::fs::write(&path, "{\"format_version\":1,\"exit_code\":3}\n").unwrap();
        assert_eq!(read_runner_exit(&path), Some(3));
        std::fs::write(&path, "{\"format_version\":2,\"exit_code\":3}\n").unwrap();
        assert_eq!(read_runner_exit(&path), None);
        std::fs::write(&path, "{\"format_version\":1,\"exit").unwrap();
        assert_eq!(read_runner_exit(&path), None);
    }

    #[test]
    fn retry_waits_double_up_to_the_cap() {
        let waits: Vec<u64> = (0..8).map(|n| retry_wait(n).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30, 30]);
        assert_eq!(retry_wait(u32::MAX), RETRY_CAP);
    }

    #[test]
    fn pi_readiness_is_read_from_the_launch_environment() {
        let session = Path::new("/s/child.jsonl");
        #[expect(
            clippy::disallowed_methods,
            reason = "a test starts a process with a known environment"
        )]
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .env("PI_HERDR_AGENTS_SESSION", session)
            .spawn()
            .unwrap();
        let pid = child.id();
        // Readiness is polled, as the launcher does: the exec may still be settling.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !pi_ready_among(&[pid], session) {
            assert!(
                Instant::now() < deadline,
                "the child never showed its session"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(!pi_ready_among(&[pid], Path::new("/s/other.jsonl")));
        assert!(!pi_ready_among(&[std::process::id()], session));
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn quoting_survives_quotes() {
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
