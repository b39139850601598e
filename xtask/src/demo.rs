//! `cargo xtask demo`: herd's main job on the embedded default, shown as a person wants to see it.
//!
//! In a scratch git repository, on the process surface, one child's whole lifecycle: it is
//! launched into a managed worktree with an accept check, its progress is drawn with the widget,
//! its result arrives as a person reads it (the `Check:` line, the report block, the
//! handoff), the branch it committed on is shown, and its worktree is removed with herd-cleanup.
//!
//! The demo needs only the Rust toolchain and git. Its child is a scripted one (plain `sh`) that
//! follows the on-disk protocol a Pi child follows; `--pi` runs the pinned Pi CLI instead,
//! against a scripted model on 127.0.0.1. Nothing outside the scratch directory is touched: the
//! managed root, the artifacts directory, `HOME` and Pi's agent directory all live in it, and
//! it is removed at the end, after a failure and after Ctrl-C too.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::thread;
use std::time::{Duration, Instant};

use clap::Parser;
use crossbeam_channel::Receiver;
use herd_core::subprocess::{self, Command, Keep, Output};
use herd_core::{Error, ErrorCode};
// The demo builds all six binaries, so the README's first command leaves them ready.
use herd_e2e::BINARIES;
use herd_e2e::model::{DEFAULT_MODEL, ModelServer, Models, PROVIDER};
use herd_protocol::layout::{Artifacts, SessionFiles};
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::demo_child::{self as child, BRANCH, FILE, NAME};
use crate::{cargo, workspace_root};

/// How long the build may take: a first build of the workspace compiles every dependency.
const BUILD_BUDGET: Duration = Duration::from_secs(30 * 60);
/// One git call on the scratch repository.
const GIT_BUDGET: Duration = Duration::from_secs(30);
/// The launch: the worktree, the child's files and the dispatch (herd-launch's own is 45 s).
const SPAWN_BUDGET: Duration = Duration::from_secs(90);
/// The child's whole run, supervised by `herd-watch wait`; the scripted child takes seconds.
const WAIT_BUDGET: Duration = Duration::from_secs(180);
/// One status read, a cancel, a removal.
const STATUS_BUDGET: Duration = Duration::from_secs(15);
const CANCEL_BUDGET: Duration = Duration::from_secs(30);
const CLEANUP_BUDGET: Duration = Duration::from_secs(60);
/// How often the widget is redrawn while the child works.
const POLL: Duration = Duration::from_millis(100);
/// How long a stopped command gets between SIGTERM and SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(1);
/// The exit code after Ctrl-C (128 + SIGINT).
const INTERRUPTED_EXIT: u8 = 130;

/// Run one worktree child's whole lifecycle in a scratch repository, on the process surface.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask demo")]
pub struct Cli {
    /// Run the pinned Pi CLI (tests/pi) as the child, against a scripted model on 127.0.0.1,
    /// instead of the scripted child.
    #[arg(long)]
    pub pi: bool,
}

/// Why the demo stopped early.
#[derive(Debug)]
pub enum Stop {
    /// A step failed; the message says which and why.
    Failed(Error),
    /// SIGINT or SIGTERM arrived.
    Interrupted,
}

impl From<Error> for Stop {
    fn from(err: Error) -> Stop {
        Stop::Failed(err)
    }
}

impl From<io::Error> for Stop {
    fn from(err: io::Error) -> Stop {
        Stop::Failed(Error::internal(format!(
            "cannot write the demo's output: {err}"
        )))
    }
}

impl From<subprocess::Error> for Stop {
    fn from(err: subprocess::Error) -> Stop {
        Stop::Failed(err.into())
    }
}

