//! A private headless Herdr server for a test: its own `HOME` and `XDG_CONFIG_HOME` (so its own
//! socket), update and manifest checks off, and stopped when the handle is dropped.
//!
//! The Herdr executable is named by `HERD_TEST_HERDR`. Without it a test that needs Herdr does
//! not run: [`HerdrServer::start`] returns `None` after saying so on stderr, loudly; with `CI`
//! set a missing Herdr fails the test instead.
//!
//! ```no_run
//! use herd_e2e::herdr::HerdrServer;
//! let Some(herdr) = HerdrServer::start("my_test", &[]) else { return };
//! let (workspace, pane) = herdr.workspace(std::path::Path::new("."));
//! assert!(herdr.pane_exists(&pane), "{workspace}");
//! ```

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use tempfile::TempDir;

use crate::proc::{self, Finished};

/// The variable naming the Herdr executable the tests run.
pub const HERDR_ENV: &str = "HERD_TEST_HERDR";

/// The time any one Herdr CLI call of the fixture may take.
pub const HERDR_BUDGET: Duration = Duration::from_secs(10);

/// The time the server may take to start or stop.
const START_BUDGET: Duration = Duration::from_secs(30);

/// The Herdr executable of the tests, or why there is none.
///
/// # Panics
///
/// With `CI` set, when there is none: CI must run every Herdr test.
pub fn herdr_bin() -> Result<PathBuf, String> {
    let why = match std::env::var_os(HERDR_ENV).filter(|v| !v.is_empty()) {
        None => format!("${HERDR_ENV} is not set"),
        Some(path) => {
            let path = PathBuf::from(path);
            if path.is_file() {
                return Ok(path);
            }
            format!("${HERDR_ENV} names {}, which is not a file", path.display())
        }
    };
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        panic!("CI needs a real Herdr: {why} (see the README, \"Testing against Herdr\")");
    }
    Err(why)
}

/// Says on stderr that `test` did not run and why: written to the stream itself, not through
/// `eprintln!`, which the test harness captures and shows only for a failing test.
fn did_not_run(test: &str, why: &str) {
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "\n*** {test} DID NOT RUN: it needs a real Herdr and {why}.\n\
         *** Build one with `../shared/herdr/build.sh OUTDIR` and set \
         {HERDR_ENV}=OUTDIR/herdr (see the README, \"Testing against Herdr\").\n"
    );
}

/// A running headless `herdr server` of a test.
pub struct HerdrServer {
    bin: PathBuf,
    _dir: TempDir,
    home: PathBuf,
    config: PathBuf,
    vars: Vec<(OsString, OsString)>,
    server: Option<Child>,
    stopped: bool,
}

impl HerdrServer {
    /// Starts a server whose panes get `vars` as their environment (plus the isolated `HOME`
    /// and `XDG_CONFIG_HOME`, `SHELL` bash unless `vars` names one, and `PATH` when `vars` has
    /// none); `None`, after a loud line on stderr naming `test`, when there is no Herdr.
    ///
    /// # Panics
    ///
    /// When Herdr is there but the server does not start, or (with `CI` set) Herdr is missing.
    pub fn start(test: &str, vars: &[(OsString, OsString)]) -> Option<HerdrServer> {
        HerdrServer::start_configured(test, vars, "")
    }

