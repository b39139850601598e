//! The Herdr surface: a pane of the Herdr terminal multiplexer per child, over `herd-herdr`.
//!
//! A launch asks Herdr for the caller's pane (`pane current`, since panes move and inherited ids
//! go stale) and places the child's pane ([`Placement`]): a split of the caller's pane
//! (`pane split --no-focus`), or a pane of the parent's owned `Agents` tab ([`grouping`]), its
//! largest pane halved while both halves stay usable, else a new `Agents` tab. It
//! names the new pane (cosmetic, 1 s), waits until the pane's shell is ready (its foreground
//! process group is the shell itself), and types `sh <script>` into it (`pane run`). Placement,
//! waiting for its turn included, ends within the placement budget; each call within it has the
//! ordinary one. Herdr's replies are parsed strictly by `herd-herdr`: an unexpected shape is an
//! error naming the command, never a success.
//!
//! A failure before the script is typed rolls back: the new pane is closed and its absence
//! confirmed with `pane get`; if that cannot be confirmed, or `pane run` itself did not answer,
//! the pane is the owner of an uncertain launch. Herdr panes keep their shell after the script
//! ends, so presence is the pane's; the runner's end is told by the sentinel and the sidecars.
//! Keys typed there after its end would be run by that shell: the child takes them only while its
//! runner is in the pane's foreground process group and the shell is not
//! ([`Surface::input_reaches`], through [`crate::live::deliver`]).
//! A restarted Herdr brings its panes back under the same ids with fresh shells: a pane is the
//! child's only while its terminal id is the one recorded at launch.

pub mod grouping;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use herd_herdr::{Direction, PaneInfo, PaneLayout, PaneState, ProcessInfo, ReadSource};
use herd_protocol::layout::Artifacts;

use crate::{
    ABSENCE_CONFIRMATION, Env, Error, Inspection, Key, Launch, LaunchBudgets, LaunchError, Listed,
    Operation, PaneRef, Presence, READINESS_BUDGET, REQUEST_BUDGET, Surface, SurfaceKind, Target,
    shell_quote,
};

const SURFACE: &str = "herdr";

/// The environment variable of the Herdr socket a client talks to.
pub const SOCKET_ENV: &str = "HERDR_SOCKET_PATH";

/// The step between two readiness probes.
const READINESS_STEP: Duration = Duration::from_millis(100);

/// Where a launch puts the child's pane.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Placement {
    /// A split to the right of the caller's pane.
    #[default]
    Split,
    /// The parent's owned `Agents` tab of the workspace holding the child's directory, recorded
    /// in this artifacts directory ([`grouping`]).
    Grouped(Artifacts),
}

/// A Herdr server reached through its CLI.
#[derive(Debug, Clone)]
pub struct Herdr {
    client: herd_herdr::Herdr,
    socket: Option<PathBuf>,
    placement: Placement,
}

impl Herdr {
    /// The Herdr of this environment ([`herd_herdr::program`], `$HERDR_SOCKET_PATH`).
    pub fn from_env(env: Env<'_>) -> Herdr {
        let program = herd_herdr::program(|key| env(key).map(Into::into));
        let socket = env(SOCKET_ENV).filter(|s| !s.is_empty()).map(PathBuf::from);
        let mut client = herd_herdr::Herdr::new(program);
        if let Some(socket) = &socket {
            client = client.with_env(SOCKET_ENV, socket);
        }
        Herdr::with_client(client, socket)
    }

    /// Asks Herdr to show `n` to its foreground client; Herdr's answer: shown, and why not.
    /// While Herdr shows another notice (`busy`, `rate_limited`) it is asked again, until
    /// `deadline`; each call takes at most what is left of it (a second at least).
    pub fn notify(
        &self,
        n: &crate::notify::Notification<'_>,
        deadline: Instant,
    ) -> Result<(bool, String), herd_herdr::Error> {
        let body = (!n.body.is_empty()).then_some(n.body);
        let sound = if n.request { "request" } else { "done" };
        crate::notify::until_not_busy(deadline, || {
            let left = deadline.saturating_duration_since(Instant::now());
            self.client
                .with_budget(left.clamp(Duration::from_secs(1), REQUEST_BUDGET))
                .notification_show(n.title, body, sound)
        })
    }

