//! The herd binaries driving real Pi children: one artifacts directory, one surface (a private
//! tmux server or detached processes), and every command bounded.
//!
//! ```no_run
//! use herd_e2e::herd::{Herd, Where};
//! use herd_e2e::model::{ModelServer, Script, Text};
//! use herd_e2e::pi::PiEnv;
//! let model = ModelServer::start(Script::new().step(Text("DONE")));
//! let env = PiEnv::new(&model);
//! let herd = Herd::new(&env, Where::Process);
//! let ack = herd.spawn(&serde_json::json!({"name": "Scout", "task": "look", "model": Herd::model("fake-model")}));
//! let (code, result) = herd.wait(ack["run_id"].as_str().unwrap_or_default());
//! assert_eq!(code, 0, "{result}");
//! ```

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_protocol::launch::LaunchAck;
use herd_protocol::run::RunRecord;
use herd_protocol::watch::{WatchEvent, WatchWait};
use serde_json::Value;

use crate::cli::{self, Run};
use crate::herdr::HerdrServer;
use crate::pi::{PiEnv, pi_bin};
use crate::proc;
use crate::tmux::Tmux;

/// The time one herd command may take; `wait` and `follow` include a Pi child's whole life.
pub const HERD_BUDGET: Duration = Duration::from_secs(90);

/// Where the children run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Where {
    /// Detached processes, Pi in print mode.
    Process,
    /// Panes of a private tmux server, Pi interactive.
    Tmux,
    /// Panes of a private headless Herdr server, Pi interactive; the herd programs run as if
    /// in the parent's pane (its `HERDR_*` environment).
    Herdr,
}

impl Where {
    /// The `--surface` value.
    pub fn surface(self) -> &'static str {
        match self {
            Where::Process => "process",
            Where::Tmux => "tmux",
            Where::Herdr => "herdr",
        }
    }
}

/// One artifacts directory of a [`PiEnv`], and the surface its children run on.
pub struct Herd<'env> {
    env: &'env PiEnv,
    place: Where,
    tmux: Option<Tmux>,
    herdr: Option<HerdrServer>,
    artifacts: PathBuf,
    vars: Vec<(OsString, OsString)>,
    serial: std::cell::Cell<usize>,
}

