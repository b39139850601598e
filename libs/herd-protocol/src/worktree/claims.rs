//! Which manifests claim a checkout: every manifest of an artifacts directory, and which of
//! them name a checkout path, compared by real path.
//!
//! A `removed` manifest is never evidence that a checkout at its path is owned (a checkout
//! re-created there later belongs to nobody); it only lets a repeated removal answer "already
//! removed". Files that are not manifests are evidence of nothing.

use std::io;
use std::path::{Path, PathBuf};

use herd_core::ErrorCode;

use super::manifest::{Error, Manifest, State};
use crate::layout::Artifacts;

/// One manifest file of `worktree-runs/` and what reading it gave.
#[derive(Debug)]
pub struct ManifestFile {
    pub file: PathBuf,
    pub manifest: Result<Manifest, Error>,
}

/// Reads every `*.json` of `worktree-runs/`, sorted by file name; a missing directory is empty.
///
/// Files that are not manifests are returned with their error so a caller can report them;
/// they are never evidence of anything.
pub fn read_all(artifacts: &Artifacts) -> Result<Vec<ManifestFile>, herd_core::Error> {
    let dir = artifacts.worktree_runs_dir();
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(herd_core::Error::new(
                ErrorCode::Unavailable,
                format!("cannot list {}: {e}", dir.display()),
            ));
        }
    };
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| {
            herd_core::Error::new(
                ErrorCode::Unavailable,
                format!("cannot list {}: {e}", dir.display()),
            )
        })?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        // Temporary files of atomic writes start with a dot.
        if name.starts_with('.') || !name.ends_with(".json") {
            continue;
        }
        files.push(entry.path());
    }
    files.sort();
    Ok(files
        .into_iter()
        .map(|file| {
            let manifest = match Manifest::read(&file) {
                Ok(Some(m)) => Ok(m),
                Ok(None) => Err(Error::NotFound {
                    run_id: file
                        .file_stem()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    path: file.clone(),
                }),
                Err(e) => Err(e),
            };
            ManifestFile { file, manifest }
        })
        .collect())
}

/// What the manifests of an artifacts directory say about one checkout path.
#[derive(Debug, Default)]
pub struct Ownership {
    /// Manifests, not `removed`, whose path resolves to the checkout: ownership evidence.
    pub owners: Vec<Manifest>,
    /// `removed` manifests naming the checkout: only for answering "already removed".
    pub removed: Vec<Manifest>,
    /// Manifests whose path could not be resolved for a reason other than absence: the
    /// question cannot be decided from them, so cleanup must not proceed on a guess.
    pub undecidable: Vec<(PathBuf, String)>,
    /// Files that are not manifests; no evidence of anything, listed for reporting.
    pub ignored: Vec<(PathBuf, String)>,
}

/// Which manifests of `artifacts` claim the checkout at `checkout` (compared by real path).
///
/// A `removed` manifest is never an owner, whatever its path: a checkout re-created at the
/// same place later is not owned by it. A manifest whose path no longer exists does not match
/// (it cannot name a checkout that exists), except that `removed` manifests are also matched
/// by their recorded path so a repeated removal can answer "already removed".
pub fn ownership_of(artifacts: &Artifacts, checkout: &Path) -> Result<Ownership, herd_core::Error> {
    Ok(ownership_among(&read_all(artifacts)?, checkout))
}

/// [`ownership_of`] among manifest files already read with [`read_all`], for a caller that asks
/// about many checkouts.
pub fn ownership_among(files: &[ManifestFile], checkout: &Path) -> Ownership {
    let canonical = std::fs::canonicalize(checkout).ok();
    let mut out = Ownership::default();
    for ManifestFile { file, manifest } in files {
        let manifest = match manifest {
            Ok(m) => m,
            Err(e) => {
                out.ignored.push((file.clone(), e.to_string()));
                continue;
            }
        };
        let Some(path) = &manifest.path else {
            continue;
        };
        if manifest.state == State::Removed {
            let same = path == checkout
                || canonical
                    .as_deref()
                    .is_some_and(|c| std::fs::canonicalize(path).ok().as_deref() == Some(c));
            if same {
                out.removed.push(manifest.clone());
            }
            continue;
        }
        match std::fs::canonicalize(path) {
            Ok(real) => {
                if canonical.as_deref() == Some(real.as_path()) {
                    out.owners.push(manifest.clone());
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => out.undecidable.push((
                file.clone(),
                format!("cannot resolve {}: {e}", path.display()),
            )),
        }
    }
    out
}