    /// Whether `pane` is the focused pane of the focused tab of the focused workspace. An
    /// unanswered question is not looking.
    pub fn looking_at(&self, pane: &str) -> bool {
        let herd_herdr::PaneState::Present(info) = self.client.pane_get(pane) else {
            return false;
        };
        info.focused == Some(true)
            && info
                .tab_id
                .as_deref()
                .is_some_and(|tab| self.client.tab_focused(tab).ok().flatten() == Some(true))
            && self
                .client
                .workspace_get(&info.workspace_id)
                .is_ok_and(|ws| ws.focused == Some(true))
    }

    /// A surface over an existing client, talking to `socket`.
    pub fn with_client(client: herd_herdr::Herdr, socket: Option<PathBuf>) -> Herdr {
        Herdr {
            client,
            socket,
            placement: Placement::default(),
        }
    }

    /// The same surface, placing new children as `placement` says.
    pub fn with_placement(self, placement: Placement) -> Herdr {
        Herdr { placement, ..self }
    }

    /// The same surface, placing new children in the owned `Agents` tabs recorded in `artifacts`.
    pub fn grouped(self, artifacts: &Artifacts) -> Herdr {
        self.with_placement(Placement::Grouped(artifacts.clone()))
    }

    fn socket_text(&self) -> Option<String> {
        self.socket
            .as_ref()
            .map(|s| s.to_string_lossy().into_owned())
    }

    /// The Herdr a recorded pane lives in.
    pub fn for_pane(pane: &PaneRef) -> Result<Herdr, herd_core::Error> {
        let env = |key: &str| -> Option<String> {
            if key == SOCKET_ENV {
                return pane.socket.clone();
            }
            std::env::var(key).ok()
        };
        Ok(Herdr::from_env(&env))
    }

