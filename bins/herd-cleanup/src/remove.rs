//! `herd-cleanup remove`: one managed checkout, by exact path, branch or workspace id, only
//! when every check passes at removal time.
//!
//! The flow (docs/protocol.md, "Worktree cleanup"): resolve the target against a fresh
//! identity-only inventory (none or several matches is refused); inspect that one entry in full;
//! refuse on any blocker (uncommitted work only lifts with `--preserve`, which commits it as a WIP
//! commit first and inspects again); remove through Herdr when a workspace is open on it, else with
//! `git worktree remove` and, once the checkout is verifiably gone, `git worktree prune`; mark the
//! owned manifests `removed`. Branches are never deleted or moved and no force flag is used.
//!
//! After a removal the report names the source repository's workspace that creating the
//! worktree appeared to open (recorded in an owner's manifest as `openedSourceWorkspace`) when a
//! read taken just before the report still shows it untouched: it is the repository's only open
//! workspace and still has exactly the one pane and terminal it had then. Anything else
//! (nothing recorded, a failed read, another workspace open on the repository, a changed pane)
//! reports nothing. The workspace is never closed here.

use std::io;
use std::path::{Path, PathBuf};

use herd_core::{Error, ErrorCode};
use herd_git::{Deadline, Git, budget};
use herd_herdr::Source;
use herd_protocol::worktree::OpenedWorkspace;
use herd_protocol::worktree::claims;
use herd_protocol::worktree::manifest::{Manifest, State};

use crate::inspect::{self, Context, Depth, Entry, shown, shown_path, text};
use crate::paths::{self, Discovery};
use herd_protocol::cleanup::BlockerCode;
use herd_protocol::cleanup::Classification;

/// The commit message of a preservation commit.
pub const WIP_MESSAGE: &str = "WIP: preserve worktree before explicit cleanup";

use herd_protocol::cleanup::{Outcome, Preservation, Removal, Via};

/// Removes the one managed checkout `target` names. Bad targets (none or several matches) are
/// errors (`not_found`, `ambiguous`: exit 2); everything else is a [`Removal`].
pub fn remove(
    ctx: &mut Context,
    discovery: &Discovery,
    target: &str,
    preserve: bool,
) -> Result<Removal, Error> {
    let found = resolve_target(ctx, discovery, target)?;
    let Some(found) = found else {
        return already_removed(ctx, target);
    };
    let entry = inspect::inspect(ctx, &found, Depth::Full, None);
    if let Some(outcome) = refused(&entry, preserve) {
        return Ok(Removal::from_entry(target, outcome, &entry));
    }
    let mut report = Removal::from_entry(target, Outcome::Blocked, &entry);
    report.blockers.clear();
    let mut entry = entry;
    if entry.own_background().next().is_some() {
        match stop_own_background(ctx, &found, &entry, &mut report, preserve) {
            Some(again) => entry = again,
            None => return Ok(report),
        }
    }
    if entry.has(BlockerCode::Dirty) || entry.has(BlockerCode::Untracked) {
        let Some(canonical) = entry.canonical() else {
            return Err(Error::internal(
                "an eligible entry without a canonical path",
            ));
        };
        let preservation = preserve_work(&ctx.git, canonical, entry.branch.as_deref());
        let sha = preservation.sha.clone();
        report.preservation = Some(preservation);
        let Some(sha) = sha else {
            report.blockers.clone_from(&entry.blockers);
            return Ok(report);
        };
        // Inspect again from scratch: the commit must have left exactly an eligible checkout.
        ctx.forget();
        let again = inspect::inspect(ctx, &found, Depth::Full, None);
        report.add_warnings(&again.warnings);
        report.entry = Some(again.report.clone());
        report.ignored_files = again.ignored_files;
        let same = again.source == entry.source
            && again.branch == entry.branch
            && again.workspace == entry.workspace
            && again.head.as_deref() == Some(sha.as_str());
        if again.classification != Classification::Eligible || !same {
            report.outcome = if again.classification == Classification::Unknown {
                Outcome::Unknown
            } else {
                Outcome::Blocked
            };
            report.blockers.clone_from(&again.blockers);
            if !same {
                report.block(
                    BlockerCode::IdentityDisagrees,
                    "the checkout changed while its work was being preserved".to_owned(),
                );
                report.outcome = Outcome::Unknown;
            }
            return Ok(report);
        }
        entry = again;
    }
    carry_out(ctx, &entry, &mut report);
    Ok(report)
}

