//! The launch rows a user waits on (issue 27), beside `launch.process` and `launch.tmux`:
//!
//! - `launch.first_request`: the time to a working child, from `herd-launch spawn` of a real Pi
//!   child (process surface, the scripted model on 127.0.0.1) to that child's first model
//!   request, against `pi -p` started directly in the same directory with the same model and
//!   environment, to its first request; interleaved round by round. What herd adds is its
//!   launch, the launch script, the child extension's load and the sidecars.
//! - `launch.first_request_loader`: the same herd child against a direct `pi -p` that loads one
//!   empty extension, which is what Pi's extension loader costs any `-e` file (jiti and its
//!   modules, about 16 ms): what herd adds beyond that floor.
//! - `launch.first_request_8`: the same for 8 children started at once, until the eighth first
//!   request, against 8 direct `pi -p` at once.
//! - `launch.first_request_sandboxed`: the same herd child confined (`workspace`, network `off`:
//!   its model through the relay) against it unconfined (`mode = "off"`), interleaved.
//!
//! A Pi start spreads by ±10 % from one to the next, as much as the difference measured, so a
//! round of the one-child rows times [`SAMPLES_PER_ROUND`] children of each side, interleaved.
//! - `launch.worktree_tmux`: a spawn into a new managed worktree of a 300-file repository and a
//!   tmux pane, against `git worktree add -b` plus `tmux split-window -d`.
//! - `launch.workmux`: the same spawn against `workmux add -b -C -H -F` when `workmux` is on
//!   `PATH`; else the row says "not measured".
//!
//! The Pi rows need the pinned Pi (`tests/pi`, installed by `.ci/run`); without it they say
//! "not measured" and why.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use herd_core::subprocess::{self, Command};
use herd_e2e::model::{ModelServer, Models, Script, Text};
use herd_e2e::pi::PiEnv;
use herd_protocol::layout::Artifacts;

use crate::bench::{Ctx, Goal, Measured, Quantity, Row, median, on_path, progress, timed};
use crate::bench_launch::{Scratch, TmuxServer, spawn_once};

const COMPONENT: &str = "herd-launch";

/// The budget of one spawn, git or tmux call.
const CALL_BUDGET: Duration = Duration::from_secs(60);

/// The longest a child may take to ask the model, or to end after its answer.
const CHILD_DEADLINE: Duration = Duration::from_secs(60);

/// The scripted model the children ask.
const MODEL: &str = "child";

/// The children of each side one round of a one-child row times.
const SAMPLES_PER_ROUND: usize = 3;

pub const ROWS: [&str; 6] = [
    "launch.first_request",
    "launch.first_request_loader",
    "launch.first_request_8",
    "launch.worktree_tmux",
    "launch.workmux",
    "launch.first_request_sandboxed",
];

pub fn rows(ctx: &Ctx) -> Vec<Row> {
    let mut rows = Vec::new();
    let at_once = 8;
    let pi_rows = [
        (
            ROWS[0],
            "time to a working child: spawn to its first model request".to_owned(),
            Goal::RatioAtMost(1.1),
            1,
            Direct::Plain,
        ),
        (
            ROWS[1],
            "the same against a Pi that loads an empty extension".to_owned(),
            Goal::RatioAtMost(1.1),
            1,
            Direct::EmptyExtension,
        ),
        (
            ROWS[2],
            format!("the same, {at_once} children spawned at once"),
            Goal::RatioAtMost(1.15),
            at_once,
            Direct::Plain,
        ),
    ];
    let wanted: Vec<_> = pi_rows.iter().filter(|r| ctx.wants(r.0)).collect();
    if !wanted.is_empty() {
        let bench = ctx
            .binary("herd-launch")
            .and_then(|bin| PiBench::start(&bin));
        for (id, figure, goal, n, direct) in wanted {
            progress(&format!("herd-launch: {id}"));
            let result = match &bench {
                Ok(bench) => bench.first_requests(*n, *direct, ctx.rounds),
                Err(why) => Err(why.clone()),
            };
            rows.push(Row::from_result(
                id,
                COMPONENT,
                figure.clone(),
                *goal,
                result,
            ));
        }
    }
    if ctx.wants(ROWS[5]) {
        progress(&format!("herd-launch: {}", ROWS[5]));
        let result = ctx
            .binary("herd-launch")
            .and_then(|bin| PiBench::start(&bin))
            .and_then(|bench| bench.confined_first_requests(ctx.rounds));
        rows.push(Row::from_result(
            ROWS[5],
            COMPONENT,
            "time to a working confined child (workspace, network off)".to_owned(),
            Goal::RatioAtMost(1.1),
            result,
        ));
    }
    let files = ctx.size(300, 100);
    if ctx.wants(ROWS[3]) {
        progress(&format!("herd-launch: {}", ROWS[3]));
        let result = ctx
            .binary("herd-launch")
            .and_then(|bin| worktree_tmux(&bin, files, ctx.rounds, Baseline::GitAndTmux));
        rows.push(Row::from_result(
            ROWS[3],
            COMPONENT,
            format!("spawn into a new worktree + tmux pane, {files}-file repository"),
            Goal::RatioAtMost(1.1),
            result,
        ));
    }
    if ctx.wants(ROWS[4]) {
        progress(&format!("herd-launch: {}", ROWS[4]));
        let result = if on_path("workmux") {
            ctx.binary("herd-launch")
                .and_then(|bin| worktree_tmux(&bin, files, ctx.rounds, Baseline::Workmux))
        } else {
            Err("workmux is not on PATH".into())
        };
        rows.push(Row::from_result(
            ROWS[4],
            COMPONENT,
            format!("the same against workmux, {files}-file repository"),
            Goal::RatioAtMost(0.5),
            result,
        ));
    }
    rows
}

