//! The steps of one run's tick after it is looked at: settle and deliver a result, read the
//! child's evidence, judge and reconcile, complete, and the status transitions.

use std::ops::ControlFlow;
use std::path::Path;
use std::time::{Duration, Instant};

use herd_core::{Error, time::now_ms};
use herd_protocol::child::{self, ActivityRead, ExitRead};
use herd_protocol::layout::Artifacts;
use herd_protocol::needs_input::{InputReason, NeedsInput};
use herd_protocol::run::{LaunchStatus, RunRecord};

use crate::control::{self};
use crate::delivery::{self};
use crate::evidence;
use crate::fallback;
use crate::finish::{self, Observed};
use crate::launch::LaunchState;
use crate::projection::{CancelState, Notice, Projection, notice, short_duration};
use crate::tasks;
use herd_protocol::intents::Termination;
use herd_protocol::result::RunResult;
use herd_protocol::watch::Label;

use super::event::quoted;
use super::reconcile::reconcile;
use super::{Event, Finisher, Look, SIDECAR_GRACE, Tracked, append_event};

/// Step 1: delivers a settled result (a finisher's or a cancel's: its file appearing is an
/// event of the run), and minds a finisher at work. `Some(done)` when the tick of the run ends
/// here.
pub(super) fn settle(
    run: &mut Tracked,
    artifacts: &Artifacts,
    id: &str,
    changed: bool,
    events: &mut Vec<Event>,
    deliver: &mut impl FnMut(&RunResult) -> std::io::Result<()>,
) -> Result<Option<bool>, Error> {
    let settled = if changed || run.finisher.is_some() {
        // A result that cannot be read is settled failed in its place; one that cannot be read
        // for another reason (a newer version's, an I/O error) stops this run alone, said once.
        match delivery::load_or_settle(artifacts, &run.record, None) {
            Ok(settled) => settled,
            Err(err) => {
                if !run.unreadable_noticed {
                    run.unreadable_noticed = true;
                    events.push(Event::Notice {
                        run_id: id.to_owned(),
                        message: format!(
                            "The result of {} ({id}) cannot be read, so it is not delivered: {}",
                            quoted(&run.record.name),
                            herd_core::escape::encode_host_value(&err.message, 500)
                        ),
                    });
                }
                return Ok(Some(false));
            }
        }
    } else {
        None
    };
    if let Some(result) = settled {
        crate::crash_point("before-deliver");
        finish::record_outcome(artifacts, &run.record, &result)?;
        if let Some(finisher) = run.finisher.take() {
            let _ = finisher.cancel.send(());
            let _ = finisher.handle.join();
        }
        deliver_result(artifacts, &result, deliver, events)?;
        control::close_finished_pane(artifacts, &run.record);
        return Ok(Some(true));
    }
    if run
        .finisher
        .as_ref()
        .is_some_and(|f| f.handle.is_finished())
    {
        if let Some(finisher) = run.finisher.take() {
            let _ = finisher.handle.join();
        }
        if let Some(successor) = fallback::read_superseded(artifacts, id).and_then(|s| s.successor)
        {
            events.push(Event::Notice {
                run_id: id.to_owned(),
                message: format!(
                    "{} hit a provider error; the next model runs as {successor}.",
                    quoted(&run.record.name)
                ),
            });
            return Ok(Some(true));
        }
        // The finisher ended without settling (an I/O error): the next tick tries again.
        return Ok(Some(false));
    }
    if let Some(finisher) = &run.finisher {
        // The re-check runs; a cancel stops it.
        if herd_protocol::intents::read_intent(artifacts, id).is_some() {
            let _ = finisher.cancel.send(());
        }
        return Ok(Some(false));
    }
    Ok(None)
}