/// Why `entry` is not removed, `None` when it may be: only uncommitted work blocks it and
/// `preserve` commits it first, or nothing does.
fn refused(entry: &Entry, preserve: bool) -> Option<Outcome> {
    match entry.classification {
        Classification::Eligible => None,
        Classification::Unknown => Some(Outcome::Unknown),
        Classification::Blocked | Classification::OutOfScope => {
            let only_work = entry.blockers.iter().all(|b| b.code.preservable());
            (!(only_work && preserve)).then_some(Outcome::Blocked)
        }
    }
}

/// How long the worktree's own background commands have after SIGTERM, before SIGKILL.
const BACKGROUND_GRACE: std::time::Duration = std::time::Duration::from_secs(5);
/// How long stopping one of them may take in all.
const BACKGROUND_DEADLINE: std::time::Duration = std::time::Duration::from_secs(15);

/// Stops the worktree's own background commands that still run (setup started them, and the
/// manifest recorded who): every process of each one's session, each verified by its identity
/// just before its signal, SIGTERM, then SIGKILL after [`BACKGROUND_GRACE`], within
/// [`BACKGROUND_DEADLINE`]. Then the checkout is inspected again from scratch and must still be
/// removable, and the same checkout. Returns that inspection, or `None` when the removal stops
/// here (the report says why).
fn stop_own_background(
    ctx: &mut Context,
    found: &paths::Found,
    entry: &Entry,
    report: &mut Removal,
    preserve: bool,
) -> Option<Entry> {
    for b in entry.own_background() {
        let deadline = std::time::Instant::now() + BACKGROUND_DEADLINE;
        match herd_core::identity::terminate_session(&b.leader, BACKGROUND_GRACE, deadline) {
            Ok(0) => report.stopped.push(format!(
                "{} ({})",
                b.shown(),
                if b.running.len() == 1 {
                    "1 process".to_owned()
                } else {
                    format!("{} processes", b.running.len())
                }
            )),
            Ok(left) => report.block(
                BlockerCode::ProcessHolder,
                format!(
                    "its own background command {} did not stop: {left} of its processes are left after SIGTERM and SIGKILL",
                    b.shown()
                ),
            ),
            Err(reason) => report.block(
                BlockerCode::EnumerationFailed,
                format!(
                    "cannot stop its own background command {}: {}",
                    b.shown(),
                    shown(&reason)
                ),
            ),
        }
    }
    if !report.blockers.is_empty() {
        report.outcome = Outcome::Unknown;
        return None;
    }
    // What was said about them running no longer holds.
    report
        .warnings
        .retain(|w| !w.starts_with(inspect::OWN_BACKGROUND));
    ctx.forget();
    let again = inspect::inspect(ctx, found, Depth::Full, None);
    report.add_warnings(&again.warnings);
    report.entry = Some(again.report.clone());
    let same = again.source == entry.source
        && again.branch == entry.branch
        && again.workspace == entry.workspace
        && again.head == entry.head;
    if !same {
        report.outcome = Outcome::Unknown;
        report.block(
            BlockerCode::IdentityDisagrees,
            "the checkout changed while its background commands were being stopped".to_owned(),
        );
        return None;
    }
    if let Some(outcome) = refused(&again, preserve) {
        report.outcome = outcome;
        report.blockers.clone_from(&again.blockers);
        return None;
    }
    Some(again)
}

