//! The relay: results of children on other machines brought home exactly once.
//!
//! One relay per host and artifacts directory (`herd-watch relay --host H`, holding the lock
//! `relays/<host>.lock`) runs the remote `herd-watch follow --json --ack --forever` over the
//! host's master connection. The remote follower is the remote's herd supervising its children:
//! it judges their processes, settles their results and emits each one. For each result the
//! relay settles the local run's result (`runs/<id>.result.json`, written once and durably),
//! and only then acknowledges it on the remote (`{"ack":"<key>"}` on the follower's stdin), so
//! the remote marks it delivered only once it is safe here. The local delivery path (`follow`,
//! `wait`) then delivers it once, as any local result.
//!
//! Every break is a restart of one side: a relay or connection that dies before the
//! acknowledgement leaves the result unacknowledged on the remote, whose next follower emits it
//! again, and the write-once local result takes it as the same one. While the host cannot be
//! reached the relay records `disconnected` with the last time it heard from the host, and
//! tries again after 1 s, doubling to 30 s, with ±20 % jitter; no run fails for that alone.
//!
//! Local supervisors start the relay when they track a run on a host ([`ensure`]); it ends when
//! no open run of its host is left. Control of a remote run (cancel, interrupt, stop, steer) is
//! forwarded to the remote's herd-watch ([`forward`]); this machine never signals a remote
//! process.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use herd_cli::Output;
use herd_core::{Error, ErrorCode, exit};
use herd_protocol::layout::Artifacts;
use herd_protocol::relay::{RELAY_STATE_VERSION, RelayState};
use herd_protocol::run::{RemoteRun, RemoteState, RunRecord};
use herd_protocol::run_file::RunFile;
use herd_protocol::watch::{Label, WatchEvent};
use herd_remote::stream::{Line, Session};
use herd_remote::{Destination, HostRecord, Hosts, Ssh};

use crate::delivery::{self};
use crate::projection::Projection;
use crate::status::RunStatus;
use herd_protocol::result::FORMAT_VERSION;
use herd_protocol::result::RunResult;

/// The first wait before reconnecting, and the longest.
const BACKOFF_FIRST: Duration = Duration::from_secs(1);
const BACKOFF_MAX: Duration = Duration::from_secs(30);
/// How often the relay looks whether runs are left while the connection is quiet.
const LOOK_EVERY: Duration = Duration::from_secs(1);
/// How often a supervisor may start a relay for one host.
pub(crate) const ENSURE_EVERY: Duration = Duration::from_secs(2);
/// The budget of a forwarded control call.
const CONTROL_BUDGET: Duration = Duration::from_secs(60);

/// The relay's state of `host`, when a relay ran.
pub fn read_state(artifacts: &Artifacts, host: &str) -> Option<RelayState> {
    RelayState::read(artifacts, host).ok().flatten()
}

/// Records the relay's connection; a state that cannot be written leaves the last one (the
/// status of a remote run then says what it said).
fn write_state(artifacts: &Artifacts, state: RelayState) {
    let _ = state.write(artifacts);
}

/// Starts the relay of `host` unless one runs (its lock is held); at most every 2 s per host.
pub fn ensure(artifacts: &Artifacts, host: &str) {
    static LAST: Mutex<Option<HashMap<PathBuf, Instant>>> = Mutex::new(None);
    let lock = artifacts.relay_lock(host);
    {
        let mut last = LAST
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let map = last.get_or_insert_with(HashMap::new);
        if map.get(&lock).is_some_and(|at| at.elapsed() < ENSURE_EVERY) {
            return;
        }
        map.insert(lock.clone(), Instant::now());
    }
    if Destination::new(host).is_err() {
        return;
    }
    match herd_core::lock::exclusive(&lock, Instant::now()) {
        Ok(held) => drop(held),
        // Held: the relay runs.
        Err(_) => return,
    }
    let log = artifacts.relay_dir().join(format!("{host}.log"));
    let program = herd_core::subprocess::sibling_binary("herd-watch");
    let cmd = herd_core::subprocess::Detached::new(program, &log, &log)
        .arg("--artifacts")
        .arg(artifacts.root())
        .args(["relay", "--host", host]);
    if let Err(err) = herd_core::subprocess::spawn_detached(&cmd) {
        herd_cli::diagnostic(&format!("cannot start the relay of {host}: {err}"));
    }
}