/// `cargo xtask demo [--pi]`.
pub fn main_impl(args: Vec<OsString>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(if err.exit_code() == 0 { 0 } else { 2 });
        }
    };
    // Ctrl-C stops the step in progress; the demo then cancels its child and removes its
    // scratch directory before it exits.
    let cancel = subprocess::termination_signals().unwrap_or_else(|_| crossbeam_channel::never());
    let mut out = io::stdout().lock();
    match run(&cli, &mut out, &cancel) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Stop::Interrupted) => {
            herd_cli::diagnostic("demo: interrupted");
            ExitCode::from(INTERRUPTED_EXIT)
        }
        Err(Stop::Failed(err)) => {
            herd_cli::diagnostic(&format!("demo failed: {}", err.message));
            ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(1))
        }
    }
}

/// Runs the demo, writing what a person sees to `out`; a message on `cancel` stops it.
///
/// Returns `Ok` only when every step did what it should: the child completed, the check
/// accepted its work, its commit is on the branch, the worktree was removed and the scratch
/// directory is gone.
pub fn run(cli: &Cli, out: &mut dyn Write, cancel: &Receiver<i32>) -> Result<(), Stop> {
    let started = Instant::now();
    writeln!(
        out,
        "herd demo: one worktree child's whole lifecycle, on the process surface\n"
    )?;
    let pi = find_pi();
    let child = match (cli.pi, &pi) {
        (true, Some(pi)) => {
            writeln!(
                out,
                "The child is the pinned Pi CLI ({}) with herd's child extension,\n\
                 talking to a scripted model on 127.0.0.1: no network, no API key.",
                pi.display()
            )?;
            Child::Pi(pi.clone())
        }
        (true, None) => {
            return Err(Error::new(
                ErrorCode::Unavailable,
                format!(
                    "Pi is not installed here ({}): run `npm ci --ignore-scripts` in {}, or run the demo without --pi",
                    pinned_pi().display(),
                    herd_e2e::pi::pi_dir().display()
                ),
            )
            .into());
        }
        (false, Some(_)) => {
            writeln!(
                out,
                "This demo runs a scripted child that follows the same on-disk protocol as Pi;\n\
                 `cargo xtask demo --pi` runs the pinned Pi CLI instead, against a scripted model."
            )?;
            Child::Scripted
        }
        (false, None) => {
            writeln!(
                out,
                "Pi is not installed here: this demo runs a scripted child that follows the same\n\
                 on-disk protocol."
            )?;
            Child::Scripted
        }
    };
    writeln!(out)?;
    check_git(cancel)?;
    if let Child::Pi(pi) = &child {
        check_pi(pi, cancel)?;
    }

    step(out, "building the binaries (cargo build)")?;
    let bins = build::build(cancel)?;
    if let (Child::Pi(_), Some(dir)) = (&child, bins.dir()) {
        heading(
            out,
            "a real parent: Pi with herd's parent extension delegates to a Pi child",
        )?;
        crate::demo_parent::run(dir, out)?;
        heading(
            out,
            "the same host, driven by hand: a worktree child with a check",
        )?;
    }
    let mut demo = Demo::new(bins, child)?;
    let result = demo.lifecycle(out, cancel);
    let closed = demo.close();
    let mut note = String::new();
    for (run_id, confirmed) in &closed.cancelled {
        if *confirmed {
            note.push_str(&format!("run {run_id} is cancelled; "));
        } else {
            note.push_str(&format!("the cancel of run {run_id} is not confirmed; "));
        }
    }
    match &closed.removed {
        Ok(()) => note.push_str(&format!(
            "the scratch directory {} is removed",
            demo.root.display()
        )),
        Err(err) => note.push_str(&format!(
            "the scratch directory {} could not be removed: {err}",
            demo.root.display()
        )),
    }
    if result.is_err() {
        // The failure itself goes to stderr; this says what was undone.
        let _ = writeln!(out, "\n{note}.");
    }
    result?;
    if closed.removed.is_err() {
        return Err(Error::new(ErrorCode::Unavailable, note).into());
    }

    writeln!(out, "\ndone in {} s; {note}.", started.elapsed().as_secs())?;
    Ok(())
}

