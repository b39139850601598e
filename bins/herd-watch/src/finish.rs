//! Finishing a run: the parent re-check, the worktree handoff, the message, the settled result,
//! the manifest's final state and the outcome ledger.
//!
//! It runs on its own thread (an accept check may take up to an hour) and ends by settling the
//! result; the supervision loop delivers it.

use std::path::{Path, PathBuf};

use crossbeam_channel::Receiver;
use herd_accept::{AcceptSpec, VerdictRequest};
use herd_core::{sidecar, time::now_ms};
use herd_protocol::accept::ChildReport;
use herd_protocol::accept::UnreadableSpec;
use herd_protocol::layout::Artifacts;
use herd_protocol::result::{Acceptance, CancelError, ParentCheck, ReportView, RunOutcome};
use herd_protocol::run::{RunRecord, Runner, SurfaceKind};
use herd_protocol::worktree::manifest::{Manifest, State};

use crate::delivery::{self};
use crate::evidence::{self, Kept, LastLines};
use crate::fallback::{self, Fallback};
use crate::message::Ending;
use herd_protocol::child::Completion;
use herd_protocol::intents::{self, CancelIntent};
use herd_protocol::result::Details;
use herd_protocol::result::Outcome;
use herd_protocol::result::RunResult;

/// How much of an exec runner's output becomes its report.
const EXEC_REPORT_TAIL: u64 = 64 * 1024;
/// How much of a failed child's stderr log or kept screen is read for its last lines.
const LAST_OUTPUT_TAIL: u64 = 16 * 1024;
/// How many of those last lines a failed result carries.
const LAST_OUTPUT_LINES: usize = 10;
/// How many lines of a pane's screen (scrollback included) `logs/<id>.screen` keeps.
const SCREEN_KEPT_LINES: usize = 200;
/// How long a child that wrote its completion sidecar may take to exit before it is finished
/// anyway (the budget of a pane-absence confirmation, 5 s).
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
    /// No child was ever started: the launch failed, or its herd-launch was lost before it
    /// placed one (the reason, host text).
    LaunchFailed(String),
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
            && intents::read_intent(artifacts, &record.run_id).is_none()
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
    // An exit confirmed after a stop timeout or a failed publication is one terminal stopped update
    // and one stopped ledger entry. The ledger first: a watcher killed before the result settles
    // finds the line and does not write it again.
    if result.details.stopped == Some(true) {
        let _ = crate::tasks::record_stopped(record);
    }
    let _ = delivery::settle(artifacts, &result);
}

/// Waits, at most [`EXIT_GRACE`], for the process of a child whose sidecar says it finished.
///
/// The sidecar comes first: Pi 1.6 writes it at the end of the turn and exits a moment later
/// (0.73 exited at once). The parent re-check should not run while the child can still touch
/// its checkout, and a parent that has the result may at once remove the child's worktree or
/// resume its session, which a live child refuses.
fn wait_for_exit(record: &RunRecord) {
    if let Ok(Some(identity)) = record.session_files().read::<herd_core::identity::Record>() {
        let _ = herd_core::identity::wait_exited(&identity, std::time::Instant::now() + EXIT_GRACE);
    }
}

/// The models tried before this attempt: the record's own list, which herd-launch fills for a
/// fallback, else what the predecessor's watcher recorded.
fn earlier_models(artifacts: &Artifacts, record: &RunRecord) -> Vec<String> {
    if !record.attempted_models.is_empty() {
        return record.attempted_models.clone();
    }
    herd_protocol::run::Predecessor::read(artifacts, &record.run_id)
        .map(|p| p.models)
        .unwrap_or_default()
}

