//! `herd-watch status` and `stop`: the projection of runs computed from their files alone.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use herd_cli::Output;
use herd_core::identity::{self, Judgement};
use herd_core::{Error, ErrorCode, escape, exit, time::now_ms};
use herd_protocol::layout::Artifacts;
use herd_protocol::persistent::Outcome as TaskOutcome;
use herd_protocol::run::{LaunchStatus, RunRecord, Selector};
use herd_protocol::watch::{
    StatusRow, StatusRuns, StatusWidget, StopStatus, WatchStatus, WatchStop,
};
use herd_surface::{Inspection, Presence, Surface, Target};

use crate::delivery::{self};
use crate::evidence;
use crate::projection::{self, CancelState, Lifecycle, PaneObservation, Projection, WidgetRow};
use herd_protocol::child::{self, ActivityRead, ExitRead};
use herd_protocol::intents::Termination;
use herd_protocol::needs_input::{InputReason, NeedsInput};
use herd_protocol::result::Outcome;
use herd_protocol::watch::Label;
use herd_surface::AgentStatus;

/// The budget of the one presence query a status makes per run.
const PRESENCE_BUDGET: Duration = Duration::from_secs(2);
/// How long `stop` waits for the specialist's exit.
const STOP_DEADLINE: Duration = Duration::from_millis(crate::tasks::STOP_DEADLINE_MS);

/// One run's status.
#[derive(Debug, Clone)]
pub struct RunStatus {
    pub projection: Projection,
    pub elapsed_ms: u64,
    pub outcome: Option<Outcome>,
    /// What a run `waiting for input` waits on.
    pub needs_input: Option<NeedsInput>,
}

/// The surface queries of one status, within one budget however many runs it shows: one
/// listing per Herdr server (a listing proves presence), a query of its own only for a pane the
/// listing did not show, and none at all of a server that did not answer. Also the directory's
/// runs by session file, read once, at the first help request the status shows.
pub struct Looks {
    deadline: Instant,
    listings: HashMap<String, Option<Listing>>,
    sessions: Option<HashMap<String, Vec<(u64, String)>>>,
}

/// The panes one listing showed: pane id -> (Herdr terminal id, what the row said).
type Listing = HashMap<String, (Option<String>, Inspection)>;

impl Looks {
    pub fn new() -> Looks {
        Looks {
            deadline: Instant::now() + PRESENCE_BUDGET,
            listings: HashMap::new(),
            sessions: None,
        }
    }

    /// Whether the session of `record` was resumed as a later run after `since_ms`: its help
    /// request was answered.
    fn resumed_since(&mut self, artifacts: &Artifacts, record: &RunRecord, since_ms: u64) -> bool {
        let sessions = self.sessions.get_or_insert_with(|| {
            let mut sessions: HashMap<String, Vec<(u64, String)>> = HashMap::new();
            for id in artifacts.run_ids().unwrap_or_default() {
                if let Ok(other) = RunRecord::load(artifacts, &id) {
                    sessions
                        .entry(other.session_file)
                        .or_default()
                        .push((other.created_at_ms, other.run_id));
                }
            }
            sessions
        });
        sessions.get(&record.session_file).is_some_and(|runs| {
            runs.iter()
                .any(|(created, id)| *id != record.run_id && *created >= since_ms)
        })
    }

    /// What the surface says of `target`, the child of `record`.
    fn inspect(
        &mut self,
        record: &RunRecord,
        surface: &dyn Surface,
        target: &Target,
    ) -> Result<Inspection, herd_surface::Error> {
        // Herdr rows carry the terminal id that tells a restarted server's panes apart; a tmux
        // pane is asked on its own, where its server's pid is checked.
        let (Target::Pane(pane), herd_protocol::run::SurfaceKind::Herdr) = (target, record.surface)
        else {
            return surface.inspect(target, self.deadline);
        };
        let key = group_key(record);
        let deadline = self.deadline;
        let listing = self.listings.entry(key).or_insert_with(|| {
            surface.list(deadline).ok().map(|rows| {
                rows.into_iter()
                    .map(|row| {
                        let seen = row.inspection();
                        (row.pane_id, (row.terminal_id, seen))
                    })
                    .collect()
            })
        });
        let Some(listing) = listing else {
            return Err(herd_surface::Error::Unavailable {
                surface: record.surface.as_str(),
                reason: "the listing of its server did not answer".into(),
            });
        };
        match listing.get(&pane.pane_id) {
            Some((terminal, seen))
                if terminal.is_none() || terminal.as_deref() == pane.terminal_id.as_deref() =>
            {
                Ok(seen.clone())
            }
            _ => surface.inspect(target, self.deadline),
        }
    }
}