/// What a herd child is timed against: Pi started directly, as it is or with an empty extension.
#[derive(Clone, Copy)]
enum Direct {
    Plain,
    EmptyExtension,
}

/// The scripted model, Pi's environment and the release herd-launch.
struct PiBench {
    model: ModelServer,
    env: PiEnv,
    scratch: Scratch,
    launch: PathBuf,
    /// An extension that does nothing, for [`Direct::EmptyExtension`].
    empty_extension: PathBuf,
    /// `XDG_CONFIG_HOME`s of a person who confines children, and of one who does not.
    confined: PathBuf,
    unconfined: PathBuf,
}

impl PiBench {
    fn start(launch: &Path) -> Result<PiBench, String> {
        if !herd_e2e::pi::pi_available() {
            return Err("the pinned Pi is not installed (run `bash .ci/run`)".into());
        }
        let model =
            ModelServer::start_models(Models::new().model(MODEL, Script::new().step(Text("done"))));
        let env = PiEnv::new(&model);
        let scratch = Scratch::new("herd-bench-start")?;
        let empty_extension = scratch.root().join("empty-extension.js");
        std::fs::write(&empty_extension, "export default function () {}\n")
            .map_err(|e| format!("cannot write {}: {e}", empty_extension.display()))?;
        let config = |name: &str, text: &str| -> Result<PathBuf, String> {
            let dir = scratch.root().join(name);
            std::fs::create_dir_all(dir.join("herd")).map_err(|e| e.to_string())?;
            std::fs::write(dir.join("herd/config.toml"), text).map_err(|e| e.to_string())?;
            Ok(dir)
        };
        let confined = config("config-confined", "[sandbox]\nmode = \"workspace\"\n")?;
        let unconfined = config("config-unconfined", "[sandbox]\nmode = \"off\"\n")?;
        Ok(PiBench {
            model,
            env,
            scratch,
            launch: launch.to_path_buf(),
            empty_extension,
            confined,
            unconfined,
        })
    }

    /// Medians of `rounds` rounds of [`SAMPLES_PER_ROUND`] confined children, each followed by
    /// one unconfined, timed to their first request (round 0 warms the caches).
    fn confined_first_requests(&self, rounds: usize) -> Result<Measured, String> {
        if !on_path("bwrap") {
            return Err("bwrap is not on PATH (apt-get install bubblewrap)".into());
        }
        let mut confined = Vec::with_capacity(rounds * SAMPLES_PER_ROUND);
        let mut open = Vec::with_capacity(rounds * SAMPLES_PER_ROUND);
        for round in 0..=rounds {
            for sample in 0..SAMPLES_PER_ROUND {
                let art = self
                    .scratch
                    .artifacts(&format!("confined-{round}-{sample}"))?;
                let c = self.herd_children_in(&art, 1, Some(&self.confined))?;
                let art = self.scratch.artifacts(&format!("open-{round}-{sample}"))?;
                let o = self.herd_children_in(&art, 1, Some(&self.unconfined))?;
                if round > 0 {
                    confined.push(c);
                    open.push(o);
                }
            }
        }
        Ok(
            Measured::new(Quantity::ms(median(&confined)), confined.len())
                .against("the same child unconfined", Quantity::ms(median(&open))),
        )
    }

