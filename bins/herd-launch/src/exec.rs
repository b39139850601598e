//! `herd-launch exec`: record this process's identity beside the session, then become the
//! runner.
//!
//! The launch script runs `herd-launch exec --identity <session>.process.json --run-id R
//! --session S -- <runner argv>`. This process captures its own PID and kernel start time, writes
//! the record once, and replaces itself with the runner (exec, not spawn): the recorded identity is
//! the runner's own, so herd-watch can later verify and signal exactly that process.

use std::ffi::OsString;
use std::path::Path;

use herd_core::identity::{self, Judgement, Record};
use herd_core::{Error, ErrorCode, subprocess};
use herd_protocol::layout::validate_run_id;

/// Writes the identity record of this process for `run_id`.
///
/// A record already there is kept when it names this very process (a repeated call) and replaced
/// only when its process has exited (a resumed session reuses its session file). A record of a
/// live other process is an error: two runners must never share one session.
pub fn record_identity(
    identity_file: &Path,
    run_id: &str,
    session: &Path,
) -> Result<Record, Error> {
    validate_run_id(run_id)?;
    let me = identity::capture(std::process::id(), run_id, session)?;
    for _ in 0..2 {
        if me.write_once(identity_file)? {
            return Ok(me);
        }
        let existing = match Record::read(identity_file) {
            Ok(Some(existing)) => existing,
            // It vanished between the two calls: try again.
            Ok(None) => continue,
            Err(_) => {
                return Err(Error::new(
                    ErrorCode::Conflict,
                    format!(
                        "{} holds an unreadable identity record; remove it by hand",
                        identity_file.display()
                    ),
                ));
            }
        };
        if existing.pid == me.pid
            && existing.start_time == me.start_time
            && existing.boot_id == me.boot_id
        {
            return Ok(me);
        }
        match identity::judge(&existing) {
            Judgement::Exited => {
                std::fs::remove_file(identity_file).map_err(|e| {
                    Error::new(
                        ErrorCode::Unavailable,
                        format!("cannot replace {}: {e}", identity_file.display()),
                    )
                })?;
            }
            other => {
                return Err(Error::new(
                    ErrorCode::Conflict,
                    format!(
                        "{} records process {} of run {}, which is {other}; refusing to run a second child on this session",
                        identity_file.display(),
                        existing.pid,
                        existing.id
                    ),
                ));
            }
        }
    }
    Err(Error::new(
        ErrorCode::Conflict,
        format!("{} keeps changing", identity_file.display()),
    ))
}

/// Records the identity and execs `argv`. Returns only on failure, with the exit code the shell
/// convention gives it (126: cannot run, 127: not found).
pub fn exec(
    identity_file: &Path,
    run_id: &str,
    session: &Path,
    sandbox: Sandbox<'_>,
    argv: &[OsString],
) -> (Error, i32) {
    let Sandbox {
        scope_signals,
        sandboxed,
        relay,
    } = sandbox;
    if let Err(err) = record_identity(identity_file, run_id, session) {
        return (err, 125);
    }
    // A confined child's signals stay inside its sandbox; a kernel that refuses runs nothing.
    if scope_signals {
        if let Err(err) = herd_sandbox::landlock::scope_signals() {
            return (
                Error::new(
                    ErrorCode::Unavailable,
                    format!("cannot keep the sandbox's signals inside (Landlock): {err}"),
                ),
                126,
            );
        }
    }
    // The allowlist's relay, outside the sandbox this process becomes; it ends with it. Started
    // after the scoping, in the same domain: the kernel's parent-death signal is a signal too.
    if let Some(relay) = relay {
        if let Err(err) = crate::net::start_relay(&relay) {
            return (err, 126);
        }
    }
    if sandboxed {
        // A terminal's Ctrl+C (or Ctrl+\) reaches the whole foreground group: bubblewrap would
        // die of it and take the sandbox with it. It ignores them; `herd-launch enter` inside
        // gives them back to the child, which then handles them as it would unconfined.
        set_interrupts(libc::SIG_IGN);
    }
    become_runner(argv)
}

/// What `herd-launch exec` does around a confined runner.
pub struct Sandbox<'a> {
    /// Keep the runner's signals inside (Landlock's scoping) before becoming it.
    pub scope_signals: bool,
    /// The runner is bubblewrap.
    pub sandboxed: bool,
    /// The allowlist's relay to start outside.
    pub relay: Option<crate::net::RelayArgs<'a>>,
}

/// Sets the disposition of SIGINT and SIGQUIT (`SIG_IGN` or `SIG_DFL`), which an exec keeps.
pub fn set_interrupts(disposition: libc::sighandler_t) {
    for signal in [libc::SIGINT, libc::SIGQUIT] {
        // SAFETY: setting a signal's disposition to a constant touches no memory of ours.
        unsafe {
            libc::signal(signal, disposition);
        }
    }
}

/// Replaces this process with `argv`. Returns only on failure, with the exit code the shell
/// convention gives it (126: cannot run, 127: not found).
pub fn become_runner(argv: &[OsString]) -> (Error, i32) {
    let err = subprocess::exec_replace(argv);
    let code = if err.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    };
    let program = argv
        .first()
        .map_or_else(String::new, |p| Path::new(p).display().to_string());
    (
        Error::new(
            ErrorCode::Unavailable,
            format!("cannot run `{program}`: {err}"),
        ),
        code,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_is_this_process_and_a_live_foreign_one_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.jsonl.process.json");
        let session = dir.path().join("s.jsonl");
        let me = record_identity(&file, "ab12", &session).unwrap();
        assert_eq!(me.pid, std::process::id());
        // Again from the same process: the same record.
        assert_eq!(record_identity(&file, "ab12", &session).unwrap(), me);
        // A record of another live process (our parent) is never replaced.
        let parent = std::os::unix::process::parent_id();
        let foreign = identity::capture(parent, "zz99", &session).unwrap();
        std::fs::remove_file(&file).unwrap();
        assert!(foreign.write_once(&file).unwrap());
        let err = record_identity(&file, "ab12", &session).unwrap_err();
        assert_eq!(err.code, ErrorCode::Conflict);
        assert_eq!(Record::read(&file).unwrap().unwrap(), foreign);
    }

    #[test]
    fn a_record_of_an_exited_process_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.jsonl.process.json");
        let session = dir.path().join("s.jsonl");
        let mut stale = identity::capture(std::process::id(), "old1", &session).unwrap();
        // The same PID with another start time: a process that is gone (judged unknown, so the
        // record must be one of an exited process to be replaced: use a PID that cannot exist).
        stale.pid = 4_194_304 - 1;
        assert!(stale.write_once(&file).unwrap());
        let me = record_identity(&file, "new1", &session).unwrap();
        assert_eq!(Record::read(&file).unwrap().unwrap(), me);
    }
}