    /// A client whose call ends by `deadline` and takes at most `budget`.
    fn client(&self, budget: Duration, deadline: Instant) -> Result<herd_herdr::Herdr, Error> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Error::Timeout {
                command: "herdr".into(),
                budget_ms: 0,
            });
        }
        Ok(self.client.with_budget(budget.min(left)))
    }

    fn pane_id<'t>(&self, target: &'t Target) -> Result<&'t str, Error> {
        match target {
            Target::Pane(pane) => Ok(&pane.pane_id),
            Target::Process(_) => Err(Error::WrongTarget(
                "a process target is not a Herdr pane".into(),
            )),
        }
    }

    /// Asks for the processes of `pane` every [`READINESS_STEP`] until `ready` accepts them, within
    /// the readiness budget; `ready` answers why not, and the last reason names the failure.
    fn wait_ready(
        &self,
        pane: &str,
        deadline: Instant,
        failure: &str,
        mut ready: impl FnMut(&ProcessInfo) -> Result<(), String>,
    ) -> Result<(), Error> {
        let deadline = deadline.min(Instant::now() + READINESS_BUDGET);
        let not_ready = |last: &str| Error::Failed {
            command: "herdr pane process-info".into(),
            message: format!("{failure}: {last}"),
        };
        let mut last = "no answer before the deadline".to_owned();
        loop {
            // A deadline that passed while the last answer was awaited (a busy machine) ends the
            // wait with the last reason, never with a bare timeout of a call never made.
            let Ok(client) = self.client(REQUEST_BUDGET, deadline) else {
                return Err(not_ready(&last));
            };
            last = match client.pane_process_info(pane) {
                Ok(info) => match ready(&info) {
                    Ok(()) => return Ok(()),
                    Err(why) => why,
                },
                Err(err) => err.to_string(),
            };
            if Instant::now() + READINESS_STEP >= deadline {
                return Err(not_ready(&last));
            }
            std::thread::sleep(READINESS_STEP);
        }
    }

    /// Waits until the pane's foreground process group is its shell.
    fn wait_shell_ready(&self, pane: &str, deadline: Instant) -> Result<(), Error> {
        let failure = format!("the shell of pane {pane} was not ready in time");
        self.wait_ready(pane, deadline, &failure, |info| {
            if info.shell_pid.is_some() && info.foreground_pgid == info.shell_pid {
                Ok(())
            } else {
                let shown =
                    |pid: Option<u32>| pid.map_or_else(|| "unknown".to_owned(), |p| p.to_string());
                Err(format!(
                    "foreground process group {} is not the shell {}",
                    shown(info.foreground_pgid),
                    shown(info.shell_pid)
                ))
            }
        })
    }

    /// Waits until a Pi process in `pane` carries `PI_HERDR_AGENTS_SESSION=<session>` in its
    /// launch-time environment (the readiness of a `/worktree` handoff), within the readiness budget.
    pub fn wait_pi_ready(
        &self,
        pane: &str,
        session: &std::path::Path,
        deadline: Instant,
    ) -> Result<(), Error> {
        let failure = format!("Pi did not start in pane {pane} in time");
        self.wait_ready(pane, deadline, &failure, |info| {
            let pids: Vec<u32> = info.foreground.iter().map(|p| p.pid).collect();
            if crate::pi_ready_among(&pids, session) {
                Ok(())
            } else {
                Err("no Pi process of this session in the pane".into())
            }
        })
    }

    /// Runs the script in a pane that already exists and is retained (a worktree's root pane):
    /// nothing is rolled back, since herd never closes it.
    fn launch_into(
        &self,
        root: &PaneRef,
        launch: &Launch<'_>,
        budgets: &LaunchBudgets,
    ) -> Result<Target, LaunchError> {
        let mut pane = PaneRef {
            owned: false,
            socket: root.socket.clone().or_else(|| self.socket_text()),
            ..root.clone()
        };
        self.wait_shell_ready(&pane.pane_id, budgets.deadline(Operation::Readiness))
            .map_err(|e| {
                LaunchError::Definite(e.during(Operation::Readiness, budgets.readiness))
            })?;
        let during = |e: LaunchError| e.during(Operation::Dispatch, budgets.dispatch);
        let deadline = budgets.deadline(Operation::Dispatch);
        if pane.terminal_id.is_none() {
            // The root pane's terminal, so a restarted Herdr's fresh shell there is not the run.
            let client = self
                .client(REQUEST_BUDGET, deadline)
                .map_err(|e| during(LaunchError::Definite(e)))?;
            match client.pane_get(&pane.pane_id) {
                PaneState::Present(info) => pane.terminal_id = info.terminal_id,
                PaneState::Missing => {
                    return Err(during(LaunchError::Definite(Error::NotFound {
                        target: format!("herdr pane {}", pane.pane_id),
                    })));
                }
                PaneState::Unavailable(err) => {
                    return Err(during(LaunchError::Definite(herdr_error(err))));
                }
            }
        }
        let command = format!("sh {}", shell_quote(&launch.script.to_string_lossy()));
        let client = self
            .client(REQUEST_BUDGET, deadline)
            .map_err(|e| during(LaunchError::Definite(e)))?;
        match client.pane_run(&pane.pane_id, &command) {
            Ok(()) => Ok(Target::Pane(pane)),
            Err(err) if err.effect_possible() => Err(during(LaunchError::Uncertain {
                error: herdr_error(err),
                owner: Box::new(Target::Pane(pane)),
            })),
            Err(err) => Err(during(LaunchError::Definite(herdr_error(err)))),
        }
    }

    /// Creates the child's pane as the placement says, by `deadline`.
    fn place(&self, cwd: &Path, deadline: Instant) -> Result<PaneRef, LaunchError> {
        let caller = self
            .client(REQUEST_BUDGET, deadline)
            .map_err(LaunchError::Definite)?
            .pane_current(None)
            .map_err(|e| LaunchError::Definite(herdr_error(e)))?;
        match &self.placement {
            Placement::Split => self.split(&caller.pane_id, deadline),
            Placement::Grouped(artifacts) => self.place_grouped(artifacts, &caller, cwd, deadline),
        }
    }

    /// A new pane to the right of `anchor`.
    fn split(&self, anchor: &str, deadline: Instant) -> Result<PaneRef, LaunchError> {
        self.split_towards(anchor, Direction::Right, deadline)
    }

    /// A new pane beside `anchor`, in `direction`.
    fn split_towards(
        &self,
        anchor: &str,
        direction: Direction,
        deadline: Instant,
    ) -> Result<PaneRef, LaunchError> {
        let client = self
            .client(REQUEST_BUDGET, deadline)
            .map_err(LaunchError::Definite)?;
        // The script enters the child's directory itself, so the split needs no --cwd.
        match client.pane_split(anchor, direction, None, &[], true) {
            Ok(new) => Ok(self.owned(&new, new.tab_id.clone())),
            Err(err) if err.effect_possible() => Err(LaunchError::Unowned(herdr_error(err))),
            Err(err) => Err(LaunchError::Definite(herdr_error(err))),
        }
    }

    /// A new pane in the owned `Agents` tab of the workspace holding `cwd`: a split of its
    /// largest pane ([`balanced_split`]), or the first pane of a new tab when there is none yet,
    /// it is gone, or it is full.
    fn place_grouped(
        &self,
        artifacts: &Artifacts,
        caller: &PaneInfo,
        cwd: &Path,
        deadline: Instant,
    ) -> Result<PaneRef, LaunchError> {
        let definite = |err| LaunchError::Definite(herdr_error(err));
        let workspaces = self
            .client(REQUEST_BUDGET, deadline)
            .map_err(LaunchError::Definite)?
            .workspace_list()
            .map_err(definite)?;
        let workspace = grouping::choose_workspace(&caller.workspace_id, cwd, &workspaces);
        let _turn = grouping::Turn::take(artifacts, deadline).map_err(LaunchError::Definite)?;
        let socket = self.socket_text();
        let mut tabs = grouping::OwnedTabs::load(artifacts);
        if let Some(tab) = tabs.find(socket.as_deref(), &workspace) {
            let panes = self
                .client(REQUEST_BUDGET, deadline)
                .map_err(LaunchError::Definite)?
                .pane_list(Some(&workspace))
                .map_err(definite)?;
            // A listing proves presence only: a tab none of whose panes is listed is taken for
            // gone, and at worst the workspace gets a second `Agents` tab.
            if let Some(pane) = panes
                .panes
                .iter()
                .find(|pane| pane.tab_id.as_deref() == Some(tab))
            {
                let layout = self
                    .client(REQUEST_BUDGET, deadline)
                    .map_err(LaunchError::Definite)?
                    .pane_layout(&pane.pane_id)
                    .map_err(definite)?;
                // The tab's largest pane is halved along its longer side; when even that
                // would leave a pane too small to use, the child gets a new `Agents` tab.
                if let Some((anchor, direction)) = balanced_split(&layout) {
                    return self.split_towards(anchor, direction, deadline);
                }
            }
        }
        let client = self
            .client(REQUEST_BUDGET, deadline)
            .map_err(LaunchError::Definite)?;
        let created = match client.tab_create(&workspace, grouping::AGENTS_TAB, Some(cwd), true) {
            Ok(created) => created,
            Err(err) if err.effect_possible() => {
                return Err(LaunchError::Unowned(herdr_error(err)));
            }
            Err(err) => return Err(definite(err)),
        };
        let pane = self.owned(&created.pane, created.tab_id.clone());
        let Some(tab) = created.tab_id else {
            // Without its id the tab cannot be found again: its pane goes.
            let error = Error::Failed {
                command: "herdr tab create".into(),
                message: "the reply names no tab (result.tab.tab_id)".into(),
            };
            return Err(self.roll_back(pane, error));
        };
        tabs.set(socket.as_deref(), &workspace, &tab);
        // The record only spares later children a tab of their own; this child is placed.
        let _ = tabs.save();
        Ok(pane)
    }

    /// The reference of a pane herd created.
    fn owned(&self, pane: &PaneInfo, tab_id: Option<String>) -> PaneRef {
        PaneRef {
            pane_id: pane.pane_id.clone(),
            tab_id,
            workspace_id: Some(pane.workspace_id.clone()),
            owned: true,
            socket: self.socket_text(),
            server_pid: None,
            terminal_id: pane.terminal_id.clone(),
        }
    }

    /// Closes the pane of a child that has finished, unless the user is in it (Herdr says it is
    /// the focused pane) or herd did not create it; a Herdr pane otherwise stays open as an idle
    /// shell. Returns whether the pane was closed.
    pub fn close_finished(&self, target: &Target, deadline: Instant) -> Result<bool, Error> {
        let Target::Pane(pane) = target else {
            return Ok(false);
        };
        if !pane.owned {
            return Ok(false);
        }
        match self
            .client(REQUEST_BUDGET, deadline)?
            .pane_get(&pane.pane_id)
        {
            PaneState::Present(info) if same_terminal(target, info.terminal_id.as_deref()) => {
                if info.focused == Some(true) {
                    return Ok(false);
                }
            }
            PaneState::Present(_) | PaneState::Missing => return Ok(false),
            PaneState::Unavailable(err) => return Err(herdr_error(err)),
        }
        self.close(target, deadline)?;
        Ok(true)
    }

    /// Sends key names to `pane` in one `pane send-keys`; none is nothing to send.
    fn send_key_names(&self, pane: &str, names: &[&str], deadline: Instant) -> Result<(), Error> {
        if names.is_empty() {
            return Ok(());
        }
        self.client(REQUEST_BUDGET, deadline)?
            .pane_send_keys(pane, names)
            .map_err(|err| pane_error(pane, err))
    }

    /// Closes a pane herd just created and confirms its absence.
    fn roll_back(&self, pane: PaneRef, error: Error) -> LaunchError {
        let deadline = Instant::now() + ABSENCE_CONFIRMATION;
        let target = Target::Pane(pane);
        match crate::close_confirmed(self, &target, deadline) {
            crate::Closed::Confirmed => LaunchError::Definite(error),
            crate::Closed::Unconfirmed(why) => LaunchError::Uncertain {
                error: Error::Failed {
                    command: "herdr pane close".into(),
                    message: format!("{error}; rollback unconfirmed: {why}"),
                },
                owner: Box::new(target),
            },
        }
    }
}

