//! A confined worktree child's git: it commits on its own branch, and nothing else of the
//! repository moves.
//!
//! A linked worktree's commit writes the repository's shared objects, its `refs/heads/` and its
//! reflogs; giving a child those would let it move every other branch, rewrite the config and
//! hooks, or delete objects. Inside the sandbox the repository's git directory is read-only, and
//! three private directories of the run (`<artifacts>/sandbox/<run-id>/`) are mounted over the
//! places a commit writes:
//!
//! - `objects/`: new objects go here; the repository's own objects stay readable, read-only,
//!   as this directory's alternate (mounted at `base-objects/`);
//! - `refs-heads/` over `refs/heads/`: it holds only the child's branch, at its start;
//! - `logs/` over `logs/`: the reflogs of what the child did.
//!
//! The worktree's own administrative directory (`.git/worktrees/<name>`: its `HEAD` and index)
//! stays writable. When the run ends, herd brings the branch home as `git fetch` would: the new
//! objects are copied in (never over an existing one), and the branch moves only as a fast-forward
//! from where the child started (`git update-ref <branch> <new> <start>`, never forced).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use herd_core::{Error, ErrorCode, sidecar};
use serde::{Deserialize, Serialize};

use crate::bwrap::Args;

/// The version of `overlay.json`.
pub const VERSION: u64 = 1;

/// The bound of `overlay.json`.
pub const READ_LIMIT: u64 = 64 * 1024;

/// One confined worktree child's git overlay, as `<private>/overlay.json` keeps it for the
/// program that brings the branch home.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Overlay {
    pub version: u64,
    /// The run's private directory.
    pub private: PathBuf,
    /// The repository's common git directory.
    pub common: PathBuf,
    /// The worktree's administrative directory (`<common>/worktrees/<name>`).
    pub admin: PathBuf,
    /// The branch, without `refs/heads/`.
    pub branch: String,
    /// The commit the branch was at when the child started.
    pub start: String,
}

/// What bringing the branch home did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HomeComing {
    /// The child made no commit on its branch.
    Unchanged,
    /// The branch moved from the start to this commit.
    Moved { to: String, objects: usize },
    /// The child's branch is gone or not a fast-forward: the repository's branch stayed.
    Refused { why: String },
}

impl Overlay {
    /// The overlay's file in a run's private directory.
    pub fn file(private: &Path) -> PathBuf {
        private.join("overlay.json")
    }

