//! Supervision: follow runs from their files, project their status, settle and deliver their
//! results.
//!
//! A [`Supervisor`] holds nothing that is not also on disk: restarting one rebuilds its view
//! from the run records, the children's sidecars and the settled results. Each [`tick`] reads the
//! cheap evidence of every tracked run (sidecars, activity), reconciles the surfaces once per
//! interval, and hands a run whose completion is known to a finisher thread, which runs the
//! parent re-check and the handoff and settles the result. Delivery happens back on the loop, so
//! results leave in one place, exactly once (see [`crate::delivery`]).
//!
//! [`tick`]: Supervisor::tick

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::ffi::OsString;
use std::ops::ControlFlow;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;
use herd_core::{Error, time::now_ms};
use herd_protocol::layout::Artifacts;
use herd_protocol::run::{LaunchStatus, RunRecord};
use herd_surface::{Inspection, Surface, Target};

use crate::delivery::{self};
use crate::fallback;
use crate::finish::{self, Observed};
use crate::projection::{Lifecycle, Projection};
use herd_protocol::result::RunResult;
use herd_protocol::watch::Label;

mod event;
mod reconcile;
mod settle;

pub use event::{Event, needs_input_line};
use reconcile::max_exit_watches;
use settle::{
    complete, deliver_task_results, judge_and_reconcile, read_evidence, settle, transitions,
};

/// How long completion evidence other than the sidecar waits for a late sidecar.
pub const SIDECAR_GRACE: Duration = Duration::from_millis(500);

/// Tuning of the loop.
#[derive(Debug, Clone)]
pub struct Options {
    /// How often every surface is reconciled (presence, pane state).
    pub reconcile_interval: Duration,
    /// How often a run whose presence is a process held through an exit watch (the process
    /// surface) is reconciled anyway: its exit wakes the loop at once, so this only re-asks what
    /// the watch already tells.
    pub watched_reconcile_interval: Duration,
    /// The longest the loop sleeps between ticks when no file event arrives. A tick without an
    /// event looks only at the runs whose reconciliation is due, so runs spread over ticks.
    pub max_sleep: Duration,
    /// How long an active run may show no progress before a no-progress notice (`None`: never).
    pub hang_warning: Option<Duration>,
    /// Whether persistent specialists' task results are delivered (by `follow`, not by `wait`,
    /// which answers with the run's own result).
    pub task_results: bool,
    /// How long a launch whose herd-launch is gone waits for evidence of a child before it
    /// settles as lost.
    pub lost_grace: Duration,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            reconcile_interval: Duration::from_secs(1),
            watched_reconcile_interval: Duration::from_secs(30),
            max_sleep: Duration::from_millis(250),
            task_results: true,
            hang_warning: hang_warning_from_env(),
            lost_grace: crate::launch::lost_grace_from_env(),
        }
    }
}

/// The environment variable overriding the no-progress budget, in seconds (0 turns it off).
pub const HANG_WARNING_ENV: &str = "HERD_HANG_WARNING_SECS";
/// The default no-progress budget of supervision (15 minutes; docs/lifecycle.md, "Notices to the
/// parent").
pub const DEFAULT_HANG_WARNING: Duration = Duration::from_secs(15 * 60);

fn hang_warning_from_env() -> Option<Duration> {
    match std::env::var(HANG_WARNING_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        Some(0) => None,
        Some(secs) => Some(Duration::from_secs(secs)),
        None => Some(DEFAULT_HANG_WARNING),
    }
}

pub(super) struct Finisher {
    handle: JoinHandle<()>,
    cancel: Sender<()>,
}

