//! herd-watch's rows (issue 8): the CPU one `herd-watch follow` spends on idle children, and
//! how fast a child's completion evidence becomes its result file.
//!
//! The children are real: `herd-launch spawn --surface process --runner exec -- sleep …`, 100 of
//! them (quick: 20). One `herd-watch follow --json` supervises them; after a warm-up its CPU
//! (user + system, its own and its waited-for children's, from `/proc/<pid>/stat`) is read
//! before and after a 60 s window (quick: 10 s). Beside it, over the same window, runs the
//! design of the TypeScript anchors reduced to its cheapest part: a loop that, once a second,
//! stats each child's `.exit` sidecar and reads its activity snapshot (`--poll-baseline`, a
//! process of its own). The anchors also asked their multiplexer about every pane on each poll,
//! which this loop leaves out, so it is a floor of that design's cost.
//!
//! Then, one child at a time, the bench writes the child's `.exit` sidecar as the child
//! extension does (temporary file, rename), ends the child as Pi ends itself after it, and
//! times from the sidecar until `runs/<id>.result.json` exists,
//! polling every millisecond; the row is the 95th percentile (nearest rank) of 20 such
//! completions (quick: 5).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use herd_core::identity::{self, Judgement, Record};
use herd_core::sidecar;
use herd_core::subprocess::{self, Command, Detached};
use herd_protocol::child::ACTIVITY_READ_LIMIT;
use herd_protocol::layout::{Artifacts, SessionFiles};
use herd_protocol::run::RunRecord;
use serde_json::Value;

use crate::bench::{
    Ctx, Goal, Measured, Quantity, Row, first_line, median, percentile, progress, timed,
};
use crate::bench_launch::{Scratch, spawn_once};

const COMPONENT: &str = "herd-watch";

/// The longest a result may take before the bench gives up on it.
const RESULT_DEADLINE: Duration = Duration::from_secs(30);
/// The bound of the logs this module reads.
const READ_LIMIT: u64 = 16 * 1024 * 1024;

pub fn rows(ctx: &Ctx) -> Vec<Row> {
    let children = ctx.size(100, 20);
    let window = Duration::from_secs(ctx.size(60, 10));
    let completions = ctx.size(20, 5);
    let cpu_figure = format!("CPU, {children} idle children, {} s", window.as_secs());
    let latency_figure = "completion evidence to result file, p95".to_owned();
    // Issue 15: at most twice the plain 1 s stat poll of the same children (issue 8 asked 1 %).
    let cpu_goal = Goal::RatioAtMost(2.0);
    let latency_goal = Goal::AtMost(Quantity::ms(Duration::from_millis(100)));
    if !ctx.wants("watch.idle_cpu") && !ctx.wants("watch.result_latency") {
        return Vec::new();
    }
    let measured = (|| {
        let launch = ctx.binary("herd-launch")?;
        let watch = ctx.binary("herd-watch")?;
        let bench = Bench::start(&launch, &watch, children, window, completions)?;
        let result = bench.measure(window, completions);
        bench.stop();
        result
    })();
    match measured {
        Ok((cpu, latency)) => vec![
            Row::from_result("watch.idle_cpu", COMPONENT, cpu_figure, cpu_goal, Ok(cpu)),
            Row::from_result(
                "watch.result_latency",
                COMPONENT,
                latency_figure,
                latency_goal,
                latency,
            ),
        ],
        Err(reason) => vec![
            Row::not_measured(
                "watch.idle_cpu",
                COMPONENT,
                cpu_figure,
                cpu_goal,
                reason.clone(),
            ),
            Row::not_measured(
                "watch.result_latency",
                COMPONENT,
                latency_figure,
                latency_goal,
                reason,
            ),
        ],
    }
}

/// One child: its run id and session file.
struct Child {
    run_id: String,
    session: PathBuf,
}

/// The children, the follow process and the polling baseline.
struct Bench {
    scratch: Scratch,
    artifacts: PathBuf,
    children: Vec<Child>,
    follow: Record,
    poller: Option<Record>,
}

