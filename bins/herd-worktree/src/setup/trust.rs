//! The user's approval of a repository's committed setup file and of the code it runs:
//! `herd-worktree trust` records, in `<config>/herd/trust/<repo key>.sha256`, the SHA-256 of the
//! file's exact bytes on the first line, then one line `<path>\t<what>` for every file of the
//! repository its commands name, as it is at the commit approved ([`super::covered`]). A file
//! whose bytes differ from the approved ones is not approved; a worktree whose commit gives a
//! named file other content than the approved one asks again. The approved content itself is
//! kept beside it (`<repo key>.toml`), so the next approval shows what changed since.

use std::path::{Path, PathBuf};

use herd_core::{Error, ErrorCode};

use super::config::{self, Loaded};
use super::covered::Covered;

/// The variable a launching parent sets to say whether it trusts the project (`trusted`).
pub const TRUST_ENV: &str = "HERD_PROJECT_TRUST";

/// The bound of an approval record's read.
const RECORD_LIMIT: u64 = 256 * 1024;

/// The record of the approved content of the repository at `principal`.
pub fn approval_file(config: &Path, principal: &Path) -> PathBuf {
    config
        .join("trust")
        .join(format!("{}.sha256", config::repo_key(principal)))
}

/// The approved content itself, beside its record, so the next approval can show what changed.
pub fn content_file(config: &Path, principal: &Path) -> PathBuf {
    approval_file(config, principal).with_extension("toml")
}

/// The last approval recorded for the repository at `principal`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastApproval {
    pub sha256: String,
    pub covered: Covered,
    /// The content approved, when it was kept (an approval recorded before herd kept it has
    /// none) and is the one whose SHA-256 the record holds.
    pub text: Option<String>,
}

/// The last approval recorded for the repository at `principal`, if any.
pub fn last_approval(config: &Path, principal: &Path) -> Option<LastApproval> {
    let bytes = herd_core::sidecar::read_bounded(&approval_file(config, principal), RECORD_LIMIT)
        .ok()??;
    let record = String::from_utf8_lossy(&bytes);
    let mut lines = record.lines();
    let sha256 = lines.next()?.trim().to_owned();
    let covered = Covered::from_record_lines(lines);
    let text = herd_core::sidecar::read_bounded(&content_file(config, principal), RECORD_LIMIT)
        .ok()
        .flatten()
        .filter(|kept| config::sha256_hex(kept) == sha256)
        .and_then(|kept| String::from_utf8(kept).ok());
    Some(LastApproval {
        sha256,
        covered,
        text,
    })
}

/// What the approval of the repository at `principal` covers, when the project file `loaded`
/// is approved as it is: the files its commands name, as approved. `None` when the file's
/// content is not the approved one (or nothing was approved).
pub fn approved(config: &Path, principal: &Path, loaded: &Loaded) -> Option<Covered> {
    let file = approval_file(config, principal);
    let bytes = herd_core::sidecar::read_bounded(&file, RECORD_LIMIT).ok()??;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines = text.lines();
    (lines.next()?.trim() == loaded.sha256).then(|| Covered::from_record_lines(lines))
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

/// Whether no launching parent decided: `HERD_PROJECT_TRUST` unset or empty, as on a command
/// line (a Pi parent always says `trusted` or `untrusted`, and herd-launch hands a decision to
/// every child).
pub fn undecided_from_env() -> bool {
    std::env::var_os(TRUST_ENV).is_none_or(|v| v.is_empty())
}

/// What the launching parent's decision says about one repository's setup file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParentTrust {
    /// The parent said it does not trust the project (`HERD_PROJECT_TRUST=untrusted`).
    Untrusted,
    /// The parent trusts `folder`, which does not hold the repository.
    Elsewhere { folder: PathBuf },
    /// The parent trusts a folder that is the repository's principal checkout or holds it.
    Trusted,
    /// No parent decided (a command line): the person's own approval of the file
    /// (`herd-worktree trust`, recorded for this repository's folder) is their trust in it, so
    /// one approval is enough.
    Undecided,
}

impl ParentTrust {
    /// The decision for the repository whose principal checkout is `principal`, from the folder
    /// the parent trusts: trusted only when `principal` is that folder or lies below it (both
    /// resolved), since its `.herd/worktree.toml` is then inside what the parent trusted.
    /// `undecided` (no parent said anything) leaves it to the person's approval.
    pub fn of(trusted_folder: Option<&Path>, undecided: bool, principal: &Path) -> ParentTrust {
        let Some(folder) = trusted_folder else {
            return if undecided {
                ParentTrust::Undecided
            } else {
                ParentTrust::Untrusted
            };
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

    /// Whether the project file runs once its content is approved.
    pub fn trusts(&self) -> bool {
        matches!(self, ParentTrust::Trusted | ParentTrust::Undecided)
    }
}

/// Records the approval of `loaded`'s exact content and of the files its commands name as
/// `covered` says they are.
pub fn approve(
    config: &Path,
    principal: &Path,
    loaded: &Loaded,
    covered: &Covered,
) -> Result<PathBuf, Error> {
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
    // The content first: the record is the approval, and the content only shows a later one
    // what changed.
    herd_core::sidecar::write_atomic(&content_file(config, principal), loaded.text.as_bytes())?;
    let record = format!("{}\n{}", loaded.sha256, covered.record_lines());
    herd_core::sidecar::write_atomic(&file, record.as_bytes())?;
    Ok(file)
}
