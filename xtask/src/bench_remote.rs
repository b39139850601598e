//! The rows of children on other machines (issue 24), against the fixture the tests use: a real
//! OpenSSH server on 127.0.0.1 in a PID and mount namespace of its own
//! ([`herd_e2e::ssh::Remote`]), prepared once with `herd-launch host add`.
//!
//! - `remote.spawn_ack`: `herd-launch spawn --host` of an exec child running `true` until its
//!   acknowledgement, against a local spawn of the same child plus `ssh … host true` over the
//!   same master connection, interleaved round by round.
//! - `remote.result_latency`: a remote child blocked reading a FIFO is released (the bench
//!   writes the FIFO; the child writes its completion sidecar as Pi's child extension does and
//!   exits) and timed until the local `herd-watch follow --json --forever` prints its result;
//!   the 95th percentile (nearest rank). A child that leaves no sidecar (a bare exec child) is
//!   settled on its exit after the supervisor's 500 ms grace for a late sidecar, locally as on a
//!   host.
//! - `remote.concurrent`: 20 remote children launched at once (one master connection) and
//!   delivered by one `herd-watch follow --json`, wall time, against the same locally; every
//!   result must be delivered once.
//! - `remote.idle_cpu`: the CPU (user + system, from `/proc/<pid>/stat`) of the herd processes
//!   that watch 50 idle remote children over a window — the local follower, the host's relay,
//!   its `ssh` client and the host's `herd-watch follow` — against the plain 1 s `stat` poll of
//!   the same children's local records (`--poll-baseline`, as the herd-watch row).
//!
//! The fixture needs `sshd`, `ssh-keygen` and `unshare` (namespaces: root); without them every
//! row says "not measured" and why.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use herd_core::subprocess::{self, Command, Detached};
use herd_e2e::ssh::{ALIAS, Remote};
use herd_protocol::layout::Artifacts;
use serde_json::Value;

use crate::bench::{Ctx, Goal, Measured, Quantity, Row, median, percentile, progress, timed};
use crate::bench_launch::{Scratch, spawn_once};

const COMPONENT: &str = "herd-remote";

/// The budget of one spawn or ssh call.
const CALL_BUDGET: Duration = Duration::from_secs(120);

/// The longest a result may take before the bench gives up on it.
const RESULT_DEADLINE: Duration = Duration::from_secs(60);

pub const ROWS: [&str; 4] = [
    "remote.spawn_ack",
    "remote.result_latency",
    "remote.concurrent",
    "remote.idle_cpu",
];

struct Spec {
    id: &'static str,
    figure: String,
    goal: Goal,
}

pub fn rows(ctx: &Ctx) -> Vec<Row> {
    let idle = ctx.size(50, 10);
    let window = Duration::from_secs(ctx.size(30, 10));
    let latency_n = ctx.size(20, 5);
    let concurrent = ctx.size(20, 5);
    let specs = [
        Spec {
            id: ROWS[0],
            figure: "spawn ack on a prepared host".into(),
            goal: Goal::RatioAtMost(1.3),
        },
        Spec {
            id: ROWS[1],
            figure: "child exit to local delivery, p95".into(),
            goal: Goal::AtMost(Quantity::ms(Duration::from_millis(250))),
        },
        Spec {
            id: ROWS[2],
            figure: format!("{concurrent} concurrent children, launch to delivery"),
            goal: Goal::RatioAtMost(1.5),
        },
        Spec {
            id: ROWS[3],
            figure: format!("CPU, {idle} idle remote children, {} s", window.as_secs()),
            goal: Goal::RatioAtMost(2.0),
        },
    ];
    let wanted: Vec<&Spec> = specs.iter().filter(|s| ctx.wants(s.id)).collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    let setup = (|| {
        let launch = ctx.binary("herd-launch")?;
        let watch = ctx.binary("herd-watch")?;
        for program in herd_e2e::BINARIES {
            ctx.binary(program)?;
        }
        let bench = Bench::start(launch, watch)?;
        Ok::<Bench, String>(bench)
    })();
    let bench = match setup {
        Ok(bench) => bench,
        Err(reason) => {
            return wanted
                .into_iter()
                .map(|s| Row::not_measured(s.id, COMPONENT, s.figure.clone(), s.goal, &reason))
                .collect();
        }
    };
    wanted
        .into_iter()
        .map(|s| {
            progress(&format!("herd-remote: {}", s.id));
            let result = match s.id {
                "remote.spawn_ack" => bench.spawn_ack(ctx.rounds),
                "remote.result_latency" => bench.latency(latency_n),
                "remote.concurrent" => bench.concurrent(concurrent, ctx.rounds.min(3)),
                _ => bench.idle_cpu(idle, window),
            };
            Row::from_result(s.id, COMPONENT, s.figure.clone(), s.goal, result)
        })
        .collect()
}