impl Bench {
    fn start(
        launch: &Path,
        watch: &Path,
        n: usize,
        window: Duration,
        completions: usize,
    ) -> Result<Bench, String> {
        let scratch = Scratch::new("herd-bench-watch")?;
        probe_follow(watch, &scratch)?;
        let artifacts = scratch.artifacts("runs")?;
        let warm_up = Duration::from_secs(20);
        // The children outlive the bench by a margin even if it is interrupted before it
        // stops them; they are stopped explicitly at the end.
        let lifetime = warm_up + window + Duration::from_secs(completions as u64 + 120);
        progress(&format!("herd-watch: spawning {n} idle children"));
        let mut children = Vec::with_capacity(n);
        let sleep_secs = lifetime.as_secs().to_string();
        for i in 0..n {
            let spawn = scratch.spawn(launch, "process", &artifacts, &["sleep", &sleep_secs]);
            let spawn = match spawn_once(&spawn) {
                Ok((_, doc)) => doc,
                Err(e) => {
                    stop_children(&children);
                    return Err(format!("child {i} did not launch: {e}"));
                }
            };
            children.push(Child {
                run_id: spawn["run_id"].as_str().unwrap_or_default().to_owned(),
                session: PathBuf::from(spawn["session_file"].as_str().unwrap_or_default()),
            });
        }
        let follow = match start_follow(watch, &scratch, &artifacts) {
            Ok(follow) => follow,
            Err(e) => {
                stop_children(&children);
                return Err(e);
            }
        };
        let mut bench = Bench {
            scratch,
            artifacts,
            children,
            follow,
            poller: None,
        };
        if let Err(e) = bench.warm_up(warm_up) {
            bench.stop();
            return Err(e);
        }
        bench.poller = start_poller(&bench.scratch, &bench.artifacts, window.as_secs());
        Ok(bench)
    }

    /// Waits until follow has reported every child (or the warm-up is over), then a little more
    /// so its first scans are out of the window.
    fn warm_up(&self, limit: Duration) -> Result<(), String> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if identity::judge(&self.follow) != Judgement::Alive {
                return Err(format!(
                    "herd-watch follow ended during the warm-up: {}",
                    first_line(&read_text(&self.scratch.root().join("follow.err")))
                ));
            }
            let reported = read_text(&self.scratch.root().join("follow.out"))
                .lines()
                .count();
            if reported >= self.children.len() {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        std::thread::sleep(Duration::from_secs(2));
        Ok(())
    }

    fn measure(
        &self,
        window: Duration,
        completions: usize,
    ) -> Result<(Measured, Result<Measured, String>), String> {
        progress(&format!(
            "herd-watch: measuring CPU over {} s",
            window.as_secs()
        ));
        let ticks_per_sec = clock_ticks()?;
        let before = cpu_ticks(self.follow.pid)?;
        let started = Instant::now();
        std::thread::sleep(window);
        let after = cpu_ticks(self.follow.pid)?;
        let wall = started.elapsed().as_secs_f64();
        if identity::judge(&self.follow) != Judgement::Alive {
            return Err("herd-watch follow ended during the window".into());
        }
        let follow_pct = after.saturating_sub(before) as f64 / ticks_per_sec / wall * 100.0;
        let mut cpu = Measured::new(Quantity::percent_core(follow_pct), 1).note(format!(
            "one window of {wall:.0} s after the warm-up; CPU of herd-watch follow and its children"
        ));
        match self.poller_usage() {
            Ok(pct) => cpu = cpu.against("1 s stat polling", Quantity::percent_core(pct)),
            Err(e) => progress(&format!("herd-watch: no polling baseline: {e}")),
        }
        progress(&format!("herd-watch: timing {completions} completions"));
        let latency = self.latency(completions);
        Ok((cpu, latency))
    }

