//! The tmux surface: a pane of a tmux server per child.
//!
//! Placement ([`Placement`]) puts a parent's children in its herd window: a window named `herd`
//! in the caller's session, created behind the current one (`new-window -d`) by the first child
//! and marked with the parent's artifacts directory (the window option `@herd-parent`), so any
//! later `herd-launch` finds it from tmux alone; later children split it (`split-window -d`) and
//! it is tiled again, until its panes would get too small and a new herd window follows. The
//! caller's pane keeps its size and the focus. `HERD_TMUX_PLACEMENT=split` splits the caller's
//! pane instead, and a `/worktree` handoff gets a window of its own. The launch script is the
//! pane's command, in one client call; its first line keeps the pane after its command exits
//! (`remain-on-exit`), so the final screen and the sentinel stay readable until herd closes it.
//!
//! A tmux pane id (`%N`) is unique only within one server: a new server starts again at `%0`. The
//! server's PID is recorded with the pane, and every query compares it, so a pane of a restarted
//! server is never taken for the child's.

use std::borrow::Cow;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Instant;

use herd_protocol::layout::Artifacts;

mod place;

pub use place::{
    HERD_WINDOW, MIN_PANE_HEIGHT, MIN_PANE_WIDTH, PARENT_OPTION, placement_lock, tiled_pane_size,
};

use crate::call::{Reply, call};
use crate::{
    Env, Error, Key, Launch, LaunchBudgets, LaunchError, Listed, Operation, PaneRef, Presence,
    Surface, SurfaceKind, Target, find_on_path, shell_quote,
};

const SURFACE: &str = "tmux";

/// The format printed for a new pane: id, server PID, session id, window id.
const PANE_FORMAT: &str = "#{pane_id}\t#{pid}\t#{session_id}\t#{window_id}";

/// The environment variable naming the tmux socket herd uses (a path, as `tmux -S`).
pub const SOCKET_ENV: &str = "HERD_TMUX_SOCKET";
/// The environment variable naming the tmux executable.
pub const PROGRAM_ENV: &str = "HERD_TMUX";

/// The environment variable choosing where children go: `window` (the default, the parent's
/// herd window) or `split` (beside the caller's pane).
pub const PLACEMENT_ENV: &str = "HERD_TMUX_PLACEMENT";

/// Where a launch puts the child's pane.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Placement {
    /// A split beside the caller's pane, else a window of its own (`HERD_TMUX_PLACEMENT=split`).
    #[default]
    Split,
    /// A pane of the parent's herd window in the caller's session, tiled; the parent is the one
    /// of this artifacts directory.
    Grouped(Artifacts),
    /// A window of its own in the caller's session, behind the current one.
    Window,
}

/// A tmux server reached through its socket.
#[derive(Debug, Clone)]
pub struct Tmux {
    program: PathBuf,
    socket: PathBuf,
    /// The caller's own pane, when it runs inside this server: the pane a split goes beside, and
    /// the session windows go to.
    anchor: Option<String>,
    placement: Placement,
}

/// Finds the tmux executable: `$HERD_TMUX`, else `tmux` on `PATH`.
pub fn find_program() -> Result<PathBuf, herd_core::Error> {
    find_program_in(&|k| std::env::var(k).ok())
}

fn find_program_in(env: Env<'_>) -> Result<PathBuf, herd_core::Error> {
    if let Some(program) = env(PROGRAM_ENV).filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(program));
    }
    find_on_path("tmux", &env("PATH").unwrap_or_default()).ok_or_else(|| {
        Error::Unavailable {
            surface: SURFACE,
            reason: "`tmux` is not on PATH".into(),
        }
        .into()
    })
}