/// The fixture, the local scratch and the release binaries.
struct Bench {
    remote: Remote,
    scratch: Scratch,
    launch: PathBuf,
    watch: PathBuf,
    serial: std::sync::atomic::AtomicUsize,
}

impl Bench {
    fn start(launch: PathBuf, watch: PathBuf) -> Result<Bench, String> {
        for tool in ["/usr/sbin/sshd", "/usr/bin/ssh-keygen", "/usr/bin/unshare"] {
            if !Path::new(tool).exists() {
                return Err(format!("{tool} is missing (install openssh-server)"));
            }
        }
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err("the sshd fixture needs root (its own PID and mount namespace)".into());
        }
        progress("herd-remote: starting the sshd fixture");
        let remote = std::panic::catch_unwind(|| Remote::start(&[]))
            .map_err(|_| "the sshd fixture did not start".to_owned())?;
        let scratch = Scratch::new("herd-bench-remote")?;
        let bench = Bench {
            remote,
            scratch,
            launch,
            watch,
            serial: std::sync::atomic::AtomicUsize::new(0),
        };
        let art = bench.artifacts()?;
        timed(
            &bench
                .herd(&bench.launch, &art)
                .args(["host", "add", ALIAS, "--json"]),
        )
        .map_err(|e| format!("host add failed: {e}"))?;
        Ok(bench)
    }

    /// A fresh local artifacts directory.
    fn artifacts(&self) -> Result<PathBuf, String> {
        let n = self
            .serial
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.scratch.artifacts(&format!("a{n}"))
    }

    /// `program --artifacts art` with the fixture's client environment.
    fn herd(&self, program: &Path, art: &Path) -> Command {
        let mut cmd = Command::new(program, CALL_BUDGET)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HERD_HANG_WARNING_SECS", "0")
            .cwd(self.scratch.root().join("work"))
            .stdin_null()
            .arg("--artifacts")
            .arg(art);
        for (k, v) in self.remote.env() {
            cmd = cmd.env(k, v);
        }
        cmd
    }

    /// `spawn --host` of an exec child running `sh -c script`.
    fn remote_spawn(&self, art: &Path, name: &str, script: &str) -> Command {
        let body = serde_json::json!({ "name": name, "task": "benchmark" }).to_string();
        self.herd(&self.launch, art)
            .args(["spawn", "--host", ALIAS, "--request", "-", "--json"])
            .args(["--runner", "exec", "--", "sh", "-c", script])
            .stdin_bytes(body.into_bytes())
    }

    /// The same child, here, on the process surface.
    fn local_spawn(&self, art: &Path, name: &str, script: &str) -> Command {
        let body = serde_json::json!({ "name": name, "task": "benchmark" }).to_string();
        self.herd(&self.launch, art)
            .args(["spawn", "--surface", "process", "--request", "-", "--json"])
            .args(["--runner", "exec", "--", "sh", "-c", script])
            .stdin_bytes(body.into_bytes())
    }

    fn ssh_true(&self) -> Command {
        let mut cmd = Command::new("ssh", CALL_BUDGET).stdin_null();
        let mut config = None;
        let mut control = None;
        for (k, v) in self.remote.env() {
            if k == "HERD_SSH_CONFIG" {
                config = Some(v);
            } else if k == "HERD_SSH_CONTROL_DIR" {
                control = Some(PathBuf::from(v));
            }
        }
        if let Some(config) = config {
            cmd = cmd.arg("-F").arg(config);
        }
        if let Some(dir) = control {
            // herd's master connection (ControlPath=<dir>/%C), as `ssh -S <master>`.
            cmd = cmd
                .arg("-o")
                .arg(format!("ControlPath={}/%C", dir.display()));
        }
        cmd.args(["-o", "BatchMode=yes", ALIAS, "true"])
    }

    fn spawn_ack(&self, rounds: usize) -> Result<Measured, String> {
        let mut herd = Vec::new();
        let mut base = Vec::new();
        for round in 0..=rounds {
            let art = self.artifacts()?;
            let (took, doc) = spawn_once(&self.remote_spawn(&art, "ack", "cat >/dev/null"))?;
            if doc["host"] != ALIAS {
                return Err(format!("the acknowledgement names no host: {doc}"));
            }
            let local = self.artifacts()?;
            let (local_took, _) = spawn_once(&self.local_spawn(&local, "ack", "cat >/dev/null"))?;
            let (ssh_took, _) = timed(&self.ssh_true())?;
            if round > 0 {
                herd.push(took);
                base.push(local_took + ssh_took);
            }
        }
        Ok(Measured::new(Quantity::ms(median(&herd)), rounds)
            .against("local spawn + ssh host true", Quantity::ms(median(&base))))
    }

    /// A `herd-watch follow --json --forever` writing to `out`; returns its PID.
    fn follow_forever(&self, art: &Path, tag: &str) -> Result<u32, String> {
        let root = self.scratch.root();
        let mut cmd = Detached::new(
            &self.watch,
            root.join(format!("follow-{tag}.out")),
            root.join(format!("follow-{tag}.err")),
        )
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HERD_HANG_WARNING_SECS", "0")
        .arg("--artifacts")
        .arg(art)
        .args(["follow", "--json", "--forever"])
        .cwd(root.join("work"));
        for (k, v) in self.remote.env() {
            cmd = cmd.env(k, v);
        }
        subprocess::spawn_detached(&cmd).map_err(|e| e.to_string())
    }

    fn follow_events(&self, tag: &str) -> Vec<Value> {
        let text = std::fs::read_to_string(self.scratch.root().join(format!("follow-{tag}.out")))
            .unwrap_or_default();
        herd_e2e::herd::json_lines(&text)
    }

    fn latency(&self, n: usize) -> Result<Measured, String> {
        let art = self.artifacts()?;
        let mut runs = Vec::new();
        for i in 0..n {
            let fifo = format!("go-{i}");
            make_fifo(&self.remote.home().join(&fifo))?;
            // Released, it writes its completion sidecar as Pi's child extension does
            // (temporary file, rename), then exits.
            let script = format!(
                "cat >/dev/null; cat \"$HOME/{fifo}\" >/dev/null; \
                 printf '{{\"type\":\"done\"}}' > \"$PI_SUBAGENT_SESSION.exit.tmp\" && \
                 mv \"$PI_SUBAGENT_SESSION.exit.tmp\" \"$PI_SUBAGENT_SESSION.exit\""
            );
            let (_, doc) = spawn_once(&self.remote_spawn(&art, &format!("lat {i}"), &script))?;
            let id = doc["run_id"].as_str().ok_or("no run id")?.to_owned();
            runs.push((id, self.remote.home().join(&fifo)));
        }
        let follow = self.follow_forever(&art, "latency")?;
        let result = (|| {
            let mut times = Vec::new();
            let mut settled = Vec::new();
            for (id, fifo) in &runs {
                release_fifo(fifo)?;
                let t0 = Instant::now();
                let file = Artifacts::new(&art).run_result(id);
                let mut file_at = None;
                loop {
                    if file_at.is_none() && file.exists() {
                        file_at = Some(t0.elapsed());
                    }
                    if !herd_e2e::herd::results_of(&self.follow_events("latency"), id).is_empty() {
                        settled.push(file_at.unwrap_or_else(|| t0.elapsed()));
                        break;
                    }
                    if t0.elapsed() > RESULT_DEADLINE {
                        return Err(format!("the result of {id} did not arrive"));
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                times.push(t0.elapsed());
            }
            let events = self.follow_events("latency");
            for (id, _) in &runs {
                let count = herd_e2e::herd::results_of(&events, id).len();
                if count != 1 {
                    return Err(format!("{id} was delivered {count} times"));
                }
            }
            Ok(
                Measured::new(Quantity::ms(percentile(&times, 95.0)), times.len()).note(format!(
                    "median {:.1} ms; the relay's result file here after {:.1} ms (median), \
                         {:.1} ms (p95)",
                    ms(median(&times)),
                    ms(median(&settled)),
                    ms(percentile(&settled, 95.0))
                )),
            )
        })();
        self.stop_watchers(follow, &art);
        result
    }

    /// Launches `n` children at once and delivers them with one `herd-watch follow --json`;
    /// returns the wall time, after checking each was delivered once.
    fn burst(&self, n: usize, remote: bool) -> Result<Duration, String> {
        let art = self.artifacts()?;
        let started = Instant::now();
        let ids: Vec<Result<String, String>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..n)
                .map(|i| {
                    let art = art.clone();
                    scope.spawn(move || {
                        let name = format!("burst {i}");
                        let cmd = if remote {
                            self.remote_spawn(&art, &name, "cat >/dev/null")
                        } else {
                            self.local_spawn(&art, &name, "cat >/dev/null")
                        };
                        let (_, doc) = spawn_once(&cmd)?;
                        doc["run_id"]
                            .as_str()
                            .map(str::to_owned)
                            .ok_or_else(|| "no run id".to_owned())
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err("a spawn thread panicked".into()))
                })
                .collect()
        });
        let ids: Vec<String> = ids.into_iter().collect::<Result<_, _>>()?;
        let (_, out) = timed(&self.herd(&self.watch, &art).args(["follow", "--json"]))?;
        let took = started.elapsed();
        let events = herd_e2e::herd::json_lines(&out.stdout.text());
        for id in &ids {
            let count = herd_e2e::herd::results_of(&events, id).len();
            if count != 1 {
                return Err(format!("{id} was delivered {count} times"));
            }
        }
        Ok(took)
    }

    fn concurrent(&self, n: usize, rounds: usize) -> Result<Measured, String> {
        let mut herd = Vec::new();
        let mut base = Vec::new();
        for _ in 0..rounds {
            herd.push(self.burst(n, true)?);
            base.push(self.burst(n, false)?);
        }
        Ok(Measured::new(Quantity::ms(median(&herd)), rounds)
            .against(format!("{n} local children"), Quantity::ms(median(&base)))
            .note("every result delivered once"))
    }

    fn idle_cpu(&self, n: usize, window: Duration) -> Result<Measured, String> {
        let art = self.artifacts()?;
        for i in 0..n {
            spawn_once(&self.remote_spawn(
                &art,
                &format!("idle {i}"),
                "cat >/dev/null; exec sleep 3600",
            ))?;
        }
        let follow = self.follow_forever(&art, "idle")?;
        let result = (|| {
            // Connected, and a warm-up, before the window.
            let connected = Instant::now();
            while !relay_connected(&art) {
                if connected.elapsed() > RESULT_DEADLINE {
                    return Err("the relay did not connect".into());
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            std::thread::sleep(Duration::from_secs(3));
            let marks = self.watchers(&art);
            if marks.is_empty() {
                return Err("no herd process watches the children".into());
            }
            let poller = start_poller(self.scratch.root(), &art, window.as_secs())
                .ok_or("the polling baseline did not start")?;
            let each = |pids: &[u32]| -> Vec<u64> {
                pids.iter()
                    .map(|pid| crate::bench_watch::cpu_ticks(*pid).unwrap_or_default())
                    .collect()
            };
            let first = each(&marks);
            let started = Instant::now();
            std::thread::sleep(window);
            let last = each(&marks);
            let before: u64 = first.iter().sum();
            let after: u64 = last.iter().sum();
            let wall = started.elapsed();
            let hz = clock_ticks()?;
            let used = after.saturating_sub(before) as f64 / hz / wall.as_secs_f64() * 100.0;
            let baseline = poller_usage(self.scratch.root(), poller)?;
            Ok(Measured::new(Quantity::percent_core(used), 1)
                .against(
                    "1 s stat poll of the local records",
                    Quantity::percent_core(baseline),
                )
                .note({
                    let parts: Vec<String> = marks
                        .iter()
                        .zip(first.iter().zip(&last))
                        .map(|(pid, (a, b))| {
                            let share =
                                b.saturating_sub(*a) as f64 / hz / wall.as_secs_f64() * 100.0;
                            format!("{} {share:.3} %", role(*pid))
                        })
                        .collect();
                    format!("by process: {}", parts.join(", "))
                }))
        })();
        self.stop_watchers(follow, &art);
        result
    }

    /// The processes watching `art`'s runs: those whose command line names the local artifacts
    /// directory, the host's one, or the fixture's ssh configuration.
    fn watchers(&self, art: &Path) -> Vec<u32> {
        let remote_dirs: Vec<String> =
            std::fs::read_dir(self.remote.home().join(".herd/artifacts"))
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| {
                    self.remote
                        .remote_home()
                        .join(".herd/artifacts")
                        .join(e.file_name())
                })
                .map(|p| p.display().to_string())
                .collect();
        let local = art.display().to_string();
        let config = self
            .remote
            .env()
            .into_iter()
            .find(|(k, _)| k == "HERD_SSH_CONFIG")
            .map(|(_, v)| PathBuf::from(v).display().to_string());
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
                continue;
            };
            let words: Vec<String> = raw
                .split(|b| *b == 0)
                .map(|w| String::from_utf8_lossy(w).into_owned())
                .collect();
            let program = words.first().map(|w| w.rsplit('/').next().unwrap_or(w));
            let line = words.join(" ");
            let herd = program == Some("herd-watch")
                && (line.contains(&local) || remote_dirs.iter().any(|d| line.contains(d.as_str())));
            let ssh_client = program == Some("ssh")
                && config.as_deref().is_some_and(|c| line.contains(c))
                && line.contains("follow");
            if herd || ssh_client {
                found.push(pid);
            }
        }
        found
    }

    /// Stops the follower and the relay it started (by their PIDs).
    fn stop_watchers(&self, follow: u32, art: &Path) {
        let relay = relay_pid(art);
        for pid in [Some(follow), relay].into_iter().flatten() {
            // SAFETY: kill has no memory-safety preconditions; these PIDs are this bench's.
            unsafe {
                libc::kill(pid as libc::pid_t, libc::SIGTERM);
            }
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn make_fifo(path: &Path) -> Result<(), String> {
    let c =
        std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: c is a valid NUL-terminated path.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
        return Err(format!(
            "cannot make the FIFO {}: {}",
            path.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// Opens the FIFO for writing once its reader (the child) has it open, and closes it: the
/// reader sees its end and exits.
fn release_fifo(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let started = Instant::now();
    loop {
        match std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
        {
            Ok(file) => {
                drop(file);
                return Ok(());
            }
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                if started.elapsed() > RESULT_DEADLINE {
                    return Err(format!("no child read {}", path.display()));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => return Err(format!("cannot open {}: {e}", path.display())),
        }
    }
}

fn relay_connected(art: &Path) -> bool {
    std::fs::read(art.join(format!("relays/{ALIAS}.json")))
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .is_some_and(|v| v["connected"] == true)
}

/// The relay's PID, from the lock it holds (`/proc/locks`).
fn relay_pid(art: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let inode = std::fs::metadata(art.join(format!("relays/{ALIAS}.lock")))
        .ok()?
        .ino();
    std::fs::read_to_string("/proc/locks")
        .ok()?
        .lines()
        .find(|l| l.contains(&format!(":{inode} ")))
        .and_then(|l| l.split_whitespace().nth(4)?.parse().ok())
}

/// What a watching process is, from its command line.
fn role(pid: u32) -> &'static str {
    let line = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let line = String::from_utf8_lossy(&line).replace('\0', " ");
    let program = line
        .split(' ')
        .next()
        .and_then(|w| w.rsplit('/').next())
        .unwrap_or("");
    if program == "ssh" {
        "ssh client"
    } else if line.contains(" relay ") {
        "relay"
    } else if line.contains("--ack") {
        "host follower"
    } else {
        "local follower"
    }
}

fn clock_ticks() -> Result<f64, String> {
    crate::bench_watch::clock_ticks()
}

fn start_poller(root: &Path, art: &Path, secs: u64) -> Option<u32> {
    let exe = std::env::current_exe().ok()?;
    let cmd = Detached::new(exe, root.join("poller.out"), root.join("poller.err"))
        .args(["bench", "--released", "--poll-baseline"])
        .arg(art)
        .args(["--poll-secs", &secs.to_string()])
        .cwd(root.join("work"));
    subprocess::spawn_detached(&cmd).ok()
}

/// The baseline's CPU, as it measured itself (percent of a core).
fn poller_usage(root: &Path, pid: u32) -> Result<f64, String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let path = root.join("poller.out");
    loop {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        if let Ok(used) = serde_json::from_str::<Value>(text.trim()) {
            return match (used["cpu_ms"].as_f64(), used["wall_ms"].as_f64()) {
                (Some(cpu), Some(wall)) if wall > 0.0 => Ok(cpu / wall * 100.0),
                _ => Err(format!("the poll baseline reported {used}")),
            };
        }
        if Instant::now() > deadline {
            return Err(format!("the poll baseline (pid {pid}) reported nothing"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
