//! `git status --porcelain=v2 -z --branch`: parsing the one read the handoff and cleanup rest on.
//!
//! The v2 format is stable across Git versions and, with `-z`, carries paths verbatim (no
//! quoting), so a path with spaces, newlines or quotes survives. Anything that does not match the
//! format is an error: a reader that cannot tell must say so rather than guess "clean".

use crate::Error;

/// What `HEAD` is, from the `# branch.head` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    /// On a named branch (short name, without `refs/heads/`).
    Branch(String),
    Detached,
}

/// The kind of one status entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    /// `1`: a tracked file changed in the index, the working tree or both.
    Changed,
    /// `2`: a rename or copy; `from` is the original path.
    Renamed { from: String },
    /// `u`: an unmerged (conflicted) path.
    Unmerged,
    /// `?`: untracked.
    Untracked,
    /// `!`: ignored (only with `--ignored`).
    Ignored,
}

/// One entry of the status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub kind: EntryKind,
    /// The two-letter `XY` code (index, working tree); `??`/`!!` for untracked/ignored.
    pub xy: [u8; 2],
    /// The path relative to the top of the working tree. Non-UTF-8 bytes become U+FFFD.
    pub path: String,
}

/// A parsed status.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Status {
    /// The commit `HEAD` names; `None` on an unborn branch (`(initial)`).
    pub head_oid: Option<String>,
    /// `None` when the output carried no `# branch.head` header (no `--branch`).
    pub head: Option<Head>,
    pub entries: Vec<Entry>,
}

impl Status {
    /// Parses the output of `git status --porcelain=v2 -z [--branch]`.
    pub fn parse(bytes: &[u8]) -> Result<Status, Error> {
        let mut status = Status::default();
        let mut fields = bytes.split(|&b| b == 0);
        while let Some(field) = fields.next() {
            if field.is_empty() {
                // Only the terminator of the last record leaves an empty field, at the end.
                if fields.next().is_some() {
                    return Err(malformed("an empty record"));
                }
                break;
            }
            match field[0] {
                b'#' => status.header(field)?,
                b'1' => {
                    let (xy, path) = entry_fields(field, 8)?;
                    status.entries.push(Entry {
                        kind: EntryKind::Changed,
                        xy,
                        path,
                    });
                }
                b'2' => {
                    let (xy, path) = entry_fields(field, 9)?;
                    let from = fields
                        .next()
                        .filter(|f| !f.is_empty())
                        .ok_or_else(|| malformed("a rename without its original path"))?;
                    status.entries.push(Entry {
                        kind: EntryKind::Renamed { from: text(from) },
                        xy,
                        path,
                    });
                }
                b'u' => {
                    let (xy, path) = entry_fields(field, 10)?;
                    status.entries.push(Entry {
                        kind: EntryKind::Unmerged,
                        xy,
                        path,
                    });
                }
                b'?' | b'!' => {
                    let path = field
                        .strip_prefix(if field[0] == b'?' { b"? " } else { b"! " })
                        .filter(|p| !p.is_empty())
                        .ok_or_else(|| malformed("an untracked or ignored entry without a path"))?;
                    let (kind, xy) = if field[0] == b'?' {
                        (EntryKind::Untracked, *b"??")
                    } else {
                        (EntryKind::Ignored, *b"!!")
                    };
                    status.entries.push(Entry {
                        kind,
                        xy,
                        path: text(path),
                    });
                }
                _ => return Err(malformed("an entry of unknown type")),
            }
        }
        Ok(status)
    }

    fn header(&mut self, field: &[u8]) -> Result<(), Error> {
        let line =
            std::str::from_utf8(field).map_err(|_| malformed("a header that is not UTF-8"))?;
        if let Some(oid) = line.strip_prefix("# branch.oid ") {
            if oid == "(initial)" {
                self.head_oid = None;
            } else if is_object_id(oid) {
                self.head_oid = Some(oid.to_owned());
            } else {
                return Err(malformed("a branch.oid that is not an object id"));
            }
        } else if let Some(head) = line.strip_prefix("# branch.head ") {
            self.head = Some(if head == "(detached)" {
                Head::Detached
            } else if head.is_empty() {
                return Err(malformed("an empty branch.head"));
            } else {
                Head::Branch(head.to_owned())
            });
        }
        // Other headers (upstream, ahead/behind, stash) are not needed.
        Ok(())
    }

    /// Whether any entry is unmerged.
    pub fn is_conflicted(&self) -> bool {
        self.entries.iter().any(|e| e.kind == EntryKind::Unmerged)
    }

    /// Whether there are no changed, staged, unmerged or untracked entries (ignored files do
    /// not count).
    pub fn is_clean(&self) -> bool {
        self.entries.iter().all(|e| e.kind == EntryKind::Ignored)
    }

    /// The untracked paths, in Git's order.
    pub fn untracked(&self) -> impl Iterator<Item = &str> {
        self.entries
            .iter()
            .filter(|e| e.kind == EntryKind::Untracked)
            .map(|e| e.path.as_str())
    }