impl Tmux {
    /// The server of this environment: `$HERD_TMUX_SOCKET`, else the one the caller runs inside
    /// (`$TMUX`), else tmux's default socket. The caller's pane (`$TMUX_PANE`) is split when the
    /// caller runs inside that same server.
    pub fn from_env(env: Env<'_>) -> Result<Tmux, herd_core::Error> {
        let program = find_program_in(env)?;
        let inside = env("TMUX")
            .filter(|t| !t.is_empty())
            .and_then(|t| t.split(',').next().map(PathBuf::from));
        let socket = match env(SOCKET_ENV).filter(|s| !s.is_empty()) {
            Some(socket) => PathBuf::from(socket),
            None => match &inside {
                Some(socket) => socket.clone(),
                None => default_socket(env),
            },
        };
        let anchor = env("TMUX_PANE")
            .filter(|p| p.starts_with('%') && inside.as_deref() == Some(socket.as_path()));
        Ok(Tmux {
            program,
            socket,
            anchor,
            placement: Placement::default(),
        })
    }

    pub fn with_socket(program: PathBuf, socket: PathBuf, anchor: Option<String>) -> Tmux {
        Tmux {
            program,
            socket,
            anchor,
            placement: Placement::default(),
        }
    }

    /// The same surface, placing new children as `placement` says.
    pub fn with_placement(self, placement: Placement) -> Tmux {
        Tmux { placement, ..self }
    }

    /// The same surface, placing the children of the parent of `artifacts` as
    /// `$HERD_TMUX_PLACEMENT` says: in the parent's herd window (`window`, the default), or
    /// beside the caller's pane (`split`). Another value is refused.
    pub fn for_children(
        self,
        artifacts: &Artifacts,
        env: Env<'_>,
    ) -> Result<Tmux, herd_core::Error> {
        let placement = match env(PLACEMENT_ENV).as_deref() {
            None | Some("" | "window") => Placement::Grouped(artifacts.clone()),
            Some("split") => Placement::Split,
            Some(other) => {
                return Err(herd_core::Error::invalid(
                    PLACEMENT_ENV,
                    format!("${PLACEMENT_ENV} is {other:?}; it is `window` or `split`"),
                ));
            }
        };
        Ok(self.with_placement(placement))
    }

    /// Shows `n` to every client of the session of `parent_pane` (every client when the pane is
    /// not known): tmux's message on its status line, the bell, and `osc` where the client's
    /// terminal has it. tmux writes the message to its log (`show-messages`) too, among every
    /// command, so only until `message-limit` newer entries push it out. Returns the clients
    /// told.
    pub fn notify(
        &self,
        parent_pane: Option<&str>,
        n: &crate::notify::Notification<'_>,
        osc: Option<crate::notify::Osc>,
        deadline: Instant,
    ) -> Result<Vec<String>, Error> {
        let session = match parent_pane.filter(|p| p.starts_with('%')) {
            Some(pane) => {
                let reply = self.run(
                    "tmux display-message",
                    &["display-message", "-p", "-t", pane, "#{session_name}"],
                    deadline,
                )?;
                reply
                    .success()
                    .then(|| reply.stdout.trim().to_owned())
                    .filter(|s| !s.is_empty())
            }
            None => None,
        };
        let reply = self.run(
            "tmux list-clients",
            &[
                "list-clients",
                "-F",
                "#{client_name}\t#{client_tty}\t#{session_name}",
            ],
            deadline,
        )?;
        if !reply.success() {
            return Err(Error::Failed {
                command: "tmux list-clients".into(),
                message: reply.message(),
            });
        }
        // A message is a format: its `#` and a final `;` are the text's own.
        let line = n.line();
        let text = format_literal(&line);
        let mut told = Vec::new();
        for line in reply.stdout.lines() {
            let mut fields = line.split('\t');
            let (Some(client), Some(tty), Some(of)) = (fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            if session.as_deref().is_some_and(|s| s != of) {
                continue;
            }
            let shown = self.run(
                "tmux display-message",
                &["display-message", "-c", client, "--", &text],
                deadline,
            )?;
            if !shown.success() {
                continue;
            }
            // The bell, and the terminal's own notification, straight to the client's terminal.
            let mut bytes = vec![0x07];
            if let Some(osc) = osc {
                bytes.extend(crate::notify::osc_bytes(osc, n, false));
            }
            let _ = crate::notify::write_tty(Path::new(tty), &bytes);
            told.push(client.to_owned());
        }
        Ok(told)
    }

    /// Whether a client shows `pane`: it is the active pane of its session's active window, and
    /// a client is attached to that session. An unanswered question is not looking.
    pub fn looking_at(&self, pane: &str, deadline: Instant) -> bool {
        self.run(
            "tmux display-message",
            &[
                "display-message",
                "-p",
                "-t",
                pane,
                "#{pane_active} #{window_active} #{session_attached}",
            ],
            deadline,
        )
        .is_ok_and(|reply| {
            let fields: Vec<&str> = reply.stdout.split_whitespace().collect();
            reply.success()
                && matches!(fields.as_slice(), ["1", "1", n] if n.parse::<u32>().is_ok_and(|n| n > 0))
        })
    }

    /// `-u` whatever the locale: a client outside a UTF-8 one writes every tab of a format as
    /// `_` (and every non-ASCII character of a screen), which the replies here are parsed by.
    fn args(&self, rest: &[&str]) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["-u".into(), "-S".into(), self.socket.clone().into()];
        args.extend(rest.iter().map(OsString::from));
        args
    }

