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
    /// not known): tmux's message on its status line, which tmux also keeps in its message log
    /// (`show-messages`), the bell, and `osc` where the client's terminal has it. Returns the
    /// clients told.
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
        // A message is a format: its `#` are the text's own.
        let text = n.line().replace('#', "##");
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

    /// One placement attempt: `Ok(Ok(pane))` when tmux created it, `Ok(Err(_))` when tmux
    /// definitely refused (nothing was created), `Err` when the answer leaves it unknown.
    ///
    /// `rest` may be a command sequence whose first command creates the pane and prints it (`-P
    /// -F`), the later ones (a layout, window options) printing nothing: a pane printed is a pane
    /// created, whatever a later command of the sequence answered.
    fn attempt(
        &self,
        label: &str,
        rest: &[&str],
        deadline: Instant,
    ) -> Result<Result<PaneRef, Error>, LaunchError> {
        match self.run(label, rest, deadline) {
            Ok(reply) if reply.success() || !reply.stdout.trim().is_empty() => {
                parse_new_pane(&reply.stdout, &self.socket)
                    .map(Ok)
                    .map_err(|detail| {
                        LaunchError::Unowned(Error::Malformed {
                            command: label.into(),
                            detail,
                        })
                    })
            }
            Ok(reply) => Ok(Err(Error::Failed {
                command: label.into(),
                message: reply.message(),
            })),
            Err(err) if err.is_uncertain() => Err(LaunchError::Unowned(err)),
            Err(err) => Err(LaunchError::Definite(err)),
        }
    }

    /// Creates the pane with `command` as the placement says.
    fn place(
        &self,
        launch: &Launch<'_>,
        command: &str,
        deadline: Instant,
    ) -> Result<PaneRef, LaunchError> {
        match &self.placement {
            Placement::Split => self.place_split(launch, command, deadline),
            Placement::Window => {
                let session = self.caller_session(deadline)?;
                self.open_window(
                    launch.name,
                    launch.cwd,
                    session.as_deref(),
                    None,
                    None,
                    command,
                    deadline,
                )
                .map(|(pane, _)| pane)
            }
            Placement::Grouped(artifacts) => {
                self.place_grouped(artifacts, launch, command, deadline)
            }
        }
    }

    /// A split of the caller's pane; else (no room, no caller pane) a window of its own.
    fn place_split(
        &self,
        launch: &Launch<'_>,
        command: &str,
        deadline: Instant,
    ) -> Result<PaneRef, LaunchError> {
        let cwd = launch.cwd.to_string_lossy();
        let mut session = None;
        if let Some(anchor) = &self.anchor {
            let split = [
                "split-window",
                "-d",
                "-h",
                "-P",
                "-F",
                PANE_FORMAT,
                "-t",
                anchor,
                "-c",
                &cwd,
                command,
            ];
            match self.attempt("tmux split-window", &split, deadline)? {
                Ok(pane) => return Ok(pane),
                // No room beside the caller (or the caller's pane is gone): a window of the
                // caller's session instead.
                Err(_) => session = self.caller_session(deadline)?,
            }
        }
        self.open_window(
            launch.name,
            launch.cwd,
            session.as_deref(),
            None,
            None,
            command,
            deadline,
        )
        .map(|(pane, _)| pane)
    }

    /// The caller's session as a target (`$N:`), when the caller runs in a pane of this server.
    fn caller_session(&self, deadline: Instant) -> Result<Option<String>, LaunchError> {
        let Some(anchor) = &self.anchor else {
            return Ok(None);
        };
        let reply = self
            .run(
                "tmux list-panes",
                &[
                    "list-panes",
                    "-t",
                    anchor,
                    "-F",
                    "#{pane_id}\t#{session_id}",
                ],
                deadline,
            )
            .map_err(LaunchError::Definite)?;
        Ok(reply.stdout.lines().find_map(|line| {
            let (id, session) = line.split_once('\t')?;
            (id == anchor && session.starts_with('$')).then(|| format!("{session}:"))
        }))
    }

    /// A window named `name` with `command` in it, behind the current one (`-d`): in `session`,
    /// else the server's current session; else, on a server without sessions, a session named
    /// `herd`. Each fallback follows only a definite refusal.
    ///
    /// `index` is the window's index in `session` when the caller knows the one tmux would choose
    /// (the first free one from `base-index`); with it, `mark` (a parent key) is set on the new
    /// window in the same client call, as it is on a new session's window. Returns the pane and
    /// whether its window carries the mark.
    #[allow(clippy::too_many_arguments)]
    fn open_window(
        &self,
        name: &str,
        cwd: &Path,
        session: Option<&str>,
        index: Option<u32>,
        mark: Option<&str>,
        command: &str,
        deadline: Instant,
    ) -> Result<(PaneRef, bool), LaunchError> {
        let dir = cwd.to_string_lossy();
        let target = session.map(|s| match index {
            Some(i) => format!("{s}{i}"),
            None => s.to_owned(),
        });
        // Later commands of a sequence do not see a window made with `-d` as their current one:
        // the marks name it by its index, which only the caller's listing gives.
        let marks = match (mark, &target, index) {
            (Some(key), Some(target), Some(_)) => mark_commands(Some(target), key),
            _ => Vec::new(),
        };
        let mut window = vec![
            "new-window",
            "-d",
            "-P",
            "-F",
            PANE_FORMAT,
            "-n",
            name,
            "-c",
            &dir,
        ];
        if let Some(target) = &target {
            window.extend(["-t", target]);
        }
        window.push(command);
        window.extend(marks.iter().map(String::as_str));
        let failure = match self.attempt("tmux new-window", &window, deadline)? {
            Ok(pane) => return Ok((pane, !marks.is_empty())),
            Err(failure) => failure,
        };
        // The index was taken since the listing (another client made a window there): the
        // window goes where tmux puts it, and the caller marks it by a call of its own.
        let taken = matches!(&failure, Error::Failed { message, .. } if message.contains("in use"));
        if index.is_some() && taken {
            return self.open_window(name, cwd, session, None, None, command, deadline);
        }
        // tmux 3.3 answers "no current target" for a server without sessions, earlier
        // versions "no current session".
        let no_session = matches!(&failure, Error::Failed { message, .. } if no_sessions(message));
        if !no_session {
            return Err(LaunchError::Definite(failure));
        }
        // The first server of a machine: tmux makes the directory of its default socket only
        // when it resolves that path itself, and herd names the socket (`-S`); in a directory
        // that does not exist, tmux exits 0 having started nothing.
        if let Some(dir) = self.socket.parent().filter(|d| !d.exists()) {
            herd_core::sidecar::ensure_private_dir(dir).map_err(|e| {
                LaunchError::Definite(Error::Unavailable {
                    surface: SURFACE,
                    reason: format!("cannot create tmux's socket directory: {e}"),
                })
            })?;
        }
        // A new session is the current target of the commands after it, and this one has a
        // single window.
        let marks = mark.map(|key| mark_commands(None, key)).unwrap_or_default();
        let mut new_session = vec![
            "new-session",
            "-d",
            "-s",
            "herd",
            "-n",
            name,
            "-P",
            "-F",
            PANE_FORMAT,
            "-c",
            &dir,
            command,
        ];
        new_session.extend(marks.iter().map(String::as_str));
        match self.attempt("tmux new-session", &new_session, deadline)? {
            Ok(pane) => Ok((pane, !marks.is_empty())),
            Err(err) => Err(LaunchError::Definite(err)),
        }
    }

    /// A pane of the parent's herd window in the caller's session, the window tiled again after
    /// the split; the first child there (or one the window has no room for) opens a new herd
    /// window. Placements of one parent take turns, so children launched at once share a window.
    ///
    /// Two client calls: the survey, then the pane with its window's layout or marks.
    fn place_grouped(
        &self,
        artifacts: &Artifacts,
        launch: &Launch<'_>,
        command: &str,
        deadline: Instant,
    ) -> Result<PaneRef, LaunchError> {
        let _turn = take_turn(artifacts, deadline).map_err(LaunchError::Definite)?;
        let key = parent_key(artifacts);
        let survey = self.survey(deadline)?;
        let caller = survey.caller.as_ref();
        let window = survey
            .windows
            .iter()
            .filter(|w| w.key == key)
            .filter(|w| caller.is_none_or(|c| w.session_id == c.session_id))
            .max_by_key(|w| w.serial());
        if let Some(window) = window.filter(|w| w.has_room_for_one_more()) {
            let cwd = launch.cwd.to_string_lossy();
            let split = [
                "split-window",
                "-d",
                "-P",
                "-F",
                PANE_FORMAT,
                "-t",
                &window.window_id,
                "-c",
                &cwd,
                command,
                // Tiled again, so every pane of it keeps a usable share (cosmetic).
                ";",
                "select-layout",
                "-t",
                &window.window_id,
                "tiled",
            ];
            // A window gone (or full) since it was listed gets the child a new one.
            if let Ok(pane) = self.attempt("tmux split-window", &split, deadline)? {
                return Ok(pane);
            }
        }
        let session = caller.map(|c| format!("{}:", c.session_id));
        let index = caller.map(|c| survey.free_index(&c.session_id, c.base_index));
        let (pane, marked) = self.open_window(
            HERD_WINDOW,
            launch.cwd,
            session.as_deref(),
            index,
            Some(&key),
            command,
            deadline,
        )?;
        if let Some(window) = pane.tab_id.as_deref().filter(|_| !marked) {
            // Cosmetic for this child, which is placed: only later children need the mark to
            // find the window, and the titles to tell its panes apart.
            let marks = mark_commands(Some(window), &key);
            let marks: Vec<&str> = marks[1..].iter().map(String::as_str).collect();
            let _ = self.run("tmux set-option", &marks, deadline);
        }
        Ok(pane)
    }

    /// What grouped placement asks of the server, in one client call: every window of it
    /// (`list-windows -a`), then the caller's pane with its session and that session's
    /// `base-index` (`list-panes`). The listing comes first: a command that fails ends the
    /// sequence, and a caller's pane that is gone leaves the listing answered.
    fn survey(&self, deadline: Instant) -> Result<Survey, LaunchError> {
        let windows = format!(
            "#{{window_id}}\t#{{session_id}}\t#{{window_index}}\t#{{window_width}}\t#{{window_height}}\t#{{window_panes}}\t#{{{PARENT_OPTION}}}"
        );
        let mut rest = vec!["list-windows", "-a", "-F", &windows];
        if let Some(anchor) = &self.anchor {
            rest.extend([
                ";",
                "list-panes",
                "-t",
                anchor,
                "-F",
                "#{pane_id}\t#{session_id}\t#{base-index}",
            ]);
        }
        let reply = self
            .run("tmux list-windows", &rest, deadline)
            .map_err(LaunchError::Definite)?;
        let listed = reply.stdout.lines().any(|l| l.starts_with('@'));
        if !reply.success() && !listed {
            let message = reply.message();
            if server_gone(&message) || no_sessions(&message) {
                return Ok(Survey::default());
            }
            return Err(LaunchError::Definite(Error::Failed {
                command: "tmux list-windows".into(),
                message,
            }));
        }
        Ok(Survey::parse(&reply.stdout, self.anchor.as_deref()))
    }
}