impl Default for Looks {
    fn default() -> Looks {
        Looks::new()
    }
}

/// Runs whose panes one listing covers: the same surface and the same server.
pub(crate) fn group_key(record: &RunRecord) -> String {
    let socket = record
        .pane
        .as_ref()
        .and_then(|p| p.socket.as_deref())
        .unwrap_or_default();
    format!("{}:{socket}", record.surface.as_str())
}

/// Whether the child's runner is known to be gone: its recorded identity has exited.
pub(crate) fn runner_gone(record: &RunRecord) -> bool {
    matches!(
        record.session_files().read::<identity::Record>(),
        Ok(Some(id)) if matches!(identity::judge(&id), Judgement::Exited)
    )
}

/// Projects `record` from its files and one query of its surface.
pub fn project(artifacts: &Artifacts, record: &RunRecord) -> RunStatus {
    project_with(artifacts, record, &mut Looks::new())
}

/// Projects `record` from its files and the surface queries of `looks`.
pub fn project_with(artifacts: &Artifacts, record: &RunRecord, looks: &mut Looks) -> RunStatus {
    let now = now_ms();
    let mut life = Lifecycle::new(record.created_at_ms);
    if let Ok(Some(result)) = delivery::load(artifacts, &record.run_id) {
        return settled(artifacts, record, &result, life, now, looks);
    }
    if let Some(remote) = &record.extra.remote {
        return crate::relay::project(artifacts, record, remote, now);
    }
    // A launch that failed definitely is failed before any watcher has settled it.
    if let crate::launch::LaunchState::Failed(_) = crate::launch::judge(artifacts, record) {
        life.finish(Label::Failed, record.updated_at_ms);
        return RunStatus {
            projection: life.project(now),
            elapsed_ms: 0,
            outcome: Some(Outcome::Failed),
            needs_input: None,
        };
    }
    if let Some(intent) = herd_protocol::intents::read_intent(artifacts, &record.run_id) {
        life.cancel = match intent.termination {
            Some(Termination::Unconfirmed) => CancelState::Unconfirmed,
            _ => CancelState::Requested,
        };
    }
    if let Some(at) = herd_protocol::intents::read_interrupt(artifacts, &record.run_id) {
        life.interrupt(at);
    }
    if record.persistent {
        life.stop_unconfirmed = crate::tasks::stop_unconfirmed_since(record, now);
    }
    if let ActivityRead::Found(activity) =
        child::read_activity(&artifacts.activity(&record.run_id), &record.run_id)
    {
        life.observe_activity(&activity);
    }
    observe_waiting(record, &mut life);
    if matches!(child::read_run_exit(record), ExitRead::Found(_)) {
        life.finalize(evidence::ended_at_ms(artifacts, record).map_or(now, |at| at.min(now)));
    } else if record.status != LaunchStatus::Pending {
        observe_surface(artifacts, record, looks, &mut life, now);
    }
    RunStatus {
        projection: life.project(now),
        elapsed_ms: life.elapsed_ms(now),
        outcome: None,
        needs_input: life.needs_input(now).cloned(),
    }
}