    fn run(&self, label: &str, rest: &[&str], deadline: Instant) -> Result<Reply, Error> {
        call(
            SURFACE,
            label,
            &self.program,
            &self.args(rest),
            &[],
            deadline,
        )
    }

    /// Closes the pane of a finished child that herd created, unless a person is in it (the
    /// active pane of the window in front of an attached session), and tiles the herd window
    /// again so the panes left take its room. Returns whether it closed the pane; a pane
    /// already gone is nothing to close.
    pub fn close_finished(&self, target: &Target, deadline: Instant) -> Result<bool, Error> {
        let pane = self.pane_of(target)?;
        if !pane.owned {
            return Ok(false);
        }
        let reply = self.run(
            "tmux display-message",
            &[
                "display-message",
                "-p",
                "-t",
                &pane.pane_id,
                "#{pane_active} #{window_active} #{session_attached} #{window_id} #{?#{@herd-parent},herd,other}",
            ],
            deadline,
        )?;
        let fields: Vec<&str> = reply.stdout.split_whitespace().collect();
        let [active, in_front, attached, window, kind] = fields[..] else {
            return Ok(false);
        };
        if !reply.success() {
            return Ok(false);
        }
        if active == "1" && in_front == "1" && attached != "0" {
            return Ok(false);
        }
        self.close(target, deadline)?;
        if kind == "herd" {
            // Cosmetic: untiled panes keep their old sizes.
            let _ = self.run(
                "tmux select-layout",
                &["select-layout", "-t", window, "tiled"],
                deadline,
            );
        }
        Ok(true)
    }

    fn pane_of<'t>(&self, target: &'t Target) -> Result<&'t PaneRef, Error> {
        match target {
            Target::Pane(pane)
                if pane.socket.as_deref().map(Path::new) == Some(self.socket.as_path()) =>
            {
                Ok(pane)
            }
            Target::Pane(pane) => Err(Error::WrongTarget(format!(
                "pane {} belongs to tmux server {}, not {}",
                pane.pane_id,
                pane.socket.as_deref().unwrap_or("(unknown)"),
                self.socket.display()
            ))),
            Target::Process(_) => Err(Error::WrongTarget(
                "a process target is not a tmux pane".into(),
            )),
        }
    }
}

/// Whether a failed client call says the server has no session to put a window in.
fn no_sessions(message: &str) -> bool {
    server_gone(message)
        || message.contains("no current session")
        || message.contains("no current target")
        || message.contains("no sessions")
}

/// tmux's default socket: `${TMUX_TMPDIR:-/tmp}/tmux-<uid>/default`.
fn default_socket(env: Env<'_>) -> PathBuf {
    let dir = env("TMUX_TMPDIR")
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| "/tmp".into());
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    Path::new(&dir).join(format!("tmux-{uid}")).join("default")
}

