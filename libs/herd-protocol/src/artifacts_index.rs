//! Every artifacts directory herd launched a run from on this machine, for this user: the index
//! `<state>/herd/artifacts-index.json` under the per-user state directory (`$XDG_STATE_HOME`,
//! else `~/.local/state`).
//!
//! herd-launch adds a directory when it launches a run there; a reader drops the directories
//! that are gone (no `runs/` left). It is what `herd-watch status --all` and `herd-launch host
//! remove` look through, so a second terminal sees the runs a Pi session launched elsewhere.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use herd_core::Error;
use herd_core::sidecar::{self, AtomicWrite, Durability};
use serde::{Deserialize, Serialize};

use crate::layout::Artifacts;

/// The version a write stamps and the newest a read accepts.
pub const VERSION: u64 = 1;
/// The index's name in the state directory.
pub const FILE: &str = "artifacts-index.json";
/// The largest index read.
const READ_LIMIT: u64 = 4 * 1024 * 1024;
/// How long an update waits for another.
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// `artifacts-index.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct IndexFile {
    format_version: u64,
    directories: Vec<String>,
}

/// The index of one state directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Index {
    path: PathBuf,
}

impl Index {
    /// The index of this user: under `$XDG_STATE_HOME/herd`, else `~/.local/state/herd`;
    /// `None` without either.
    pub fn of_user() -> Option<Index> {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        var("XDG_STATE_HOME")
            .map(PathBuf::from)
            .or_else(|| var("HOME").map(|home| PathBuf::from(home).join(".local/state")))
            .map(|state| Index::in_dir(&state.join("herd")))
    }

    /// The index in the state directory `dir`.
    pub fn in_dir(dir: &Path) -> Index {
        Index {
            path: dir.join(FILE),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Adds `artifacts` (once).
    ///
    /// # Errors
    ///
    /// When the index cannot be locked, read or written.
    pub fn record(&self, artifacts: &Artifacts) -> Result<(), Error> {
        let dir = artifacts.root().to_string_lossy().into_owned();
        let _lock = self.lock()?;
        let mut file = self.read()?;
        if file.directories.contains(&dir) {
            return Ok(());
        }
        file.directories.push(dir);
        self.write(&file)
    }

    /// The directories of the index that still exist, the others dropped from it; then
    /// `also` when it is not among them.
    ///
    /// # Errors
    ///
    /// When the index cannot be locked, read or written.
    pub fn directories(&self, also: Option<&Artifacts>) -> Result<Vec<Artifacts>, Error> {
        let _lock = self.lock()?;
        let mut file = self.read()?;
        let before = file.directories.len();
        file.directories.retain(|dir| Path::new(dir).is_dir());
        if file.directories.len() != before {
            self.write(&file)?;
        }
        let mut out: Vec<Artifacts> = file
            .directories
            .iter()
            .map(|d| Artifacts::new(d.as_str()))
            .collect();
        if let Some(also) = also.filter(|a| !out.iter().any(|o| o.root() == a.root())) {
            out.push(also.clone());
        }
        Ok(out)
    }

    fn lock(&self) -> Result<herd_core::lock::FileLock, Error> {
        let lock = self.path.with_extension("lock");
        Ok(herd_core::lock::exclusive(
            &lock,
            Instant::now() + LOCK_WAIT,
        )?)
    }

    fn read(&self) -> Result<IndexFile, Error> {
        let file: Option<IndexFile> = sidecar::read_json(&self.path, READ_LIMIT)?;
        Ok(file
            .filter(|f| f.format_version <= VERSION)
            .unwrap_or(IndexFile {
                format_version: VERSION,
                directories: Vec::new(),
            }))
    }

    fn write(&self, file: &IndexFile) -> Result<(), Error> {
        let bytes = serde_json::to_vec_pretty(file)
            .map_err(|e| Error::internal(format!("cannot encode the index: {e}")))?;
        AtomicWrite::new(Durability::Unsynced).replace(&self.path, &bytes)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_are_kept_once_and_dropped_when_gone() {
        let state = tempfile::tempdir().unwrap();
        let index = Index::in_dir(state.path());
        let a = Artifacts::new(state.path().join("a"));
        let b = Artifacts::new(state.path().join("b"));
        for art in [&a, &b] {
            std::fs::create_dir_all(art.runs_dir()).unwrap();
            index.record(art).unwrap();
            index.record(art).unwrap();
        }
        let roots = |dirs: Vec<Artifacts>| -> Vec<PathBuf> {
            dirs.iter().map(|d| d.root().to_path_buf()).collect()
        };
        assert_eq!(
            roots(index.directories(None).unwrap()),
            [a.root(), b.root()]
        );
        std::fs::remove_dir_all(a.root()).unwrap();
        let c = Artifacts::new(state.path().join("c"));
        assert_eq!(
            roots(index.directories(Some(&c)).unwrap()),
            [b.root(), c.root()]
        );
        let text = std::fs::read_to_string(index.path()).unwrap();
        assert!(!text.contains("/a\""), "{text}");
    }
}
