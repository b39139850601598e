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
use herd_protocol::needs_input::{InputReason, NeedsInput};
use herd_protocol::run::{LaunchStatus, RunRecord};
use herd_protocol::watch::WatchEvent;
use herd_surface::{Inspection, Presence, Surface, Target};

use crate::control::{self, Termination};
use crate::delivery::{self, RunResult};
use crate::evidence;
use crate::fallback;
use crate::finish::{self, Observed};
use crate::launch::LaunchState;
use crate::projection::{
    AgentStatus, CancelState, Label, Lifecycle, Notice, PaneObservation, Projection, notice,
    short_duration,
};
use crate::tasks;
use herd_protocol::child::{self, ActivityRead, ExitRead};

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
/// The default no-progress budget of seed 003's supervision (15 minutes).
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

/// What supervision reports.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Status {
        run_id: String,
        name: String,
        projection: Projection,
    },
    Stalled {
        run_id: String,
        name: String,
        line: String,
    },
    Recovered {
        run_id: String,
        name: String,
        line: String,
    },
    Notice {
        run_id: String,
        message: String,
    },
    /// The run started waiting for a person (once per transition).
    NeedsInput {
        run_id: String,
        name: String,
        input: NeedsInput,
    },
    Result(Box<RunResult>),
}

impl Event {
    pub fn run_id(&self) -> &str {
        match self {
            Event::Status { run_id, .. }
            | Event::Stalled { run_id, .. }
            | Event::Recovered { run_id, .. }
            | Event::Notice { run_id, .. }
            | Event::NeedsInput { run_id, .. } => run_id,
            Event::Result(result) => &result.run_id,
        }
    }

    /// The JSON Lines form: `event` and `run_id` first.
    pub fn to_json(&self) -> serde_json::Value {
        let event = match self {
            Event::Status {
                run_id,
                name,
                projection,
            } => WatchEvent::Status {
                run_id: run_id.clone(),
                name: name.clone(),
                label: projection.label,
                detail: projection.detail.clone(),
                since_ms: projection.since_ms,
            },
            Event::Stalled { run_id, name, line } => WatchEvent::Stalled {
                run_id: run_id.clone(),
                name: name.clone(),
                message: line.clone(),
            },
            Event::Recovered { run_id, name, line } => WatchEvent::Recovered {
                run_id: run_id.clone(),
                name: name.clone(),
                message: line.clone(),
            },
            Event::Notice { run_id, message } => WatchEvent::Notice {
                run_id: run_id.clone(),
                message: message.clone(),
            },
            Event::NeedsInput {
                run_id,
                name,
                input,
            } => WatchEvent::NeedsInput {
                run_id: run_id.clone(),
                name: name.clone(),
                reason: input.reason,
                since_ms: input.since_ms,
                kind: input.kind.clone(),
                title: input.title.clone(),
                message: needs_input_line(name, input),
            },
            Event::Result(result) => WatchEvent::result(result),
        };
        herd_protocol::to_value(&event)
    }

    /// The one-line human form (results print their whole message).
    pub fn human(&self) -> String {
        match self {
            Event::Status {
                name, projection, ..
            } => {
                let head = format!(
                    "{}: {}",
                    herd_core::escape::encode_host_value(name, 80),
                    projection.label.as_str()
                );
                match &projection.detail {
                    Some(detail) => {
                        format!("{head} · {}", crate::projection::encoded_detail(detail))
                    }
                    None => head,
                }
            }
            Event::Stalled { line, .. } | Event::Recovered { line, .. } => line.clone(),
            Event::Notice { message, .. } => message.clone(),
            Event::NeedsInput { name, input, .. } => needs_input_line(name, input),
            Event::Result(result) => result.message.clone(),
        }
    }
}

