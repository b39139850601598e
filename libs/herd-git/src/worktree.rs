//! `git worktree list --porcelain -z`: the registered checkouts of a repository.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

use crate::Error;
use crate::status::is_object_id;

/// One registered checkout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeEntry {
    /// The checkout path as Git recorded it (bytes kept verbatim).
    pub path: PathBuf,
    /// The commit checked out; `None` for a bare repository or an unborn branch.
    pub head: Option<String>,
    /// The branch, short name (without `refs/heads/`); `None` when detached or bare.
    pub branch: Option<String>,
    pub detached: bool,
    pub bare: bool,
    /// `Some(reason)` when locked (the reason may be empty).
    pub locked: Option<String>,
    /// `Some(reason)` when Git considers the registration prunable.
    pub prunable: Option<String>,
}

impl WorktreeEntry {
    /// The label a listing shows for the branch: its name, or `(detached HEAD)`.
    pub fn branch_label(&self) -> &str {
        match &self.branch {
            Some(branch) => branch,
            None if self.bare => "(bare)",
            None => "(detached HEAD)",
        }
    }
}

/// Parses `git worktree list --porcelain -z`. The first entry is the principal checkout.
pub fn parse_list(bytes: &[u8]) -> Result<Vec<WorktreeEntry>, Error> {
    let mut entries = Vec::new();
    let mut current: Option<WorktreeEntry> = None;
    for field in bytes.split(|&b| b == 0) {
        if field.is_empty() {
            // An empty field ends a record (and the output ends with one more).
            if let Some(entry) = current.take() {
                entries.push(entry);
            }
            continue;
        }
        if let Some(path) = field.strip_prefix(b"worktree ") {
            if current.is_some() {
                return Err(malformed("a record that does not end with an empty field"));
            }
            if path.is_empty() {
                return Err(malformed("an empty worktree path"));
            }
            current = Some(WorktreeEntry {
                path: PathBuf::from(OsString::from_vec(path.to_vec())),
                head: None,
                branch: None,
                detached: false,
                bare: false,
                locked: None,
                prunable: None,
            });
            continue;
        }
        let entry = current
            .as_mut()
            .ok_or_else(|| malformed("an attribute before any `worktree` line"))?;
        let text = String::from_utf8_lossy(field);
        let (key, value) = match text.split_once(' ') {
            Some((k, v)) => (k, Some(v)),
            None => (text.as_ref(), None),
        };
        match (key, value) {
            ("HEAD", Some(oid)) => {
                if !is_object_id(oid) {
                    return Err(malformed("a HEAD that is not an object id"));
                }
                // Git prints the null id for an unborn branch.
                if oid.bytes().any(|b| b != b'0') {
                    entry.head = Some(oid.to_owned());
                }
            }
            ("branch", Some(full)) => {
                let short = full
                    .strip_prefix("refs/heads/")
                    .ok_or_else(|| malformed("a branch outside refs/heads/"))?;
                entry.branch = Some(short.to_owned());
            }
            ("detached", None) => entry.detached = true,
            ("bare", None) => entry.bare = true,
            ("locked", reason) => entry.locked = Some(reason.unwrap_or_default().to_owned()),
            ("prunable", reason) => entry.prunable = Some(reason.unwrap_or_default().to_owned()),
            // Attributes added by later Git versions are not needed.
            _ => {}
        }
    }
    if current.is_some() {
        return Err(malformed("a truncated last record"));
    }
    Ok(entries)
}

fn malformed(what: &str) -> Error {
    Error::Malformed {
        what: "git worktree list".into(),
        detail: format!("porcelain output has {what}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OID: &str = "c8280f17ea3942d6f94e98c52c1013a7fbd7c052";

    #[test]
    fn principal_linked_detached_locked() {
        let out = format!(
            "worktree /r\0HEAD {OID}\0branch refs/heads/main\0\0\
             worktree /w/feat x\0HEAD {OID}\0branch refs/heads/feat/x\0locked\0\0\
             worktree /w/det\0HEAD {OID}\0detached\0prunable gitdir file points to non-existent location\0\0"
        );
        let list = parse_list(out.as_bytes()).unwrap();
        assert_eq!(list.len(), 3);
        assert_eq!(list[0].path, PathBuf::from("/r"));
        assert_eq!(list[0].branch_label(), "main");
        assert_eq!(list[1].path, PathBuf::from("/w/feat x"));
        assert_eq!(list[1].branch.as_deref(), Some("feat/x"));
        assert_eq!(list[1].locked.as_deref(), Some(""));
        assert!(list[2].detached);
        assert_eq!(list[2].branch_label(), "(detached HEAD)");
        assert!(list[2].prunable.as_deref().unwrap().starts_with("gitdir"));
        assert_eq!(list[2].head.as_deref(), Some(OID));
    }

    #[test]
    fn bare_and_unborn() {
        let zero = "0".repeat(40);
        let out =
            format!("worktree /b.git\0bare\0\0worktree /u\0HEAD {zero}\0branch refs/heads/new\0\0");
        let list = parse_list(out.as_bytes()).unwrap();
        assert!(list[0].bare);
        assert_eq!(list[0].branch_label(), "(bare)");
        assert_eq!(list[1].head, None);
    }

    #[test]
    fn malformed_lists_are_errors() {
        for bad in [
            "HEAD x\0\0".to_owned(),
            format!("worktree /r\0HEAD {OID}"),
            "worktree /r\0HEAD nothex\0\0".to_owned(),
            "worktree /r\0branch main\0\0".to_owned(),
            "worktree /a\0worktree /b\0\0".to_owned(),
        ] {
            assert!(parse_list(bad.as_bytes()).is_err(), "{bad:?}");
        }
        assert!(parse_list(b"").unwrap().is_empty());
    }
}