impl<'env> Herd<'env> {
    /// Creates the artifacts directory `<env root>/artifacts` and, for [`Where::Tmux`], starts a
    /// private tmux server with the environment's variables.
    ///
    /// # Panics
    ///
    /// When Pi is not installed (a scenario that needs it fails without it), or the directory or
    /// the tmux server cannot be made.
    pub fn new(env: &'env PiEnv, place: Where) -> Herd<'env> {
        Herd::try_new(env, place, "this scenario")
            .unwrap_or_else(|| panic!("{} needs a real Herdr", place.surface()))
    }

    /// Like [`Herd::new`]; `None` for [`Where::Herdr`] without a Herdr, after saying on stderr
    /// that `test` did not run (with `CI` set it panics instead).
    ///
    /// # Panics
    ///
    /// As [`Herd::new`].
    pub fn try_new(env: &'env PiEnv, place: Where, test: &str) -> Option<Herd<'env>> {
        let artifacts = env.root().join("artifacts");
        std::fs::create_dir_all(&artifacts).expect("the artifacts directory can be created");
        let mut vars: Vec<(OsString, OsString)> = vec![
            ("HERD_PI".into(), pi_bin().into_os_string()),
            ("HERD_ARTIFACTS".into(), artifacts.clone().into_os_string()),
            // No no-progress notices in the middle of a scenario's events.
            ("HERD_HANG_WARNING_SECS".into(), "0".into()),
            // Where a child finds the herd programs (to launch children of its own).
            ("HERD_BIN_DIR".into(), bin_dir().into_os_string()),
        ];
        let tmux = match place {
            Where::Process => None,
            Where::Tmux => {
                let tmux = Tmux::start(env.vars());
                vars.push(("HERD_TMUX_SOCKET".into(), tmux.socket_path().into()));
                Some(tmux)
            }
            Where::Herdr => None,
        };
        let herdr = match place {
            Where::Herdr => {
                let herdr = HerdrServer::start(test, env.vars())?;
                let (_, pane) = herdr.workspace(&env.work_dir());
                vars.extend(herdr.pane_vars(&pane));
                Some(herdr)
            }
            _ => None,
        };
        Some(Herd {
            env,
            place,
            tmux,
            herdr,
            artifacts,
            vars,
            serial: std::cell::Cell::new(0),
        })
    }

    /// Returns the private Herdr server, for [`Where::Herdr`].
    pub fn herdr(&self) -> Option<&HerdrServer> {
        self.herdr.as_ref()
    }

    /// Returns the parent's pane the herd programs run in, for [`Where::Herdr`].
    pub fn parent_pane(&self) -> Option<&str> {
        self.vars
            .iter()
            .find(|(k, _)| k == "HERDR_PANE_ID")
            .and_then(|(_, v)| v.to_str())
    }

    /// Returns the private Herdr server, for [`Where::Herdr`], to stop or restart it.
    pub fn herdr_mut(&mut self) -> Option<&mut HerdrServer> {
        self.herdr.as_mut()
    }

    /// Returns the `model` value of a request for model `id` of the scripted server.
    pub fn model(id: &str) -> String {
        PiEnv::model_arg(id)
    }

    /// Returns where the children run.
    pub fn place(&self) -> Where {
        self.place
    }

    /// Returns the Pi environment.
    pub fn env(&self) -> &PiEnv {
        self.env
    }

    /// Returns the artifacts directory.
    pub fn artifacts(&self) -> &Path {
        &self.artifacts
    }

    /// Returns the private tmux server, for [`Where::Tmux`].
    pub fn tmux(&self) -> Option<&Tmux> {
        self.tmux.as_ref()
    }

    /// Sets one more variable for every herd command (and so for the children they start).
    pub fn set_var(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) {
        self.vars
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
    }

    /// Runs the herd binary `name` with `args` in `cwd`, within [`HERD_BUDGET`].
    pub fn run_in<I, S>(&self, cwd: &Path, name: &str, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        cli::try_run(&self.command_in(cwd, name, args))
    }

    /// The command [`Herd::run_in`] runs, for a test that runs several at once.
    pub fn command_in<I, S>(
        &self,
        cwd: &Path,
        name: &str,
        args: I,
    ) -> herd_core::subprocess::Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = cli::within(crate::bin(name), HERD_BUDGET)
            .env_clear()
            .cwd(cwd)
            .args(args.into_iter().map(|a| a.as_ref().to_owned()));
        for (k, v) in self.env.vars().iter().chain(&self.vars) {
            cmd = cmd.env(k, v);
        }
        cmd
    }

    /// Runs the herd binary `name` with `args` in the environment's work directory.
    pub fn run<I, S>(&self, name: &str, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.run_in(&self.env.work_dir(), name, args)
    }

    /// Launches `request` (the `subagent` tool's parameters) as a Pi child on this surface, from
    /// the work directory; returns the acknowledgement.
    ///
    /// # Panics
    ///
    /// When the launch is not `launched`.
    pub fn spawn(&self, request: &Value) -> Value {
        self.spawn_in(&self.env.work_dir(), request)
    }

    /// Like [`Herd::spawn`], from `cwd`.
    ///
    /// # Panics
    ///
    /// When the launch is not `launched`.
    pub fn spawn_in(&self, cwd: &Path, request: &Value) -> Value {
        let path = self
            .env
            .root()
            .join(format!("request-{}.json", self.next_serial()));
        std::fs::write(&path, request.to_string()).expect("the request can be written");
        let mut args: Vec<OsString> = vec!["spawn".into(), "--request".into(), path.into()];
        args.extend(["--surface", self.place.surface(), "--json"].map(OsString::from));
        let out = self.run_in(cwd, "herd-launch", &args);
        let ack = json_doc(&out);
        assert!(
            out.success() && ack["status"] == "launched",
            "herd-launch spawn:\n{out}"
        );
        ack
    }

    /// [`Herd::spawn`], the acknowledgement decoded.
    ///
    /// # Panics
    ///
    /// As [`Herd::spawn`], and when the acknowledgement is not a [`LaunchAck`].
    pub fn launch(&self, request: &Value) -> LaunchAck {
        decode(&self.spawn(request))
    }

    /// [`Herd::spawn_in`], the acknowledgement decoded.
    ///
    /// # Panics
    ///
    /// As [`Herd::spawn_in`], and when the acknowledgement is not a [`LaunchAck`].
    pub fn launch_in(&self, cwd: &Path, request: &Value) -> LaunchAck {
        decode(&self.spawn_in(cwd, request))
    }

    /// [`Herd::wait`], the settled result decoded.
    ///
    /// # Panics
    ///
    /// When `herd-watch wait` times out or prints no [`WatchWait`].
    pub fn wait_result(&self, run_id: &str) -> (i32, WatchWait) {
        let (code, doc) = self.wait(run_id);
        (code, decode(&doc))
    }

    /// Runs `herd-watch wait --run <id> --json`; returns its exit code and document.
    pub fn wait(&self, run_id: &str) -> (i32, Value) {
        let out = self.run("herd-watch", ["wait", "--run", run_id, "--json"]);
        assert!(!out.timed_out, "herd-watch wait timed out:\n{out}");
        (out.code, json_doc(&out))
    }

    /// Runs `herd-watch follow --json` until no run is left; returns its events.
    ///
    /// # Panics
    ///
    /// When it does not end within [`HERD_BUDGET`] or fails.
    pub fn follow(&self) -> Vec<Value> {
        let out = self.run("herd-watch", ["follow", "--json"]);
        assert!(out.success(), "herd-watch follow:\n{out}");
        json_lines(&out.stdout)
    }

    /// Runs `herd-watch follow --json --forever` until `done` holds (it looks at the disk, e.g.
    /// for a delivered marker) or `budget` is spent, then stops it; returns its events.
    ///
    /// # Panics
    ///
    /// When herd-watch cannot be started, or `done` does not hold within `budget`.
    pub fn follow_until(
        &self,
        what: &str,
        budget: Duration,
        mut done: impl FnMut() -> bool,
    ) -> Vec<Value> {
        use std::os::unix::process::CommandExt;
        let out_path = self
            .env
            .root()
            .join(format!("follow-{}.jsonl", self.next_serial()));
        let out = std::fs::File::create(&out_path).expect("the follow output can be created");
        let mut cmd = self.env.command(crate::bin("herd-watch"));
        cmd.envs(self.vars.iter().map(|(k, v)| (k, v)))
            .args(["follow", "--json", "--forever"])
            .stdin(std::process::Stdio::null())
            .stdout(out)
            .stderr(std::process::Stdio::null())
            .process_group(0);
        #[expect(
            clippy::disallowed_methods,
            reason = "a follow stopped by the test once what it waits for is on disk"
        )]
        let mut child = cmd.spawn().expect("herd-watch starts");
        let reached = crate::wait::try_wait_for(budget, || done().then_some(()));
        proc::signal_group(child.id(), libc::SIGTERM);
        let exited = crate::wait::try_wait_for(Duration::from_secs(5), || {
            child.try_wait().ok().flatten().map(|_| ())
        });
        if exited.is_none() {
            proc::signal_group(child.id(), libc::SIGKILL);
            let _ = child.wait();
        }
        assert!(
            reached.is_some(),
            "timed out after {budget:?} following until {what}"
        );
        read_text(&out_path)
            .map(|t| json_lines(&t))
            .unwrap_or_default()
    }

    fn next_serial(&self) -> usize {
        let serial = self.serial.get();
        self.serial.set(serial + 1);
        serial
    }

    /// Returns the run record `runs/<id>.json`.
    ///
    /// # Panics
    ///
    /// When it cannot be read.
    pub fn record(&self, run_id: &str) -> Value {
        read_json(&self.artifacts.join("runs").join(format!("{run_id}.json")))
            .unwrap_or_else(|| panic!("no record of run {run_id}"))
    }

    /// [`Herd::record`], decoded.
    ///
    /// # Panics
    ///
    /// When it cannot be read or is not a [`RunRecord`].
    pub fn run_record(&self, run_id: &str) -> RunRecord {
        decode(&self.record(run_id))
    }

    /// Returns the ids of every run record, sorted.
    pub fn run_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = std::fs::read_dir(self.artifacts.join("runs"))
            .into_iter()
            .flatten()
            .filter_map(|e| {
                let name = e.ok()?.file_name().into_string().ok()?;
                let stem = name.strip_suffix(".json")?;
                (!stem.contains('.')).then(|| stem.to_owned())
            })
            .collect();
        ids.sort();
        ids
    }

    /// Returns the lines of the outcome ledger `outcomes.jsonl`.
    pub fn ledger(&self) -> Vec<Value> {
        read_text(&self.artifacts.join("outcomes.jsonl"))
            .map(|text| json_lines(&text))
            .unwrap_or_default()
    }

    /// Returns the pid recorded in the child's identity `<session>.process.json`, waiting for it
    /// (it is written as the child starts).
    pub fn child_pid(&self, run_id: &str) -> u32 {
        let session = self.record(run_id)["session_file"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let path = PathBuf::from(format!("{session}.process.json"));
        crate::wait::wait_for(
            &format!("the identity record {}", path.display()),
            Duration::from_secs(30),
            || {
                read_json(&path)?["pid"]
                    .as_u64()
                    .and_then(|p| u32::try_from(p).ok())
            },
        )
    }
}

