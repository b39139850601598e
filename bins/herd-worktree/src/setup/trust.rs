//! The user's approval of a repository's committed setup file: `herd-worktree trust` records
//! the SHA-256 of the file's exact bytes in `<config>/herd/trust/<repo key>.sha256`; a file whose
//! bytes differ from the approved ones is not approved.

use std::path::{Path, PathBuf};

use herd_core::{Error, ErrorCode};

use super::config::{self, Loaded};

/// The variable a launching parent sets to say whether it trusts the project (`trusted`).
pub const TRUST_ENV: &str = "HERD_PROJECT_TRUST";

/// The record of the approved content of the repository at `principal`.
pub fn approval_file(config: &Path, principal: &Path) -> PathBuf {
    config
        .join("trust")
        .join(format!("{}.sha256", config::repo_key(principal)))
}

/// Whether the project file `loaded` of the repository at `principal` is approved as it is.
pub fn approved(config: &Path, principal: &Path, loaded: &Loaded) -> bool {
    let file = approval_file(config, principal);
    match herd_core::sidecar::read_bounded(&file, 1024) {
        Ok(Some(bytes)) => String::from_utf8_lossy(&bytes).trim() == loaded.sha256,
        _ => false,
    }
}

/// Whether the launching parent trusts the project (`HERD_PROJECT_TRUST=trusted`), for the folder
/// it launched from.
pub fn parent_trusts() -> bool {
    std::env::var(TRUST_ENV).is_ok_and(|v| v == "trusted")
}

/// The folder the launching parent's trust is for: the current directory (where the parent
/// launched from) when `HERD_PROJECT_TRUST=trusted`, else none.
pub fn trusted_folder_from_env() -> Option<PathBuf> {
    if parent_trusts() {
        std::env::current_dir().ok()
    } else {
        None
    }
}

/// What the launching parent's decision says about one repository's setup file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParentTrust {
    /// The parent trusts no folder.
    Untrusted,
    /// The parent trusts `folder`, which does not hold the repository.
    Elsewhere { folder: PathBuf },
    /// The parent trusts a folder that is the repository's principal checkout or holds it.
    Trusted,
}

impl ParentTrust {
    /// The decision for the repository whose principal checkout is `principal`, from the folder
    /// the parent trusts: trusted only when `principal` is that folder or lies below it (both
    /// resolved), since its `.herd/worktree.toml` is then inside what the parent trusted.
    pub fn of(trusted_folder: Option<&Path>, principal: &Path) -> ParentTrust {
        let Some(folder) = trusted_folder else {
            return ParentTrust::Untrusted;
        };
        let canonical = |p: &Path| std::fs::canonicalize(p).ok();
        match (canonical(folder), canonical(principal)) {
            (Some(folder), Some(principal)) if principal.starts_with(&folder) => {
                ParentTrust::Trusted
            }
            _ => ParentTrust::Elsewhere {
                folder: folder.to_path_buf(),
            },
        }
    }

    pub fn trusts(&self) -> bool {
        *self == ParentTrust::Trusted
    }
}

/// Records the approval of `loaded`'s exact content.
pub fn approve(config: &Path, principal: &Path, loaded: &Loaded) -> Result<PathBuf, Error> {
    let file = approval_file(config, principal);
    let dir = file
        .parent()
        .ok_or_else(|| Error::internal("an approval file has a parent"))?;
    std::fs::create_dir_all(dir).map_err(|e| {
        Error::new(
            ErrorCode::Unavailable,
            format!("cannot create {}: {e}", dir.display()),
        )
    })?;
    herd_core::sidecar::write_atomic(&file, format!("{}\n", loaded.sha256).as_bytes())?;
    Ok(file)
}
