//! Model fallback: after a provider error, the next model of the run's list is launched through
//! `herd-launch spawn --fallback-of`, and the failed attempt is superseded instead of delivered.
//!
//! The rules: a fallback follows only a definite provider error, never a cancel (the intent
//! wins) and never an uncertain launch. The decision is claimed on disk before the launch
//! (`runs/<id>.superseded.json`, written once), so a restarted watcher never launches twice;
//! a claim left without a successor by a crash is reported as uncertain, never retried.

use std::time::Duration;

use herd_core::error::ErrorDocument;
use herd_core::subprocess::{self, Command};
use herd_core::time::now_ms;
use herd_protocol::launch::LaunchAck;
use herd_protocol::layout::Artifacts;
use herd_protocol::run::{LaunchStatus, RunRecord};
use herd_protocol::run_file::RunFile;

/// The budget of the fallback launch (placement and worktree acquisition included).
const LAUNCH_BUDGET: Duration = Duration::from_secs(180);

use herd_protocol::run::{Predecessor, Superseded};

pub fn read_superseded(artifacts: &Artifacts, run_id: &str) -> Option<Superseded> {
    Superseded::read(artifacts, run_id)
}

use herd_protocol::result::FallbackFailure;

/// Every attempt that failed before `run_id`, oldest first: the record's `fallback_of` chain,
/// each link's error from its superseded claim, which exists before the next model is launched
/// (older runs: the `predecessor.json` the watcher wrote after it). Bounded: a chain is no longer
/// than a model list.
pub fn failures(artifacts: &Artifacts, run_id: &str) -> Vec<FallbackFailure> {
    let mut failures = Vec::new();
    let mut current = run_id.to_owned();
    for _ in 0..32 {
        let link = match RunRecord::load(artifacts, &current)
            .ok()
            .and_then(|r| r.fallback_of)
        {
            Some(previous) => Superseded::read(artifacts, &previous)
                .and_then(|s| s.error)
                .map(|error| (previous, error)),
            None => Predecessor::read(artifacts, &current).map(|p| (p.run_id, p.error)),
        };
        let Some((previous, error)) = link else {
            break;
        };
        let model = RunRecord::load(artifacts, &previous)
            .ok()
            .and_then(|r| r.model);
        current.clone_from(&previous);
        failures.push(FallbackFailure {
            run_id: previous,
            model,
            error,
        });
    }
    failures.reverse();
    failures
}

/// What a fallback attempt came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fallback {
    /// The next model runs as `successor`; the failed attempt is not delivered.
    Launched { successor: String },
    /// No fallback happened; the failure is delivered with this note.
    NotLaunched(String),
}

/// Launches the next model of `record` after its provider error `error`.
pub fn launch_next(artifacts: &Artifacts, record: &RunRecord, error: &str) -> Fallback {
    let run = artifacts.run(&record.run_id);
    let claim = Superseded {
        format_version: Superseded::VERSION,
        at_ms: now_ms(),
        successor: None,
        failure: None,
        error: Some(error.to_owned()),
    };
    match run.create_once(claim.clone()) {
        Ok(true) => {}
        Ok(false) => {
            // Claimed before, by a watcher that may have died mid-launch.
            return match read_superseded(artifacts, &record.run_id) {
                Some(Superseded { successor: Some(successor), .. }) => Fallback::Launched { successor },
                Some(Superseded { failure: Some(failure), .. }) => Fallback::NotLaunched(failure),
                _ => Fallback::NotLaunched(
                    "a model fallback launch may have started before a watcher stopped; it is uncertain and was not retried (see herd-watch status)".into(),
                ),
            };
        }
        Err(err) => return Fallback::NotLaunched(format!("cannot claim the fallback: {err}")),
    }
    crate::crash::point(crate::FALLBACK_CRASH_POINT);
    let cmd = Command::new(subprocess::sibling_binary("herd-launch"), LAUNCH_BUDGET)
        .arg("--artifacts")
        .arg(artifacts.root())
        .args(["spawn", "--fallback-of", &record.run_id, "--json"])
        .cwd(&record.cwd)
        .stdout_cap(256 * 1024, subprocess::Keep::Head)
        .stderr_cap(64 * 1024, subprocess::Keep::Tail);
    let outcome = match subprocess::run(&cmd) {
        Ok(out) => match serde_json::from_slice::<LaunchAck>(&out.stdout.bytes) {
            Ok(ack) if matches!(ack.status, LaunchStatus::Launched | LaunchStatus::Uncertain) => {
                Ok(ack.run_id)
            }
            _ => Err(format!(
                "the fallback launch failed: {}",
                serde_json::from_slice::<ErrorDocument>(&out.stdout.bytes).map_or_else(
                    |_| out.stderr.text().trim().to_owned(),
                    |doc| doc.error.message
                )
            )),
        },
        Err(err) => Err(format!("the fallback launch could not run: {err}")),
    };
    let (record_claim, result) = match outcome {
        Ok(successor) => {
            let mut models = record.attempted_models.clone();
            models.extend(record.model.clone());
            if let Some(earlier) = Predecessor::read(artifacts, &record.run_id) {
                models = earlier.models.into_iter().chain(models).collect();
            }
            let predecessor = Predecessor {
                format_version: Predecessor::VERSION,
                run_id: record.run_id.clone(),
                models,
                error: error.to_owned(),
            };
            let _ = artifacts.run(&successor).write(predecessor);
            (
                Superseded {
                    successor: Some(successor.clone()),
                    ..claim
                },
                Fallback::Launched { successor },
            )
        }
        Err(failure) => (
            Superseded {
                failure: Some(failure.clone()),
                ..claim
            },
            Fallback::NotLaunched(failure),
        ),
    };
    let launched = record_claim.successor.is_some();
    if run.write(record_claim).is_ok() && launched {
        herd_protocol::open_runs::remove(artifacts, &record.run_id);
    }
    result
}