    /// Prepares the overlay of the worktree `worktree` in `private` (created, 0700), its branch
    /// at the commit it is at now. `None` when `worktree` is not a linked worktree on a branch.
    pub fn prepare(
        worktree: &Path,
        private: &Path,
        git: &herd_git::Git,
        deadline: &herd_git::Deadline,
    ) -> Result<Option<Overlay>, Error> {
        let Some((admin, common)) = linked(worktree)? else {
            return Ok(None);
        };
        let start = git
            .run(worktree, ["rev-parse", "--verify", "HEAD"], deadline)
            .map_err(|e| Error::new(ErrorCode::Unavailable, e.to_string()))?;
        let start = String::from_utf8_lossy(&start).trim().to_owned();
        let start = start.as_str();
        let head = read_small(&admin.join("HEAD"))?;
        let Some(branch) = head.trim().strip_prefix("ref: refs/heads/") else {
            return Ok(None);
        };
        if !is_commit_id(start) || !safe_ref(branch) {
            return Ok(None);
        }
        let io = |what: &str, e: std::io::Error| {
            Error::new(
                ErrorCode::Unavailable,
                format!("cannot prepare the sandbox's git ({what}): {e}"),
            )
        };
        sidecar::ensure_private_dir(private)
            .map_err(|e| io("its directory", std::io::Error::other(e.to_string())))?;
        let refs = private.join("refs-heads");
        let ref_file = refs.join(branch);
        if let Some(parent) = ref_file.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io("refs", e))?;
        }
        std::fs::write(&ref_file, format!("{start}\n")).map_err(|e| io("refs", e))?;
        for dir in ["objects/info", "objects/pack", "logs", "base-objects"] {
            std::fs::create_dir_all(private.join(dir)).map_err(|e| io(dir, e))?;
        }
        let base = private.join("base-objects");
        std::fs::write(
            private.join("objects/info/alternates"),
            format!("{}\n", base.display()),
        )
        .map_err(|e| io("alternates", e))?;
        let overlay = Overlay {
            version: VERSION,
            private: private.to_path_buf(),
            common,
            admin,
            branch: branch.to_owned(),
            start: start.to_owned(),
        };
        let json = serde_json::to_vec(&overlay).map_err(|e| Error::internal(e.to_string()))?;
        sidecar::AtomicWrite::new(sidecar::Durability::Synced)
            .replace(&Overlay::file(private), &json)
            .map_err(|e| io("overlay.json", std::io::Error::other(e.to_string())))?;
        Ok(Some(overlay))
    }

    /// The overlay kept in `private`, `None` when there is none; a file that is not one is an
    /// error (nothing comes home from it).
    pub fn read(private: &Path) -> Result<Option<Overlay>, Error> {
        let file = Overlay::file(private);
        let Some(bytes) = sidecar::read_bounded(&file, READ_LIMIT)
            .map_err(|e| Error::new(ErrorCode::Unavailable, e.to_string()))?
        else {
            return Ok(None);
        };
        let overlay: Overlay = serde_json::from_slice(&bytes).map_err(|e| {
            Error::new(
                ErrorCode::Unavailable,
                format!("{} is not an overlay: {e}", file.display()),
            )
        })?;
        if overlay.version != VERSION || !safe_ref(&overlay.branch) || !is_commit_id(&overlay.start)
        {
            return Err(Error::new(
                ErrorCode::Unavailable,
                format!("{} is not an overlay herd wrote", file.display()),
            ));
        }
        Ok(Some(overlay))
    }

    /// The mounts of the overlay, after the machine's read-only root and the private `/tmp`.
    pub(crate) fn bind(&self, args: &mut Args) {
        let objects = self.common.join("objects");
        // The git directory read-only even where a hidden path or the private /tmp covers it.
        args.pair("--ro-bind", &self.common, &self.common);
        args.pair("--ro-bind", &objects, &self.private.join("base-objects"));
        args.pair("--bind", &self.private.join("objects"), &objects);
        args.pair(
            "--bind",
            &self.private.join("refs-heads"),
            &self.common.join("refs/heads"),
        );
        if self.common.join("logs").is_dir() {
            args.pair(
                "--bind",
                &self.private.join("logs"),
                &self.common.join("logs"),
            );
        }
        args.pair("--bind", &self.admin, &self.admin);
    }

    /// Brings the child's branch home: its new objects copied in, then the branch
    /// fast-forwarded, each git call within `deadline`.
    pub fn bring_home(
        &self,
        git: &herd_git::Git,
        deadline: &herd_git::Deadline,
    ) -> Result<HomeComing, Error> {
        let git = |args: &[OsString]| {
            git.run(&self.common, args, deadline)
                .map_err(|e| Error::new(ErrorCode::Unavailable, e.to_string()))
        };
        let ref_file = self.private.join("refs-heads").join(&self.branch);
        let tip = match std::fs::read_to_string(&ref_file) {
            Ok(text) => text.trim().to_owned(),
            Err(_) => {
                return Ok(HomeComing::Refused {
                    why: format!("the child removed its branch {}", self.branch),
                });
            }
        };
        if tip == self.start {
            return Ok(HomeComing::Unchanged);
        }
        if !is_commit_id(&tip) {
            return Ok(HomeComing::Refused {
                why: format!("the child's branch {} holds no commit id", self.branch),
            });
        }
        let objects = copy_objects(&self.private.join("objects"), &self.common.join("objects"))?;
        let arg = |s: &str| OsString::from(s);
        let commit = format!("{tip}^{{commit}}");
        if git(&[arg("cat-file"), arg("-e"), arg(&commit)]).is_err() {
            return Ok(HomeComing::Refused {
                why: format!(
                    "the child's branch {} names a commit it did not make",
                    self.branch
                ),
            });
        }
        let ancestor = [
            arg("merge-base"),
            arg("--is-ancestor"),
            arg(&self.start),
            arg(&tip),
        ];
        if git(&ancestor).is_err() {
            return Ok(HomeComing::Refused {
                why: format!(
                    "the child's branch {} is not a fast-forward of {}; it stays in {}",
                    self.branch,
                    &self.start[..12],
                    self.private.display()
                ),
            });
        }
        let full = format!("refs/heads/{}", self.branch);
        // Brought home already (a delivery that ran twice): nothing moves again.
        let now = git(&[arg("rev-parse"), arg("--verify"), arg(&full)])?;
        if String::from_utf8_lossy(&now).trim() == tip {
            return Ok(HomeComing::Moved { to: tip, objects });
        }
        git(&[arg("update-ref"), arg(&full), arg(&tip), arg(&self.start)])?;
        Ok(HomeComing::Moved { to: tip, objects })
    }
}

