//! A persistent specialist's files, in pi-herdr-agents' formats (docs/protocol.md, "A
//! persistent specialist's files").
//!
//! - The ledger `<session>.ledger` (JSON Lines the host appends) records each task herd issued
//!   and what became of it: [`LedgerLine`].
//! - A task reaches the child through an inbox file `<session>.task-inbox.<12 digits>.json`,
//!   which the child claims and deletes: [`InboxEntry`].
//! - The child appends task events to `<session>.tasks` when a task ends or needs help:
//!   [`TaskEvent`].
//!
//! A specialist is busy while the last task dispatched to its generation has no task event
//! ([`activity`]). Writers of the ledger serialise on an advisory lock of `<session>.ledger.lock`,
//! waiting at most [`LOCK_WAIT`] for another writer.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::layout::SessionFiles;
use herd_core::{Error, ErrorCode, sidecar};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The version of an inbox entry and of a task event.
pub const VERSION: u64 = 1;
/// How much of the end of the ledger and of the task events a reader reads.
pub const TAIL_LIMIT: u64 = 4 * 1024 * 1024;
/// The largest task inbox file the child reads.
pub const INBOX_READ_LIMIT: u64 = 1024 * 1024;
/// How long a writer of the ledger waits for another writer's lock.
pub const LOCK_WAIT: Duration = Duration::from_secs(2);

/// What became of a task, as one ledger line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Dispatched,
    Delivered,
    RejectedBusy,
    HelpRequested,
    StopPending,
    StopFailed,
    Stopped,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Dispatched => "dispatched",
            Outcome::Delivered => "delivered",
            Outcome::RejectedBusy => "rejected-busy",
            Outcome::HelpRequested => "help-requested",
            Outcome::StopPending => "stop-pending",
            Outcome::StopFailed => "stop-failed",
            Outcome::Stopped => "stopped",
        }
    }
}

/// When a ledger line was written: ISO 8601 UTC in the lines herd-launch appends, milliseconds
/// since the epoch in those herd-watch appends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum At {
    Iso(
        #[schemars(pattern(
            r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z$"
        ))]
        String,
    ),
    Ms(u64),
}

impl At {
    /// Now, as herd-launch writes it.
    pub fn now() -> At {
        At::Iso(herd_core::time::iso(herd_core::time::now_ms()))
    }

    /// Milliseconds since the epoch; `None` for a time of another shape.
    pub fn ms(&self) -> Option<u64> {
        match self {
            At::Iso(text) => herd_core::time::parse_iso(text),
            At::Ms(ms) => Some(*ms),
        }
    }
}

/// One line of `<session>.ledger`. The child derives its current task as the last `dispatched`
/// line of its generation without a matching task event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(title = "TaskLedger")]
pub struct LedgerLine {
    pub task: String,
    pub outcome: Outcome,
    pub generation: String,
    pub logical_id: String,
    /// The SHA-256 of the launch policy the task ran under; empty where none applies.
    #[schemars(pattern("^([0-9a-f]{64})?$"))]
    pub policy_hash: String,
    pub at: At,
}

impl LedgerLine {
    /// Appends the line to `ledger`.
    pub fn append(&self, ledger: &Path) -> Result<(), Error> {
        let line = serde_json::to_string(self).map_err(|e| Error::internal(e.to_string()))?;
        Ok(sidecar::append_line(ledger, &line)?)
    }
}

/// What an inbox entry asks of the child.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum InboxKind {
    Task,
    Stop,
}

/// `<session>.task-inbox.<seq>.json` (12-digit sequence), one entry of a specialist's inbox,
/// written atomically by the host. The child claims the lowest one by renaming it, then deletes
/// it; an invalid one is renamed `….invalid`, never silently deleted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "TaskInbox", transform = version_const)]
pub struct InboxEntry {
    /// [`VERSION`].
    pub version: u64,
    #[serde(rename = "type")]
    pub kind: InboxKind,
    pub task: String,
    pub message: String,
    #[schemars(pattern(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z$"))]
    pub at: String,
}

/// What a task event says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TaskEventKind {
    TaskDone,
    HelpRequest,
}

/// One line of `<session>.tasks`, appended by a persistent child when a task ends or needs
/// help. Lines of another version or type are skipped; a task the host did not issue is
/// ignored with one notice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "TaskEvent", transform = version_const)]
pub struct TaskEvent {
    /// [`VERSION`].
    pub version: u64,
    #[serde(rename = "type")]
    pub kind: TaskEventKind,
    #[schemars(pattern(crate::layout::RUN_ID_PATTERN))]
    pub task: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub generation: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub at: Option<String>,
    /// The task's report, or the question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub message: Option<String>,
}

/// Says in the schema that `version` is [`VERSION`], which serde's derive cannot: a `u64` field
/// holds it, and a reader skips a line of another version.
fn version_const(schema: &mut schemars::Schema) {
    if let Some(serde_json::Value::Object(properties)) = schema.get_mut("properties") {
        properties.insert("version".into(), serde_json::json!({"const": VERSION}));
    }
}