/// The status of a run whose result settled: its outcome's label over the child's own run
/// time, and a help request waiting for its answer until the session is resumed.
fn settled(
    artifacts: &Artifacts,
    record: &RunRecord,
    result: &herd_protocol::result::RunResult,
    mut life: Lifecycle,
    now: u64,
    looks: &mut Looks,
) -> RunStatus {
    let label = match result.outcome {
        // A specialist that ended on its stop directive stopped (`stopped`).
        Outcome::Completed if result.details.stopped == Some(true) => Label::Stopped,
        Outcome::Completed | Outcome::Help => Label::Completed,
        Outcome::Cancelled => Label::Cancelled,
        Outcome::Failed => Label::Failed,
    };
    // The run time is the child's own, as its result recorded it, not until settlement.
    let ended = result
        .details
        .elapsed_ms
        .map_or(result.settled_at_ms, |ms| {
            record.created_at_ms.saturating_add(ms)
        });
    life.finish(label, ended.min(result.settled_at_ms));
    let mut projection = life.project(now);
    // A help request waits for its answer until the session is resumed.
    let needs_input = (result.outcome == Outcome::Help
        && !looks.resumed_since(artifacts, record, result.settled_at_ms))
    .then_some(NeedsInput {
        reason: InputReason::HelpRequest,
        since_ms: result.settled_at_ms,
        kind: None,
        title: None,
    });
    if let Some(input) = &needs_input {
        projection = Projection {
            label: Label::WaitingForInput,
            detail: Some(input.reason.as_str().to_owned()),
            since_ms: Some(input.since_ms),
        };
    }
    RunStatus {
        projection,
        elapsed_ms: life.elapsed_ms(now),
        outcome: Some(result.outcome),
        needs_input,
    }
}

/// Feeds `life` what the run's surface says of its pane (a listing shared through `looks`).
fn observe_surface(
    artifacts: &Artifacts,
    record: &RunRecord,
    looks: &mut Looks,
    life: &mut Lifecycle,
    now: u64,
) {
    let observation = match herd_surface::open(record, artifacts) {
        Ok((surface, target)) => {
            match looks
                .inspect(record, surface.as_ref(), &target)
                .map(|seen| (seen.presence, seen.agent))
            {
                Ok((Presence::Running, agent)) => {
                    PaneObservation::Present(agent.unwrap_or(AgentStatus::Unknown))
                }
                Ok((Presence::Exited { .. }, _)) => {
                    life.finalize(now);
                    PaneObservation::Present(AgentStatus::Unknown)
                }
                Ok((Presence::Absent, _)) => PaneObservation::Missing,
                // Unanswered, and the runner is gone without a completion: nothing of
                // the child is left to trust (a stopped Herdr takes its panes' processes).
                Err(_) if runner_gone(record) => PaneObservation::Missing,
                Err(_) => PaneObservation::ReadError,
            }
        }
        Err(_) => PaneObservation::ReadError,
    };
    // Unanswered since the last evidence of the run: a status cannot have watched longer.
    let at = match observation {
        PaneObservation::ReadError => last_evidence_ms(artifacts, record),
        _ => now,
    };
    life.observe_pane(observation, at);
}

/// Feeds `life` what the child's own files say about waiting for a person: its
/// `<session>.needs-input.json` (a dialog, an interactive child's settled run) and, for a
/// persistent specialist, a help request its current task ended with.
pub(crate) fn observe_waiting(record: &RunRecord, life: &mut Lifecycle) {
    if let Some(file) = record
        .session_files()
        .read::<herd_protocol::needs_input::NeedsInputFile>()
        .ok()
        .flatten()
        .and_then(|file| file.of_run(&record.run_id))
    {
        // A persistent specialist between tasks waits for its parent's next task, not for a
        // person: the seed's widget says `waiting` ("turn finished; the process is
        // intentionally open for more input or another stage").
        life.observe_needs_input(&file, record.interactive && !record.persistent);
    }
    if record.persistent {
        life.help_requested(persistent_help_since(record));
    }
}

