//! `<session>.accept-tries.json`: the child's own accept tries, written by the child extension
//! after each check it runs.

use std::path::{Path, PathBuf};

use herd_core::sidecar;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ChildReport;

/// The largest accept-tries file read.
pub const TRIES_READ_LIMIT: u64 = 4096;

/// `<session>.accept-tries.json`: how many times the child ran its accept check and what the
/// last run said, written by the child extension after each check. herd-watch reports it with
/// the parent re-check; a file it cannot read counts as unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcceptTries {
    /// The child writes exactly 1; an older child wrote no version. The field is optional only
    /// so that reading stays tolerant, hence the schema of what a child writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::version_one")]
    pub version: Option<u64>,
    #[schemars(range(min = 0, max = u32::MAX))]
    pub tries: u32,
    /// A child writes `pass` or `fail` or nothing; a reader takes anything else as unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "ChildReport")]
    pub last: Option<ChildReport>,
}

impl AcceptTries {
    /// The version the child writes.
    pub const FORMAT_VERSION: u64 = 1;
}

/// `<session>.accept-tries.json` beside the child's session file.
pub fn tries_file(session_file: &Path) -> PathBuf {
    crate::layout::SessionFiles::new(session_file).accept_tries()
}

/// Reads the child's tries tolerantly: a missing, oversized or malformed file, a `tries` that is
/// not a 32-bit count, is `None`; a `last` other than `pass` or `fail` is unknown (`None`).
pub fn read_tries(session_file: &Path) -> Option<AcceptTries> {
    let value: serde_json::Value =
        sidecar::read_json(&tries_file(session_file), TRIES_READ_LIMIT).ok()??;
    let tries = u32::try_from(value.get("tries")?.as_u64()?).ok()?;
    let last = match value.get("last").and_then(serde_json::Value::as_str) {
        Some("pass") => Some(ChildReport::Pass),
        Some("fail") => Some(ChildReport::Fail),
        _ => None,
    };
    Some(AcceptTries {
        version: value.get("version").and_then(serde_json::Value::as_u64),
        tries,
        last,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reader_is_tolerant() {
        let dir = std::env::temp_dir().join(format!("herd-protocol-tries-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let session = dir.join("s.jsonl");
        let read = |text: &str| {
            std::fs::write(tries_file(&session), text).unwrap();
            read_tries(&session)
        };
        assert_eq!(
            read(r#"{"version":1,"tries":2,"last":"fail"}"#),
            Some(AcceptTries {
                version: Some(1),
                tries: 2,
                last: Some(ChildReport::Fail)
            })
        );
        assert_eq!(read(r#"{"tries":1,"last":"maybe"}"#).unwrap().last, None);
        assert_eq!(read(r#"{"tries":-1}"#), None);
        assert_eq!(read(r#"{"tries":4294967296}"#), None);
        assert_eq!(read("not json"), None);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(read_tries(&session), None);
    }
}