    /// Like [`HerdrServer::start`], with `extra` (TOML, such as `[ui.toast]` sections) added to
    /// the server's configuration.
    ///
    /// # Panics
    ///
    /// As [`HerdrServer::start`].
    pub fn start_configured(
        test: &str,
        vars: &[(OsString, OsString)],
        extra: &str,
    ) -> Option<HerdrServer> {
        let bin = match herdr_bin() {
            Ok(bin) => bin,
            Err(why) => {
                did_not_run(test, &why);
                return None;
            }
        };
        let dir = tempfile::Builder::new()
            .prefix("herd-herdr-")
            .tempdir()
            .expect("a temporary directory");
        let root = dir.path().canonicalize().expect("the directory exists");
        let home = root.join("home");
        let config = root.join("config");
        std::fs::create_dir_all(config.join("herdr")).expect("the config directory");
        std::fs::create_dir_all(&home).expect("the home directory");
        std::fs::write(
            config.join("herdr/config.toml"),
            format!("[update]\nversion_check = false\nmanifest_check = false\n{extra}"),
        )
        .expect("the Herdr configuration can be written");
        let mut all: Vec<(OsString, OsString)> = vars
            .iter()
            .filter(|(k, _)| k != "HOME" && k != "XDG_CONFIG_HOME")
            .cloned()
            .collect();
        all.push(("HOME".into(), home.clone().into()));
        all.push(("XDG_CONFIG_HOME".into(), config.clone().into()));
        if !all.iter().any(|(k, _)| k == "SHELL") {
            // A shell with job control, as users run: the pane's foreground job is the child.
            let shell = ["/bin/bash", "/usr/bin/bash"]
                .into_iter()
                .find(|s| Path::new(s).is_file())
                .unwrap_or("/bin/sh");
            all.push(("SHELL".into(), shell.into()));
        }
        if !all.iter().any(|(k, _)| k == "PATH") {
            if let Some(path) = std::env::var_os("PATH") {
                all.push(("PATH".into(), path));
            }
        }
        let mut server = HerdrServer {
            bin,
            _dir: dir,
            home,
            config,
            vars: all,
            server: None,
            stopped: true,
        };
        server.boot();
        Some(server)
    }

