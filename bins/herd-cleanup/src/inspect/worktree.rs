//! The checkout's own state as git reports it: changed, conflicted and untracked files, the
//! branch still the one listed, initialised submodules, and the ignored files counted.

use std::path::Path;

use herd_git::index::{self, Gitlinks};
use herd_git::{EntryKind, Git, Head};

use super::{BlockerCode, Context, Entry, VALUE_MAX_CHARS, files, shown, shown_path, text};

pub(super) fn git_state(git: &Git, entry: &mut Entry, canonical: &Path, read: Option<GitReads>) {
    let read = read.unwrap_or_else(|| GitReads::of(git, canonical));
    match read.status {
        Ok(status) => {
            let mut changed = 0u64;
            let mut untracked = 0u64;
            let mut conflicted = 0u64;
            for e in &status.entries {
                match e.kind {
                    EntryKind::Changed | EntryKind::Renamed { .. } => changed += 1,
                    EntryKind::Unmerged => conflicted += 1,
                    EntryKind::Untracked => {
                        untracked += 1;
                        entry.internal.untracked.push(e.path.clone());
                    }
                    EntryKind::Ignored => {}
                }
            }
            entry.changed_files = Some(changed + conflicted);
            entry.untracked_files = Some(untracked);
            if conflicted > 0 {
                entry.block(
                    BlockerCode::Conflicts,
                    format!("{} with merge conflicts", files(conflicted)),
                );
            }
            if changed > 0 {
                entry.block(
                    BlockerCode::Dirty,
                    format!("{} with uncommitted changes", files(changed)),
                );
            }
            // Untracked files block once the owners' manifests say which of them setup made
            // ([`setup_made`]).
            if let (Some(Head::Branch(now)), Some(listed)) = (&status.head, &entry.branch) {
                if now != listed {
                    entry.block(
                        BlockerCode::IdentityDisagrees,
                        format!(
                            "the branch changed during inspection: {} became {}",
                            shown(listed),
                            shown(now)
                        ),
                    );
                }
            }
            if status.head_oid.is_some() {
                entry.head = status.head_oid.clone();
            }
        }
        Err(e) => entry.block(
            BlockerCode::GitUnknown,
            format!("git status failed: {}", shown(&e)),
        ),
    }
    match initialised_submodules(git, entry, canonical) {
        Ok(initialised) => {
            if !initialised.is_empty() {
                entry.block(
                    BlockerCode::InitializedSubmodules,
                    format!(
                        "initialised submodules: {}",
                        herd_core::escape::encode_list(
                            &initialised,
                            VALUE_MAX_CHARS,
                            herd_core::escape::Noun::new("submodule", "submodules")
                        )
                    ),
                );
            }
        }
        Err(message) => entry.block(BlockerCode::GitUnknown, message),
    }
    match read.ignored {
        Ok(n) => entry.ignored_files = Some(n),
        Err(e) => entry.block(
            BlockerCode::IgnoredCountFailed,
            format!("the ignored files could not be counted: {}", shown(&e)),
        ),
    }
}

/// The two git reads of a checkout that take longest, its status and its ignored-file count,
/// each its own call with its own budget; an error is kept as its message.
pub(super) struct GitReads {
    status: Result<herd_git::Status, String>,
    ignored: Result<u64, String>,
}

impl GitReads {
    /// Both reads, each in its own process, at the same time.
    pub(super) fn concurrent(git: &Git, canonical: &Path) -> GitReads {
        std::thread::scope(|scope| {
            let ignored = scope.spawn(|| {
                git.count_ignored(canonical, &Context::deadline())
                    .map_err(|e| e.to_string())
            });
            let status = git
                .status(canonical, &Context::deadline())
                .map_err(|e| e.to_string());
            GitReads {
                status,
                ignored: ignored
                    .join()
                    .unwrap_or_else(|_| Err("the count panicked".to_owned())),
            }
        })
    }

    pub(super) fn failed(why: &str) -> GitReads {
        GitReads {
            status: Err(why.to_owned()),
            ignored: Err(why.to_owned()),
        }
    }

    pub(super) fn of(git: &Git, canonical: &Path) -> GitReads {
        GitReads {
            status: git
                .status(canonical, &Context::deadline())
                .map_err(|e| e.to_string()),
            ignored: git
                .count_ignored(canonical, &Context::deadline())
                .map_err(|e| e.to_string()),
        }
    }
}

/// The submodules of the checkout that are initialised: the gitlinks its index records whose
/// directory holds a `.git` (what `git worktree remove` refuses), and those in conflict.
///
/// The index is read in process; an index this reader does not cover (a split or sparse index,
/// an unborn head whose hash size is unknown) is left to `git submodule status --recursive`.
fn initialised_submodules(
    git: &Git,
    entry: &Entry,
    canonical: &Path,
) -> Result<Vec<String>, String> {
    let hash_len = entry.head.as_ref().map(|oid| oid.len() / 2);
    if let (Some(git_dir), Some(hash_len)) = (&entry.internal.git_dir, hash_len) {
        if let Gitlinks::Paths(links) = index::gitlinks(git_dir, hash_len) {
            let mut initialised = Vec::new();
            for link in links {
                let dot_git = canonical.join(&link.path).join(".git");
                let populated = match std::fs::symlink_metadata(&dot_git) {
                    Ok(_) => true,
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                        ) =>
                    {
                        false
                    }
                    Err(e) => {
                        return Err(format!(
                            "cannot tell whether submodule {} is initialised: {e}",
                            shown_path(&link.path)
                        ));
                    }
                };
                if link.conflicted || populated {
                    initialised.push(text(&link.path));
                }
            }
            return Ok(initialised);
        }
    }
    let out = git
        .run(
            canonical,
            ["submodule", "status", "--recursive"],
            &Context::deadline(),
        )
        .map_err(|e| format!("git submodule status failed: {}", shown(&e.to_string())))?;
    let text = String::from_utf8_lossy(&out);
    Ok(text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('-'))
        .filter_map(|l| {
            l.get(1..)
                .and_then(|rest| rest.split(' ').nth(1))
                .map(str::to_owned)
        })
        .collect())
}
