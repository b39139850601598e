//! Control of a running child: cancel, interrupt, stop and steer (docs/lifecycle.md, "Cancel"
//! and "Interrupt, stop and steer").
//!
//! Every control records its intent on disk before it touches anything, so a watcher that starts
//! later sees it and never advances a run the parent wanted ended.

use std::time::{Duration, Instant};

use herd_core::identity::{self, Judgement};
use herd_core::{Error, ErrorCode, time::now_ms};
use herd_protocol::layout::Artifacts;
use herd_protocol::run::{LaunchStatus, RunRecord, Runner};
use herd_surface::{Closed, Key, Surface, Target};

use crate::delivery::{self};
use crate::launch::LaunchState;
use herd_protocol::child::{ActivityRead, read_activity};
use herd_protocol::intents::{
    CancelIntent, STEER_LEDGER_MAX, SteerQueue, SteerReceipt, SteeringLedger, Termination,
    read_intent, steering_ledger,
};
use herd_protocol::intents::{Interrupt, STEER_ACK_WINDOW_MS};
use herd_protocol::result::Outcome;
use herd_protocol::run_file::RunFile;

/// The cancel deadline: every query and wait of one cancel attempt is bounded by it.
pub const CANCEL_DEADLINE: Duration = Duration::from_secs(5);
/// The bound of the steering queue: a steer to a full queue is refused.
pub const STEER_QUEUE_MAX: usize = 20;

use herd_protocol::watch::CancelStatus;

/// The answer of a cancel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CancelReply {
    pub status: CancelStatus,
    pub requested_at_ms: Option<u64>,
    pub error: Option<String>,
}

/// Cancels `record`: records the intent, terminates the child through its surface or its
/// verified identity, and settles the cancelled result once termination is confirmed.
pub fn cancel(artifacts: &Artifacts, record: &RunRecord) -> Result<CancelReply, Error> {
    if record.persistent {
        return Err(Error::invalid(
            "run",
            "a persistent specialist is stopped with `herd-watch stop`, not cancelled",
        ));
    }
    let terminal = |requested_at_ms| {
        Ok(CancelReply {
            status: CancelStatus::AlreadyTerminal,
            requested_at_ms,
            error: None,
        })
    };
    if delivery::load(artifacts, &record.run_id)?.is_some() {
        return terminal(None);
    }
    let fresh = CancelIntent {
        format_version: CancelIntent::VERSION,
        requested_at_ms: now_ms(),
        termination: None,
        confirmed_at_ms: None,
        error: None,
    };
    // Repeated cancels join the first: its request time stands.
    artifacts.run(&record.run_id).create_once(fresh.clone())?;
    let mut intent = read_intent(artifacts, &record.run_id).unwrap_or(fresh);
    if record.status == LaunchStatus::Pending
        && crate::launch::judge(artifacts, record) == LaunchState::InProgress
    {
        // The launch is still acquiring its owner; herd-launch terminates it once acquired.
        // Once herd-launch is gone, whatever child it left is terminated here instead.
        return Ok(CancelReply {
            status: CancelStatus::Requested,
            requested_at_ms: Some(intent.requested_at_ms),
            error: None,
        });
    }
    let deadline = Instant::now() + CANCEL_DEADLINE;
    let outcome = terminate(artifacts, record, deadline);
    if delivery::load(artifacts, &record.run_id)?.is_some_and(|r| r.outcome != Outcome::Cancelled) {
        // The child's natural result was taken first: it stays authoritative.
        return terminal(Some(intent.requested_at_ms));
    }
    match outcome {
        Ok(()) => {
            intent.termination = Some(Termination::Confirmed);
            intent.confirmed_at_ms = Some(now_ms());
            intent.error = None;
            artifacts.run(&record.run_id).write(intent.clone())?;
            let elapsed = now_ms().saturating_sub(record.created_at_ms);
            let (_tx, rx) = crossbeam_channel::bounded::<()>(1);
            let result = crate::finish::build(
                artifacts,
                record,
                crate::finish::Observed::Cancelled(intent.clone()),
                elapsed,
                &rx,
                &[],
            );
            let settled = delivery::settle(artifacts, &result)?;
            if settled.outcome != Outcome::Cancelled {
                return terminal(Some(intent.requested_at_ms));
            }
            Ok(CancelReply {
                status: CancelStatus::Confirmed,
                requested_at_ms: Some(intent.requested_at_ms),
                error: None,
            })
        }
        Err(reason) => {
            intent.termination = Some(Termination::Unconfirmed);
            intent.error = Some(reason.clone());
            artifacts.run(&record.run_id).write(intent.clone())?;
            Ok(CancelReply {
                status: CancelStatus::Unconfirmed,
                requested_at_ms: Some(intent.requested_at_ms),
                error: Some(reason),
            })
        }
    }
}