/// The name of a parent's herd window.
pub const HERD_WINDOW: &str = "herd";

/// The window option that marks a herd window with its parent's artifacts directory.
pub const PARENT_OPTION: &str = "@herd-parent";

/// The narrowest pane tiling gives a child of a herd window, in columns.
pub const MIN_PANE_WIDTH: u32 = 20;
/// The lowest pane tiling gives a child of a herd window, in rows.
pub const MIN_PANE_HEIGHT: u32 = 8;

/// The mark of a parent's herd window: its artifacts directory, which is one per parent session.
fn parent_key(artifacts: &Artifacts) -> String {
    let root = artifacts.root();
    std::fs::canonicalize(root)
        .unwrap_or_else(|_| root.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

/// `tmux-window.lock` in the artifacts directory: the lock grouped placements of one parent take
/// turns on.
pub fn placement_lock(artifacts: &Artifacts) -> PathBuf {
    artifacts.root().join("tmux-window.lock")
}

/// Waits for this process's turn at grouped placement until `deadline`; the turn ends when the
/// returned lock is dropped or the process dies.
fn take_turn(artifacts: &Artifacts, deadline: Instant) -> Result<herd_core::lock::FileLock, Error> {
    let path = placement_lock(artifacts);
    let started = Instant::now();
    match herd_core::lock::exclusive(&path, deadline) {
        Ok(lock) => Ok(lock),
        Err(herd_core::lock::Error::Held { .. }) => Err(Error::Timeout {
            command: format!("wait for {}", path.display()),
            budget_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        }),
        Err(err) => Err(Error::Io(err.to_string())),
    }
}

/// One row of `list-windows` for grouped placement: a window, and its parent mark (empty on a
/// window that is no herd window).
#[derive(Debug, Clone, PartialEq, Eq)]
struct HerdWindow {
    window_id: String,
    session_id: String,
    index: u32,
    width: u32,
    height: u32,
    panes: u32,
    key: String,
}

impl HerdWindow {
    /// A row `@w\t$s\tindex\twidth\theight\tpanes\tkey`; the key, last, may itself hold tabs.
    fn parse(line: &str) -> Option<HerdWindow> {
        let mut fields = line.splitn(7, '\t');
        let window_id = fields.next().filter(|w| w.starts_with('@'))?.to_owned();
        let session_id = fields.next().filter(|s| s.starts_with('$'))?.to_owned();
        let index = fields.next()?.parse().ok()?;
        let width = fields.next()?.parse().ok()?;
        let height = fields.next()?.parse().ok()?;
        let panes = fields.next()?.parse().ok()?;
        let key = fields.next()?.to_owned();
        Some(HerdWindow {
            window_id,
            session_id,
            index,
            width,
            height,
            panes,
            key,
        })
    }

    /// The window's number (`@N`): tmux counts them up, so the highest is the newest.
    fn serial(&self) -> u64 {
        self.window_id[1..].parse().unwrap_or(0)
    }

    /// Whether tiling the window with one more pane leaves every pane the minimum size.
    fn has_room_for_one_more(&self) -> bool {
        let (width, height) = tiled_pane_size(self.width, self.height, self.panes + 1);
        width >= MIN_PANE_WIDTH && height >= MIN_PANE_HEIGHT
    }
}

/// The caller's pane as the survey found it: its session and that session's `base-index`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Caller {
    session_id: String,
    base_index: u32,
}

/// The answer of [`Tmux::survey`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Survey {
    windows: Vec<HerdWindow>,
    caller: Option<Caller>,
}