/// Which child runs.
#[derive(Debug, Clone)]
enum Child {
    /// `sh` running [`child::SCRIPTED_CHILD`].
    Scripted,
    /// The Pi CLI at this path.
    Pi(PathBuf),
}

/// Where the built binaries are.
#[derive(Debug, Clone)]
struct Binaries {
    paths: BTreeMap<String, PathBuf>,
}

impl Binaries {
    fn get<'a>(&'a self, name: &'a str) -> &'a Path {
        // Every name asked for is one of BINARIES, which `build` checked are all present.
        self.paths
            .get(name)
            .map_or(Path::new(name), PathBuf::as_path)
    }

    /// The directory of the binaries, for herd's own sibling lookups.
    fn dir(&self) -> Option<&Path> {
        self.paths.values().next().and_then(|p| p.parent())
    }
}

/// The scratch directory, the child's run and what must be undone.
struct Demo {
    bins: Binaries,
    child: Child,
    /// The scripted model of a Pi child; stopped when the demo closes.
    model: Option<ModelServer>,
    /// The canonical path of the scratch directory.
    root: PathBuf,
    /// Removed when the demo closes (or, as a last resort, when dropped).
    dir: Option<TempDir>,
}

impl Demo {
    fn new(bins: Binaries, child: Child) -> Result<Demo, Stop> {
        let dir = tempfile::Builder::new()
            .prefix("herd-demo-")
            .tempdir()
            .map_err(|e| {
                Error::new(
                    ErrorCode::Unavailable,
                    format!("cannot create a scratch directory: {e}"),
                )
            })?;
        // Canonical, so every path herd prints (and compares) is the same one.
        let root = dir.path().canonicalize().map_err(|e| {
            Error::new(
                ErrorCode::Unavailable,
                format!("cannot resolve {}: {e}", dir.path().display()),
            )
        })?;
        Ok(Demo {
            bins,
            child,
            model: None,
            root,
            dir: Some(dir),
        })
    }

    fn repo(&self) -> PathBuf {
        self.root.join("repo")
    }

    /// The whole lifecycle, after the build.
    fn lifecycle(&mut self, out: &mut dyn Write, cancel: &Receiver<i32>) -> Result<(), Stop> {
        self.make_repo(cancel)?;
        step(
            out,
            &format!(
                "a scratch git repository: {}\n  {FILE} says \"hello\"; `{}` wants \"hello, world\"",
                self.repo().display(),
                child::CHECK_RUN
            ),
        )?;
        if let Child::Pi(_) = self.child {
            self.start_model()?;
        }
        self.choose_sandbox(out)?;
        step(
            out,
            &format!(
                "launching \"{NAME}\" in a worktree on branch {BRANCH}, with the accept check `{}`",
                child::CHECK_RUN
            ),
        )?;
        let ack = self.spawn(cancel)?;
        let run_id = str_field(&ack, "run_id")?;
        let worktree = PathBuf::from(str_field(&ack["worktree"], "path")?);
        writeln!(
            out,
            "  run {run_id}, worktree {}\n  (herd-launch spawn --surface process --runner {})",
            worktree.display(),
            match self.child {
                Child::Scripted => "exec",
                Child::Pi(_) => "pi",
            }
        )?;

        heading(out, "while it works: herd-watch status --widget")?;
        let result = self.watch(out, &run_id, cancel)?;

        heading(out, "the result: herd-watch wait")?;
        // As `herd-watch wait` shows it to a person: the lines written for the parent's model
        // (`--json`'s `message` keeps them) are left out.
        let message = herd_core::escape::for_people(&str_field(&result, "message")?);
        writeln!(out, "{message}")?;
        let outcome = result["outcome"].as_str().unwrap_or("unknown");
        if outcome != "completed" {
            return Err(failed(format!(
                "the child did not complete: its outcome is {outcome}"
            )));
        }
        let verdict = result["details"]["accept"]["verdict"]
            .as_str()
            .unwrap_or("unknown");
        if verdict != "accepted" {
            return Err(failed(format!(
                "the parent re-check did not accept the child's work: {verdict}"
            )));
        }

        heading(
            out,
            &format!("the handoff: what the child left on {BRANCH}"),
        )?;
        self.show_handoff(out, cancel)?;

        heading(out, &format!("the cleanup: herd-cleanup remove {BRANCH}"))?;
        // Pi reports its result and then shuts down; the checkout is free once the child exited.
        wait_child_exit(&result);
        self.remove_worktree(out, &worktree, cancel)?;
        Ok(())
    }