    /// Every path that differs from `HEAD` in the index or the working tree, including both
    /// sides of a rename and unmerged and untracked paths; ignored paths excluded.
    pub fn changed_paths(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().flat_map(|e| {
            let from = match &e.kind {
                EntryKind::Renamed { from } => Some(from.as_str()),
                _ => None,
            };
            let this = (e.kind != EntryKind::Ignored).then_some(e.path.as_str());
            this.into_iter().chain(from)
        })
    }

    /// How many entries count as uncommitted work (what cleanup calls dirty files).
    pub fn dirty_count(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| e.kind != EntryKind::Ignored)
            .count()
    }
}

/// Splits `n` space-separated fields off the front of an entry and returns `XY` and the path.
fn entry_fields(field: &[u8], n: usize) -> Result<([u8; 2], String), Error> {
    let mut rest = field;
    let mut xy = None;
    for idx in 0..n {
        let space = rest
            .iter()
            .position(|&b| b == b' ')
            .ok_or_else(|| malformed("an entry with too few fields"))?;
        if idx == 1 {
            let code = &rest[..space];
            if code.len() != 2 {
                return Err(malformed("an entry whose XY code is not two characters"));
            }
            xy = Some([code[0], code[1]]);
        }
        rest = &rest[space + 1..];
    }
    if rest.is_empty() {
        return Err(malformed("an entry without a path"));
    }
    let xy = xy.ok_or_else(|| malformed("an entry without an XY code"))?;
    Ok((xy, text(rest)))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Whether `s` is a full SHA-1 or SHA-256 object id in lower-case hex.
pub fn is_object_id(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn malformed(what: &str) -> Error {
    Error::Malformed {
        what: "git status".into(),
        detail: format!("porcelain v2 output has {what}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OID: &str = "c8280f17ea3942d6f94e98c52c1013a7fbd7c052";

    fn parse(records: &[&str]) -> Result<Status, Error> {
        let mut bytes = Vec::new();
        for r in records {
            bytes.extend_from_slice(r.as_bytes());
            bytes.push(0);
        }
        Status::parse(&bytes)
    }

    #[test]
    fn every_entry_kind_with_awkward_paths() {
        let status = parse(&[
            &format!("# branch.oid {OID}"),
            "# branch.head feat/x",
            "# branch.ab +1 -0",
            &format!("1 .M N... 100644 100644 100644 {OID} {OID} dir/with space.txt"),
            &format!("2 R. N... 100644 100644 100644 {OID} {OID} R100 new name"),
            "old\nname",
            &format!("u UU N... 100644 100644 100644 100644 {OID} {OID} {OID} both.txt"),
            "? new \"quoted\".txt",
            "! target/x",
        ])
        .unwrap();
        assert_eq!(status.head_oid.as_deref(), Some(OID));
        assert_eq!(status.head, Some(Head::Branch("feat/x".into())));
        let kinds: Vec<_> = status
            .entries
            .iter()
            .map(|e| (&e.kind, e.path.as_str()))
            .collect();
        assert_eq!(
            kinds,
            [
                (&EntryKind::Changed, "dir/with space.txt"),
                (
                    &EntryKind::Renamed {
                        from: "old\nname".into()
                    },
                    "new name"
                ),
                (&EntryKind::Unmerged, "both.txt"),
                (&EntryKind::Untracked, "new \"quoted\".txt"),
                (&EntryKind::Ignored, "target/x"),
            ]
        );
        assert_eq!(status.entries[0].xy, *b".M");
        assert!(status.is_conflicted());
        assert!(!status.is_clean());
        assert_eq!(status.dirty_count(), 4);
        assert_eq!(
            status.changed_paths().collect::<Vec<_>>(),
            [
                "dir/with space.txt",
                "new name",
                "old\nname",
                "both.txt",
                "new \"quoted\".txt"
            ]
        );
        assert_eq!(
            status.untracked().collect::<Vec<_>>(),
            ["new \"quoted\".txt"]
        );
    }

    #[test]
    fn detached_unborn_and_clean() {
        let status = parse(&["# branch.oid (initial)", "# branch.head (detached)"]).unwrap();
        assert_eq!(status.head_oid, None);
        assert_eq!(status.head, Some(Head::Detached));
        assert!(status.is_clean());
        assert!(!status.is_conflicted());
        let status = Status::parse(b"").unwrap();
        assert_eq!(status.head, None);
        assert!(status.is_clean());
        let status = parse(&["! ignored-only"]).unwrap();
        assert!(status.is_clean());
    }

    #[test]
    fn malformed_output_is_an_error_never_clean() {
        for bad in [
            &["1 .M N..."][..],
            &["x what"],
            &["# branch.oid nothex"],
            &[&format!(
                "2 R. N... 100644 100644 100644 {OID} {OID} R100 new"
            )],
            &["? "],
            &["1 .MM N... 100644 100644 100644 a b path"],
        ] {
            let err = parse(bad).unwrap_err();
            assert!(matches!(err, Error::Malformed { .. }), "{bad:?}: {err}");
        }
        // An empty record in the middle is a framing error.
        assert!(Status::parse(b"? a\0\0? b\0").is_err());
    }

    #[test]
    fn object_ids() {
        assert!(is_object_id(OID));
        assert!(is_object_id(&"a".repeat(64)));
        assert!(!is_object_id(&OID.to_uppercase()));
        assert!(!is_object_id("abc"));
    }
}
