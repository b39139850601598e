//! `herd-docs --json` (and `cargo xtask docs --json`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What `herd-docs --json` prints: in check mode what is stale (exit 1 when anything is), in
/// write mode what was rewritten.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DocsReport {
    pub mode: DocsMode,
    pub fresh: bool,
    pub findings: Vec<DocsFinding>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DocsMode {
    Write,
    Check,
}

/// A generated file or block that differs from what the sources give.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DocsFinding {
    pub file: String,
    /// The generated block inside the file, or `null` for a whole generated file.
    pub block: Option<String>,
    pub problem: DocsProblem,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DocsProblem {
    Stale,
    Missing,
    Orphan,
}
