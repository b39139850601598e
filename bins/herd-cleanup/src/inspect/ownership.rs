//! The ownership manifests of the artifacts directory that name the checkout, whether they
//! agree with git and Herdr, and what their setup made in it: untracked paths that are setup's,
//! and hard-linked files changed in place since.

use std::path::{Path, PathBuf};

use herd_protocol::worktree::claims;
use herd_protocol::worktree::manifest::Manifest;

use super::{
    Background, BlockerCode, Context, Entry, ManifestRef, VALUE_MAX_CHARS, files, shown,
    shown_path, text,
};

/// The ownership manifests of this artifacts directory that name the checkout, and whether they
/// agree with git and Herdr.
pub(super) fn manifests(ctx: &mut Context, entry: &mut Entry, canonical: &Path) {
    let ownership = match ctx.manifest_files() {
        Ok(files) => claims::ownership_among(files, canonical),
        Err(message) => {
            entry.block(
                BlockerCode::ManifestUndecidable,
                format!("cannot read the ownership manifests: {}", shown(message)),
            );
            return;
        }
    };
    for m in &ownership.removed {
        entry.manifests.push(manifest_ref(ctx, m, false));
    }
    for m in &ownership.owners {
        entry.manifests.push(manifest_ref(ctx, m, true));
        entry.internal.owners.push(m.id.clone());
        if let Some(setup) = &m.setup {
            entry.internal.setup.extend(setup.entries.iter().cloned());
            entry
                .internal
                .background
                .extend(setup.background.iter().filter_map(|b| Background::of(m, b)));
            if let Some(at) = setup.started_at {
                let earliest = entry.internal.setup_started_at.map_or(at, |e| e.min(at));
                entry.internal.setup_started_at = Some(earliest);
            }
        }
    }
    for (file, reason) in &ownership.undecidable {
        entry.block(
            BlockerCode::ManifestUndecidable,
            format!(
                "manifest {} cannot be matched: {}",
                shown_path(file),
                shown(reason)
            ),
        );
    }
    if ownership.owners.len() > 1 {
        let ids: Vec<&str> = ownership.owners.iter().map(|m| m.id.as_str()).collect();
        entry.block(
            BlockerCode::ManifestUndecidable,
            format!(
                "{} manifests claim the checkout (runs {})",
                ids.len(),
                ids.join(", ")
            ),
        );
    }
    for m in &ownership.owners {
        if let Some(reason) = disagreement(ctx, entry, m) {
            entry.block(
                BlockerCode::IdentityDisagrees,
                format!("manifest of run {} disagrees: {reason}", m.id),
            );
        }
    }
}

/// What setup made does not block like a person's untracked file: an untracked path is
/// setup's when an owner's manifest records it (or a directory above it). A hard-linked file
/// changed in place since setup (`changed`, found by [`changed_links`]) is a blocker naming
/// it: its change already reached the source.
pub(super) fn setup_made(entry: &mut Entry, changed: Option<Vec<String>>) {
    let setup = std::mem::take(&mut entry.internal.setup);
    entry.report.setup = setup
        .iter()
        .map(|s| format!("{} ({})", shown(&s.path), s.kind.as_str()))
        .collect();
    let covers = |u: &str| {
        let u = u.trim_end_matches('/');
        setup.iter().find(|s| {
            let p = s.path.trim_end_matches('/');
            u == p || u.strip_prefix(p).is_some_and(|rest| rest.starts_with('/'))
        })
    };
    let mut theirs = 0u64;
    let untracked = std::mem::take(&mut entry.internal.untracked);
    for u in &untracked {
        match covers(u) {
            Some(s) => {
                if !entry.internal.setup_untracked.contains(&s.path) {
                    entry.internal.setup_untracked.push(s.path.clone());
                }
            }
            None => theirs += 1,
        }
    }
    entry.internal.untracked = untracked;
    if theirs > 0 {
        entry.block(
            BlockerCode::Untracked,
            format!("{} untracked", files(theirs)),
        );
    }
    if let Some(changed) = changed {
        if !changed.is_empty() {
            let names = herd_core::escape::encode_list(
                &changed,
                VALUE_MAX_CHARS,
                herd_core::escape::Noun::new("file", "files"),
            );
            entry.block(
                BlockerCode::LinkedFileChanged,
                format!(
                    "hard-linked from the source checkout and changed since setup: {names}; removing the worktree is safe, but the change already reached the source's copy (the same file)"
                ),
            );
        }
    }
    entry.internal.setup = setup;
}

/// The most changed hard-linked files named.
const CHANGED_LINKS_MAX: usize = 20;