/// The open runs of `host` whose result is not yet settled here.
fn open_runs(artifacts: &Artifacts, host: &str) -> Vec<RunRecord> {
    herd_protocol::open_runs::list(artifacts)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|id| RunRecord::load(artifacts, &id).ok())
        .filter(|r| of_host(r, host))
        .filter(|r| unsettled(artifacts, r))
        .collect()
}

fn of_host(record: &RunRecord, host: &str) -> bool {
    record
        .extra
        .remote
        .as_ref()
        .is_some_and(|m| m.host == host && m.run_id.is_some())
}

fn unsettled(artifacts: &Artifacts, record: &RunRecord) -> bool {
    delivery::load(artifacts, &record.run_id)
        .ok()
        .flatten()
        .is_none()
}

/// [`open_runs`], read again only when it may have changed, so an idle relay reads nothing: when
/// the open-run set changed (its directory's modification time: a run added or closed), when
/// this relay settled a result, or every [`REREAD_EVERY`] to be sure.
struct OpenRuns {
    stamp: Option<std::time::SystemTime>,
    read_at: Instant,
    stale: bool,
    runs: Vec<RunRecord>,
}

/// How often [`OpenRuns`] reads every open record whatever the set's directory says.
const REREAD_EVERY: Duration = Duration::from_secs(30);

impl OpenRuns {
    fn read(artifacts: &Artifacts, host: &str) -> OpenRuns {
        OpenRuns {
            stamp: set_stamp(artifacts),
            read_at: Instant::now(),
            stale: false,
            runs: open_runs(artifacts, host),
        }
    }

    /// The open runs now.
    fn current(&mut self, artifacts: &Artifacts, host: &str) -> &[RunRecord] {
        let stamp = set_stamp(artifacts);
        if self.stale
            || stamp.is_none()
            || stamp != self.stamp
            || self.read_at.elapsed() >= REREAD_EVERY
        {
            *self = OpenRuns::read(artifacts, host);
        }
        &self.runs
    }
}

/// When the open-run set last changed, where it can be said.
fn set_stamp(artifacts: &Artifacts) -> Option<std::time::SystemTime> {
    std::fs::metadata(herd_protocol::open_runs::dir(artifacts))
        .and_then(|m| m.modified())
        .ok()
}

/// The local run of the remote run `remote_id`: among `open` first, else among every record.
fn local_of(
    artifacts: &Artifacts,
    open: &[RunRecord],
    host: &str,
    remote_id: &str,
) -> Option<RunRecord> {
    let matches = |r: &RunRecord| {
        r.extra
            .remote
            .as_ref()
            .is_some_and(|m| m.host == host && m.run_id.as_deref() == Some(remote_id))
    };
    if let Some(found) = open.iter().find(|r| matches(r)) {
        return Some(found.clone());
    }
    artifacts
        .run_ids()
        .ok()?
        .into_iter()
        .filter_map(|id| RunRecord::load(artifacts, &id).ok())
        .find(|r| matches(r))
}

/// The wait before the next attempt: 1 s doubling to 30 s, ±20 % jitter.
struct Backoff {
    next: Duration,
}

impl Backoff {
    fn new() -> Backoff {
        Backoff {
            next: BACKOFF_FIRST,
        }
    }

    fn reset(&mut self) {
        self.next = BACKOFF_FIRST;
    }

    fn take(&mut self) -> Duration {
        let base = self.next;
        self.next = (self.next * 2).min(BACKOFF_MAX);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        // A factor in [0.8, 1.2).
        let factor = 0.8 + f64::from(nanos % 400) / 1000.0;
        base.mul_f64(factor)
    }
}

