//! Seeding a child's session file before Pi opens it (docs/protocol.md, "Pi's session file").
//!
//! - **fork**: a new header, then the parent's entries up to and including its last user
//!   message (the one that asked for the delegation), without the parent's own header and
//!   without the turn in flight (the assistant's `subagent` call and what came before it in that
//!   turn): the child continues the parent's conversation.
//! - **lineage-only**: the header alone, naming the parent session.
//! - **standalone**: the header alone, naming no parent.
//!
//! A child whose role asks for `lineage-only`, or any child whose parent session is known and that
//! does not fork, gets the lineage header. herd always creates the file, private (0600), so a
//! child's transcript is never left to Pi's umask-made 0644 (Pi keeps the mode of a file it
//! opens).

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use herd_core::{Error, ErrorCode};
use herd_protocol::session::{NewHeader, SESSION_VERSION};

use crate::names::random_bytes;
use crate::plan::Plan;
use herd_core::time::Utc;

/// The largest parent session a fork copies.
pub const FORK_LIMIT: u64 = 256 * 1024 * 1024;

/// Writes the child's new session file: forked, lineage-only or standalone.
pub fn seed_session(plan: &Plan, session: &Path, cwd: &Path, now_ms: u64) -> Result<(), Error> {
    let parent = plan.parent_session.as_deref();
    let entries = match parent {
        Some(parent) if plan.fork => fork_entries(parent)?,
        _ => Vec::new(),
    };
    create_session(session, cwd, parent, &entries, now_ms)
}

/// Creates `session` (0600): a new header for `cwd`, naming `parent` as its parent session when
/// there is one, then `entries`.
fn create_session(
    session: &Path,
    cwd: &Path,
    parent: Option<&Path>,
    entries: &[u8],
    now_ms: u64,
) -> Result<(), Error> {
    let header = NewHeader {
        version: SESSION_VERSION,
        id: uuid_v4()?,
        timestamp: Utc::from_ms(now_ms).iso(),
        cwd: cwd.to_string_lossy().into_owned(),
        parent_session: parent.map(|p| p.to_string_lossy().into_owned()),
    };
    let mut bytes = serde_json::to_vec(&header).map_err(|e| Error::internal(e.to_string()))?;
    bytes.push(b'\n');
    bytes.extend_from_slice(entries);
    if crate::files::create_once(session, &bytes)? {
        Ok(())
    } else {
        Err(Error::internal(format!(
            "{} already exists",
            session.display()
        )))
    }
}

/// The parent's entries up to and including its last user message, without its header: seed
/// 003's "`true` copies this conversation into the child", the message that asked for the
/// delegation with it, the turn in flight without.
fn fork_entries(parent: &Path) -> Result<Vec<u8>, Error> {
    let entries = read_entries(parent, "fork")?;
    let last_user = entries.iter().rposition(|(_, entry)| {
        entry.get("type").and_then(serde_json::Value::as_str) == Some("message")
            && entry
                .pointer("/message/role")
                .and_then(serde_json::Value::as_str)
                == Some("user")
    });
    let keep = last_user.map_or(entries.len(), |at| at + 1);
    Ok(entries[..keep]
        .iter()
        .flat_map(|(line, _)| line.iter().copied())
        .collect())
}

/// Writes the session of a `/worktree` handoff: a new header naming `from` as its parent, then
/// the conversation branch of `from` that ends at `leaf` (default: its last entry).
pub fn seed_handoff(
    session: &Path,
    cwd: &Path,
    from: &Path,
    leaf: Option<&str>,
    now_ms: u64,
) -> Result<(), Error> {
    let branch = branch_entries(from, leaf)?;
    create_session(session, cwd, Some(from), &branch, now_ms)
}

