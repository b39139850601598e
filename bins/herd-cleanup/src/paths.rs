//! Path canonicalisation that never opens anything, and discovery of the managed checkouts.
//!
//! Cleanup must not hang on a symlink that points at a protected or wedged directory (a dead
//! network mount, a FUSE file system that never answers a `readdir`). So paths are resolved the
//! way `realpath(3)` does, one component at a time, with `lstat` and `readlink` only
//! ([`resolve`]), and discovery lists a directory only once its resolved path is proven to lie
//! under the canonical managed root ([`discover`]). An entry whose resolved path leaves the root
//! is reported, never followed.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

/// How many symbolic links one resolution follows before it gives up (Linux's `MAXSYMLINKS`).
pub const MAX_LINKS: usize = 40;

/// The most entries one directory of the managed root may hold before discovery refuses it:
/// a bound on what is read, far beyond any real inventory.
pub const MAX_DIR_ENTRIES: usize = 100_000;

/// One step of the resolution still to do.
#[derive(Debug)]
enum Step {
    Root,
    Parent,
    Name(OsString),
}

fn steps(path: &Path) -> Vec<Step> {
    path.components()
        .filter_map(|c| match c {
            Component::RootDir => Some(Step::Root),
            Component::ParentDir => Some(Step::Parent),
            Component::Normal(name) => Some(Step::Name(name.to_owned())),
            Component::CurDir | Component::Prefix(_) => None,
        })
        .collect()
}

/// Returns the canonical form of `path`: absolute, without `.`, `..` or symbolic links.
///
/// Uses `lstat` and `readlink` only, so no directory on the way is opened or listed. A relative
/// path is taken relative to the current directory. Every component must exist; the errors are
/// those of the failing `lstat`/`readlink`, `ELOOP` after [`MAX_LINKS`] links, and `ENOTDIR`
/// when a component that is not a directory is followed by more.
pub fn resolve(path: &Path) -> io::Result<PathBuf> {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()?.join(path)
    };
    let mut pending: VecDeque<Step> = steps(&absolute).into();
    let mut out = PathBuf::from("/");
    let mut links = 0;
    while let Some(step) = pending.pop_front() {
        match step {
            Step::Root => out = PathBuf::from("/"),
            Step::Parent => {
                out.pop();
            }
            Step::Name(name) => {
                let candidate = out.join(&name);
                let meta = std::fs::symlink_metadata(&candidate)?;
                if meta.file_type().is_symlink() {
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(io::Error::from_raw_os_error(libc::ELOOP));
                    }
                    let target = std::fs::read_link(&candidate)?;
                    for step in steps(&target).into_iter().rev() {
                        pending.push_front(step);
                    }
                    // A relative target continues from the directory holding the link, which
                    // is `out` as it stands.
                } else {
                    if !meta.is_dir()
                        && pending
                            .iter()
                            .any(|s| matches!(s, Step::Name(_) | Step::Parent))
                    {
                        return Err(io::Error::from_raw_os_error(libc::ENOTDIR));
                    }
                    out = candidate;
                }
            }
        }
    }
    Ok(out)
}

/// Whether `path` is `root` or lies under it, comparing whole components.
pub fn is_within(path: &Path, root: &Path) -> bool {
    path.starts_with(root)
}

/// What discovery found at one place under the managed root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A directory whose resolved path lies under the root: a candidate checkout.
    Checkout {
        /// The path under the root as listed (`<root>/<repo>/<name>`).
        path: PathBuf,
        /// Its canonical path (the same unless `path` is a symlink within the root).
        canonical: PathBuf,
    },
    /// A symbolic link whose target lies outside the canonical root; never followed.
    Escapes { path: PathBuf, target: PathBuf },
    /// An entry that could not be resolved (a dangling link, a permission error).
    Unresolvable { path: PathBuf, reason: String },
}

impl Found {
    /// The path under the root as listed.
    pub fn path(&self) -> &Path {
        match self {
            Found::Checkout { path, .. }
            | Found::Escapes { path, .. }
            | Found::Unresolvable { path, .. } => path,
        }
    }
}

