//! The process surface: no terminal, the launch script detached in a session of its own.
//!
//! `sh <script>` is started with `herd_core::subprocess::spawn_detached`, its stdout and stderr
//! appended to `logs/<run-id>.out` and `.err`. Right after the spawn herd records the identity of
//! that shell (`runs/<run-id>.leader.json`); the runner records its own (`<session>.process.json`,
//! through `herd-launch exec`). Presence is the leader's: running while the script runs, exited
//! (with the runner's status) once it has finished. Closing terminates the runner's verified
//! identity through a pidfd, never a bare PID. There is no screen: reading is the tail of the
//! stdout log, and keys other than Ctrl+C (SIGINT to the verified runner, or for a confined child
//! to the verified command inside its sandbox) have no meaning here.

use std::path::{Path, PathBuf};
use std::time::Instant;

use herd_core::identity::{self, Judgement, Record, Termination};
use herd_core::sidecar::{AtomicWrite, Durability};
use herd_core::subprocess::{self, Detached};
use herd_protocol::layout::Artifacts;

use crate::{
    Error, Key, Launch, LaunchBudgets, LaunchError, Listed, Presence, ProcessTarget, Surface,
    SurfaceKind, Target, read_runner_exit,
};

const SURFACE: &str = "process";

/// The most of a log [`Surface::read_tail`] reads from its end.
pub const TAIL_READ_LIMIT: u64 = 256 * 1024;

/// How long the processes of a closed child get after SIGTERM before SIGKILL.
pub const TERM_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// How long [`Surface::close`] lets the launch script record the runner's exit status and exit
/// on its own, once the runner was asked to stop, before the session is ended around it.
pub const RECORD_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// The shell that runs launch scripts.
const SHELL: &str = "/bin/sh";

/// The command name of a confined child's recorded process: bubblewrap (`herd_sandbox::bwrap`),
/// which does not pass signals on to the sandbox.
const SANDBOX: &str = "bwrap";

/// Children started as detached processes of an artifacts directory.
#[derive(Debug, Clone)]
pub struct Process {
    artifacts: Artifacts,
    /// Leader records read so far: each is written once, so a supervisor asking every second
    /// reads it once.
    leaders: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<PathBuf, Record>>>,
}

impl Process {
    pub fn new(artifacts: Artifacts) -> Process {
        Process {
            artifacts,
            leaders: Default::default(),
        }
    }

    /// The leader record at `path`, read once it exists.
    fn leader(&self, path: &Path) -> Result<Option<Record>, Error> {
        let mut leaders = self
            .leaders
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(record) = leaders.get(path) {
            return Ok(Some(record.clone()));
        }
        let record = read_record(path)?;
        if let Some(record) = &record {
            leaders.insert(path.to_path_buf(), record.clone());
        }
        Ok(record)
    }

    fn target<'t>(&self, target: &'t Target) -> Result<&'t ProcessTarget, Error> {
        match target {
            Target::Process(p) => Ok(p),
            Target::Pane(pane) => Err(Error::WrongTarget(format!(
                "pane {} is not a process target",
                pane.pane_id
            ))),
        }
    }
}

fn read_record(path: &Path) -> Result<Option<Record>, Error> {
    Record::read(path)
        .map_err(|e| Error::Io(format!("cannot read the identity {}: {e}", path.display())))
}

/// Writes the leader's identity once (temporary file, then a hard link), without an fsync: the
/// record only means something while the script can run, which no power loss leaves it doing,
/// and an fsync would cost every launch milliseconds on a busy disk. A reader finds it whole or
/// not at all, nothing left at the temporary name is written through, and the link refuses a
/// symlink at the final name.
fn write_leader(path: &Path, record: &Record) -> Result<bool, herd_core::sidecar::Error> {
    let bytes = record
        .to_json()
        .map_err(|e| herd_core::sidecar::Error::io(path, std::io::Error::other(e.to_string())))?;
    AtomicWrite::new(Durability::Unsynced).create_once(path, &bytes)
}

/// Reads the last `lines` lines of `path`, reading at most [`TAIL_READ_LIMIT`] bytes of its end.
///
/// The log lies in a directory the child can write, so it is opened without waiting: a FIFO left
/// in its place is refused, never waited on.
pub fn tail_lines(path: &Path, lines: usize) -> Result<String, Error> {
    let text = herd_core::sidecar::read_tail_lines(path, TAIL_READ_LIMIT)
        .map_err(|e| Error::Io(format!("cannot read {}: {e}", path.display())))?
        .unwrap_or_default();
    let all: Vec<&str> = text.trim_end_matches('\n').lines().collect();
    let from = all.len().saturating_sub(lines);
    Ok(all[from..].join("\n"))
}

