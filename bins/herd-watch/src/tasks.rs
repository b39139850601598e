//! A persistent specialist's task results (seed 003, "Persistent specialists"; protocol.md
//! §1.11).
//!
//! The child appends an event to `<session>.tasks` when a task ends (`task-done`) or asks for
//! help (`help-request`). Each event for a task the host issued — a `dispatched` line of the
//! ledger `<session>.ledger` — becomes one result with its own files
//! (`runs/<run-id>.task-<task>.result.json`), settled and delivered exactly once like a run's
//! own result, and the ledger records `delivered` or `help-requested`. Events for tasks the host
//! did not issue change nothing; the first one produces a single notice.

use std::collections::HashMap;
use std::path::Path;

use herd_core::{Error, sidecar, time::now_ms};
use herd_protocol::layout::{Artifacts, SessionFiles, validate_run_id};
use herd_protocol::run::RunRecord;

use crate::delivery::{self, Outcome, RunResult};
use crate::evidence;
use crate::message::Ending;

/// How much of the end of the task events and of the ledger is read.
const TAIL: u64 = 4 * 1024 * 1024;

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

fn lines(path: &Path) -> Vec<serde_json::Value> {
    evidence::read_tail_lines(path, TAIL)
        .ok()
        .flatten()
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Settles a result for every task event of `record` that has none yet.
pub fn pass(artifacts: &Artifacts, record: &RunRecord) -> Result<Pass, Error> {
    let files = record.session_files();
    let issued: HashMap<String, serde_json::Value> = ledger(&files)
        .iter()
        .filter(|l| l.get("outcome").and_then(|o| o.as_str()) == Some("dispatched"))
        .filter_map(|l| Some((l.get("task")?.as_str()?.to_owned(), l.clone())))
        .collect();
    let mut pass = Pass::default();
    for event in lines(&files.tasks()) {
        if event.get("version").and_then(|v| v.as_u64()) != Some(1) {
            continue;
        }
        let help = match event.get("type").and_then(|t| t.as_str()) {
            Some("task-done") => false,
            Some("help-request") => true,
            _ => continue,
        };
        let Some(task) = event.get("task").and_then(|t| t.as_str()) else {
            continue;
        };
        if !issued.contains_key(task) || validate_run_id(task).is_err() {
            pass.foreign = true;
            continue;
        }
        // A delivered task is done with: reading its result and taking its lock again on every
        // tick would only cost.
        if delivery::is_task_delivered(artifacts, &record.run_id, Some(task)) {
            continue;
        }
        if delivery::load_task(artifacts, &record.run_id, Some(task))?.is_none() {
            let message = event
                .get("message")
                .and_then(|m| m.as_str())
                .unwrap_or_default()
                .to_owned();
            // What this task cost: the session's usage since the task before it settled.
            let usage = crate::usage::task(artifacts, record, task);
            let result = build(
                record,
                &TaskEvent {
                    task: task.to_owned(),
                    help,
                    message,
                },
                usage,
            );
            delivery::settle(artifacts, &result)?;
        }
        if let Some(result) = delivery::load_task(artifacts, &record.run_id, Some(task))? {
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
    let dispatched = ledger(&files)
        .into_iter()
        .find(|l| l.get("task").and_then(|t| t.as_str()) == Some(task.as_str()));
    let outcome = if result.outcome == Outcome::Help {
        "help-requested"
    } else {
        "delivered"
    };
    let line = ledger_line(dispatched.as_ref(), task.as_str().into(), outcome);
    Ok(sidecar::append_line(&files.ledger(), &line)?)
}

/// The specialist's ledger lines that parse, from the end of `<session>.ledger`.
pub(crate) fn ledger(files: &SessionFiles) -> Vec<serde_json::Value> {
    lines(&files.ledger())
}

/// Whether the parent asked this specialist to stop (its ledger says so): a directive
/// published (`stop-pending`, `stopped`) or one whose publication failed (`stop-failed`). Seed
/// 003 makes an exit confirmed after either a stop, not a crash.
pub(crate) fn stop_requested(files: &SessionFiles) -> bool {
    ledger(files).iter().any(|line| {
        matches!(
            line.get("outcome").and_then(serde_json::Value::as_str),
            Some("stop-pending" | "stop-failed" | "stopped")
        )
    })
}

/// How long a stop attempt waits for the specialist's exit before the stop is unconfirmed.
pub(crate) const STOP_DEADLINE_MS: u64 = 5_000;

fn outcome(line: &serde_json::Value) -> Option<&str> {
    line.get("outcome").and_then(serde_json::Value::as_str)
}

fn at_ms(line: &serde_json::Value) -> Option<u64> {
    herd_core::time::parse_iso(line.get("at")?.as_str()?)
}

fn modified_ms(path: &Path) -> Option<u64> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    let since = modified.duration_since(std::time::UNIX_EPOCH).ok()?;
    u64::try_from(since.as_millis()).ok()
}

/// Since when the specialist's last stop attempt is unconfirmed (seed 003: "If confirmation
/// times out, the specialist is `stalled` in an unconfirmed-stop state"), from its ledger and
/// task events: the attempt's directive was published (`stop-pending`, not followed by
/// `stopped` or another attempt's `stop-failed`), no task holds it, and [`STOP_DEADLINE_MS`]
/// has passed since it was published or since the task that held it was delivered. The initial
/// task of an uncertain launch holds nothing (seed 003: "An uncertain launch's initial task does
/// not hold stop pending").
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
    let last_stop = ledger
        .iter()
        .rposition(|l| matches!(outcome(l), Some("stop-pending" | "stop-failed" | "stopped")))?;
    if outcome(&ledger[last_stop]) != Some("stop-pending") {
        return None;
    }
    // A task without a task event still runs: it reaches its outcome first.
    let current = ledger
        .iter()
        .rev()
        .find(|l| outcome(l) == Some("dispatched"))
        .and_then(|l| l.get("task")?.as_str());
    // The task that held the stop releases it when it ends: the count starts then, not at the
    // directive (a stop pending behind a long task is not unconfirmed the moment it ends).
    let mut released = None;
    if let Some(current) = current.filter(|_| tasks_hold) {
        let end = lines(&files.tasks()).into_iter().find(|e| {
            e.get("task").and_then(|t| t.as_str()) == Some(current)
                && matches!(
                    e.get("type").and_then(|t| t.as_str()),
                    Some("task-done" | "help-request")
                )
        })?;
        // An event without its time (an older child): when the events file last changed.
        released = at_ms(&end).or_else(|| modified_ms(&files.tasks()));
    }
    let started = ledger[last_stop..]
        .iter()
        .filter(|l| {
            matches!(
                outcome(l),
                Some("stop-pending" | "delivered" | "help-requested")
            )
        })
        .filter_map(at_ms)
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
        std::time::Instant::now() + herd_protocol::persistent::LOCK_WAIT,
    )
    .map_err(Error::from)?;
    let ledger = ledger(&files);
    if ledger.iter().any(|l| outcome(l) == Some("stopped")) {
        return Ok(());
    }
    let dispatched = ledger
        .iter()
        .rev()
        .find(|l| outcome(l) == Some("dispatched"));
    let task = dispatched
        .and_then(|d| d.get("task"))
        .cloned()
        .unwrap_or_default();
    Ok(sidecar::append_line(
        &files.ledger(),
        &ledger_line(dispatched, task, "stopped"),
    )?)
}