/// `herd-watch relay --host H`: the relay's life (see the module's documentation).
pub fn run(artifacts: &Artifacts, host: &str) -> Result<Output, Error> {
    let dest = Destination::new(host)?;
    let Ok(_lock) = herd_core::lock::exclusive(&artifacts.relay_lock(host), Instant::now()) else {
        // Another relay of this host runs.
        return Ok(Output::streamed(exit::SUCCESS));
    };
    let env = |k: &str| std::env::var(k).ok();
    let record = Hosts::from_env(&env)?.require(host)?;
    let ssh = Ssh::new(dest, &env)?;
    let mut backoff = Backoff::new();
    let mut last_seen = read_state(artifacts, host).and_then(|s| s.last_seen_ms);
    let mut disconnected_since: Option<u64> = None;
    loop {
        let runs = open_runs(artifacts, host);
        let Some(remote_artifacts) = runs.iter().find_map(|r| {
            r.extra
                .remote
                .as_ref()
                .map(|m: &RemoteRun| m.artifacts.clone())
        }) else {
            return Ok(Output::streamed(exit::SUCCESS));
        };
        let error = match converse(artifacts, &record, &ssh, &remote_artifacts, &mut last_seen) {
            Ok(Ended::NoRunsLeft) => return Ok(Output::streamed(exit::SUCCESS)),
            Ok(Ended::Dropped { heard }) => {
                if heard {
                    backoff.reset();
                    disconnected_since = None;
                }
                None
            }
            Err(err) => Some(err.message),
        };
        let since = *disconnected_since.get_or_insert_with(herd_core::time::now_ms);
        write_state(
            artifacts,
            RelayState {
                format_version: RELAY_STATE_VERSION,
                host: host.to_owned(),
                connected: false,
                since_ms: since,
                last_seen_ms: last_seen,
                error,
            },
        );
        let wait_until = Instant::now() + backoff.take();
        let mut open = OpenRuns::read(artifacts, host);
        while Instant::now() < wait_until {
            if open.current(artifacts, host).is_empty() {
                return Ok(Output::streamed(exit::SUCCESS));
            }
            std::thread::sleep(
                LOOK_EVERY.min(wait_until.saturating_duration_since(Instant::now())),
            );
        }
    }
}

enum Ended {
    NoRunsLeft,
    /// The connection ended; `heard` when the host answered before it did.
    Dropped {
        heard: bool,
    },
}

/// One connection: the remote follower's lines until the connection drops or no run is left.
fn converse(
    artifacts: &Artifacts,
    record: &HostRecord,
    ssh: &Ssh,
    remote_artifacts: &str,
    last_seen: &mut Option<u64>,
) -> Result<Ended, Error> {
    let host = record.name.as_str();
    let argv = record.herd_argv(
        "herd-watch",
        remote_artifacts,
        &["follow", "--json", "--ack", "--forever"],
    );
    let mut session = Session::start(ssh, &argv)?;
    let started = Instant::now();
    let mut heard = false;
    let mut open = OpenRuns::read(artifacts, host);
    loop {
        match session.next_line(LOOK_EVERY) {
            Line::Text(line) => {
                let now = herd_core::time::now_ms();
                *last_seen = Some(now);
                if !heard {
                    heard = true;
                    connected(artifacts, host, now);
                }
                let runs = open.current(artifacts, host);
                if take_line(artifacts, ssh, runs, &line, &mut session)? {
                    open.stale = true;
                }
            }
            Line::Quiet => {
                if !heard && started.elapsed() >= Duration::from_secs(2) && ssh.master_up() {
                    heard = true;
                    let now = herd_core::time::now_ms();
                    *last_seen = Some(now);
                    connected(artifacts, host, now);
                }
                if open.current(artifacts, host).is_empty() {
                    session.close();
                    return Ok(Ended::NoRunsLeft);
                }
            }
            Line::Closed => {
                let code = session.exit_code();
                let out = herd_core::subprocess::Output {
                    code,
                    signal: None,
                    timed_out: false,
                    cancelled: false,
                    elapsed: started.elapsed(),
                    stdout: Default::default(),
                    stderr: Default::default(),
                };
                if let Some(err) = herd_remote::host::guard_error(host, &out) {
                    return Err(err);
                }
                if code == Some(herd_remote::ssh::SSH_FAILED) {
                    let dest = Destination::new(host)?;
                    return Err(herd_remote::ssh::classify(&dest, &session.stderr()));
                }
                return Ok(Ended::Dropped { heard });
            }
        }
    }
}