    /// The scratch repository: one commit with the greeting and its check.
    fn make_repo(&self, cancel: &Receiver<i32>) -> Result<(), Stop> {
        let repo = self.repo();
        for dir in [
            repo.clone(),
            self.root.join("home"),
            self.root.join("agent"),
        ] {
            create_dir(&dir)?;
        }
        self.git(&["init", "-q"], cancel)?;
        // `git init -b` needs git 2.28; this names the first branch on any version.
        self.git(&["symbolic-ref", "HEAD", "refs/heads/main"], cancel)?;
        write_file(&repo.join(FILE), child::BEFORE)?;
        write_file(&repo.join(child::CHECK_FILE), child::CHECK_SCRIPT)?;
        self.git(&["add", FILE, child::CHECK_FILE], cancel)?;
        self.git(&["commit", "-q", "-m", "A greeting and its check"], cancel)?;
        Ok(())
    }

    /// Children are confined by default; on a machine without bubblewrap the scratch child runs
    /// unconfined, as the scratch person's own configuration says, and the demo says so and why.
    fn choose_sandbox(&self, out: &mut dyn Write) -> Result<(), Stop> {
        let path = std::env::var_os("PATH");
        if herd_sandbox::bwrap::find(path.as_deref()).is_some() {
            step(
                out,
                "the child is confined (sandbox workspace: its worktree and nothing else of yours)",
            )?;
            return Ok(());
        }
        let config = self.root.join("home/.config/herd");
        create_dir(&config)?;
        write_file(&config.join("config.toml"), "[sandbox]\nmode = \"off\"\n")?;
        step(
            out,
            "the child runs unconfined: bubblewrap is not installed here, and herd never confines \
             silently; `apt-get install bubblewrap` confines every child (docs/sandbox.md)",
        )?;
        Ok(())
    }

    /// Starts the scripted model and points Pi's agent directory at it.
    fn start_model(&mut self) -> Result<(), Stop> {
        let models = Models::new().model(DEFAULT_MODEL, child::pi_model_script());
        let server = ModelServer::spawn(models, 0, None).map_err(|e| {
            Error::new(
                ErrorCode::Unavailable,
                format!("cannot start the scripted model on 127.0.0.1: {e}"),
            )
        })?;
        let agent = self.root.join("agent");
        let models_json = json!({ "providers": { PROVIDER: {
            "baseUrl": server.base_url(),
            "api": "openai-completions",
            "apiKey": "scripted",
            "compat": { "supportsDeveloperRole": false, "supportsReasoningEffort": false },
            "models": [{ "id": DEFAULT_MODEL, "reasoning": false, "input": ["text"], "contextWindow": 128_000, "maxTokens": 4096 }],
        }}});
        // Retries off: a failure of the scripted model is a failure of the demo, at once.
        let settings = json!({ "quietStartup": true, "retry": { "enabled": false, "provider": { "maxRetries": 0 } } });
        write_file(&agent.join("models.json"), &models_json.to_string())?;
        write_file(&agent.join("settings.json"), &settings.to_string())?;
        self.model = Some(server);
        Ok(())
    }

