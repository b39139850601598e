//! The records herd reads out of Herdr's replies, each parsed strictly from its JSON object.
//!
//! Only the fields herd uses are kept (docs/protocol.md, "Herdr"). A required field that is missing, or
//! any field of the wrong type, is a problem naming its path; optional fields may be absent or
//! `null`, as Herdr's schema allows.

use std::collections::HashSet;
use std::fmt;
use std::path::PathBuf;

use crate::json::{Node, Problem};

/// The agent status Herdr reports for a pane (docs/protocol.md, "Herdr": agent status).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AgentStatus {
    Idle,
    Working,
    Blocked,
    Done,
    Unknown,
}

impl AgentStatus {
    /// Reads a status; any value herd does not know is `Unknown`.
    pub fn parse(text: &str) -> AgentStatus {
        match text {
            "idle" => AgentStatus::Idle,
            "working" => AgentStatus::Working,
            "blocked" => AgentStatus::Blocked,
            "done" => AgentStatus::Done,
            _ => AgentStatus::Unknown,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            AgentStatus::Idle => "idle",
            AgentStatus::Working => "working",
            AgentStatus::Blocked => "blocked",
            AgentStatus::Done => "done",
            AgentStatus::Unknown => "unknown",
        }
    }
}

impl fmt::Display for AgentStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A pane as `pane get`, `pane list`, `pane current` and `pane split` describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneInfo {
    pub pane_id: String,
    pub workspace_id: String,
    pub tab_id: Option<String>,
    pub terminal_id: Option<String>,
    pub cwd: Option<PathBuf>,
    pub foreground_cwd: Option<PathBuf>,
    pub label: Option<String>,
    pub terminal_title_stripped: Option<String>,
    /// The agent Herdr detected or was told about; absent for a plain shell.
    pub agent: Option<String>,
    /// `Unknown` when absent or of a value herd does not know.
    pub agent_status: AgentStatus,
    /// Whether the pane is the focused one (of its tab, in the UI); `None` when not said.
    pub focused: Option<bool>,
}

impl PaneInfo {
    pub(crate) fn from_node(node: &Node<'_>) -> Result<PaneInfo, Problem> {
        let agent_status = match node.get("agent_status")? {
            Some(status) => AgentStatus::parse(status.str()?),
            None => AgentStatus::Unknown,
        };
        Ok(PaneInfo {
            pane_id: node.req_id("pane_id")?,
            workspace_id: node.req_id("workspace_id")?,
            tab_id: node.opt_id("tab_id")?,
            terminal_id: node.opt_id("terminal_id")?,
            cwd: node.opt_path("cwd")?,
            foreground_cwd: node.opt_path("foreground_cwd")?,
            label: node.opt_str("label")?,
            terminal_title_stripped: node.opt_str("terminal_title_stripped")?,
            // An empty agent name says as little as none.
            agent: node.opt_str("agent")?.filter(|agent| !agent.is_empty()),
            agent_status,
            focused: node.opt_bool("focused")?,
        })
    }
}

/// The answer of `pane get`: the pane is there, Herdr says it is not, or nobody knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaneState {
    Present(PaneInfo),
    /// Herdr answered `pane_not_found` (or `not_found`).
    Missing,
    /// Any other failure: the pane may or may not exist.
    Unavailable(crate::Error),
}

/// A snapshot of panes: every row has a pane and a workspace id, no pane appears twice.
///
/// A list proves that the panes in it exist; it never proves that a pane is absent (a row can
/// be missed while Herdr moves panes), so absence is confirmed with `pane get` only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneList {
    pub panes: Vec<PaneInfo>,
}