fn connected(artifacts: &Artifacts, host: &str, now: u64) {
    write_state(
        artifacts,
        RelayState {
            format_version: RELAY_STATE_VERSION,
            host: host.to_owned(),
            connected: true,
            since_ms: now,
            last_seen_ms: Some(now),
            error: None,
        },
    );
}

/// One line of the remote follower: a result is settled here and then acknowledged there; a
/// status is kept for the local status and widget. Whether a result was settled.
fn take_line(
    artifacts: &Artifacts,
    ssh: &Ssh,
    open: &[RunRecord],
    line: &str,
    session: &mut Session,
) -> Result<bool, Error> {
    let host = ssh.destination().as_str();
    let Ok(event) = serde_json::from_str::<WatchEvent>(line) else {
        return Ok(false);
    };
    match event {
        WatchEvent::Result {
            run_id,
            outcome,
            message,
            details,
            key,
            task,
            ..
        } => {
            if task.is_some() {
                // A persistent specialist's task result stays the host's (not relayed yet).
                return Ok(false);
            }
            let Some(local) = local_of(artifacts, open, host, &run_id) else {
                // No run here stands for it: it waits on the host.
                return Ok(false);
            };
            // Composed on the host: the host named, its paths marked as its own.
            let mut message = crate::hosted::placed(&message, host);
            let mut details = *details;
            details.host = Some(host.to_owned());
            let worktree = local
                .extra
                .remote
                .as_ref()
                .and_then(|r| r.worktree.as_ref());
            if let Some(wt) = worktree {
                // The branch comes home before the result does (once: a repeat is settled).
                if delivery::load(artifacts, &local.run_id)
                    .ok()
                    .flatten()
                    .is_none()
                {
                    if let Err(note) = fetch_branch(ssh, wt) {
                        message.push_str(&note);
                    }
                }
            }
            let result = RunResult {
                format_version: FORMAT_VERSION,
                run_id: local.run_id.clone(),
                name: local.name.clone(),
                outcome,
                message,
                details,
                settled_at_ms: herd_core::time::now_ms(),
                task: None,
            };
            // Durable here first (write-once: a repeat reads back the first), then acknowledged.
            delivery::settle(artifacts, &result)?;
            crate::crash_point("relay-before-ack");
            let ack = herd_protocol::watch::WatchAck { ack: key };
            session
                .send(&serde_json::to_string(&ack).map_err(|e| Error::internal(e.to_string()))?)?;
            Ok(true)
        }
        WatchEvent::Status {
            run_id,
            label,
            detail,
            since_ms,
            ..
        } => {
            if let Some(local) = open.iter().find(|r| {
                r.extra
                    .remote
                    .as_ref()
                    .is_some_and(|m| m.run_id.as_deref() == Some(run_id.as_str()))
            }) {
                let state = RemoteState {
                    format_version: RemoteState::VERSION,
                    label,
                    detail,
                    since_ms,
                    seen_at_ms: herd_core::time::now_ms(),
                };
                let _ = artifacts.run(&local.run_id).write(state);
            }
            Ok(false)
        }
        _ => Ok(false),
    }
}

