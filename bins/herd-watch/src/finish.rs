//! Finishing a run: the parent re-check, the worktree handoff, the message, the settled result,
//! the manifest's final state and the outcome ledger.
//!
//! It runs on its own thread (an accept check may take up to an hour) and ends by settling the
//! result; the supervision loop delivers it.

use std::path::Path;

use crossbeam_channel::Receiver;
use herd_accept::{AcceptSpec, ChildReport, RunOutcome, VerdictRequest};
use herd_core::layout::Artifacts;
use herd_core::run::{RunRecord, Runner};
use herd_core::{sidecar, time::now_ms};
use herd_worktree::manifest::{Manifest, State};

use crate::control::{self, CancelIntent};
use crate::delivery::{self, Outcome, RunResult};
use crate::evidence::{self, Completion};
use crate::fallback::{self, Fallback};
use crate::message::Ending;

/// How much of an exec runner's output becomes its report.
const EXEC_REPORT_TAIL: u64 = 64 * 1024;
/// How long a child that wrote its completion sidecar may take to exit before it is finished
/// anyway (the time seed 003 gives a pane to be confirmed absent).
const EXIT_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// The completion evidence a run finished on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observed {
    /// The child's `.exit` sidecar.
    Sidecar(Completion),
    /// The runner's exit status (its own record, a kept pane, or the shell sentinel).
    Exited(i32),
    /// The pane or process vanished without completion evidence.
    Lost,
    /// A cancel intent was recorded and the child is gone.
    Cancelled(CancelIntent),
}

/// Builds the result of `record` and settles it.
pub fn finish(
    artifacts: &Artifacts,
    record: &RunRecord,
    observed: Observed,
    elapsed_ms: u64,
    cancel: &Receiver<()>,
) {
    crate::crash_point("finish-start");
    if let Observed::Sidecar(_) = &observed {
        wait_for_exit(record);
    }
    let fallback_error = match &observed {
        Observed::Sidecar(Completion::Error { message }) => Some(message.clone()),
        _ => None,
    };
    // A provider error with a model left, and no cancel: the next model runs instead.
    if let Some(error) = &fallback_error {
        if !record.fallback_models.is_empty()
            && control::read_intent(artifacts, &record.run_id).is_none()
        {
            // The failed attempt keeps its line in the outcome ledger.
            let attempt = build(artifacts, record, observed.clone(), elapsed_ms, cancel, &[]);
            let _ = record_outcome(artifacts, record, &attempt);
            match fallback::launch_next(artifacts, record, error) {
                Fallback::Launched { .. } => return,
                Fallback::NotLaunched(note) => {
                    let note = format!(
                        "Model fallback: {}",
                        herd_core::escape::encode_host_value(&note, 1_000)
                    );
                    let result = build(artifacts, record, observed, elapsed_ms, cancel, &[note]);
                    let _ = delivery::settle(artifacts, &result);
                    return;
                }
            }
        }
    }
    let result = build(artifacts, record, observed, elapsed_ms, cancel, &[]);
    let _ = delivery::settle(artifacts, &result);
}

/// Waits, at most [`EXIT_GRACE`], for the process of a child whose sidecar says it finished.
///
/// The sidecar comes first: Pi 1.6 writes it at the end of the turn and exits a moment later
/// (0.73 exited at once). The parent re-check should not run while the child can still touch
/// its checkout, and a parent that has the result may at once remove the child's worktree or
/// resume its session, which a live child refuses.
fn wait_for_exit(record: &RunRecord) {
    if let Ok(Some(identity)) = herd_core::identity::Record::read(&record.session_files().process())
    {
        let _ = herd_core::identity::wait_exited(&identity, std::time::Instant::now() + EXIT_GRACE);
    }
}