fn parse_new_pane(stdout: &str, socket: &Path) -> Result<PaneRef, String> {
    let line = stdout.trim_end_matches('\n');
    let fields: Vec<&str> = line.split('\t').collect();
    match fields.as_slice() {
        [pane, pid, session, window]
            if pane.starts_with('%') && session.starts_with('$') && window.starts_with('@') =>
        {
            let server_pid = pid
                .parse::<u32>()
                .map_err(|_| format!("server pid {pid:?} is not a number"))?;
            Ok(PaneRef {
                pane_id: (*pane).to_owned(),
                tab_id: Some((*window).to_owned()),
                workspace_id: Some((*session).to_owned()),
                owned: true,
                socket: Some(socket.to_string_lossy().into_owned()),
                server_pid: Some(server_pid),
                terminal_id: None,
            })
        }
        _ => Err(format!(
            "expected `%pane\\tpid\\t$session\\t@window`, got {line:?}"
        )),
    }
}

/// The error of a failed command about `pane`: not found when the pane or its server is gone.
fn pane_failure(command: &str, pane: &PaneRef, reply: &Reply) -> Error {
    let message = reply.message();
    if server_gone(&message) || pane_missing(&message) {
        return Error::NotFound {
            target: format!("tmux pane {}", pane.pane_id),
        };
    }
    Error::Failed {
        command: command.into(),
        message,
    }
}

/// `text` as one argument of a tmux command line, where an argument ending in `;` ends the
/// command (the `;` is dropped) and a final `\;` stands for a literal `;`: a final `;` gets its
/// backslash, so text typed into a pane arrives whole.
fn literal_argument(text: &str) -> Cow<'_, str> {
    match text.strip_suffix(';') {
        Some(head) => format!("{head}\\;").into(),
        None => text.into(),
    }
}

/// `text` as data in an argument that tmux expands as a format: a window name (`-n`), a pane
/// title (`-T`), a start directory (`-c`), a message. Each `#` is doubled, so `#{…}`, `#[…]` and
/// `#(…)` (which runs a shell command in the server) stay the text's own, and a final `;` is
/// escaped as in [`literal_argument`]. Names, titles and paths come from requests and from
/// children: herd never lets tmux read them as anything but text.
pub(crate) fn format_literal(text: &str) -> Cow<'_, str> {
    if !text.contains('#') {
        return literal_argument(text);
    }
    Cow::Owned(literal_argument(&text.replace('#', "##")).into_owned())
}

/// The pane option that keeps a child's name for the herd window's border.
pub(crate) const NAME_OPTION: &str = "@herd-name";

/// A child's name as the value of [`NAME_OPTION`]: an option's value is not expanded as a format
/// where the border inserts it, but the border draws `#[…]` as a style, so that `#` is doubled
/// (the border then draws the text `#[`), and a final `;` is escaped as in
/// [`literal_argument`].
fn name_value(name: &str) -> Cow<'_, str> {
    if !name.contains("#[") {
        return literal_argument(name);
    }
    Cow::Owned(literal_argument(&name.replace("#[", "##[")).into_owned())
}

/// Whether a failed client call says the server (and so every pane of it) is gone.
fn server_gone(message: &str) -> bool {
    message.contains("no server running")
        || (message.contains("error connecting to")
            && (message.contains("No such file or directory")
                || message.contains("Connection refused")))
}

fn pane_missing(message: &str) -> bool {
    // A server left without sessions (exit-empty off) resolves no target at all.
    message.contains("can't find pane")
        || message.contains("no current target")
        || message.contains("can't find window")
        || message.contains("can't find session")
}

impl Surface for Tmux {
    fn kind(&self) -> SurfaceKind {
        SurfaceKind::Tmux
    }

    fn has_terminal(&self) -> bool {
        true
    }

    fn socket(&self) -> Option<PathBuf> {
        Some(self.socket.clone())
    }

