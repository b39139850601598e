//! `<session>.accept-tries.json`: the child's own accept tries, written by the child extension
//! after each check it runs, read through [`crate::layout::SessionFiles::read`].

use std::path::Path;

use herd_core::sidecar;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ChildReport;
use crate::session_file::SessionFile;

/// `<session>.accept-tries.json`: how many times the child ran its accept check and what the
/// last run said, written by the child extension after each check. herd-watch reports it with
/// the parent re-check; a file it cannot read counts as unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AcceptTries {
    /// The child writes the file's version (the session-file table's); an older child wrote
    /// none. The field is optional only so that reading stays tolerant, hence the schema of what
    /// a child writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::session_file::version_of::<AcceptTries>")]
    pub version: Option<u64>,
    #[schemars(range(min = 0, max = u32::MAX))]
    pub tries: u32,
    /// A child writes `pass` or `fail` or nothing; a reader takes anything else as unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "ChildReport")]
    pub last: Option<ChildReport>,
}

impl AcceptTries {
    /// The file as the child writes it, its version stamped.
    pub(crate) fn encode(&self) -> Result<Vec<u8>, sidecar::Error> {
        crate::session_file::compact(&AcceptTries {
            version: Some(<AcceptTries as SessionFile>::VERSION),
            ..*self
        })
    }

    /// Reads the child's tries tolerantly: a malformed file or a `tries` that is not a 32-bit
    /// count is refused (its readers take it as unknown); a `last` other than `pass` or `fail` is
    /// unknown (`None`), and any version is taken, an older child having written none.
    pub(crate) fn decode(bytes: &[u8], path: &Path) -> Result<AcceptTries, sidecar::Error> {
        let value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|source| sidecar::Error::Malformed {
                path: path.to_path_buf(),
                source,
            })?;
        let tries = value
            .get("tries")
            .and_then(serde_json::Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| sidecar::Error::invalid(path, "tries", "is not a 32-bit count"))?;
        let last = match value.get("last").and_then(serde_json::Value::as_str) {
            Some("pass") => Some(ChildReport::Pass),
            Some("fail") => Some(ChildReport::Fail),
            _ => None,
        };
        Ok(AcceptTries {
            version: value.get("version").and_then(serde_json::Value::as_u64),
            tries,
            last,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::SessionFiles;

    #[test]
    fn the_reader_is_tolerant() {
        let dir = tempfile::tempdir().unwrap();
        let files = SessionFiles::new(dir.path().join("s.jsonl"));
        let read = |text: &str| {
            std::fs::write(files.accept_tries(), text).unwrap();
            files.read::<AcceptTries>().ok().flatten()
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
        assert_eq!(read(&" ".repeat(4097)), None, "beyond its bound");
        std::fs::remove_file(files.accept_tries()).unwrap();
        assert_eq!(files.read::<AcceptTries>().unwrap(), None);
    }
}