/// Builds the result of a finished run, in the order of its numbered steps.
pub fn build(
    artifacts: &Artifacts,
    record: &RunRecord,
    observed: Observed,
    elapsed_ms: u64,
    cancel: &Receiver<()>,
    notes: &[String],
) -> RunResult {
    // 1. What the child left: its session, or an exec child's output logs.
    let left = Left::read(artifacts, record);
    let mut ending = left.ending(artifacts, record, elapsed_ms, notes);
    let mut details = Details::default();
    // 2. The models that failed before this attempt: each one's raw error in the details, and a
    //    host line saying which model failed and why.
    fallback_failures(artifacts, record, &mut ending, &mut details);
    // 3. How it ended, from the evidence; a cancel a time limit or a budget made is a failure.
    let mut cancellation = observe(
        &observed,
        artifacts,
        record,
        &left,
        &mut ending,
        &mut details,
    );
    let expiry = match observed {
        Observed::Cancelled(_) => intents::read_expiry(artifacts, &record.run_id),
        _ => None,
    };
    if let Some(expiry) = &expiry {
        left.report_into(record, &mut ending);
        crate::timeout::timed_out_into(expiry.limit_ms, &mut ending, &mut details);
    }
    let budget_stop = crate::budget::stop_of(artifacts, record, &observed, expiry.is_some());
    if let Some(stop) = budget_stop.clone() {
        left.report_into(record, &mut ending);
        crate::budget::spent_into(stop, &mut ending, &mut details);
    }
    // 3b. A failure's last output.
    if ending.outcome == Some(Outcome::Failed) {
        failure_output(artifacts, record, &mut ending, &mut details);
    }
    // 4. The worktree handoff, before the check so its changed files can be reported.
    let (handoff_json, changed_files) = handoff(artifacts, record, &mut ending);
    // 5. The acceptance gate on the final report, then the review a reviewer supplies.
    apply_acceptance(
        artifacts,
        record,
        &mut ending,
        &mut details,
        &mut cancellation,
        cancel,
    );
    // 6. The parent re-check decides the verdict.
    if let Some(spec_path) = &record.accept_spec {
        details.accept = Some(recheck(
            artifacts,
            record,
            Path::new(spec_path),
            &changed_files,
            &mut ending,
            &mut cancellation,
            cancel,
        ));
    }
    if ending.outcome == Some(Outcome::Cancelled) {
        ending.report = None;
    }
    // 7. A persistent specialist's end: stopped, or vanished.
    specialist_end(record, &observed, &mut ending, &mut details);
    // 8. What structured consumers read beside the message.
    details.report = report_view(record, &ending);
    if let Some(intent) = &cancellation {
        details.error = Some(match (&expiry, &budget_stop) {
            (Some(_), _) => CancelError::TimedOut,
            (None, Some(_)) => CancelError::BudgetSpent,
            (None, None) => CancelError::Cancelled,
        });
        details.cancellation = Some(intent.to_details());
    }
    details.worktree = handoff_json;
    details.model.clone_from(&ending.model_used);
    left.files_into(record, &mut details);
    crate::control::steering_details(artifacts, record, &mut ending, &mut details);
    // 9. What it cost: its session's usage, with its nested children's rolled up.
    if let Some(usage) = crate::usage::rolled_up(artifacts, record) {
        // A child that used nothing (it never started) has no usage line, as if it ran.
        if usage.tally.total.used_any() || !usage.nested.is_empty() {
            ending.notes.push(usage.host_line());
        }
        details.usage = Some(usage);
    }
    details.elapsed_ms = Some(elapsed_ms);
    let outcome = ending.outcome.unwrap_or(Outcome::Failed);
    RunResult {
        format_version: herd_protocol::result::FORMAT_VERSION,
        run_id: record.run_id.clone(),
        name: record.name.clone(),
        outcome,
        message: ending.message().render(),
        details,
        settled_at_ms: now_ms(),
        task: None,
    }
}

/// Step 2: the models that failed before this attempt, each one's raw error in the details and
/// a host line saying which model failed and why.
fn fallback_failures(
    artifacts: &Artifacts,
    record: &RunRecord,
    ending: &mut Ending,
    details: &mut Details,
) {
    let failures = fallback::failures(artifacts, &record.run_id);
    if !failures.is_empty() {
        for failure in &failures {
            ending.notes.push(format!(
                "Model {} failed: {}",
                herd_core::escape::encode_host_value(
                    failure.model.as_deref().unwrap_or("(default)"),
                    200
                ),
                herd_core::escape::encode_host_value(&failure.error, 500)
            ));
        }
        details.fallback_failures = Some(failures);
    }
}

/// Step 3b: a failure carries what herd holds of the child's last output, and where it is.
fn failure_output(
    artifacts: &Artifacts,
    record: &RunRecord,
    ending: &mut Ending,
    details: &mut Details,
) {
    if let Some(last) = last_output(artifacts, record) {
        match last.kept {
            Kept::Stderr => {
                details.stderr_file = Some(last.file.clone());
                details.stderr_tail = Some(last.text.clone());
            }
            Kept::Screen => {
                details.screen_file = Some(last.file.clone());
                details.screen_tail = Some(last.text.clone());
            }
        }
        ending.last_output = Some(last);
    }
}