impl PaneList {
    pub(crate) fn from_node(result: &Node<'_>, workspace: Option<&str>) -> Result<Self, Problem> {
        let mut panes = Vec::new();
        let mut seen = HashSet::new();
        for row in result.req("panes")?.items()? {
            let pane = PaneInfo::from_node(&row)?;
            if !seen.insert(pane.pane_id.clone()) {
                return Err(format!("{} repeats pane {}", row.path(), pane.pane_id));
            }
            if let Some(workspace) = workspace {
                if pane.workspace_id != workspace {
                    return Err(format!(
                        "{} is in workspace {}, not the requested {workspace}",
                        row.path(),
                        pane.workspace_id
                    ));
                }
            }
            panes.push(pane);
        }
        Ok(PaneList { panes })
    }

    /// Returns the pane with this id, which the snapshot proves exists.
    pub fn find(&self, pane_id: &str) -> Option<&PaneInfo> {
        self.panes.iter().find(|pane| pane.pane_id == pane_id)
    }

    /// Returns the only pane of the list, or why there is not exactly one.
    pub fn sole_pane(&self) -> Result<&PaneInfo, String> {
        match self.panes.as_slice() {
            [pane] => Ok(pane),
            panes => Err(format!("expected exactly one pane, found {}", panes.len())),
        }
    }
}

/// Where a workspace's checkout is, when it is a git work tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceWorktree {
    pub checkout_path: PathBuf,
    pub repo_root: Option<PathBuf>,
    pub repo_key: Option<String>,
    pub repo_name: Option<String>,
    pub is_linked_worktree: Option<bool>,
}

/// A workspace as `workspace list` and `workspace get` describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceInfo {
    pub workspace_id: String,
    pub label: Option<String>,
    pub focused: Option<bool>,
    pub tab_count: Option<u64>,
    pub pane_count: Option<u64>,
    pub worktree: Option<WorkspaceWorktree>,
}

impl WorkspaceInfo {
    pub(crate) fn from_node(node: &Node<'_>) -> Result<WorkspaceInfo, Problem> {
        let worktree = match node.get("worktree")? {
            Some(tree) => Some(WorkspaceWorktree {
                checkout_path: PathBuf::from(tree.req("checkout_path")?.id()?),
                repo_root: tree.opt_path("repo_root")?,
                repo_key: tree.opt_id("repo_key")?,
                repo_name: tree.opt_str("repo_name")?,
                is_linked_worktree: tree.opt_bool("is_linked_worktree")?,
            }),
            None => None,
        };
        Ok(WorkspaceInfo {
            workspace_id: node.req_id("workspace_id")?,
            label: node.opt_str("label")?,
            focused: node.opt_bool("focused")?,
            tab_count: node.opt_count("tab_count")?,
            pane_count: node.opt_count("pane_count")?,
            worktree,
        })
    }

    pub(crate) fn list_from_node(result: &Node<'_>) -> Result<Vec<WorkspaceInfo>, Problem> {
        let mut out: Vec<WorkspaceInfo> = Vec::new();
        for row in result.req("workspaces")?.items()? {
            let workspace = WorkspaceInfo::from_node(&row)?;
            if out.iter().any(|w| w.workspace_id == workspace.workspace_id) {
                return Err(format!(
                    "{} repeats workspace {}",
                    row.path(),
                    workspace.workspace_id
                ));
            }
            out.push(workspace);
        }
        Ok(out)
    }
}

/// One process of a pane's foreground job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForegroundProcess {
    pub pid: u32,
    pub name: String,
    /// Empty when Herdr could not read it.
    pub argv: Vec<String>,
    pub cwd: Option<PathBuf>,
}

/// The processes of a pane (`pane process-info`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessInfo {
    pub pane_id: String,
    /// The pane's own process: the shell, or the command of a pane made from an argv.
    pub shell_pid: Option<u32>,
    pub foreground_pgid: Option<u32>,
    pub foreground: Vec<ForegroundProcess>,
}

