//! herd-launch's rows (issue 7): `spawn` of the exec runner running `true`, on the process
//! surface against `sh -c true`, and on tmux against `tmux split-window -d true`.
//!
//! Every spawn gets a fresh artifacts directory, so each round does the same work. The tmux
//! rows run on a private server (`tmux -S <socket>` in a temporary directory), with herd called
//! as if from inside its first pane (`TMUX`, `TMUX_PANE`), so both sides split that pane; each
//! new pane is killed after it is timed so the window never fills up. The server is killed at
//! the end.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use herd_core::identity::{self, Record};
use herd_core::subprocess::{self, Command};
use herd_protocol::layout::Artifacts;
use serde_json::Value;

use crate::bench::{
    Ctx, Goal, Measured, Quantity, Row, first_line, median, on_path, scratch, timed,
};

const COMPONENT: &str = "herd-launch";

/// The budget of one spawn or tmux call.
const CALL_BUDGET: Duration = Duration::from_secs(60);

pub fn rows(ctx: &Ctx) -> Vec<Row> {
    let mut rows = Vec::new();
    if ctx.wants("launch.process") {
        rows.push(Row::from_result(
            "launch.process",
            COMPONENT,
            "spawn `true`, process surface",
            Goal::RatioAtMost(4.0),
            ctx.binary("herd-launch")
                .and_then(|bin| process(&bin, ctx.rounds)),
        ));
    }
    if ctx.wants("launch.sandboxed") {
        rows.push(Row::from_result(
            "launch.sandboxed",
            COMPONENT,
            "spawn `true` confined (workspace), process surface",
            Goal::RatioAtMost(1.15),
            ctx.binary("herd-launch")
                .and_then(|bin| sandboxed(&bin, ctx.rounds, false)),
        ));
    }
    if ctx.wants("launch.sandboxed_run") {
        rows.push(Row::from_result(
            "launch.sandboxed_run",
            COMPONENT,
            "spawn `true` confined until its runner has exited",
            Goal::RatioAtMost(1.15),
            ctx.binary("herd-launch")
                .and_then(|bin| sandboxed(&bin, ctx.rounds, true)),
        ));
    }
    if ctx.wants("launch.tmux") {
        rows.push(Row::from_result(
            "launch.tmux",
            COMPONENT,
            "spawn `true`, tmux surface",
            Goal::RatioAtMost(1.3),
            ctx.binary("herd-launch")
                .and_then(|bin| tmux(&bin, ctx.rounds)),
        ));
    }
    rows
}

