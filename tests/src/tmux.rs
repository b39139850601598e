//! A private tmux server for a scenario: its own socket name, the environment of a
//! [`crate::pi::PiEnv`] (or any other), and killed when the handle is dropped.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tempfile::TempDir;

use crate::proc::{self, Finished};

/// The time any one tmux command may take.
pub const TMUX_BUDGET: Duration = Duration::from_secs(10);

/// Width and height of the sessions' windows.
const SIZE: (&str, &str) = ("160", "48");

/// A running tmux server on a socket of its own.
pub struct Tmux {
    socket: String,
    pid: u32,
    vars: Vec<(OsString, OsString)>,
    _conf_dir: TempDir,
    conf: PathBuf,
}

impl Tmux {
    /// Starts a server whose panes get exactly `vars` as their environment.
    ///
    /// The server stays up with no sessions (`exit-empty off`) and has extended keys on (Pi
    /// warns otherwise); everything else is tmux's default, as on a user's machine.
    ///
    /// # Panics
    ///
    /// When tmux is missing or the server does not start.
    pub fn start(vars: &[(OsString, OsString)]) -> Tmux {
        static SERIAL: AtomicUsize = AtomicUsize::new(0);
        let socket = format!(
            "herd-e2e-{}-{}",
            std::process::id(),
            SERIAL.fetch_add(1, Ordering::SeqCst)
        );
        let conf_dir = tempfile::Builder::new()
            .prefix("herd-e2e-tmux-")
            .tempdir()
            .expect("a temporary directory");
        let conf = conf_dir.path().join("tmux.conf");
        std::fs::write(
            &conf,
            "set -g exit-empty off\nset -g extended-keys on\nset -g history-limit 5000\n",
        )
        .expect("the tmux configuration can be written");
        let mut tmux = Tmux {
            socket,
            pid: 0,
            vars: vars.to_vec(),
            _conf_dir: conf_dir,
            conf,
        };
        tmux.cmd(["start-server"]);
        let pid = tmux.cmd(["display-message", "-p", "#{pid}"]);
        tmux.pid = pid
            .parse()
            .unwrap_or_else(|_| panic!("tmux printed no server pid: {pid:?}"));
        tmux
    }

    /// Returns the socket name (`tmux -L <name>`).
    pub fn socket_name(&self) -> &str {
        &self.socket
    }

    /// Returns the socket's path, as `$TMUX` inside a pane names it.
    pub fn socket_path(&self) -> PathBuf {
        PathBuf::from(self.cmd(["display-message", "-p", "#{socket_path}"]))
    }

    /// Returns the server's pid.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Returns a `tmux -L <socket>` command with the server's environment.
    pub fn command(&self) -> Command {
        #[expect(
            clippy::disallowed_methods,
            reason = "test support spawns tmux through its own bounded runner"
        )]
        let mut cmd = Command::new("tmux");
        cmd.env_clear().envs(self.vars.iter().map(|(k, v)| (k, v)));
        if !self.vars.iter().any(|(k, _)| k == "PATH") {
            if let Some(path) = std::env::var_os("PATH") {
                cmd.env("PATH", path);
            }
        }
        cmd.arg("-L").arg(&self.socket).arg("-f").arg(&self.conf);
        cmd
    }

    /// Runs a tmux command and returns its whole outcome.
    pub fn try_cmd<I, S>(&self, args: I) -> Finished
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = self.command();
        cmd.args(args);
        proc::run(cmd, TMUX_BUDGET)
    }

    /// Runs a tmux command and returns its stdout without the trailing newline.
    ///
    /// # Panics
    ///
    /// When the command fails.
    pub fn cmd<I, S>(&self, args: I) -> String
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
        let out = self.try_cmd(&args);
        assert!(out.success(), "tmux {args:?} failed:\n{out}");
        out.stdout.trim_end_matches('\n').to_owned()
    }

    /// Creates a detached session `name` running `argv` in `cwd`; returns its pane id (`%N`).
    ///
    /// # Panics
    ///
    /// When tmux refuses.
    pub fn new_session(&self, name: &str, cwd: &Path, argv: &[OsString]) -> String {
        let mut args: Vec<OsString> = [
            "new-session",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "-s",
            name,
            "-x",
            SIZE.0,
            "-y",
            SIZE.1,
            "-c",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        args.push(cwd.into());
        args.push("--".into());
        args.extend(argv.iter().cloned());
        self.cmd(args)
    }

    /// Returns the visible text of pane `target`.
    ///
    /// # Panics
    ///
    /// When the pane does not exist.
    pub fn capture(&self, target: &str) -> String {
        self.cmd(["capture-pane", "-p", "-J", "-t", target])
    }

    /// Types `text` literally into pane `target` (no key names are interpreted).
    pub fn send_text(&self, target: &str, text: &str) {
        self.cmd(["send-keys", "-t", target, "-l", text]);
    }

    /// Sends key names (`Enter`, `C-c`, ...) to pane `target`.
    pub fn send_keys(&self, target: &str, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", target];
        args.extend_from_slice(keys);
        self.cmd(args);
    }

    /// Waits until pane `target` shows `needle`; returns the pane's text then.
    ///
    /// # Panics
    ///
    /// When it does not within `budget`, with the pane's last text.
    pub fn wait_for_text(&self, target: &str, needle: &str, budget: Duration) -> String {
        let found = crate::wait::try_wait_for(budget, || {
            let text = self.capture(target);
            text.contains(needle).then_some(text)
        });
        found.unwrap_or_else(|| {
            panic!(
                "pane {target} did not show {needle:?} within {budget:?}; it shows:\n{}",
                self.capture(target)
            )
        })
    }

    /// Returns the exit status of the process of pane `target` once it has exited (the pane
    /// must be kept with `remain-on-exit on`), `None` while it runs. Poll it with a deadline.
    ///
    /// tmux before 3.5, built with libutempter, can lose the SIGCHLD of a pane whose process
    /// exits while the pane's utmp record is being removed: the pane is dead (its pty closed)
    /// but the status never arrives and the process stays a zombie. Sending the server a
    /// SIGCHLD makes it reap its children again, so this does that when it sees such a pane.
    pub fn pane_exit_status(&self, target: &str) -> Option<i32> {
        let out = self.cmd([
            "display-message",
            "-p",
            "-t",
            target,
            "#{pane_dead} #{pane_dead_status}",
        ]);
        let (dead, status) = out.split_once(' ')?;
        if dead != "1" {
            return None;
        }
        let status = status.trim().parse().ok();
        if status.is_none() {
            proc::signal_pid(self.pid, libc::SIGCHLD);
        }
        status
    }

    /// Returns the pid of the process of pane `target`.
    pub fn pane_pid(&self, target: &str) -> u32 {
        let pid = self.cmd(["display-message", "-p", "-t", target, "#{pane_pid}"]);
        pid.parse()
            .unwrap_or_else(|_| panic!("tmux printed no pane pid: {pid:?}"))
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        // kill-server ends the panes with SIGHUP; the pid check catches a server that hangs.
        let _ = self.try_cmd(["kill-server"]);
        if self.pid != 0
            && crate::wait::try_wait_for(Duration::from_secs(5), || {
                (!proc::process_alive(self.pid)).then_some(())
            })
            .is_none()
        {
            proc::signal_pid(self.pid, libc::SIGKILL);
        }
    }
}
