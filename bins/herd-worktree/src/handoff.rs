//! The handoff: what a worktree holds when its child is done, and the host lines that report it.
//!
//! [`inspect`] reads a checkout with three git calls run side by side under one deadline:
//! `status --porcelain=v2` (head, branch, index, working tree, untracked, conflicts),
//! `rev-list --count base..HEAD` (commits ahead) and `diff --name-only base...HEAD` (what the
//! commits changed). If any of them fails, times out, overflows its cap or prints something
//! unparsable, every Git field is unknown and the handoff carries a warning: an inspection that
//! could not tell never claims a clean checkout.

use std::collections::BTreeSet;
use std::path::Path;

use herd_core::escape::{Evidence, Noun, encode_host_value, encode_list};
use herd_git::{Deadline, Git, Head};

/// The bound of one encoded value (path, branch, warning) in a host line.
pub const VALUE_MAX_CHARS: usize = 1_000;
/// The bound of a `Changed:` or `Untracked:` line's list.
pub const LIST_MAX_CHARS: usize = 2_000;

use herd_protocol::worktree::{Handoff, TreeState};

/// Inspects the checkout at `path` against `base_sha` within `deadline`.
///
/// Never fails: whatever goes wrong becomes an unknown handoff with a warning.
pub fn inspect(git: &Git, path: &Path, base_sha: &str, deadline: Deadline) -> Handoff {
    let (status, ahead, committed) = std::thread::scope(|scope| {
        let ahead = scope.spawn(|| git.commits_ahead(path, base_sha, &deadline));
        let committed = scope.spawn(|| git.changed_since_merge_base(path, base_sha, &deadline));
        let status = git.status(path, &deadline);
        (status, join(ahead), join(committed))
    });
    let status = match status {
        Ok(status) => status,
        Err(e) => return Handoff::unknown(path, base_sha, e.to_string()),
    };
    let ahead = match ahead {
        Ok(n) => n,
        Err(e) => return Handoff::unknown(path, base_sha, e.to_string()),
    };
    let committed = match committed {
        Ok(files) => files,
        Err(e) => return Handoff::unknown(path, base_sha, e.to_string()),
    };
    let Some(head_sha) = status.head_oid.clone() else {
        return Handoff::unknown(path, base_sha, "HEAD names no commit");
    };
    let (branch, detached) = match &status.head {
        Some(Head::Branch(b)) => (Some(b.clone()), false),
        Some(Head::Detached) => (None, true),
        None => return Handoff::unknown(path, base_sha, "git status did not name HEAD"),
    };
    let tree = if status.is_conflicted() {
        TreeState::Conflicted
    } else if status.is_clean() {
        TreeState::Clean
    } else {
        TreeState::Dirty
    };
    let untracked: BTreeSet<String> = status.untracked().map(str::to_owned).collect();
    let changed: BTreeSet<String> = committed
        .into_iter()
        .chain(status.changed_paths().map(str::to_owned))
        .collect();
    Handoff {
        path: path.to_path_buf(),
        branch,
        detached,
        base_sha: base_sha.to_owned(),
        head_sha: Some(head_sha),
        commits_ahead: Some(ahead),
        tree: Some(tree),
        changed_files: Some(changed.into_iter().collect()),
        untracked_files: Some(untracked.into_iter().collect()),
        warning: None,
    }
}

fn join<T>(
    handle: std::thread::ScopedJoinHandle<'_, Result<T, herd_git::Error>>,
) -> Result<T, herd_git::Error> {
    handle.join().unwrap_or_else(|_| {
        Err(herd_git::Error::Malformed {
            what: "handoff inspection".into(),
            detail: "an inspection thread panicked".into(),
        })
    })
}

/// The host lines of a handoff in a result message (docs/lifecycle.md, "The result message"), each
/// value encoded on one line. File lists are [`Evidence::file_list`] so a message over its bound
/// drops them first; the rest are details.
pub fn render_lines(handoff: &Handoff, workspace_id: Option<&str>) -> Vec<Evidence> {
    let value = |s: &str| encode_host_value(s, VALUE_MAX_CHARS);
    let mut lines = vec![
        Evidence::detail("Worktree result retained for review:"),
        Evidence::detail(format!(
            "Worktree: {}",
            value(&handoff.path.to_string_lossy())
        )),
    ];
    if let Some(ws) = workspace_id {
        lines.push(Evidence::detail(format!("Workspace: {}", value(ws))));
    }
    let branch = match (&handoff.branch, handoff.detached) {
        (Some(b), _) => value(b),
        (None, true) => "(detached HEAD)".to_owned(),
        (None, false) => "unknown".to_owned(),
    };
    lines.push(Evidence::detail(format!("Branch: {branch}")));
    lines.push(Evidence::detail(format!(
        "Base/head: {} -> {}",
        value(&handoff.base_sha),
        handoff
            .head_sha
            .as_deref()
            .map_or_else(|| "unknown".to_owned(), value)
    )));
    let state = if handoff.is_known() {
        handoff.tree.map_or("inspection unknown", TreeState::as_str)
    } else {
        "inspection unknown"
    };
    let ahead = match handoff.commits_ahead {
        None => "commits ahead unknown".to_owned(),
        Some(1) => "1 commit ahead".to_owned(),
        Some(n) => format!("{n} commits ahead"),
    };
    lines.push(Evidence::detail(format!("State: {state} · {ahead}")));
    if let Some(files) = handoff.changed_files.as_deref().filter(|f| !f.is_empty()) {
        lines.push(Evidence::file_list(format!(
            "Changed: {}",
            encode_list(files, LIST_MAX_CHARS, Noun::FILES)
        )));
    }
    if let Some(files) = handoff.untracked_files.as_deref().filter(|f| !f.is_empty()) {
        lines.push(Evidence::file_list(format!(
            "Untracked: {}",
            encode_list(files, LIST_MAX_CHARS, Noun::FILES)
        )));
    }
    if let Some(warning) = &handoff.warning {
        lines.push(Evidence::detail(format!(
            "Git inspection warning: {}",
            value(warning)
        )));
    }
    lines
}
