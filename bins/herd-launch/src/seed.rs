//! Seeding a child's session file before Pi opens it (protocol.md §1.7).
//!
//! - **fork**: a new header, then the parent's entries up to (not including) its last user
//!   message, without the parent's own header: the child continues the parent's conversation.
//! - **lineage-only**: the header alone, naming the parent session.
//! - **standalone**: nothing; Pi creates the file.
//!
//! A child whose role asks for `lineage-only`, or any child whose parent session is known and that
//! does not fork, gets the lineage header.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use herd_core::{Error, ErrorCode};

use crate::names::{Utc, random_bytes};
use crate::plan::Plan;

/// The largest parent session a fork copies.
pub const FORK_LIMIT: u64 = 256 * 1024 * 1024;

/// Writes the seeded session, if the plan asks for one.
pub fn seed_session(plan: &Plan, session: &Path, cwd: &Path, now_ms: u64) -> Result<(), Error> {
    let Some(parent) = &plan.parent_session else {
        return Ok(());
    };
    let header = serde_json::json!({
        "type": "session",
        "version": 3,
        "id": uuid_v4()?,
        "timestamp": Utc::from_ms(now_ms).iso(),
        "cwd": cwd.to_string_lossy(),
        "parentSession": parent.to_string_lossy(),
    });
    let mut bytes = serde_json::to_vec(&header).map_err(|e| Error::internal(e.to_string()))?;
    bytes.push(b'\n');
    if plan.fork {
        bytes.extend(fork_entries(parent)?);
    }
    if crate::files::create_once(session, &bytes)? {
        Ok(())
    } else {
        Err(Error::internal(format!(
            "{} already exists",
            session.display()
        )))
    }
}

/// The parent's entries up to its last user message, without its header.
fn fork_entries(parent: &Path) -> Result<Vec<u8>, Error> {
    let file = herd_core::sidecar::open_given(parent)
        .map_err(|e| Error::invalid("fork", format!("cannot read the parent session: {e}")))?
        .ok_or_else(|| {
            Error::invalid(
                "fork",
                format!("the parent session {} does not exist", parent.display()),
            )
        })?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len > FORK_LIMIT {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            format!(
                "the parent session {} is larger than {FORK_LIMIT} bytes",
                parent.display()
            ),
        )
        .with_field("fork"));
    }
    let mut lines: Vec<Vec<u8>> = Vec::new();
    let mut last_user = None;
    let mut reader = BufReader::new(file.take(FORK_LIMIT));
    loop {
        let mut line = Vec::new();
        let n = reader.read_until(b'\n', &mut line).map_err(|e| {
            Error::invalid("fork", format!("cannot read {}: {e}", parent.display()))
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
        let kind = entry.get("type").and_then(serde_json::Value::as_str);
        if kind == Some("session") {
            continue;
        }
        if kind == Some("message")
            && entry
                .pointer("/message/role")
                .and_then(serde_json::Value::as_str)
                == Some("user")
        {
            last_user = Some(lines.len());
        }
        lines.push(line);
    }
    let keep = last_user.unwrap_or(lines.len());
    Ok(lines[..keep].concat())
}

/// A random (version 4) UUID, as Pi names sessions.
pub fn uuid_v4() -> Result<String, Error> {
    let mut b = random_bytes(16)?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex = crate::policy::hex(&b);
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
    fn fork_copies_up_to_the_last_user_message_without_the_header() {
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
        assert_eq!(kept.lines().count(), 2, "{kept}");
        assert!(kept.contains("\"id\":\"1\"") && kept.contains("\"id\":\"2\""));
        assert!(!kept.contains("\"type\":\"session\""));
    }

    #[test]
    fn uuids_have_the_version_4_shape() {
        let id = uuid_v4().unwrap();
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "4");
    }
}