struct Tracked {
    record: RunRecord,
    lifecycle: Lifecycle,
    surface: Option<(Box<dyn Surface>, Target)>,
    label: Label,
    detail: Option<String>,
    /// Completion evidence other than the sidecar, and when it was first seen.
    pending: Option<(Observed, Instant)>,
    finisher: Option<Finisher>,
    last_reconcile: Option<Instant>,
    interrupt_seen: Option<u64>,
    foreign_noticed: bool,
    /// Whether a result that cannot be read was announced (once).
    unreadable_noticed: bool,
    /// Whether the current no-progress episode was announced.
    hang_warned: bool,
    /// Since when the run's launch is known orphaned (herd-launch gone, no child seen).
    orphaned_since: Option<Instant>,
    /// The retries of an unconfirmed cancel's termination.
    termination: Retries,
    /// The termination of a run past its time limit or its budget, while it runs.
    timing_out: Option<JoinHandle<()>>,
    /// Whether its files were read since it was taken on (later, only when an event names them).
    read_once: bool,
    /// The cancel intent as its file last said.
    intent: Option<herd_protocol::intents::CancelIntent>,
    /// The watch of the process whose exit ends the run's presence, held while it runs.
    exit_watch: Option<herd_core::identity::ExitWatch>,
    /// Whether the surface was asked for that watch (once: a run without one is reconciled on
    /// the interval).
    exit_watch_asked: bool,
    /// When (ms since the epoch) a busy run's no-progress notice falls due unless it progresses:
    /// the loop wakes for it then, whatever the interval.
    hang_due_ms: Option<u64>,
    /// When a specialist's pending stop becomes unconfirmed unless its exit is seen first.
    stop_due_ms: Option<u64>,
    /// The pace of the query of its pane while that query keeps failing.
    probe: crate::backoff::Backoff,
}

/// The watcher's retries of a termination that a cancel left unconfirmed: one attempt at a time,
/// in a thread of its own (an attempt may take the cancel deadline), paced by the probes' backoff
/// (1 s doubling to a 30 s cap).
#[derive(Default)]
struct Retries {
    attempt: Option<JoinHandle<Result<(), String>>>,
    failures: u32,
    next_at: Option<Instant>,
}

impl Tracked {
    /// The earliest moment a judgement of the clock alone (no file event, no exit) falls due:
    /// the loop wakes for it then, whatever the reconciliation interval.
    fn wake_at_ms(&self) -> Option<u64> {
        self.hang_due_ms.into_iter().chain(self.stop_due_ms).min()
    }

    /// A run seen for the first time: nothing observed yet.
    fn new(record: RunRecord) -> Tracked {
        Tracked {
            lifecycle: Lifecycle::new(record.created_at_ms),
            record,
            surface: None,
            label: Label::Starting,
            detail: None,
            pending: None,
            finisher: None,
            last_reconcile: None,
            interrupt_seen: None,
            foreign_noticed: false,
            unreadable_noticed: false,
            hang_warned: false,
            orphaned_since: None,
            termination: Retries::default(),
            timing_out: None,
            read_once: false,
            intent: None,
            exit_watch: None,
            exit_watch_asked: false,
            hang_due_ms: None,
            stop_due_ms: None,
            probe: crate::backoff::Backoff::default(),
        }
    }
}

/// Which runs of a directory a supervisor takes on, by who launched them (`parent_run_id`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Launcher {
    /// Every run.
    #[default]
    Anyone,
    /// Runs a top-level session launched (no parent run): a Pi parent's own children.
    TopLevel,
    /// Runs the child with this run id launched: a child's own children.
    Run(String),
}

impl Launcher {
    fn admits(&self, record: &RunRecord) -> bool {
        match self {
            Launcher::Anyone => true,
            Launcher::TopLevel => record.parent_run_id.is_none(),
            Launcher::Run(id) => record.parent_run_id.as_deref() == Some(id.as_str()),
        }
    }
}