impl ProcessInfo {
    pub(crate) fn from_node(node: &Node<'_>) -> Result<ProcessInfo, Problem> {
        let mut foreground = Vec::new();
        if let Some(list) = node.get("foreground_processes")? {
            for row in list.items()? {
                let argv = match row.get("argv")? {
                    Some(argv) => argv
                        .items()?
                        .iter()
                        .map(|arg| arg.str().map(str::to_owned))
                        .collect::<Result<_, _>>()?,
                    None => Vec::new(),
                };
                foreground.push(ForegroundProcess {
                    pid: row.req("pid")?.pid()?,
                    name: row.req("name")?.str()?.to_owned(),
                    argv,
                    cwd: row.opt_path("cwd")?,
                });
            }
        }
        Ok(ProcessInfo {
            pane_id: node.req_id("pane_id")?,
            shell_pid: node.get("shell_pid")?.map(|n| n.pid()).transpose()?,
            foreground_pgid: node
                .get("foreground_process_group_id")?
                .map(|n| n.pid())
                .transpose()?,
            foreground,
        })
    }

    /// Returns whether the shell itself holds the terminal: nothing runs in the foreground.
    pub fn shell_ready(&self) -> bool {
        self.shell_pid.is_some() && self.shell_pid == self.foreground_pgid
    }
}

/// The repository a `worktree list` describes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeRepo {
    pub repo_key: String,
    pub repo_root: Option<PathBuf>,
    pub repo_name: Option<String>,
    pub source_checkout_path: PathBuf,
    /// The workspace open on the source checkout, if any.
    pub source_workspace_id: Option<String>,
}

/// One checkout of a repository (`worktree list`, `worktree create`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeInfo {
    pub path: PathBuf,
    /// Absent when the checkout is detached.
    pub branch: Option<String>,
    pub is_detached: bool,
    pub is_linked_worktree: bool,
    pub label: Option<String>,
    pub open_workspace_id: Option<String>,
}

impl WorktreeInfo {
    pub(crate) fn from_node(node: &Node<'_>) -> Result<WorktreeInfo, Problem> {
        Ok(WorktreeInfo {
            path: PathBuf::from(node.req("path")?.id()?),
            branch: node.opt_id("branch")?,
            is_detached: node.req_bool("is_detached")?,
            is_linked_worktree: node.req_bool("is_linked_worktree")?,
            label: node.opt_str("label")?,
            open_workspace_id: node.opt_id("open_workspace_id")?,
        })
    }
}

/// The checkouts of a repository (`worktree list`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeList {
    pub repo: WorktreeRepo,
    pub worktrees: Vec<WorktreeInfo>,
}

impl WorktreeList {
    pub(crate) fn from_node(result: &Node<'_>) -> Result<WorktreeList, Problem> {
        let source = result.req("source")?;
        let repo = WorktreeRepo {
            repo_key: source.req_id("repo_key")?,
            repo_root: source.opt_path("repo_root")?,
            repo_name: source.opt_str("repo_name")?,
            source_checkout_path: PathBuf::from(source.req("source_checkout_path")?.id()?),
            source_workspace_id: source.opt_id("source_workspace_id")?,
        };
        let worktrees = result
            .req("worktrees")?
            .items()?
            .iter()
            .map(WorktreeInfo::from_node)
            .collect::<Result<_, _>>()?;
        Ok(WorktreeList { repo, worktrees })
    }

    /// Returns the one checkout of `branch`, or why there is not exactly one.
    pub fn unique_branch(&self, branch: &str) -> Result<&WorktreeInfo, String> {
        let mut matches = self
            .worktrees
            .iter()
            .filter(|tree| tree.branch.as_deref() == Some(branch));
        match (matches.next(), matches.next()) {
            (Some(tree), None) => Ok(tree),
            (None, _) => Err(format!("no checkout of branch {branch}")),
            (Some(_), Some(_)) => Err(format!("more than one checkout of branch {branch}")),
        }
    }
}

/// A new tab (`tab create`). Without a tab id the caller closes the pane and fails, so the pane
/// is reported even then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabCreated {
    pub pane: PaneInfo,
    pub tab_id: Option<String>,
}

/// A complete worktree: its workspace, the pane in it and the checkout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worktree {
    pub workspace_id: String,
    pub pane_id: String,
    pub tab_id: String,
    pub path: PathBuf,
    pub branch: String,
}