impl Herd<'_> {
    /// Waits until the child of `run_id` is gone: its runner (the identity it recorded) and what
    /// held it, the launch script's shell (the process surface's leader, the tmux pane's
    /// process). A result can arrive before that: it is delivered on the child's completion
    /// sidecar, which the child writes just before it exits.
    ///
    /// # Panics
    ///
    /// When the child is still there after 30 s.
    pub fn wait_for_child_gone(&self, run_id: &str) {
        let budget = Duration::from_secs(30);
        let pid = self.child_pid(run_id);
        crate::wait::wait_for(&format!("the runner {pid} to exit"), budget, || {
            (!proc::process_alive(pid)).then_some(())
        });
        let record = self.record(run_id);
        if record["worktree"].is_object() && self.herdr.is_some() {
            // A worktree child's root pane is retained for review, its shell in the checkout.
            return;
        }
        if let (Some(herdr), Some(pane)) = (&self.herdr, record["pane"]["pane_id"].as_str()) {
            // A finished child's pane is closed: Herdr would keep it as an idle shell.
            crate::wait::wait_for(&format!("pane {pane} to be closed"), budget, || {
                (!herdr.pane_exists(pane)).then_some(())
            });
            return;
        }
        match (&self.tmux, self.record(run_id)["pane"]["pane_id"].as_str()) {
            (Some(tmux), Some(pane)) => {
                // Dead, or already closed: herd closes a finished child's pane once its result
                // is delivered (unless HERD_TMUX_KEEP_PANES=1).
                crate::wait::wait_for(&format!("pane {pane} to be dead or closed"), budget, || {
                    // A server left with no session has no pane to list.
                    let listed = tmux.try_cmd(["list-panes", "-a", "-F", "#{pane_id}"]);
                    let closed = !listed.success() || !listed.stdout.lines().any(|p| p == pane);
                    (closed || tmux.pane_exit_status(pane).is_some()).then_some(())
                });
            }
            _ => {
                let leader = self.artifacts.join(format!("runs/{run_id}.leader.json"));
                let leader_pid = read_json(&leader).and_then(|l| l["pid"].as_u64());
                if let Some(leader_pid) = leader_pid.and_then(|p| u32::try_from(p).ok()) {
                    crate::wait::wait_for(
                        &format!("the launch script {leader_pid} to exit"),
                        budget,
                        || (!proc::process_alive(leader_pid)).then_some(()),
                    );
                }
            }
        }
    }
}

