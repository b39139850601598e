//! Persistent specialists: the delivery ledger, the task inbox and `herd-launch send`
//! (protocol.md §1.11).
//!
//! - The ledger `<session>.ledger` (host-written JSON Lines) records each task herd issued:
//!   `{task, outcome, generation, logicalId, policyHash, at}` with `outcome` one of
//!   `dispatched`, `delivered`, `rejected-busy`, `help-requested`, `stop-pending`, `stop-failed`,
//!   `stopped`.
//! - The child appends task events to `<session>.tasks`:
//!   `{version:1, type:"task-done"|"help-request", task, generation, at, message?}`.
//! - A task reaches the child through an inbox file `<session>.task-inbox.<12 digits>.json`,
//!   `{version:1, type:"task", task, message, at}`, which the child claims and deletes.
//!
//! A specialist is busy while the last task dispatched to its generation has no task event. A send
//! to a busy specialist records `rejected-busy` and queues nothing. Sends are serialised by an
//! advisory lock on `<session>.ledger.lock`, so two senders never both find it idle.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use herd_core::identity::{self, Judgement};
use herd_core::layout::{Artifacts, SessionFiles};
use herd_core::run::{LaunchStatus, RunRecord, Selector};
use herd_core::{Error, ErrorCode, sidecar};

use crate::policy::Policy;

/// How much of the end of the ledger and of the task events a send reads.
pub const TAIL_LIMIT: u64 = 4 * 1024 * 1024;
/// The longest message a send accepts.
pub const MESSAGE_LIMIT: usize = 512 * 1024;
/// How long a send waits for another sender's lock.
pub const LOCK_WAIT: Duration = Duration::from_secs(2);

/// Appends one ledger line.
pub fn append_ledger(
    ledger: &Path,
    task: &str,
    outcome: &str,
    generation: &str,
    logical_id: &str,
    policy_hash: &str,
) -> Result<(), Error> {
    let line = serde_json::json!({
        "task": task,
        "outcome": outcome,
        "generation": generation,
        "logicalId": logical_id,
        "policyHash": policy_hash,
        "at": herd_core::time::iso(herd_core::time::now_ms()),
    });
    Ok(sidecar::append_line(ledger, &line.to_string())?)
}

/// Reads the complete JSON lines of the last [`TAIL_LIMIT`] bytes of `path` (a line still being
/// written, without its newline, is left out).
fn read_lines(path: &Path) -> Result<Vec<serde_json::Value>, Error> {
    let text = sidecar::read_tail_lines(path, TAIL_LIMIT)?.unwrap_or_default();
    Ok(text
        .split_inclusive('\n')
        .filter(|l| l.ends_with('\n'))
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(serde_json::Value::is_object)
        .collect())
}

/// What the ledger and the task events say about a specialist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Activity {
    Idle,
    /// Working on this task.
    Busy(String),
    /// A stop was requested or confirmed.
    Stopping,
}

/// Derives the activity of `generation` from its ledger and task events.
pub fn activity(files: &SessionFiles, generation: &str) -> Result<Activity, Error> {
    let ledger = read_lines(&files.ledger())?;
    let events = read_lines(&files.tasks())?;
    let text = |v: &serde_json::Value, k: &str| {
        v.get(k)
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    let mine = |v: &serde_json::Value| text(v, "generation").as_deref() == Some(generation);
    if ledger.iter().filter(|v| mine(v)).any(|v| {
        matches!(
            text(v, "outcome").as_deref(),
            Some("stop-pending" | "stopped")
        )
    }) {
        return Ok(Activity::Stopping);
    }
    let Some(current) = ledger
        .iter()
        .rev()
        .find(|v| mine(v) && text(v, "outcome").as_deref() == Some("dispatched"))
        .and_then(|v| text(v, "task"))
    else {
        return Ok(Activity::Idle);
    };
    let finished = events.iter().any(|v| {
        mine(v)
            && text(v, "task").as_deref() == Some(current.as_str())
            && matches!(
                text(v, "type").as_deref(),
                Some("task-done" | "help-request")
            )
    });
    Ok(if finished {
        Activity::Idle
    } else {
        Activity::Busy(current)
    })
}

/// The next inbox sequence number: one past every inbox file (claimed or not) beside the session.
fn next_inbox_seq(files: &SessionFiles) -> Result<u64, Error> {
    let session = files.session();
    let dir = session.parent().unwrap_or(Path::new("."));
    let prefix = format!(
        "{}.task-inbox.",
        session
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    );
    let mut max = 0;
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(1),
        Err(e) => {
            return Err(Error::new(
                ErrorCode::Unavailable,
                format!("cannot list {}: {e}", dir.display()),
            ));
        }
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(rest) = name.strip_prefix(&prefix) {
            if let Some(seq) = rest.get(..12).and_then(|d| d.parse::<u64>().ok()) {
                max = max.max(seq);
            }
        }
    }
    Ok(max + 1)
}