impl Surface for Process {
    fn kind(&self) -> SurfaceKind {
        SurfaceKind::Process
    }

    fn has_terminal(&self) -> bool {
        false
    }

    fn script_prologue(&self, _name: &str) -> Vec<String> {
        Vec::new()
    }

    fn launch(&self, launch: &Launch<'_>, _budgets: &LaunchBudgets) -> Result<Target, LaunchError> {
        if let Some(pane) = launch.into {
            return Err(LaunchError::Definite(Error::Unsupported {
                surface: SURFACE,
                operation: format!("run in the pane {}", pane.pane_id),
            }));
        }
        let target = ProcessTarget::new(&self.artifacts, launch.run_id, launch.session_file);
        for dir in [self.artifacts.logs_dir(), self.artifacts.runs_dir()] {
            herd_core::sidecar::ensure_private_dir(&dir).map_err(|e| {
                LaunchError::Definite(Error::Io(format!("cannot create {}: {e}", dir.display())))
            })?;
        }
        let cmd = Detached::new(SHELL, &target.stdout, &target.stderr)
            .arg(launch.script)
            .cwd(launch.cwd);
        // spawn_detached returns after the exec of the shell, so an error means nothing runs.
        let pid = subprocess::spawn_detached(&cmd).map_err(|e| {
            LaunchError::Definite(Error::Unavailable {
                surface: SURFACE,
                reason: format!("cannot start the launch script: {e}"),
            })
        })?;
        // The shell is not our child (it was reparented at once), so it is recorded now, while
        // its PID can only name it: a script that already finished simply leaves no record and
        // its runner's exit status tells the rest.
        if let Ok(record) = identity::capture(pid, launch.run_id, launch.session_file) {
            if identity::judge(&record) == Judgement::Alive {
                let _ = write_leader(&target.leader, &record);
            }
        }
        Ok(Target::Process(target))
    }

    fn presence(&self, target: &Target, _deadline: Instant) -> Result<Presence, Error> {
        let target = self.target(target)?;
        let exited = || Presence::Exited {
            status: read_runner_exit(&target.exit_status),
        };
        if let Some(leader) = self.leader(&target.leader)? {
            return match judged(&leader) {
                Judgement::Alive => Ok(Presence::Running),
                Judgement::Exited => Ok(exited()),
                Judgement::Unknown(reason) => Err(Error::Io(format!(
                    "cannot judge the launch script: {reason}"
                ))),
            };
        }
        if read_runner_exit(&target.exit_status).is_some() {
            return Ok(exited());
        }
        match read_record(&target.identity)? {
            Some(runner) => match judged(&runner) {
                Judgement::Alive => Ok(Presence::Running),
                Judgement::Exited => Ok(exited()),
                Judgement::Unknown(reason) => {
                    Err(Error::Io(format!("cannot judge the runner: {reason}")))
                }
            },
            None => Err(Error::Io(format!(
                "run {} has no recorded identity to judge",
                target.run_id
            ))),
        }
    }

    /// The process whose life [`Surface::presence`] judges: the launch script's leader, or the
    /// runner's own identity where no leader was recorded.
    fn exit_watch(&self, target: &Target) -> Option<identity::ExitWatch> {
        let target = self.target(target).ok()?;
        let record = match self.leader(&target.leader).ok()? {
            Some(leader) => leader,
            None if read_runner_exit(&target.exit_status).is_some() => return None,
            None => read_record(&target.identity).ok()??,
        };
        identity::ExitWatch::open(&record)
    }

    fn list(&self, deadline: Instant) -> Result<Vec<Listed>, Error> {
        let mut rows = Vec::new();
        let ids = self.artifacts.run_ids().map_err(|e| Error::Io(e.message))?;
        for id in ids {
            let leader = crate::leader_record(&self.artifacts, &id);
            if !leader.exists() {
                continue;
            }
            let Ok(record) = herd_protocol::run::RunRecord::load(&self.artifacts, &id) else {
                continue;
            };
            let target = Target::Process(ProcessTarget::new(
                &self.artifacts,
                &id,
                Path::new(&record.session_file),
            ));
            if let Ok(presence @ (Presence::Running | Presence::Exited { .. })) =
                self.presence(&target, deadline)
            {
                rows.push(Listed {
                    pane_id: id,
                    terminal_id: None,
                    presence,
                    agent: None,
                });
            }
        }
        Ok(rows)
    }

    fn read_tail(
        &self,
        target: &Target,
        lines: usize,
        _deadline: Instant,
    ) -> Result<String, Error> {
        tail_lines(&self.target(target)?.stdout, lines)
    }

