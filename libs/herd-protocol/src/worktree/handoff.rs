//! The handoff: what a worktree holds when its child is done, and the document that reports it.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The uncommitted state of a checkout. `clean` means no uncommitted files; the branch may
/// still hold commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TreeState {
    Clean,
    Dirty,
    Conflicted,
}

impl TreeState {
    pub fn as_str(self) -> &'static str {
        match self {
            TreeState::Clean => "clean",
            TreeState::Dirty => "dirty",
            TreeState::Conflicted => "conflicted",
        }
    }
}

/// A captured handoff. Every `Option` Git field is `None` exactly when `warning` says why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handoff {
    pub path: PathBuf,
    /// The checked-out branch; `None` when detached or unknown (see `detached`).
    pub branch: Option<String>,
    /// Whether inspection saw a detached `HEAD`.
    pub detached: bool,
    pub base_sha: String,
    pub head_sha: Option<String>,
    pub commits_ahead: Option<u64>,
    pub tree: Option<TreeState>,
    /// Union of `base...HEAD`, the working tree, the index and untracked files, sorted.
    pub changed_files: Option<Vec<String>>,
    /// Untracked files (not ignored), sorted.
    pub untracked_files: Option<Vec<String>>,
    /// Why the Git fields are unknown.
    pub warning: Option<String>,
}

impl Handoff {
    /// A handoff whose Git fields are all unknown, for `warning`.
    pub fn unknown(path: &Path, base_sha: &str, warning: impl Into<String>) -> Handoff {
        Handoff {
            path: path.to_path_buf(),
            branch: None,
            detached: false,
            base_sha: base_sha.to_owned(),
            head_sha: None,
            commits_ahead: None,
            tree: None,
            changed_files: None,
            untracked_files: None,
            warning: Some(warning.into()),
        }
    }

    /// Whether inspection answered (no warning).
    pub fn is_known(&self) -> bool {
        self.warning.is_none()
    }

    /// `clean`, `dirty`, `conflicted` or `unknown`.
    pub fn state_str(&self) -> &'static str {
        match (self.is_known(), self.tree) {
            (true, Some(tree)) => tree.as_str(),
            _ => "unknown",
        }
    }

    /// The `--json` document of `herd-worktree inspect` (herd's snake_case keys).
    pub fn document(&self) -> WorktreeInspect {
        WorktreeInspect {
            path: self.path.to_string_lossy().into_owned(),
            branch: self.branch.clone(),
            detached: self.detached,
            base_sha: self.base_sha.clone(),
            head_sha: self.head_sha.clone(),
            commits_ahead: self.commits_ahead,
            state: match (self.is_known(), self.tree) {
                (true, Some(TreeState::Clean)) => InspectedState::Clean,
                (true, Some(TreeState::Dirty)) => InspectedState::Dirty,
                (true, Some(TreeState::Conflicted)) => InspectedState::Conflicted,
                _ => InspectedState::Unknown,
            },
            clean: self.tree.map(|t| t == TreeState::Clean),
            conflicted: self.tree.map(|t| t == TreeState::Conflicted),
            changed_files: self.changed_files.clone(),
            untracked_files: self.untracked_files.clone(),
            warning: self.warning.clone(),
        }
    }
}

/// The handoff `herd-worktree inspect` prints (and a worktree child's result carries): every Git
/// field is `null` exactly when `warning` says why. Exit 0 known, 4 unknown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WorktreeInspect {
    pub path: String,
    /// The checked-out branch; `null` when detached or unknown.
    pub branch: Option<String>,
    pub detached: bool,
    pub base_sha: String,
    pub head_sha: Option<String>,
    pub commits_ahead: Option<u64>,
    pub state: InspectedState,
    pub clean: Option<bool>,
    pub conflicted: Option<bool>,
    pub changed_files: Option<Vec<String>>,
    pub untracked_files: Option<Vec<String>>,
    pub warning: Option<String>,
}

impl WorktreeInspect {
    /// The version of this document's shape (not printed; see the crate docs).
    pub const FORMAT_VERSION: u64 = 1;
}

/// `clean` means no uncommitted files; the branch may still hold commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InspectedState {
    Clean,
    Dirty,
    Conflicted,
    Unknown,
}