/// The managed root and what lies two levels under it.
#[derive(Debug, Clone)]
pub struct Discovery {
    /// The root as configured.
    pub root: PathBuf,
    /// Its canonical path; `None` when the root does not exist (an empty inventory).
    pub canonical_root: Option<PathBuf>,
    /// Sorted by listed path; two listed paths that resolve to one checkout appear once.
    pub found: Vec<Found>,
}

/// Why discovery gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot resolve the managed root {}: {source}", root.display())]
    Root { root: PathBuf, source: io::Error },
    #[error("cannot list {}: {source}", dir.display())]
    List { dir: PathBuf, source: io::Error },
    #[error("{} holds more than {MAX_DIR_ENTRIES} entries", dir.display())]
    TooMany { dir: PathBuf },
}

/// Lists the checkouts two levels under `root` (`<root>/<repo>/<name>`).
///
/// The root itself is resolved first (symlinked ancestors are fine). A first-level entry is
/// listed only when it resolves to a directory under the canonical root; a second-level entry
/// that is a directory (or a link resolving to one under the root) is a candidate checkout. A
/// link that leaves the root at either level is an [`Found::Escapes`] entry and is not followed.
/// Plain files are not checkouts and are skipped.
pub fn discover(root: &Path) -> Result<Discovery, Error> {
    let canonical_root = match resolve(root) {
        Ok(canonical) => canonical,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(Discovery {
                root: root.to_path_buf(),
                canonical_root: None,
                found: Vec::new(),
            });
        }
        Err(source) => {
            return Err(Error::Root {
                root: root.to_path_buf(),
                source,
            });
        }
    };
    let mut found = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for repo in list(&canonical_root)? {
        let repo_path = canonical_root.join(&repo);
        let repo_dir = match classify(&repo_path, &canonical_root) {
            Classified::Dir(dir) => dir,
            Classified::Other => continue,
            Classified::Found(entry) => {
                found.push(entry);
                continue;
            }
        };
        for name in list(&repo_dir)? {
            // Listed under the path the user sees, resolved for identity.
            let path = repo_path.join(&name);
            match classify(&repo_dir.join(&name), &canonical_root) {
                Classified::Dir(canonical) => {
                    if seen.insert(canonical.clone()) {
                        found.push(Found::Checkout { path, canonical });
                    }
                }
                Classified::Other => {}
                Classified::Found(entry) => found.push(relabel(entry, path)),
            }
        }
    }
    found.sort_by(|a, b| a.path().cmp(b.path()));
    Ok(Discovery {
        root: root.to_path_buf(),
        canonical_root: Some(canonical_root),
        found,
    })
}

enum Classified {
    /// A directory under the root, canonical.
    Dir(PathBuf),
    /// A plain file or something else that is not a checkout.
    Other,
    /// Something to report: an escaping or unresolvable link.
    Found(Found),
}

/// Decides what `path` (an entry of a directory already proven to be under `root`) is, without
/// opening it.
fn classify(path: &Path, root: &Path) -> Classified {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        // Removed while we looked: nothing to report.
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Classified::Other,
        Err(e) => {
            return Classified::Found(Found::Unresolvable {
                path: path.to_path_buf(),
                reason: e.to_string(),
            });
        }
    };
    if meta.is_dir() {
        return Classified::Dir(path.to_path_buf());
    }
    if !meta.file_type().is_symlink() {
        return Classified::Other;
    }
    match resolve(path) {
        Ok(target) if !is_within(&target, root) => Classified::Found(Found::Escapes {
            path: path.to_path_buf(),
            target,
        }),
        Ok(target) => match std::fs::symlink_metadata(&target) {
            Ok(meta) if meta.is_dir() => Classified::Dir(target),
            Ok(_) => Classified::Other,
            Err(e) => Classified::Found(Found::Unresolvable {
                path: path.to_path_buf(),
                reason: e.to_string(),
            }),
        },
        Err(e) => Classified::Found(Found::Unresolvable {
            path: path.to_path_buf(),
            reason: format!("cannot resolve the link: {e}"),
        }),
    }
}

fn relabel(entry: Found, path: PathBuf) -> Found {
    match entry {
        Found::Escapes { target, .. } => Found::Escapes { path, target },
        Found::Unresolvable { reason, .. } => Found::Unresolvable { path, reason },
        checkout @ Found::Checkout { .. } => checkout,
    }
}

