//! A persistent specialist's task results (docs/lifecycle.md, "Persistent specialists";
//! docs/protocol.md, "A persistent specialist's files").
//!
//! The child appends an event to `<session>.tasks` when a task ends (`task-done`) or asks for
//! help (`help-request`). Each event for a task the host issued — a `dispatched` line of the
//! ledger `<session>.ledger` — becomes one result with its own files
//! (`runs/<run-id>.task-<task>.result.json`), settled and delivered exactly once like a run's
//! own result, and the ledger records `delivered` or `help-requested`. Events for tasks the host
//! did not issue change nothing; the first one produces a single notice.

use std::collections::HashMap;
use std::path::Path;

use herd_core::{Error, time::now_ms};
use herd_protocol::layout::{Artifacts, SessionFiles, validate_run_id};
use herd_protocol::persistent::{
    self, At, LedgerLine, Outcome as TaskOutcome, TaskEvent as ChildEvent, TaskEventKind,
};
use herd_protocol::run::RunRecord;

use crate::delivery::{self};
use crate::message::Ending;
use herd_protocol::result::Outcome;
use herd_protocol::result::RunResult;

/// One task event of the child.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskEvent {
    pub task: String,
    pub help: bool,
    pub message: String,
}

/// What one pass over a specialist's task events found.
#[derive(Debug, Default)]
pub struct Pass {
    /// Results settled now or earlier and not yet delivered (a delivered task is skipped).
    pub results: Vec<RunResult>,
    /// Whether an event named a task the host never issued.
    pub foreign: bool,
}

/// The child's task events that parse, from the end of `<session>.tasks`: those of the version
/// this build knows (a line of another version or type is skipped).
fn events(files: &SessionFiles) -> Vec<ChildEvent> {
    persistent::read_lines::<ChildEvent>(&files.tasks())
        .unwrap_or_default()
        .into_iter()
        .filter(|event| event.version == persistent::VERSION)
        .collect()
}

/// Settles a result for every task event of `record` that has none yet.
pub fn pass(artifacts: &Artifacts, record: &RunRecord) -> Result<Pass, Error> {
    let files = record.session_files();
    let issued: HashMap<String, LedgerLine> = ledger(&files)
        .into_iter()
        .filter(|l| l.outcome == TaskOutcome::Dispatched)
        .map(|l| (l.task.clone(), l))
        .collect();
    let mut pass = Pass::default();
    for event in events(&files) {
        let task = event.task.as_str();
        if !issued.contains_key(task) || validate_run_id(task).is_err() {
            pass.foreign = true;
            continue;
        }
        // A delivered task is done with: reading its result and taking its lock again on every
        // tick would only cost.
        if delivery::is_task_delivered(artifacts, &record.run_id, Some(task)) {
            continue;
        }
        // A task result that cannot be read is settled failed in its place; one that still
        // cannot be read is this task's alone: the others go on.
        let Ok(settled) = delivery::load_or_settle(artifacts, record, Some(task)) else {
            continue;
        };
        if settled.is_none() {
            // What this task cost: the session's usage since the task before it settled.
            let usage = crate::usage::task(artifacts, record, task);
            let result = build(
                record,
                &TaskEvent {
                    task: task.to_owned(),
                    help: event.kind == TaskEventKind::HelpRequest,
                    message: event.message.clone().unwrap_or_default(),
                },
                usage,
            );
            delivery::settle(artifacts, &result)?;
        }
        if let Ok(Some(result)) = delivery::load_or_settle(artifacts, record, Some(task)) {
            pass.results.push(result);
        }
    }
    Ok(pass)
}

/// Records the delivery of a task result in the specialist's ledger.
pub fn record_delivery(record: &RunRecord, result: &RunResult) -> Result<(), Error> {
    let Some(task) = &result.task else {
        return Ok(());
    };
    let files = record.session_files();
    let dispatched = ledger(&files).into_iter().find(|l| &l.task == task);
    let outcome = if result.outcome == Outcome::Help {
        TaskOutcome::HelpRequested
    } else {
        TaskOutcome::Delivered
    };
    ledger_line(dispatched.as_ref(), task, outcome).append(&files.ledger())
}

/// The specialist's ledger lines that parse, from the end of `<session>.ledger`.
pub(crate) fn ledger(files: &SessionFiles) -> Vec<LedgerLine> {
    persistent::read_lines(&files.ledger()).unwrap_or_default()
}

/// Whether a ledger line is a stop attempt's: published (`stop-pending`, `stopped`) or failed
/// to publish (`stop-failed`).
fn is_stop(line: &LedgerLine) -> bool {
    matches!(
        line.outcome,
        TaskOutcome::StopPending | TaskOutcome::StopFailed | TaskOutcome::Stopped
    )
}

/// Whether the parent asked this specialist to stop (its ledger says so): a directive
/// published (`stop-pending`, `stopped`) or one whose publication failed (`stop-failed`). Seed
/// 003 makes an exit confirmed after either a stop, not a crash.
pub(crate) fn stop_requested(files: &SessionFiles) -> bool {
    ledger(files).iter().any(is_stop)
}