/// What a `worktree create` reply said. A reply may lack parts (Herdr created the checkout but
/// the reply is incomplete); the parts found are kept so the caller can recover the rest
/// with [`crate::Herdr::recover_worktree`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorktreeCreated {
    pub workspace_id: Option<String>,
    pub pane_id: Option<String>,
    pub tab_id: Option<String>,
    pub path: Option<PathBuf>,
    pub branch: Option<String>,
}

impl WorktreeCreated {
    pub(crate) fn from_node(result: &Node<'_>) -> Result<WorktreeCreated, Problem> {
        let mut out = WorktreeCreated::default();
        if let Some(workspace) = result.get("workspace")? {
            out.workspace_id = workspace.opt_id("workspace_id")?;
        }
        if let Some(pane) = result.get("root_pane")? {
            out.pane_id = pane.opt_id("pane_id")?;
            out.tab_id = pane.opt_id("tab_id")?;
        }
        if let Some(tab) = result.get("tab")? {
            let tab_id = tab.opt_id("tab_id")?;
            if out.tab_id.is_some() && tab_id.is_some() && out.tab_id != tab_id {
                return Err(format!(
                    "result.tab.tab_id {} differs from result.root_pane.tab_id {}",
                    tab_id.unwrap_or_default(),
                    out.tab_id.unwrap_or_default()
                ));
            }
            out.tab_id = out.tab_id.or(tab_id);
        }
        if let Some(tree) = result.get("worktree")? {
            out.path = tree.opt_path("path")?;
            out.branch = tree.opt_id("branch")?;
        }
        Ok(out)
    }

    /// Returns the worktree when the reply named every part of it.
    pub fn complete(&self) -> Option<Worktree> {
        Some(Worktree {
            workspace_id: self.workspace_id.clone()?,
            pane_id: self.pane_id.clone()?,
            tab_id: self.tab_id.clone()?,
            path: self.path.clone()?,
            branch: self.branch.clone()?,
        })
    }

    /// Returns the parts the reply did not name.
    pub fn missing(&self) -> Vec<&'static str> {
        let parts = [
            ("workspace_id", self.workspace_id.is_none()),
            ("pane_id", self.pane_id.is_none()),
            ("tab_id", self.tab_id.is_none()),
            ("path", self.path.is_none()),
            ("branch", self.branch.is_none()),
        ];
        parts
            .into_iter()
            .filter_map(|(name, missing)| missing.then_some(name))
            .collect()
    }
}

/// The outcome of recovering an incomplete `worktree create`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovery {
    Found(Worktree),
    /// The lookups did not identify the worktree and its pane unambiguously; the reason says
    /// which step fell short. The caller treats the creation as uncertain.
    Inconclusive(String),
}

/// A removed worktree (`worktree remove`). The branch is always kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeRemoved {
    pub workspace_id: String,
    pub path: PathBuf,
    pub forced: bool,
}

/// One pane of a tab as `pane layout` places it, in terminal cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneRect {
    pub pane_id: String,
    pub width: u64,
    pub height: u64,
}

/// The panes of one tab as `pane layout` places them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneLayout {
    pub tab_id: Option<String>,
    pub panes: Vec<PaneRect>,
}

impl PaneLayout {
    pub(crate) fn from_node(layout: &Node<'_>) -> Result<PaneLayout, Problem> {
        let mut panes = Vec::new();
        for row in layout.req("panes")?.items()? {
            let rect = row.req("rect")?;
            let count = |key: &str| {
                rect.opt_count(key)?
                    .ok_or_else(|| format!("{} has no {key}", rect.path()))
            };
            panes.push(PaneRect {
                pane_id: row.req_id("pane_id")?,
                width: count("width")?,
                height: count("height")?,
            });
        }
        Ok(PaneLayout {
            tab_id: layout.opt_id("tab_id")?,
            panes,
        })
    }
}