/// The narrowest pane a child is given, in columns.
pub const MIN_PANE_WIDTH: u64 = 20;
/// The lowest pane a child is given, in rows.
pub const MIN_PANE_HEIGHT: u64 = 8;

/// Where the next child of a tab goes: its largest pane, split along its longer side (a cell
/// is about twice as high as wide), when both halves are still at least the minimum size.
pub fn balanced_split(layout: &PaneLayout) -> Option<(&str, Direction)> {
    // The first of equally large panes (`max_by_key` keeps the last it sees).
    let largest = layout
        .panes
        .iter()
        .rev()
        .max_by_key(|pane| (pane.width * pane.height, pane.width))?;
    let direction = if largest.width >= 2 * largest.height {
        Direction::Right
    } else {
        Direction::Down
    };
    // A split gives each side half (Herdr draws no border between panes).
    let (width, height) = match direction {
        Direction::Right => (largest.width / 2, largest.height),
        Direction::Down => (largest.width, largest.height / 2),
    };
    (width >= MIN_PANE_WIDTH && height >= MIN_PANE_HEIGHT)
        .then_some((largest.pane_id.as_str(), direction))
}

/// Whether the pane Herdr describes now, with terminal `now`, is the recorded target's: a
/// target recorded without a terminal id (an older record) takes the pane id alone.
fn same_terminal(target: &Target, now: Option<&str>) -> bool {
    match (target.pane().and_then(|p| p.terminal_id.as_deref()), now) {
        (Some(recorded), Some(now)) => recorded == now,
        _ => true,
    }
}

