//! Grouped placement: a parent's children share one owned `Agents` tab per workspace.
//!
//! The workspace is the one whose checkout holds the child's directory (the
//! longest canonical checkout path containing it; the caller's workspace wins ties and holds
//! children whose directory no checkout contains). The first child there creates the tab; later
//! ones split a pane of it.
//!
//! Which tab is the `Agents` tab is herd's own state, so that a later `herd-launch` finds it
//! again: `herdr-agents-tabs.json` in the artifacts directory,
//! `{"format_version":1,"tabs":[{"socket":…,"workspace_id":"w1","tab_id":"w1:t2"}]}`, where
//! `socket` is the Herdr socket the tab belongs to (absent for the default one). A tab is owned by
//! its id, never by its label, and the record is only a hint: it is checked against Herdr's
//! pane list before use, and a record that cannot be read is replaced.
//!
//! Placements of one artifacts directory take turns (an exclusive `flock` of
//! `herdr-agents-tabs.lock`), so children launched at the same time find the tab the first of
//! them created instead of each creating one.

use std::path::{Path, PathBuf};
use std::time::Instant;

use herd_herdr::WorkspaceInfo;
use herd_protocol::layout::Artifacts;
use serde::{Deserialize, Serialize};

use crate::Error;

/// The label of the owned tab.
pub const AGENTS_TAB: &str = "Agents";

/// The record's format version.
const FORMAT_VERSION: u64 = 1;

/// The bound of a record read: a few entries per workspace of one parent.
const READ_LIMIT: u64 = 64 * 1024;

/// `herdr-agents-tabs.json`: the owned `Agents` tabs of the parent of `artifacts`.
pub fn owned_tabs_file(artifacts: &Artifacts) -> PathBuf {
    artifacts.root().join("herdr-agents-tabs.json")
}

/// `herdr-agents-tabs.lock`: the lock grouped placements of `artifacts` take turns on.
pub fn placement_lock(artifacts: &Artifacts) -> PathBuf {
    artifacts.root().join("herdr-agents-tabs.lock")
}

/// Picks the workspace a child whose directory is `cwd` goes to: the one whose checkout is the
/// longest canonical path containing `cwd`, else the caller's. Among workspaces on the same
/// checkout, the caller's wins, then the first listed.
pub fn choose_workspace(caller: &str, cwd: &Path, workspaces: &[WorkspaceInfo]) -> String {
    let cwd = canonical(cwd);
    let mut best: Option<(usize, &str)> = None;
    for workspace in workspaces {
        let Some(tree) = &workspace.worktree else {
            continue;
        };
        let checkout = canonical(&tree.checkout_path);
        if !cwd.starts_with(&checkout) {
            continue;
        }
        // Every checkout containing `cwd` is an ancestor of it: the longest has the most parts.
        let depth = checkout.components().count();
        let better = match best {
            None => true,
            Some((known, _)) => {
                depth > known || (depth == known && workspace.workspace_id == caller)
            }
        };
        if better {
            best = Some((depth, &workspace.workspace_id));
        }
    }
    best.map_or(caller, |(_, id)| id).to_owned()
}

/// The path with symbolic links resolved; as given when it cannot be resolved (it does not exist
/// here), so a lexical comparison still decides.
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// One owned tab.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct OwnedTab {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    socket: Option<String>,
    workspace_id: String,
    tab_id: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TabsFile {
    format_version: u64,
    tabs: Vec<OwnedTab>,
}

/// The owned `Agents` tabs recorded in an artifacts directory.
#[derive(Debug)]
pub struct OwnedTabs {
    path: PathBuf,
    tabs: Vec<OwnedTab>,
}

impl OwnedTabs {
    /// Reads the record; a missing, unreadable or unknown one is empty (it is only a hint).
    pub fn load(artifacts: &Artifacts) -> OwnedTabs {
        let path = owned_tabs_file(artifacts);
        let tabs = herd_core::sidecar::read_json::<TabsFile>(&path, READ_LIMIT)
            .ok()
            .flatten()
            .filter(|file| file.format_version == FORMAT_VERSION)
            .map(|file| file.tabs)
            .unwrap_or_default();
        OwnedTabs { path, tabs }
    }

    /// The owned tab of `workspace` on the Herdr of `socket`.
    pub fn find(&self, socket: Option<&str>, workspace: &str) -> Option<&str> {
        self.tabs
            .iter()
            .find(|tab| tab.socket.as_deref() == socket && tab.workspace_id == workspace)
            .map(|tab| tab.tab_id.as_str())
    }

    /// Makes `tab` the owned tab of `workspace` on the Herdr of `socket`.
    pub fn set(&mut self, socket: Option<&str>, workspace: &str, tab: &str) {
        self.tabs.retain(|known| {
            !(known.socket.as_deref() == socket && known.workspace_id == workspace)
        });
        self.tabs.push(OwnedTab {
            socket: socket.map(str::to_owned),
            workspace_id: workspace.to_owned(),
            tab_id: tab.to_owned(),
        });
    }

    /// Writes the record atomically.
    pub fn save(&self) -> Result<(), Error> {
        let file = TabsFile {
            format_version: FORMAT_VERSION,
            tabs: self.tabs.clone(),
        };
        herd_core::sidecar::write_json(&self.path, &file)
            .map_err(|err| Error::Io(format!("cannot record the Agents tab: {err}")))
    }
}

