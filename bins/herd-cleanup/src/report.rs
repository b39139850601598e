//! The human and JSON forms of `list` and `remove`.
//!
//! Human text is for a person recovering by hand: every entry with its classification, every
//! blocker and warning on a line of its own, the counts, and the exact command that would remove
//! an eligible entry. Child-influenced values (paths, branch names) are encoded for one line.
//! The JSON documents carry the raw values; their keys are stable.

use std::path::Path;

use herd_core::escape::json_string;
use herd_protocol::cleanup::{CleanupList, Counts, ListedEntry};

use crate::inspect::{Entry, for_people, shown, shown_path};
use herd_protocol::cleanup::Blocker;
use herd_protocol::cleanup::Classification;
use herd_protocol::cleanup::Outcome;
use herd_protocol::cleanup::Removal;
use herd_protocol::cleanup::Via;

/// The longest path the `worktree_remove({ target: … })` suggestion carries; a longer one is
/// replaced by the workspace-id form (docs/lifecycle.md, "The result message").
pub const TARGET_MAX_CHARS: usize = 1024;

/// The target a removal suggestion names: the path, or the workspace id when the path is too
/// long.
fn remove_target(entry: &Entry) -> Option<&str> {
    if entry.path.chars().count() <= TARGET_MAX_CHARS {
        Some(&entry.path)
    } else {
        entry.workspace.as_deref()
    }
}

/// The `worktree_remove` call that removes `entry`, when it has a form short enough: what the
/// model is told (the JSON document's `remove_command`).
pub fn remove_command(entry: &Entry) -> Option<String> {
    Some(format!(
        "worktree_remove({{ target: {} }})",
        json_string(remove_target(entry)?)
    ))
}

/// `call` (a [`remove_command`]) for a worktree on `host`: `worktree_remove({ target: …, host:
/// "<host>" })`, the call that removes it there (docs/tools.md, `worktree_remove`).
pub fn remove_command_on(call: &str, host: &str) -> String {
    match call.strip_suffix(" })") {
        Some(head) => format!("{head}, host: {} }})", json_string(host)),
        None => call.to_owned(),
    }
}

/// The line prefixes of `list`'s human suggestions, for [`on_host`].
const SHELL_SUGGESTION: &str = "  remove with: herd-cleanup remove '";
const TOOL_SUGGESTION: &str = "  or, as a tool call: ";