/// Why keys typed into the pane `info` describes would not reach the process `runner`, or `None`
/// when they would: its foreground process group is not the shell's and holds `runner`.
fn shell_or_stranger(info: &ProcessInfo, runner: u32) -> Option<String> {
    match (info.foreground_pgid, info.shell_pid) {
        (None, _) => Some(format!(
            "pane {} names no foreground process group",
            info.pane_id
        )),
        (Some(group), Some(shell)) if group == shell => Some(format!(
            "the shell of pane {} is its foreground program",
            info.pane_id
        )),
        _ if !info.foreground.iter().any(|p| p.pid == runner) => Some(format!(
            "its runner, process {runner}, is not the foreground program of pane {}",
            info.pane_id
        )),
        _ => None,
    }
}

/// A failure of a call about `pane`: [`Error::NotFound`] when Herdr says the pane is not there.
fn pane_error(pane: &str, err: herd_herdr::Error) -> Error {
    if err.is_pane_missing() {
        Error::NotFound {
            target: format!("herdr pane {pane}"),
        }
    } else {
        herdr_error(err)
    }
}

fn herdr_error(err: herd_herdr::Error) -> Error {
    use herd_herdr::Error as H;
    let command = format!("herdr {}", err.command());
    match err {
        H::Timeout { budget, .. } => Error::Timeout {
            command,
            budget_ms: budget.as_millis() as u64,
        },
        H::Protocol { problem, .. } => Error::Malformed {
            command,
            detail: problem,
        },
        H::Unavailable { reason, .. } => Error::Unavailable {
            surface: SURFACE,
            reason: format!("{command}: {reason}"),
        },
        H::Usage { message, .. } => Error::Failed { command, message },
        H::Remote { code, message, .. } => Error::Failed {
            command,
            message: format!("{code}: {message}"),
        },
    }
}