/// What a renderer shows in the expanded view: the raw report, bounded as the block is.
fn report_view(record: &RunRecord, ending: &Ending) -> Option<ReportView> {
    let report = ending.report.as_ref()?;
    let kind = ending.report_kind();
    let text = herd_core::escape::bounded_report_kept_in(report, ending.report_file.as_deref());
    let view = herd_core::escape::expanded_view(&record.name, kind, &text);
    Some(ReportView {
        kind,
        text,
        view: Some(view),
    })
}

/// What a finished child left to read: a Pi child's session, an exec child's output logs.
struct Left {
    session: Option<evidence::SessionSummary>,
    exec_output: Option<evidence::OutputTail>,
    /// An exec run's stdout and stderr logs (it has no session).
    output_files: Option<(String, String)>,
}

impl Left {
    /// Where the details say the child's own record is: its session, or an exec child's logs.
    fn files_into(&self, record: &RunRecord, details: &mut Details) {
        match &self.output_files {
            None => details.session_file = Some(record.session_file.clone()),
            Some((stdout, stderr)) => {
                details.stdout_file = Some(stdout.clone());
                details.stderr_file = Some(stderr.clone());
            }
        }
    }

    fn read(artifacts: &Artifacts, record: &RunRecord) -> Left {
        let session = match record.runner {
            Runner::Pi => evidence::summarize_session(Path::new(&record.session_file))
                .ok()
                .flatten(),
            Runner::Exec => None,
        };
        let exec_output =
            evidence::read_output_tail(&artifacts.stdout_log(&record.run_id), EXEC_REPORT_TAIL)
                .ok()
                .flatten()
                .filter(|tail| !tail.text.trim().is_empty());
        let output_files = (record.runner == Runner::Exec).then(|| {
            (
                artifacts.stdout_log(&record.run_id).display().to_string(),
                artifacts.stderr_log(&record.run_id).display().to_string(),
            )
        });
        Left {
            session,
            exec_output,
            output_files,
        }
    }

    /// The ending before anything is known of how the run ended.
    fn ending(
        &self,
        artifacts: &Artifacts,
        record: &RunRecord,
        elapsed_ms: u64,
        notes: &[String],
    ) -> Ending {
        Ending {
            name: record.name.clone(),
            elapsed_ms,
            session_file: (record.runner == Runner::Pi).then(|| record.session_file.clone()),
            output_files: self.output_files.clone(),
            resumable: record.runner == Runner::Pi,
            // What the child's Pi recorded running: a child that never started ran no model,
            // whatever was asked for (that stays in `Models attempted:`).
            model_used: self.session.as_ref().and_then(|s| s.model.clone()),
            models_attempted: {
                let mut models = earlier_models(artifacts, record);
                models.extend(record.model.iter().cloned());
                models
            },
            notes: notes.to_vec(),
            ..Ending::default()
        }
    }

    /// Puts the child's own report into `ending`: its last message, or an exec child's output.
    fn report_into(&self, record: &RunRecord, ending: &mut Ending) {
        ending.report = match record.runner {
            Runner::Pi => self
                .session
                .as_ref()
                .and_then(evidence::SessionSummary::report),
            Runner::Exec => self.exec_output.as_ref().map(|tail| tail.text.clone()),
        };
        // An exec child's report is the end of its stdout log, which keeps the whole of it.
        ending.report_file = match (record.runner, &ending.report, &self.output_files) {
            (Runner::Exec, Some(_), Some((stdout, _))) => Some(stdout.clone()),
            _ => None,
        };
        ending.report_abbreviated_from = report_abbreviated_from(ending, &self.exec_output);
    }
}

