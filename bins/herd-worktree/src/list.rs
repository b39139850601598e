//! `herd-worktree list`: the repository-local listing a child sees.
//!
//! Every registered checkout of the repository, the principal one first: named branches by
//! name, detached checkouts as `(detached HEAD)`. A detached sibling is listed like any other
//! and never stops the listing of the named ones.

use std::path::{Path, PathBuf};

use herd_core::Error;
use herd_core::escape::encode_host_value;
use herd_git::{Deadline, Git, WorktreeEntry, budget};
use herd_protocol::worktree::{ListedWorktree, WorktreeList};

use crate::handoff::VALUE_MAX_CHARS;

/// The checkouts of one repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    /// The principal checkout.
    pub repository: PathBuf,
    pub worktrees: Vec<WorktreeEntry>,
}

/// Lists the checkouts of the repository `cwd` is in.
pub fn list(git: &Git, cwd: &Path) -> Result<Listing, Error> {
    if !cwd.is_dir() {
        return Err(
            Error::not_found(format!("{} is not a directory", cwd.display())).with_field("cwd"),
        );
    }
    let worktrees = git
        .worktree_list(cwd, &Deadline::after(budget::PRINCIPAL))
        .map_err(|e| crate::create::source_error(e, cwd))?;
    let repository = worktrees.first().map(|w| w.path.clone()).ok_or_else(|| {
        Error::from(herd_git::Error::Malformed {
            what: "git worktree list".into(),
            detail: "no checkout listed".into(),
        })
    })?;
    Ok(Listing {
        repository,
        worktrees,
    })
}

impl Listing {
    /// The `--json` document: each checkout with its branch (`null` when detached).
    pub fn document(&self) -> WorktreeList {
        WorktreeList {
            repository: self.repository.to_string_lossy().into_owned(),
            worktrees: self
                .worktrees
                .iter()
                .enumerate()
                .map(|(idx, w)| ListedWorktree {
                    path: w.path.to_string_lossy().into_owned(),
                    branch: w.branch.clone(),
                    label: w.branch_label().to_owned(),
                    head: w.head.clone(),
                    detached: w.detached,
                    bare: w.bare,
                    principal: idx == 0,
                    locked: w.locked.is_some(),
                    prunable: w.prunable.is_some(),
                })
                .collect(),
        }
    }

    /// One line per checkout: the path and the branch (or `(detached HEAD)`), values encoded.
    pub fn human(&self) -> String {
        let value = |s: &str| encode_host_value(s, VALUE_MAX_CHARS);
        self.worktrees
            .iter()
            .map(|w| {
                let label = match &w.branch {
                    Some(b) => value(b),
                    None => w.branch_label().to_owned(),
                };
                let mut line = format!("{}  {label}", value(&w.path.to_string_lossy()));
                if w.locked.is_some() {
                    line.push_str("  (locked)");
                }
                if w.prunable.is_some() {
                    line.push_str("  (prunable)");
                }
                line
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}
