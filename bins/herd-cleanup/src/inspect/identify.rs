//! What an entry is: a linked checkout of its own, its source repository and whether that lies
//! in scope, git's registration of it (branch, HEAD, lock), and the workspace Herdr has open on
//! it. A checkout that is not a registered linked worktree is examined no further.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use herd_git::Git;

use super::{BlockerCode, Classification, Context, Entry, shown, shown_path, text};
use crate::paths;

/// Source, scope, registration, branch and workspace. Returns whether the entry is a
/// registered checkout worth examining further.
pub(super) fn identify(ctx: &mut Context, entry: &mut Entry, canonical: &Path) -> bool {
    let Some(facts) = own_linked_checkout(&ctx.git, entry, canonical) else {
        return false;
    };
    entry.internal.git_dir = Some(facts.git_dir.clone());
    let Some(source) = source(ctx, entry, &facts.common_dir) else {
        return false;
    };
    if !registration(ctx, entry, canonical, &source) {
        return false;
    }
    if entry.classification == Classification::OutOfScope {
        return true;
    }
    herdr_identity(ctx, entry, canonical, &source);
    true
}

/// Git's facts of the checkout, when it is a linked worktree whose top is the entry itself (not
/// a directory inside another checkout, not a principal checkout).
fn own_linked_checkout(
    git: &Git,
    entry: &mut Entry,
    canonical: &Path,
) -> Option<herd_git::RepoFacts> {
    let facts = match linked_facts(canonical)
        .map_or_else(|| git.facts(canonical, &Context::deadline()), Ok)
    {
        Ok(facts) => facts,
        Err(e) => {
            entry.block(
                BlockerCode::GitUnknown,
                format!("not a readable git checkout: {}", shown(&e.to_string())),
            );
            return None;
        }
    };
    match paths::resolve(&facts.toplevel) {
        Ok(top) if top == canonical => {}
        Ok(top) => {
            entry.block(
                BlockerCode::NotRegistered,
                format!(
                    "not a checkout of its own: it lies inside the checkout {}",
                    shown_path(&top)
                ),
            );
            return None;
        }
        Err(e) => {
            entry.block(
                BlockerCode::GitUnknown,
                format!("cannot resolve the checkout's top: {e}"),
            );
            return None;
        }
    }
    if !facts.is_linked() {
        entry.block(
            BlockerCode::NotRegistered,
            "a principal checkout, not a linked worktree",
        );
        return None;
    }
    Some(facts)
}

/// The source repository of the shared git directory `common_dir`, recorded on the entry; a
/// source outside the session cwd makes the entry out of scope.
fn source(ctx: &mut Context, entry: &mut Entry, common_dir: &Path) -> Option<PathBuf> {
    let source = match ctx.source_of(common_dir) {
        Ok(source) => source,
        Err(message) => {
            entry.block(BlockerCode::GitUnknown, message);
            return None;
        }
    };
    entry.source = Some(text(&source));
    entry.internal.source = Some(source.clone());
    if !paths::is_within(&source, &ctx.session_cwd) {
        entry.classification = Classification::OutOfScope;
        entry.block(
            BlockerCode::OutsideSessionCwd,
            format!(
                "its source repository {} is not inside the session cwd {}",
                shown_path(&source),
                shown_path(&ctx.session_cwd)
            ),
        );
    }
    Some(source)
}

/// The checkout as its source repository's `git worktree list` records it: HEAD, branch (or
/// detached) and lock. Returns whether git lists it as a linked worktree.
fn registration(ctx: &mut Context, entry: &mut Entry, canonical: &Path, source: &Path) -> bool {
    let list = match ctx.worktree_list(source) {
        Ok(list) => list,
        Err(message) => {
            entry.block(
                BlockerCode::GitUnknown,
                format!("cannot list the repository's worktrees: {}", shown(message)),
            );
            return false;
        }
    };
    let record = list
        .iter()
        .enumerate()
        .find(|(_, listed)| listed.resolved.as_deref() == Some(canonical))
        .map(|(idx, listed)| (idx, listed.record.clone()));
    let Some((idx, record)) = record else {
        entry.block(
            BlockerCode::NotRegistered,
            "git does not list it as a worktree of its source repository",
        );
        return false;
    };
    if idx == 0 {
        entry.block(
            BlockerCode::NotRegistered,
            "it is the principal checkout of its repository",
        );
        return false;
    }
    entry.head = record.head.clone();
    entry.branch = record.branch.clone();
    entry.detached = record.detached || record.branch.is_none();
    if entry.detached {
        entry.block(
            BlockerCode::DetachedHead,
            "detached HEAD: the checkout is on no branch, so its commits could be lost",
        );
    }
    if let Some(reason) = &record.locked {
        let why = if reason.is_empty() {
            String::new()
        } else {
            format!(" ({})", shown(reason))
        };
        entry.block(
            BlockerCode::Locked,
            format!("locked{why}; unlock it with `git worktree unlock` first"),
        );
    }
    true
}