/// Writes an inbox entry atomically; returns its path.
pub fn write_inbox(
    files: &SessionFiles,
    kind: &str,
    task: &str,
    message: &str,
) -> Result<PathBuf, Error> {
    let seq = next_inbox_seq(files)?;
    let path = files.inbox(seq);
    let entry = serde_json::json!({
        "version": 1,
        "type": kind,
        "task": task,
        "message": message,
        "at": herd_core::time::iso(herd_core::time::now_ms()),
    });
    let mut bytes = serde_json::to_vec(&entry).map_err(|e| Error::internal(e.to_string()))?;
    bytes.push(b'\n');
    sidecar::write_atomic(&path, &bytes)?;
    Ok(path)
}

/// What a send did.
#[derive(Debug, Clone)]
pub struct Sent {
    pub record: RunRecord,
    pub task_id: String,
    pub inbox: PathBuf,
}

/// Sends the next task to an idle persistent specialist.
///
/// Refused (exit 2) for a run that is not a live persistent specialist; a busy one records
/// `rejected-busy` and the error is `conflict` (exit 7).
pub fn send(artifacts: &Artifacts, selector: &Selector<'_>, message: &str) -> Result<Sent, Error> {
    if message.trim().is_empty() {
        return Err(Error::invalid("message", "the message is empty"));
    }
    if message.len() > MESSAGE_LIMIT {
        return Err(Error::invalid(
            "message",
            format!("the message is longer than {MESSAGE_LIMIT} bytes"),
        ));
    }
    let record = herd_core::run::find(artifacts, selector, |r| r.persistent)?;
    if !record.persistent {
        return Err(Error::invalid(
            "run",
            format!("run {} is not a persistent specialist", record.run_id),
        ));
    }
    let refuse = |why: &str| {
        Error::invalid(
            "run",
            format!(
                "persistent specialist {} ({}) {why}; spawn a new one",
                record.name, record.run_id
            ),
        )
    };
    match record.status {
        LaunchStatus::Launched => {}
        LaunchStatus::Uncertain => {
            return Err(Error::new(
                ErrorCode::Conflict,
                format!(
                    "the launch of {} ({}) is uncertain; it cannot take follow-up tasks",
                    record.name, record.run_id
                ),
            )
            .with_field("run"));
        }
        LaunchStatus::Pending | LaunchStatus::Failed => return Err(refuse("never started")),
    }
    let files = record.session_files();
    if artifacts.run_result(&record.run_id).exists() || files.exit().exists() {
        return Err(refuse("has ended"));
    }
    if herd_surface::read_runner_exit(&herd_surface::runner_exit_file(artifacts, &record.run_id))
        .is_some()
    {
        return Err(refuse("has exited"));
    }
    if let Ok(Some(runner)) = identity::Record::read(&files.process()) {
        if identity::judge(&runner) == Judgement::Exited {
            return Err(refuse("has exited"));
        }
    }
    let policy = Policy::read(&files.policy())?;
    if !policy.persistent {
        return Err(refuse("has no persistent launch policy"));
    }
    let mut lock_path = files.ledger().into_os_string();
    lock_path.push(".lock");
    let _lock = herd_core::lock::exclusive(Path::new(&lock_path), Instant::now() + LOCK_WAIT)
        .map_err(|e| match e {
            herd_core::lock::Error::Held { path } => Error::new(
                ErrorCode::Conflict,
                format!("another send holds {}; try again", path.display()),
            ),
            other => other.into(),
        })?;
    let task_id = format!("task-{}", crate::names::random_hex(8)?);
    match activity(&files, &policy.generation_id)? {
        // A pending or unconfirmed stop keeps its evidence; another stop makes another check.
        Activity::Stopping => Err(Error::invalid(
            "run",
            format!(
                "persistent specialist {} ({}) is stopping or stopped and takes no follow-up work; stop it again for another exit check, or spawn a new one",
                record.name, record.run_id
            ),
        )),
        Activity::Busy(current) => {
            append_ledger(
                &files.ledger(),
                &task_id,
                "rejected-busy",
                &policy.generation_id,
                &policy.logical_id,
                &policy.hash(),
            )?;
            Err(Error::new(
                ErrorCode::Conflict,
                format!(
                    "persistent specialist {} ({}) is busy with {current}; the task was recorded as rejected-busy, nothing was queued",
                    record.name, record.run_id
                ),
            )
            .with_field("run"))
        }
        Activity::Idle => {
            // The ledger first: a crash before the inbox is written leaves the specialist looking
            // busy (recoverable), never working on a task herd does not know about.
            append_ledger(
                &files.ledger(),
                &task_id,
                "dispatched",
                &policy.generation_id,
                &policy.logical_id,
                &policy.hash(),
            )?;
            let inbox = write_inbox(&files, "task", &task_id, message)?;
            Ok(Sent {
                record,
                task_id,
                inbox,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activity_follows_the_last_dispatched_task_of_the_generation() {
        let dir = tempfile::tempdir().unwrap();
        let files = SessionFiles::new(dir.path().join("s.jsonl"));
        assert_eq!(activity(&files, "g1").unwrap(), Activity::Idle);
        append_ledger(&files.ledger(), "t1", "dispatched", "g1", "l", "h").unwrap();
        append_ledger(&files.ledger(), "t9", "dispatched", "g0", "l", "h").unwrap();
        assert_eq!(activity(&files, "g1").unwrap(), Activity::Busy("t1".into()));
        sidecar::append_line(&files.tasks(), "not json").unwrap();
        sidecar::append_line(
            &files.tasks(),
            r#"{"version":1,"type":"task-done","task":"t1","generation":"g0"}"#,
        )
        .unwrap();
        assert_eq!(
            activity(&files, "g1").unwrap(),
            Activity::Busy("t1".into()),
            "another generation's event"
        );
        sidecar::append_line(
            &files.tasks(),
            r#"{"version":1,"type":"task-done","task":"t1","generation":"g1"}"#,
        )
        .unwrap();
        assert_eq!(activity(&files, "g1").unwrap(), Activity::Idle);
        append_ledger(&files.ledger(), "t2", "stop-pending", "g1", "l", "h").unwrap();
        assert_eq!(activity(&files, "g1").unwrap(), Activity::Stopping);
    }

    #[test]
    fn inbox_entries_take_increasing_sequence_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let files = SessionFiles::new(dir.path().join("s.jsonl"));
        let first = write_inbox(&files, "task", "t1", "hello").unwrap();
        assert_eq!(first, files.inbox(1));
        std::fs::rename(&first, format!("{}.consuming", first.display())).unwrap();
        assert_eq!(
            write_inbox(&files, "task", "t2", "again").unwrap(),
            files.inbox(2)
        );
        let entry: serde_json::Value =
            serde_json::from_slice(&std::fs::read(files.inbox(2)).unwrap()).unwrap();
        assert_eq!(entry["type"], "task");
        assert_eq!(entry["message"], "again");
        assert_eq!(entry["version"], 1);
    }
}