/// Tries the termination of a cancelled run again (the watcher's retry, with the probes' backoff
/// between attempts) and records the outcome in its intent: confirmed, or still unconfirmed with
/// the newest reason. The result itself is settled by the watcher once the child is gone.
pub fn retry_termination(artifacts: &Artifacts, record: &RunRecord) -> Result<(), String> {
    let outcome = terminate(artifacts, record, Instant::now() + CANCEL_DEADLINE);
    let Some(mut intent) = read_intent(artifacts, &record.run_id) else {
        return outcome;
    };
    match &outcome {
        Ok(()) => {
            intent.termination = Some(Termination::Confirmed);
            intent.confirmed_at_ms = Some(now_ms());
            intent.error = None;
        }
        Err(reason) => {
            intent.termination = Some(Termination::Unconfirmed);
            intent.error = Some(reason.clone());
        }
    }
    artifacts
        .run(&record.run_id)
        .write(intent)
        .map_err(|e| e.to_string())?;
    outcome
}

/// Ends the child within `deadline`: an ordinary owned pane is closed and its absence
/// confirmed; a headless child's whole session is ended; a worktree child's (or a child whose
/// launcher died before it recorded a pane) verified identity gets SIGTERM.
pub(crate) fn terminate(
    artifacts: &Artifacts,
    record: &RunRecord,
    deadline: Instant,
) -> Result<(), String> {
    let Ok((surface, target)) = herd_surface::open(record, artifacts) else {
        return terminate_identity(record, None, deadline);
    };
    let retained_root = record.worktree.is_some() || !record.pane.as_ref().is_some_and(|p| p.owned);
    if let (Target::Pane(_), false) = (&target, retained_root) {
        return match herd_surface::close_confirmed(surface.as_ref(), &target, deadline) {
            Closed::Confirmed => Ok(()),
            Closed::Unconfirmed(reason) => {
                Err(format!("the pane was not confirmed closed: {reason}"))
            }
        };
    }
    if let Target::Process(_) = target {
        return match herd_surface::close_confirmed(surface.as_ref(), &target, deadline) {
            Closed::Confirmed => Ok(()),
            Closed::Unconfirmed(reason) => Err(format!("termination was not confirmed: {reason}")),
        };
    }
    // A retained worktree root: only the verified identity is signalled, never the pane.
    terminate_identity(record, Some((surface.as_ref(), &target)), deadline)
}