/// Step 2: the cheap evidence, read when the run's files may have changed: cancel intent (and
/// the retries of its termination), a time limit, an interrupt, a specialist's stop, activity,
/// a budget.
/// Returns the completion sidecar when one is there.
pub(super) fn read_evidence(
    run: &mut Tracked,
    artifacts: &Artifacts,
    id: &str,
    now: u64,
    read: bool,
    due: bool,
) -> Option<child::Completion> {
    crate::crash_point("evidence");
    if read {
        run.intent = herd_protocol::intents::read_intent(artifacts, id);
    }
    let intent = run.intent.clone();
    if intent.is_none()
        && crate::timeout::expired(&run.record, now)
        && run.timing_out.as_ref().is_none_or(|t| t.is_finished())
    {
        run.timing_out = Some(crate::timeout::enforce(artifacts, &run.record, now));
    }
    run.lifecycle.cancel = match &intent {
        None => CancelState::None,
        Some(i) if i.termination == Some(Termination::Unconfirmed) => CancelState::Unconfirmed,
        Some(_) => CancelState::Requested,
    };
    if let Some(intent) = &intent {
        retry_termination(run, artifacts, intent);
    }
    if let Some(at) = read
        .then(|| herd_protocol::intents::read_interrupt(artifacts, id))
        .flatten()
    {
        if run.interrupt_seen != Some(at) {
            run.interrupt_seen = Some(at);
            run.lifecycle.interrupt(at);
        }
    }
    // An unconfirmed stop is judged from the ledger and the clock: looked at when the files
    // changed and on each reconciliation, and woken for at its deadline.
    if run.record.persistent && (read || due) {
        let deadline = tasks::stop_deadline(&run.record);
        run.lifecycle.stop_unconfirmed = deadline.filter(|at| now >= *at);
        run.stop_due_ms = deadline.filter(|at| now < *at);
    }
    if read {
        if let ActivityRead::Found(activity) = child::read_activity(&artifacts.activity(id), id) {
            run.lifecycle.observe_activity(&activity);
        }
        crate::status::observe_waiting(&run.record, &mut run.lifecycle);
    }
    // A sidecar found before started a finisher; one written since is an event.
    let completion = match read.then(|| child::read_run_exit(&run.record)) {
        Some(ExitRead::Found(completion)) => Some(completion),
        _ => None,
    };
    // A budget is judged when the session may have grown and at each reconciliation, for a run
    // still at work that nothing is ending already.
    if completion.is_none()
        && (read || due)
        && intent.is_none()
        && run.record.extra.budget.is_some()
        && run.timing_out.as_ref().is_none_or(|t| t.is_finished())
    {
        if let Some(stop) = crate::budget::reached(artifacts, &run.record, now) {
            run.timing_out = Some(crate::budget::enforce(artifacts, &run.record, stop));
        }
    }
    completion
}

/// Step 2, for a persistent specialist: its task results, each delivered once.
pub(super) fn deliver_task_results(
    run: &mut Tracked,
    artifacts: &Artifacts,
    id: &str,
    events: &mut Vec<Event>,
    deliver: &mut impl FnMut(&RunResult) -> std::io::Result<()>,
) -> Result<(), Error> {
    let pass = tasks::pass(artifacts, &run.record)?;
    if pass.foreign && !run.foreign_noticed {
        run.foreign_noticed = true;
        events.push(Event::Notice {
            run_id: id.to_owned(),
            message: format!(
                "{} reported a task this parent did not issue; it was ignored.",
                quoted(&run.record.name)
            ),
        });
    }
    for result in pass.results {
        if deliver_result(artifacts, &result, deliver, events)? {
            let _ = tasks::record_delivery(&run.record, &result);
        }
    }
    Ok(())
}

/// Step 3: a record whose launch has not finished is read again (the launch fills in its pane
/// and status when it has them) and judged: a launch that failed or lost its launcher settles
/// without a child. A launched child's surface is reconciled when due. Continues with the
/// evidence other than the sidecar; breaks when the run was handed to a successor.
pub(super) fn judge_and_reconcile(
    run: &mut Tracked,
    artifacts: &Artifacts,
    id: &str,
    look: &Look,
    now: u64,
    read: bool,
    lost_grace: Duration,
) -> ControlFlow<(), Option<Observed>> {
    if run.record.status != LaunchStatus::Launched {
        if let Ok(record) = RunRecord::load(artifacts, id) {
            run.record = record;
        }
    }
    let mut other_evidence = None;
    match crate::launch::judge(artifacts, &run.record) {
        LaunchState::Supervise => {
            run.orphaned_since = None;
            if look.due {
                run.last_reconcile = Some(Instant::now());
                other_evidence =
                    reconcile(run, artifacts, now, look.listed.clone(), look.may_watch);
            }
        }
        LaunchState::InProgress => run.orphaned_since = None,
        LaunchState::Superseded => return ControlFlow::Break(()),
        LaunchState::Failed(why) => {
            other_evidence = Some(Observed::LaunchFailed(format!("the launch failed: {why}")));
        }
        LaunchState::Orphaned(why) => {
            let since = *run.orphaned_since.get_or_insert_with(Instant::now);
            if since.elapsed() >= lost_grace {
                other_evidence = Some(Observed::LaunchFailed(format!(
                    "lost: {why} before a child was seen, and none appeared within {} s",
                    lost_grace.as_secs()
                )));
            }
        }
    }
    if let Some(code) = read
        .then(|| herd_surface::read_runner_exit(&herd_surface::runner_exit_file(artifacts, id)))
        .flatten()
    {
        other_evidence = Some(Observed::Exited(code));
    }
    ControlFlow::Continue(other_evidence)
}

