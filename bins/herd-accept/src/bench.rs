//! Measurements for `cargo xtask bench`: what herd adds over the plain tool doing the same work.
//!
//! - [`check_overhead`]: `herd-accept check` of `true` against `sh -c true`, medians of N runs
//!   and their ratio (target ≤ 1.5).
//! - [`run_check_overhead`]: the same in-process, through the library call herd-watch makes.
//! - [`tree_reap`]: a check whose 200-process tree ignores SIGTERM, with a 1 s timeout; what the
//!   run takes beyond timeout plus the 5 s grace is the time to reap the tree (target ≤ 200 ms).
//!
//! Both spawn through `herd_core::subprocess`, the baseline too, so the ratio compares like with
//! like. Machines are noisy: read medians and ratios, not single runs. The example
//! `cargo run --release -p herd-accept --example accept-bench` prints both after
//! `cargo build --release -p herd-accept`.

use std::path::Path;
use std::time::{Duration, Instant};

use herd_core::subprocess::{self, Command};

use crate::check::TIMEOUT_GRACE;
use crate::spec::AcceptSpec;

/// Medians of the two ways to run `true`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Overhead {
    pub runs: usize,
    pub herd_median: Duration,
    pub sh_median: Duration,
    /// `herd_median / sh_median`.
    pub ratio: f64,
}

impl Overhead {
    /// The medians and their ratio of two equally long series of times.
    fn of(mut herd_times: Vec<Duration>, mut sh_times: Vec<Duration>) -> Overhead {
        let herd_median = median(&mut herd_times);
        let sh_median = median(&mut sh_times);
        Overhead {
            runs: herd_times.len(),
            herd_median,
            sh_median,
            ratio: herd_median.as_secs_f64() / sh_median.as_secs_f64().max(1e-9),
        }
    }
}

/// What reaping a SIGTERM-ignoring tree cost beyond its timeout and grace.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reap {
    pub processes: usize,
    pub total: Duration,
    /// `total - timeout - grace`, zero when the run was faster.
    pub beyond_grace: Duration,
    /// Whether every process of the tree was gone when the check returned.
    pub all_gone: bool,
}

/// Times `herd-accept check` (the binary at `bin`) of `true` against `sh -c true`, `runs` times
/// each, interleaved so drift hits both alike.
pub fn check_overhead(bin: &Path, runs: usize) -> Result<Overhead, String> {
    let dir =
        tempfile::tempdir().map_err(|err| format!("cannot create a temporary directory: {err}"))?;
    let spec_path = dir.path().join("spec.json");
    AcceptSpec::new("true")
        .and_then(|spec| spec.write(&spec_path))
        .map_err(|err| err.message)?;
    let budget = Duration::from_secs(60);
    let herd = Command::new(bin, budget)
        .arg("check")
        .arg("--spec")
        .arg(&spec_path)
        .arg("--cwd")
        .arg(dir.path());
    let sh = Command::new("/bin/sh", budget)
        .args(["-c", "true"])
        .cwd(dir.path());
    let runs = runs.max(1);
    let mut herd_times = Vec::with_capacity(runs);
    let mut sh_times = Vec::with_capacity(runs);
    for _ in 0..runs {
        herd_times.push(time(&herd)?);
        sh_times.push(time(&sh)?);
    }
    Ok(Overhead::of(herd_times, sh_times))
}

/// Times [`crate::check::run_check`] of `true` (what herd-watch pays when it calls the library)
/// against `sh -c true`, `runs` times each, interleaved.
pub fn run_check_overhead(runs: usize) -> Result<Overhead, String> {
    let dir =
        tempfile::tempdir().map_err(|err| format!("cannot create a temporary directory: {err}"))?;
    let spec = AcceptSpec::new("true").map_err(|err| err.message)?;
    let sh = Command::new("/bin/sh", Duration::from_secs(60))
        .args(["-c", "true"])
        .cwd(dir.path());
    let never = crossbeam_channel::never::<()>();
    let runs = runs.max(1);
    let mut herd_times = Vec::with_capacity(runs);
    let mut sh_times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        let run = crate::check::run_check(&spec, dir.path(), &never);
        herd_times.push(started.elapsed());
        if !run.outcome.answered() || run.exit_code != Some(0) {
            return Err(format!("the check of `true` did not pass: {run:?}"));
        }
        sh_times.push(time(&sh)?);
    }
    Ok(Overhead::of(herd_times, sh_times))
}

/// Runs a check (in-process) that starts `processes` sleepers ignoring SIGTERM and times out
/// after 1 s, and returns how long the kill and reap took beyond the grace period.
pub fn tree_reap(processes: usize) -> Result<Reap, String> {
    let dir =
        tempfile::tempdir().map_err(|err| format!("cannot create a temporary directory: {err}"))?;
    let pid_file = dir.path().join("pids");
    let run = format!(
        "trap '' TERM; i=0; while [ $i -lt {processes} ]; do (trap '' TERM; exec sleep 600) & echo $! >> {pids}; i=$((i+1)); done; wait",
        pids = pid_file.display()
    );
    let mut spec = AcceptSpec::new(run).map_err(|err| err.message)?;
    spec.timeout_sec = 1;
    let never = crossbeam_channel::never::<()>();
    let started = Instant::now();
    let check = crate::check::run_check(&spec, dir.path(), &never);
    let total = started.elapsed();
    if !check.timed_out {
        return Err(format!(
            "the tree check ended without timing out: {check:?}"
        ));
    }
    let pids = std::fs::read_to_string(&pid_file)
        .map_err(|err| format!("cannot read the pid list: {err}"))?;
    let all_gone = pids
        .lines()
        .filter_map(|line| line.trim().parse::<u32>().ok())
        .all(|pid| !process_running(pid));
    Ok(Reap {
        processes,
        total,
        beyond_grace: total.saturating_sub(spec.timeout() + TIMEOUT_GRACE),
        all_gone,
    })
}

/// Whether `pid` names a process that is not a zombie.
pub fn process_running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name, which is in parentheses and may hold spaces.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

fn time(cmd: &Command) -> Result<Duration, String> {
    let started = Instant::now();
    let out = subprocess::run(cmd).map_err(|err| err.to_string())?;
    let elapsed = started.elapsed();
    if !out.success() {
        return Err(format!("{:?} failed: {}", cmd.program(), out.stderr.text()));
    }
    Ok(elapsed)
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}