/// Step 3: what the evidence says of the end, into `ending` and `details`; a cancel's intent.
fn observe(
    observed: &Observed,
    artifacts: &Artifacts,
    record: &RunRecord,
    left: &Left,
    ending: &mut Ending,
    details: &mut Details,
) -> Option<CancelIntent> {
    match observed {
        Observed::Sidecar(Completion::Done) | Observed::Exited(0) => {
            ending.outcome = Some(Outcome::Completed);
            left.report_into(record, ending);
        }
        Observed::Sidecar(Completion::Error { message }) => {
            ending.outcome = Some(Outcome::Failed);
            ending.provider_error = true;
            ending.failure = Some(evidence::provider_error_text(message).into_owned());
            details.error_message = Some(message.clone());
        }
        Observed::Sidecar(Completion::Ping { message }) => {
            ending.outcome = Some(Outcome::Help);
            ending.report = Some(message.clone());
        }
        Observed::Exited(code) => {
            ending.outcome = Some(Outcome::Failed);
            ending.exit_code = Some(*code);
            left.report_into(record, ending);
            details.exit_code = Some(*code);
        }
        Observed::Lost => {
            let mut why = lost_reason(artifacts, record);
            if record.runner == Runner::Pi && !record.persistent {
                why.push_str(RESURRECT_HINT);
            }
            ending.outcome = Some(Outcome::Failed);
            ending.failure = Some(why.clone());
            details.error_message = Some(why);
        }
        Observed::LaunchFailed(why) => {
            ending.outcome = Some(Outcome::Failed);
            ending.failure = Some(why.clone());
            details.error_message = Some(why.clone());
            details.launch_failure = Some(why.clone());
        }
        Observed::Cancelled(intent) => {
            ending.outcome = Some(Outcome::Cancelled);
            return Some(intent.clone());
        }
    }
    None
}

/// Step 4: inspects a worktree child's checkout for the handoff and records the outcome in its
/// manifest. Returns the handoff document and the files it changed (untracked ones included).
fn handoff(
    artifacts: &Artifacts,
    record: &RunRecord,
    ending: &mut Ending,
) -> (
    Option<herd_protocol::worktree::WorktreeInspect>,
    Vec<String>,
) {
    let Some(worktree) = &record.worktree else {
        return (None, Vec::new());
    };
    let git = herd_git::Git::from_env();
    let deadline = herd_git::Deadline::after(herd_git::budget::HANDOFF);
    // A confined child committed into its private overlay: its branch comes home first, so the
    // handoff sees what it did.
    let homecoming = crate::homecoming::bring_home(artifacts, &record.run_id, &git, &deadline);
    let handoff = herd_worktree::handoff::inspect(
        &git,
        Path::new(&worktree.path),
        &worktree.base_sha,
        deadline,
    );
    let mut changed_files = handoff.changed_files.clone().unwrap_or_default();
    changed_files.extend(handoff.untracked_files.clone().unwrap_or_default());
    // A Herdr workspace is something a person opens; tmux's session id (`$0`) is not.
    let workspace = match record.surface {
        herd_protocol::run::SurfaceKind::Herdr => {
            record.pane.as_ref().and_then(|p| p.workspace_id.as_deref())
        }
        _ => None,
    };
    ending.handoff = herd_worktree::handoff::render_lines(&handoff, workspace);
    if let Some(note) = homecoming {
        ending
            .handoff
            .push(herd_core::escape::Evidence::detail(&note));
    }
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
    (Some(handoff.document()), changed_files)
}

/// Step 6: the parent re-check of an accept spec, which decides the verdict; a cancel during
/// it stops it, and the run is cancelled with the check skipped. Returns the verdict's details.
fn recheck(
    artifacts: &Artifacts,
    record: &RunRecord,
    spec_path: &Path,
    changed_files: &[String],
    ending: &mut Ending,
    cancellation: &mut Option<CancelIntent>,
    cancel: &Receiver<()>,
) -> ParentCheck {
    let spec = match AcceptSpec::load(spec_path) {
        Ok(spec) => spec,
        Err(err) => {
            ending.check_line = Some("Check: error (the accept spec cannot be read)".to_owned());
            return ParentCheck::Unreadable(UnreadableSpec::new(err.message));
        }
    };
    let outcome = ending.outcome.map_or(RunOutcome::Failed, |outcome| {
        outcome.with_provider_error(ending.provider_error)
    });
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
        changed_files,
        shared_checkout: record.worktree.is_none(),
    };
    let mut verdict = herd_accept::verdict(&req, cancel);
    if outcome == RunOutcome::Completed {
        if let Some(intent) = intents::read_intent(artifacts, &record.run_id) {
            ending.outcome = Some(Outcome::Cancelled);
            *cancellation = Some(intent);
            let skipped = VerdictRequest {
                outcome: RunOutcome::Cancelled,
                ..req
            };
            verdict = herd_accept::decide(&skipped, None);
        }
    }
    ending.check_line = Some(verdict.check_line().to_owned());
    ending.check_output_line = verdict.check_output_line().map(str::to_owned);
    ParentCheck::Ran(Box::new(verdict))
}

