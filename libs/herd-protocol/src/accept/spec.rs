//! `accept/<run-id>.json`: the accept spec's file form, and the limits every form obeys.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Extra child turns after a failed check when the spec does not say.
pub const MAX_RETRIES_DEFAULT: u32 = 1;
/// The most extra child turns a spec may ask for.
pub const MAX_RETRIES_LIMIT: u32 = 5;
/// The per-run timeout in seconds when the spec does not say.
pub const TIMEOUT_SEC_DEFAULT: u64 = 600;
/// The longest per-run timeout in seconds a spec may ask for.
pub const TIMEOUT_SEC_LIMIT: u64 = 3600;
/// The version of the file form this build writes and the newest it reads.
pub const SPEC_VERSION: u64 = 1;
/// The largest spec file read, by herd-accept and by the child.
pub const SPEC_READ_LIMIT: u64 = 256 * 1024;
/// The longest `run` command, in bytes; a longer one is a mistake, not a check.
pub const RUN_MAX_BYTES: usize = 64 * 1024;
/// The most `paths` entries.
pub const PATHS_MAX: usize = 256;
/// The longest `paths` entry, in bytes.
pub const PATH_MAX_BYTES: usize = 4096;

/// `accept/<run-id>.json` (mode 0600), the file a child finds through `PI_SUBAGENT_ACCEPT_FILE`:
/// the caller's check command and its limits. No other key is allowed, and `sha256` must be the
/// SHA-256 of `run`, so a spec edited after launch is refused.
///
/// herd writes every field; a reader takes `null` or an absent limit as its default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "AcceptSpec")]
pub struct SpecFile {
    #[schemars(range(min = 1, max = SPEC_VERSION))]
    pub version: u64,
    /// The command, run as `sh -c <run>`; exit 0 passes.
    #[schemars(pattern("\\S"))]
    pub run: String,
    /// Extra child turns after a failed check; `null` means the default, 1.
    #[serde(default)]
    #[schemars(range(min = 0, max = MAX_RETRIES_LIMIT))]
    pub max_retries: Option<u32>,
    /// The per-run timeout; `null` means the default, 600.
    #[serde(default)]
    #[schemars(range(min = 1, max = TIMEOUT_SEC_LIMIT))]
    pub timeout_sec: Option<u64>,
    /// Check files such as tests, relative to the checkout.
    #[serde(default)]
    #[schemars(length(max = PATHS_MAX), inner(length(min = 1, max = PATH_MAX_BYTES), pattern("^[^/]")))]
    pub paths: Option<Vec<String>>,
    /// The SHA-256 of `run`, in hex.
    #[schemars(pattern("^[0-9a-fA-F]{64}$"))]
    pub sha256: String,
}

impl SpecFile {
    /// The version of this file's shape, written as `version`.
    pub const FORMAT_VERSION: u64 = SPEC_VERSION;
}