    fn send_keys(&self, target: &Target, keys: &[Key], _deadline: Instant) -> Result<(), Error> {
        let target = self.target(target)?;
        for key in keys {
            match key {
                Key::Interrupt => {
                    let runner = read_record(&target.identity)?.ok_or_else(|| {
                        Error::Io(format!("run {} has no runner identity yet", target.run_id))
                    })?;
                    // A confined child's runner is its sandbox, which SIGINT would end (and
                    // the sandbox with it): the command inside gets it instead.
                    match identity::signal_through(&runner, libc::SIGINT, SANDBOX) {
                        Termination::Signalled => {}
                        Termination::Exited => {
                            return Err(Error::NotFound {
                                target: format!("the runner of run {}", target.run_id),
                            });
                        }
                        Termination::Unknown(reason) => {
                            return Err(Error::Io(format!("SIGINT not sent: {reason}")));
                        }
                    }
                }
                other => {
                    return Err(Error::Unsupported {
                        surface: SURFACE,
                        operation: format!("send {other}: the child has no terminal"),
                    });
                }
            }
        }
        Ok(())
    }

    /// Ends the child's whole tree: SIGTERM to the runner, up to [`RECORD_GRACE`] for the script
    /// to record its exit status and exit, then SIGTERM to every process of the script's
    /// session, [`TERM_GRACE`] to exit, then SIGKILL to what is left. Every process is re-verified
    /// through a pidfd before its signal. `Ok` only once no process of the session is left.
    fn close(&self, target: &Target, deadline: Instant) -> Result<(), Error> {
        let target = self.target(target)?;
        let leader = read_record(&target.leader)?;
        let runner = read_record(&target.identity)?;
        let mut runner_exited = false;
        if let Some(runner) = &runner {
            match identity::terminate(runner, libc::SIGTERM) {
                Termination::Signalled => {}
                Termination::Exited => runner_exited = true,
                Termination::Unknown(reason) => {
                    return Err(Error::Io(format!("SIGTERM not sent: {reason}")));
                }
            }
        }
        let Some(leader) = leader else {
            // No session to end: the runner alone (a script that left no leader record).
            let Some(runner) = runner else {
                return Err(Error::Io(format!(
                    "run {} has no recorded identity to terminate",
                    target.run_id
                )));
            };
            if runner_exited {
                return Err(Error::NotFound {
                    target: format!("process {} of run {}", runner.pid, target.run_id),
                });
            }
            if identity::wait_exited(&runner, (Instant::now() + TERM_GRACE).min(deadline))
                == Judgement::Alive
            {
                let _ = identity::terminate(&runner, libc::SIGKILL);
            }
            return match identity::wait_exited(&runner, deadline) {
                Judgement::Exited => Ok(()),
                other => Err(Error::Io(format!(
                    "the runner is not confirmed gone after SIGKILL: {other}"
                ))),
            };
        };
        let before = identity::session_count(&leader).map_err(Error::Io)?;
        if runner_exited && before == 0 {
            return Err(Error::NotFound {
                target: format!("the processes of run {}", target.run_id),
            });
        }
        if !runner_exited && runner.is_some() {
            // The script waits for the runner, records its exit status and exits: let it, so
            // the status is evidence rather than lost to the session's SIGTERM.
            identity::wait_exited(&leader, (Instant::now() + RECORD_GRACE).min(deadline));
        }
        match identity::terminate_session(&leader, TERM_GRACE, deadline) {
            Ok(0) => Ok(()),
            Ok(left) => Err(Error::Io(format!(
                "{left} process(es) of the child's session still run after SIGKILL"
            ))),
            Err(reason) => Err(Error::Io(format!(
                "cannot tell what is left of the child's session: {reason}"
            ))),
        }
    }
}

/// Judges a recorded process, taking an identity that no longer matches (another boot, or
/// another start time at its PID in this boot and namespace) as proof that it is gone. Such a
/// process is never signalled: only [`identity::terminate`] signals, and it verifies again.
fn judged(record: &Record) -> Judgement {
    match identity::judge(record) {
        Judgement::Unknown(_) if identity::proven_gone(record).is_some() => Judgement::Exited,
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_reads_the_last_lines_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.out");
        assert_eq!(tail_lines(&path, 5).unwrap(), "");
        let body: String = (0..100_000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&path, body).unwrap();
        assert_eq!(tail_lines(&path, 2).unwrap(), "line 99998\nline 99999");
        let many = tail_lines(&path, 1_000_000).unwrap();
        assert!(many.len() as u64 <= TAIL_READ_LIMIT);
        assert!(many.starts_with("line "), "the torn first line is dropped");
    }

    #[test]
    fn tail_refuses_a_fifo_instead_of_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.out");
        let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates the node.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let err = tail_lines(&path, 5).unwrap_err();
        assert!(matches!(err, Error::Io(_)), "{err}");
    }
}