    /// `herd-launch spawn`: the `subagent` tool's parameters, verbatim, from a file.
    fn spawn(&self, cancel: &Receiver<i32>) -> Result<Value, Stop> {
        let mut request = json!({
            "name": NAME,
            "task": child::TASK,
            "cwd": self.repo(),
            "worktree": { "branch": BRANCH },
            "accept": { "run": child::CHECK_RUN },
        });
        let request_file = self.root.join("request.json");
        let mut cmd = self
            .herd("herd-launch", SPAWN_BUDGET)
            .args(["spawn", "--request"])
            .arg(&request_file)
            .args(["--surface", "process", "--json"]);
        match &self.child {
            Child::Scripted => {
                let script = self.root.join("child.sh");
                write_file(&script, child::SCRIPTED_CHILD)?;
                cmd = cmd
                    .args(["--runner", "exec", "--", "sh"])
                    .arg(script)
                    .arg(self.bins.get("herd-accept"));
            }
            Child::Pi(_) => {
                request["model"] = format!("{PROVIDER}/{DEFAULT_MODEL}").into();
                cmd = cmd.args(["--runner", "pi"]);
            }
        }
        write_file(&request_file, &request.to_string())?;
        let out = run_step(&cmd, cancel)?;
        let ack = json_doc(&out, "herd-launch spawn")?;
        if ack["status"] != "launched" {
            return Err(failed(format!(
                "herd-launch spawn did not launch the child ({}): {}",
                ack["status"].as_str().unwrap_or("unknown"),
                ack["launch_failure"]
                    .as_str()
                    .or_else(|| ack["error"]["message"].as_str())
                    .unwrap_or("no reason given")
            )));
        }
        Ok(ack)
    }

    /// Supervises the run with `herd-watch wait` while drawing the widget whenever the run's
    /// label changes; returns the delivered result.
    fn watch(
        &self,
        out: &mut dyn Write,
        run_id: &str,
        cancel: &Receiver<i32>,
    ) -> Result<Value, Stop> {
        let wait = self
            .herd("herd-watch", WAIT_BUDGET)
            .args(["wait", "--run", run_id, "--json"]);
        let (stop_wait, stopped) = crossbeam_channel::bounded::<()>(1);
        let waiter = thread::Builder::new()
            .name("demo-wait".into())
            .spawn(move || subprocess::run_with_cancel(&wait, &stopped, STOP_GRACE))
            .map_err(|e| Error::internal(format!("cannot start the wait: {e}")))?;
        if let Err(stop) = self.draw_widgets(out, run_id, &waiter, cancel) {
            let _ = stop_wait.send(());
            let _ = waiter.join();
            return Err(stop);
        }
        let waited = waiter
            .join()
            .map_err(|_| Error::internal("the wait thread panicked"))??;
        if waited.cancelled {
            return Err(Stop::Interrupted);
        }
        json_doc(&waited, "herd-watch wait")
    }

    /// Draws the widget whenever the run's label changes, until `waiter` is done.
    fn draw_widgets<T>(
        &self,
        out: &mut dyn Write,
        run_id: &str,
        waiter: &thread::JoinHandle<T>,
        cancel: &Receiver<i32>,
    ) -> Result<(), Stop> {
        let deadline = Instant::now() + WAIT_BUDGET + 2 * STOP_GRACE + STATUS_BUDGET;
        let mut shown: Option<(Value, Value)> = None;
        while !waiter.is_finished() {
            if Instant::now() > deadline {
                return Err(Error::new(
                    ErrorCode::Timeout,
                    "herd-watch wait did not return in time",
                )
                .into());
            }
            if cancel.recv_timeout(POLL).is_ok() {
                return Err(Stop::Interrupted);
            }
            let status = self
                .herd("herd-watch", STATUS_BUDGET)
                .args(["status", "--widget", "--json"]);
            let doc = json_doc(&run_step(&status, cancel)?, "herd-watch status")?;
            let Some(run) = doc["runs"]
                .as_array()
                .and_then(|runs| runs.iter().find(|r| r["run_id"] == run_id))
            else {
                continue;
            };
            if run["outcome"].is_string() {
                // Settled: the result comes next, and an empty widget says nothing.
                continue;
            }
            // Redrawn when what it says changes, not when its clock ticks.
            let key = (run["label"].clone(), run["detail"].clone());
            if shown.as_ref() != Some(&key) {
                write!(out, "{}", doc["widget"].as_str().unwrap_or_default())?;
                shown = Some(key);
            }
        }
        Ok(())
    }