impl Surface for Herdr {
    fn kind(&self) -> SurfaceKind {
        SurfaceKind::Herdr
    }

    fn has_terminal(&self) -> bool {
        true
    }

    fn socket(&self) -> Option<PathBuf> {
        self.socket.clone()
    }

    fn script_prologue(&self, _name: &str) -> Vec<String> {
        vec!["export PI_SUBAGENT_SURFACE=\"$HERDR_PANE_ID\"".to_owned()]
    }

    fn launch(&self, launch: &Launch<'_>, budgets: &LaunchBudgets) -> Result<Target, LaunchError> {
        if let Some(root) = launch.into {
            return self.launch_into(root, launch, budgets);
        }
        let pane = self
            .place(launch.cwd, budgets.deadline(Operation::Placement))
            .map_err(|e| e.during(Operation::Placement, budgets.placement))?;
        if let Ok(client) = self.client(budgets.rename, budgets.deadline(Operation::Rename)) {
            // Cosmetic: a failed rename changes nothing about the launch.
            let _ = client.pane_rename(&pane.pane_id, launch.name);
        }
        if let Err(err) =
            self.wait_shell_ready(&pane.pane_id, budgets.deadline(Operation::Readiness))
        {
            let err = err.during(Operation::Readiness, budgets.readiness);
            return Err(self.roll_back(pane, err));
        }
        let during = |e: Error| e.during(Operation::Dispatch, budgets.dispatch);
        let command = format!("sh {}", shell_quote(&launch.script.to_string_lossy()));
        let client = match self.client(REQUEST_BUDGET, budgets.deadline(Operation::Dispatch)) {
            Ok(client) => client,
            Err(err) => return Err(self.roll_back(pane, during(err))),
        };
        match client.pane_run(&pane.pane_id, &command) {
            Ok(()) => Ok(Target::Pane(pane)),
            Err(err) if err.effect_possible() => Err(LaunchError::Uncertain {
                error: during(herdr_error(err)),
                owner: Box::new(Target::Pane(pane)),
            }),
            Err(err) => Err(self.roll_back(pane, during(herdr_error(err)))),
        }
    }