/// Step 4: completion. The sidecar decides; other evidence waits out [`SIDECAR_GRACE`] for a
/// late one; after a cancel intent the outcome is cancelled. Once observed, a finisher builds
/// the result in a thread of its own.
pub(super) fn complete(
    run: &mut Tracked,
    artifacts: &Artifacts,
    sidecar: Option<child::Completion>,
    other_evidence: Option<Observed>,
    now: u64,
) {
    let observed = match (sidecar, other_evidence) {
        (Some(completion), _) => Some(Observed::Sidecar(completion)),
        (None, Some(other)) => {
            let since = match &run.pending {
                Some((_, since)) => *since,
                None => {
                    run.pending = Some((other.clone(), Instant::now()));
                    Instant::now()
                }
            };
            (since.elapsed() >= SIDECAR_GRACE).then_some(other)
        }
        (None, None) => run
            .pending
            .as_ref()
            .filter(|(_, since)| since.elapsed() >= SIDECAR_GRACE)
            .map(|(o, _)| o.clone()),
    };
    let observed = match (observed, &run.intent) {
        // After a cancel intent the run never takes another outcome than cancelled, unless
        // the child's own report was already there.
        (Some(Observed::Sidecar(c)), _) => Some(Observed::Sidecar(c)),
        (Some(_), Some(intent)) => Some(Observed::Cancelled(intent.clone())),
        (other, _) => other,
    };
    let Some(observed) = observed else {
        return;
    };
    crate::crash_point("completion-observed");
    // The process clock stops when the child ended, when its files say so.
    let ended = match &observed {
        Observed::Sidecar(_) | Observed::Exited(_) => {
            evidence::ended_at_ms(artifacts, &run.record).map_or(now, |at| at.min(now))
        }
        _ => now,
    };
    run.lifecycle.finalize(ended);
    let (tx, rx) = crossbeam_channel::bounded(1);
    let record = run.record.clone();
    let elapsed = run.lifecycle.elapsed_ms(now);
    let finisher_artifacts = artifacts.clone();
    let handle = std::thread::spawn(move || {
        finish::finish(&finisher_artifacts, &record, observed, elapsed, &rx)
    });
    run.finisher = Some(Finisher { handle, cancel: tx });
}

