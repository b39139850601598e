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

use herd_core::layout::{Artifacts, SessionFiles, validate_run_id};
use herd_core::run::RunRecord;
use herd_core::{Error, sidecar, time::now_ms};

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
            let result = build(
                record,
                &TaskEvent {
                    task: task.to_owned(),
                    help,
                    message,
                },
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

/// Whether the parent published a stop directive to this specialist (its ledger says so).
pub(crate) fn stop_requested(files: &SessionFiles) -> bool {
    ledger(files).iter().any(|line| {
        matches!(
            line.get("outcome").and_then(serde_json::Value::as_str),
            Some("stop-pending" | "stopped")
        )
    })
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

fn build(record: &RunRecord, event: &TaskEvent) -> RunResult {
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
        ..Ending::default()
    };
    RunResult {
        format_version: delivery::FORMAT_VERSION,
        run_id: record.run_id.clone(),
        name: record.name.clone(),
        outcome,
        message: ending.message().render(),
        details: serde_json::json!({ "task": event.task, "sessionFile": record.session_file }),
        settled_at_ms: now_ms(),
        task: Some(event.task.clone()),
    }
}