/// Finds the one discovered entry `target` names. `Ok(None)` when none does (the caller then
/// looks for a `removed` manifest); an error when several do.
fn resolve_target(
    ctx: &mut Context,
    discovery: &Discovery,
    target: &str,
) -> Result<Option<paths::Found>, Error> {
    if target.is_empty() {
        return Err(Error::invalid(
            "target",
            "the target is empty; name a path, branch or workspace id",
        ));
    }
    let as_path = Path::new(target);
    let realpath = as_path
        .is_absolute()
        .then(|| paths::resolve(as_path).ok())
        .flatten();
    let mut matches: Vec<(paths::Found, Vec<&'static str>)> = Vec::new();
    for found in &discovery.found {
        let mut how = Vec::new();
        let listed = found.path() == as_path;
        let canonical = match found {
            paths::Found::Checkout { canonical, .. } => Some(canonical.as_path()),
            _ => None,
        };
        if listed || canonical.is_some_and(|c| c == as_path || realpath.as_deref() == Some(c)) {
            how.push("path");
        }
        if canonical.is_some() && !target.starts_with('/') {
            // Branch and workspace matches need git and Herdr: an identity-only inspection.
            let light = inspect::inspect(ctx, found, Depth::Light, None);
            if light.branch.as_deref() == Some(target) {
                how.push("branch");
            }
            if light.workspace.as_deref() == Some(target) {
                how.push("workspace id");
            }
        }
        if !how.is_empty() {
            matches.push((found.clone(), how));
        }
    }
    match matches.len() {
        0 => Ok(None),
        1 => Ok(matches.pop().map(|(found, _)| found)),
        n => {
            let list: Vec<String> = matches
                .iter()
                .map(|(f, how)| format!("{} ({})", shown_path(f.path()), how.join(", ")))
                .collect();
            Err(Error::new(
                ErrorCode::Ambiguous,
                format!(
                    "target {} matches {n} managed worktrees: {}",
                    shown(target),
                    list.join("; ")
                ),
            )
            .with_field("target"))
        }
    }
}

/// Answers a target that names no checkout: "already removed" when exactly one `removed`
/// manifest names it and its checkout is absent, else `not_found`.
fn already_removed(ctx: &Context, target: &str) -> Result<Removal, Error> {
    let files = claims::read_all(&ctx.artifacts)?;
    let mut hits: Vec<Manifest> = Vec::new();
    for file in files {
        let Ok(m) = file.manifest else { continue };
        if m.state != State::Removed {
            continue;
        }
        let Some(path) = m.path.clone() else { continue };
        let names = path.as_os_str() == target
            || m.branch.as_deref() == Some(target)
            || m.workspace_id.as_deref() == Some(target);
        let absent = matches!(
            std::fs::symlink_metadata(&path),
            Err(e) if e.kind() == io::ErrorKind::NotFound
        );
        if names && absent && !hits.iter().any(|h| h.path == m.path) {
            hits.push(m);
        }
    }
    match hits.as_slice() {
        [] => Err(Error::not_found(format!(
            "no managed worktree matches {} (by exact path, branch or workspace id) under {}",
            shown(target),
            shown_path(&ctx.root)
        ))
        .with_field("target")),
        [m] => {
            let mut r = Removal::new(target, Outcome::AlreadyRemoved);
            r.path = m.path.as_deref().map(text);
            r.branch.clone_from(&m.branch);
            r.workspace.clone_from(&m.workspace_id);
            Ok(r)
        }
        many => Err(Error::new(
            ErrorCode::Ambiguous,
            format!(
                "target {} matches {} removed worktrees",
                shown(target),
                many.len()
            ),
        )
        .with_field("target")),
    }
}

/// Commits everything not ignored as a WIP commit on the checkout's branch. On failure the
/// index is put back byte for byte (or removed if there was none) and no SHA is returned.
pub fn preserve_work(git: &Git, checkout: &Path, branch: Option<&str>) -> Preservation {
    let mut p = Preservation {
        sha: None,
        error: None,
        index_restored: None,
    };
    let deadline = || Deadline::after(budget::CLEANUP);
    let Some(branch) = branch.filter(|b| !b.is_empty()) else {
        p.error = Some("the checkout is on no branch".into());
        return p;
    };
    match git.head_branch(checkout, &deadline()) {
        Ok(Some(head)) if head == branch => {}
        Ok(head) => {
            p.error = Some(format!(
                "HEAD is {}, not branch {}",
                head.as_deref().map_or_else(|| "detached".to_owned(), shown),
                shown(branch)
            ));
            return p;
        }
        Err(e) => {
            p.error = Some(format!("cannot read HEAD: {}", shown(&e.to_string())));
            return p;
        }
    }
    let index = match git.run(
        checkout,
        ["rev-parse", "--path-format=absolute", "--git-path", "index"],
        &deadline(),
    ) {
        Ok(out) => PathBuf::from(
            String::from_utf8_lossy(&out)
                .trim_end_matches('\n')
                .to_owned(),
        ),
        Err(e) => {
            p.error = Some(format!("cannot find the index: {}", shown(&e.to_string())));
            return p;
        }
    };
    let saved = match SavedIndex::take(&index) {
        Ok(saved) => saved,
        Err(e) => {
            p.error = Some(format!(
                "cannot save the index {} before committing: {e}",
                shown_path(&index)
            ));
            return p;
        }
    };
    let committed = git
        .run(checkout, ["add", "--all"], &deadline())
        .and_then(|_| {
            git.run(
                checkout,
                // No detached auto maintenance: it would hold the checkout being removed.
                [
                    "-c",
                    "maintenance.auto=false",
                    "commit",
                    "--quiet",
                    "--message",
                    WIP_MESSAGE,
                ],
                &deadline(),
            )
        })
        .and_then(|_| git.resolve_commit(checkout, "HEAD", &deadline()));
    match committed {
        Ok(Some(sha)) => {
            saved.discard();
            p.sha = Some(sha);
        }
        Ok(None) => {
            p.error = Some("the WIP commit failed: HEAD names no commit".to_owned());
            p.index_restored = Some(saved.restore().is_ok());
        }
        Err(e) => {
            p.error = Some(format!("the WIP commit failed: {}", shown(&e.to_string())));
            p.index_restored = Some(saved.restore().is_ok());
        }
    }
    p
}

/// A copy of the index taken before preservation, beside it in the git directory.
struct SavedIndex {
    index: PathBuf,
    /// `None` when there was no index to save.
    copy: Option<PathBuf>,
}

impl SavedIndex {
    fn take(index: &Path) -> io::Result<SavedIndex> {
        match std::fs::symlink_metadata(index) {
            Ok(_) => {
                let mut name = index.as_os_str().to_owned();
                name.push(format!(".herd-preserve.{}", std::process::id()));
                let copy = PathBuf::from(name);
                std::fs::copy(index, &copy)?;
                Ok(SavedIndex {
                    index: index.to_path_buf(),
                    copy: Some(copy),
                })
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(SavedIndex {
                index: index.to_path_buf(),
                copy: None,
            }),
            Err(e) => Err(e),
        }
    }

    /// Puts the saved bytes back in one rename, or removes an index that did not exist before.
    fn restore(self) -> io::Result<()> {
        match &self.copy {
            Some(copy) => std::fs::rename(copy, &self.index),
            None => match std::fs::remove_file(&self.index) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            },
        }
    }

    fn discard(self) {
        if let Some(copy) = &self.copy {
            let _ = std::fs::remove_file(copy);
        }
    }
}

/// Deletes what setup made that git counts as untracked (a symlink to the source's
/// `node_modules`, which a `node_modules/` pattern does not match), so that `git worktree
/// remove`, which never forces, can remove the rest. A symlink is unlinked, never followed; a
/// directory is removed without following the symlinks in it; nothing outside `canonical` is
/// touched (every parent must be a real directory below it).
fn remove_setup_untracked(canonical: &Path, rels: &[String]) -> Result<(), String> {
    for rel in rels {
        let rel_path = Path::new(rel.trim_end_matches('/'));
        if rel_path.is_absolute()
            || rel_path
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            return Err(format!(
                "setup's entry {} is not a plain relative path",
                shown(rel)
            ));
        }
        let path = canonical.join(rel_path);
        let parent_inside = path
            .parent()
            .and_then(|p| std::fs::canonicalize(p).ok())
            .is_some_and(|p| p.starts_with(canonical));
        if !parent_inside {
            return Err(format!(
                "setup's entry {} is not below the checkout",
                shown_path(&path)
            ));
        }
        let result = match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(&path),
            Ok(_) => std::fs::remove_file(&path),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        };
        result.map_err(|e| format!("cannot remove setup's {}: {e}", shown_path(&path)))?;
    }
    Ok(())
}

