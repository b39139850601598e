//! The Herdr client: one method per CLI command herd uses, each with its argv and its parser.
//!
//! Every argv here is one Herdr was recorded accepting (the fixtures' command lines, in the
//! same order of flags), except the cosmetic renames and `workspace focus`, whose syntax is the
//! one pi-herdr-agents uses (docs/protocol.md, "Herdr"). Each call runs under the client's
//! budget; a caller with another budget (docs/lifecycle.md, "Budgets"; [`crate::budget`]) uses
//! [`Herdr::with_budget`].

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::reply::{self, Reply, Request};
use crate::types::{
    PaneInfo, PaneLayout, PaneList, PaneState, ProcessInfo, Recovery, TabCreated, WorkspaceInfo,
    Worktree, WorktreeCreated, WorktreeList, WorktreeRemoved,
};
use crate::{budget, transport};

/// The environment variable naming the Herdr executable (default: `herdr` on `PATH`).
pub const BIN_ENV: &str = "HERD_HERDR_BIN";

/// The variable Herdr sets in each of its panes: the running server's own executable.
pub const PANE_BIN_ENV: &str = "HERDR_BIN_PATH";

/// The Herdr executable of environment `env`: `$HERD_HERDR_BIN`, else the `$HERDR_BIN_PATH` a
/// Herdr pane has (so a Herdr that is not on `PATH` is still found from inside it), else
/// `herdr` on `PATH`.
pub fn program(env: impl Fn(&str) -> Option<OsString>) -> OsString {
    env(BIN_ENV)
        .filter(|p| !p.is_empty())
        .or_else(|| env(PANE_BIN_ENV).filter(|p| Path::new(p).is_absolute()))
        .unwrap_or_else(|| "herdr".into())
}

/// Where a new pane goes relative to its anchor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Right,
    Down,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Right => "right",
            Direction::Down => "down",
        }
    }
}

/// Which text `pane read` returns (docs/protocol.md, "Herdr": the `pane read` sources).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadSource {
    /// The screen as it is now.
    Visible,
    /// The scrollback with soft wraps; `lines` counts rendered rows from the bottom.
    Recent,
    /// The scrollback with soft wraps joined.
    RecentUnwrapped,
    /// The bottom buffer Herdr's agent detection reads.
    Detection,
}

impl ReadSource {
    pub fn as_str(self) -> &'static str {
        match self {
            ReadSource::Visible => "visible",
            ReadSource::Recent => "recent",
            ReadSource::RecentUnwrapped => "recent-unwrapped",
            ReadSource::Detection => "detection",
        }
    }
}

/// The repository a worktree command starts from: a directory inside its main checkout, or
/// the workspace open on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Cwd(PathBuf),
    Workspace(String),
}

impl Source {
    fn push(&self, req: Request) -> Request {
        match self {
            Source::Cwd(cwd) => req.flag("--cwd", cwd),
            Source::Workspace(workspace) => req.flag("--workspace", workspace),
        }
    }
}

/// The parameters of `worktree create`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeCreate {
    pub source: Source,
    pub branch: String,
    /// The revision a new branch starts from (default: the source's HEAD).
    pub base: Option<String>,
    /// The checkout directory (default: Herdr's `worktrees.directory`).
    pub path: Option<PathBuf>,
    pub label: Option<String>,
    pub no_focus: bool,
}

/// A client of the Herdr CLI. Cheap to clone; every call spawns `herdr` once.
#[derive(Debug, Clone)]
pub struct Herdr {
    program: OsString,
    env: Vec<(OsString, OsString)>,
    budget: Duration,
    runner: Runner,
}

/// How a call reaches Herdr: a process, or (in this crate's unit tests) the recorded replies
/// in-process and a fixed reply.
#[derive(Debug, Clone)]
enum Runner {
    Process,
    #[cfg(test)]
    Replay(std::collections::HashMap<String, String>),
    #[cfg(test)]
    Canned(Reply),
}