/// What `git rev-parse --show-toplevel --git-dir --git-common-dir` says at the top of a plain
/// linked checkout, read from its files as git reads them: `<top>/.git` is a regular file
/// `gitdir: <dir>`, and `<dir>/commondir` names the shared directory. `None` for anything else
/// (a `.git` directory or link, a missing file, a path that is not UTF-8), which is git's to
/// answer. Registration itself is always git's word: the checkout must be in its repository's
/// `git worktree list`, and `git status` runs in it.
pub(super) fn linked_facts(top: &Path) -> Option<herd_git::RepoFacts> {
    let small_file = |path: &Path| -> Option<String> {
        let meta = std::fs::symlink_metadata(path).ok()?;
        if !meta.file_type().is_file() || meta.len() > 4096 {
            return None;
        }
        let bytes = read_at_most(path, 4096)?;
        let text = String::from_utf8(bytes).ok()?;
        let line = text.strip_suffix('\n').unwrap_or(&text);
        (!line.is_empty() && !line.contains(['\n', '\r', '\0'])).then(|| line.to_owned())
    };
    let pointer = small_file(&top.join(".git"))?;
    let git_dir = top.join(pointer.strip_prefix("gitdir: ")?);
    let git_dir = paths::resolve(&git_dir).ok()?;
    let common = git_dir.join(small_file(&git_dir.join("commondir"))?);
    let common_dir = paths::resolve(&common).ok()?;
    (common_dir != git_dir).then(|| herd_git::RepoFacts {
        toplevel: top.to_path_buf(),
        git_dir,
        common_dir,
    })
}

/// The workspace Herdr has open on the checkout, and whether Herdr agrees with git about it.
fn herdr_identity(ctx: &mut Context, entry: &mut Entry, canonical: &Path, source: &Path) {
    let Some(answer) = ctx.herdr_list(source) else {
        return;
    };
    let list = match answer {
        Ok(list) => list,
        Err(e) => {
            entry.block(
                BlockerCode::HerdrUnknown,
                format!(
                    "herdr cannot list the repository's worktrees: {}",
                    shown(&e)
                ),
            );
            return;
        }
    };
    let rows: Vec<_> = list
        .worktrees
        .iter()
        .filter(|row| {
            row.path == canonical || paths::resolve(&row.path).ok().as_deref() == Some(canonical)
        })
        .collect();
    match rows.as_slice() {
        [] => {}
        [row] => {
            if !row.is_linked_worktree {
                entry.block(
                    BlockerCode::IdentityDisagrees,
                    "herdr does not list the checkout as a linked worktree",
                );
            } else if row.branch != entry.branch {
                entry.block(
                    BlockerCode::IdentityDisagrees,
                    format!(
                        "herdr says the checkout is on {}, git says {}",
                        row.branch.as_deref().map_or("no branch".into(), shown),
                        entry.branch.as_deref().map_or("no branch".into(), shown)
                    ),
                );
            }
            entry.workspace = row.open_workspace_id.clone();
        }
        rows => entry.block(
            BlockerCode::IdentityDisagrees,
            format!("herdr lists the checkout {} times", rows.len()),
        ),
    }
}