/// Removes the checkout of an eligible entry and records it: what setup made that git counts
/// as untracked goes first, then the checkout itself (through Herdr when it has a workspace
/// open on it, else git), and only a checkout seen gone is recorded as removed.
fn carry_out(ctx: &mut Context, entry: &Entry, report: &mut Removal) {
    let (Some(canonical), Some(source)) = (
        entry.canonical().map(Path::to_path_buf),
        entry.source_path().map(Path::to_path_buf),
    ) else {
        report.outcome = Outcome::Unknown;
        report.block(
            BlockerCode::GitUnknown,
            "the checkout or its source is not known".into(),
        );
        return;
    };
    if let Err(message) = remove_setup_untracked(&canonical, &entry.internal.setup_untracked) {
        report.outcome = Outcome::Blocked;
        report.block(BlockerCode::GitUnknown, message);
        return;
    }
    let attempt = attempt_removal(ctx, entry, report, &source, &canonical);
    if !confirm_gone(report, attempt, &canonical) {
        return;
    }
    report.outcome = Outcome::Removed;
    let opened = opened_source_workspaces(ctx, entry);
    record_removal(ctx, entry, report, &source, &canonical);
    for opened in opened {
        if still_untouched(ctx, &source, &opened) {
            let w = &opened.workspace_id;
            report.notes.push(format!(
                "{w} appears to have been opened by worktree creation; if you haven't used it, \
                 close it with herdr workspace close {w}"
            ));
        }
    }
}