/// Supervises the runs of one artifacts directory (or one run of it).
pub struct Supervisor {
    artifacts: Artifacts,
    only: Option<String>,
    launcher: Launcher,
    options: Options,
    tracked: BTreeMap<String, Tracked>,
    waker: crate::wake::Waker,
    /// This interval's listing of each surface: pane id → presence and agent status.
    /// Per listing group, each listed pane's terminal id (Herdr) and what the row said.
    listings: HashMap<String, HashMap<String, (Option<String>, Inspection)>>,
    last_listing: Option<Instant>,
    /// Per listing group, the pace of its listing while it keeps failing.
    listing_probes: HashMap<String, crate::backoff::Backoff>,
    /// Whether the last sleep ended on a file event (new runs are looked for then).
    woke: bool,
    /// Whether the last sleep may have missed changes (no inotify, a lost event): then every
    /// run's files are read.
    all_changed: bool,
    /// The runs whose files the last sleep's events named.
    touched: HashSet<String>,
    /// Per session directory, the session file names of the runs there.
    sessions: HashMap<std::path::PathBuf, Vec<(OsString, String)>>,
    /// Whether this tick reconciles a run whose interval is over: then every run due within the
    /// next sleep is reconciled with it, so reconciliations gather into one pass per interval.
    batch: bool,
}

impl Supervisor {
    pub fn new(artifacts: Artifacts, only: Option<String>, options: Options) -> Supervisor {
        Supervisor {
            artifacts,
            only,
            launcher: Launcher::Anyone,
            options,
            tracked: BTreeMap::new(),
            waker: crate::wake::Waker::new(),
            listings: HashMap::new(),
            last_listing: None,
            listing_probes: HashMap::new(),
            woke: true,
            all_changed: true,
            touched: HashSet::new(),
            batch: false,
            sessions: HashMap::new(),
        }
    }

    /// Takes on only the runs `launcher` launched, so that a parent and its children, each
    /// following the same directory, never deliver each other's results.
    #[must_use]
    pub fn launched_by(mut self, launcher: Launcher) -> Supervisor {
        self.launcher = launcher;
        self
    }

    /// The alarm that ends the loop's sleep from another thread (see [`crate::wake::Alarm`]).
    pub fn alarm(&mut self) -> Option<crate::wake::Alarm> {
        self.waker.alarm()
    }

    /// Whether no run is left to supervise.
    pub fn is_idle(&self) -> bool {
        self.tracked.is_empty()
    }

    /// Picks up runs that have a record and no delivered result.
    pub fn scan(&mut self) -> Result<(), Error> {
        // The open-run set, not the history: finished runs cost a scan nothing.
        let ids = match &self.only {
            Some(id) => vec![id.clone()],
            None => herd_protocol::open_runs::list(&self.artifacts)?,
        };
        // A directory watched from now on may have changed unseen before: every run's files
        // are read once more. The root tells when `subagent-activity/` appears.
        let mut added = self.waker.watch(self.artifacts.root());
        added |= self.waker.watch(&self.artifacts.runs_dir());
        added |= self.waker.watch(&self.artifacts.activity_dir());
        crate::crash_point("scan");
        // A session directory may appear after its run was first seen (Pi creates it lazily).
        for run in self.tracked.values() {
            if let Some(dir) = Path::new(&run.record.session_file).parent() {
                added |= self.waker.watch(dir);
            }
        }
        if added {
            self.all_changed = true;
        }
        for id in ids {
            if self.tracked.contains_key(&id) {
                continue;
            }
            // A run closed by a program killed before it removed its entry.
            if self.only.is_none() && herd_protocol::open_runs::forget_closed(&self.artifacts, &id)
            {
                continue;
            }
            if delivery::is_delivered(&self.artifacts, &id)
                || fallback::read_superseded(&self.artifacts, &id)
                    .is_some_and(|s| s.successor.is_some())
            {
                continue;
            }
            let record = match RunRecord::load(&self.artifacts, &id) {
                Ok(record) => record,
                Err(err) if self.only.is_some() => return Err(err),
                Err(_) => {
                    herd_protocol::open_runs::forget_unclaimed(&self.artifacts, &id);
                    continue;
                }
            };
            if !self.launcher.admits(&record) {
                continue;
            }
            let session = Path::new(&record.session_file);
            if let (Some(dir), Some(name)) = (session.parent(), session.file_name()) {
                if self.waker.watch(dir) {
                    self.all_changed = true;
                }
                self.sessions
                    .entry(dir.to_path_buf())
                    .or_default()
                    .push((name.to_owned(), id.clone()));
            }
            self.tracked.insert(id, Tracked::new(record));
        }
        Ok(())
    }