/// The human text of a `list` that ran on `host`: each removal suggestion names the host.
pub fn on_host(text: &str, host: &str) -> String {
    text.lines()
        .map(|line| {
            if let Some(target) = line.strip_prefix(SHELL_SUGGESTION) {
                format!("  remove with: herd-cleanup remove --host {host} '{target}")
            } else if let Some(call) = line.strip_prefix(TOOL_SUGGESTION) {
                format!("{TOOL_SUGGESTION}{}", remove_command_on(call, host))
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The command a person runs to remove `entry`: `herd-cleanup remove '<target>'`, quoted for a
/// POSIX shell. `None` when the target holds a control character, which no line can carry as
/// typed; the JSON document has it raw.
pub fn remove_shell_command(entry: &Entry) -> Option<String> {
    let target = remove_target(entry)?;
    if target.chars().any(char::is_control) {
        return None;
    }
    Some(format!(
        "herd-cleanup remove '{}'",
        target.replace('\'', "'\\''")
    ))
}

/// The `--json` document of `list`.
pub fn list_document(
    root: &Path,
    session_cwd: &Path,
    entries: &[Entry],
    warnings: &[String],
) -> CleanupList {
    CleanupList {
        managed_root: root.to_string_lossy().into_owned(),
        session_cwd: session_cwd.to_string_lossy().into_owned(),
        worktrees: entries
            .iter()
            .map(|e| ListedEntry {
                entry: e.report.clone(),
                remove_command: (e.classification == Classification::Eligible)
                    .then(|| remove_command(e))
                    .flatten(),
            })
            .collect(),
        counts: Counts::of(entries.iter().map(|e| &e.report)),
        warnings: warnings.to_vec(),
    }
}

/// The human form of `list`. `warnings` are shown once at the end; an entry's own warnings that
/// are among them are not repeated.
pub fn list_human(
    root: &Path,
    session_cwd: &Path,
    entries: &[Entry],
    warnings: &[String],
) -> String {
    let mut out = Vec::new();
    out.push(format!("managed root: {}", shown_path(root)));
    out.push(format!("session cwd:  {}", shown_path(session_cwd)));
    if entries.is_empty() {
        out.push(String::new());
        out.push("no managed worktrees".into());
    }
    for e in entries {
        out.push(String::new());
        entry_lines(&mut out, e, warnings);
    }
    let c = Counts::of(entries.iter().map(|e| &e.report));
    let total = entries.len();
    out.push(String::new());
    out.push(format!(
        "{total} managed {}: {} eligible, {} blocked, {} unknown, {} out of scope",
        if total == 1 { "worktree" } else { "worktrees" },
        c.eligible,
        c.blocked,
        c.unknown,
        c.out_of_scope
    ));
    for w in warnings.iter().filter_map(|w| for_people(w)) {
        out.push(format!("warning: {w}"));
    }
    out.join("\n")
}

fn entry_lines(out: &mut Vec<String>, e: &Entry, shared: &[String]) {
    out.push(format!(
        "{}  [{}]",
        shown(&e.path),
        e.classification.as_str()
    ));
    if let Some(c) = &e.canonical_path {
        if *c != e.path {
            out.push(format!("  resolves to: {}", shown(c)));
        }
    }
    let branch = match (&e.branch, e.detached) {
        (Some(b), _) => shown(b),
        (None, true) => "(detached HEAD)".into(),
        (None, false) => "unknown".into(),
    };
    out.push(format!("  branch: {branch}"));
    if let Some(source) = &e.source {
        out.push(format!("  source: {}", shown(source)));
    }
    if let Some(ws) = &e.workspace {
        out.push(format!("  herdr workspace: {}", shown(ws)));
    }
    if !e.manifests.is_empty() {
        let ms: Vec<String> = e
            .manifests
            .iter()
            .map(|m| format!("run {} ({})", m.run_id, m.state))
            .collect();
        out.push(format!("  manifests: {}", ms.join(", ")));
    }
    if e.classification != Classification::OutOfScope {
        if let Some(n) = e.ignored_files {
            out.push(format!(
                "  ignored files: {n} (never block; not preserved; deleted with the checkout)"
            ));
        }
    }
    if !e.setup.is_empty() {
        out.push(format!(
            "  added by setup: {} (herd's: never block; links are removed, never their targets)",
            e.setup.join(", ")
        ));
    }
    out.extend(e.blockers.iter().map(blocker_line));
    for w in e
        .warnings
        .iter()
        .filter(|w| !shared.contains(w))
        .filter_map(|w| for_people(w))
    {
        out.push(format!("  warning: {w}"));
    }
    if e.classification == Classification::Eligible {
        // A person runs the command; a model reading this list calls the tool.
        if let Some(cmd) = remove_shell_command(e) {
            out.push(format!("  remove with: {cmd}"));
        }
        if let Some(call) = remove_command(e) {
            out.push(format!("{TOOL_SUGGESTION}{call}"));
        }
    }
}

/// The human line of one blocker, with the hint for those `--preserve` lifts.
fn blocker_line(b: &Blocker) -> String {
    let hint = if b.code.preservable() {
        " (--preserve commits it as a WIP commit first)"
    } else {
        ""
    };
    format!("  blocker: {}{hint}", b.message)
}

/// The human form of `remove`.
pub fn removal_human(r: &Removal) -> String {
    let mut out = Vec::new();
    let path = r.path.as_deref().map_or_else(|| shown(&r.target), shown);
    let branch = r
        .branch
        .as_deref()
        .map(|b| format!(" (branch {})", shown(b)))
        .unwrap_or_default();
    match r.outcome {
        Outcome::Removed => {
            let via = match r.removed_via {
                Some(Via::Herdr) => format!(
                    " through herdr (workspace {} closed)",
                    r.workspace.as_deref().map_or_else(String::new, shown)
                ),
                _ => " with git worktree remove".into(),
            };
            out.push(format!("removed {path}{branch}{via}"));
            out.push("  the branch and its commits are kept".into());
        }
        Outcome::AlreadyRemoved => out.push(format!("already removed: {path}{branch}")),
        Outcome::Blocked => out.push(format!("not removed: {path}{branch} is blocked")),
        Outcome::Unknown => out.push(format!("not removed: {path}{branch} could not be fully inspected")),
        Outcome::Uncertain => out.push(format!(
            "uncertain: the removal of {path}{branch} did not answer; the checkout is still there, inspect before retrying"
        )),
    }
    for stopped in &r.stopped {
        out.push(format!(
            "  stopped its own background command {stopped} first (setup started it)"
        ));
    }
    if let Some(p) = &r.preservation {
        match (&p.sha, &p.error) {
            (Some(sha), _) => out.push(format!("  preserved uncommitted work as WIP commit {sha}")),
            (None, Some(err)) => {
                out.push(format!("  preservation failed: {err}"));
                match p.index_restored {
                    Some(true) => out.push("  the index was restored exactly as it was; nothing was removed".into()),
                    Some(false) => out.push("  warning: the index could not be restored; check `git status` in the checkout".into()),
                    None => out.push("  nothing was committed or removed".into()),
                }
            }
            (None, None) => {}
        }
    }
    // No ignored file is nothing to tell.
    if let Some(n) = r.ignored_files.filter(|&n| n > 0) {
        let what = if r.outcome == Outcome::Removed {
            "were deleted with the checkout"
        } else {
            "present"
        };
        out.push(format!(
            "  ignored files: {n} {what} (they never block and are never preserved)"
        ));
    }
    out.extend(r.blockers.iter().map(blocker_line));
    for id in &r.manifests_marked {
        out.push(format!("  manifest of run {id} marked removed"));
    }
    for w in r.warnings.iter().filter_map(|w| for_people(w)) {
        out.push(format!("  warning: {w}"));
    }
    for note in &r.notes {
        out.push(format!("  {note}"));
    }
    out.join("\n")
}