    /// Medians of `rounds` rounds of: `n` herd children, then `n` direct Pi starts, each timed
    /// until the `n`th first request (round 0 warms the caches). A round of a one-child row
    /// times [`SAMPLES_PER_ROUND`] of each.
    fn first_requests(&self, n: usize, direct: Direct, rounds: usize) -> Result<Measured, String> {
        let per_round = if n == 1 { SAMPLES_PER_ROUND } else { 1 };
        let mut herd = Vec::with_capacity(rounds * per_round);
        let mut base = Vec::with_capacity(rounds * per_round);
        for round in 0..=rounds {
            for sample in 0..per_round {
                let art = self
                    .scratch
                    .artifacts(&format!("pi-{n}-{round}-{sample}"))?;
                let took = self.herd_children(&art, n)?;
                let direct_took = self.direct_children(n, direct)?;
                if round > 0 {
                    herd.push(took);
                    base.push(direct_took);
                }
            }
        }
        let baseline = match (n, direct) {
            (1, Direct::Plain) => "pi -p started directly, to its first request".to_owned(),
            (1, Direct::EmptyExtension) => "pi -p -e <empty extension>".to_owned(),
            (_, Direct::Plain) => format!("{n} direct pi -p at once"),
            (_, Direct::EmptyExtension) => format!("{n} direct pi -p -e <empty extension> at once"),
        };
        Ok(Measured::new(Quantity::ms(median(&herd)), herd.len())
            .against(baseline, Quantity::ms(median(&base))))
    }

    /// `n` spawns at once; the time from the first spawn's start to the `n`th new request.
    fn herd_children(&self, art: &Path, n: usize) -> Result<Duration, String> {
        self.herd_children_in(art, n, None)
    }

    /// [`PiBench::herd_children`] with the person's configuration in `config`
    /// (`XDG_CONFIG_HOME`; `None`: none, the built-in default).
    fn herd_children_in(
        &self,
        art: &Path,
        n: usize,
        config: Option<&Path>,
    ) -> Result<Duration, String> {
        let before = self.model.arrivals().len();
        let started = Instant::now();
        let spawns: Vec<_> = (0..n)
            .map(|i| {
                let mut cmd = self.spawn_command(art, &format!("bench {i}"));
                if let Some(config) = config {
                    cmd = cmd.env("XDG_CONFIG_HOME", config);
                }
                std::thread::spawn(move || spawn_once(&cmd).map(|_| ()))
            })
            .collect();
        for spawn in spawns {
            spawn.join().map_err(|_| "a spawn thread panicked")??;
        }
        let took = self.nth_arrival(before + n, started)?;
        // Each child answers and ends; its launch script then records the runner's exit.
        wait_until(CHILD_DEADLINE, || (runner_exits(art) >= n).then_some(()))
            .ok_or("the herd children did not end after their answer")?;
        Ok(took)
    }

    /// `n` direct `pi -p` at once; the time to the `n`th new request.
    fn direct_children(&self, n: usize, direct: Direct) -> Result<Duration, String> {
        let before = self.model.arrivals().len();
        let started = Instant::now();
        let mut children = Vec::with_capacity(n);
        for _ in 0..n {
            let pi = self.env.pi().model(MODEL);
            let pi = match direct {
                Direct::Plain => pi,
                Direct::EmptyExtension => pi.extension(&self.empty_extension),
            };
            let mut cmd = pi.print("Say done").command();
            cmd.stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null());
            #[expect(
                clippy::disallowed_methods,
                reason = "the bench starts its n Pi processes at once and bounds each below"
            )]
            let child = cmd.spawn().map_err(|e| format!("cannot start pi: {e}"))?;
            children.push(child);
        }
        let took = self.nth_arrival(before + n, started);
        let deadline = Instant::now() + CHILD_DEADLINE;
        for mut child in children {
            while child.try_wait().ok().flatten().is_none() {
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        took
    }

    /// The time from `started` to the arrival of request number `count`.
    fn nth_arrival(&self, count: usize, started: Instant) -> Result<Duration, String> {
        let arrivals = wait_until(CHILD_DEADLINE, || {
            let arrivals = self.model.arrivals();
            (arrivals.len() >= count).then_some(arrivals)
        })
        .ok_or("a child never asked the model")?;
        Ok(arrivals[count - 1].saturating_duration_since(started))
    }

    /// `herd-launch spawn` of a Pi child on the process surface, as the parent extension
    /// starts one: Pi named by `HERD_PI`, the herd programs by `HERD_BIN_DIR`.
    fn spawn_command(&self, art: &Path, name: &str) -> Command {
        let request = serde_json::json!({
            "name": name,
            "task": "Say done",
            "model": PiEnv::model_arg(MODEL),
        });
        let mut cmd = Command::new(&self.launch, CALL_BUDGET)
            .cwd(self.env.work_dir())
            .env_clear()
            .stdin_bytes(request.to_string().into_bytes())
            .env("HERD_PI", herd_e2e::pi::pi_bin())
            .env(
                "HERD_BIN_DIR",
                self.launch.parent().unwrap_or_else(|| Path::new(".")),
            )
            .arg("--artifacts")
            .arg(art)
            .args(["spawn", "--json", "--surface", "process", "--runner", "pi"])
            .args(["--request", "-"]);
        for (k, v) in self.env.vars() {
            cmd = cmd.env(k, v);
        }
        cmd
    }
}

