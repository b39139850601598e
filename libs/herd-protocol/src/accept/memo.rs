//! `verify-memo/<key>.json`: one memoized verify run of an acceptance gate (herd-accept's
//! `report::memo` computes the key and decides what is kept and reused).
//!
//! Each result is one private file `<dir>/<key>.json`, `{format_version, key, run}`, written
//! atomically and read with a bound; one that cannot be read is as none.

use std::path::{Path, PathBuf};

use crate::layout::Artifacts;
use herd_core::sidecar;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::VerifyRun;

/// The version of a memo file.
pub const MEMO_VERSION: u64 = 1;
/// The largest memo file read back.
pub const MEMO_READ_LIMIT: u64 = 1024 * 1024;

/// `verify-memo/<key>.json`: one memoized verify run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Memo {
    pub format_version: u64,
    /// The key the file is named by (64 lowercase hex characters).
    pub key: String,
    /// The run as the host made it (`reused` false).
    pub run: VerifyRun,
}

impl Memo {
    /// The version written and the one read back.
    pub const FORMAT_VERSION: u64 = MEMO_VERSION;
}

/// `verify-memo/` at the root of the artifacts directory.
pub fn memo_dir(artifacts: &Artifacts) -> PathBuf {
    artifacts.root().join("verify-memo")
}

/// `<dir>/<key>.json`, the memo of `key` in the memo directory `dir`.
pub fn memo_file(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!("{key}.json"))
}

/// Reads the memo at `path`: `None` when there is none, or it is too large, malformed or of
/// another version, which is as none.
pub fn read_memo(path: &Path) -> Option<Memo> {
    sidecar::read_versioned::<Memo>(path, MEMO_READ_LIMIT, "format_version", MEMO_VERSION)
        .ok()
        .flatten()
}
