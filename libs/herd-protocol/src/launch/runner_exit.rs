//! `runs/<run-id>.runner-exit.json`: the runner's exit code, written by the launch script.

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The largest runner-exit file read.
pub const READ_LIMIT: u64 = 4096;

/// `runs/<run-id>.runner-exit.json`: the runner's exit code, written by the launch script when
/// the runner has exited, on every surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RunnerExit {
    #[schemars(schema_with = "crate::version_is::<{ RunnerExit::FORMAT_VERSION }>")]
    pub format_version: u64,
    #[schemars(range(min = i32::MIN, max = i32::MAX))]
    pub exit_code: i32,
}

impl RunnerExit {
    /// The version the launch script writes.
    pub const FORMAT_VERSION: u64 = 1;
}

/// Reads the exit code the launch script recorded; `None` while the runner has not exited, and
/// for a file that is not a version 1 record of a 32-bit code.
pub fn read(path: &Path) -> Option<i32> {
    let value: serde_json::Value = herd_core::sidecar::read_json(path, READ_LIMIT).ok()??;
    if value.get("format_version")?.as_u64()? != RunnerExit::FORMAT_VERSION {
        return None;
    }
    i32::try_from(value.get("exit_code")?.as_i64()?).ok()
}
