//! The measurements `cargo xtask bench` runs for herd-cleanup, each against the plain tool
//! doing the same work, in the same run (these machines are noisy: medians and ratios).
//!
//! - [`holder_scan`]: the `/proc` holder scan with many extra live processes, against
//!   `lsof -n -P -d cwd` (target: median ratio ≤ 0.2).
//! - [`ignored_count`]: counting a large number of ignored files by streaming, against
//!   `git ls-files --others --ignored --exclude-standard -z | wc -c` (targets: peak RSS of the
//!   counting process ≤ 20 MiB, median time ≤ 1.2× the pipeline).
//!
//! - [`inventory`]: `herd-cleanup list` of many managed worktrees of one repository with many
//!   extra live processes, against the plain tools doing the same inspection (one
//!   `git worktree list --porcelain`, one `git status --porcelain=v2` per worktree, one
//!   `lsof -n -P -d cwd`; target: median ratio ≤ 1.0).
//! - [`removal`]: `herd-cleanup remove` of one clean managed worktree, against `git status` and
//!   `git worktree remove` (target: median ratio ≤ 1.5).
//!
//! All build their fixtures in a temporary directory and remove them; the extra processes are
//! one process group, started detached and ended through their recorded identity.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use herd_core::identity;
use herd_core::subprocess::{self, Command, Detached, Keep};
use herd_git::{Deadline, Git};

use crate::holders;

/// Medians of two series of timings and their ratio.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub herd: Duration,
    pub baseline: Duration,
    pub rounds: usize,
}

impl Comparison {
    fn of(mut herd: Vec<Duration>, mut baseline: Vec<Duration>) -> Comparison {
        let rounds = herd.len();
        Comparison {
            herd: median(&mut herd),
            baseline: median(&mut baseline),
            rounds,
        }
    }