/// The one-line notice of a run that started waiting for a person: `"Scout" is waiting for
/// input: dialog (confirm "Delete?").` The name and the title are encoded.
pub fn needs_input_line(name: &str, input: &NeedsInput) -> String {
    let mut line = format!(
        "{} is waiting for input: {}",
        quoted(name),
        input.reason.as_str()
    );
    match (&input.kind, &input.title) {
        (Some(kind), Some(title)) => line.push_str(&format!(
            " ({} \"{}\")",
            herd_core::escape::encode_host_value(kind, 20),
            herd_core::escape::encode_host_value(title, 80)
        )),
        (Some(kind), None) => line.push_str(&format!(
            " ({})",
            herd_core::escape::encode_host_value(kind, 20)
        )),
        _ => {}
    }
    line.push('.');
    line
}

struct Finisher {
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
    /// Whether the current no-progress episode was announced.
    hang_warned: bool,
    /// Since when the run's launch is known orphaned (herd-launch gone, no child seen).
    orphaned_since: Option<Instant>,
    /// The retries of an unconfirmed cancel's termination.
    termination: Retries,
    /// The termination of a run past its time limit, while it runs.
    timing_out: Option<JoinHandle<()>>,
    /// Whether its files were read since it was taken on (later, only when an event names them).
    read_once: bool,
    /// The cancel intent as its file last said.
    intent: Option<control::CancelIntent>,
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
/// in a thread of its own (an attempt may take the cancel deadline), paced by seed 003's backoff.
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
            let key = group_key(&run.record);
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
                .get(&group_key(&run.record))?
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

/// Step 1: delivers a settled result (a finisher's or a cancel's: its file appearing is an
/// event of the run), and minds a finisher at work. `Some(done)` when the tick of the run ends
/// here.
fn settle(
    run: &mut Tracked,
    artifacts: &Artifacts,
    id: &str,
    changed: bool,
    events: &mut Vec<Event>,
    deliver: &mut impl FnMut(&RunResult) -> std::io::Result<()>,
) -> Result<Option<bool>, Error> {
    let settled = if changed || run.finisher.is_some() {
        delivery::load(artifacts, id)?
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
        if control::read_intent(artifacts, id).is_some() {
            let _ = finisher.cancel.send(());
        }
        return Ok(Some(false));
    }
    Ok(None)
}

/// Step 2: the cheap evidence, read when the run's files may have changed: cancel intent (and
/// the retries of its termination), a time limit, an interrupt, a specialist's stop, activity.
/// Returns the completion sidecar when one is there.
fn read_evidence(
    run: &mut Tracked,
    artifacts: &Artifacts,
    id: &str,
    now: u64,
    read: bool,
    due: bool,
) -> Option<child::Completion> {
    crate::crash_point("evidence");
    if read {
        run.intent = control::read_intent(artifacts, id);
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
        .then(|| control::read_interrupt(artifacts, id))
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
    match read.then(|| child::read_run_exit(&run.record)) {
        Some(ExitRead::Found(completion)) => Some(completion),
        _ => None,
    }
}

/// Step 2, for a persistent specialist: its task results, each delivered once.
fn deliver_task_results(
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
fn judge_and_reconcile(
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
fn complete(
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
/// events); the stall and recovery notices of protocol.md §3.2 and seed 003's unconfirmed-stop
/// notice; the no-progress notice; queued steering delivered between turns.
fn transitions(
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
    // Between turns: waiting, or an interactive child's settled run (never into a dialog).
    let between_turns = projection.label == Label::Waiting
        || (projection.label == Label::WaitingForInput
            && projection.detail.as_deref() == Some(InputReason::TurnSettled.as_str()));
    if between_turns && run.finisher.is_none() {
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
    // Seed 003's timeout notice of one stop attempt, to every parent: a specialist is
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
        let name = run.record.name.clone();
        // Protocol.md §3.2's shapes: "<name> running <rt>, stalled <d>." and
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
        match notice(previous, projection.label)
            .filter(|n| !(stop_retried && *n == Notice::Recovered))
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

/// Drives the termination of a cancelled run that its cancel could not confirm: another attempt
/// once the backoff has passed (1 s, doubling to a 30 s cap), until one confirms. A cancel still
/// within its own deadline, and a launch herd-launch is still acquiring, are left to their owners.
fn retry_termination(run: &mut Tracked, artifacts: &Artifacts, intent: &control::CancelIntent) {
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
        if result.outcome == delivery::Outcome::Help && result.task.is_none() {
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

/// Runs whose panes one listing covers: the same surface and the same server.
pub(crate) fn group_key(record: &RunRecord) -> String {
    let socket = record
        .pane
        .as_ref()
        .and_then(|p| p.socket.as_deref())
        .unwrap_or_default();
    format!("{}:{socket}", record.surface.as_str())
}

fn quoted(name: &str) -> String {
    herd_core::escape::json_string(&herd_core::escape::abbreviate_name(name))
}

/// Queries the run's surface: presence proves the child is there; only a per-target query
/// proves it gone.
///
/// `listed` is what this interval's listing of the run's surface said of its pane: a running
/// pane there needs no query of its own. Herdr's agent status of the pane, from the listing or
/// the query, feeds the turn (protocol.md §3.1).
fn reconcile(
    run: &mut Tracked,
    artifacts: &Artifacts,
    now: u64,
    listed: Option<Inspection>,
    may_watch: bool,
) -> Option<Observed> {
    if run.surface.is_none() {
        match herd_surface::open(&run.record, artifacts) {
            Ok(pair) => run.surface = Some(pair),
            // No pane was recorded (its launcher died before it could say): the child's own
            // identity is the only owner to ask.
            Err(_) => return reconcile_identity(run, artifacts, now),
        }
    }
    let (surface, target) = run.surface.as_ref()?;
    let deadline = Instant::now() + herd_surface::REQUEST_BUDGET;
    let seen = match listed {
        Some(
            seen @ Inspection {
                presence: Presence::Running | Presence::Exited { status: Some(_) },
                ..
            },
        ) => {
            run.probe.answered();
            Ok(seen)
        }
        // Not listed, or listed without an answer: only a query of this pane can tell. While
        // that query keeps failing, it is asked again only once its backoff has passed.
        _ if !run.probe.ready(Instant::now()) => Err(herd_surface::Error::Io(
            "the last query failed: the next waits out its backoff".into(),
        )),
        _ => {
            let seen = surface.inspect(target, deadline);
            match &seen {
                Ok(_) => run.probe.answered(),
                Err(_) => run.probe.failed(Instant::now()),
            }
            seen
        }
    };
    match seen.map(|seen| (seen.presence, seen.agent)) {
        Ok((Presence::Running, agent)) => {
            run.lifecycle.observe_pane(
                PaneObservation::Present(agent.unwrap_or(AgentStatus::Unknown)),
                now,
            );
            if may_watch {
                run.exit_watch_asked = true;
                run.exit_watch = surface.exit_watch(target);
            }
            // A Herdr pane keeps its shell after the launch script: once the runner is gone,
            // the shell sentinel on the screen tells its status (the sidecars win, after grace).
            (run.record.surface == herd_protocol::run::SurfaceKind::Herdr
                && crate::status::runner_gone(&run.record))
            .then(|| sentinel(surface.as_ref(), target).map_or(Observed::Lost, Observed::Exited))
        }
        Ok((Presence::Exited { status }, _)) => {
            run.lifecycle
                .observe_pane(PaneObservation::Present(AgentStatus::Unknown), now);
            Some(match status {
                Some(code) => Observed::Exited(code),
                None => sentinel(surface.as_ref(), target).map_or(Observed::Lost, Observed::Exited),
            })
        }
        Ok((Presence::Absent, _)) => {
            run.lifecycle.observe_pane(PaneObservation::Missing, now);
            Some(Observed::Lost)
        }
        // The surface does not answer and the runner is gone without a completion (a stopped
        // Herdr ends its panes' processes): the run is lost, as if its pane had gone.
        Err(_) if crate::status::runner_gone(&run.record) => {
            run.lifecycle.observe_pane(PaneObservation::Missing, now);
            Some(Observed::Lost)
        }
        Err(_) => {
            run.lifecycle.observe_pane(PaneObservation::ReadError, now);
            None
        }
    }
}

/// How many exit watches (one descriptor each) a supervisor holds at most: half of what the
/// descriptor limit leaves after a reserve for files, pipes and sockets. Runs beyond it are
/// reconciled on the short interval, as without a watch.
fn max_exit_watches() -> usize {
    static MAX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes one rlimit we own.
        let soft = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
            limit.rlim_cur
        } else {
            0
        };
        let soft = usize::try_from(soft).unwrap_or(usize::MAX);
        (soft.saturating_sub(256) / 2).min(16_384)
    })
}

/// Supervises a child that has no surface target through its recorded identity alone.
fn reconcile_identity(run: &mut Tracked, artifacts: &Artifacts, now: u64) -> Option<Observed> {
    let identity = (!run.record.session_file.is_empty())
        .then(|| herd_core::identity::Record::read(&run.record.session_files().process()))
        .and_then(Result::ok)
        .flatten();
    let Some(identity) = identity else {
        run.lifecycle.observe_pane(PaneObservation::ReadError, now);
        return None;
    };
    if herd_core::identity::judge(&identity) == herd_core::identity::Judgement::Alive {
        run.lifecycle
            .observe_pane(PaneObservation::Present(AgentStatus::Unknown), now);
        return None;
    }
    if herd_core::identity::proven_gone(&identity).is_none() {
        run.lifecycle.observe_pane(PaneObservation::ReadError, now);
        return None;
    }
    run.lifecycle.observe_pane(PaneObservation::Missing, now);
    Some(
        herd_surface::read_runner_exit(&herd_surface::runner_exit_file(
            artifacts,
            &run.record.run_id,
        ))
        .map_or(Observed::Lost, Observed::Exited),
    )
}

/// Reads the shell sentinel from the child's screen or log.
fn sentinel(surface: &dyn Surface, target: &Target) -> Option<i32> {
    let deadline = Instant::now() + herd_surface::REQUEST_BUDGET;
    let text = surface
        .read_tail(target, herd_surface::SENTINEL_LINES, deadline)
        .ok()?;
    evidence::find_sentinel(&text)
}

/// Appends a status transition to `runs/<id>.events.jsonl`.
fn append_event(artifacts: &Artifacts, id: &str, projection: &Projection) -> Result<(), Error> {
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
        if let Some(result) = delivery::load(artifacts, &run_id)? {
            let record = RunRecord::load(artifacts, &run_id)?;
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
mod tests {
    use super::*;
    use herd_surface::AgentStatus as HerdrStatus;

    /// A run in a Herdr pane, seen by nothing yet: its surface is opened from the record alone,
    /// which asks Herdr nothing.
    fn tracked_in_herdr() -> Tracked {
        let record: RunRecord = serde_json::from_value(serde_json::json!({
            "format_version": 1, "run_id": "ab12cd34", "name": "worker", "created_at_ms": 1000,
            "runner": "pi", "surface": "herdr", "status": "launched", "cwd": "/",
            "session_file": "/nonexistent/s.jsonl",
            "pane": {"pane_id": "w1:p7", "workspace_id": "w1", "owned": true},
        }))
        .unwrap();
        Tracked::new(record)
    }

    fn listed(agent: Option<HerdrStatus>) -> Option<Inspection> {
        Some(Inspection {
            presence: Presence::Running,
            agent,
        })
    }

    /// A child on the process surface whose launch script sleeps, and its record, written.
    fn launch_sleeping(
        artifacts: &Artifacts,
        dir: &Path,
        extra: serde_json::Value,
    ) -> (RunRecord, Target) {
        let sessions = dir.join("sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        let session = sessions.join("2026_ab12cd34.jsonl");
        let script = dir.join("child.sh");
        std::fs::write(&script, "exec sleep 120\n").unwrap();
        let process = herd_surface::process::Process::new(artifacts.clone());
        let launch = herd_surface::Launch {
            run_id: "ab12cd34",
            name: "worker",
            cwd: dir,
            script: &script,
            session_file: &session,
            into: None,
        };
        let target = process
            .launch(&launch, &herd_surface::LaunchBudgets::default())
            .unwrap();
        let mut record = serde_json::json!({
            "format_version": 1, "run_id": "ab12cd34", "name": "worker", "created_at_ms": 1000,
            "runner": "exec", "surface": "process", "status": "launched", "cwd": "/",
            "session_file": session,
        });
        record
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let record: RunRecord = serde_json::from_value(record).unwrap();
        herd_core::sidecar::write_json(&artifacts.run_record("ab12cd34"), &record).unwrap();
        herd_protocol::open_runs::add(artifacts, "ab12cd34").unwrap();
        (record, target)
    }

    /// Ends the launch script `launch_sleeping` started, through its verified identity.
    fn kill_leader(target: &Target) {
        let Target::Process(files) = target else {
            panic!("a process target")
        };
        if let Ok(Some(leader)) = herd_core::identity::Record::read(&files.leader) {
            herd_core::identity::terminate(&leader, libc::SIGKILL);
        }
    }

    #[test]
    fn a_pending_stop_wakes_the_loop_at_its_deadline_not_at_the_long_interval() {
        let dir = tempfile::tempdir().unwrap();
        let artifacts = Artifacts::new(dir.path().join("art"));
        let (record, target) = launch_sleeping(
            &artifacts,
            dir.path(),
            serde_json::json!({"persistent": true}),
        );
        let ledger = record.session_files().ledger();
        // The stop directive was published just now, and no task holds it.
        let line = serde_json::json!({
            "task": "t1", "outcome": "stop-pending", "generation": "g1",
            "at": herd_core::time::iso(now_ms()),
        });
        herd_core::sidecar::append_line(&ledger, &line.to_string()).unwrap();
        let mut supervisor = Supervisor::new(artifacts.clone(), None, Options::default());
        supervisor.scan().unwrap();
        supervisor.tick(|_| Ok(())).unwrap();
        let run = &supervisor.tracked["ab12cd34"];
        assert!(
            run.exit_watch.is_some(),
            "the specialist's process is watched"
        );
        assert!(run.stop_due_ms.is_some(), "the stop's deadline is known");
        let sleep = supervisor.idle_sleep();
        kill_leader(&target);
        assert!(
            sleep <= Duration::from_millis(crate::tasks::STOP_DEADLINE_MS),
            "the loop wakes when the stop becomes unconfirmed: {sleep:?}"
        );
    }

    #[test]
    fn an_idle_process_child_costs_no_tick_until_it_exits() {
        let dir = tempfile::tempdir().unwrap();
        let artifacts = Artifacts::new(dir.path().join("art"));
        let (_, target) = launch_sleeping(&artifacts, dir.path(), serde_json::json!({}));
        let mut supervisor = Supervisor::new(artifacts.clone(), None, Options::default());
        supervisor.scan().unwrap();
        let events = supervisor.tick(|_| Ok(())).unwrap();
        assert!(events.iter().all(|e| !matches!(e, Event::Result(_))));
        let run = &supervisor.tracked["ab12cd34"];
        assert!(
            run.exit_watch.is_some(),
            "the running launch script is watched"
        );
        // Nothing is due before the long interval: the loop sleeps past many short ones.
        assert!(supervisor.quiet(run));
        assert!(supervisor.idle_sleep() > 10 * Options::default().reconcile_interval);

        kill_leader(&target);
        // The exit ends the sleep and makes the run due at once.
        let mut woke = false;
        for _ in 0..5 {
            woke = supervisor.sleep();
            if woke && supervisor.tracked["ab12cd34"].exit_watch.is_none() {
                break;
            }
        }
        assert!(woke, "the exit woke the loop");
        let run = &supervisor.tracked["ab12cd34"];
        assert!(run.exit_watch.is_none() && supervisor.due(run));
    }

    #[test]
    fn a_file_event_names_the_run_whose_file_changed() {
        let dir = tempfile::tempdir().unwrap();
        let artifacts = Artifacts::new(dir.path().join("art"));
        let sessions = dir.path().join("sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        let record: RunRecord = serde_json::from_value(serde_json::json!({
            "format_version": 1, "run_id": "ab12cd34", "name": "worker", "created_at_ms": 1000,
            "runner": "pi", "surface": "process", "status": "launched", "cwd": "/",
            "session_file": sessions.join("2026_ab12cd34.jsonl"),
        }))
        .unwrap();
        herd_core::sidecar::write_json(&artifacts.run_record("ab12cd34"), &record).unwrap();
        herd_protocol::open_runs::add(&artifacts, "ab12cd34").unwrap();
        let mut supervisor = Supervisor::new(artifacts.clone(), None, Options::default());
        supervisor.scan().unwrap();
        let of = |dir: &Path, name: &str| supervisor.run_of(dir, &OsString::from(name));
        let runs = artifacts.runs_dir();
        assert_eq!(
            of(&runs, "ab12cd34.cancel.json").as_deref(),
            Some("ab12cd34")
        );
        assert_eq!(
            of(&runs, "ab12cd34.result.json").as_deref(),
            Some("ab12cd34")
        );
        assert_eq!(
            of(&artifacts.activity_dir(), "ab12cd34.json").as_deref(),
            Some("ab12cd34")
        );
        assert_eq!(
            of(&sessions, "2026_ab12cd34.jsonl.exit").as_deref(),
            Some("ab12cd34")
        );
        assert_eq!(
            of(&sessions, "2026_ab12cd34.jsonl").as_deref(),
            Some("ab12cd34")
        );
        // Temporary files, other runs and other sessions name no tracked run.
        assert_eq!(of(&runs, ".ab12cd34.json.x1.tmp"), None);
        assert_eq!(of(&runs, "ff00ff00.json"), None);
        assert_eq!(of(&sessions, "2026_other.jsonl.exit"), None);
    }

    #[test]
    fn a_child_written_detail_is_encoded_on_the_status_line() {
        let event = Event::Status {
            run_id: "ab12cd34".into(),
            name: "worker".into(),
            projection: Projection {
                label: Label::Active,
                detail: Some("read\u{1b}[2J\u{2028}x".into()),
                since_ms: Some(1),
            },
        };
        assert_eq!(event.human(), r"worker: active · read\u001b[2J\u2028x");
    }

    #[test]
    fn the_listed_agent_status_drives_the_turn() {
        let artifacts = Artifacts::new("/nonexistent/artifacts");
        let mut run = tracked_in_herdr();
        let label = |run: &Tracked, now| run.lifecycle.project(now).label;

        // Present but not yet working: the process is confirmed, the turn not begun.
        assert!(
            reconcile(
                &mut run,
                &artifacts,
                2000,
                listed(Some(HerdrStatus::Idle)),
                false
            )
            .is_none()
        );
        assert_eq!(label(&run, 2000), Label::Running);
        assert!(
            reconcile(
                &mut run,
                &artifacts,
                3000,
                listed(Some(HerdrStatus::Working)),
                false
            )
            .is_none()
        );
        assert_eq!(label(&run, 3000), Label::Active);
        // `unknown` (and a surface without statuses) keeps the turn.
        reconcile(
            &mut run,
            &artifacts,
            4000,
            listed(Some(HerdrStatus::Unknown)),
            false,
        );
        assert_eq!(label(&run, 4000), Label::Active);
        reconcile(&mut run, &artifacts, 4500, listed(None), false);
        assert_eq!(label(&run, 4500), Label::Active);
        reconcile(
            &mut run,
            &artifacts,
            5000,
            listed(Some(HerdrStatus::Blocked)),
            false,
        );
        assert_eq!(label(&run, 5000), Label::Blocked);
        reconcile(
            &mut run,
            &artifacts,
            6000,
            listed(Some(HerdrStatus::Done)),
            false,
        );
        assert_eq!(label(&run, 6000), Label::Waiting);
        reconcile(
            &mut run,
            &artifacts,
            7000,
            listed(Some(HerdrStatus::Idle)),
            false,
        );
        assert_eq!(label(&run, 7000), Label::Waiting);
        assert!(
            run.surface.is_some(),
            "the surface was opened from the record"
        );
    }
}