    /// The branch the child committed on: its commit and its diff against `main`.
    fn show_handoff(&self, out: &mut dyn Write, cancel: &Receiver<i32>) -> Result<(), Stop> {
        let range = format!("main..{BRANCH}");
        let log = self.git(&["log", "--oneline", "--no-decorate", &range], cancel)?;
        let diff = self.git(&["diff", "--no-color", "main", BRANCH], cancel)?;
        writeln!(out, "$ git log --oneline {range}")?;
        write!(out, "{log}")?;
        writeln!(out, "$ git diff main {BRANCH}")?;
        write!(out, "{diff}")?;
        let commits = log.lines().count();
        let content = self.git(&["show", &format!("{BRANCH}:{FILE}")], cancel)?;
        if commits != 1 || content != child::AFTER {
            return Err(failed(format!(
                "the branch {BRANCH} should hold one commit changing {FILE} to {:?}; it holds {commits} and says {content:?}",
                child::AFTER
            )));
        }
        Ok(())
    }

    /// `herd-cleanup remove`: the checkout goes, the branch and its commit stay.
    fn remove_worktree(
        &self,
        out: &mut dyn Write,
        worktree: &Path,
        cancel: &Receiver<i32>,
    ) -> Result<(), Stop> {
        let cmd = self
            .herd("herd-cleanup", CLEANUP_BUDGET)
            .args(["remove", BRANCH, "--session-cwd"])
            .arg(self.repo());
        let removed = run_step(&cmd, cancel)?;
        write!(out, "{}", removed.stdout.text())?;
        if !removed.success() {
            return Err(failed(format!(
                "herd-cleanup remove exited {}: {}",
                exit_text(&removed),
                removed.stderr.text().trim()
            )));
        }
        if worktree.exists() {
            return Err(failed(format!(
                "herd-cleanup reported the removal, but {} still exists",
                worktree.display()
            )));
        }
        let kept = self.git(&["branch", "--list", BRANCH], cancel)?;
        if kept.trim().is_empty() {
            return Err(failed(format!("the branch {BRANCH} is gone")));
        }
        writeln!(
            out,
            "\nThe branch {BRANCH} keeps the child's commit for review; its checkout is gone:"
        )?;
        let list = self.git(&["worktree", "list"], cancel)?;
        write!(out, "$ git worktree list\n{list}")?;
        Ok(())
    }

    /// A herd binary with the scratch environment: its own artifacts directory, managed root,
    /// `HOME` and Pi agent directory, hermetic git, and nothing inherited from a surrounding
    /// herd, Pi, Herdr or tmux session.
    fn herd(&self, name: &str, budget: Duration) -> Command {
        let mut cmd = Command::new(self.bins.get(name), budget)
            .cwd(self.repo())
            .stdout_cap(4 * 1024 * 1024, Keep::Head)
            .stderr_cap(256 * 1024, Keep::Tail)
            .grace(STOP_GRACE);
        for prefix in ["HERD_", "HERDR_", "PI_", "TMUX", "GIT_"] {
            cmd = cmd.env_remove_prefix(prefix);
        }
        // The scratch person's configuration is the one under its HOME.
        cmd = cmd.env_remove("XDG_CONFIG_HOME");
        cmd = cmd
            .env("HERD_ARTIFACTS", self.root.join("artifacts"))
            .env("HERD_WORKTREE_ROOT", self.root.join("worktrees"))
            .env("HOME", self.root.join("home"))
            .env("PI_CODING_AGENT_DIR", self.root.join("agent"));
        if let Some(dir) = self.bins.dir() {
            cmd = cmd.env(subprocess::BIN_DIR_ENV, dir);
        }
        if let Child::Pi(pi) = &self.child {
            cmd = cmd
                .env(HERD_PI_ENV, pi)
                .env("PI_OFFLINE", "1")
                .env("PI_TELEMETRY", "0")
                .env("PI_SKIP_VERSION_CHECK", "1");
        }
        for (key, value) in GIT_ENV {
            cmd = cmd.env(key, value);
        }
        cmd
    }