/// A ledger line saying `task` reached `outcome`, repeating the ids of its `dispatched` line.
pub(crate) fn ledger_line(
    dispatched: Option<&serde_json::Value>,
    task: serde_json::Value,
    outcome: &str,
) -> String {
    let field = |key: &str| {
        dispatched
            .and_then(|d| d.get(key))
            .cloned()
            .unwrap_or_default()
    };
    serde_json::json!({
        "task": task, "outcome": outcome, "generation": field("generation"),
        "logicalId": field("logicalId"), "policyHash": field("policyHash"),
        "at": herd_core::time::iso(now_ms()),
    })
    .to_string()
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
        format_version: delivery::FORMAT_VERSION,
        run_id: record.run_id.clone(),
        name: record.name.clone(),
        outcome,
        message: ending.message().render(),
        details: delivery::Details {
            task: Some(event.task.clone()),
            session_file: Some(record.session_file.clone()),
            usage,
            report: Some(report_view(
                &record.name,
                ending.report_kind(),
                &event.message,
            )),
            ..delivery::Details::default()
        },
        settled_at_ms: now_ms(),
        task: Some(event.task.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_is_unconfirmed_once_its_deadline_passes_with_nothing_holding_it() {
        let dir = tempfile::tempdir().unwrap();
        let files = SessionFiles::new(dir.path().join("s.jsonl"));
        let line = |task: &str, outcome: &str, at: u64| {
            let line = serde_json::json!({
                "task": task, "outcome": outcome, "generation": "g1",
                "at": herd_core::time::iso(at),
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