/// Waits (briefly) for every child's processes to end, and kills what is left, so nothing
/// writes into the environment's directory after it is removed: a launch script still
/// recording its runner's exit, a child that outlived its scenario.
impl Drop for Herd<'_> {
    fn drop(&mut self) {
        let mut pids = Vec::new();
        for id in self.run_ids() {
            let record = read_json(&self.artifacts.join("runs").join(format!("{id}.json")));
            let session = record
                .as_ref()
                .and_then(|r| r["session_file"].as_str().map(str::to_owned));
            let mut files = vec![self.artifacts.join(format!("runs/{id}.leader.json"))];
            if let Some(session) = session {
                files.push(PathBuf::from(format!("{session}.process.json")));
            }
            pids.extend(files.iter().filter_map(|f| {
                read_json(f)?["pid"]
                    .as_u64()
                    .and_then(|p| u32::try_from(p).ok())
            }));
        }
        let gone = crate::wait::try_wait_for(Duration::from_secs(15), || {
            pids.iter()
                .all(|pid| !proc::process_alive(*pid))
                .then_some(())
        });
        if gone.is_none() {
            for pid in pids.iter().filter(|pid| proc::process_alive(**pid)) {
                proc::signal_pid(*pid, libc::SIGKILL);
            }
        }
    }
}