    /// Runs git in the scratch repository; returns its stdout.
    fn git(&self, args: &[&str], cancel: &Receiver<i32>) -> Result<String, Stop> {
        let mut cmd = Command::new("git", GIT_BUDGET)
            .args(args)
            .cwd(self.repo())
            .env_remove_prefix("GIT_");
        for (key, value) in GIT_ENV {
            cmd = cmd.env(key, value);
        }
        let out = run_step(&cmd, cancel)?;
        if !out.success() {
            return Err(failed(format!(
                "git {} exited {}: {}",
                args.join(" "),
                exit_text(&out),
                out.stderr.text().trim()
            )));
        }
        Ok(out.stdout.text().into_owned())
    }

    /// Cancels a run still open, stops the scripted model and removes the scratch directory.
    fn close(&mut self) -> Closed {
        // Every run without a result, whatever the demo knows of it: a launch stopped by Ctrl-C
        // may have dispatched its child before it could say so.
        let cancelled = self
            .unsettled_runs()
            .into_iter()
            .map(|run_id| {
                let cancel = self
                    .herd("herd-watch", CANCEL_BUDGET)
                    .args(["cancel", "--run", &run_id, "--json"]);
                // Not cancellable itself: a second Ctrl-C must not leave the child running.
                let confirmed = subprocess::run(&cancel).is_ok_and(|out| out.success());
                (run_id, confirmed)
            })
            .collect();
        self.model = None;
        let removed = match self.dir.take() {
            Some(dir) => dir.close(),
            None => Ok(()),
        };
        Closed { cancelled, removed }
    }

    /// The runs of the scratch artifacts directory that have no delivered result.
    fn unsettled_runs(&self) -> Vec<String> {
        let artifacts = Artifacts::new(self.root.join("artifacts"));
        let mut ids = artifacts.run_ids().unwrap_or_default();
        ids.retain(|id| !artifacts.run_result(id).exists());
        ids
    }
}

/// What closing the demo undid.
struct Closed {
    /// The runs that were still open, and whether each cancel was confirmed.
    cancelled: Vec<(String, bool)>,
    removed: io::Result<()>,
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

/// The variable that names the Pi executable to herd-launch.
const HERD_PI_ENV: &str = "HERD_PI";

/// Hermetic git: no user or system configuration, a fixed author.
const GIT_ENV: [(&str, &str); 6] = [
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_AUTHOR_NAME", "herd demo"),
    ("GIT_AUTHOR_EMAIL", "demo@herd.invalid"),
    ("GIT_COMMITTER_NAME", "herd demo"),
    ("GIT_COMMITTER_EMAIL", "demo@herd.invalid"),
];

/// Runs `cmd`, stopping it on Ctrl-C.
fn run_step(cmd: &Command, cancel: &Receiver<i32>) -> Result<Output, Stop> {
    let out = subprocess::run_with_cancel(cmd, cancel, STOP_GRACE)?;
    if out.cancelled {
        return Err(Stop::Interrupted);
    }
    if out.timed_out {
        return Err(Error::new(
            ErrorCode::Timeout,
            format!(
                "{} did not finish within {} s",
                Path::new(cmd.program()).display(),
                cmd.budget().as_secs()
            ),
        )
        .into());
    }
    Ok(out)
}

/// The one JSON document a herd binary printed with `--json`; its error document is a failure.
fn json_doc(out: &Output, what: &str) -> Result<Value, Stop> {
    let doc: Value = serde_json::from_slice(&out.stdout.bytes).map_err(|_| {
        failed(format!(
            "{what} exited {} without a JSON document: {}",
            exit_text(out),
            out.stderr.text().trim()
        ))
    })?;
    if let Some(message) = doc["error"]["message"].as_str() {
        return Err(failed(format!(
            "{what} exited {}: {message}",
            exit_text(out)
        )));
    }
    Ok(doc)
}

fn str_field(doc: &Value, key: &str) -> Result<String, Stop> {
    doc[key]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| failed(format!("the answer has no `{key}`: {doc}")))
}