    fn presence(&self, target: &Target, deadline: Instant) -> Result<Presence, Error> {
        self.inspect(target, deadline).map(|seen| seen.presence)
    }

    fn inspect(&self, target: &Target, deadline: Instant) -> Result<Inspection, Error> {
        let pane = self.pane_id(target)?;
        match self.client(REQUEST_BUDGET, deadline)?.pane_get(pane) {
            PaneState::Present(info) if !same_terminal(target, info.terminal_id.as_deref()) => {
                // The same pane id in a restarted Herdr: a fresh shell, not the child's.
                Ok(Inspection {
                    presence: Presence::Absent,
                    agent: None,
                })
            }
            PaneState::Present(info) => Ok(Inspection {
                presence: Presence::Running,
                agent: Some(info.agent_status),
            }),
            PaneState::Missing => Ok(Inspection {
                presence: Presence::Absent,
                agent: None,
            }),
            PaneState::Unavailable(err) => Err(herdr_error(err)),
        }
    }

    fn list(&self, deadline: Instant) -> Result<Vec<Listed>, Error> {
        let list = self
            .client(REQUEST_BUDGET, deadline)?
            .pane_list(None)
            .map_err(herdr_error)?;
        Ok(list
            .panes
            .into_iter()
            .map(|p| Listed {
                pane_id: p.pane_id,
                terminal_id: p.terminal_id,
                presence: Presence::Running,
                agent: Some(p.agent_status),
            })
            .collect())
    }

    fn read_tail(&self, target: &Target, lines: usize, deadline: Instant) -> Result<String, Error> {
        let pane = self.pane_id(target)?;
        let lines = u32::try_from(lines).unwrap_or(u32::MAX);
        self.client(REQUEST_BUDGET, deadline)?
            .pane_read(pane, ReadSource::Visible, Some(lines))
            .map_err(|err| pane_error(pane, err))
    }

    fn send_keys(&self, target: &Target, keys: &[Key], deadline: Instant) -> Result<(), Error> {
        let pane = self.pane_id(target)?;
        // Text goes in as one input (`pane send-text`, a paste to a program that asked for
        // bracketed paste), keys between texts as one `pane send-keys`, in their order.
        let mut names: Vec<&str> = Vec::new();
        for key in keys {
            let name = match key {
                Key::Escape => "Escape",
                Key::Enter => "enter",
                Key::Interrupt => "ctrl+c",
                Key::Text(text) => {
                    self.send_key_names(pane, &std::mem::take(&mut names), deadline)?;
                    self.client(REQUEST_BUDGET, deadline)?
                        .pane_send_text(pane, text)
                        .map_err(|err| pane_error(pane, err))?;
                    continue;
                }
            };
            names.push(name);
        }
        self.send_key_names(pane, &names, deadline)
    }

    /// A Herdr pane keeps its shell after the child ends, and keys typed there would be run as
    /// a command: they reach the child only while the pane's foreground process group is not the
    /// shell and holds the runner's process.
    fn input_reaches(
        &self,
        target: &Target,
        runner: &herd_core::identity::Record,
        deadline: Instant,
    ) -> Result<Option<String>, Error> {
        let pane = self.pane_id(target)?;
        let info = match self
            .client(REQUEST_BUDGET, deadline)?
            .pane_process_info(pane)
            .map_err(|err| pane_error(pane, err))
        {
            Ok(info) => info,
            Err(Error::NotFound { .. }) => return Ok(Some(format!("its pane {pane} is gone"))),
            Err(err) => return Err(err),
        };
        Ok(shell_or_stranger(&info, runner.pid))
    }

    fn close(&self, target: &Target, deadline: Instant) -> Result<(), Error> {
        let Target::Pane(pane) = target else {
            return Err(Error::WrongTarget(
                "a process target is not a Herdr pane".into(),
            ));
        };
        if !pane.owned {
            return Err(Error::Unsupported {
                surface: SURFACE,
                operation: format!("close pane {}, which herd did not create", pane.pane_id),
            });
        }
        self.client(REQUEST_BUDGET, deadline)?
            .pane_close(&pane.pane_id)
            .map_err(|err| pane_error(&pane.pane_id, err))
    }