/// The models tried before this attempt: the record's own list, which herd-launch fills for a
/// fallback, else what the predecessor's watcher recorded.
fn earlier_models(artifacts: &Artifacts, record: &RunRecord) -> Vec<String> {
    if !record.attempted_models.is_empty() {
        return record.attempted_models.clone();
    }
    fallback::read_predecessor(artifacts, &record.run_id)
        .map(|p| p.models)
        .unwrap_or_default()
}

/// Builds the result of a finished run.
pub fn build(
    artifacts: &Artifacts,
    record: &RunRecord,
    observed: Observed,
    elapsed_ms: u64,
    cancel: &Receiver<()>,
    notes: &[String],
) -> RunResult {
    let session = match record.runner {
        Runner::Pi => evidence::summarize_session(Path::new(&record.session_file))
            .ok()
            .flatten(),
        Runner::Exec => None,
    };
    let exec_output = || {
        evidence::read_tail_lines(&artifacts.stdout_log(&record.run_id), EXEC_REPORT_TAIL)
            .ok()
            .flatten()
            .filter(|t| !t.trim().is_empty())
            .map(|t| strip_sentinel(&t))
    };
    let natural_report = || match record.runner {
        Runner::Pi => session.as_ref().and_then(evidence::SessionSummary::report),
        Runner::Exec => exec_output(),
    };
    let mut ending = Ending {
        name: record.name.clone(),
        elapsed_ms,
        session_file: Some(record.session_file.clone()),
        resumable: record.runner == Runner::Pi,
        model_used: session
            .as_ref()
            .and_then(|s| s.model.clone())
            .or_else(|| record.model.clone()),
        models_attempted: {
            let mut models = earlier_models(artifacts, record);
            models.extend(record.model.iter().cloned());
            models
        },
        notes: notes.to_vec(),
        ..Ending::default()
    };
    let mut details = serde_json::Map::new();
    let mut cancellation = None;
    match &observed {
        Observed::Sidecar(Completion::Done) | Observed::Exited(0) => {
            ending.outcome = Some(Outcome::Completed);
            ending.report = natural_report();
        }
        Observed::Sidecar(Completion::Error { message }) => {
            ending.outcome = Some(Outcome::Failed);
            ending.provider_error = true;
            ending.failure = Some(evidence::provider_error_text(message).into_owned());
            details.insert("errorMessage".into(), message.clone().into());
        }
        Observed::Sidecar(Completion::Ping { message }) => {
            ending.outcome = Some(Outcome::Help);
            ending.report = Some(message.clone());
        }
        Observed::Exited(code) => {
            ending.outcome = Some(Outcome::Failed);
            ending.exit_code = Some(*code);
            ending.report = natural_report();
            details.insert("exitCode".into(), (*code).into());
        }
        Observed::Lost => {
            ending.outcome = Some(Outcome::Failed);
            ending.failure =
                Some("pane disappeared before completion evidence was recorded".into());
            details.insert(
                "errorMessage".into(),
                "pane disappeared before completion evidence was recorded".into(),
            );
        }
        Observed::Cancelled(intent) => {
            ending.outcome = Some(Outcome::Cancelled);
            cancellation = Some(intent.clone());
        }
    }

    // The worktree handoff, before the check so its changed files can be reported.
    let mut handoff_json = None;
    let mut changed_files = Vec::new();
    if let Some(worktree) = &record.worktree {
        let git = herd_git::Git::from_env();
        let deadline = herd_git::Deadline::after(herd_git::budget::HANDOFF);
        let handoff = herd_worktree::handoff::inspect(
            &git,
            Path::new(&worktree.path),
            &worktree.base_sha,
            deadline,
        );
        changed_files = handoff.changed_files.clone().unwrap_or_default();
        changed_files.extend(handoff.untracked_files.clone().unwrap_or_default());
        ending.handoff = herd_worktree::handoff::render_lines(
            &handoff,
            record.pane.as_ref().and_then(|p| p.workspace_id.as_deref()),
        );
        handoff_json = Some(handoff.to_json());
        let state = match ending.outcome {
            Some(Outcome::Completed) => Some(State::ReadyForReview),
            Some(Outcome::Help) => Some(State::NeedsHelp),
            Some(Outcome::Failed) => Some(State::Failed),
            Some(Outcome::Cancelled) => Some(State::Cancelled),
            None => None,
        };
        if let Some(state) = state {
            let _ = Manifest::record_result(artifacts, &record.run_id, state, &handoff);
        }
    }

    // The parent re-check decides the verdict.
    if let Some(spec_path) = &record.accept_spec {
        let accept = match AcceptSpec::load(Path::new(spec_path)) {
            Ok(spec) => {
                let outcome = match ending.outcome {
                    Some(Outcome::Completed) => RunOutcome::Completed,
                    Some(Outcome::Help) => RunOutcome::Help,
                    Some(Outcome::Cancelled) => RunOutcome::Cancelled,
                    Some(Outcome::Failed) if ending.provider_error => RunOutcome::ProviderError,
                    _ => RunOutcome::Failed,
                };
                let cwd = record
                    .worktree
                    .as_ref()
                    .map_or(record.cwd.as_str(), |w| w.path.as_str())
                    .to_owned();
                let tries = read_child_tries(record);
                let req = VerdictRequest {
                    spec: Some(&spec),
                    cwd: Path::new(&cwd),
                    outcome,
                    tries: tries.map(|t| t.0),
                    child_reported: tries.and_then(|t| t.1),
                    changed_files: &changed_files,
                    shared_checkout: record.worktree.is_none(),
                };
                let mut verdict = herd_accept::verdict(&req, cancel);
                if outcome == RunOutcome::Completed {
                    if let Some(intent) = control::read_intent(artifacts, &record.run_id) {
                        // A cancel during the re-check stops it: the run is cancelled, the
                        // check skipped.
                        ending.outcome = Some(Outcome::Cancelled);
                        cancellation = Some(intent);
                        let skipped = VerdictRequest {
                            outcome: RunOutcome::Cancelled,
                            ..req
                        };
                        verdict = herd_accept::decide(&skipped, None);
                    }
                }
                ending.check_line = Some(verdict.check_line().to_owned());
                ending.check_output_line = verdict.check_output_line().map(str::to_owned);
                serde_json::to_value(&verdict).unwrap_or_default()
            }
            Err(err) => {
                ending.check_line =
                    Some("Check: error (the accept spec cannot be read)".to_owned());
                serde_json::json!({"verdict": "error", "error": err.message})
            }
        };
        details.insert("accept".into(), accept);
    }
    if ending.outcome == Some(Outcome::Cancelled) {
        ending.report = None;
    }
    if let Some(intent) = &cancellation {
        details.insert("error".into(), "cancelled".into());
        details.insert("cancellation".into(), intent.to_details());
    }
    if let Some(handoff) = handoff_json {
        details.insert("worktree".into(), handoff);
    }
    if let Some(model) = &ending.model_used {
        details.insert("model".into(), model.clone().into());
    }
    details.insert("sessionFile".into(), record.session_file.clone().into());
    let queued = control::undelivered_steer(artifacts, &record.run_id);
    if !queued.is_empty() {
        details.insert("undeliveredSteering".into(), queued.into());
    }
    details.insert("elapsedMs".into(), elapsed_ms.into());
    let outcome = ending.outcome.unwrap_or(Outcome::Failed);
    RunResult {
        format_version: delivery::FORMAT_VERSION,
        run_id: record.run_id.clone(),
        name: record.name.clone(),
        outcome,
        message: ending.message().render(),
        details: serde_json::Value::Object(details),
        settled_at_ms: now_ms(),
        task: None,
    }
}