/// The names in `dir` (already proven to lie under the root), sorted, at most
/// [`MAX_DIR_ENTRIES`].
fn list(dir: &Path) -> Result<Vec<OsString>, Error> {
    let entries = std::fs::read_dir(dir).map_err(|source| Error::List {
        dir: dir.to_path_buf(),
        source,
    })?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| Error::List {
            dir: dir.to_path_buf(),
            source,
        })?;
        if names.len() == MAX_DIR_ENTRIES {
            return Err(Error::TooMany {
                dir: dir.to_path_buf(),
            });
        }
        names.push(entry.file_name());
    }
    names.sort();
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn tmp() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = std::fs::canonicalize(dir.path()).unwrap();
        (dir, path)
    }

    #[test]
    fn resolve_agrees_with_realpath() {
        let (_guard, base) = tmp();
        std::fs::create_dir_all(base.join("a/b/c")).unwrap();
        symlink("a/b", base.join("ab")).unwrap();
        symlink(base.join("a/b/c"), base.join("abs")).unwrap();
        symlink("../../ab", base.join("a/b/up")).unwrap();
        for rel in [
            "a/b/c",
            "ab",
            "ab/c",
            "abs",
            "a/b/up/c",
            "a/./b/../b/c",
            "ab/../b",
        ] {
            let p = base.join(rel);
            assert_eq!(
                resolve(&p).unwrap(),
                std::fs::canonicalize(&p).unwrap(),
                "{rel}"
            );
        }
    }

    #[test]
    fn resolve_errors() {
        let (_guard, base) = tmp();
        symlink("loop", base.join("loop")).unwrap();
        std::fs::write(base.join("file"), "x").unwrap();
        symlink("missing", base.join("dangling")).unwrap();
        assert_eq!(
            resolve(&base.join("loop")).unwrap_err().raw_os_error(),
            Some(libc::ELOOP)
        );
        assert_eq!(
            resolve(&base.join("file/x")).unwrap_err().raw_os_error(),
            Some(libc::ENOTDIR)
        );
        assert_eq!(
            resolve(&base.join("dangling")).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
    }

    #[test]
    fn discovery_reports_escapes_and_never_lists_them() {
        let (_guard, base) = tmp();
        let root = base.join("root");
        let outside = base.join("outside");
        std::fs::create_dir_all(root.join("repo/a")).unwrap();
        std::fs::create_dir_all(outside.join("x/y")).unwrap();
        std::fs::write(root.join("repo/file"), "").unwrap();
        symlink(outside.join("x"), root.join("repo/out")).unwrap();
        symlink(&outside, root.join("escaped-repo")).unwrap();
        symlink("a", root.join("repo/alias")).unwrap();
        symlink("nowhere", root.join("repo/dangling")).unwrap();
        // A symlinked ancestor of the root is fine.
        symlink(&root, base.join("root-link")).unwrap();

        let d = discover(&base.join("root-link")).unwrap();
        assert_eq!(d.canonical_root.as_deref(), Some(root.as_path()));
        let got: Vec<String> = d
            .found
            .iter()
            .map(|f| match f {
                Found::Checkout { path, canonical } => {
                    format!(
                        "checkout {} -> {}",
                        path.strip_prefix(&root).unwrap().display(),
                        canonical.strip_prefix(&root).unwrap().display()
                    )
                }
                Found::Escapes { path, .. } => {
                    format!("escapes {}", path.strip_prefix(&root).unwrap().display())
                }
                Found::Unresolvable { path, .. } => format!(
                    "unresolvable {}",
                    path.strip_prefix(&root).unwrap().display()
                ),
            })
            .collect();
        assert_eq!(
            got,
            [
                "escapes escaped-repo",
                "checkout repo/a -> repo/a",
                "unresolvable repo/dangling",
                "escapes repo/out",
            ]
        );
    }

    #[test]
    fn a_missing_root_is_an_empty_inventory() {
        let (_guard, base) = tmp();
        let d = discover(&base.join("none")).unwrap();
        assert!(d.canonical_root.is_none() && d.found.is_empty());
    }
}