    fn script_prologue(&self, name: &str) -> Vec<String> {
        // One client call inside the pane ($TMUX names its server): keep the pane after its
        // command exits, so its last screen and the sentinel stay readable, title it, and keep
        // its name where the program cannot change it (the herd window's border shows it).
        vec![
            format!(
                "{} set-option -p -t \"$TMUX_PANE\" remain-on-exit on \\; select-pane -t \"$TMUX_PANE\" -T {} \
                 \\; set-option -p -t \"$TMUX_PANE\" {NAME_OPTION} {} >/dev/null 2>&1",
                shell_quote(&self.program.to_string_lossy()),
                shell_quote(&format_literal(name)),
                shell_quote(&name_value(name))
            ),
            "export PI_SUBAGENT_SURFACE=\"$TMUX_PANE\"".to_owned(),
        ]
    }

    fn launch(&self, launch: &Launch<'_>, budgets: &LaunchBudgets) -> Result<Target, LaunchError> {
        if let Some(pane) = launch.into {
            return Err(LaunchError::Definite(Error::Unsupported {
                surface: SURFACE,
                operation: format!("run in the existing pane {}", pane.pane_id),
            }));
        }
        let command = format!("exec sh {}", shell_quote(&launch.script.to_string_lossy()));
        // The pane is created with the command in it: placement is dispatch, with one budget.
        self.place(launch, &command, budgets.deadline(Operation::Placement))
            .map(Target::Pane)
            .map_err(|e| e.during(Operation::Placement, budgets.placement))
    }

    fn presence(&self, target: &Target, deadline: Instant) -> Result<Presence, Error> {
        let pane = self.pane_of(target)?;
        // `list-panes -t %N` fails with "can't find pane" when the pane is gone (where
        // `display-message -t %N` answers an empty line), and lists the panes of its window.
        let reply = self.run(
            "tmux list-panes",
            &[
                "list-panes",
                "-t",
                &pane.pane_id,
                "-F",
                "#{pane_id}\t#{pid}\t#{pane_dead}\t#{pane_dead_status}",
            ],
            deadline,
        )?;
        if !reply.success() {
            let message = reply.message();
            if server_gone(&message) || pane_missing(&message) {
                return Ok(Presence::Absent);
            }
            return Err(Error::Failed {
                command: "tmux list-panes".into(),
                message,
            });
        }
        let malformed = |detail: String| Error::Malformed {
            command: "tmux list-panes".into(),
            detail,
        };
        let row = reply
            .stdout
            .lines()
            .find(|line| line.split('\t').next() == Some(pane.pane_id.as_str()))
            .ok_or_else(|| {
                malformed(format!("no row for {} in {:?}", pane.pane_id, reply.stdout))
            })?;
        let fields: Vec<&str> = row.split('\t').collect();
        let [_, pid, dead, status] = fields.as_slice() else {
            return Err(malformed(format!("unexpected row {row:?}")));
        };
        let pid: u32 = pid
            .parse()
            .map_err(|_| malformed(format!("server pid {pid:?} is not a number")))?;
        if pane.server_pid.is_some_and(|recorded| recorded != pid) {
            // Another server under the same socket: the recorded pane went with the old one.
            return Ok(Presence::Absent);
        }
        match *dead {
            "0" => Ok(Presence::Running),
            "1" => Ok(Presence::Exited {
                status: status.parse().ok(),
            }),
            _ => Err(malformed(format!("unexpected row {row:?}"))),
        }
    }