/// How many runs of `art` recorded their runner's exit.
fn runner_exits(art: &Path) -> usize {
    let art = Artifacts::new(art);
    let ids = art.run_ids().unwrap_or_default();
    ids.iter().filter(|id| art.runner_exit(id).exists()).count()
}

/// Polls `check` every millisecond until it answers, at most `bound`.
fn wait_until<T>(bound: Duration, mut check: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + bound;
    loop {
        if let Some(found) = check() {
            return Some(found);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[derive(Clone, Copy)]
enum Baseline {
    GitAndTmux,
    Workmux,
}

/// Spawns into a new worktree and a tmux pane against `baseline`, round by round.
fn worktree_tmux(
    bin: &Path,
    files: usize,
    rounds: usize,
    baseline: Baseline,
) -> Result<Measured, String> {
    if !on_path("tmux") {
        return Err("tmux is not on PATH (apt-get install tmux)".into());
    }
    let s = Scratch::new("herd-bench-worktree-tmux")?;
    let repo = s.root().join("work");
    make_repo(&repo, files)?;
    let server = TmuxServer::start(s.root())?;
    let result = (|| {
        let mut herd = Vec::with_capacity(rounds);
        let mut base = Vec::with_capacity(rounds);
        for round in 0..=rounds {
            let art = s.artifacts(&format!("wt-{round}"))?;
            let request = s.root().join(format!("request-wt-{round}.json"));
            let body = serde_json::json!({
                "name": format!("wt {round}"),
                "task": "benchmark",
                "worktree": { "branch": format!("herd-{round}") },
            });
            std::fs::write(&request, body.to_string()).map_err(|e| e.to_string())?;
            let spawn = s
                .spawn_request(bin, "tmux", &art, &request, &["true"])
                .env("TMUX", server.tmux_var())
                .env("TMUX_PANE", server.anchor());
            let (took, doc) = spawn_once(&spawn)?;
            if let Some(pane) = doc["pane_id"].as_str() {
                server.kill_pane(pane);
            }
            server.kill_other_windows();
            let base_took = match baseline {
                Baseline::GitAndTmux => {
                    let path = s.root().join(format!("plain-{round}"));
                    let add = Command::new("git", CALL_BUDGET)
                        .cwd(&repo)
                        .args(["worktree", "add", "-q", "-b"])
                        .arg(format!("plain-{round}"))
                        .arg(&path)
                        .stdin_null();
                    let split = server
                        .command()
                        .args(["split-window", "-d", "-P", "-F", "#{pane_id}", "-t"])
                        .arg(server.anchor())
                        .arg("true");
                    let (add_took, _) = timed(&add)?;
                    let (split_took, out) = timed(&split)?;
                    server.kill_pane(out.stdout.text().trim());
                    add_took + split_took
                }
                Baseline::Workmux => {
                    let add = Command::new("workmux", CALL_BUDGET)
                        .cwd(&repo)
                        .env("TMUX", server.tmux_var())
                        .env("TMUX_PANE", server.anchor())
                        .args(["add", "-b", "-C", "-H", "-F"])
                        .arg(format!("workmux-{round}"))
                        .stdin_null();
                    let took = timed(&add)?.0;
                    server.kill_other_windows();
                    took
                }
            };
            if round > 0 {
                herd.push(took);
                base.push(base_took);
            }
        }
        let label = match baseline {
            Baseline::GitAndTmux => "git worktree add -b + tmux split-window -d",
            Baseline::Workmux => "workmux add -b -C -H -F",
        };
        Ok(Measured::new(Quantity::ms(median(&herd)), rounds)
            .against(label, Quantity::ms(median(&base))))
    })();
    server.stop();
    result
}

/// A repository of `files` small committed files.
fn make_repo(repo: &Path, files: usize) -> Result<(), String> {
    for i in 0..files {
        let dir = repo.join(format!("src/d{}", i % 10));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        std::fs::write(dir.join(format!("f{i}.txt")), format!("file {i}\n"))
            .map_err(|e| e.to_string())?;
    }
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["add", "-A"],
        &[
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.invalid",
            "commit",
            "-q",
            "-m",
            "files",
        ],
    ] {
        let out = subprocess::run(
            &Command::new("git", CALL_BUDGET)
                .cwd(repo)
                .args(args.iter().copied())
                .stdin_null(),
        )
        .map_err(|e| e.to_string())?;
        if !out.success() {
            return Err(format!("git {} failed: {}", args[0], out.stderr.text()));
        }
    }
    Ok(())
}