/// Step 5: the status projection's transitions, each an event (and a line in the run's
/// events); the stall and recovery notices and the unconfirmed-stop notice (docs/lifecycle.md,
/// "Notices to the parent" and "Persistent specialists"); the no-progress notice; queued
/// steering delivered between turns.
pub(super) fn transitions(
    run: &mut Tracked,
    artifacts: &Artifacts,
    id: &str,
    now: u64,
    hang_warning: Option<Duration>,
    events: &mut Vec<Event>,
) {
    let projection = run.lifecycle.project(now);
    if let Some(budget) = hang_warning {
        no_progress(run, artifacts, &projection, budget, now, events);
    }
    deliver_queued_steer(run, artifacts, id, &projection, events);
    if projection.label == run.label && projection.detail == run.detail {
        return;
    }
    let previous = run.label;
    // A stop asked again leaves the unconfirmed stop for another bounded check: that is the
    // parent's own request, not a recovery to announce.
    let stop_retried = run.detail.as_deref() == Some(crate::projection::STOP_UNCONFIRMED);
    let stop_stalled = projection.label == Label::Stalled
        && projection.detail.as_deref() == Some(crate::projection::STOP_UNCONFIRMED);
    run.label = projection.label;
    run.detail = projection.detail.clone();
    let _ = append_event(artifacts, id, &projection);
    // The timeout notice of one stop attempt, to every parent: a specialist is
    // interactive, and hears of no other stall.
    if stop_stalled && !stop_retried {
        events.push(Event::Notice {
            run_id: id.to_owned(),
            message: format!(
                "{} did not confirm its exit within {} s of its stop directive; it is stalled in an unconfirmed stop and takes no follow-up task. Stop it again for another exit check, or spawn a new specialist.",
                quoted(&run.record.name),
                tasks::STOP_DEADLINE_MS / 1000
            ),
        });
    }
    if !run.record.interactive && !stop_stalled {
        stall_notice(run, id, previous, &projection, stop_retried, now, events);
    }
    // Once per transition into waiting for a person (or from one reason to another).
    if projection.label == Label::WaitingForInput {
        if let Some(input) = run.lifecycle.needs_input(now).cloned() {
            events.push(Event::NeedsInput {
                run_id: id.to_owned(),
                name: run.record.name.clone(),
                input,
            });
        }
    }
    events.push(Event::Status {
        run_id: id.to_owned(),
        name: run.record.name.clone(),
        projection,
    });
}

/// Queued steering goes out between turns: waiting, or an interactive child's settled run
/// (never into a dialog), and never while a finisher is at work.
fn deliver_queued_steer(
    run: &Tracked,
    artifacts: &Artifacts,
    id: &str,
    projection: &Projection,
    events: &mut Vec<Event>,
) {
    let between_turns = projection.label == Label::Waiting
        || (projection.label == Label::WaitingForInput
            && projection.detail.as_deref() == Some(InputReason::TurnSettled.as_str()));
    if !between_turns || run.finisher.is_some() {
        return;
    }
    if let Some((surface, target)) = &run.surface {
        if let Ok(true) =
            control::deliver_queued_steer(artifacts, &run.record, surface.as_ref(), target)
        {
            events.push(Event::Notice {
                run_id: id.to_owned(),
                message: format!("queued steering delivered to {}", quoted(&run.record.name)),
            });
        }
    }
}

/// A non-interactive run's stall and recovery notices (docs/lifecycle.md, "Notices to the
/// parent").
fn stall_notice(
    run: &Tracked,
    id: &str,
    previous: Label,
    projection: &Projection,
    stop_retried: bool,
    now: u64,
    events: &mut Vec<Event>,
) {
    let name = run.record.name.clone();
    // The notices' shapes: "<name> running <rt>, stalled <d>." and
    // "<name> running <rt>, recovered; active (<label> <d>)."
    let running = short_duration(run.lifecycle.elapsed_ms(now));
    let held = projection
        .since_ms
        .map(|since| short_duration(now.saturating_sub(since)));
    let state = match (projection.label, projection.detail.as_deref(), &held) {
        (Label::Active, Some(detail), Some(d)) => format!(
            "active ({} {d})",
            herd_core::escape::encode_host_value(detail, 80)
        ),
        (Label::Active, _, Some(d)) => format!("active ({d})"),
        (label, _, Some(d)) => format!("{} {d}", label.as_str()),
        (label, _, None) => label.as_str().to_owned(),
    };
    match notice(previous, projection.label).filter(|n| !(stop_retried && *n == Notice::Recovered))
    {
        Some(Notice::Stalled) => events.push(Event::Stalled {
            run_id: id.to_owned(),
            line: format!("{} running {running}, {state}.", quoted(&name)),
            name,
        }),
        Some(Notice::Recovered) => events.push(Event::Recovered {
            run_id: id.to_owned(),
            line: format!("{} running {running}, recovered; {state}.", quoted(&name)),
            name,
        }),
        None => {}
    }
}

