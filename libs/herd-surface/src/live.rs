//! Typing only into a live child: no text reaches a shell that would run it.
//!
//! Every typed delivery — a steering message, a queued follow-up, an interrupt — goes through
//! [`deliver`], which proves first, right before the keys go out, that the child is the live
//! program the target's input reaches:
//!
//! 1. none of the files a child leaves once it has ended is there: the runner's exit status
//!    (`runs/<id>.runner-exit.json`), the completion sidecar (`<session>.exit`), the run's result;
//! 2. its recorded identity (`<session>.process.json`) names a process that is alive;
//! 3. no shell sentinel `__SUBAGENT_DONE_<code>__` is in the last [`SENTINEL_LINES`] of what the
//!    target shows;
//! 4. the surface says its input reaches that process ([`Surface::input_reaches`]): on Herdr, the
//!    pane's foreground process group is not its shell and holds the identity's process; on the
//!    other surfaces, the pane's (or the script's) own process still runs.
//!
//! Any of them failing is [`Error::NotLive`] (`conflict`): nothing is typed. A judgement that
//! cannot be made (an unreadable `/proc`) is an [`Error::Io`] (`unavailable`): nothing is typed
//! either.

use std::path::{Path, PathBuf};
use std::time::Instant;

use herd_core::identity::{self, Judgement, Record};
use herd_protocol::layout::Artifacts;
use herd_protocol::run::RunRecord;

use crate::{Error, Key, SENTINEL_LINES, Surface, Target};

/// A child as the proof of its life reads it: its run id, its runner's identity record and the
/// files written once it has ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Child {
    pub run_id: String,
    /// `<session>.process.json`, written by `herd-launch exec` before it becomes the runner.
    pub identity: PathBuf,
    /// Each file that is there only once the child has ended, with what it says.
    pub ended: Vec<(PathBuf, &'static str)>,
    /// When the run was created: a file of its end counts only when written then or later, since
    /// a resumed session keeps the completion sidecar of the run it continues.
    pub since_ms: u64,
}

impl Child {
    /// The child of `record` in `artifacts`.
    pub fn of(record: &RunRecord, artifacts: &Artifacts) -> Child {
        let files = record.session_files();
        Child {
            run_id: record.run_id.clone(),
            identity: files.process(),
            ended: vec![
                (
                    artifacts.runner_exit(&record.run_id),
                    "its runner's exit status is recorded",
                ),
                (files.exit(), "its completion sidecar is written"),
                (
                    artifacts.run_result(&record.run_id),
                    "its result is settled",
                ),
            ],
            since_ms: record.created_at_ms,
        }
    }

    fn not_live(&self, why: impl std::fmt::Display) -> Error {
        Error::NotLive(format!("run {} has ended ({why})", self.run_id))
    }

    /// Whether the child has ended, for what waits for its next turn (a queued follow-up): a
    /// file of its end is there, or its recorded runner has exited. A child whose launch has not
    /// recorded its runner yet has not ended: it is still to reach its first turn.
    pub fn not_ended(&self) -> Result<(), Error> {
        match self.running() {
            Err(Error::NotLive(_)) if !self.identity.exists() && !self.has_end_record() => Ok(()),
            Err(Error::Io(_)) => Ok(()),
            other => other.map(drop),
        }
    }

    /// Whether the child has not started yet: its launch has recorded no runner identity and
    /// no file of its end is there.
    pub fn starting(&self) -> bool {
        !self.identity.exists() && !self.has_end_record()
    }

    /// Waits, until `deadline`, for a child still starting to record its runner, so a delivery
    /// made right after its launch reaches it once it runs instead of being refused as not
    /// running. A child with a file of its end, or one that has recorded its runner, returns at
    /// once.
    fn wait_started(&self, deadline: Instant) {
        while !self.identity.exists() && !self.has_end_record() && Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    fn has_end_record(&self) -> bool {
        self.ended
            .iter()
            .any(|(path, _)| written_since(path, self.since_ms))
    }

    /// Proves from the child's files alone that it still runs, and returns its runner's identity:
    /// no file of its end is there and its recorded identity is alive.
    pub fn running(&self) -> Result<Record, Error> {
        if let Some((_, says)) = self
            .ended
            .iter()
            .find(|(path, _)| written_since(path, self.since_ms))
        {
            return Err(self.not_live(says));
        }
        let record = match Record::read(&self.identity) {
            Ok(Some(record)) => record,
            Ok(None) => {
                return Err(Error::NotLive(format!(
                    "run {} has no recorded runner identity: it is not shown to be running",
                    self.run_id
                )));
            }
            Err(err) => {
                return Err(Error::Io(format!(
                    "cannot read the identity of run {}: {err}",
                    self.run_id
                )));
            }
        };
        match identity::judge(&record) {
            Judgement::Alive => Ok(record),
            Judgement::Exited => Err(self.not_live(format_args!(
                "its runner, process {}, has exited",
                record.pid
            ))),
            Judgement::Unknown(reason) => match identity::proven_gone(&record) {
                Some(gone) => Err(self.not_live(gone)),
                None => Err(Error::Io(format!(
                    "cannot tell whether the runner of run {} still runs: {reason}",
                    self.run_id
                ))),
            },
        }
    }
}

/// Whether `path` names something written at `since_ms` or later. Only an absence, or a time
/// before `since_ms`, that is proven lets keys go out: a file whose time cannot be read counts.
fn written_since(path: &Path, since_ms: u64) -> bool {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(_) => true,
        Ok(meta) => meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .is_none_or(|d| d.as_millis() >= u128::from(since_ms)),
    }
}