    /// Starts the server process and waits until it answers.
    fn boot(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.home.join("herdr-server.out"))
            .expect("the server log can be opened");
        let err = log.try_clone().expect("the server log can be shared");
        let mut cmd = self.command();
        cmd.arg("server")
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err);
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
        #[expect(
            clippy::disallowed_methods,
            reason = "the fixture owns the server process and stops it on drop"
        )]
        let child = cmd.spawn().expect("herdr server starts");
        self.server = Some(child);
        self.stopped = false;
        let up = crate::wait::try_wait_for(START_BUDGET, || {
            let out = self.cmd(["status", "server", "--json"]);
            let doc: Value = serde_json::from_str(out.stdout.trim()).ok()?;
            (doc["running"] == true).then_some(())
        });
        assert!(
            up.is_some(),
            "herdr server did not answer within {START_BUDGET:?}; its output:\n{}",
            std::fs::read_to_string(self.home.join("herdr-server.out")).unwrap_or_default()
        );
    }

    /// The Herdr executable.
    pub fn bin(&self) -> &Path {
        &self.bin
    }

    /// The server's API socket (`HERDR_SOCKET_PATH`).
    pub fn socket(&self) -> PathBuf {
        self.config.join("herdr/herdr.sock")
    }

    /// The server's isolated home directory.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The PID of the server process, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.server.as_ref().map(Child::id)
    }

    /// The environment a herd program sees inside pane `pane` of this server (what Herdr
    /// injects into a pane), plus `HERD_HERDR_BIN` naming this Herdr.
    pub fn pane_vars(&self, pane: &str) -> Vec<(OsString, OsString)> {
        vec![
            ("HERDR_ENV".into(), "1".into()),
            ("HERDR_SOCKET_PATH".into(), self.socket().into()),
            ("HERDR_PANE_ID".into(), pane.into()),
            ("HERDR_BIN_PATH".into(), self.bin.clone().into()),
            ("HERD_HERDR_BIN".into(), self.bin.clone().into()),
        ]
    }

    /// A `herdr` command with the server's environment, talking to its socket.
    pub fn command(&self) -> Command {
        #[expect(
            clippy::disallowed_methods,
            reason = "test support runs herdr through its own bounded runner"
        )]
        let mut cmd = Command::new(&self.bin);
        cmd.env_clear()
            .envs(self.vars.iter().map(|(k, v)| (k, v)))
            .env("HERDR_SOCKET_PATH", self.socket());
        cmd
    }

    /// The command line of a person's Herdr client (the TUI) attached to this server, to run in
    /// a terminal (such as a tmux pane): `env -i` with the server's environment, then `herdr`.
    pub fn client_argv(&self) -> Vec<OsString> {
        let mut argv: Vec<OsString> = vec!["env".into(), "-i".into()];
        for (key, value) in &self.vars {
            let mut pair = key.clone();
            pair.push("=");
            pair.push(value);
            argv.push(pair);
        }
        let mut socket = OsString::from("HERDR_SOCKET_PATH=");
        socket.push(self.socket());
        argv.push(socket);
        argv.push("TERM=xterm-256color".into());
        argv.push(self.bin.clone().into());
        argv
    }

    /// Runs a Herdr CLI command and returns its whole outcome.
    pub fn cmd<I, S>(&self, args: I) -> Finished
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = self.command();
        cmd.args(args);
        proc::run(cmd, HERDR_BUDGET)
    }

    /// Runs a Herdr CLI command that prints JSON and returns its `result`.
    ///
    /// # Panics
    ///
    /// When the command fails or prints no JSON.
    pub fn json<I, S>(&self, args: I) -> Value
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
        let out = self.cmd(&args);
        assert!(out.success(), "herdr {args:?} failed:\n{out}");
        let doc: Value = serde_json::from_str(out.stdout.trim())
            .unwrap_or_else(|_| panic!("herdr {args:?} printed no JSON:\n{out}"));
        doc["result"].clone()
    }

    /// Runs a silent Herdr CLI command (send-keys, run, report-agent, ...).
    ///
    /// # Panics
    ///
    /// When it fails.
    pub fn ok<I, S>(&self, args: I)
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
        let out = self.cmd(&args);
        assert!(out.success(), "herdr {args:?} failed:\n{out}");
    }

    /// Creates a workspace in `cwd` (not focused); returns its id and its root pane's id.
    pub fn workspace(&self, cwd: &Path) -> (String, String) {
        let mut args: Vec<OsString> = vec!["workspace".into(), "create".into(), "--cwd".into()];
        args.push(cwd.into());
        args.extend(["--label", "parent", "--no-focus"].map(OsString::from));
        let created = self.json(args);
        let workspace = created["workspace"]["workspace_id"]
            .as_str()
            .expect("a workspace id")
            .to_owned();
        let pane = created["root_pane"]["pane_id"]
            .as_str()
            .expect("a root pane id")
            .to_owned();
        self.wait_shell(&pane);
        (workspace, pane)
    }

    /// Waits until pane `pane`'s shell is idle (its foreground process group is the shell).
    pub fn wait_shell(&self, pane: &str) {
        crate::wait::wait_for(&format!("the shell of pane {pane}"), HERDR_BUDGET, || {
            let info = self.json(["pane", "process-info", "--pane", pane]);
            let info = &info["process_info"];
            (info["shell_pid"].is_u64() && info["shell_pid"] == info["foreground_process_group_id"])
                .then_some(())
        });
    }

    /// `pane get`: the pane's record, `None` when Herdr says it is not there.
    ///
    /// # Panics
    ///
    /// On any other failure.
    pub fn pane(&self, pane: &str) -> Option<Value> {
        let out = self.cmd(["pane", "get", pane]);
        if out.success() {
            let doc: Value = serde_json::from_str(out.stdout.trim()).expect("pane get JSON");
            return Some(doc["result"]["pane"].clone());
        }
        assert!(out.stderr.contains("pane_not_found"), "pane get:\n{out}");
        None
    }

    /// Whether pane `pane` exists.
    pub fn pane_exists(&self, pane: &str) -> bool {
        self.pane(pane).is_some()
    }

    /// Every pane of the server.
    pub fn panes(&self) -> Vec<Value> {
        self.json(["pane", "list"])["panes"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// The rectangles of the panes of pane `pane`'s tab (`pane layout`), by pane id:
    /// `(pane_id, width, height)`.
    pub fn layout(&self, pane: &str) -> Vec<(String, u64, u64)> {
        let layout = self.json(["pane", "layout", "--pane", pane]);
        let mut rects = Vec::new();
        collect_rects(&layout, &mut rects);
        rects
    }

    /// The text pane `pane` shows (`pane read --source recent-unwrapped`).
    pub fn read(&self, pane: &str) -> String {
        self.cmd(["pane", "read", pane, "--source", "recent-unwrapped"])
            .stdout
    }

    /// Waits until pane `pane` shows `needle`; returns the text then.
    ///
    /// # Panics
    ///
    /// When it does not within `budget`, with the pane's last text.
    pub fn wait_for_text(&self, pane: &str, needle: &str, budget: Duration) -> String {
        crate::wait::try_wait_for(budget, || {
            let text = self.read(pane);
            text.contains(needle).then_some(text)
        })
        .unwrap_or_else(|| {
            panic!(
                "pane {pane} did not show {needle:?} within {budget:?}; it shows:\n{}",
                self.read(pane)
            )
        })
    }

    /// Stops the server (`herdr server stop`), which ends every pane's processes, and waits
    /// for its process to exit.
    ///
    /// # Panics
    ///
    /// When it does not exit in time.
    pub fn stop(&mut self) {
        self.resume();
        let _ = self.cmd(["server", "stop"]);
        let exited = self.server.as_mut().and_then(|child| {
            crate::wait::try_wait_for(START_BUDGET, || child.try_wait().ok().flatten())
        });
        if exited.is_none() {
            if let Some(child) = self.server.as_mut() {
                proc::signal_group(child.id(), libc::SIGKILL);
                let _ = child.wait();
            }
        }
        self.server = None;
        self.stopped = true;
        assert!(exited.is_some(), "herdr server did not stop in time");
    }

    /// Starts the server again on the same home and configuration: Herdr restores the saved
    /// layout, with the same pane ids and fresh shells.
    pub fn restart(&mut self) {
        if self.server.is_some() {
            self.stop();
        }
        self.boot();
    }

    /// Freezes the server (SIGSTOP): it accepts connections but answers nothing.
    pub fn hang(&self) {
        if let Some(pid) = self.pid() {
            proc::signal_pid(pid, libc::SIGSTOP);
        }
    }

    /// Lets a frozen server go on (SIGCONT).
    pub fn resume(&self) {
        if let Some(pid) = self.pid() {
            proc::signal_pid(pid, libc::SIGCONT);
        }
    }
}

/// Every `{pane_id, width, height}`-like rectangle in a `pane layout` reply.
fn collect_rects(value: &Value, out: &mut Vec<(String, u64, u64)>) {
    match value {
        Value::Object(map) => {
            if let Some(pane) = map.get("pane_id").and_then(Value::as_str) {
                let rect = map.get("rect").unwrap_or(value);
                if let (Some(w), Some(h)) = (
                    rect.get("width").and_then(Value::as_u64),
                    rect.get("height").and_then(Value::as_u64),
                ) {
                    out.push((pane.to_owned(), w, h));
                    return;
                }
            }
            map.values().for_each(|v| collect_rects(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_rects(v, out)),
        _ => {}
    }
}

impl Drop for HerdrServer {
    fn drop(&mut self) {
        if self.stopped {
            return;
        }
        self.resume();
        let _ = self.cmd(["server", "stop"]);
        if let Some(child) = self.server.as_mut() {
            let exited =
                crate::wait::try_wait_for(START_BUDGET, || child.try_wait().ok().flatten());
            if exited.is_none() {
                proc::signal_group(child.id(), libc::SIGKILL);
                let _ = child.wait();
            }
        }
    }
}