impl Herdr {
    /// A client of the executable `program` (a name looked up on `PATH`, or a path) with the
    /// ordinary budget.
    pub fn new(program: impl Into<OsString>) -> Herdr {
        Herdr {
            program: program.into(),
            env: Vec::new(),
            budget: budget::ORDINARY,
            runner: Runner::Process,
        }
    }

    /// A client answered by the recorded replies without a process, under environment `env`
    /// (the double's variables included).
    #[cfg(test)]
    pub(crate) fn replaying(env: &[(&str, &str)]) -> Herdr {
        let env = env
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect();
        Herdr {
            runner: Runner::Replay(env),
            ..Herdr::new("herdr")
        }
    }

    /// A client whose every call gets `reply`.
    #[cfg(test)]
    pub(crate) fn canned(reply: Reply) -> Herdr {
        Herdr {
            runner: Runner::Canned(reply),
            ..Herdr::new("herdr")
        }
    }

    /// A client of this process's Herdr ([`program`]).
    pub fn from_env() -> Herdr {
        Herdr::new(program(|key| std::env::var_os(key)))
    }

    /// Sets a variable of Herdr's environment (e.g. `HERDR_SOCKET_PATH`), over what the caller's
    /// environment passes through.
    pub fn with_env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Herdr {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Returns a client whose calls each get `budget`.
    pub fn with_budget(&self, budget: Duration) -> Herdr {
        Herdr {
            budget,
            ..self.clone()
        }
    }

    pub fn budget(&self) -> Duration {
        self.budget
    }

    pub fn program(&self) -> &OsStr {
        &self.program
    }

    /// Returns whether this client's executable exists: a path that is an executable file, or
    /// a name found as one on `path` (a `PATH` value).
    pub fn executable_found(&self, path: Option<&OsStr>) -> bool {
        find_executable(&self.program, path).is_some()
    }

    fn call(&self, req: &Request) -> Result<Reply, Error> {
        match &self.runner {
            Runner::Process => transport::run(&self.program, &self.env, self.budget, req),
            #[cfg(test)]
            Runner::Replay(env) => {
                let outcome = crate::double::replay(&req.args, env);
                if outcome.hang.is_some() {
                    return Err(Error::Timeout {
                        command: req.command,
                        budget: self.budget,
                        mutating: req.mutating,
                    });
                }
                Ok(Reply {
                    exit: reply::Exit::Code(outcome.exit),
                    stdout: outcome.stdout,
                    stderr: outcome.stderr,
                    truncated: false,
                })
            }
            #[cfg(test)]
            Runner::Canned(reply) => Ok(reply.clone()),
        }
    }

    fn json(&self, req: &Request, types: &[&str]) -> Result<serde_json::Value, Error> {
        reply::json(req, &self.call(req)?, types)
    }

    /// `pane current [--pane P]`: the caller's pane (Herdr resolves `$HERDR_PANE_ID`, so a
    /// moved pane is found under its current id), or the pane `pane` names.
    pub fn pane_current(&self, pane: Option<&str>) -> Result<PaneInfo, Error> {
        let mut req = Request::read("pane current");
        if let Some(pane) = pane {
            req = req.flag("--pane", pane);
        }
        let result = self.json(&req, &["pane_current"])?;
        reply::parse(&req, &result, |root| {
            let node = root.req("pane")?;
            let info = PaneInfo::from_node(&node)?;
            if info.tab_id.is_none() {
                return Err("result.pane.tab_id is missing".to_owned());
            }
            expect_id(&node, "pane_id", &info.pane_id, pane)?;
            Ok(info)
        })
    }

    /// `pane split ANCHOR --direction D [--cwd C] [--env K=V]… [--no-focus]`: a new pane
    /// beside `anchor`, running the user's shell.
    pub fn pane_split(
        &self,
        anchor: &str,
        direction: Direction,
        cwd: Option<&Path>,
        env: &[(&str, &str)],
        no_focus: bool,
    ) -> Result<PaneInfo, Error> {
        let mut req = Request::change("pane split")
            .arg(anchor)
            .flag("--direction", direction.as_str());
        if let Some(cwd) = cwd {
            req = req.flag("--cwd", cwd);
        }
        for (key, value) in env {
            req = req.flag("--env", format!("{key}={value}"));
        }
        let req = req.flag_if(no_focus, "--no-focus");
        let result = self.json(&req, &["pane_info"])?;
        reply::parse(&req, &result, |root| {
            PaneInfo::from_node(&root.req("pane")?)
        })
    }

    /// `tab create --workspace W --label L [--cwd C] [--no-focus]`: a new tab with one pane.
    pub fn tab_create(
        &self,
        workspace: &str,
        label: &str,
        cwd: Option<&Path>,
        no_focus: bool,
    ) -> Result<TabCreated, Error> {
        let mut req = Request::change("tab create")
            .flag("--workspace", workspace)
            .flag("--label", label);
        if let Some(cwd) = cwd {
            req = req.flag("--cwd", cwd);
        }
        let req = req.flag_if(no_focus, "--no-focus");
        let result = self.json(&req, &["tab_created"])?;
        reply::parse(&req, &result, |root| {
            let pane = PaneInfo::from_node(&root.req("root_pane")?)?;
            let tab_id = match root.get("tab")? {
                Some(tab) => tab.opt_id("tab_id")?,
                None => None,
            };
            Ok(TabCreated { pane, tab_id })
        })
    }

    /// `pane rename P NAME` (cosmetic; callers give it [`budget::RENAME`] and ignore failure).
    pub fn pane_rename(&self, pane: &str, name: &str) -> Result<(), Error> {
        let req = Request::change("pane rename").arg(pane).arg(name);
        self.json(&req, &["ok", "pane_info"]).map(drop)
    }

    /// `tab rename T TITLE` (cosmetic).
    pub fn tab_rename(&self, tab: &str, title: &str) -> Result<(), Error> {
        let req = Request::change("tab rename").arg(tab).arg(title);
        self.json(&req, &["ok", "tab_info"]).map(drop)
    }

    /// `workspace rename W TITLE` (cosmetic).
    pub fn workspace_rename(&self, workspace: &str, title: &str) -> Result<(), Error> {
        let req = Request::change("workspace rename")
            .arg(workspace)
            .arg(title);
        self.json(&req, &["ok", "workspace_info"]).map(drop)
    }

    /// `workspace focus W`.
    pub fn workspace_focus(&self, workspace: &str) -> Result<(), Error> {
        let req = Request::change("workspace focus").arg(workspace);
        self.json(&req, &["ok", "workspace_info"]).map(drop)
    }

    /// `notification show TITLE [--body B] --sound S`: asks Herdr to show a notification to its
    /// foreground client. The answer says whether Herdr showed it, and if not why (`disabled`,
    /// `rate_limited`, `no_foreground_client`, `busy`).
    pub fn notification_show(
        &self,
        title: &str,
        body: Option<&str>,
        sound: &str,
    ) -> Result<(bool, String), Error> {
        let mut req = Request::change("notification show").arg(title);
        if let Some(body) = body {
            req = req.arg("--body").arg(body);
        }
        req = req.arg("--sound").arg(sound);
        let result = self.json(&req, &["notification_show"])?;
        reply::parse(&req, &result, |root| {
            let shown = root.req("shown")?.bool()?;
            let reason = root.opt_str("reason")?.unwrap_or_default();
            Ok((shown, reason))
        })
    }

    /// `tab get T`: whether the tab is the focused one of its workspace; `None` when not said.
    pub fn tab_focused(&self, tab: &str) -> Result<Option<bool>, Error> {
        let req = Request::read("tab get").arg(tab);
        let result = self.json(&req, &["tab_info"])?;
        reply::parse(&req, &result, |root| root.req("tab")?.opt_bool("focused"))
    }

    /// `workspace list`: every workspace, with its checkout when it is a git work tree.
    pub fn workspace_list(&self) -> Result<Vec<WorkspaceInfo>, Error> {
        let req = Request::read("workspace list");
        let result = self.json(&req, &["workspace_list"])?;
        reply::parse(&req, &result, WorkspaceInfo::list_from_node)
    }

    /// `workspace get W`.
    pub fn workspace_get(&self, workspace: &str) -> Result<WorkspaceInfo, Error> {
        let req = Request::read("workspace get").arg(workspace);
        let result = self.json(&req, &["workspace_info"])?;
        reply::parse(&req, &result, |root| {
            let node = root.req("workspace")?;
            let info = WorkspaceInfo::from_node(&node)?;
            expect_id(&node, "workspace_id", &info.workspace_id, Some(workspace))?;
            Ok(info)
        })
    }

    /// `workspace close W`: closes Herdr's workspace only; checkouts stay on disk.
    pub fn workspace_close(&self, workspace: &str) -> Result<(), Error> {
        let req = Request::change("workspace close").arg(workspace);
        self.json(&req, &["ok"]).map(drop)
    }

    /// `pane list [--workspace W]`: a snapshot accepted only when every row has its ids, no
    /// pane repeats, and (with `workspace`) every pane is in that workspace.
    pub fn pane_list(&self, workspace: Option<&str>) -> Result<PaneList, Error> {
        let mut req = Request::read("pane list");
        if let Some(workspace) = workspace {
            req = req.flag("--workspace", workspace);
        }
        let result = self.json(&req, &["pane_list"])?;
        reply::parse(&req, &result, |root| PaneList::from_node(root, workspace))
    }

    /// `pane get P`: present (with its agent and status), missing (Herdr says `pane_not_found`
    /// or `not_found`), or unavailable (any other failure, including a reply about another
    /// pane).
    pub fn pane_get(&self, pane: &str) -> PaneState {
        let req = Request::read("pane get").arg(pane);
        let answer = self.json(&req, &["pane_info"]).and_then(|result| {
            reply::parse(&req, &result, |root| {
                let node = root.req("pane")?;
                let info = PaneInfo::from_node(&node)?;
                expect_id(&node, "pane_id", &info.pane_id, Some(pane))?;
                Ok(info)
            })
        });
        match answer {
            Ok(info) => PaneState::Present(info),
            Err(err) if err.is_pane_missing() => PaneState::Missing,
            Err(err) => PaneState::Unavailable(err),
        }
    }

    /// `pane process-info --pane P`: the pane's own process and its foreground job.
    pub fn pane_process_info(&self, pane: &str) -> Result<ProcessInfo, Error> {
        let req = Request::read("pane process-info").flag("--pane", pane);
        let result = self.json(&req, &["pane_process_info"])?;
        reply::parse(&req, &result, |root| {
            let node = root.req("process_info")?;
            let info = ProcessInfo::from_node(&node)?;
            expect_id(&node, "pane_id", &info.pane_id, Some(pane))?;
            Ok(info)
        })
    }

    /// `pane read P --source S [--lines N]`: the pane's text, ANSI stripped. For the recent
    /// sources `lines` counts rendered rows from the bottom, so on a mostly empty screen a
    /// small count returns nothing.
    pub fn pane_read(
        &self,
        pane: &str,
        source: ReadSource,
        lines: Option<u32>,
    ) -> Result<String, Error> {
        let mut req = Request::read("pane read")
            .arg(pane)
            .flag("--source", source.as_str());
        if let Some(lines) = lines {
            req = req.flag("--lines", lines.to_string());
        }
        reply::text(&req, &self.call(&req)?)
    }

    /// `pane run P TEXT`: types `text` and Enter into the pane as one atomic input.
    pub fn pane_run(&self, pane: &str, text: &str) -> Result<(), Error> {
        let req = Request::change("pane run").arg(pane).arg(text);
        reply::silent(&req, &self.call(&req)?)
    }

    /// `pane send-keys P KEY…`: key names such as `Escape`, `ctrl+c`, `enter`; Herdr checks
    /// every key before it writes any.
    pub fn pane_send_keys(&self, pane: &str, keys: &[&str]) -> Result<(), Error> {
        let mut req = Request::change("pane send-keys").arg(pane);
        for key in keys {
            req = req.arg(key);
        }
        reply::silent(&req, &self.call(&req)?)
    }

    /// `pane send-text P TEXT`: types `text` into the pane as one input, without Enter (in
    /// bracketed paste when the pane's program asked for it).
    pub fn pane_send_text(&self, pane: &str, text: &str) -> Result<(), Error> {
        let req = Request::change("pane send-text").arg(pane).arg(text);
        reply::silent(&req, &self.call(&req)?)
    }

    /// `pane layout --pane P`: the size of every pane of P's tab.
    pub fn pane_layout(&self, pane: &str) -> Result<PaneLayout, Error> {
        let req = Request::read("pane layout").flag("--pane", pane);
        let result = self.json(&req, &["pane_layout"])?;
        reply::parse(&req, &result, |root| {
            PaneLayout::from_node(&root.req("layout")?)
        })
    }

    /// `pane close P`: kills the pane's processes; closing its last pane closes the tab.
    pub fn pane_close(&self, pane: &str) -> Result<(), Error> {
        let req = Request::change("pane close").arg(pane);
        self.json(&req, &["ok"]).map(drop)
    }

    /// `worktree create (--cwd C | --workspace W) --branch B [--base R] [--path P] [--label L]
    /// [--no-focus]`: a linked checkout in a new workspace. A reply that lacks parts is still
    /// returned (see [`WorktreeCreated::complete`]); a reply naming another branch is an error.
    pub fn worktree_create(&self, params: &WorktreeCreate) -> Result<WorktreeCreated, Error> {
        let mut req = params
            .source
            .push(Request::change("worktree create"))
            .flag("--branch", &params.branch);
        if let Some(base) = &params.base {
            req = req.flag("--base", base);
        }
        if let Some(path) = &params.path {
            req = req.flag("--path", path);
        }
        if let Some(label) = &params.label {
            req = req.flag("--label", label);
        }
        let req = req.flag_if(params.no_focus, "--no-focus");
        let result = self.json(&req, &["worktree_created"])?;
        reply::parse(&req, &result, |root| {
            let created = WorktreeCreated::from_node(root)?;
            match &created.branch {
                Some(branch) if *branch != params.branch => Err(format!(
                    "result.worktree.branch is {branch}, not the requested {}",
                    params.branch
                )),
                _ => Ok(created),
            }
        })
    }

    /// `worktree list [--cwd C | --workspace W]`: the repository's checkouts (without a source,
    /// those of the active workspace's repository).
    pub fn worktree_list(&self, source: Option<&Source>) -> Result<WorktreeList, Error> {
        let mut req = Request::read("worktree list");
        if let Some(source) = source {
            req = source.push(req);
        }
        let result = self.json(&req, &["worktree_list"])?;
        reply::parse(&req, &result, WorktreeList::from_node)
    }

    /// `worktree remove --workspace W`: removes a clean linked checkout and closes its
    /// workspace; never `--force`, never the branch.
    pub fn worktree_remove(&self, workspace: &str) -> Result<WorktreeRemoved, Error> {
        let req = Request::change("worktree remove").flag("--workspace", workspace);
        let result = self.json(&req, &["worktree_removed"])?;
        reply::parse(&req, &result, |root| {
            let removed = WorktreeRemoved {
                workspace_id: root.req_id("workspace_id")?,
                path: PathBuf::from(root.req("path")?.id()?),
                forced: root.req_bool("forced")?,
            };
            expect_id(root, "workspace_id", &removed.workspace_id, Some(workspace))?;
            Ok(removed)
        })
    }

    /// Completes an incomplete `worktree create` of `branch` from `source` by looking: the one
    /// checkout of the branch (`worktree list`), then the one pane of its workspace
    /// (`pane list --workspace`). The client's budget bounds both calls together (the recovery
    /// inspection has 6 s in total). Whatever the partial reply did name must agree.
    pub fn recover_worktree(
        &self,
        source: &Source,
        branch: &str,
        partial: &WorktreeCreated,
    ) -> Result<Recovery, Error> {
        let deadline = Instant::now() + self.budget;
        let list = self.worktree_list(Some(source))?;
        recover(&list, branch, partial, |workspace| {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::Timeout {
                    command: "pane list",
                    budget: self.budget,
                    mutating: false,
                });
            }
            self.with_budget(left).pane_list(Some(workspace))
        })
    }
}