    fn list(&self, deadline: Instant) -> Result<Vec<Listed>, Error> {
        let reply = self.run(
            "tmux list-panes",
            &[
                "list-panes",
                "-a",
                "-F",
                "#{pane_id}\t#{pane_dead}\t#{pane_dead_status}",
            ],
            deadline,
        )?;
        if !reply.success() {
            let message = reply.message();
            // A server without sessions has no panes (tmux 3.3 says "no current target").
            if server_gone(&message) || message.contains("no current target") {
                return Ok(Vec::new());
            }
            return Err(Error::Failed {
                command: "tmux list-panes".into(),
                message,
            });
        }
        let mut rows = Vec::new();
        for line in reply.stdout.lines().filter(|l| !l.is_empty()) {
            let fields: Vec<&str> = line.split('\t').collect();
            let row = match fields.as_slice() {
                [id, "0", _] if id.starts_with('%') => Listed {
                    pane_id: (*id).to_owned(),
                    terminal_id: None,
                    presence: Presence::Running,
                    agent: None,
                },
                [id, "1", status] if id.starts_with('%') => Listed {
                    pane_id: (*id).to_owned(),
                    terminal_id: None,
                    presence: Presence::Exited {
                        status: status.parse().ok(),
                    },
                    agent: None,
                },
                _ => {
                    return Err(Error::Malformed {
                        command: "tmux list-panes".into(),
                        detail: format!("unexpected row {line:?}"),
                    });
                }
            };
            rows.push(row);
        }
        Ok(rows)
    }

    fn read_tail(&self, target: &Target, lines: usize, deadline: Instant) -> Result<String, Error> {
        let pane = self.pane_of(target)?;
        let start = format!("-{lines}");
        let reply = self.run(
            "tmux capture-pane",
            &[
                "capture-pane",
                "-p",
                "-J",
                "-t",
                &pane.pane_id,
                "-S",
                &start,
            ],
            deadline,
        )?;
        if !reply.success() {
            let message = reply.message();
            if server_gone(&message) || pane_missing(&message) {
                return Err(Error::NotFound {
                    target: format!("tmux pane {}", pane.pane_id),
                });
            }
            return Err(Error::Failed {
                command: "tmux capture-pane".into(),
                message,
            });
        }
        let all: Vec<&str> = reply.stdout.trim_end_matches(['\n', ' ']).lines().collect();
        let all: Vec<&str> = {
            let mut end = all.len();
            while end > 0 && all[end - 1].trim().is_empty() {
                end -= 1;
            }
            all[..end].to_vec()
        };
        let from = all.len().saturating_sub(lines);
        Ok(all[from..].join("\n"))
    }

    fn send_keys(&self, target: &Target, keys: &[Key], deadline: Instant) -> Result<(), Error> {
        let pane = self.pane_of(target)?;
        if self.presence(target, deadline)? == Presence::Absent {
            return Err(Error::NotFound {
                target: format!("tmux pane {}", pane.pane_id),
            });
        }
        let mut rest: Vec<Cow<'_, str>> = Vec::new();
        for key in keys {
            if !rest.is_empty() {
                rest.push(";".into());
            }
            rest.extend([
                "send-keys".into(),
                "-t".into(),
                pane.pane_id.as_str().into(),
            ]);
            match key {
                Key::Escape => rest.push("Escape".into()),
                Key::Enter => rest.push("Enter".into()),
                Key::Interrupt => rest.push("C-c".into()),
                Key::Text(text) => rest.extend(["-l".into(), "--".into(), literal_argument(text)]),
            }
        }
        if rest.is_empty() {
            return Ok(());
        }
        let rest: Vec<&str> = rest.iter().map(AsRef::as_ref).collect();
        let reply = self.run("tmux send-keys", &rest, deadline)?;
        if reply.success() {
            Ok(())
        } else {
            Err(Error::Failed {
                command: "tmux send-keys".into(),
                message: reply.message(),
            })
        }
    }

    fn close(&self, target: &Target, deadline: Instant) -> Result<(), Error> {
        let pane = self.pane_of(target)?;
        if !pane.owned {
            return Err(Error::Unsupported {
                surface: SURFACE,
                operation: format!("close pane {}, which herd did not create", pane.pane_id),
            });
        }
        if self.presence(target, deadline)? == Presence::Absent {
            return Err(Error::NotFound {
                target: format!("tmux pane {}", pane.pane_id),
            });
        }
        let reply = self.run(
            "tmux kill-pane",
            &["kill-pane", "-t", &pane.pane_id],
            deadline,
        )?;
        if reply.success() {
            return Ok(());
        }
        Err(pane_failure("tmux kill-pane", pane, &reply))
    }