/// A linked worktree's administrative directory and its repository's common git directory.
fn linked(worktree: &Path) -> Result<Option<(PathBuf, PathBuf)>, Error> {
    let dot_git = worktree.join(".git");
    match std::fs::symlink_metadata(&dot_git) {
        Ok(meta) if meta.is_file() => {}
        _ => return Ok(None),
    }
    let text = read_small(&dot_git)?;
    let Some(admin) = text.trim().strip_prefix("gitdir: ") else {
        return Ok(None);
    };
    let admin = worktree.join(admin);
    let common = read_small(&admin.join("commondir"))?;
    let common = admin.join(common.trim());
    let canonical = |p: &Path| {
        std::fs::canonicalize(p).map_err(|e| {
            Error::new(
                ErrorCode::Unavailable,
                format!("cannot resolve {}: {e}", p.display()),
            )
        })
    };
    Ok(Some((canonical(&admin)?, canonical(&common)?)))
}

fn read_small(path: &Path) -> Result<String, Error> {
    let bytes = sidecar::read_bounded(path, 4096)
        .map_err(|e| Error::new(ErrorCode::Unavailable, e.to_string()))?
        .ok_or_else(|| {
            Error::new(
                ErrorCode::Unavailable,
                format!("{} is missing", path.display()),
            )
        })?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// A full SHA-1 or SHA-256 object id.
fn is_commit_id(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A branch name that stays inside `refs/heads/` as a path.
fn safe_ref(branch: &str) -> bool {
    !branch.is_empty()
        && !branch.starts_with('/')
        && branch
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != ".." && !part.starts_with('.'))
}

/// Copies every object file of `from` (loose objects and packs, `info/` aside) into `to`, never
/// over an existing file, each through a temporary name so a reader never sees half of one; a
/// pack's index goes last, as git writes it. Returns how many files were copied.
fn copy_objects(from: &Path, to: &Path) -> Result<usize, Error> {
    let mut files = Vec::new();
    collect(from, Path::new(""), &mut files)?;
    // `.idx` last: git finds a pack by its index.
    files.sort_by_key(|p| p.extension().is_some_and(|e| e == "idx"));
    let mut copied = 0;
    for relative in files {
        let dest = to.join(&relative);
        if dest.exists() {
            continue;
        }
        let fail = |e: std::io::Error| {
            Error::new(
                ErrorCode::Unavailable,
                format!("cannot bring {} home: {e}", dest.display()),
            )
        };
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(fail)?;
        }
        let mut tmp = dest.clone().into_os_string();
        tmp.push(".herd-tmp");
        let tmp = PathBuf::from(tmp);
        std::fs::copy(from.join(&relative), &tmp).map_err(fail)?;
        std::fs::rename(&tmp, &dest).map_err(fail)?;
        copied += 1;
    }
    Ok(copied)
}

fn collect(root: &Path, relative: &Path, out: &mut Vec<PathBuf>) -> Result<(), Error> {
    let dir = root.join(relative);
    let entries = std::fs::read_dir(&dir).map_err(|e| {
        Error::new(
            ErrorCode::Unavailable,
            format!("cannot read {}: {e}", dir.display()),
        )
    })?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let path = relative.join(&name);
        if path == Path::new("info") {
            continue;
        }
        // Never a symlink or a device: only what git itself writes.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            collect(root, &path, out)?;
        } else if kind.is_file() && !name.to_string_lossy().starts_with("tmp") {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_names_stay_under_refs_heads() {
        for good in ["feat", "herd/fix-1", "a/b/c"] {
            assert!(safe_ref(good), "{good}");
        }
        for bad in ["", "/abs", "a/../b", "../x", "a//b", ".hidden", "a/.b"] {
            assert!(!safe_ref(bad), "{bad}");
        }
        assert!(is_commit_id(&"a".repeat(40)));
        assert!(!is_commit_id("HEAD"));
    }
}
