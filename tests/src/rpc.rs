//! A real Pi in RPC mode as the parent: herd's parent extension loaded with `-e`, commands sent
//! as JSON lines on stdin, every event of stdout kept for the scenario to look at.
//!
//! ```no_run
//! use herd_e2e::model::{ModelServer, Script, Text};
//! use herd_e2e::pi::PiEnv;
//! use herd_e2e::rpc::PiRpc;
//! let model = ModelServer::start(Script::new().step(Text("DONE")));
//! let env = PiEnv::new(&model);
//! let mut parent = PiRpc::start(&env, &env.session_path("parent"), "fake-model", &[]);
//! parent.prompt("say done");
//! parent.close();
//! ```

use std::ffi::{OsStr, OsString};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::herd::bin_dir;
use crate::pi::{PiEnv, pi_bin};
use crate::wait::wait_for;

/// The time a scenario step may take: a child Pi's whole life is inside some of them.
pub const STEP_BUDGET: Duration = Duration::from_secs(90);

/// Returns the parent extension's entry file.
pub fn parent_extension() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../extension/herd-parent.ts")
}

/// Returns the test helper extension whose `/test-reload` reloads the session's extensions.
pub fn reload_extension() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("extensions/reload.ts")
}

/// A running `pi --mode rpc`, killed with its process group on drop.
pub struct PiRpc {
    child: Child,
    stdin: Option<ChildStdin>,
    events: Arc<Mutex<Vec<Value>>>,
    serial: usize,
}

impl PiRpc {
    /// Starts Pi in RPC mode on `session` with model `model`, the parent extension loaded, the
    /// herd binaries of this build (`HERD_BIN_DIR`) and the pinned Pi as the children's
    /// (`HERD_PI`); `extra` adds variables (a tmux socket, a surface).
    ///
    /// # Panics
    ///
    /// When Pi is not installed or cannot be started.
    pub fn start(env: &PiEnv, session: &Path, model: &str, extra: &[(&str, &OsStr)]) -> PiRpc {
        PiRpc::start_with(env, session, model, extra, &[])
    }

    /// As [`PiRpc::start`], with more arguments for Pi (`--herd-surface tmux`).
    ///
    /// # Panics
    ///
    /// When Pi is not installed or cannot be started.
    pub fn start_with(
        env: &PiEnv,
        session: &Path,
        model: &str,
        extra: &[(&str, &OsStr)],
        args: &[&str],
    ) -> PiRpc {
        let mut all = vec!["-e".into(), parent_extension().into_os_string()];
        all.extend(args.iter().map(OsString::from));
        PiRpc::spawn(env, session, model, extra, &all)
    }

    /// As [`PiRpc::start`] without `-e`: the extension comes from the agent directory's
    /// settings, as after `pi install`, so children load it too.
    ///
    /// # Panics
    ///
    /// When Pi is not installed or cannot be started.
    pub fn start_installed(
        env: &PiEnv,
        session: &Path,
        model: &str,
        extra: &[(&str, &OsStr)],
        args: &[&str],
    ) -> PiRpc {
        let all: Vec<OsString> = args.iter().map(OsString::from).collect();
        PiRpc::spawn(env, session, model, extra, &all)
    }

    fn spawn(
        env: &PiEnv,
        session: &Path,
        model: &str,
        extra: &[(&str, &OsStr)],
        args: &[OsString],
    ) -> PiRpc {
        PiRpc::spawn_with(env, &bin_dir(), session, model, extra, args)
    }