/// The steps of [`Herdr::recover_worktree`] after the worktree list, with the pane lookup
/// passed in.
pub(crate) fn recover(
    list: &WorktreeList,
    branch: &str,
    partial: &WorktreeCreated,
    panes_of: impl FnOnce(&str) -> Result<PaneList, Error>,
) -> Result<Recovery, Error> {
    let inconclusive = |why: String| Ok(Recovery::Inconclusive(why));
    let tree = match list.unique_branch(branch) {
        Ok(tree) => tree,
        Err(why) => return inconclusive(why),
    };
    if !tree.is_linked_worktree {
        return inconclusive(format!("branch {branch} is the main checkout"));
    }
    let Some(workspace) = &tree.open_workspace_id else {
        return inconclusive(format!("the checkout of {branch} is open in no workspace"));
    };
    if let Some(named) = &partial.workspace_id {
        if named != workspace {
            return inconclusive(format!(
                "the reply named workspace {named}, the list {workspace}"
            ));
        }
    }
    if let Some(named) = &partial.path {
        if *named != tree.path {
            return inconclusive(format!(
                "the reply named checkout {}, the list {}",
                named.display(),
                tree.path.display()
            ));
        }
    }
    let panes = panes_of(workspace)?;
    let pane = match panes.sole_pane() {
        Ok(pane) => pane,
        Err(why) => return inconclusive(format!("workspace {workspace}: {why}")),
    };
    if let Some(named) = &partial.pane_id {
        if *named != pane.pane_id {
            return inconclusive(format!(
                "the reply named pane {named}, workspace {workspace} holds {}",
                pane.pane_id
            ));
        }
    }
    let Some(tab_id) = pane.tab_id.clone().or_else(|| partial.tab_id.clone()) else {
        return inconclusive(format!("pane {} has no tab id", pane.pane_id));
    };
    Ok(Recovery::Found(Worktree {
        workspace_id: workspace.clone(),
        pane_id: pane.pane_id.clone(),
        tab_id,
        path: tree.path.clone(),
        branch: branch.to_owned(),
    }))
}