/// Step 7: a persistent specialist's end. Gone without its stop directive, it vanished (one
/// facts-only crash notice); ended on its directive, it stopped.
fn specialist_end(
    record: &RunRecord,
    observed: &Observed,
    ending: &mut Ending,
    details: &mut Details,
) {
    // A specialist gone without its stop directive: one facts-only crash notice.
    if record.persistent
        && ending.outcome == Some(Outcome::Failed)
        && matches!(observed, Observed::Lost | Observed::Exited(_))
        && !crate::tasks::stop_requested(&record.session_files())
    {
        ending.vanished = true;
        // Facts only: its last good report went out with its task, and is no crash report.
        ending.report = None;
        ending.report_file = None;
        ending.report_abbreviated_from = None;
        if let (None, Some(code)) = (&ending.failure, ending.exit_code) {
            ending.failure = Some(format!("its runner exited with code {code}"));
        }
    }
    // A specialist that ended on its stop directive stopped: its tasks' reports were delivered
    // each on its own, and the last one is not repeated as the run's. Its process gone after the
    // directive (a stop that was unconfirmed, then killed) is the stop's confirmed exit too.
    let gone = matches!(observed, Observed::Lost | Observed::Exited(_));
    if record.persistent
        && (ending.outcome == Some(Outcome::Completed)
            || (ending.outcome == Some(Outcome::Failed) && gone))
        && crate::tasks::stop_requested(&record.session_files())
    {
        ending.outcome = Some(Outcome::Completed);
        ending.failure = None;
        details.error_message = None;
        ending.stopped = true;
        ending.report = None;
        details.stopped = Some(true);
    }
}

/// Applies the run's acceptance gate (`runs/<id>.acceptance.json`) to a completed child's
/// report: the ledger goes into the details as `acceptance`, its `Acceptance:` line into the
/// message, and the report's fence out of the block (the session keeps it). A rejected explicit
/// gate fails the run; an inferred one is only reported. A reviewer's result then decides the
/// review of the run it reviews, kept in that run's `runs/<id>.review.json`.
fn apply_acceptance(
    artifacts: &Artifacts,
    record: &RunRecord,
    ending: &mut Ending,
    details: &mut Details,
    cancellation: &mut Option<CancelIntent>,
    cancel: &Receiver<()>,
) {
    use herd_accept::report;
    use herd_protocol::accept::{self, NotApplied, Status};
    let run_gate = match artifacts.run(&record.run_id).read::<accept::RunGate>() {
        Ok(Some(gate)) => gate,
        Ok(None) => return,
        Err(err) => {
            // A gate that cannot be read is not a gate that held.
            ending.acceptance_line =
                Some("Acceptance: error (the run's acceptance gate cannot be read)".to_owned());
            details.acceptance = Some(Acceptance::NotApplied(NotApplied::Error {
                error: err.to_string(),
            }));
            return;
        }
    };
    let completed = ending.outcome == Some(Outcome::Completed);
    let raw = ending.report.clone();
    if completed {
        let cwd = record
            .worktree
            .as_ref()
            .map_or(record.cwd.as_str(), |w| w.path.as_str())
            .to_owned();
        // Verify results are memoized per workspace state and environment.
        let mut host = report::memo::MemoHost::new(
            report::host::RealHost::new(cancel),
            accept::memo_dir(artifacts),
        );
        let ledger = report::evaluate(
            &run_gate.gate,
            raw.as_deref().unwrap_or_default(),
            Path::new(&cwd),
            &mut host,
        );
        if let Some(text) = &raw {
            ending.report = Some(report::strip_report(text).to_owned());
        }
        ending.acceptance_line = Some(report::host_line(&ledger));
        if ledger.cancelled {
            if let Some(intent) = intents::read_intent(artifacts, &record.run_id) {
                ending.outcome = Some(Outcome::Cancelled);
                *cancellation = Some(intent);
            }
        } else if ledger.explicit && ledger.status == Status::Rejected {
            ending.outcome = Some(Outcome::Failed);
            ending.failure = Some("the explicit acceptance gate rejected the result".to_owned());
        }
        details.acceptance = Some(Acceptance::Applied(Box::new(ledger)));
    } else {
        details.acceptance = Some(Acceptance::NotApplied(NotApplied::NotEvaluated {
            explicit: run_gate.gate.explicit,
            gate: run_gate.gate.clone(),
        }));
    }
    if let Some(target) = &run_gate.reviews {
        review(
            artifacts,
            record,
            target,
            completed,
            raw.as_deref(),
            ending,
            details,
        );
    }
}