/// Drives the termination of a cancelled run that its cancel could not confirm: another attempt
/// once the backoff has passed (1 s, doubling to a 30 s cap), until one confirms. A cancel still
/// within its own deadline, and a launch herd-launch is still acquiring, are left to their owners.
fn retry_termination(
    run: &mut Tracked,
    artifacts: &Artifacts,
    intent: &herd_protocol::intents::CancelIntent,
) {
    let retries = &mut run.termination;
    if let Some(attempt) = retries.attempt.take_if(|a| a.is_finished()) {
        if !matches!(attempt.join(), Ok(Ok(()))) {
            retries.failures = retries.failures.saturating_add(1);
            retries.next_at = Some(Instant::now() + herd_surface::retry_wait(retries.failures));
        }
    }
    if retries.attempt.is_some() || intent.termination == Some(Termination::Confirmed) {
        return;
    }
    let in_flight = intent.termination.is_none()
        && now_ms().saturating_sub(intent.requested_at_ms)
            < u64::try_from(control::CANCEL_DEADLINE.as_millis()).unwrap_or(u64::MAX) + 1_000;
    if in_flight || crate::launch::judge(artifacts, &run.record) == LaunchState::InProgress {
        return;
    }
    let next_at = *retries
        .next_at
        .get_or_insert_with(|| Instant::now() + herd_surface::retry_wait(0));
    if Instant::now() < next_at {
        return;
    }
    let artifacts = artifacts.clone();
    let record = run.record.clone();
    retries.attempt = Some(std::thread::spawn(move || {
        control::retry_termination(&artifacts, &record)
    }));
}

/// The no-progress advisory: a notice when an active or blocked run shows no progress (session
/// and activity untouched) for `budget`, and another when progress resumes. Never a kill.
fn no_progress(
    run: &mut Tracked,
    artifacts: &Artifacts,
    projection: &Projection,
    budget: Duration,
    now: u64,
    events: &mut Vec<Event>,
) {
    let busy = matches!(projection.label, Label::Active | Label::Blocked);
    run.hang_due_ms = None;
    if !busy && !run.hang_warned {
        // Nothing to announce either way: no file is looked at.
        return;
    }
    let session = Path::new(&run.record.session_file);
    let modified = |path: &Path| {
        std::fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_millis() as u64)
    };
    let last = [
        modified(session),
        modified(&artifacts.activity(&run.record.run_id)),
        Some(run.record.created_at_ms),
    ]
    .into_iter()
    .flatten()
    .max()
    .unwrap_or(now);
    let budget_ms = u64::try_from(budget.as_millis()).unwrap_or(u64::MAX);
    let stale = busy && now.saturating_sub(last) >= budget_ms;
    if busy && !stale && !run.hang_warned {
        run.hang_due_ms = Some(last.saturating_add(budget_ms));
    }
    let id = run.record.run_id.clone();
    if stale && !run.hang_warned {
        run.hang_warned = true;
        let class = evidence::read_tail_lines(session, evidence::NO_PROGRESS_TAIL)
            .ok()
            .flatten()
            .map_or(evidence::NoProgress::Generic, |tail| {
                evidence::classify_no_progress(&tail)
            });
        events.push(Event::Notice {
            run_id: id,
            message: format!(
                "{} has made no progress for {} ({}); it is still running and was not stopped.",
                quoted(&run.record.name),
                crate::projection::short_duration(now.saturating_sub(last)),
                class.as_str()
            ),
        });
    } else if !stale && run.hang_warned && now.saturating_sub(last) < budget_ms {
        run.hang_warned = false;
        events.push(Event::Notice {
            run_id: id,
            message: format!("{} is making progress again.", quoted(&run.record.name)),
        });
    }
}

/// Delivers `result` once through `deliver`; records the event when this call delivered it.
fn deliver_result(
    artifacts: &Artifacts,
    result: &RunResult,
    deliver: &mut impl FnMut(&RunResult) -> std::io::Result<()>,
    events: &mut Vec<Event>,
) -> Result<bool, Error> {
    let delivered = delivery::deliver_once(artifacts, result, |r| deliver(r))?;
    if delivered {
        events.push(Event::Result(Box::new(result.clone())));
        // A help request: the child waits for its answer from now on.
        if result.outcome == herd_protocol::result::Outcome::Help && result.task.is_none() {
            events.push(Event::NeedsInput {
                run_id: result.run_id.clone(),
                name: result.name.clone(),
                input: NeedsInput {
                    reason: InputReason::HelpRequest,
                    since_ms: result.settled_at_ms,
                    kind: None,
                    title: None,
                },
            });
        }
    }
    Ok(delivered)
}