/// Since when a persistent specialist's current task has been a help request: its last task
/// dispatched ended with a `help-request` event and nothing was dispatched since. The time is
/// the task events file's, which the child appends to.
fn persistent_help_since(record: &RunRecord) -> Option<u64> {
    use herd_protocol::persistent::{self, LedgerLine, TaskEvent, TaskEventKind};
    let files = record.session_files();
    let policy = files
        .read::<herd_protocol::launch::policy::Policy>()
        .ok()??;
    let generation = policy.generation_id.as_str();
    let ledger: Vec<LedgerLine> = persistent::read_lines(&files.ledger()).ok()?;
    let current = ledger
        .iter()
        .rev()
        .find(|l| l.generation == generation && l.outcome == persistent::Outcome::Dispatched)?;
    let events: Vec<TaskEvent> = persistent::read_lines(&files.tasks()).ok()?;
    let ended = events.iter().rev().find(|e| {
        e.version == persistent::VERSION
            && e.generation.as_deref() == Some(generation)
            && e.task == current.task
    })?;
    if ended.kind != TaskEventKind::HelpRequest {
        return None;
    }
    let at = std::fs::metadata(files.tasks())
        .and_then(|m| m.modified())
        .ok()?;
    at.duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `herd-watch status`.
pub fn status(
    artifacts: &Artifacts,
    selector: Option<&Selector<'_>>,
    widget: bool,
    transcript: Option<usize>,
) -> Result<Output, Error> {
    let records = match selector {
        Some(selector) => vec![herd_protocol::run::find(artifacts, selector, |_| true)?],
        None => listed(artifacts, widget)?,
    };
    if let Some(lines) = transcript {
        let [record] = records.as_slice() else {
            return Err(Error::invalid(
                "transcript",
                "--transcript shows one run: add --run or --name",
            ));
        };
        let lines = lines.min(herd_protocol::watch::TRANSCRIPT_MAX_LINES);
        if let Some(remote) = &record.extra.remote {
            return crate::transcript::show_remote(record, remote, lines);
        }
        return crate::transcript::show(record, artifacts, lines);
    }
    let now = now_ms();
    let mut rows = Vec::new();
    let mut json_rows = Vec::new();
    let mut human = String::new();
    let mut looks = Looks::new();
    for record in &records {
        let status = project_with(artifacts, record, &mut looks);
        let name = escape::encode_host_value(&record.name, 80);
        let usage = crate::usage::for_status(artifacts, record);
        json_rows.push(StatusRow {
            run_id: record.run_id.clone(),
            name: record.name.clone(),
            agent: record.agent.clone(),
            surface: record.surface,
            label: status.projection.label,
            detail: status.projection.detail.clone(),
            since_ms: status.projection.since_ms,
            elapsed_ms: status.elapsed_ms,
            outcome: status.outcome,
            delivered: delivery::is_delivered(artifacts, &record.run_id),
            usage,
            needs_input: status.needs_input.clone(),
            artifacts: None,
        });
        let detail = match &status.needs_input {
            Some(input) => format!(" · {}", waiting_text(input, now)),
            None => status
                .projection
                .detail
                .as_deref()
                .map(|d| format!(" · {}", escape::encode_host_value(d, 80)))
                .unwrap_or_default(),
        };
        human.push_str(&format!(
            "{}  {}  {}{}  {}\n",
            record.run_id,
            projection::clock(status.elapsed_ms),
            status.projection.label.as_str(),
            detail,
            name
        ));
        if status.outcome.is_none() {
            rows.push(WidgetRow {
                // A run on another machine shows its host beside its name.
                name: match &record.extra.remote {
                    Some(remote) => format!("{name} @{}", remote.host),
                    None => name,
                },
                agent: record.agent.clone(),
                elapsed_ms: status.elapsed_ms,
                projection: status.projection,
                usage: usage.as_ref().and_then(crate::usage::row_text),
            });
        }
    }
    if widget {
        let w = projection::widget(&rows, now, projection::WIDGET_WIDTH);
        let json = WatchStatus::Widget(StatusWidget {
            widget: w.text.clone(),
            accent: w.accent,
            active: w.active,
            open: w.open,
            runs: json_rows,
        });
        // The accent reaches a person at a terminal; `--json` carries it as a field.
        let human = if herd_cli::colour_stdout() {
            projection::paint(w.accent, &w.text)
        } else {
            w.text
        };
        return Ok(Output::ok(json, human));
    }
    if human.is_empty() {
        human = format!("no runs in {}\n", artifacts.root().display());
    }
    let json = WatchStatus::Runs(StatusRuns { runs: json_rows });
    Ok(Output::ok(json, human))
}

/// `herd-watch status --all`: the runs of every artifacts directory of the user's index (and of
/// `current`), grouped by directory; a directory that cannot be read is named with why.
pub fn status_all(current: &Artifacts) -> Result<Output, Error> {
    let dirs = match herd_protocol::artifacts_index::Index::of_user() {
        Some(index) => index.directories(Some(current))?,
        None => vec![current.clone()],
    };
    let mut runs = Vec::new();
    let mut human = String::new();
    for dir in &dirs {
        let shown = escape::encode_host_value(&dir.root().to_string_lossy(), 500);
        let rows = status(dir, None, false, None).and_then(|out| {
            serde_json::from_value::<StatusRuns>(out.json)
                .map(|doc| (doc.runs, out.human))
                .map_err(|e| Error::internal(format!("cannot read the status of {shown}: {e}")))
        });
        match rows {
            Ok((rows, _)) if rows.is_empty() => {}
            Ok((rows, text)) => {
                human.push_str(&format!("{shown}\n"));
                for line in text.lines() {
                    human.push_str(&format!("  {line}\n"));
                }
                let root = dir.root().to_string_lossy().into_owned();
                runs.extend(rows.into_iter().map(|row| StatusRow {
                    artifacts: Some(root.clone()),
                    ..row
                }));
            }
            Err(e) => human.push_str(&format!("{shown}: cannot be read: {}\n", e.message)),
        }
    }
    if runs.is_empty() && human.is_empty() {
        human = format!(
            "no runs in the {} artifacts {} of this user\n",
            dirs.len(),
            if dirs.len() == 1 {
                "directory"
            } else {
                "directories"
            }
        );
    }
    Ok(Output::ok(WatchStatus::Runs(StatusRuns { runs }), human))
}

/// The records `status` shows without a selector: for the widget the runs in flight (the
/// open-run set, whatever the history), else the history too; never an attempt replaced by the
/// next model.
fn listed(artifacts: &Artifacts, widget: bool) -> Result<Vec<RunRecord>, Error> {
    let ids = if widget {
        herd_protocol::open_runs::list(artifacts)?
            .into_iter()
            .filter(|id| !herd_protocol::open_runs::is_closed(artifacts, id))
            .collect()
    } else {
        artifacts.run_ids()?
    };
    let mut records = Vec::new();
    for id in ids {
        if herd_protocol::run::Superseded::read(artifacts, &id)
            .is_some_and(|s| s.successor.is_some())
        {
            continue;
        }
        if let Ok(record) = RunRecord::load(artifacts, &id) {
            records.push(record);
        }
    }
    Ok(records)
}

/// What a status line says after `waiting for input`: `since 2m · dialog (confirm "Delete?")`.
/// The title is the child's text, encoded.
pub fn waiting_text(input: &NeedsInput, now: u64) -> String {
    let mut text = format!(
        "since {} · {}",
        projection::short_duration(now.saturating_sub(input.since_ms)),
        input.reason.as_str()
    );
    match (&input.kind, &input.title) {
        (Some(kind), Some(title)) => text.push_str(&format!(
            " ({} \"{}\")",
            escape::encode_host_value(kind, 20),
            escape::encode_host_value(title, 80)
        )),
        (Some(kind), None) => text.push_str(&format!(" ({})", escape::encode_host_value(kind, 20))),
        _ => {}
    }
    text
}

/// When the run last showed a sign of life in its files: its latest activity snapshot, else
/// its launch.
fn last_evidence_ms(artifacts: &Artifacts, record: &RunRecord) -> u64 {
    match child::read_activity(&artifacts.activity(&record.run_id), &record.run_id) {
        ActivityRead::Found(activity) => activity.updated_at.max(record.created_at_ms),
        _ => record.created_at_ms,
    }
}

/// `herd-watch stop`: a persistent specialist's graceful stop.
pub fn stop(artifacts: &Artifacts, record: &RunRecord) -> Result<Output, Error> {
    if !record.persistent {
        return Err(Error::invalid(
            "run",
            "only a persistent specialist is stopped; cancel an ordinary run",
        ));
    }
    if delivery::load(artifacts, &record.run_id)?.is_some() {
        return Err(Error::new(
            ErrorCode::Conflict,
            format!("specialist {} has already exited", record.run_id),
        ));
    }
    let files = record.session_files();
    let ledger = crate::tasks::ledger(&files);
    let dispatched = crate::tasks::last_dispatched(&ledger).cloned();
    let task = dispatched
        .as_ref()
        .map(|d| d.task.clone())
        .unwrap_or_default();
    // Whether a task holds the stop pending (the task reaches its terminal outcome first);
    // asked before the directive, which makes the specialist `Stopping`.
    let busy = files
        .read::<herd_protocol::launch::policy::Policy>()
        .ok()
        .flatten()
        .and_then(|p| herd_protocol::persistent::activity(&files, &p.generation_id).ok())
        .is_some_and(|a| matches!(a, herd_protocol::persistent::Activity::Busy(_)))
        // An uncertain launch's initial task does not hold the stop pending.
        && record.status != LaunchStatus::Uncertain;
    // The same inbox herd-launch sends tasks through, so the child sees one ordered queue. A
    // directive that could not be published changed nothing: the stop is failed and may be
    // asked again.
    if let Err(err) = herd_protocol::persistent::write_inbox(
        &files,
        herd_protocol::persistent::InboxKind::Stop,
        "",
        "",
    ) {
        let _ = crate::tasks::ledger_line(dispatched.as_ref(), &task, TaskOutcome::StopFailed)
            .append(&files.ledger());
        let json = WatchStop {
            run_id: record.run_id.clone(),
            name: record.name.clone(),
            status: StopStatus::StopFailed,
            error: Some(err.message.clone()),
        };
        return Ok(Output::ok(
            json,
            format!(
                "stop {}: stop-failed ({}); ask again",
                escape::json_string(&record.name),
                escape::encode_host_value(&err.message, 300)
            ),
        )
        .with_exit(exit::NO_ANSWER));
    }
    crate::tasks::ledger_line(dispatched.as_ref(), &task, TaskOutcome::StopPending)
        .append(&files.ledger())?;
    let deadline = Instant::now() + STOP_DEADLINE;
    let judged = match files.read::<identity::Record>() {
        Ok(Some(id)) => identity::wait_exited(&id, deadline),
        Ok(None) => Judgement::Unknown("no process identity was recorded".into()),
        Err(e) => Judgement::Unknown(e.to_string()),
    };
    let (state, code) = match judged {
        Judgement::Exited => {
            crate::tasks::record_stopped(record)?;
            (StopStatus::Stopped, exit::SUCCESS)
        }
        // A task still runs: it ends first, then the specialist exits.
        Judgement::Alive if busy => (StopStatus::StopPending, exit::UNCERTAIN),
        // Nothing held it, yet it did not exit within the bound: the unconfirmed stop, which
        // takes no follow-up work (its ledger says stop-pending) and is `stalled` until it
        // exits or is stopped again.
        Judgement::Alive | Judgement::Unknown(_) => (StopStatus::StopUnconfirmed, exit::UNCERTAIN),
    };
    let json = WatchStop {
        run_id: record.run_id.clone(),
        name: record.name.clone(),
        status: state,
        error: None,
    };
    Ok(Output::ok(
        json,
        format!(
            "stop {}: {}",
            escape::json_string(&record.name),
            state.as_str()
        ),
    )
    .with_exit(code))
}