    fn pane_pid(&self, target: &Target, deadline: Instant) -> Result<u32, Error> {
        let pane = self.pane_of(target)?;
        let reply = self.run(
            "tmux display-message",
            &["display-message", "-p", "-t", &pane.pane_id, "#{pane_pid}"],
            deadline,
        )?;
        if !reply.success() {
            return Err(pane_failure("tmux display-message", pane, &reply));
        }
        let text = reply.stdout.trim();
        text.parse().map_err(|_| Error::Malformed {
            command: "tmux display-message".into(),
            detail: format!("pane pid {text:?} is not a number"),
        })
    }

    fn focus(&self, target: &Target, deadline: Instant) -> Result<(), Error> {
        let pane = self.pane_of(target)?;
        // The window in its session, then the pane in its window: a client attached to that
        // session shows it.
        let reply = self.run(
            "tmux select-window",
            &[
                "select-window",
                "-t",
                &pane.pane_id,
                ";",
                "select-pane",
                "-t",
                &pane.pane_id,
            ],
            deadline,
        )?;
        if reply.success() {
            return Ok(());
        }
        Err(pane_failure("tmux select-window", pane, &reply))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_literal_doubles_every_hash_and_escapes_a_final_semicolon() {
        assert_eq!(format_literal("plain"), "plain");
        assert_eq!(format_literal("a;b"), "a;b");
        assert_eq!(format_literal("end;"), "end\\;");
        assert_eq!(
            format_literal("#(touch x) #{pane_id} #[fg=red];"),
            "##(touch x) ##{pane_id} ##[fg=red]\\;"
        );
    }

    #[test]
    fn new_pane_reply_is_parsed_strictly() {
        let pane = parse_new_pane("%12\t4242\t$0\t@3\n", Path::new("/s")).unwrap();
        assert_eq!(pane.pane_id, "%12");
        assert_eq!(pane.server_pid, Some(4242));
        assert_eq!(pane.tab_id.as_deref(), Some("@3"));
        assert_eq!(pane.socket.as_deref(), Some("/s"));
        for bad in [
            "",
            "%1",
            "12\t1\t$0\t@1",
            "%1\tx\t$0\t@1",
            "%1\t1\t$0\t@1\textra",
        ] {
            assert!(parse_new_pane(bad, Path::new("/s")).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn environment_selects_the_socket_and_the_anchor() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        let t = Tmux::from_env(&vars(&[
            ("HERD_TMUX", "/bin/tmux"),
            ("TMUX", "/t/s,1,0"),
            ("TMUX_PANE", "%3"),
        ]))
        .unwrap();
        assert_eq!(t.socket, Path::new("/t/s"));
        assert_eq!(t.anchor.as_deref(), Some("%3"));
        // Another server than the caller's: no pane of it to split.
        let t = Tmux::from_env(&vars(&[
            ("HERD_TMUX", "/bin/tmux"),
            ("HERD_TMUX_SOCKET", "/other"),
            ("TMUX", "/t/s,1,0"),
            ("TMUX_PANE", "%3"),
        ]))
        .unwrap();
        assert_eq!(t.socket, Path::new("/other"));
        assert_eq!(t.anchor, None);
        let t =
            Tmux::from_env(&vars(&[("HERD_TMUX", "/bin/tmux"), ("TMUX_TMPDIR", "/x")])).unwrap();
        assert!(t.socket.starts_with("/x"), "{:?}", t.socket);
        assert!(Tmux::from_env(&vars(&[("PATH", "")])).is_err());
    }

    #[test]
    fn server_absence_is_told_from_other_failures() {
        assert!(server_gone("no server running on /tmp/tmux-0/x"));
        assert!(server_gone(
            "error connecting to /tmp/x (No such file or directory)"
        ));
        assert!(!server_gone(
            "error connecting to /tmp/x (Permission denied)"
        ));
        assert!(pane_missing("can't find pane: %9"));
    }
}