/// SIGTERM to the child's recorded identity, verified first; without one, only the pane's
/// absence (when there is a pane) confirms the child gone.
fn terminate_identity(
    record: &RunRecord,
    pane: Option<(&dyn Surface, &Target)>,
    deadline: Instant,
) -> Result<(), String> {
    let identity = if record.session_file.is_empty() {
        None
    } else {
        record
            .session_files()
            .read::<identity::Record>()
            .map_err(|e| e.to_string())?
    };
    let Some(id) = identity else {
        return match pane.map(|(surface, target)| surface.presence(target, deadline)) {
            Some(Ok(herd_surface::Presence::Absent)) => Ok(()),
            Some(_) => Err("no process identity was captured and the pane is still there".into()),
            None => Err(
                "no owner of a child was identified yet: no pane and no process identity".into(),
            ),
        };
    };
    match identity::terminate(&id, libc::SIGTERM) {
        identity::Termination::Exited => return Ok(()),
        identity::Termination::Signalled => {}
        identity::Termination::Unknown(reason) => {
            return Err(format!("the identity was not signalled: {reason}"));
        }
    }
    match identity::wait_exited(&id, deadline) {
        Judgement::Exited => Ok(()),
        Judgement::Alive => Err("the process is still alive after SIGTERM".into()),
        Judgement::Unknown(reason) => Err(reason),
    }
}

/// How long a settled run's pane waits for its runner's exit record before it is left open.
const RUNNER_EXIT_WAIT: Duration = Duration::from_secs(5);

/// The setting that keeps the tmux panes of finished children (`1`).
pub const TMUX_KEEP_PANES_ENV: &str = "HERD_TMUX_KEEP_PANES";

/// Closes the pane of a settled run once its runner has exited, unless the user is in it: herd
/// created it for this child, and Herdr would keep it open as an idle shell, tmux as a dead
/// pane beside the live ones (a failed child's screen is kept in `logs/<id>.screen` first).
/// A pane herd did not create is never closed, nor a Herdr worktree root, nor a tmux pane when
/// `HERD_TMUX_KEEP_PANES=1`; a runner still running keeps its pane (its end is not herd's to
/// force after a result).
///
/// It runs on a thread of its own, so the wait for the runner's exit never holds up what the
/// watcher does next (reading the parent's acknowledgement of the result it just delivered);
/// [`join_pane_closers`] waits for the closes still at work before the program ends.
pub fn close_finished_pane(artifacts: &Artifacts, record: &RunRecord) {
    let (artifacts, record) = (artifacts.clone(), record.clone());
    let closer = std::thread::spawn(move || close_pane_now(&artifacts, &record));
    PANE_CLOSERS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(closer);
}

/// The closes of finished panes still at work.
static PANE_CLOSERS: std::sync::Mutex<Vec<std::thread::JoinHandle<()>>> =
    std::sync::Mutex::new(Vec::new());