    /// Starts Pi in RPC mode with the herd binaries of `bins` and exactly the arguments `args`
    /// after the model and session (`-e` included: nothing is loaded unless they say so).
    ///
    /// # Panics
    ///
    /// When Pi is not installed or cannot be started.
    pub fn spawn_with(
        env: &PiEnv,
        bins: &Path,
        session: &Path,
        model: &str,
        extra: &[(&str, &OsStr)],
        args: &[OsString],
    ) -> PiRpc {
        let mut cmd = env.command(pi_bin());
        cmd.args(["--mode", "rpc", "--model"])
            .arg(PiEnv::model_arg(model))
            .arg("--session")
            .arg(session)
            .args(["--no-skills", "--no-context-files"])
            .args(args)
            .env("HERD_BIN_DIR", bins)
            .env("HERD_PI", pi_bin())
            // No no-progress notices in the middle of a scenario's events.
            .env("HERD_HANG_WARNING_SECS", "0");
        for (key, value) in extra {
            cmd.env(key, value);
        }
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0);
        #[expect(
            clippy::disallowed_methods,
            reason = "an RPC parent lives across the scenario and talks over its pipes"
        )]
        let mut child = cmd.spawn().expect("Pi starts in RPC mode");
        let stdout = child.stdout.take().expect("stdout is piped");
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&events);
        std::thread::spawn(move || {
            // RPC frames are split on LF only.
            let mut reader = BufReader::new(stdout);
            let mut line = Vec::new();
            while reader.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
                if let Ok(value) = serde_json::from_slice::<Value>(&line) {
                    sink.lock().unwrap_or_else(|e| e.into_inner()).push(value);
                }
                line.clear();
            }
        });
        let stdin = child.stdin.take();
        PiRpc {
            child,
            stdin,
            events,
            serial: 0,
        }
    }

    /// Returns the process id of Pi (the leader of its process group).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Returns every event and response received so far.
    pub fn events(&self) -> Vec<Value> {
        self.events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Sends one command; returns its id.
    ///
    /// # Panics
    ///
    /// When Pi's stdin is closed.
    pub fn send(&mut self, mut command: Value) -> String {
        self.serial += 1;
        let id = format!("t{}", self.serial);
        command["id"] = id.clone().into();
        let stdin = self.stdin.as_mut().expect("Pi's stdin is open");
        writeln!(stdin, "{command}").expect("Pi reads its stdin");
        stdin.flush().expect("Pi reads its stdin");
        id
    }

    /// Sends `command` and waits for its response.
    ///
    /// # Panics
    ///
    /// When no response arrives within [`STEP_BUDGET`].
    pub fn request(&mut self, command: Value) -> Value {
        let id = self.send(command);
        self.wait_event(&format!("the response to {id}"), |e| {
            e["type"] == "response" && e["id"] == id.as_str()
        })
    }

    /// Sends a prompt (or a command such as `/reload`) and waits for its response.
    pub fn prompt(&mut self, message: &str) -> Value {
        self.request(json!({"type": "prompt", "message": message}))
    }

    /// Waits until an event matches `pred`; returns it.
    ///
    /// # Panics
    ///
    /// When none arrives within [`STEP_BUDGET`].
    pub fn wait_event(&self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        wait_for(what, STEP_BUDGET, || self.events().into_iter().find(&pred))
    }

    /// Waits until `n` events match `pred`.
    ///
    /// # Panics
    ///
    /// When they do not arrive within [`STEP_BUDGET`].
    pub fn wait_count(&self, what: &str, n: usize, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
        wait_for(what, STEP_BUDGET, || {
            let found: Vec<Value> = self.events().into_iter().filter(&pred).collect();
            (found.len() >= n).then_some(found)
        })
    }

    /// Closes stdin (Pi quits) and waits for the exit.
    ///
    /// # Panics
    ///
    /// When Pi does not exit within [`STEP_BUDGET`].
    pub fn close(&mut self) -> ExitStatus {
        drop(self.stdin.take());
        wait_for("Pi to exit after its stdin closed", STEP_BUDGET, || {
            self.child.try_wait().ok().flatten()
        })
    }

    /// Kills Pi alone with SIGKILL (not its process group: what it started lives on) and reaps it.
    pub fn kill(&mut self) {
        crate::proc::signal_pid(self.child.id(), libc::SIGKILL);
        let _ = self.child.wait();
        drop(self.stdin.take());
    }
}

impl Drop for PiRpc {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            crate::proc::signal_group(self.child.id(), libc::SIGKILL);
            let _ = self.child.wait();
        }
    }
}

/// The custom messages of type `custom_type` that ended in the RPC output.
pub fn custom_messages(events: &[Value], custom_type: &str) -> Vec<Value> {
    events
        .iter()
        .filter(|e| {
            e["type"] == "message_end"
                && e["message"]["role"] == "custom"
                && e["message"]["customType"] == custom_type
        })
        .map(|e| e["message"].clone())
        .collect()
}

/// The `herd-watch` processes whose command line mentions `needle` (for "nothing outlives the
/// parent"); a child Pi whose session lives in the same directory is not one of them.
pub fn watchers_of(needle: &OsStr) -> Vec<u32> {
    let needle = needle.as_encoded_bytes();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmd| {
                let program = cmd.split(|b| *b == 0).next().unwrap_or_default();
                program.ends_with(b"herd-watch") && cmd.windows(needle.len()).any(|w| w == needle)
            })
        })
        .collect()
}

/// `OsString` of a path, for [`PiRpc::start`]'s extra variables.
pub fn os(path: &Path) -> OsString {
    path.as_os_str().to_owned()
}