/// Sends `keys` to `child` at `target`, once it is proven the live program the target's input
/// reaches (the module's four steps, the surface's last, right before the keys); otherwise
/// nothing is sent and the answer is [`Error::NotLive`], or [`Error::Io`] when it cannot be told.
pub fn deliver(
    surface: &dyn Surface,
    target: &Target,
    child: &Child,
    keys: &[Key],
    deadline: Instant,
) -> Result<(), Error> {
    prove_live(surface, target, child, deadline).map_err(|err| match err {
        Error::NotLive(why) => Error::NotLive(format!("{why}; nothing was typed into it")),
        other => other,
    })?;
    surface.send_keys(target, keys, deadline)
}

/// The proof [`deliver`] makes before it sends anything.
fn prove_live(
    surface: &dyn Surface,
    target: &Target,
    child: &Child,
    deadline: Instant,
) -> Result<(), Error> {
    child.wait_started(deadline);
    child.running()?;
    let shown = surface.read_tail(target, SENTINEL_LINES, deadline)?;
    if let Some(code) = find_sentinel(&shown) {
        return Err(child.not_live(format_args!(
            "its launch script's sentinel __SUBAGENT_DONE_{code}__ is on its screen"
        )));
    }
    // Read again: the screen may have been read just as the runner ended.
    let runner = child.running()?;
    match surface.input_reaches(target, &runner, deadline)? {
        Some(why) => Err(Error::NotLive(format!(
            "run {} is not what its input reaches ({why})",
            child.run_id
        ))),
        None => Ok(()),
    }
}

/// Finds the last shell sentinel `__SUBAGENT_DONE_<code>__` in `text` and returns its code.
pub fn find_sentinel(text: &str) -> Option<i32> {
    const PREFIX: &str = "__SUBAGENT_DONE_";
    let mut found = None;
    let mut rest = text;
    while let Some(idx) = rest.find(PREFIX) {
        let after = &rest[idx + PREFIX.len()..];
        let digits = after
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b'-')
            .count();
        if digits > 0 && after[digits..].starts_with("__") {
            if let Ok(code) = after[..digits].parse::<i32>() {
                found = Some(code);
            }
        }
        rest = after;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn child(dir: &Path) -> Child {
        Child {
            run_id: "r1".into(),
            identity: dir.join("s.jsonl.process.json"),
            ended: vec![(dir.join("r1.runner-exit.json"), "its runner exited")],
            since_ms: 0,
        }
    }

    #[test]
    fn a_child_with_a_file_of_its_end_or_no_live_identity_is_not_running() {
        let dir = tempfile::tempdir().unwrap();
        let c = child(dir.path());
        let err = c.running().unwrap_err();
        assert!(matches!(err, Error::NotLive(_)), "{err}");
        assert_eq!(err.code(), herd_core::ErrorCode::Conflict);

        let me = identity::capture(std::process::id(), "r1", &dir.path().join("s.jsonl")).unwrap();
        std::fs::write(&c.identity, me.to_json().unwrap()).unwrap();
        assert_eq!(c.running().unwrap().pid, std::process::id());

        std::fs::write(&c.ended[0].0, "{}").unwrap();
        let err = c.running().unwrap_err();
        assert!(
            err.to_string().contains("has ended (its runner exited)"),
            "{err}"
        );
        // A file of an earlier run of the same session (a resume) is not this run's end.
        let later = Child {
            since_ms: herd_core::time::now_ms() + 60_000,
            ..c
        };
        assert_eq!(later.running().unwrap().pid, std::process::id());
    }

    #[test]
    fn a_child_still_starting_has_not_ended_and_one_with_an_end_record_has() {
        let dir = tempfile::tempdir().unwrap();
        let c = child(dir.path());
        // No identity yet: not running, but not ended either (a follow-up waits for its turn).
        assert!(c.running().is_err());
        c.not_ended().unwrap();
        std::fs::write(&c.ended[0].0, "{}").unwrap();
        assert!(matches!(c.not_ended(), Err(Error::NotLive(_))));
    }

    #[test]
    fn sentinel_takes_the_last_complete_marker() {
        assert_eq!(find_sentinel("x\n__SUBAGENT_DONE_0__\n"), Some(0));
        assert_eq!(
            find_sentinel("__SUBAGENT_DONE_1__ then __SUBAGENT_DONE_143__"),
            Some(143)
        );
        assert_eq!(find_sentinel("__SUBAGENT_DONE_12"), None);
        assert_eq!(find_sentinel("echo __SUBAGENT_DONE_${rc}__"), None);
        assert_eq!(find_sentinel("echo __SUBAGENT_DONE_$?__"), None);
    }
}