    /// Sleeps until a file event or the loop's interval.
    /// Sleeps until a file event or the loop's interval; returns whether a file event woke it.
    pub fn sleep(&mut self) -> bool {
        let timeout = self.idle_sleep();
        let exits: Vec<(&str, BorrowedFd<'_>)> = self
            .tracked
            .iter()
            .filter_map(|(id, run)| Some((id.as_str(), run.exit_watch.as_ref()?.as_fd())))
            .collect();
        let changes = self.waker.wait_changes(timeout, &exits);
        drop(exits);
        for id in &changes.exited {
            // The process has exited: the run is reconciled in the next tick.
            if let Some(run) = self.tracked.get_mut(id) {
                run.exit_watch = None;
                run.last_reconcile = None;
            }
        }
        // Without inotify nothing says which files changed: every tick looks at every run.
        self.all_changed = changes.lost || !self.waker.is_active();
        self.touched.clear();
        for (dir, name) in &changes.files {
            if dir == self.artifacts.root() {
                // A directory of runs' files appeared (or a ledger line was added): rare, and
                // reading every run then is what catches a file written before its watch.
                self.all_changed = true;
            } else if let Some(id) = self.run_of(dir, name) {
                self.touched.insert(id);
            }
        }
        self.woke = changes.woke || !self.waker.is_active();
        self.woke
    }

    /// How long the loop sleeps when no file event comes: while every run is quiet (only its
    /// reconciliation can tell anything new without a file event), until the next one is due;
    /// else [`Options::max_sleep`].
    fn idle_sleep(&self) -> Duration {
        // With nothing tracked, a new run is a file event (or, without inotify, the next look).
        let mut sleep = if self.waker.is_active() {
            self.options.watched_reconcile_interval
        } else {
            self.options.reconcile_interval
        };
        let now = now_ms();
        for run in self.tracked.values() {
            if relayed(&run.record).is_some() && self.quiet(run) {
                // Its host judges it and its result is a file event here; only its host's relay
                // is looked after, as often as `relay::ensure` looks.
                sleep = sleep.min(crate::relay::ENSURE_EVERY);
                continue;
            }
            if !self.quiet(run) {
                return self.options.max_sleep;
            }
            let interval = self.interval(run);
            let until = run
                .last_reconcile
                .map_or(Duration::ZERO, |at| interval.saturating_sub(at.elapsed()));
            sleep = sleep.min(until);
            if let Some(at) = run.wake_at_ms() {
                sleep = sleep.min(Duration::from_millis(at.saturating_sub(now)));
            }
        }
        sleep.max(Duration::from_millis(1))
    }

    /// How often `run` is reconciled: rarely while an exit watch stands for its presence.
    fn interval(&self, run: &Tracked) -> Duration {
        if run.exit_watch.is_some() {
            self.options.watched_reconcile_interval
        } else {
            self.options.reconcile_interval
        }
    }

    /// Whether nothing of `run` but its reconciliation is waited for: it is launched, its files
    /// are watched and were read, and no grace, finisher, cancel, time limit or retry runs.
    fn quiet(&self, run: &Tracked) -> bool {
        if relayed(&run.record).is_some() {
            return run.read_once && self.watched(&run.record);
        }
        run.read_once
            && run.record.status == LaunchStatus::Launched
            && run.pending.is_none()
            && run.finisher.is_none()
            && run.intent.is_none()
            && run.timing_out.is_none()
            && run.orphaned_since.is_none()
            && run.termination.attempt.is_none()
            && run.termination.next_at.is_none()
            && run.record.time_limit_ms.is_none()
            && self.watched(&run.record)
    }

    /// Whether `run`'s reconciliation is due in this tick (see [`Supervisor::batch`]).
    fn due(&self, run: &Tracked) -> bool {
        if relayed(&run.record).is_some() {
            // Its host reconciles it.
            return false;
        }
        let interval = self.interval(run);
        run.wake_at_ms().is_some_and(|at| now_ms() >= at)
            || run.last_reconcile.is_none_or(|at| {
                let elapsed = at.elapsed();
                elapsed >= interval || (self.batch && elapsed + self.options.max_sleep >= interval)
            })
    }

    /// The tracked run a file event names: `runs/<id>.*` and `subagent-activity/<id>.json`, or
    /// a file beside a run's session (`<session>.exit`, `<session>.process.json`, …).
    fn run_of(&self, dir: &Path, name: &OsString) -> Option<String> {
        let text = name.to_str()?;
        if text.starts_with('.') {
            // A temporary file: its rename into place is the event that counts.
            return None;
        }
        let mut found = None;
        if dir == self.artifacts.runs_dir() || dir == self.artifacts.activity_dir() {
            let id = text.split('.').next().unwrap_or_default();
            found = self.tracked.contains_key(id).then(|| id.to_owned());
        }
        if found.is_none() {
            found = self.sessions.get(dir).and_then(|runs| {
                runs.iter()
                    .find(|(session, _)| {
                        name.as_encoded_bytes()
                            .starts_with(session.as_encoded_bytes())
                    })
                    .map(|(_, id)| id.clone())
            });
        }
        found
    }

    /// Whether every file of `record` is watched, so that a file event names each change. Until
    /// `subagent-activity/` exists (an exec child never writes one), the root's watch stands for
    /// it: its creation is an event there.
    fn watched(&self, record: &RunRecord) -> bool {
        if relayed(record).is_some() {
            // Its only files here are its run's, which the relay writes.
            return self.waker.is_active() && self.waker.is_watched(&self.artifacts.runs_dir());
        }
        self.waker.is_active()
            && self.waker.is_watched(&self.artifacts.runs_dir())
            && (self.waker.is_watched(&self.artifacts.activity_dir())
                || self.waker.is_watched(self.artifacts.root()))
            && Path::new(&record.session_file)
                .parent()
                .is_some_and(|dir| self.waker.is_watched(dir))
    }

    /// Lists every surface that holds tracked panes once per interval (one `tmux list-panes`, one
    /// Herdr `pane list`), so runs in panes need no query of their own while they are there.
    fn refresh_listings(&mut self) {
        if self
            .last_listing
            .is_some_and(|at| at.elapsed() < self.options.reconcile_interval)
        {
            return;
        }
        self.last_listing = Some(Instant::now());
        self.listings.clear();
        let deadline = Instant::now() + herd_surface::REQUEST_BUDGET;
        for run in self.tracked.values() {
            let Some((surface, Target::Pane(_))) = &run.surface else {
                continue;
            };
            let key = crate::status::group_key(&run.record);
            if self.listings.contains_key(&key) {
                continue;
            }
            let probe = self.listing_probes.entry(key.clone()).or_default();
            if !probe.ready(Instant::now()) {
                continue;
            }
            let Ok(rows) = surface.list(deadline) else {
                probe.failed(Instant::now());
                continue;
            };
            probe.answered();
            self.listings.insert(
                key,
                rows.into_iter()
                    .map(|row| {
                        let seen = row.inspection();
                        (row.pane_id, (row.terminal_id, seen))
                    })
                    .collect(),
            );
        }
    }

    /// One pass over every tracked run. Delivered results are handed to `deliver` exactly once.
    pub fn tick(
        &mut self,
        mut deliver: impl FnMut(&RunResult) -> std::io::Result<()>,
    ) -> Result<Vec<Event>, Error> {
        let mut events = Vec::new();
        self.refresh_listings();
        // The relay of every host with a run here stands (it is started again when it died).
        let hosts: BTreeSet<&str> = self
            .tracked
            .values()
            .filter_map(|run| relayed(&run.record))
            .map(|remote| remote.host.as_str())
            .collect();
        for host in hosts {
            crate::relay::ensure(&self.artifacts, host);
        }
        self.batch = self.tracked.values().any(|run| {
            run.last_reconcile
                .is_none_or(|at| at.elapsed() >= self.interval(run))
        });
        let ids: Vec<String> = self.tracked.keys().cloned().collect();
        for id in ids {
            let done = self.tick_run(&id, &mut events, &mut deliver)?;
            if done {
                if let Some(run) = self.tracked.remove(&id) {
                    let session = Path::new(&run.record.session_file);
                    if let Some(runs) = session.parent().and_then(|d| self.sessions.get_mut(d)) {
                        runs.retain(|(_, run_id)| *run_id != id);
                    }
                }
            }
        }
        // What the events named has been read.
        self.touched.clear();
        self.all_changed = false;
        Ok(events)
    }

    /// What this tick knows of run `id` before it looks at it; `None` when the run has nothing
    /// new, nothing due and nothing in progress, and so costs the tick nothing more.
    fn look(&self, id: &str) -> Option<Look> {
        let run = self.tracked.get(id)?;
        // Whether the run's files may have changed since they were last read.
        let changed = self.all_changed
            || self.touched.contains(id)
            || !run.read_once
            || !self.watched(&run.record);
        let due = self.due(run);
        if !changed && !due && run.finisher.is_none() && run.pending.is_none() {
            return None;
        }
        // A watch of the child's exit is asked for once, while descriptors are left for one.
        let may_watch = !run.exit_watch_asked
            && self
                .tracked
                .values()
                .filter(|run| run.exit_watch.is_some())
                .count()
                < max_exit_watches();
        let listed = run.record.pane.as_ref().and_then(|pane| {
            let (terminal, seen) = self
                .listings
                .get(&crate::status::group_key(&run.record))?
                .get(&pane.pane_id)?;
            // A pane id listed with another terminal is a restarted Herdr's fresh shell.
            match (&pane.terminal_id, terminal) {
                (Some(recorded), Some(now)) if recorded != now => None,
                _ => Some(seen.clone()),
            }
        });
        Some(Look {
            changed,
            due,
            may_watch,
            listed,
        })
    }

    /// One run's part of a tick, in the order of its numbered steps; returns whether the run is
    /// done (delivered, or handed to a successor).
    fn tick_run(
        &mut self,
        id: &str,
        events: &mut Vec<Event>,
        deliver: &mut impl FnMut(&RunResult) -> std::io::Result<()>,
    ) -> Result<bool, Error> {
        let Some(look) = self.look(id) else {
            return Ok(!self.tracked.contains_key(id));
        };
        let artifacts = &self.artifacts;
        let options = &self.options;
        let Some(run) = self.tracked.get_mut(id) else {
            return Ok(true);
        };

        // 1. A settled result is delivered, whoever settled it; a finisher at work is waited on.
        if let Some(done) = settle(run, artifacts, id, look.changed, events, deliver)? {
            return Ok(done);
        }
        // A run on another machine is its host's to judge once the host acknowledged it: its
        // result comes by the relay. Until then its launch is judged here like any other.
        if let Some(remote) = relayed(&run.record) {
            // What its files said has been read: only a file event reads them again.
            let _ = remote;
            run.read_once = true;
            return Ok(false);
        }
        // Without a file event, a run is looked at when its reconciliation is due or while it
        // waits out the grace for a late sidecar.
        if !look.changed && !look.due && run.pending.is_none() {
            return Ok(false);
        }
        let now = now_ms();
        // A reconciliation due with no file of the run changed reads none of them again: it
        // asks the surface, and what the files said last stands.
        let read = look.changed || run.pending.is_some();
        run.read_once = true;

        // 2. Cheap evidence: cancel intent, interrupt, stop, activity, the completion sidecar;
        //    a persistent specialist's task results, each delivered once.
        let sidecar = read_evidence(run, artifacts, id, now, read, look.due);
        if read && run.record.persistent && options.task_results {
            deliver_task_results(run, artifacts, id, events, deliver)?;
        }

        // 3. The launch judged and the surface reconciled once per interval.
        let ControlFlow::Continue(other) =
            judge_and_reconcile(run, artifacts, id, &look, now, read, options.lost_grace)
        else {
            return Ok(true);
        };

        // 4. Completion: the sidecar decides; other evidence waits out the grace for a late one.
        complete(run, artifacts, sidecar, other, now);

        // 5. Status transitions; queued steering goes out between turns.
        transitions(run, artifacts, id, now, options.hang_warning, events);
        Ok(false)
    }
}

/// The remote part of a run on another machine once its host acknowledged it: the host's herd
/// judges it and the relay brings its result.
fn relayed(record: &RunRecord) -> Option<&herd_protocol::run::RemoteRun> {
    record.extra.remote.as_ref().filter(|r| r.run_id.is_some())
}

/// What a tick knows of one run before it looks at it (see [`Supervisor::look`]).
struct Look {
    /// Whether the run's files may have changed since they were last read.
    changed: bool,
    /// Whether its reconciliation, or a judgement of the clock, is due.
    due: bool,
    /// Whether an exit watch may be asked for.
    may_watch: bool,
    /// What this interval's listing of its surface said of its pane.
    listed: Option<Inspection>,
}

/// Appends a status transition to `runs/<id>.events.jsonl`.
pub(super) fn append_event(
    artifacts: &Artifacts,
    id: &str,
    projection: &Projection,
) -> Result<(), Error> {
    use herd_protocol::watch::{RUN_EVENT_VERSION, RunEvent, RunEventKind};
    let line = RunEvent {
        format_version: RUN_EVENT_VERSION,
        at_ms: now_ms(),
        event: RunEventKind::Status,
        label: projection.label,
        detail: projection.detail.clone(),
    };
    let line = serde_json::to_string(&line)
        .map_err(|e| Error::internal(format!("cannot encode a run event: {e}")))?;
    Ok(herd_core::sidecar::append_line(
        &artifacts.run_events(id),
        &line,
    )?)
}

/// Runs the loop until `run_id` has a settled result; returns it (delivering it if nobody had).
pub fn wait_for(
    artifacts: &Artifacts,
    run_id: &str,
    options: Options,
    mut on_event: impl FnMut(&Event),
) -> Result<RunResult, Error> {
    let mut run_id = run_id.to_owned();
    // A run superseded by a model fallback is answered by its successor's result.
    'chain: loop {
        let record = RunRecord::load(artifacts, &run_id)?;
        if let Some(result) = delivery::load_or_settle(artifacts, &record, None)? {
            finish::record_outcome(artifacts, &record, &result)?;
            delivery::deliver_once(artifacts, &result, |_| Ok(()))?;
            return Ok(result);
        }
        if let Some(successor) =
            fallback::read_superseded(artifacts, &run_id).and_then(|s| s.successor)
        {
            run_id = successor;
            continue;
        }
        if delivery::is_delivered(artifacts, &run_id) {
            // Marked delivered, yet no result and no successor: the files were damaged or
            // removed part-way. Say so rather than look again forever.
            return Err(Error::new(
                herd_core::ErrorCode::Conflict,
                format!(
                    "run {run_id} is marked delivered but its result file is missing; `herd-cleanup doctor` lists such runs"
                ),
            ));
        }
        let options = Options {
            task_results: false,
            ..options.clone()
        };
        let mut supervisor = Supervisor::new(artifacts.clone(), Some(run_id.clone()), options);
        supervisor.scan()?;
        loop {
            let mut delivered = None;
            for event in supervisor.tick(|r| {
                delivered = Some(r.clone());
                Ok(())
            })? {
                on_event(&event);
            }
            if let Some(result) = delivered {
                return Ok(result);
            }
            if supervisor.is_idle() {
                // Delivered by another watcher meanwhile, or superseded: look again.
                continue 'chain;
            }
            supervisor.sleep();
        }
    }
}

#[cfg(test)]
mod tests;