    /// herd's median over the baseline's.
    pub fn ratio(&self) -> f64 {
        self.herd.as_secs_f64() / self.baseline.as_secs_f64().max(f64::MIN_POSITIVE)
    }
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

/// The result of [`holder_scan`].
#[derive(Debug, Clone, PartialEq)]
pub struct HolderBench {
    pub extra_processes: usize,
    /// Same-user processes the scan inspected (the extra ones among them).
    pub inspected: usize,
    pub timing: Comparison,
}

impl HolderBench {
    pub fn summary(&self) -> String {
        format!(
            "holder scan, {} extra processes ({} inspected): herd {:.2} ms, lsof -n -P -d cwd {:.2} ms, median ratio {:.3} (target <= 0.2) over {} rounds",
            self.extra_processes,
            self.inspected,
            ms(self.timing.herd),
            ms(self.timing.baseline),
            self.timing.ratio(),
            self.timing.rounds
        )
    }
}

/// The result of [`ignored_count`].
#[derive(Debug, Clone, PartialEq)]
pub struct IgnoredBench {
    pub files: u64,
    /// The peak resident set of this process while it counted, in KiB.
    pub herd_peak_rss_kib: u64,
    /// The largest peak resident set of its children (git itself, mostly), in KiB.
    pub children_peak_rss_kib: u64,
    pub timing: Comparison,
}

impl IgnoredBench {
    pub fn summary(&self) -> String {
        format!(
            "ignored-file count, {} files: herd {:.1} ms, git ls-files | wc -c {:.1} ms, median ratio {:.3} (target <= 1.2) over {} rounds; \
             peak RSS of the counting process {:.1} MiB (target <= 20 MiB), of its largest child (git) {:.1} MiB",
            self.files,
            ms(self.timing.herd),
            ms(self.timing.baseline),
            self.timing.ratio(),
            self.timing.rounds,
            self.herd_peak_rss_kib as f64 / 1024.0,
            self.children_peak_rss_kib as f64 / 1024.0
        )
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// How long the extra processes may take to appear, and how long they live at most.
const SPAWN_DEADLINE: Duration = Duration::from_secs(60);
const EXTRA_LIFETIME_SECS: u64 = 600;

/// Times the holder scan of one checkout with `extra` more live processes of this user
/// (`sleep`s in another directory), against `lsof -n -P -d cwd`, alternating, `rounds` times.
pub fn holder_scan(extra: usize, rounds: usize) -> Result<HolderBench, String> {
    let dir = tempfile::Builder::new()
        .prefix("herd-bench-holders")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let base = std::fs::canonicalize(dir.path()).map_err(|e| e.to_string())?;
    let target = base.join("checkout");
    let elsewhere = base.join("elsewhere");
    for d in [&target, &elsewhere] {
        std::fs::create_dir_all(d).map_err(|e| e.to_string())?;
    }
    let group = ExtraProcesses::start(&base, &elsewhere, extra)?;
    let result = (|| {
        group.wait_for(extra)?;
        let targets = [target.clone()];
        let lsof = Command::new("lsof", Duration::from_secs(60))
            .args(["-n", "-P", "-d", "cwd"])
            .stdout_cap(64 * 1024 * 1024, Keep::Head)
            .stderr_cap(64 * 1024, Keep::Tail);
        // One untimed run of each fills the caches.
        let warm = holders::scan(&targets).map_err(|e| e.to_string())?;
        subprocess::run(&lsof).map_err(|e| format!("lsof: {e}"))?;
        let mut herd = Vec::new();
        let mut baseline = Vec::new();
        for _ in 0..rounds {
            let t = Instant::now();
            holders::scan(&targets).map_err(|e| e.to_string())?;
            herd.push(t.elapsed());
            let t = Instant::now();
            let out = subprocess::run(&lsof).map_err(|e| format!("lsof: {e}"))?;
            baseline.push(t.elapsed());
            if out.timed_out || out.stdout.bytes.is_empty() {
                return Err("lsof gave no answer".into());
            }
        }
        Ok(HolderBench {
            extra_processes: extra,
            inspected: warm.inspected,
            timing: Comparison::of(herd, baseline),
        })
    })();
    group.stop();
    result
}

/// A detached shell and its `sleep`s, one process group.
struct ExtraProcesses {
    shell: Option<identity::Record>,
    pid: u32,
}

impl ExtraProcesses {
    fn start(base: &Path, cwd: &Path, n: usize) -> Result<ExtraProcesses, String> {
        let script = format!(
            "trap 'trap - TERM; kill 0' TERM; i=0; while [ $i -lt {n} ]; do sleep {EXTRA_LIFETIME_SECS} & i=$((i+1)); done; wait"
        );
        let cmd = Detached::new("sh", base.join("extra.out"), base.join("extra.err"))
            .args(["-c", &script])
            .cwd(cwd);
        let pid = subprocess::spawn_detached(&cmd).map_err(|e| e.to_string())?;
        let shell = identity::capture(pid, "bench", &base.join("bench.jsonl")).ok();
        Ok(ExtraProcesses { shell, pid })
    }

    /// Waits until the group has `n` members besides the shell.
    fn wait_for(&self, n: usize) -> Result<(), String> {
        let deadline = Instant::now() + SPAWN_DEADLINE;
        loop {
            let members = group_size(self.pid);
            if members > n {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "only {members} of {} extra processes started",
                    n + 1
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Ends the group: SIGTERM to the verified shell, whose trap passes it on to the group.
    fn stop(self) {
        if let Some(shell) = &self.shell {
            identity::terminate(shell, libc::SIGTERM);
            identity::wait_exited(shell, Instant::now() + Duration::from_secs(10));
        }
    }
}

/// How many processes are in process group `pgid` (field 5 of `/proc/<pid>/stat`).
fn group_size(pgid: u32) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter(|e| {
            std::fs::read_to_string(e.path().join("stat"))
                .ok()
                .is_some_and(|stat| {
                    stat.rsplit_once(')')
                        .and_then(|(_, rest)| rest.split_whitespace().nth(2).map(str::to_owned))
                        .is_some_and(|g| g == pgid.to_string())
                })
        })
        .count()
}

/// Times [`Git::count_ignored`] over a repository holding `files` ignored files, against the
/// plain pipeline, and measures the peak RSS of this process while it counts.
///
/// The peak is reset (`/proc/self/clear_refs`) just before the counts, so what came before
/// (building the fixture) does not count.
pub fn ignored_count(files: usize, rounds: usize) -> Result<IgnoredBench, String> {
    let dir = tempfile::Builder::new()
        .prefix("herd-bench-ignored")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let repo = std::fs::canonicalize(dir.path()).map_err(|e| e.to_string())?;
    let git = hermetic_git(&repo);
    let deadline = || Deadline::after(Duration::from_secs(120));
    git.run(&repo, ["init", "--quiet"], &deadline())
        .map_err(|e| e.to_string())?;
    std::fs::write(repo.join(".gitignore"), "build/\n").map_err(|e| e.to_string())?;
    make_files(&repo.join("build"), files)?;

    let baseline_cmd = Command::new("sh", Duration::from_secs(300))
        .cwd(&repo)
        .args([
            "-c",
            "\"$0\" ls-files --others --ignored --exclude-standard -z | wc -c",
        ])
        .arg(git.bin().as_os_str())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdout_cap(4096, Keep::Head);
    // One untimed run of each fills the caches.
    let counted = git
        .count_ignored(&repo, &deadline())
        .map_err(|e| e.to_string())?;
    if counted != files as u64 {
        return Err(format!("counted {counted} ignored files, made {files}"));
    }
    subprocess::run(&baseline_cmd).map_err(|e| e.to_string())?;

    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let mut herd = Vec::new();
    let mut baseline = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        git.count_ignored(&repo, &deadline())
            .map_err(|e| e.to_string())?;
        herd.push(t.elapsed());
        let t = Instant::now();
        let out = subprocess::run(&baseline_cmd).map_err(|e| e.to_string())?;
        baseline.push(t.elapsed());
        if !out.success() {
            return Err("the baseline pipeline failed".into());
        }
    }
    let herd_peak_rss_kib = if reset {
        peak_rss_kib().unwrap_or_default()
    } else {
        0
    };
    Ok(IgnoredBench {
        files: counted,
        herd_peak_rss_kib,
        children_peak_rss_kib: children_peak_rss_kib(),
        timing: Comparison::of(herd, baseline),
    })
}

fn hermetic_git(repo: &Path) -> Git {
    let _ = repo;
    Git::from_env()
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
}

/// `files` empty files in directories of 1,000.
fn make_files(dir: &Path, files: usize) -> Result<(), String> {
    let mut made = 0;
    let mut d = 0;
    while made < files {
        let sub: PathBuf = dir.join(format!("d{d:04}"));
        std::fs::create_dir_all(&sub).map_err(|e| e.to_string())?;
        for f in 0..1000.min(files - made) {
            std::fs::File::create(sub.join(format!("f{f:04}.o"))).map_err(|e| e.to_string())?;
        }
        made += 1000.min(files - made);
        d += 1;
    }
    Ok(())
}

/// `VmHWM` of this process, in KiB.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The largest peak RSS of the children this process waited for, in KiB.
fn children_peak_rss_kib() -> u64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a whole `rusage` into the pointer it is given, which points to
    // memory of that type owned by this frame.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, usage.as_mut_ptr()) };
    if rc != 0 {
        return 0;
    }
    // SAFETY: getrusage returned 0, so it initialised the value.
    let usage = unsafe { usage.assume_init() };
    u64::try_from(usage.ru_maxrss).unwrap_or_default()
}

/// The result of [`inventory`].
#[derive(Debug, Clone, PartialEq)]
pub struct InventoryBench {
    pub worktrees: usize,
    pub extra_processes: usize,
    pub timing: Comparison,
}

/// A source repository of `files` committed files under `base/src`, with `worktrees` managed
/// linked checkouts of it under `base/root/src/` (the managed root is `base/root`).
struct Managed {
    base: PathBuf,
    source: PathBuf,
    root: PathBuf,
    git: Git,
}

impl Managed {
    fn new(base: &Path, files: usize) -> Result<Managed, String> {
        let source = base.join("src");
        let root = base.join("root");
        std::fs::create_dir_all(&source).map_err(|e| e.to_string())?;
        std::fs::create_dir_all(root.join("src")).map_err(|e| e.to_string())?;
        std::fs::create_dir_all(base.join("artifacts")).map_err(|e| e.to_string())?;
        let git = hermetic_git(&source)
            .env("GIT_AUTHOR_NAME", "bench")
            .env("GIT_AUTHOR_EMAIL", "bench@example.invalid")
            .env("GIT_COMMITTER_NAME", "bench")
            .env("GIT_COMMITTER_EMAIL", "bench@example.invalid");
        let deadline = || Deadline::after(Duration::from_secs(120));
        git.run(
            &source,
            ["init", "--quiet", "--initial-branch=main"],
            &deadline(),
        )
        .map_err(|e| e.to_string())?;
        for i in 0..files {
            let dir = source.join(format!("d{:03}", i / 100));
            std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
            std::fs::write(dir.join(format!("f{i}.txt")), format!("{i}\n"))
                .map_err(|e| e.to_string())?;
        }
        git.run(&source, ["add", "."], &deadline())
            .map_err(|e| e.to_string())?;
        git.run(&source, ["commit", "--quiet", "-m", "base"], &deadline())
            .map_err(|e| e.to_string())?;
        Ok(Managed {
            base: base.to_path_buf(),
            source,
            root,
            git,
        })
    }

    /// Adds the managed worktree `name` on a branch of its own; returns its path.
    fn add(&self, name: &str) -> Result<PathBuf, String> {
        let path = self.root.join("src").join(name);
        let args: Vec<std::ffi::OsString> = vec![
            "worktree".into(),
            "add".into(),
            "--quiet".into(),
            "-b".into(),
            name.into(),
            path.clone().into_os_string(),
        ];
        self.git
            .run(
                &self.source,
                &args,
                &Deadline::after(Duration::from_secs(120)),
            )
            .map_err(|e| e.to_string())?;
        Ok(path)
    }

    /// `herd-cleanup <args>` with this fixture's managed root, artifacts and session cwd.
    fn herd(&self, bin: &Path, args: &[&std::ffi::OsStr]) -> Command {
        Command::new(bin, Duration::from_secs(120))
            .args(args.iter().copied())
            .arg("--session-cwd")
            .arg(&self.base)
            .arg("--json")
            .cwd(&self.base)
            .env("HERD_WORKTREE_ROOT", &self.root)
            .env("HERD_ARTIFACTS", self.base.join("artifacts"))
            .env_remove("HERDR_ENV")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .stdout_cap(16 * 1024 * 1024, Keep::Head)
            .stderr_cap(64 * 1024, Keep::Tail)
    }

    /// `sh -c <script>` in the fixture with the same git configuration.
    fn shell(&self, script: &str) -> Command {
        Command::new("sh", Duration::from_secs(120))
            .args(["-c", script])
            .cwd(&self.base)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .stdout_cap(64 * 1024, Keep::Head)
            .stderr_cap(64 * 1024, Keep::Tail)
    }
}

fn run_ok(cmd: &Command, what: &str) -> Result<subprocess::Output, String> {
    let out = subprocess::run(cmd).map_err(|e| format!("{what}: {e}"))?;
    if out.timed_out || out.code != Some(0) {
        return Err(format!(
            "{what} failed ({:?}): {}",
            out.code,
            first_line(&out.stderr.text())
        ));
    }
    Ok(out)
}

fn first_line(text: &str) -> String {
    text.lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(200)
        .collect()
}

/// Times `herd-cleanup list` (the binary `bin`) of `worktrees` clean managed worktrees of one
/// 200-file repository, with `extra` more live processes of this user, against one
/// `git worktree list --porcelain`, one `git status --porcelain=v2` per worktree and one
/// `lsof -n -P -d cwd` in one `sh -c`, alternating, `rounds` times.
pub fn inventory(
    bin: &Path,
    worktrees: usize,
    extra: usize,
    rounds: usize,
) -> Result<InventoryBench, String> {
    let dir = tempfile::Builder::new()
        .prefix("herd-bench-inventory")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let base = std::fs::canonicalize(dir.path()).map_err(|e| e.to_string())?;
    let fixture = Managed::new(&base, 200)?;
    let mut script = String::from("git -C src worktree list --porcelain >/dev/null || exit 1\n");
    for i in 0..worktrees {
        fixture.add(&format!("w{i:03}"))?;
        let _ = writeln!(
            script,
            "git -C root/src/w{i:03} status --porcelain=v2 >/dev/null || exit 1"
        );
    }
    script.push_str("lsof -n -P -d cwd >/dev/null\n");
    let elsewhere = base.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).map_err(|e| e.to_string())?;
    let group = ExtraProcesses::start(&base, &elsewhere, extra)?;
    let result = (|| {
        group.wait_for(extra)?;
        let herd = fixture.herd(bin, &["list".as_ref()]);
        let baseline = fixture.shell(&script);
        // One untimed run of each fills the caches; herd's answer is checked once.
        let out = run_ok(&herd, "herd-cleanup list")?;
        let listed: serde_json::Value =
            serde_json::from_slice(&out.stdout.bytes).map_err(|e| e.to_string())?;
        let eligible = listed["counts"]["eligible"].as_u64();
        if eligible != Some(worktrees as u64) {
            return Err(format!(
                "herd-cleanup list found {eligible:?} eligible worktrees of {worktrees}"
            ));
        }
        run_ok(&baseline, "the baseline")?;
        let mut herd_times = Vec::new();
        let mut baseline_times = Vec::new();
        for _ in 0..rounds {
            let t = Instant::now();
            run_ok(&herd, "herd-cleanup list")?;
            herd_times.push(t.elapsed());
            let t = Instant::now();
            run_ok(&baseline, "the baseline")?;
            baseline_times.push(t.elapsed());
        }
        Ok(InventoryBench {
            worktrees,
            extra_processes: extra,
            timing: Comparison::of(herd_times, baseline_times),
        })
    })();
    group.stop();
    result
}

/// Times `herd-cleanup remove` (the binary `bin`) of one clean managed worktree of a
/// `files`-file repository, against `git status --porcelain=v2` and `git worktree remove` of
/// another one in one `sh -c`, alternating, `rounds` times (each round removes a fresh pair).
pub fn removal(bin: &Path, files: usize, rounds: usize) -> Result<Comparison, String> {
    let dir = tempfile::Builder::new()
        .prefix("herd-bench-removal")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let base = std::fs::canonicalize(dir.path()).map_err(|e| e.to_string())?;
    let fixture = Managed::new(&base, files)?;
    let mut herd_times = Vec::new();
    let mut baseline_times = Vec::new();
    // Round 0 is the untimed warm-up.
    for round in 0..=rounds {
        let mine = fixture.add(&format!("h{round:03}"))?;
        let theirs = fixture.add(&format!("b{round:03}"))?;
        let _ = subprocess::run(&Command::new("sync", Duration::from_secs(60)));
        let herd = fixture.herd(bin, &["remove".as_ref(), mine.as_os_str()]);
        let t = Instant::now();
        let out = run_ok(&herd, "herd-cleanup remove")?;
        let took = t.elapsed();
        let answer: serde_json::Value =
            serde_json::from_slice(&out.stdout.bytes).map_err(|e| e.to_string())?;
        if answer["outcome"] != "removed" || mine.exists() {
            return Err(format!(
                "herd-cleanup remove did not remove the checkout: {}",
                first_line(&String::from_utf8_lossy(&out.stdout.bytes))
            ));
        }
        let script = format!(
            "git -C root/src/b{round:03} status --porcelain=v2 >/dev/null && \
             git -C src worktree remove root/src/b{round:03}"
        );
        let t = Instant::now();
        run_ok(&fixture.shell(&script), "the baseline")?;
        let base_took = t.elapsed();
        if theirs.exists() {
            return Err("git worktree remove left the checkout".into());
        }
        if round > 0 {
            herd_times.push(took);
            baseline_times.push(base_took);
        }
    }
    Ok(Comparison::of(herd_times, baseline_times))
}

/// Runs both measurements with the sizes and returns the lines to print.
pub fn run_all(rounds: usize) -> Result<String, String> {
    let mut out = String::new();
    let holders = holder_scan(1000, rounds)?;
    let _ = writeln!(out, "{}", holders.summary());
    let ignored = ignored_count(200_000, rounds)?;
    let _ = writeln!(out, "{}", ignored.summary());
    Ok(out)
}