    fn pane_pid(&self, target: &Target, deadline: Instant) -> Result<u32, Error> {
        let pane = self.pane_id(target)?;
        let info = self
            .client(REQUEST_BUDGET, deadline)?
            .pane_process_info(pane)
            .map_err(|err| pane_error(pane, err))?;
        info.shell_pid.ok_or_else(|| Error::Malformed {
            command: "herdr pane process-info".into(),
            detail: format!("pane {pane} names no shell process"),
        })
    }

    fn focus(&self, target: &Target, deadline: Instant) -> Result<(), Error> {
        let Target::Pane(pane) = target else {
            return Err(Error::WrongTarget(
                "a process target is not a Herdr pane".into(),
            ));
        };
        let workspace = match &pane.workspace_id {
            Some(workspace) => workspace.clone(),
            None => match self
                .client(REQUEST_BUDGET, deadline)?
                .pane_get(&pane.pane_id)
            {
                PaneState::Present(info) => info.workspace_id,
                PaneState::Missing => {
                    return Err(Error::NotFound {
                        target: format!("herdr pane {}", pane.pane_id),
                    });
                }
                PaneState::Unavailable(err) => return Err(herdr_error(err)),
            },
        };
        self.client(REQUEST_BUDGET, deadline)?
            .workspace_focus(&workspace)
            .map_err(herdr_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use herd_herdr::PaneRect;

    fn layout(panes: &[(&str, u64, u64)]) -> PaneLayout {
        PaneLayout {
            tab_id: Some("w1:t2".into()),
            panes: panes
                .iter()
                .map(|(id, width, height)| PaneRect {
                    pane_id: (*id).into(),
                    width: *width,
                    height: *height,
                })
                .collect(),
        }
    }

    #[test]
    fn keys_reach_the_runner_only_as_the_foreground_program_that_is_not_the_shell() {
        let info = |group: Option<u32>, pids: &[u32]| ProcessInfo {
            pane_id: "w1:p2".into(),
            shell_pid: Some(100),
            foreground_pgid: group,
            foreground: pids
                .iter()
                .map(|pid| herd_herdr::ForegroundProcess {
                    pid: *pid,
                    name: "sh".into(),
                    argv: Vec::new(),
                    cwd: None,
                })
                .collect(),
        };
        assert_eq!(shell_or_stranger(&info(Some(200), &[200, 201]), 201), None);
        let at_the_prompt = shell_or_stranger(&info(Some(100), &[100]), 201).unwrap();
        assert!(at_the_prompt.contains("shell"), "{at_the_prompt}");
        let another = shell_or_stranger(&info(Some(300), &[300]), 201).unwrap();
        assert!(another.contains("not the foreground"), "{another}");
        assert!(shell_or_stranger(&info(None, &[]), 201).is_some());
    }

    #[test]
    fn the_largest_pane_is_halved_along_its_longer_side_while_usable() {
        // Herdr's headless workspace area is 54 x 23.
        assert_eq!(
            balanced_split(&layout(&[("w1:p1", 54, 23)])),
            Some(("w1:p1", Direction::Right))
        );
        assert_eq!(
            balanced_split(&layout(&[("w1:p1", 27, 23), ("w1:p2", 27, 23)])),
            Some(("w1:p1", Direction::Down))
        );
        assert_eq!(
            balanced_split(&layout(&[
                ("w1:p1", 27, 11),
                ("w1:p2", 27, 23),
                ("w1:p3", 27, 12)
            ])),
            Some(("w1:p2", Direction::Down))
        );
        // Four quarters: a fifth child would get 13 columns, so it gets a tab of its own.
        assert_eq!(
            balanced_split(&layout(&[
                ("w1:p1", 27, 11),
                ("w1:p2", 27, 11),
                ("w1:p3", 27, 12),
                ("w1:p4", 27, 12)
            ])),
            None
        );
        assert_eq!(balanced_split(&layout(&[])), None);
    }
}