/// This process's turn at grouped placement: an exclusive `flock` of the placement lock, released
/// when dropped (the file is closed) or when the process dies.
#[derive(Debug)]
pub struct Turn {
    _lock: herd_core::lock::FileLock,
}

impl Turn {
    /// Waits for the turn until `deadline`.
    pub fn take(artifacts: &Artifacts, deadline: Instant) -> Result<Turn, Error> {
        let path = placement_lock(artifacts);
        let started = Instant::now();
        match herd_core::lock::exclusive(&path, deadline) {
            Ok(lock) => Ok(Turn { _lock: lock }),
            Err(herd_core::lock::Error::Held { .. }) => Err(Error::Timeout {
                command: format!("wait for {}", path.display()),
                budget_ms: started.elapsed().as_millis() as u64,
            }),
            Err(err) => Err(Error::Io(err.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use herd_herdr::WorkspaceWorktree;
    use std::time::Duration;

    fn workspace(id: &str, checkout: Option<&Path>) -> WorkspaceInfo {
        WorkspaceInfo {
            workspace_id: id.to_owned(),
            label: None,
            focused: None,
            tab_count: None,
            pane_count: None,
            worktree: checkout.map(|path| WorkspaceWorktree {
                checkout_path: path.to_path_buf(),
                repo_root: None,
                repo_key: None,
                repo_name: None,
                is_linked_worktree: None,
            }),
        }
    }

    #[test]
    fn the_longest_checkout_holding_the_directory_wins() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let nested = repo.join("vendor/lib");
        std::fs::create_dir_all(nested.join("src")).unwrap();
        let list = [
            workspace("w1", None),
            workspace("w2", Some(&repo)),
            workspace("w3", Some(&nested)),
            workspace("w4", Some(&dir.path().join("repo-other"))),
        ];
        assert_eq!(choose_workspace("w1", &nested.join("src"), &list), "w3");
        assert_eq!(choose_workspace("w1", &repo.join("vendor"), &list), "w2");
        assert_eq!(choose_workspace("w1", &repo, &list), "w2");
        // `repo-other` shares a prefix of text with `repo`, not a path component.
        assert_eq!(choose_workspace("w9", dir.path(), &list), "w9");
    }

    #[test]
    fn checkouts_are_compared_as_canonical_paths() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join("src")).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&repo, &link).unwrap();
        // Herdr names the checkout through a link; the child's directory is the real path.
        let list = [workspace("w2", Some(&link))];
        assert_eq!(choose_workspace("w1", &repo.join("src"), &list), "w2");
        // And the other way round.
        let list = [workspace("w2", Some(&repo))];
        assert_eq!(choose_workspace("w1", &link.join("src"), &list), "w2");
    }

    #[test]
    fn the_caller_wins_ties_then_the_first_listed() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        let list = [
            workspace("w2", Some(repo)),
            workspace("w3", Some(repo)),
            workspace("w4", Some(repo)),
        ];
        assert_eq!(choose_workspace("w3", repo, &list), "w3");
        assert_eq!(choose_workspace("w1", repo, &list), "w2");
    }

    #[test]
    fn the_record_keeps_one_tab_per_socket_and_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let artifacts = Artifacts::new(dir.path().join("artifacts"));
        let mut tabs = OwnedTabs::load(&artifacts);
        assert_eq!(tabs.find(None, "w1"), None);
        tabs.set(None, "w1", "w1:t2");
        tabs.set(Some("/s/other.sock"), "w1", "w1:t5");
        tabs.save().unwrap();

        let mut tabs = OwnedTabs::load(&artifacts);
        assert_eq!(tabs.find(None, "w1"), Some("w1:t2"));
        assert_eq!(tabs.find(Some("/s/other.sock"), "w1"), Some("w1:t5"));
        assert_eq!(tabs.find(None, "w2"), None);
        tabs.set(None, "w1", "w1:t3");
        tabs.save().unwrap();
        assert_eq!(OwnedTabs::load(&artifacts).find(None, "w1"), Some("w1:t3"));

        // A record of another version, or not JSON at all, is no record.
        let path = owned_tabs_file(&artifacts);
        std::fs::write(&path, r#"{"format_version":2,"tabs":[]}"#).unwrap();
        assert_eq!(OwnedTabs::load(&artifacts).find(None, "w1"), None);
        std::fs::write(&path, "{\"format_version\":1,\"ta").unwrap();
        assert_eq!(OwnedTabs::load(&artifacts).find(None, "w1"), None);
    }

    #[test]
    fn placements_take_turns_until_the_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let artifacts = Artifacts::new(dir.path().join("artifacts"));
        let first = Turn::take(&artifacts, Instant::now() + Duration::from_secs(5)).unwrap();
        let waited = Turn::take(&artifacts, Instant::now() + Duration::from_millis(100));
        assert!(matches!(waited, Err(Error::Timeout { .. })), "{waited:?}");
        drop(first);
        Turn::take(&artifacts, Instant::now() + Duration::from_secs(5)).unwrap();
    }
}