/// How long a stop attempt waits for the specialist's exit before the stop is unconfirmed.
pub(crate) const STOP_DEADLINE_MS: u64 = 5_000;

fn modified_ms(path: &Path) -> Option<u64> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    let since = modified.duration_since(std::time::UNIX_EPOCH).ok()?;
    u64::try_from(since.as_millis()).ok()
}

/// Since when the specialist's last stop attempt is unconfirmed (if the confirmation of its exit
/// times out, the specialist is `stalled` in an unconfirmed-stop state), from its ledger and
/// task events: the attempt's directive was published (`stop-pending`, not followed by
/// `stopped` or another attempt's `stop-failed`), no task holds it, and [`STOP_DEADLINE_MS`]
/// has passed since it was published or since the task that held it was delivered. The initial
/// task of an uncertain launch holds nothing (docs/lifecycle.md, "Persistent specialists").
///
/// Exit evidence is the caller's: a specialist whose exit is observed is finalizing, not
/// stalled.
pub(crate) fn stop_unconfirmed_since(record: &RunRecord, now_ms: u64) -> Option<u64> {
    stop_deadline(record).filter(|since| now_ms >= *since)
}

/// When the specialist's pending stop becomes unconfirmed unless its exit is seen first: the
/// moment [`stop_unconfirmed_since`] answers from, already passed or not. `None` without a
/// pending stop, or while a task holds it.
pub(crate) fn stop_deadline(record: &RunRecord) -> Option<u64> {
    let tasks_hold = record.status != herd_protocol::run::LaunchStatus::Uncertain;
    pending_stop_deadline(&record.session_files(), tasks_hold)
}

#[cfg(test)]
fn unconfirmed_since(files: &SessionFiles, tasks_hold: bool, now_ms: u64) -> Option<u64> {
    pending_stop_deadline(files, tasks_hold).filter(|since| now_ms >= *since)
}

fn pending_stop_deadline(files: &SessionFiles, tasks_hold: bool) -> Option<u64> {
    let ledger = ledger(files);
    let last_stop = ledger.iter().rposition(is_stop)?;
    if ledger[last_stop].outcome != TaskOutcome::StopPending {
        return None;
    }
    // A task without a task event still runs: it reaches its outcome first.
    let current = ledger
        .iter()
        .rev()
        .find(|l| l.outcome == TaskOutcome::Dispatched)
        .map(|l| l.task.as_str());
    // The task that held the stop releases it when it ends: the count starts then, not at the
    // directive (a stop pending behind a long task is not unconfirmed the moment it ends).
    let mut released = None;
    if let Some(current) = current.filter(|_| tasks_hold) {
        let end = events(files).into_iter().find(|e| e.task == current)?;
        // An event without its time (an older child): when the events file last changed.
        released = end
            .at
            .as_deref()
            .and_then(herd_core::time::parse_iso)
            .or_else(|| modified_ms(&files.tasks()));
    }
    let started = ledger[last_stop..]
        .iter()
        .filter(|l| {
            matches!(
                l.outcome,
                TaskOutcome::StopPending | TaskOutcome::Delivered | TaskOutcome::HelpRequested
            )
        })
        .filter_map(|l| l.at.ms())
        .chain(released)
        .max()?;
    Some(started.saturating_add(STOP_DEADLINE_MS))
}

/// Appends the specialist's `stopped` ledger line unless its ledger has one: a stop confirmed
/// by `herd-watch stop` wrote it, and an exit confirmed after the stop's deadline (or after a
/// failed publication) writes it here, once. The ledger's lock serialises the two writers.
pub(crate) fn record_stopped(record: &RunRecord) -> Result<(), Error> {
    let files = record.session_files();
    let mut lock_path = files.ledger().into_os_string();
    lock_path.push(".lock");
    let _lock = herd_core::lock::exclusive(
        Path::new(&lock_path),
        std::time::Instant::now() + persistent::LOCK_WAIT,
    )
    .map_err(Error::from)?;
    let ledger = ledger(&files);
    if ledger.iter().any(|l| l.outcome == TaskOutcome::Stopped) {
        return Ok(());
    }
    let dispatched = last_dispatched(&ledger);
    let task = dispatched.map(|d| d.task.clone()).unwrap_or_default();
    ledger_line(dispatched, &task, TaskOutcome::Stopped).append(&files.ledger())
}

/// The last `dispatched` line of `ledger`, whose ids the lines after it repeat.
pub(crate) fn last_dispatched(ledger: &[LedgerLine]) -> Option<&LedgerLine> {
    ledger
        .iter()
        .rev()
        .find(|l| l.outcome == TaskOutcome::Dispatched)
}