/// The child's own accept tries and its last check's verdict, from
/// `<session>.accept-tries.json` (`{"version":1,"tries":N,"last":"pass"|"fail"}`), which the
/// child extension writes after each check it runs.
fn read_child_tries(record: &RunRecord) -> Option<(u32, Option<ChildReport>)> {
    let value: serde_json::Value = sidecar::read_json(&child_tries_file(record), 4096).ok()??;
    let tries = u32::try_from(value.get("tries")?.as_u64()?).ok()?;
    let reported = match value.get("last").and_then(serde_json::Value::as_str) {
        Some("pass") => Some(ChildReport::Pass),
        Some("fail") => Some(ChildReport::Fail),
        _ => None,
    };
    Some((tries, reported))
}

/// `<session>.accept-tries.json`.
pub fn child_tries_file(record: &RunRecord) -> std::path::PathBuf {
    let mut name = std::ffi::OsString::from(&record.session_file);
    name.push(".accept-tries.json");
    std::path::PathBuf::from(name)
}

fn strip_sentinel(text: &str) -> String {
    text.lines()
        .filter(|l| !l.contains("__SUBAGENT_DONE_"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Appends the run's line to the outcome ledger once: `outcomes.jsonl` at the root of the
/// artifacts directory, one line per model attempt.
///
/// A marker beside the run record says the line is written; a watcher killed between the append
/// and the marker finds its line in the ledger's tail and does not write it again.
pub fn record_outcome(
    artifacts: &Artifacts,
    record: &RunRecord,
    result: &RunResult,
) -> Result<(), herd_core::Error> {
    let marker = artifacts.run_file(&record.run_id, "ledgered");
    if marker.exists() {
        return Ok(());
    }
    crate::crash_point("before-ledger");
    let ledger = ledger_path(artifacts);
    let needle = format!(
        "\"runId\":{}",
        serde_json::Value::from(record.run_id.as_str())
    );
    let written = evidence::read_tail_lines(&ledger, LEDGER_TAIL)
        .ok()
        .flatten()
        .is_some_and(|tail| tail.lines().any(|line| line.contains(&needle)));
    if !written {
        append_ledger(artifacts, record, result)?;
    }
    sidecar::create_once(&marker, b"{\"format_version\":1}\n")?;
    Ok(())
}

/// How much of the ledger's end is searched for a line written before a crash.
const LEDGER_TAIL: u64 = 256 * 1024;

/// The outcome ledger of an artifacts directory.
pub fn ledger_path(artifacts: &Artifacts) -> std::path::PathBuf {
    artifacts.root().join("outcomes.jsonl")
}

fn append_ledger(
    artifacts: &Artifacts,
    record: &RunRecord,
    result: &RunResult,
) -> Result<(), herd_core::Error> {
    let accept = result.details.get("accept");
    let earlier = earlier_models(artifacts, record);
    let line = serde_json::json!({
        "version": 1,
        "at": now_ms(),
        "runId": record.run_id,
        "name": record.name,
        "agent": record.agent,
        "model": record.model,
        "thinking": record.thinking,
        "attempt": earlier.len() + 1,
        "candidates": earlier.iter().chain(record.model.iter()).chain(record.fallback_models.iter()).collect::<Vec<_>>(),
        "outcome": match result.outcome {
            Outcome::Completed => "completed",
            Outcome::Failed if result.details.get("errorMessage").is_some() && result.details.get("exitCode").is_none() => "provider-error",
            Outcome::Failed => "failed",
            Outcome::Cancelled => "cancelled",
            Outcome::Help => "help",
        },
        "exitCode": result.details.get("exitCode"),
        "check": accept.and_then(|a| a.get("verdict")).cloned().unwrap_or_else(|| "none".into()),
        "tries": accept.and_then(|a| a.get("tries")).cloned(),
        "elapsedMs": result.details.get("elapsedMs"),
        "worktree": record.worktree.is_some(),
        "persistent": record.persistent,
    });
    Ok(sidecar::append_line(
        &artifacts.root().join("outcomes.jsonl"),
        &line.to_string(),
    )?)
}