/// A reviewer's decision on the run it reviews, recorded as that run's review and noted in
/// this run's message.
fn review(
    artifacts: &Artifacts,
    record: &RunRecord,
    target: &herd_protocol::accept::ReviewTarget,
    completed: bool,
    raw: Option<&str>,
    ending: &mut Ending,
    details: &mut Details,
) {
    use herd_accept::report;
    use herd_protocol::accept::{REVIEW_VERSION, ReviewRecord, Status};
    let (status, blockers, findings, reason) = report::review::decide(completed, raw);
    let review = ReviewRecord {
        format_version: REVIEW_VERSION,
        run_id: target.run_id.clone(),
        reviewer_run_id: record.run_id.clone(),
        reviewer_name: record.name.clone(),
        status,
        blockers,
        findings,
        reason: reason.clone(),
        at_ms: now_ms(),
    };
    // A reviewer that supplied no review leaves an earlier reviewer's decision in place.
    let run = artifacts.run(&target.run_id);
    let written = if status == Status::ReviewRequired && run.path::<ReviewRecord>().exists() {
        Ok(())
    } else {
        run.write(review.clone())
    };
    let mut note = format!(
        "Review of {} ({}): {} · {}",
        herd_core::escape::json_string(&herd_core::escape::abbreviate_name(&target.name)),
        target.run_id,
        status.as_str(),
        herd_core::escape::encode_host_value(&reason, 500)
    );
    if let Err(err) = &written {
        note.push_str(&format!(
            " (not recorded: {})",
            herd_core::escape::encode_host_value(&err.to_string(), 300)
        ));
    }
    ending.notes.push(note);
    details.review = Some(review);
}

/// The child's own accept tries and its last check's verdict, from
/// `<session>.accept-tries.json`, which the child extension writes after each check it runs.
fn read_child_tries(record: &RunRecord) -> Option<(u32, Option<ChildReport>)> {
    let tries = record
        .session_files()
        .read::<herd_protocol::accept::AcceptTries>()
        .ok()??;
    Some((tries.tries, tries.last))
}

/// The log size to name in the report's note, when the report is the exec output and was
/// abbreviated.
fn report_abbreviated_from(ending: &Ending, output: &Option<evidence::OutputTail>) -> Option<u64> {
    match (output, &ending.report) {
        (Some(tail), Some(report)) if *report == tail.text => tail.abbreviated_from,
        _ => None,
    }
}

/// Why a run that left no completion evidence is over, in the terms of where it ran: its pane
/// disappeared, or (no pane: the process surface, or no pane was recorded) its process is gone,
/// with a restart of the machine said as such when a recorded identity is of an earlier boot.
/// What a lost Pi child's result adds: the way back into its session.
const RESURRECT_HINT: &str = "; its session is kept: `/subagent resurrect` resumes it there (`/subagent resurrect --dry-run` first shows what it would do; from a shell, `herd-launch resurrect`)";

fn lost_reason(artifacts: &Artifacts, record: &RunRecord) -> String {
    if record.surface != SurfaceKind::Process && record.pane.is_some() {
        return "pane disappeared before completion evidence was recorded".to_owned();
    }
    let boot = herd_core::identity::boot_id().ok();
    let child = record.session_files().read::<herd_core::identity::Record>();
    let leader = herd_core::identity::Record::read(&artifacts.leader(&record.run_id));
    let earlier_boot = [child, leader]
        .into_iter()
        .filter_map(|read| read.ok().flatten())
        .any(|identity| boot.as_deref().is_some_and(|boot| identity.boot_id != boot));
    if earlier_boot {
        "the machine restarted (its boot id changed) after the child started: its process is gone, and it recorded no exit status or completion evidence".to_owned()
    } else {
        "its process is gone, and it recorded no exit status or completion evidence".to_owned()
    }
}