fn exit_text(out: &Output) -> String {
    match (out.code, out.signal) {
        (Some(code), _) => code.to_string(),
        (None, Some(signal)) => format!("on signal {signal}"),
        (None, None) => "without a status".to_owned(),
    }
}

fn failed(message: String) -> Stop {
    Stop::Failed(Error::new(ErrorCode::Internal, message))
}

fn check_git(cancel: &Receiver<i32>) -> Result<(), Stop> {
    let out = subprocess::run_with_cancel(
        &Command::new("git", GIT_BUDGET).arg("--version"),
        cancel,
        STOP_GRACE,
    );
    match out {
        Ok(out) if out.cancelled => Err(Stop::Interrupted),
        Ok(out) if out.success() => Ok(()),
        _ => Err(Error::new(
            ErrorCode::Unavailable,
            "git is not installed: the demo needs git on PATH",
        )
        .into()),
    }
}

/// Pi starts at all (`pi --version`): the pinned wrapper brings its own Node.js, another Pi
/// needs one on `PATH` that is new enough.
fn check_pi(pi: &Path, cancel: &Receiver<i32>) -> Result<(), Stop> {
    let out = subprocess::run_with_cancel(
        &Command::new(pi, GIT_BUDGET).arg("--version"),
        cancel,
        STOP_GRACE,
    );
    match out {
        Ok(out) if out.cancelled => Err(Stop::Interrupted),
        Ok(out) if out.success() => Ok(()),
        Ok(out) => Err(Error::new(
            ErrorCode::Unavailable,
            format!(
                "Pi ({}) does not start: {}; run the demo without --pi",
                pi.display(),
                out.stderr.text().trim()
            ),
        )
        .into()),
        Err(err) => Err(Error::new(
            ErrorCode::Unavailable,
            format!(
                "Pi ({}) does not start: {err}; run the demo without --pi",
                pi.display()
            ),
        )
        .into()),
    }
}

/// The pinned Pi CLI, or the one `$HERD_E2E_PI` names, when it is installed.
fn find_pi() -> Option<PathBuf> {
    herd_e2e::pi::pi_available().then(pinned_pi)
}

fn pinned_pi() -> PathBuf {
    herd_e2e::pi::pi_path()
}

fn create_dir(dir: &Path) -> Result<(), Stop> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Stop::Failed(Error::new(
            ErrorCode::Unavailable,
            format!("cannot create {}: {e}", dir.display()),
        ))
    })
}

fn write_file(path: &Path, text: &str) -> Result<(), Stop> {
    std::fs::write(path, text).map_err(|e| {
        Stop::Failed(Error::new(
            ErrorCode::Unavailable,
            format!("cannot write {}: {e}", path.display()),
        ))
    })
}

/// One line of progress.
fn step(out: &mut dyn Write, text: &str) -> io::Result<()> {
    writeln!(out, "· {text}")
}

/// The heading of a section.
fn heading(out: &mut dyn Write, text: &str) -> io::Result<()> {
    writeln!(out, "\n── {text} ──")
}

/// Waits (at most 30 s) until the child of `result` has exited, judged by its recorded identity;
/// a child without one has nothing to wait for.
fn wait_child_exit(result: &serde_json::Value) {
    let Some(session) = result["details"]["sessionFile"].as_str() else {
        return;
    };
    let files = SessionFiles::new(session);
    if let Ok(Some(child)) = files.read::<herd_core::identity::Record>() {
        let _ = herd_core::identity::wait_exited(
            &child,
            std::time::Instant::now() + std::time::Duration::from_secs(30),
        );
    }
}

mod build;
#[cfg(test)]
mod tests;