/// The hard-linked trees the owners' setup made (path in the checkout, source) and when that
/// setup began, as [`manifests`] will find them; `None` when there are none to walk.
pub(super) fn setup_links(
    ctx: &mut Context,
    canonical: &Path,
) -> Option<(u64, Vec<(String, PathBuf)>)> {
    use herd_protocol::worktree::manifest::SetupKind;
    let files = ctx.manifest_files().ok()?;
    let owners = claims::ownership_among(files, canonical).owners;
    let mut started: Option<u64> = None;
    let mut links = Vec::new();
    for m in &owners {
        let Some(setup) = &m.setup else { continue };
        if let Some(at) = setup.started_at {
            started = Some(started.map_or(at, |e| e.min(at)));
        }
        for s in setup
            .entries
            .iter()
            .filter(|s| s.kind == SetupKind::Hardlink)
        {
            if let Some(source) = &s.source {
                links.push((s.path.clone(), source.clone()));
            }
        }
    }
    started.map(|started| (started, links))
}

/// Walks `dir` (not following symlinks) for regular files that share their inode with the file
/// at the same place under `source` and were modified after `started` (ms). A directory's
/// entries take their type from the listing and are read relative to it, so a file costs one
/// `statx` of its name alone; only a file modified since setup costs a second, of the source's.
pub(super) fn changed_links(
    dir: &Path,
    source: &Path,
    rel: &str,
    started: u64,
    out: &mut Vec<String>,
) {
    let Ok(meta) = dir.symlink_metadata() else {
        return;
    };
    if meta.is_dir() {
        changed_links_in(dir, source, rel, started, out);
    } else if meta.is_file() && changed_link(&meta, source, started) {
        out.push(rel.to_owned());
    }
}

fn changed_links_in(dir: &Path, source: &Path, rel: &str, started: u64, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if out.len() >= CHANGED_LINKS_MAX {
            return;
        }
        let Ok(kind) = e.file_type() else { continue };
        let name = e.file_name();
        if kind.is_dir() {
            let child_rel = format!("{rel}/{}", name.to_string_lossy());
            changed_links_in(&e.path(), &source.join(&name), &child_rel, started, out);
        } else if kind.is_file() {
            let Ok(meta) = e.metadata() else { continue };
            if changed_link(&meta, &source.join(&name), started) {
                out.push(format!("{rel}/{}", name.to_string_lossy()));
            }
        }
    }
}

/// Whether a worktree file (`meta`, not followed) is a hard link modified after `started` (ms)
/// that is still the same file as `source`'s.
fn changed_link(meta: &std::fs::Metadata, source: &Path, started: u64) -> bool {
    use std::os::unix::fs::MetadataExt;
    if meta.nlink() <= 1 {
        return false;
    }
    let modified_ms = u64::try_from(meta.mtime()).unwrap_or(0) * 1000
        + u64::try_from(meta.mtime_nsec()).unwrap_or(0) / 1_000_000;
    // Only a file modified since setup is compared with the source's (one more stat).
    if modified_ms <= started {
        return false;
    }
    source
        .symlink_metadata()
        .is_ok_and(|theirs| theirs.dev() == meta.dev() && theirs.ino() == meta.ino())
}

fn manifest_ref(ctx: &Context, m: &Manifest, owner: bool) -> ManifestRef {
    ManifestRef {
        run_id: m.id.clone(),
        state: m.state.as_str().to_owned(),
        file: text(&ctx.artifacts.worktree_manifest(&m.id)),
        owner,
    }
}

/// Why the manifest `m` does not describe the checkout git and Herdr describe, if it does not.
fn disagreement(ctx: &mut Context, entry: &Entry, m: &Manifest) -> Option<String> {
    if let Some(branch) = &m.branch {
        if entry.branch.as_ref() != Some(branch) {
            return Some(format!(
                "it records branch {}, git says {}",
                shown(branch),
                entry.branch.as_deref().map_or("no branch".into(), shown)
            ));
        }
    }
    if let (Some(recorded), Some(open)) = (&m.workspace_id, &entry.workspace) {
        if recorded != open {
            return Some(format!(
                "it records workspace {}, herdr has {} open",
                shown(recorded),
                shown(open)
            ));
        }
    }
    let recorded_source = m.provision_cwd.as_ref().or(m.source_cwd.as_ref())?;
    let source = entry.source_path()?;
    let same = ctx
        .common_dir(recorded_source)
        .zip(ctx.common_dir(source))
        .is_some_and(|(a, b)| a == b);
    (!same).then(|| {
        format!(
            "its source {} is not (or no longer) a checkout of the repository {}",
            shown_path(recorded_source),
            shown_path(source)
        )
    })
}