/// Step 3b: the last lines of what a failed child left, and where they are: the end of its
/// runner's stderr log (`logs/<id>.err`: the exec runner on every surface, any runner on the
/// process surface), else the last lines of its pane's screen, kept at `logs/<id>.screen`.
fn last_output(artifacts: &Artifacts, record: &RunRecord) -> Option<LastLines> {
    let stderr = artifacts.stderr_log(&record.run_id);
    let from_stderr = evidence::read_output_tail(&stderr, LAST_OUTPUT_TAIL)
        .ok()
        .flatten()
        .and_then(|tail| evidence::last_lines(&tail.text, LAST_OUTPUT_LINES));
    if let Some((text, n_lines)) = from_stderr {
        return Some(LastLines {
            kept: Kept::Stderr,
            file: stderr.display().to_string(),
            text,
            n_lines,
        });
    }
    if record.surface == SurfaceKind::Process || record.pane.is_none() {
        return None;
    }
    let screen = keep_screen(artifacts, record);
    let (text, n_lines) = evidence::read_tail_lines(&screen, LAST_OUTPUT_TAIL)
        .ok()
        .flatten()
        .and_then(|text| evidence::last_lines(&text, LAST_OUTPUT_LINES))?;
    Some(LastLines {
        kept: Kept::Screen,
        file: screen.display().to_string(),
        text,
        n_lines,
    })
}

/// Keeps the last [`SCREEN_KEPT_LINES`] lines of a pane child's screen at `logs/<id>.screen`,
/// once: a screen kept before (its pane may be gone since) stays as it is. Returns the path.
fn keep_screen(artifacts: &Artifacts, record: &RunRecord) -> PathBuf {
    let path = artifacts.screen_log(&record.run_id);
    if std::fs::symlink_metadata(&path).is_ok() {
        return path;
    }
    let Ok((surface, target)) = herd_surface::open(record, artifacts) else {
        return path;
    };
    let deadline = std::time::Instant::now() + herd_surface::REQUEST_BUDGET;
    if let Ok(screen) = surface.read_tail(&target, SCREEN_KEPT_LINES, deadline) {
        if !screen.trim().is_empty() && sidecar::ensure_private_dir(&artifacts.logs_dir()).is_ok() {
            let _ = sidecar::create_once(&path, format!("{screen}\n").as_bytes());
        }
    }
    path
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
    let marker = artifacts.ledgered(&record.run_id);
    if marker.exists() {
        return Ok(());
    }
    crate::crash_point("before-ledger");
    let ledger = artifacts.outcome_ledger();
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
    let marked = herd_protocol::result::Ledgered {
        format_version: herd_protocol::result::LEDGERED_VERSION,
    };
    sidecar::create_once(&marker, format!("{}\n", json_line(&marked)?).as_bytes())?;
    Ok(())
}

/// How much of the ledger's end is searched for a line written before a crash.
const LEDGER_TAIL: u64 = 256 * 1024;

fn append_ledger(
    artifacts: &Artifacts,
    record: &RunRecord,
    result: &RunResult,
) -> Result<(), herd_core::Error> {
    let accept = result.details.accept.as_ref();
    let earlier = earlier_models(artifacts, record);
    let line = herd_protocol::result::LedgerLine {
        version: herd_protocol::result::LEDGER_LINE_VERSION,
        at: now_ms(),
        run_id: record.run_id.clone(),
        name: record.name.clone(),
        agent: record.agent.clone(),
        model: record.model.clone(),
        thinking: record.thinking.clone(),
        attempt: earlier.len() as u64 + 1,
        candidates: earlier
            .iter()
            .chain(record.model.iter())
            .chain(record.fallback_models.iter())
            .cloned()
            .collect(),
        outcome: result.run_outcome(),
        exit_code: result.details.exit_code,
        check: accept.map_or(herd_protocol::accept::Verdict::None, ParentCheck::verdict),
        acceptance: result
            .details
            .acceptance
            .as_ref()
            .map(|a| a.status().to_owned()),
        tries: accept.and_then(ParentCheck::tries).map(u64::from),
        elapsed_ms: result.details.elapsed_ms,
        worktree: record.worktree.is_some(),
        persistent: record.persistent,
        usage: result.details.usage.as_ref().map(|u| u.tally.total),
    };
    Ok(sidecar::append_line(
        &artifacts.outcome_ledger(),
        &json_line(&line)?,
    )?)
}

/// `doc` as one line of JSON with its keys in byte order, as every herd document.
fn json_line(doc: &impl serde::Serialize) -> Result<String, herd_core::Error> {
    serde_json::to_value(doc)
        .map(|value| value.to_string())
        .map_err(|e| herd_core::Error::internal(format!("cannot encode a ledger line: {e}")))
}