/// Returns the directory of the herd binaries of this build.
pub fn bin_dir() -> PathBuf {
    crate::bin("herd-launch")
        .parent()
        .map(Path::to_path_buf)
        .expect("a binary lives in a directory")
}

/// Parses the one JSON document a `--json` command printed (`null` when there is none).
pub fn json_doc(out: &Run) -> Value {
    serde_json::from_str(out.stdout.trim()).unwrap_or(Value::Null)
}

/// Parses JSON Lines, skipping lines that are not JSON.
pub fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Reads a small JSON file; `None` when it is missing or not JSON.
pub fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_slice(&read_bytes(path)?).ok()
}

/// Reads a small JSON file as the herd document `T`; `None` when it is missing or not a `T`
/// (yet), for a wait that reads it until it is.
pub fn read_doc<T: serde::de::DeserializeOwned>(path: &Path) -> Option<T> {
    serde_json::from_slice(&read_bytes(path)?).ok()
}

/// Reads a small text file; `None` when it is missing.
pub fn read_text(path: &Path) -> Option<String> {
    Some(String::from_utf8_lossy(&read_bytes(path)?).into_owned())
}

/// Reads at most [`READ_CAP`] bytes of a file; `None` when it is missing.
fn read_bytes(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(READ_CAP)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

/// The most read of one file.
const READ_CAP: u64 = 16 * 1024 * 1024;

/// Returns the `result` events of `events` for run `run_id`.
pub fn results_of<'a>(events: &'a [Value], run_id: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["event"] == "result" && e["run_id"] == run_id)
        .collect()
}

/// Decodes a herd document (an acknowledgement, a record, a result, an event) as its protocol
/// type `T`.
///
/// # Panics
///
/// When `doc` is not a `T`, with the document.
pub fn decode<T: serde::de::DeserializeOwned>(doc: &Value) -> T {
    serde_json::from_value(doc.clone())
        .unwrap_or_else(|err| panic!("not a {} ({err}): {doc:#}", std::any::type_name::<T>()))
}

/// Decodes every line of `follow --json` as a [`WatchEvent`].
///
/// # Panics
///
/// When one is not.
pub fn events(lines: &[Value]) -> Vec<WatchEvent> {
    lines.iter().map(decode).collect()
}

/// Returns the `result` events of `events` for run `run_id`, decoded, as the result `wait`
/// prints (the event without its acknowledgement key).
///
/// # Panics
///
/// When one of them is not a [`WatchEvent`].
pub fn results(events: &[Value], run_id: &str) -> Vec<WatchWait> {
    results_of(events, run_id)
        .into_iter()
        .filter_map(|e| match decode(e) {
            WatchEvent::Result {
                run_id,
                name,
                outcome,
                message,
                details,
                ..
            } => Some(WatchWait {
                run_id,
                name,
                outcome,
                message,
                details: *details,
            }),
            _ => None,
        })
        .collect()
}