impl Survey {
    /// Window rows start with `@`, the caller's pane rows (`%N\t$S\tbase-index`) with `%`.
    fn parse(stdout: &str, anchor: Option<&str>) -> Survey {
        let mut survey = Survey::default();
        for line in stdout.lines() {
            if line.starts_with('@') {
                survey.windows.extend(HerdWindow::parse(line));
                continue;
            }
            let mut fields = line.split('\t');
            let (Some(pane), Some(session), Some(base)) =
                (fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            if Some(pane) == anchor && session.starts_with('$') && fields.next().is_none() {
                survey.caller = base.parse().ok().map(|base_index| Caller {
                    session_id: session.to_owned(),
                    base_index,
                });
            }
        }
        survey
    }

    /// The index tmux gives a new window of `session` when it is given none: the first one from
    /// `base` that no window of the session has.
    fn free_index(&self, session: &str, base: u32) -> u32 {
        let used: std::collections::HashSet<u32> = self
            .windows
            .iter()
            .filter(|w| w.session_id == session)
            .map(|w| w.index)
            .collect();
        (base..=u32::MAX)
            .find(|i| !used.contains(i))
            .unwrap_or(base)
    }
}

/// The commands, each after a `;`, that mark a new herd window with `key` and title its panes;
/// without `target` they apply to the current window of the sequence.
fn mark_commands(target: Option<&str>, key: &str) -> Vec<String> {
    let mut commands = Vec::new();
    for (option, value) in [
        (PARENT_OPTION, literal_argument(key)),
        ("pane-border-status", "top".into()),
    ] {
        commands.extend([";".to_owned(), "set-option".to_owned(), "-w".to_owned()]);
        if let Some(target) = target {
            commands.extend(["-t".to_owned(), target.to_owned()]);
        }
        commands.extend([option.to_owned(), value.into_owned()]);
    }
    commands
}

/// The size of each pane when tmux tiles `panes` panes in a window of `width` × `height` (tmux's
/// `select-layout tiled`: rows and columns grow in turn until they hold every pane, one cell of
/// border between two).
pub fn tiled_pane_size(width: u32, height: u32, panes: u32) -> (u32, u32) {
    let (mut rows, mut columns) = (1u32, 1u32);
    while rows * columns < panes {
        rows += 1;
        if rows * columns < panes {
            columns += 1;
        }
    }
    (
        width.saturating_sub(columns - 1) / columns,
        height.saturating_sub(rows - 1) / rows,
    )
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
        // command exits, so its last screen and the sentinel stay readable, and title it.
        vec![
            format!(
                "{} set-option -p -t \"$TMUX_PANE\" remain-on-exit on \\; select-pane -t \"$TMUX_PANE\" -T {} \
                 >/dev/null 2>&1",
                shell_quote(&self.program.to_string_lossy()),
                shell_quote(name)
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
    fn tiling_is_tmux_s_rows_and_columns() {
        // One pane is the whole window; eight of 160 x 45 are three by three.
        assert_eq!(tiled_pane_size(160, 45, 1), (160, 45));
        assert_eq!(tiled_pane_size(160, 45, 2), (160, 22));
        assert_eq!(tiled_pane_size(160, 45, 8), (52, 14));
        let window = |panes| HerdWindow {
            window_id: "@3".into(),
            session_id: "$0".into(),
            index: 1,
            width: 80,
            height: 24,
            panes,
            key: "/a".into(),
        };
        // 80 x 24: four panes of 39 x 11; a fifth row would leave 7 rows each.
        assert!(window(3).has_room_for_one_more());
        assert!(!window(4).has_room_for_one_more());
    }

    #[test]
    fn herd_window_rows_are_parsed_with_the_key_last() {
        let row = HerdWindow::parse("@12\t$1\t4\t160\t45\t3\t/a/b\tc").unwrap();
        assert_eq!(row.window_id, "@12");
        assert_eq!(row.serial(), 12);
        assert_eq!(row.index, 4);
        assert_eq!((row.width, row.height, row.panes), (160, 45, 3));
        assert_eq!(row.key, "/a/b\tc");
        // A window without the mark is listed with an empty key.
        assert_eq!(HerdWindow::parse("@1\t$0\t0\t80\t24\t1\t").unwrap().key, "");
        assert_eq!(HerdWindow::parse("1\t$0\t0\t80\t24\t1\t/a"), None);
        assert_eq!(HerdWindow::parse("@1\t$0\t0\tx\t24\t1\t/a"), None);
        assert_eq!(HerdWindow::parse("@1\t$0\t80\t24\t1\t/a"), None);
    }

    #[test]
    fn the_survey_reads_windows_and_the_caller_and_finds_tmux_s_next_index() {
        let stdout = "@0\t$0\t1\t80\t24\t1\t\n@4\t$0\t2\t80\t24\t2\t/a\n@5\t$1\t3\t80\t24\t1\t\n\
                      %0\t$0\t1\n%7\t$0\t1\n";
        let survey = Survey::parse(stdout, Some("%0"));
        assert_eq!(survey.windows.len(), 3);
        assert_eq!(
            survey.caller,
            Some(Caller {
                session_id: "$0".into(),
                base_index: 1
            })
        );
        // Indexes 1 and 2 are taken in $0; $1's window 3 is another session's.
        assert_eq!(survey.free_index("$0", 1), 3);
        assert_eq!(survey.free_index("$0", 0), 0);
        assert_eq!(survey.free_index("$1", 1), 1);
        // Another pane than the caller's, or no caller row at all: no caller.
        assert_eq!(Survey::parse(stdout, Some("%9")).caller, None);
        assert_eq!(Survey::parse("", Some("%0")), Survey::default());
    }

    #[test]
    fn marks_follow_the_creation_in_one_sequence() {
        assert_eq!(
            mark_commands(Some("$0:3"), "/a;"),
            [
                ";",
                "set-option",
                "-w",
                "-t",
                "$0:3",
                PARENT_OPTION,
                "/a\\;",
                ";",
                "set-option",
                "-w",
                "-t",
                "$0:3",
                "pane-border-status",
                "top"
            ]
        );
        assert_eq!(mark_commands(None, "/a").len(), 10);
    }

    #[test]
    fn placement_is_the_herd_window_unless_the_setting_says_split() {
        let artifacts = Artifacts::new("/a");
        let tmux = || Tmux::with_socket("/bin/tmux".into(), "/s".into(), Some("%1".into()));
        let with = |value: Option<&'static str>| {
            move |k: &str| (k == PLACEMENT_ENV).then_some(value?.to_owned())
        };
        let placed = |value| tmux().for_children(&artifacts, &with(value));
        assert_eq!(
            placed(None).unwrap().placement,
            Placement::Grouped(artifacts.clone())
        );
        assert_eq!(
            placed(Some("window")).unwrap().placement,
            Placement::Grouped(artifacts.clone())
        );
        assert_eq!(placed(Some("split")).unwrap().placement, Placement::Split);
        let err = placed(Some("beside")).unwrap_err();
        assert_eq!(err.field.as_deref(), Some(PLACEMENT_ENV));
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