/// Waits for every close of a finished pane started by this program (each bounded by the
/// runner's exit wait and one surface request).
pub fn join_pane_closers() {
    let closers = std::mem::take(
        &mut *PANE_CLOSERS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    for closer in closers {
        let _ = closer.join();
    }
}

fn close_pane_now(artifacts: &Artifacts, record: &RunRecord) {
    use herd_protocol::run::SurfaceKind;
    let Some(pane) = record.pane.as_ref() else {
        return;
    };
    let closes = match record.surface {
        SurfaceKind::Herdr => record.worktree.is_none(),
        SurfaceKind::Tmux => std::env::var(TMUX_KEEP_PANES_ENV).as_deref() != Ok("1"),
        SurfaceKind::Process => false,
    };
    if !closes || !pane.owned {
        return;
    }
    let exit = herd_surface::runner_exit_file(artifacts, &record.run_id);
    let deadline = Instant::now() + RUNNER_EXIT_WAIT;
    while herd_surface::read_runner_exit(&exit).is_none() {
        if Instant::now() >= deadline {
            return;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let target = Target::Pane(pane.clone());
    let deadline = Instant::now() + herd_surface::REQUEST_BUDGET;
    // Cosmetic: a pane left open is only an idle shell or a dead pane.
    if record.surface == SurfaceKind::Tmux {
        if let Some(socket) = &pane.socket {
            if let Ok(program) = herd_surface::tmux::find_program() {
                let surface = herd_surface::tmux::Tmux::with_socket(program, socket.into(), None);
                let _ = surface.close_finished(&target, deadline);
            }
        }
        return;
    }
    if let Ok(surface) = herd_surface::herdr::Herdr::for_pane(pane) {
        let _ = surface.close_finished(&target, deadline);
    }
}

/// Sends Escape to the child's pane and records the interrupt time.
pub fn interrupt(artifacts: &Artifacts, record: &RunRecord) -> Result<u64, Error> {
    if delivery::load(artifacts, &record.run_id)?.is_some() {
        return Err(Error::new(
            ErrorCode::Conflict,
            format!("run {} has already ended", record.run_id),
        ));
    }
    let (surface, target) = herd_surface::open(record, artifacts)?;
    let at = now_ms();
    herd_surface::deliver(
        surface.as_ref(),
        &target,
        &herd_surface::Child::of(record, artifacts),
        &[Key::Escape],
        Instant::now() + herd_surface::REQUEST_BUDGET,
    )?;
    let stamp = Interrupt {
        format_version: Interrupt::VERSION,
        at_ms: at,
    };
    artifacts.run(&record.run_id).write(stamp)?;
    Ok(at)
}

use herd_protocol::watch::SteerMode;

use herd_protocol::watch::SteerState;

/// Adds or replaces (by request id) one receipt, keeping the newest [`STEER_LEDGER_MAX`].
fn record_receipt(
    artifacts: &Artifacts,
    run_id: &str,
    receipt: &SteerReceipt,
) -> Result<(), Error> {
    let mut ledger = steering_ledger(artifacts, run_id);
    match ledger
        .requests
        .iter_mut()
        .find(|r| r.request_id == receipt.request_id)
    {
        Some(slot) => *slot = receipt.clone(),
        None => ledger.requests.push(receipt.clone()),
    }
    let extra = ledger.requests.len().saturating_sub(STEER_LEDGER_MAX);
    ledger.requests.drain(..extra);
    artifacts.run(run_id).write(ledger)?;
    Ok(())
}

/// The lock every writer of a run's steering files holds (a command and the watcher).
fn steering_lock(artifacts: &Artifacts, run_id: &str) -> Result<herd_core::lock::FileLock, Error> {
    Ok(herd_core::lock::exclusive(
        &artifacts.steer_lock(run_id),
        Instant::now() + herd_surface::REQUEST_BUDGET,
    )?)
}

/// A request id unique within the run: the time and a sequence number.
fn new_request_id(ledger: &SteeringLedger, at_ms: u64) -> String {
    let mut n = ledger.requests.len() + 1;
    loop {
        let id = format!("steer-{at_ms}-{n}");
        if !ledger.requests.iter().any(|r| r.request_id == id) {
            return id;
        }
        n += 1;
    }
}

/// Steers a running child with `message`, and returns the request's receipt, which the run's
/// steering ledger keeps.
///
/// A message reaches the child as typed keys, so a control character in it would be a key of
/// its own (a carriage return submits half the message, an escape interrupts the turn): it is
/// refused, as is a message with nothing to say, before anything is queued or sent. Newlines are
/// kept: they are lines of the one message. A refused request records nothing; every other one
/// has a receipt: `pending` is written before the keys are sent, then `delivered`, `queued` or
/// `failed` with the reason (a full queue, a surface that did not take the keys).
pub fn steer(
    artifacts: &Artifacts,
    record: &RunRecord,
    message: &str,
    mode: SteerMode,
    turn_active: bool,
) -> Result<SteerReceipt, Error> {
    check_message(message)?;
    if delivery::load(artifacts, &record.run_id)?.is_some() {
        return Err(Error::new(
            ErrorCode::Conflict,
            format!("run {} has already ended", record.run_id),
        ));
    }
    let run_id = record.run_id.as_str();
    let _lock = steering_lock(artifacts, run_id)?;
    let at = now_ms();
    let mut receipt = SteerReceipt {
        request_id: new_request_id(&steering_ledger(artifacts, run_id), at),
        mode,
        state: SteerState::Pending,
        requested_at_ms: at,
        delivered_at_ms: None,
        typed_at_ms: None,
        note: None,
        error: None,
        error_code: None,
    };
    let queue_now = match mode {
        SteerMode::Steer => false,
        SteerMode::FollowUp => true,
        SteerMode::Auto => turn_active,
    };
    // Seed 004: "A pending indexed child returns `scheduled`": a child launched but not started
    // (no runner identity recorded yet) has nothing to type into; the message waits for it.
    let starting = herd_surface::Child::of(record, artifacts).starting();
    if queue_now || starting {
        enqueue(artifacts, record, message, &mut receipt)?;
        if starting && receipt.state == SteerState::Queued {
            receipt.state = SteerState::Scheduled;
            record_receipt(artifacts, run_id, &receipt)?;
        }
        return Ok(receipt);
    }
    record_receipt(artifacts, run_id, &receipt)?;
    // A Pi child says which inputs its Pi took: the count before the keys, to see it grow.
    let inputs_before = (record.runner == Runner::Pi).then(|| input_count(artifacts, run_id));
    let sent = herd_surface::open(record, artifacts).and_then(|(surface, target)| {
        let deadline = Instant::now() + herd_surface::REQUEST_BUDGET;
        herd_surface::deliver(
            surface.as_ref(),
            &target,
            &herd_surface::Child::of(record, artifacts),
            &[Key::Text(message.to_owned()), Key::Enter],
            deadline,
        )
        .map_err(Error::from)
    });
    match sent {
        Ok(()) => {
            let typed = now_ms();
            receipt.typed_at_ms = Some(typed);
            match inputs_before {
                // No Pi to take it: the keys in its input are all there is to know.
                None => {
                    receipt.state = SteerState::Delivered;
                    receipt.delivered_at_ms = Some(typed);
                }
                Some(before) => match taken_after(artifacts, run_id, before) {
                    Some(at) => {
                        receipt.state = SteerState::Delivered;
                        receipt.delivered_at_ms = Some(at);
                    }
                    None => receipt.note = Some(not_taken_note()),
                },
            }
        }
        Err(err) => fail(&mut receipt, &err),
    }
    record_receipt(artifacts, run_id, &receipt)?;
    Ok(receipt)
}

/// `receipt` failed with `err`.
fn fail(receipt: &mut SteerReceipt, err: &Error) {
    receipt.state = SteerState::Failed;
    receipt.error = Some(err.message.clone());
    receipt.error_code = Some(err.code.as_str().to_owned());
}

/// A steering message is text and newlines, not empty.
fn check_message(message: &str) -> Result<(), Error> {
    if message.trim().is_empty() {
        return Err(Error::invalid(
            "--message",
            "a steering message cannot be empty",
        ));
    }
    if let Some(c) = message.chars().find(|&c| c.is_control() && c != '\n') {
        return Err(Error::invalid(
            "--message",
            format!(
                "a steering message cannot hold the control character U+{:04X}; only newlines",
                u32::from(c)
            ),
        ));
    }
    Ok(())
}

/// Queues `message` for the child's next turn boundary; `receipt` says how that went, and is
/// recorded.
fn enqueue(
    artifacts: &Artifacts,
    record: &RunRecord,
    message: &str,
    receipt: &mut SteerReceipt,
) -> Result<(), Error> {
    let run_id = record.run_id.as_str();
    // A child that has ended never reaches a turn boundary: nothing is queued for it. One
    // still starting will: it is queued for its first.
    if let Err(err) = herd_surface::Child::of(record, artifacts).not_ended() {
        fail(receipt, &Error::from(err));
        record_receipt(artifacts, run_id, receipt)?;
        return Ok(());
    }
    let mut queue: SteerQueue = artifacts.run(run_id).read()?.unwrap_or_default();
    if queue.messages.len() >= STEER_QUEUE_MAX {
        let err = Error::new(
            ErrorCode::Conflict,
            format!("the steering queue of run {run_id} is full ({STEER_QUEUE_MAX} messages)"),
        );
        fail(receipt, &err);
        record_receipt(artifacts, run_id, receipt)?;
        return Ok(());
    }
    // Ids for messages queued before receipts were kept, so the lists stay aligned.
    while queue.request_ids.len() < queue.messages.len() {
        queue.request_ids.push(String::new());
    }
    queue.messages.push(message.to_owned());
    queue.request_ids.push(receipt.request_id.clone());
    receipt.state = SteerState::Queued;
    record_receipt(artifacts, run_id, receipt)?;
    publish_queued(record, &queue.request_ids);
    artifacts.run(run_id).write(queue)?;
    Ok(())
}

/// Tells a Pi child which steering requests wait for its next turn boundary
/// (`<session>.steering-queued.json`, removed when none does): an auto-exit child that finds one
/// when its turn settles stays open for the watcher to type it, and works on. The file is only
/// a hint to the child: one that cannot be written leaves the child to end at its settlement,
/// and the message is then reported as not delivered.
fn publish_queued(record: &RunRecord, request_ids: &[String]) {
    if record.runner != Runner::Pi || record.session_file.is_empty() {
        return;
    }
    let files = herd_protocol::layout::SessionFiles::new(&record.session_file);
    let request_ids: Vec<String> = request_ids
        .iter()
        .filter(|id| !id.is_empty())
        .cloned()
        .collect();
    if request_ids.is_empty() {
        let _ = std::fs::remove_file(files.steering_queued());
        return;
    }
    let _ = files.write(&herd_protocol::intents::SteeringQueued {
        version: 0,
        running_child_id: record.run_id.clone(),
        request_ids,
    });
}

/// How many inputs the Pi of run `run_id` took, as its activity snapshot says (0 without one).
fn input_count(artifacts: &Artifacts, run_id: &str) -> u64 {
    match read_activity(&artifacts.activity(run_id), run_id) {
        ActivityRead::Found(activity) => activity.input_count.unwrap_or(0),
        ActivityRead::Missing | ActivityRead::Invalid(_) => 0,
    }
}

/// When (ms since the epoch) the Pi of run `run_id` was seen taking an input after the `before`
/// it had taken, within three seconds of the keys; `None` when it was not.
fn taken_after(artifacts: &Artifacts, run_id: &str, before: u64) -> Option<u64> {
    let until = Instant::now() + Duration::from_millis(STEER_ACK_WINDOW_MS);
    loop {
        if input_count(artifacts, run_id) > before {
            return Some(now_ms());
        }
        if Instant::now() >= until {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends the oldest queued steering message of `record`'s run to its child, between turns.
/// Returns whether one was delivered; a failed send, and a child that is not proven live (nothing
/// is typed then), keeps it queued. Its receipt becomes `delivered` once a Pi child takes it
/// within three seconds (a child with no Pi: once typed), else `pending` with a note.
pub fn deliver_queued_steer(
    artifacts: &Artifacts,
    record: &RunRecord,
    surface: &dyn Surface,
    target: &Target,
) -> Result<bool, Error> {
    let run_id = record.run_id.as_str();
    let run = artifacts.run(run_id);
    if !run.path::<SteerQueue>().exists() {
        return Ok(false);
    }
    let _lock = steering_lock(artifacts, run_id)?;
    let Some(mut queue) = run.read::<SteerQueue>()? else {
        return Ok(false);
    };
    if queue.messages.is_empty() {
        return Ok(false);
    }
    let message = queue.messages[0].clone();
    let inputs_before = (record.runner == Runner::Pi).then(|| input_count(artifacts, run_id));
    let deadline = Instant::now() + herd_surface::REQUEST_BUDGET;
    herd_surface::deliver(
        surface,
        target,
        &herd_surface::Child::of(record, artifacts),
        &[Key::Text(message), Key::Enter],
        deadline,
    )?;
    queue.messages.remove(0);
    let request_id = (!queue.request_ids.is_empty()).then(|| queue.request_ids.remove(0));
    let still_queued = queue.request_ids.clone();
    run.write(queue)?;
    let typed = now_ms();
    if let Some(request_id) = request_id.filter(|id| !id.is_empty()) {
        let ledger = steering_ledger(artifacts, run_id);
        if let Some(mut receipt) = ledger
            .requests
            .into_iter()
            .find(|r| r.request_id == request_id)
        {
            receipt.typed_at_ms = Some(typed);
            // A Pi child at its turn boundary takes the keys at once; a Pi that does not within
            // the three seconds leaves the receipt pending, as a steer's.
            let taken = match inputs_before {
                None => Some(typed),
                Some(before) => taken_after(artifacts, run_id, before),
            };
            match taken {
                Some(at) => {
                    receipt.state = SteerState::Delivered;
                    receipt.delivered_at_ms = Some(at);
                }
                None => {
                    receipt.state = SteerState::Pending;
                    receipt.note = Some(not_taken_note());
                }
            }
            record_receipt(artifacts, run_id, &receipt)?;
        }
    }
    // Only now, with its receipt judged, does the child stop waiting for this one: a Pi that
    // took it has started the turn it asked for.
    publish_queued(record, &still_queued);
    Ok(true)
}

/// Why a request still queued when its run ended failed.
pub const NOT_DELIVERED: &str = "not delivered: the run ended before its next turn boundary";

/// Ends the steering of a run that has ended: each request of its ledger still `queued` becomes
/// `failed` with [`NOT_DELIVERED`], so no terminal run keeps one `queued`. The queue itself
/// stays: it is the record of what was not delivered (`undelivered_steering`).
pub fn fail_queued_steer(artifacts: &Artifacts, record: &RunRecord) -> Result<(), Error> {
    let run_id = record.run_id.as_str();
    let _lock = steering_lock(artifacts, run_id)?;
    publish_queued(record, &[]);
    let ledger = steering_ledger(artifacts, run_id);
    let err = Error::new(ErrorCode::Conflict, NOT_DELIVERED);
    for mut receipt in ledger.requests {
        if matches!(receipt.state, SteerState::Queued | SteerState::Scheduled) {
            fail(&mut receipt, &err);
            record_receipt(artifacts, run_id, &receipt)?;
        }
    }
    Ok(())
}

/// What a receipt says of keys typed that the child's Pi was not seen taking.
fn not_taken_note() -> String {
    format!(
        "typed into its input, but its Pi did not take it within {} s",
        STEER_ACK_WINDOW_MS / 1_000
    )
}

/// A finished run's steering (step 8 of its finish): the messages left undelivered, told to
/// the parent and their receipts `failed`, and the steering ledger (every request's receipt).
pub(crate) fn steering_details(
    artifacts: &Artifacts,
    record: &RunRecord,
    ending: &mut crate::message::Ending,
    details: &mut herd_protocol::result::Details,
) {
    let queued = herd_protocol::intents::undelivered_steer(artifacts, &record.run_id);
    if !queued.is_empty() {
        // Seed 004: "Terminal details report queued messages that the run did not deliver";
        // the parent is told, and no receipt stays `queued`.
        if let Err(err) = fail_queued_steer(artifacts, record) {
            ending.notes.push(format!(
                "Steering: the receipts of the queued messages could not be updated: {}",
                herd_core::escape::encode_host_value(&err.message, 300)
            ));
        }
        ending.notes.push(match queued.len() {
            1 => "Steering: 1 queued message was not delivered: the run ended before its next turn boundary (details.undelivered_steering)".to_owned(),
            n => format!("Steering: {n} queued messages were not delivered: the run ended before their next turn boundary (details.undelivered_steering)"),
        });
        details.undelivered_steering = Some(queued);
    }
    // The steering ledger: every request's receipt, a queued one still `queued`.
    let steering = steering_ledger(artifacts, &record.run_id);
    if !steering.requests.is_empty() {
        details.steering = Some(steering.requests);
    }
}