/// The source workspaces the owners' manifests say creating the checkout opened.
fn opened_source_workspaces(ctx: &Context, entry: &Entry) -> Vec<OpenedWorkspace> {
    let mut opened: Vec<OpenedWorkspace> = Vec::new();
    for run_id in entry.owner_run_ids() {
        let file = ctx.artifacts.worktree_manifest(run_id);
        if let Ok(Some(manifest)) = Manifest::read(&file) {
            if let Some(o) = manifest.opened_source_workspace {
                if !opened.contains(&o) {
                    opened.push(o);
                }
            }
        }
    }
    opened
}

/// Whether `opened` is, by reads taken now, the repository's only open workspace with exactly
/// the pane and terminal it had when the worktree was created. Any failed read says no.
fn still_untouched(ctx: &Context, source: &Path, opened: &OpenedWorkspace) -> bool {
    let Some(herdr) = &ctx.herdr else {
        return false;
    };
    let herdr = herdr.with_budget(std::time::Duration::from_secs(3));
    let Ok(list) = herdr.worktree_list(Some(&Source::Cwd(source.to_path_buf()))) else {
        return false;
    };
    if list.repo.source_workspace_id.as_deref() != Some(opened.workspace_id.as_str())
        || list.worktrees.iter().any(|tree| {
            tree.open_workspace_id
                .as_deref()
                .is_some_and(|w| w != opened.workspace_id)
        })
    {
        return false;
    }
    if herdr.workspace_get(&opened.workspace_id).is_err() {
        return false;
    }
    let Ok(panes) = herdr.pane_list(Some(&opened.workspace_id)) else {
        return false;
    };
    panes.sole_pane().is_ok_and(|pane| {
        pane.pane_id == opened.pane_id
            && pane.terminal_id.as_deref() == Some(opened.terminal_id.as_str())
    })
}