/// Fetches a worktree child's branch from the host's clone into its source repository, never
/// forcing: a local branch that moved (or is checked out) is refused by git and left as it is.
/// The error is the note the result then carries.
fn fetch_branch(ssh: &Ssh, wt: &herd_protocol::run::RemoteWorktree) -> Result<(), String> {
    let host = ssh.destination().as_str();
    let url = ssh.git_url(&wt.clone);
    let refspec = format!("refs/heads/{0}:refs/heads/{0}", wt.branch);
    let git = std::env::var("HERD_GIT_BIN")
        .ok()
        .filter(|g| !g.is_empty())
        .unwrap_or_else(|| "git".into());
    let git_env = ssh.git_env().map_err(|e| e.message)?;
    let mut cmd = herd_core::subprocess::Command::new(git, Duration::from_secs(120)).args([
        "-C",
        &wt.source,
        "fetch",
        "--quiet",
        "--no-tags",
        &url,
        &refspec,
    ]);
    for (name, value) in git_env {
        cmd = cmd.env(name, value);
    }
    let failed = |why: String| {
        format!(
            "\n\nBranch {} was not brought home from {host}: {}. It stays on {host}; fetch it by \
             hand under another name: git -C {} fetch {url} {}:<new-branch>",
            herd_core::escape::encode_host_value(&wt.branch, 255),
            herd_core::escape::encode_host_value(&why, 300),
            herd_core::escape::encode_host_value(&wt.source, 500),
            herd_core::escape::encode_host_value(&wt.branch, 255),
        )
    };
    match herd_core::subprocess::run(&cmd) {
        Ok(out) if out.success() => Ok(()),
        Ok(out) => Err(failed(out.stderr.text().trim().to_owned())),
        Err(e) => Err(failed(e.to_string())),
    }
}

/// The status of a run on another machine, from what its host last said and whether the relay
/// is connected: `on <host>`, and `disconnected · last seen …` while it is not.
pub fn project(
    artifacts: &Artifacts,
    record: &RunRecord,
    remote: &RemoteRun,
    now: u64,
) -> RunStatus {
    let said: Option<RemoteState> = artifacts.run(&record.run_id).read().ok().flatten();
    let relay = read_state(artifacts, &remote.host);
    let mut detail = format!("on {}", remote.host);
    if let Some(d) = said.as_ref().and_then(|s| s.detail.as_deref()) {
        detail.push_str(" · ");
        detail.push_str(d);
    }
    if let Some(state) = relay.as_ref().filter(|s| !s.connected) {
        detail.push_str(" · disconnected");
        if let Some(seen) = state.last_seen_ms {
            detail.push_str(" · last seen ");
            detail.push_str(&crate::projection::short_duration(now.saturating_sub(seen)));
            detail.push_str(" ago");
        }
    }
    // While disconnected, the host's own "since" is as old as the last thing it said: the
    // detail's `last seen … ago` is the one age a person is shown.
    let disconnected = relay.as_ref().is_some_and(|s| !s.connected);
    let label = said.as_ref().map_or(
        if remote.run_id.is_some() {
            Label::Running
        } else {
            Label::Starting
        },
        |s| s.label,
    );
    RunStatus {
        projection: Projection {
            label,
            detail: Some(detail),
            since_ms: match disconnected {
                true => None,
                false => said.and_then(|s| s.since_ms).or(Some(record.created_at_ms)),
            },
        },
        elapsed_ms: now.saturating_sub(record.created_at_ms),
        outcome: None,
        needs_input: None,
    }
}

/// Runs `herd-watch <args>` for the remote run of `record` on its host (`--run <remote id>` is
/// added) and answers with the host's document, the run id made this machine's.
pub fn forward(record: &RunRecord, remote: &RemoteRun, args: &[&str]) -> Result<Output, Error> {
    let (doc, code) = ask(record, remote, args)?;
    let human = format!(
        "{} {} on {}: {}",
        args.first().copied().unwrap_or(""),
        herd_core::escape::json_string(&record.name),
        remote.host,
        doc.get("status")
            .and_then(|s| s.as_str())
            .unwrap_or("answered")
    );
    Ok(Output::ok(doc, human).with_exit(code))
}