    /// Completes `n` children one at a time and times each result.
    fn latency(&self, n: usize) -> Result<Measured, String> {
        let art = Artifacts::new(&self.artifacts);
        let mut times = Vec::with_capacity(n);
        for child in self.children.iter().take(n) {
            let result = art.run_result(&child.run_id);
            let exit = SessionFiles::new(&child.session).exit();
            let tmp = exit.with_extension("exit.bench-tmp");
            std::fs::write(&tmp, br#"{"type":"done"}"#).map_err(|e| e.to_string())?;
            std::fs::rename(&tmp, &exit).map_err(|e| e.to_string())?;
            let written = Instant::now();
            // Then the child exits, as Pi does a moment after its sidecar: the result waits for
            // that exit (at most 5 s) so that nothing of the child still runs when it goes out.
            if let Ok(Some(runner)) = SessionFiles::new(&child.session).read::<Record>() {
                identity::terminate(&runner, libc::SIGTERM);
            }
            loop {
                if result.exists() {
                    times.push(written.elapsed());
                    break;
                }
                if written.elapsed() > RESULT_DEADLINE {
                    return Err(format!(
                        "no result file {} s after the completion of run {}",
                        RESULT_DEADLINE.as_secs(),
                        child.run_id
                    ));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            // Completions apart, as children finish in life.
            std::thread::sleep(Duration::from_millis(150));
        }
        let p95 = percentile(&times, 95.0);
        Ok(Measured::new(Quantity::ms(p95), times.len()).note(format!(
            "median {:.1} ms, slowest {:.1} ms, with {} children supervised",
            median(&times).as_secs_f64() * 1000.0,
            times
                .iter()
                .max()
                .copied()
                .unwrap_or_default()
                .as_secs_f64()
                * 1000.0,
            self.children.len()
        )))
    }

    /// The polling baseline's CPU, as it measured itself over the window.
    fn poller_usage(&self) -> Result<f64, String> {
        let poller = self.poller.as_ref().ok_or("it did not start")?;
        identity::wait_exited(poller, Instant::now() + Duration::from_secs(10));
        let out = read_text(&self.scratch.root().join("poller.out"));
        let used: Value = serde_json::from_str(out.trim())
            .map_err(|_| format!("it reported {:?}", first_line(&out)))?;
        match (used["cpu_ms"].as_f64(), used["wall_ms"].as_f64()) {
            (Some(cpu), Some(wall)) if wall > 0.0 => Ok(cpu / wall * 100.0),
            _ => Err(format!("it reported {used}")),
        }
    }

    fn stop(&self) {
        stop_process(&self.follow);
        if let Some(poller) = &self.poller {
            stop_process(poller);
        }
        stop_children(&self.children);
    }
}

/// Runs `herd-watch follow` once over an empty artifacts directory: it must end at once (no
/// runs), and tells whether the command exists yet.
fn probe_follow(watch: &Path, scratch: &Scratch) -> Result<(), String> {
    let empty = scratch.artifacts("empty")?;
    let probe = Command::new(watch, Duration::from_secs(30))
        .arg("--artifacts")
        .arg(&empty)
        .args(["follow", "--json"])
        .env("HOME", scratch.root().join("home"))
        .stdin_null();
    match timed(&probe) {
        Ok(_) => Ok(()),
        Err(e) if e.contains("not yet implemented") => {
            Err("herd-watch follow is not implemented yet".into())
        }
        Err(e) => Err(format!("herd-watch follow over no runs failed: {e}")),
    }
}

fn start_follow(watch: &Path, scratch: &Scratch, artifacts: &Path) -> Result<Record, String> {
    let root = scratch.root();
    let cmd = Detached::new(watch, root.join("follow.out"), root.join("follow.err"))
        .arg("--artifacts")
        .arg(artifacts)
        .args(["follow", "--json"])
        .cwd(root.join("work"))
        .env("HOME", root.join("home"));
    let pid = subprocess::spawn_detached(&cmd).map_err(|e| e.to_string())?;
    identity::capture(pid, "bench-follow", &root.join("follow.session"))
        .map_err(|e| format!("cannot capture herd-watch follow: {e}"))
}

/// Starts this program as the polling baseline; `None` when it cannot (the row then has no
/// baseline, not a made-up one).
fn start_poller(scratch: &Scratch, artifacts: &Path, secs: u64) -> Option<Record> {
    let exe = std::env::current_exe().ok()?;
    let root = scratch.root();
    let cmd = Detached::new(exe, root.join("poller.out"), root.join("poller.err"))
        .args(["bench", "--released", "--poll-baseline"])
        .arg(artifacts)
        .args(["--poll-secs", &secs.to_string()])
        .cwd(root.join("work"));
    let pid = subprocess::spawn_detached(&cmd).ok()?;
    identity::capture(pid, "bench-poller", &root.join("poller.session")).ok()
}

/// The baseline loop: once a second, stat every child's `.exit` sidecar and read its activity
/// snapshot, for `duration`. The children are found once, from the run records. Returns the
/// CPU the loop used (`getrusage`, microseconds, so a tiny figure is still a figure) and the
/// wall time it ran.
pub fn poll_baseline(artifacts: &Path, duration: Duration) -> Result<Value, herd_core::Error> {
    let art = Artifacts::new(artifacts);
    let files: Vec<(PathBuf, PathBuf)> = art
        .run_ids()?
        .into_iter()
        .filter_map(|id| {
            let record = RunRecord::load(&art, &id).ok()?;
            Some((record.session_files().exit(), art.activity(&id)))
        })
        .collect();
    let cpu_before = own_cpu();
    let started = Instant::now();
    let deadline = started + duration;
    while Instant::now() < deadline {
        let tick = Instant::now();
        for (exit, activity) in &files {
            let _ = std::fs::metadata(exit);
            let _ = sidecar::read_bounded(activity, ACTIVITY_READ_LIMIT);
        }
        let rest = Duration::from_secs(1).saturating_sub(tick.elapsed());
        std::thread::sleep(rest.min(deadline.saturating_duration_since(Instant::now())));
    }
    let wall = started.elapsed();
    let cpu = own_cpu().saturating_sub(cpu_before);
    Ok(serde_json::json!({
        "children": files.len(),
        "cpu_ms": cpu.as_secs_f64() * 1000.0,
        "wall_ms": wall.as_secs_f64() * 1000.0,
    }))
}

/// The user and system CPU time of this process so far.
fn own_cpu() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a whole `rusage` into the pointer it is given, which points to
    // memory of that type owned by this frame.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) } != 0 {
        return Duration::ZERO;
    }
    // SAFETY: getrusage returned 0, so it initialised the value.
    let usage = unsafe { usage.assume_init() };
    let time = |t: libc::timeval| {
        Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or_default())
            + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or_default())
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// SIGTERM to a verified process, then SIGKILL if it is still there after 5 s.
fn stop_process(record: &Record) {
    identity::terminate(record, libc::SIGTERM);
    if identity::wait_exited(record, Instant::now() + Duration::from_secs(5)) == Judgement::Alive {
        identity::terminate(record, libc::SIGKILL);
        identity::wait_exited(record, Instant::now() + Duration::from_secs(5));
    }
}

/// Stops every child through the identity it recorded beside its session.
fn stop_children(children: &[Child]) {
    let records: Vec<Record> = children
        .iter()
        .filter_map(|c| SessionFiles::new(&c.session).read::<Record>().ok()?)
        .collect();
    for record in &records {
        identity::terminate(record, libc::SIGTERM);
    }
    for record in &records {
        if identity::wait_exited(record, Instant::now() + Duration::from_secs(5))
            == Judgement::Alive
        {
            identity::terminate(record, libc::SIGKILL);
        }
    }
}

/// Clock ticks per second, the unit of `/proc/<pid>/stat` times.
pub(crate) fn clock_ticks() -> Result<f64, String> {
    // SAFETY: sysconf reads a system constant; it has no memory-safety preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 {
        Ok(ticks as f64)
    } else {
        Err("the clock tick rate is unknown".into())
    }
}

