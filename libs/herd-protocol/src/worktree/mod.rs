//! The formats of `herd-worktree`: the ownership manifest on disk, and the `--json` documents of
//! `create`, `inspect`, `list` and `trust`.

pub mod claims;
mod handoff;
pub mod manifest;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use handoff::{Handoff, InspectedState, TreeState, WorktreeInspect};
pub use manifest::{Manifest, OpenedWorkspace, State};

/// What `herd-worktree trust --json` prints: the project's setup file as it is now, and whether
/// it is approved as it is (recorded by this command, or unchanged since the last approval);
/// `--show` records nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TrustApproved {
    /// The project's setup file (`.herd/worktree.toml` of the principal checkout).
    pub file: String,
    /// The SHA-256 of its bytes: a changed file needs a new approval.
    #[schemars(pattern("^[0-9a-f]{64}$"))]
    pub sha256: String,
    /// Where the approval is recorded, in the user's configuration directory.
    pub approval: String,
    /// The user's own setup file for this repository, which needs no approval.
    #[serde(rename = "userFile")]
    pub user_file: String,
    /// The commit whose files were approved: the checkout's `HEAD` (none in a repository
    /// without commits).
    pub commit: Option<String>,
    /// Every file of the repository that the file's commands name, as approved at `commit`: a
    /// worktree whose commit gives one of them other content (or adds or removes one) asks for
    /// a new approval.
    pub files: Vec<ApprovedFile>,
    /// Whether the file, with the files its commands name, is approved as it is now: `false`
    /// after `--show` of a file not approved as it is.
    pub approved: bool,
    /// The SHA-256 of the content approved before this command, if any was.
    #[serde(rename = "previousSha256")]
    #[schemars(pattern("^[0-9a-f]{64}$"))]
    pub previous_sha256: Option<String>,
}

/// A file of the repository a setup command names, as approved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ApprovedFile {
    /// The path, relative to the repository's root, as the command names it.
    pub path: String,
    /// What it is at the approved commit, through the symlinks of the tree: `blob <id>` (a
    /// file), `tree <id>` (a directory, all of it), `commit <id>` (a submodule),
    /// `outside <target in hex>` (a symlink leaving the tree), `unresolved <why>`.
    pub object: String,
}

/// What creates the checkout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Surface {
    /// `herdr worktree create`: the checkout plus a workspace and its root pane.
    Herdr,
    /// `git worktree add` under the managed root.
    Git,
}

impl Surface {
    pub fn as_str(self) -> &'static str {
        match self {
            Surface::Herdr => "herdr",
            Surface::Git => "git",
        }
    }
}

/// What `herd-worktree create` prints: the managed worktree created on a new branch, its
/// manifest written first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WorktreeCreate {
    #[schemars(pattern(crate::layout::RUN_ID_PATTERN))]
    pub run_id: String,
    pub state: State,
    pub path: String,
    pub branch: String,
    #[schemars(pattern("^[0-9a-f]{40,64}$"))]
    pub base_sha: String,
    /// The revision as requested (`HEAD` when none was).
    pub base_ref: String,
    /// The principal checkout the worktree was provisioned from.
    pub principal: String,
    pub surface: Surface,
    pub workspace_id: Option<String>,
    pub pane_id: Option<String>,
    pub tab_id: Option<String>,
    /// The ownership manifest file.
    pub manifest: String,
    pub diagnostics: Vec<String>,
}

impl WorktreeCreate {
    /// The version of this document's shape (not printed; see the crate docs).
    pub const FORMAT_VERSION: u64 = 1;
}

/// What `herd-worktree list` prints: every registered checkout of the repository, the
/// principal one first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WorktreeList {
    /// The principal checkout.
    pub repository: String,
    pub worktrees: Vec<ListedWorktree>,
}

impl WorktreeList {
    /// The version of this document's shape (not printed; see the crate docs).
    pub const FORMAT_VERSION: u64 = 1;
}

/// One checkout of a [`WorktreeList`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListedWorktree {
    pub path: String,
    /// `null` when detached or bare.
    pub branch: Option<String>,
    /// The branch, `(detached HEAD)` or `(bare)`.
    pub label: String,
    pub head: Option<String>,
    pub detached: bool,
    pub bare: bool,
    pub principal: bool,
    pub locked: bool,
    pub prunable: bool,
}