/// A ledger line saying `task` reached `outcome`, repeating the ids of its `dispatched` line
/// (empty without one).
pub(crate) fn ledger_line(
    dispatched: Option<&LedgerLine>,
    task: &str,
    outcome: TaskOutcome,
) -> LedgerLine {
    let field = |get: fn(&LedgerLine) -> &String| dispatched.map(get).cloned().unwrap_or_default();
    LedgerLine {
        task: task.to_owned(),
        outcome,
        generation: field(|d| &d.generation),
        logical_id: field(|d| &d.logical_id),
        policy_hash: field(|d| &d.policy_hash),
        at: At::now(),
    }
}

/// What a renderer shows of a task's report in the expanded view.
fn report_view(
    name: &str,
    kind: herd_core::escape::ReportKind,
    report: &str,
) -> herd_protocol::result::ReportView {
    let text = herd_core::escape::bounded_report(report);
    let view = herd_core::escape::expanded_view(name, kind, &text);
    herd_protocol::result::ReportView {
        kind,
        text,
        view: Some(view),
    }
}

fn build(
    record: &RunRecord,
    event: &TaskEvent,
    usage: Option<herd_protocol::usage::RunUsage>,
) -> RunResult {
    let outcome = if event.help {
        Outcome::Help
    } else {
        Outcome::Completed
    };
    let ending = Ending {
        name: record.name.clone(),
        elapsed_ms: now_ms().saturating_sub(record.created_at_ms),
        outcome: Some(outcome),
        report: Some(event.message.clone()),
        task: Some(event.task.clone()),
        session_file: Some(record.session_file.clone()),
        notes: usage
            .iter()
            .map(herd_protocol::usage::RunUsage::host_line)
            .collect(),
        ..Ending::default()
    };
    RunResult {
        format_version: herd_protocol::result::FORMAT_VERSION,
        run_id: record.run_id.clone(),
        name: record.name.clone(),
        outcome,
        message: ending.message().render(),
        details: herd_protocol::result::Details {
            task: Some(event.task.clone()),
            session_file: Some(record.session_file.clone()),
            usage,
            report: Some(report_view(
                &record.name,
                ending.report_kind(),
                &event.message,
            )),
            ..herd_protocol::result::Details::default()
        },
        settled_at_ms: now_ms(),
        task: Some(event.task.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use herd_core::sidecar;

    #[test]
    fn a_stop_is_unconfirmed_once_its_deadline_passes_with_nothing_holding_it() {
        let dir = tempfile::tempdir().unwrap();
        let files = SessionFiles::new(dir.path().join("s.jsonl"));
        let line = |task: &str, outcome: &str, at: u64| {
            let line = serde_json::json!({
                "task": task, "outcome": outcome, "generation": "g1", "logicalId": "l1",
                "policyHash": "", "at": herd_core::time::iso(at),
            });
            sidecar::append_line(&files.ledger(), &line.to_string()).unwrap();
        };
        let event = |task: &str, at: u64| {
            let line = serde_json::json!({
                "version": 1, "type": "task-done", "task": task, "generation": "g1",
                "at": herd_core::time::iso(at),
            });
            sidecar::append_line(&files.tasks(), &line.to_string()).unwrap();
        };
        let t = 1_800_000_000_000;
        line("t1", "dispatched", t);
        assert_eq!(unconfirmed_since(&files, true, t + 60_000), None, "no stop");
        // The task holds the stop: pending, however long it runs.
        line("t1", "stop-pending", t + 1_000);
        assert_eq!(unconfirmed_since(&files, true, t + 60_000), None, "held");
        // The initial task of an uncertain launch holds nothing.
        assert_eq!(unconfirmed_since(&files, false, t + 6_000), Some(t + 6_000));
        // The task ends long after the directive: the deadline runs from its end, not from the
        // directive (nor is it past the moment the task ends).
        event("t1", t + 9_000);
        assert_eq!(unconfirmed_since(&files, true, t + 9_000), None);
        assert_eq!(unconfirmed_since(&files, true, t + 13_999), None);
        assert_eq!(
            unconfirmed_since(&files, true, t + 14_000),
            Some(t + 14_000)
        );
        // Delivered, the deadline runs from the delivery.
        line("t1", "delivered", t + 10_000);
        assert_eq!(unconfirmed_since(&files, true, t + 14_999), None);
        assert_eq!(
            unconfirmed_since(&files, true, t + 15_000),
            Some(t + 15_000)
        );
        // Another attempt starts another bounded check.
        line("t1", "stop-pending", t + 20_000);
        assert_eq!(unconfirmed_since(&files, true, t + 24_000), None);
        assert_eq!(
            unconfirmed_since(&files, true, t + 30_000),
            Some(t + 25_000)
        );
        // A failed publication is not an unconfirmed stop; a confirmed one is none.
        line("t1", "stop-failed", t + 31_000);
        assert_eq!(unconfirmed_since(&files, true, t + 60_000), None);
        line("t1", "stop-pending", t + 32_000);
        line("t1", "stopped", t + 33_000);
        assert_eq!(unconfirmed_since(&files, true, t + 60_000), None);
    }
}