/// utime + stime + cutime + cstime of `pid`, in clock ticks: its own CPU and that of the
/// children it waited for.
pub(crate) fn cpu_ticks(pid: u32) -> Result<u64, String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map_err(|e| format!("cannot read the CPU time of process {pid}: {e}"))?;
    parse_cpu_ticks(&stat).ok_or_else(|| format!("malformed /proc/{pid}/stat"))
}

fn parse_cpu_ticks(stat: &str) -> Option<u64> {
    // Fields after the command name, which is in parentheses and may hold anything: state is
    // field 3, utime 14, stime 15, cutime 16, cstime 17.
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3)?.parse::<i64>().ok();
    let sum = field(14)? + field(15)? + field(16)? + field(17)?;
    u64::try_from(sum).ok()
}

/// The text of a log file, bounded; empty when missing.
fn read_text(path: &Path) -> String {
    match sidecar::read_bounded(path, READ_LIMIT) {
        Ok(Some(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_ticks_sum_the_four_time_fields() {
        let stat = "42 (a) b (c)) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 2 1 20 0 1 0 1000 0 0";
        assert_eq!(parse_cpu_ticks(stat), Some(13));
        assert_eq!(parse_cpu_ticks("42 (x"), None);
        assert_eq!(parse_cpu_ticks("42 (x) S 1 2"), None);
    }

    #[test]
    fn this_process_has_cpu_ticks() {
        assert!(cpu_ticks(std::process::id()).is_ok());
        assert!(clock_ticks().is_ok_and(|t| t > 0.0));
    }
}
