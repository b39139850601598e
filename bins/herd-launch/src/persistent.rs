//! `herd-launch send`: the next task to an idle persistent specialist (docs/protocol.md, "A
//! persistent specialist's files"; docs/lifecycle.md, "Persistent specialists").
//!
//! The files it reads and writes — the ledger, the task inbox and the child's task events — are
//! `herd_protocol::persistent`'s. A specialist is busy while the last task dispatched to its
//! generation has no task event. A send to a busy specialist records `rejected-busy` and queues
//! nothing. Sends are serialised by an advisory lock on `<session>.ledger.lock`, so two senders
//! never both find it idle.

use std::path::{Path, PathBuf};
use std::time::Instant;

use herd_core::{Error, ErrorCode};
use herd_protocol::layout::Artifacts;
use herd_protocol::persistent::{
    Activity, At, InboxKind, LOCK_WAIT, LedgerLine, Outcome, activity, write_inbox,
};
use herd_protocol::run::{LaunchStatus, RunRecord, Selector};

use herd_protocol::launch::policy::Policy;

/// The longest message a send accepts.
pub const MESSAGE_LIMIT: usize = 512 * 1024;

/// Appends one ledger line, timed now.
pub fn append_ledger(
    ledger: &Path,
    task: &str,
    outcome: Outcome,
    generation: &str,
    logical_id: &str,
    policy_hash: &str,
) -> Result<(), Error> {
    LedgerLine {
        task: task.to_owned(),
        outcome,
        generation: generation.to_owned(),
        logical_id: logical_id.to_owned(),
        policy_hash: policy_hash.to_owned(),
        at: At::now(),
    }
    .append(ledger)
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
/// Refused (exit 2) for a run that is not a persistent specialist or never started; one that has
/// ended (the proof of [`herd_surface::Child::running`]) is `conflict` (exit 7), as is a busy one,
/// which records `rejected-busy`.
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
    let (record, policy) = taking_tasks(artifacts, selector)?;
    let files = record.session_files();
    let _lock = herd_core::lock::exclusive(&files.ledger_lock(), Instant::now() + LOCK_WAIT)
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
                Outcome::RejectedBusy,
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
                Outcome::Dispatched,
                &policy.generation_id,
                &policy.logical_id,
                &policy.hash(),
            )?;
            let inbox = write_inbox(&files, InboxKind::Task, &task_id, message)?;
            Ok(Sent {
                record,
                task_id,
                inbox,
            })
        }
    }
}

/// The persistent specialist `selector` names and its launch policy, if it can take a task: it
/// launched, its process runs, and its policy is a persistent one.
fn taking_tasks(
    artifacts: &Artifacts,
    selector: &Selector<'_>,
) -> Result<(herd_protocol::run::RunRecord, Policy), Error> {
    let record = herd_protocol::run::find(artifacts, selector, |r| r.persistent)?;
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
    // The same proof of life as every typed delivery: a specialist that has ended takes nothing.
    herd_surface::Child::of(&record, artifacts)
        .running()
        .map_err(|err| {
            let mut err = Error::from(err).with_field("run");
            err.message = format!(
                "{}: persistent specialist {} takes no task; spawn a new one",
                err.message, record.name
            );
            err
        })?;
    let policy = Policy::read_required(&files)?;
    if !policy.persistent {
        return Err(refuse("has no persistent launch policy"));
    }
    Ok((record, policy))
}

#[cfg(test)]
mod tests {
    use herd_core::sidecar;
    use herd_protocol::layout::SessionFiles;

    use super::*;

    #[test]
    fn activity_follows_the_last_dispatched_task_of_the_generation() {
        let dir = tempfile::tempdir().unwrap();
        let files = SessionFiles::new(dir.path().join("s.jsonl"));
        let append = |task, outcome, generation| {
            append_ledger(&files.ledger(), task, outcome, generation, "l", "").unwrap();
        };
        assert_eq!(activity(&files, "g1").unwrap(), Activity::Idle);
        append("t1", Outcome::Dispatched, "g1");
        append("t9", Outcome::Dispatched, "g0");
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
        append("t2", Outcome::StopPending, "g1");
        assert_eq!(activity(&files, "g1").unwrap(), Activity::Stopping);
    }

    #[test]
    fn inbox_entries_take_increasing_sequence_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let files = SessionFiles::new(dir.path().join("s.jsonl"));
        let first = write_inbox(&files, InboxKind::Task, "t1", "hello").unwrap();
        assert_eq!(first, files.inbox(1));
        std::fs::rename(&first, format!("{}.consuming", first.display())).unwrap();
        assert_eq!(
            write_inbox(&files, InboxKind::Task, "t2", "again").unwrap(),
            files.inbox(2)
        );
        let entry: serde_json::Value =
            serde_json::from_slice(&std::fs::read(files.inbox(2)).unwrap()).unwrap();
        assert_eq!(entry["type"], "task");
        assert_eq!(entry["message"], "again");
        assert_eq!(entry["version"], 1);
    }
}