/// The entries of the branch of `session` that ends at `leaf` (default: the last entry), root
/// first, without the header: Pi keeps a session as a tree (each entry names its `parentId`), and
/// the active conversation is the path from the root to the leaf.
pub fn branch_entries(session: &Path, leaf: Option<&str>) -> Result<Vec<u8>, Error> {
    let entries = read_entries(session, "from")?;
    let id_of = |entry: &serde_json::Value| {
        entry
            .get("id")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    let index: std::collections::HashMap<String, usize> = entries
        .iter()
        .enumerate()
        .filter_map(|(i, (_, entry))| Some((id_of(entry)?, i)))
        .collect();
    let start = match leaf {
        Some(leaf) => *index.get(leaf).ok_or_else(|| {
            Error::invalid(
                "leaf",
                format!("{} has no entry {leaf:?}", session.display()),
            )
        })?,
        None => match entries
            .iter()
            .rposition(|(_, entry)| id_of(entry).is_some())
        {
            Some(last) => last,
            // A session of entries without ids is one linear conversation.
            None => {
                return Ok(entries
                    .iter()
                    .flat_map(|(line, _)| line.iter().copied())
                    .collect());
            }
        },
    };
    let mut path = vec![start];
    let mut at = start;
    while let Some(parent) = entries[at]
        .1
        .get("parentId")
        .and_then(serde_json::Value::as_str)
    {
        let Some(&next) = index.get(parent) else {
            break;
        };
        // Every step goes to an earlier entry, so the walk ends even in a damaged file.
        if next >= at {
            break;
        }
        path.push(next);
        at = next;
    }
    Ok(path
        .iter()
        .rev()
        .flat_map(|&i| entries[i].0.iter().copied())
        .collect())
}

/// The complete entries of `session` but its header, each with its line, at most
/// [`FORK_LIMIT`] bytes; errors name `field`.
fn read_entries(session: &Path, field: &str) -> Result<Vec<(Vec<u8>, serde_json::Value)>, Error> {
    let file = herd_core::sidecar::open_given(session)
        .map_err(|e| Error::invalid(field, format!("cannot read the session: {e}")))?
        .ok_or_else(|| {
            Error::invalid(
                field,
                format!("the session {} does not exist", session.display()),
            )
        })?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len > FORK_LIMIT {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            format!(
                "the session {} is larger than {FORK_LIMIT} bytes",
                session.display()
            ),
        )
        .with_field(field));
    }
    let mut entries = Vec::new();
    let mut reader = BufReader::new(file.take(FORK_LIMIT));
    loop {
        let mut line = Vec::new();
        let n = reader.read_until(b'\n', &mut line).map_err(|e| {
            Error::invalid(field, format!("cannot read {}: {e}", session.display()))
        })?;
        if n == 0 {
            break;
        }
        if !line.ends_with(b"\n") {
            // A torn last line (Pi is appending): not part of the conversation yet.
            break;
        }
        let Ok(entry) = serde_json::from_slice::<serde_json::Value>(&line) else {
            continue;
        };
        if entry.get("type").and_then(serde_json::Value::as_str) == Some("session") {
            continue;
        }
        entries.push((line, entry));
    }
    Ok(entries)
}

/// A random (version 4) UUID, as Pi names sessions.
pub fn uuid_v4() -> Result<String, Error> {
    let mut b = random_bytes(16)?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex = herd_protocol::launch::policy::hex(&b);
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fork_copies_up_to_and_including_the_last_user_message_without_the_header() {
        let dir = tempfile::tempdir().unwrap();
        let parent = dir.path().join("p.jsonl");
        std::fs::write(
            &parent,
            "{\"type\":\"session\",\"id\":\"p\"}\n\
             {\"type\":\"message\",\"id\":\"1\",\"message\":{\"role\":\"user\"}}\n\
             {\"type\":\"message\",\"id\":\"2\",\"message\":{\"role\":\"assistant\"}}\n\
             {\"type\":\"message\",\"id\":\"3\",\"message\":{\"role\":\"user\"}}\n\
             {\"type\":\"message\",\"id\":\"4\",\"message\":{\"role\":\"assis",
        )
        .unwrap();
        let kept = String::from_utf8(fork_entries(&parent).unwrap()).unwrap();
        assert_eq!(kept.lines().count(), 3, "{kept}");
        assert!(kept.contains("\"id\":\"1\"") && kept.contains("\"id\":\"2\""));
        assert!(kept.contains("\"id\":\"3\""), "the asking message: {kept}");
        assert!(
            !kept.contains("\"id\":\"4\""),
            "not the turn in flight: {kept}"
        );
        assert!(!kept.contains("\"type\":\"session\""));
    }

    #[test]
    fn a_handoff_copies_the_branch_that_ends_at_the_leaf() {
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("p.jsonl");
        // 1 ─ 2 ─ 3 (abandoned)
        //      └─ 4 ─ 5 (the active branch: the last entry)
        std::fs::write(
            &from,
            "{\"type\":\"session\",\"id\":\"p\"}\n\
             {\"type\":\"message\",\"id\":\"1\",\"parentId\":null}\n\
             {\"type\":\"message\",\"id\":\"2\",\"parentId\":\"1\"}\n\
             {\"type\":\"message\",\"id\":\"3\",\"parentId\":\"2\"}\n\
             {\"type\":\"message\",\"id\":\"4\",\"parentId\":\"2\"}\n\
             {\"type\":\"message\",\"id\":\"5\",\"parentId\":\"4\"}\n",
        )
        .unwrap();
        let ids = |bytes: Vec<u8>| -> Vec<String> {
            String::from_utf8(bytes)
                .unwrap()
                .lines()
                .map(|l| {
                    serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]
                        .as_str()
                        .unwrap()
                        .to_owned()
                })
                .collect()
        };
        assert_eq!(
            ids(branch_entries(&from, None).unwrap()),
            ["1", "2", "4", "5"]
        );
        assert_eq!(
            ids(branch_entries(&from, Some("3")).unwrap()),
            ["1", "2", "3"]
        );
        let err = branch_entries(&from, Some("9")).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("leaf"), "{err:?}");

        let session = dir.path().join("s/h.jsonl");
        std::fs::create_dir_all(session.parent().unwrap()).unwrap();
        seed_handoff(&session, Path::new("/w/feat"), &from, None, 0).unwrap();
        let text = std::fs::read_to_string(&session).unwrap();
        let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(header["type"], "session");
        assert_eq!(header["cwd"], "/w/feat");
        assert_eq!(header["parentSession"], from.to_string_lossy().as_ref());
        assert_eq!(text.lines().count(), 5, "{text}");
    }

    #[test]
    fn uuids_have_the_version_4_shape() {
        let id = uuid_v4().unwrap();
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "4");
    }
}