/// The source repository of a linked checkout whose shared git directory is `common_dir`.
///
/// A submodule's git directory lives under the superproject's `.git/modules`, so its parent is
/// not the work tree: `core.worktree` of that directory names it. Otherwise the work tree is the
/// parent of the common directory. Either way, git must confirm it: its top is itself and its
/// common directory is the same.
pub(super) fn source_root(git: &Git, common_dir: &Path) -> Result<PathBuf, String> {
    let common = paths::resolve(common_dir).map_err(|e| {
        format!(
            "cannot resolve the git directory {}: {e}",
            shown_path(common_dir)
        )
    })?;
    let config = common.join("config");
    // `git config --file` reads that one file (no includes): a file in which "worktree" does
    // not occur, in any case, cannot set core.worktree, and git need not be asked.
    // A file larger than a config file usually is, or one that cannot be read, is left to git.
    let unset = read_at_most(&config, 1024 * 1024).is_some_and(|bytes| {
        !bytes
            .windows(b"worktree".len())
            .any(|w| w.eq_ignore_ascii_case(b"worktree"))
    });
    let parent = || {
        common
            .parent()
            .map(Path::to_path_buf)
            .ok_or_else(|| "the git directory has no parent".to_owned())
    };
    let candidate = if unset {
        parent()?
    } else {
        let args: Vec<OsString> = vec![
            "config".into(),
            "--file".into(),
            config.into_os_string(),
            "--get".into(),
            "core.worktree".into(),
        ];
        let out = git
            .output(&common, &args, &Context::deadline())
            .map_err(|e| format!("cannot read core.worktree: {}", shown(&e.to_string())))?;
        match out.code {
            Some(0) => {
                let value = PathBuf::from(OsString::from(
                    out.stdout.text().trim_end_matches('\n').to_owned(),
                ));
                common.join(value)
            }
            // `git config --get` exits 1 when the key is not set.
            Some(1) => parent()?,
            _ => {
                return Err(format!(
                    "cannot read core.worktree: {}",
                    shown(out.stderr.text().trim())
                ));
            }
        }
    };
    let source = paths::resolve(&candidate).map_err(|e| {
        format!(
            "cannot resolve the source repository {}: {e}",
            shown_path(&candidate)
        )
    })?;
    let facts = git.facts(&source, &Context::deadline()).map_err(|e| {
        format!(
            "cannot confirm the source repository {}: {}",
            shown_path(&source),
            shown(&e.to_string())
        )
    })?;
    let top = paths::resolve(&facts.toplevel).ok();
    let again = paths::resolve(&facts.common_dir).ok();
    if top.as_deref() != Some(source.as_path()) || again.as_deref() != Some(common.as_path()) {
        return Err(format!(
            "cannot confirm the source repository {}: git places it elsewhere",
            shown_path(&source)
        ));
    }
    Ok(source)
}

/// The bytes of the file `path` when it can be read and holds at most `max` of them.
fn read_at_most(path: &Path, max: u64) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(max + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    (bytes.len() as u64 <= max).then_some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use herd_e2e::git::Sandbox;

    #[test]
    fn linked_facts_from_files_agree_with_git_or_leave_it_to_git() {
        let sb = Sandbox::new();
        let repo = sb.repo("repo");
        let git = sb.git_handle();
        let linked = sb.path().join("linked");
        let relative = sb.path().join("relative");
        sb.git(
            &repo,
            [
                "worktree",
                "add",
                "--quiet",
                "-b",
                "a",
                linked.to_str().unwrap(),
            ],
        );
        sb.git(
            &repo,
            [
                "worktree",
                "add",
                "--quiet",
                "-b",
                "b",
                relative.to_str().unwrap(),
            ],
        );
        // A pointer relative to the checkout, which git follows as well.
        std::fs::write(
            relative.join(".git"),
            "gitdir: ../repo/.git/worktrees/relative\n",
        )
        .unwrap();
        let resolved = |f: herd_git::RepoFacts| {
            (
                paths::resolve(&f.toplevel).unwrap(),
                paths::resolve(&f.git_dir).unwrap(),
                paths::resolve(&f.common_dir).unwrap(),
            )
        };
        for top in [&linked, &relative] {
            let top = paths::resolve(top).unwrap();
            let from_files = linked_facts(&top).expect("a plain linked checkout is read");
            let from_git = git.facts(&top, &Context::deadline()).unwrap();
            assert_eq!(resolved(from_files), resolved(from_git));
        }
        // A principal checkout, a directory inside a checkout, and a `.git` that is not the
        // plain pointer file are git's to answer.
        assert!(linked_facts(&repo).is_none());
        std::fs::create_dir_all(linked.join("inner")).unwrap();
        assert!(linked_facts(&linked.join("inner")).is_none());
        let odd = sb.path().join("odd");
        std::fs::create_dir_all(&odd).unwrap();
        std::fs::write(odd.join(".git"), "gitdir: /nonexistent/x\n").unwrap();
        assert!(linked_facts(&odd).is_none());
    }
}