/// Asks Herdr (when it has a workspace open on the checkout) or git to remove the checkout,
/// never forcing. An error carries whether the removal may still have happened.
fn attempt_removal(
    ctx: &Context,
    entry: &Entry,
    report: &mut Removal,
    source: &Path,
    canonical: &Path,
) -> Result<(), (bool, String)> {
    match (&entry.workspace, &ctx.herdr) {
        (Some(workspace), Some(herdr)) => {
            report.removed_via = Some(Via::Herdr);
            match herdr.worktree_remove(workspace) {
                Ok(done) if done.forced => {
                    report
                        .warnings
                        .push("herdr reports a forced removal, which herd never asks for".into());
                    Ok(())
                }
                Ok(_) => Ok(()),
                Err(e) => Err((e.code() == ErrorCode::Uncertain, e.to_string())),
            }
        }
        _ => {
            report.removed_via = Some(Via::Git);
            ctx.git
                .worktree_remove(source, canonical, &Deadline::after(budget::CLEANUP))
                .map_err(|e| (matches!(e, herd_git::Error::Timeout { .. }), e.to_string()))
        }
    }
}

/// Judges the attempt by the checkout itself: whether it is gone decides, not what the remover
/// said. Returns whether it is gone; otherwise the report says why not.
fn confirm_gone(
    report: &mut Removal,
    attempt: Result<(), (bool, String)>,
    canonical: &Path,
) -> bool {
    let gone = match std::fs::symlink_metadata(canonical) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(true),
        Ok(_) => Ok(false),
        Err(e) => Err(e),
    };
    match (attempt, gone) {
        (_, Err(e)) => {
            report.outcome = Outcome::Unknown;
            report.block(
                BlockerCode::GitUnknown,
                format!("cannot verify that the checkout is gone: {e}"),
            );
            false
        }
        (Ok(()), Ok(false)) => {
            report.outcome = Outcome::Unknown;
            report.block(
                BlockerCode::GitUnknown,
                "the removal reported success but the checkout is still there".into(),
            );
            false
        }
        (Err((uncertain, message)), Ok(false)) => {
            report.outcome = if uncertain {
                Outcome::Uncertain
            } else {
                Outcome::Blocked
            };
            let code = if report.removed_via == Some(Via::Herdr) {
                BlockerCode::HerdrUnknown
            } else {
                BlockerCode::GitUnknown
            };
            report.block(
                code,
                format!(
                    "the removal failed and the checkout is still there: {}",
                    shown(&message)
                ),
            );
            false
        }
        (Err((_, message)), Ok(true)) => {
            report.warnings.push(format!(
                "the removal reported an error but the checkout is gone: {}",
                shown(&message)
            ));
            true
        }
        (Ok(()), Ok(true)) => true,
    }
}

/// What follows a removal: git's registration pruned, a link left behind named, and the
/// owners' manifests marked removed.
fn record_removal(
    ctx: &Context,
    entry: &Entry,
    report: &mut Removal,
    source: &Path,
    canonical: &Path,
) {
    if report.removed_via == Some(Via::Git) {
        if let Err(e) = ctx
            .git
            .worktree_prune(source, &Deadline::after(budget::CLEANUP))
        {
            report.warnings.push(format!(
                "git worktree prune failed: {}",
                shown(&e.to_string())
            ));
        }
    }
    let listed = Path::new(&entry.path);
    if listed != canonical && std::fs::symlink_metadata(listed).is_ok() {
        report.warnings.push(format!(
            "the link {} to the removed checkout is left in place",
            shown_path(listed)
        ));
    }
    let now = herd_core::time::now_ms();
    for run_id in entry.owner_run_ids() {
        match Manifest::mark_removed(&ctx.artifacts, run_id, now) {
            Ok(_) => report.manifests_marked.push(run_id.clone()),
            Err(e) => report.warnings.push(format!(
                "the manifest of run {run_id} could not be marked removed: {}",
                shown(&e.to_string())
            )),
        }
    }
}