/// Reads the lines of the last [`TAIL_LIMIT`] bytes of `path` that parse as `T` (a line still
/// being written, without its newline, is left out; a line of another shape is skipped, as a
/// child's file may hold one).
pub fn read_lines<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>, Error> {
    let text = sidecar::read_tail_lines(path, TAIL_LIMIT)?.unwrap_or_default();
    Ok(text
        .split_inclusive('\n')
        .filter(|l| l.ends_with('\n'))
        .filter_map(|l| serde_json::from_str::<T>(l).ok())
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
    let ledger: Vec<LedgerLine> = read_lines(&files.ledger())?;
    let events: Vec<TaskEvent> = read_lines(&files.tasks())?;
    let mine = ledger.iter().filter(|l| l.generation == generation);
    if mine
        .clone()
        .any(|l| matches!(l.outcome, Outcome::StopPending | Outcome::Stopped))
    {
        return Ok(Activity::Stopping);
    }
    let Some(current) = mine.rev().find(|l| l.outcome == Outcome::Dispatched) else {
        return Ok(Activity::Idle);
    };
    let finished = events.iter().any(|e| {
        e.version == VERSION
            && e.generation.as_deref() == Some(generation)
            && e.task == current.task
    });
    Ok(if finished {
        Activity::Idle
    } else {
        Activity::Busy(current.task.clone())
    })
}

/// Writes an inbox entry atomically, under the next sequence number; returns its path.
pub fn write_inbox(
    files: &SessionFiles,
    kind: InboxKind,
    task: &str,
    message: &str,
) -> Result<PathBuf, Error> {
    let path = files.inbox(next_inbox_seq(files)?);
    let entry = InboxEntry {
        version: VERSION,
        kind,
        task: task.to_owned(),
        message: message.to_owned(),
        at: herd_core::time::iso(herd_core::time::now_ms()),
    };
    let mut bytes = serde_json::to_vec(&entry).map_err(|e| Error::internal(e.to_string()))?;
    bytes.push(b'\n');
    sidecar::write_atomic(&path, &bytes)?;
    Ok(path)
}

/// The next inbox sequence number: one past every inbox file (claimed or not) beside the session.
fn next_inbox_seq(files: &SessionFiles) -> Result<u64, Error> {
    let session = files.session();
    let dir = session.parent().unwrap_or(Path::new("."));
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
    let mut max = 0;
    for entry in entries.flatten() {
        if let Some(seq) = files.inbox_seq(&entry.file_name()) {
            max = max.max(seq);
        }
    }
    Ok(max + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_specialist_is_busy_until_its_task_has_an_event_and_stopping_once_asked_to_stop() {
        let dir = tempfile::tempdir().unwrap();
        let files = SessionFiles::new(dir.path().join("s.jsonl"));
        let line = |task: &str, outcome| LedgerLine {
            task: task.into(),
            outcome,
            generation: "g1".into(),
            logical_id: "l1".into(),
            policy_hash: String::new(),
            at: At::now(),
        };
        assert_eq!(activity(&files, "g1").unwrap(), Activity::Idle);
        line("t1", Outcome::Dispatched)
            .append(&files.ledger())
            .unwrap();
        assert_eq!(activity(&files, "g1").unwrap(), Activity::Busy("t1".into()));
        assert_eq!(
            activity(&files, "g2").unwrap(),
            Activity::Idle,
            "another generation"
        );
        // A child's line of another shape is skipped, not an error.
        sidecar::append_line(&files.tasks(), "{\"version\":2}").unwrap();
        let done = TaskEvent {
            version: VERSION,
            kind: TaskEventKind::TaskDone,
            task: "t1".into(),
            generation: Some("g1".into()),
            at: None,
            message: Some("report".into()),
        };
        sidecar::append_line(&files.tasks(), &serde_json::to_string(&done).unwrap()).unwrap();
        assert_eq!(activity(&files, "g1").unwrap(), Activity::Idle);
        line("t1", Outcome::StopPending)
            .append(&files.ledger())
            .unwrap();
        assert_eq!(activity(&files, "g1").unwrap(), Activity::Stopping);
    }

    #[test]
    fn inbox_entries_take_the_next_sequence_and_the_format_of_the_child() {
        let dir = tempfile::tempdir().unwrap();
        let files = SessionFiles::new(dir.path().join("s.jsonl"));
        let first = write_inbox(&files, InboxKind::Task, "t1", "do it").unwrap();
        let second = write_inbox(&files, InboxKind::Stop, "", "").unwrap();
        assert_eq!(first, files.inbox(1));
        assert_eq!(second, files.inbox(2));
        let entry: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&second).unwrap()).unwrap();
        assert_eq!(entry["version"], 1);
        assert_eq!(entry["type"], "stop");
        let ledger = LedgerLine {
            task: "t1".into(),
            outcome: Outcome::RejectedBusy,
            generation: "g".into(),
            logical_id: "l".into(),
            policy_hash: String::new(),
            at: At::Ms(5),
        };
        let text = serde_json::to_value(&ledger).unwrap();
        assert_eq!(text["outcome"], "rejected-busy");
        assert_eq!(text["logicalId"], "l");
        assert_eq!(text["at"], 5);
    }
}