/// Runs `herd-watch <args> --run <remote id> --json` on the host of the remote run of `record`:
/// the host's document (its `run_id` made this machine's, `host` added) and its exit code.
pub fn ask(
    record: &RunRecord,
    remote: &RemoteRun,
    args: &[&str],
) -> Result<(serde_json::Value, i32), Error> {
    let Some(remote_id) = remote.run_id.as_deref() else {
        return Err(Error::new(
            ErrorCode::Uncertain,
            format!(
                "the launch of {} on {} was not acknowledged: check with `ssh {} herd-watch \
                 --artifacts {} status`",
                record.run_id, remote.host, remote.host, remote.artifacts
            ),
        ));
    };
    let env = |k: &str| std::env::var(k).ok();
    let host = Hosts::from_env(&env)?.require(&remote.host)?;
    let ssh = Ssh::new(host.destination()?, &env)?;
    let mut words: Vec<&str> = args.to_vec();
    words.extend(["--run", remote_id, "--json"]);
    let out = host
        .run_herd(
            &ssh,
            "herd-watch",
            &remote.artifacts,
            &words,
            None,
            CONTROL_BUDGET,
        )
        .map_err(|e| {
            Error::new(
                e.code,
                format!(
                    "{} (the run goes on on {}; nothing was changed here)",
                    e.message, remote.host
                ),
            )
        })?;
    let text = out.stdout.text().into_owned();
    let mut doc: serde_json::Value = serde_json::from_str(text.trim()).map_err(|_| {
        Error::new(
            ErrorCode::Unavailable,
            format!(
                "{} answered {} with no JSON document: {}",
                remote.host,
                args.first().copied().unwrap_or("the call"),
                herd_core::escape::encode_host_value(out.stderr.text().trim(), 300)
            ),
        )
    })?;
    if let Some(obj) = doc.as_object_mut() {
        if obj.contains_key("run_id") {
            obj.insert("run_id".into(), record.run_id.clone().into());
        }
        obj.insert("host".into(), remote.host.clone().into());
    }
    Ok((doc, out.code.unwrap_or(exit::NO_ANSWER)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run on a host whose relay is down: its widget row says once how long ago the host was
    /// heard from, not that age followed by another.
    #[test]
    fn a_disconnected_remote_run_shows_one_age() {
        let dir = tempfile::tempdir().unwrap();
        let art = Artifacts::new(dir.path());
        let now = herd_core::time::now_ms();
        let mut record: RunRecord = serde_json::from_value(serde_json::json!({
            "format_version": 1, "run_id": "r1", "name": "Builder", "created_at_ms": now - 20_000,
            "runner": "pi", "surface": "process", "status": "launched",
            "cwd": "/", "session_file": dir.path().join("s.jsonl").display().to_string(),
        }))
        .unwrap();
        record.save(&art).unwrap();
        let remote = RemoteRun {
            host: "devbox".into(),
            artifacts: "/home/you/.herd".into(),
            run_id: Some("h1".into()),
            session_file: None,
            worktree: None,
        };
        art.run("r1")
            .write(RemoteState {
                format_version: RemoteState::VERSION,
                label: Label::Active,
                detail: Some("bash".into()),
                since_ms: Some(now - 13_000),
                seen_at_ms: now - 12_000,
            })
            .unwrap();
        RelayState {
            format_version: RELAY_STATE_VERSION,
            host: "devbox".into(),
            connected: false,
            since_ms: now - 12_000,
            last_seen_ms: Some(now - 12_000),
            error: None,
        }
        .write(&art)
        .unwrap();
        let status = project(&art, &record, &remote, now);
        let row = crate::projection::WidgetRow {
            name: "Builder @devbox".into(),
            agent: None,
            elapsed_ms: status.elapsed_ms,
            projection: status.projection,
            usage: None,
        };
        let text = crate::projection::widget(&[row], now, 100).text;
        assert!(
            text.contains("active · on devbox · bash · disconnected · last seen 12s ago │"),
            "{text}"
        );
    }

    #[test]
    fn the_backoff_doubles_from_one_second_to_thirty_with_jitter() {
        let mut backoff = Backoff::new();
        let mut bases = Vec::new();
        for _ in 0..8 {
            let wait = backoff.take();
            bases.push(wait);
        }
        let expected = [1, 2, 4, 8, 16, 30, 30, 30];
        for (wait, base) in bases.iter().zip(expected) {
            let base = Duration::from_secs(base);
            assert!(
                *wait >= base.mul_f64(0.8) && *wait < base.mul_f64(1.2),
                "{wait:?} is not within 20 % of {base:?}"
            );
        }
        backoff.reset();
        assert!(backoff.take() < Duration::from_millis(1200));
    }
}
