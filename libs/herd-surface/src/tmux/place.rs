//! Where a child's pane goes: its parent's herd window, found from tmux alone by its mark and
//! split until its panes would get too small, or the caller's pane split
//! (`HERD_TMUX_PLACEMENT=split`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use herd_protocol::layout::Artifacts;

use super::{
    PANE_FORMAT, Placement, SURFACE, Tmux, format_literal, literal_argument, no_sessions,
    parse_new_pane, server_gone,
};
use crate::{Error, Launch, LaunchError, PaneRef};

impl Tmux {
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
    pub(super) fn place(
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
        let cwd = format_literal(&cwd);
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
        // The window's name and directory are formats to tmux: both go as data.
        let dir = format_literal(&dir);
        let title = format_literal(name);
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
            &title,
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
            &title,
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
            let cwd = format_literal(&cwd);
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

/// The pane option that holds a child's name, set by its launch script ([`super::NAME_OPTION`]).
/// A pane's title is the program's to change (Pi sets it to `π - <dir>`), so the border of the
/// herd window shows this option, and the title only for a pane without it. The option's value
/// is inserted as text: tmux does not expand it again.
const BORDER_FORMAT: &str = "#{?pane_active,#[reverse],}#{pane_index}#[default] #{?#{@herd-name},#{@herd-name},#{pane_title}}";

/// The commands, each after a `;`, that mark a new herd window with `key` and title its panes;
/// without `target` they apply to the current window of the sequence.
fn mark_commands(target: Option<&str>, key: &str) -> Vec<String> {
    let mut commands = Vec::new();
    for (option, value) in [
        (PARENT_OPTION, literal_argument(key)),
        ("pane-border-status", "top".into()),
        ("pane-border-format", BORDER_FORMAT.into()),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tmux::PLACEMENT_ENV;

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
                "top",
                ";",
                "set-option",
                "-w",
                "-t",
                "$0:3",
                "pane-border-format",
                BORDER_FORMAT
            ]
        );
        assert_eq!(mark_commands(None, "/a").len(), 15);
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
}