/// Checks that a reply is about the object that was asked for.
fn expect_id(
    node: &crate::json::Node<'_>,
    key: &str,
    found: &str,
    asked: Option<&str>,
) -> Result<(), String> {
    match asked {
        Some(asked) if asked != found => Err(format!(
            "{}.{key} is {found}, not the requested {asked}",
            node.path()
        )),
        _ => Ok(()),
    }
}

/// Returns whether Herdr can be used here: `HERDR_ENV=1` and the executable found
/// (`$HERD_HERDR_BIN`, else `herdr` on `PATH`).
pub fn available() -> bool {
    available_with(
        std::env::var_os("HERDR_ENV").as_deref(),
        &Herdr::from_env(),
        std::env::var_os("PATH").as_deref(),
    )
}

/// [`available`] over explicit values of `HERDR_ENV` and `PATH`.
pub fn available_with(herdr_env: Option<&OsStr>, herdr: &Herdr, path: Option<&OsStr>) -> bool {
    herdr_env == Some(OsStr::new("1")) && herdr.executable_found(path)
}

fn find_executable(program: &OsStr, path: Option<&OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let is_executable = |candidate: &Path| {
        candidate
            .metadata()
            .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    };
    let program_path = Path::new(program);
    if program_path.components().count() > 1 {
        return is_executable(program_path).then(|| program_path.to_path_buf());
    }
    std::env::split_paths(path?)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

#[cfg(test)]
mod tests;