/// A scratch home, working directory and request shared by the rounds of one row.
pub struct Scratch {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Scratch {
    pub fn new(prefix: &str) -> Result<Scratch, String> {
        let dir = scratch(prefix)?;
        let root = std::fs::canonicalize(dir.path()).map_err(|e| e.to_string())?;
        for sub in ["home", "work", "artifacts"] {
            std::fs::create_dir_all(root.join(sub)).map_err(|e| e.to_string())?;
        }
        let request = serde_json::json!({ "name": "bench", "task": "benchmark spawn" });
        std::fs::write(root.join("request.json"), request.to_string())
            .map_err(|e| e.to_string())?;
        Ok(Scratch { _dir: dir, root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A new, empty artifacts directory.
    pub fn artifacts(&self, name: &str) -> Result<PathBuf, String> {
        let dir = self.root.join("artifacts").join(name);
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        Ok(dir)
    }

    /// [`Scratch::spawn`] on the process surface of a request named `name`.
    pub fn spawn_named(
        &self,
        bin: &Path,
        artifacts: &Path,
        name: &str,
        argv: &[&str],
    ) -> Result<Command, String> {
        let request = self
            .root
            .join(format!("request-{}.json", name.replace(' ', "-")));
        let body = serde_json::json!({ "name": name, "task": "benchmark" });
        std::fs::write(&request, body.to_string()).map_err(|e| e.to_string())?;
        let mut cmd = Command::new(bin, CALL_BUDGET)
            .cwd(self.root.join("work"))
            .env("HOME", self.root.join("home"))
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .env_remove("HERDR_ENV")
            .env_remove("HERD_ARTIFACTS")
            .env_remove_prefix("PI_SUBAGENT_")
            .stdin_null()
            .arg("--artifacts")
            .arg(artifacts)
            .args([
                "spawn",
                "--json",
                "--runner",
                "exec",
                "--surface",
                "process",
            ])
            .arg("--request")
            .arg(request)
            .arg("--");
        for a in argv {
            cmd = cmd.arg(a);
        }
        Ok(cmd)
    }

    /// `herd-launch spawn --runner exec --json` of `argv` into `artifacts`, in a hermetic
    /// environment (its own home, no inherited herd or multiplexer variables).
    pub fn spawn(&self, bin: &Path, surface: &str, artifacts: &Path, argv: &[&str]) -> Command {
        self.spawn_request(
            bin,
            surface,
            artifacts,
            &self.root.join("request.json"),
            argv,
        )
    }

    /// [`Scratch::spawn`] of the request in the file `request`.
    pub fn spawn_request(
        &self,
        bin: &Path,
        surface: &str,
        artifacts: &Path,
        request: &Path,
        argv: &[&str],
    ) -> Command {
        let mut cmd = Command::new(bin, CALL_BUDGET)
            .cwd(self.root.join("work"))
            .env("HOME", self.root.join("home"))
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .env_remove("HERDR_ENV")
            .env_remove("HERD_ARTIFACTS")
            .env_remove_prefix("PI_SUBAGENT_")
            .stdin_null()
            .arg("--artifacts")
            .arg(artifacts)
            .args(["spawn", "--json", "--runner", "exec", "--surface", surface])
            .arg("--request")
            .arg(request)
            .arg("--");
        for a in argv {
            cmd = cmd.arg(a);
        }
        cmd
    }
}

impl Drop for Scratch {
    /// Waits (10 s at most) for the launch scripts of every child started here to exit: each
    /// writes its runner's exit record after its child ends, and would otherwise write into the
    /// directory while it is removed.
    fn drop(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let Ok(dirs) = std::fs::read_dir(self.root.join("artifacts")) else {
            return;
        };
        for dir in dirs.filter_map(Result::ok) {
            let art = Artifacts::new(dir.path());
            for id in art.run_ids().unwrap_or_default() {
                if let Ok(Some(leader)) = Record::read(&art.leader(&id)) {
                    identity::wait_exited(&leader, deadline);
                }
            }
        }
    }
}

/// Runs a spawn and checks that it launched; returns its time and `--json` document.
pub fn spawn_once(cmd: &Command) -> Result<(Duration, Value), String> {
    let (took, out) = timed(cmd)?;
    let doc: Value = serde_json::from_slice(&out.stdout.bytes)
        .map_err(|e| format!("herd-launch spawn printed no JSON: {e}"))?;
    if doc["status"] != "launched" {
        return Err(format!(
            "herd-launch spawn answered {}",
            first_line(&doc.to_string())
        ));
    }
    Ok((took, doc))
}

fn process(bin: &Path, rounds: usize) -> Result<Measured, String> {
    let s = Scratch::new("herd-bench-launch")?;
    let sh = Command::new("/bin/sh", CALL_BUDGET)
        .args(["-c", "true"])
        .cwd(s.root().join("work"))
        .stdin_null();
    let mut herd_times = Vec::with_capacity(rounds);
    let mut sh_times = Vec::with_capacity(rounds);
    // Round 0 warms the caches.
    for round in 0..=rounds {
        let artifacts = s.artifacts(&format!("process-{round}"))?;
        let (took, _) = spawn_once(&s.spawn(bin, "process", &artifacts, &["true"]))?;
        let (sh_took, _) = timed(&sh)?;
        if round > 0 {
            herd_times.push(took);
            sh_times.push(sh_took);
        }
    }
    Ok(Measured::new(Quantity::ms(median(&herd_times)), rounds)
        .against("sh -c true", Quantity::ms(median(&sh_times))))
}

/// A spawn (`to_exit`: and its child run to its end) with the person's configuration confining
/// children, against the same unconfined.
fn sandboxed(bin: &Path, rounds: usize, to_exit: bool) -> Result<Measured, String> {
    if !on_path("bwrap") {
        return Err("bwrap is not on PATH (apt-get install bubblewrap)".into());
    }
    let s = Scratch::new("herd-bench-sandbox")?;
    let confined = s.root().join("config-confined");
    std::fs::create_dir_all(confined.join("herd")).map_err(|e| e.to_string())?;
    std::fs::write(
        confined.join("herd/config.toml"),
        "[sandbox]\nmode = \"workspace\"\n",
    )
    .map_err(|e| e.to_string())?;
    let open = s.root().join("config-none");
    let once = |config: &Path, name: String| -> Result<Duration, String> {
        let artifacts = s.artifacts(&name)?;
        let cmd = s
            .spawn(bin, "process", &artifacts, &["true"])
            .env("XDG_CONFIG_HOME", config);
        let started = Instant::now();
        let (took, doc) = spawn_once(&cmd)?;
        if !to_exit {
            return Ok(took);
        }
        let run = doc["run_id"].as_str().unwrap_or_default().to_owned();
        let exit = Artifacts::new(&artifacts).runner_exit(&run);
        while !exit.exists() {
            if started.elapsed() > CALL_BUDGET {
                return Err(format!("run {run} did not end"));
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        Ok(started.elapsed())
    };
    let mut confined_times = Vec::with_capacity(rounds);
    let mut open_times = Vec::with_capacity(rounds);
    // Round 0 warms the caches.
    for round in 0..=rounds {
        let c = once(&confined, format!("confined-{round}"))?;
        let o = once(&open, format!("open-{round}"))?;
        if round > 0 {
            confined_times.push(c);
            open_times.push(o);
        }
    }
    Ok(Measured::new(Quantity::ms(median(&confined_times)), rounds)
        .against("the same unconfined", Quantity::ms(median(&open_times))))
}

fn tmux(bin: &Path, rounds: usize) -> Result<Measured, String> {
    if !on_path("tmux") {
        return Err("tmux is not on PATH (apt-get install tmux)".into());
    }
    let s = Scratch::new("herd-bench-tmux")?;
    let server = TmuxServer::start(s.root())?;
    let result = (|| {
        let mut herd_times = Vec::with_capacity(rounds);
        let mut tmux_times = Vec::with_capacity(rounds);
        for round in 0..=rounds {
            let artifacts = s.artifacts(&format!("tmux-{round}"))?;
            let spawn = s
                .spawn(bin, "tmux", &artifacts, &["true"])
                .env("TMUX", server.tmux_var())
                .env("TMUX_PANE", &server.anchor);
            let (took, doc) = spawn_once(&spawn)?;
            if let Some(pane) = doc["pane_id"].as_str() {
                server.kill_pane(pane);
            }
            let split = server
                .command()
                .args(["split-window", "-d", "-P", "-F", "#{pane_id}", "-t"])
                .arg(&server.anchor)
                .arg("true");
            let (split_took, out) = timed(&split)?;
            server.kill_pane(out.stdout.text().trim());
            if round > 0 {
                herd_times.push(took);
                tmux_times.push(split_took);
            }
        }
        Ok(
            Measured::new(Quantity::ms(median(&herd_times)), rounds).against(
                "tmux split-window -d true",
                Quantity::ms(median(&tmux_times)),
            ),
        )
    })();
    server.stop();
    result
}

/// A tmux server of the bench's own, on a socket in its scratch directory.
pub struct TmuxServer {
    socket: PathBuf,
    pid: u32,
    /// The first pane, which both sides split.
    anchor: String,
}

impl TmuxServer {
    pub fn start(dir: &Path) -> Result<TmuxServer, String> {
        let socket = dir.join("tmux.sock");
        let start = Command::new("tmux", CALL_BUDGET)
            .arg("-S")
            .arg(&socket)
            .args(["-f", "/dev/null", "new-session", "-d", "-s", "bench"])
            .args(["-x", "240", "-y", "80"])
            .args([";", "display-message", "-p", "#{pid} #{pane_id}"])
            .env_remove("TMUX")
            .stdin_null();
        let (_, out) = timed(&start).map_err(|e| format!("cannot start a tmux server: {e}"))?;
        let text = out.stdout.text();
        let mut words = text.split_whitespace();
        let pid = words.next().and_then(|p| p.parse().ok());
        let anchor = words.next().map(str::to_owned);
        match (pid, anchor) {
            (Some(pid), Some(anchor)) => Ok(TmuxServer {
                socket,
                pid,
                anchor,
            }),
            _ => Err(format!(
                "tmux did not name its server: {}",
                first_line(&text)
            )),
        }
    }

    pub fn command(&self) -> Command {
        Command::new("tmux", CALL_BUDGET)
            .arg("-S")
            .arg(&self.socket)
            .env_remove("TMUX")
            .stdin_null()
    }

    /// `TMUX` as tmux sets it inside its panes: socket, server PID, session index.
    pub fn tmux_var(&self) -> OsString {
        let mut v = self.socket.clone().into_os_string();
        v.push(format!(",{},0", self.pid));
        v
    }

    /// The first pane, which both sides split.
    pub fn anchor(&self) -> &str {
        &self.anchor
    }

    pub fn kill_pane(&self, pane: &str) {
        if pane.starts_with('%') && pane != self.anchor {
            // The pane may be gone already: its command was `true`.
            let _ = subprocess::run(&self.command().args(["kill-pane", "-t", pane]));
        }
    }

    /// Kills every window but the anchor's: what a side left running after it answered (a
    /// shell starting in a window it made) is not charged to the next side's round.
    pub fn kill_other_windows(&self) {
        let _ = subprocess::run(
            &self
                .command()
                .args(["kill-window", "-a", "-t", &self.anchor]),
        );
    }

    pub fn stop(&self) {
        let _ = subprocess::run(&self.command().arg("kill-server"));
    }
}
