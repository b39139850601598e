//! The formats of `herd-launch`: the acknowledgement of `spawn` and `resume`, the launch policy
//! beside a child's session, and the runner's exit code its launch script writes.

pub mod docs;
pub mod policy;
pub mod resurrect;
pub mod runner_exit;

use crate::layout::RUN_ID_PATTERN;
use crate::run::{LaunchStatus, Runner, SurfaceKind};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The acknowledgement of `herd-launch spawn` and `resume`. Exit 0 `launched`, 3 `uncertain` (an
/// effect may have happened: the run stays supervised, do not retry blindly), 4 `failed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LaunchAck {
    // An optional field is left out rather than printed as `null`; `schemars(with = …)` says so
    // in the schema, which would otherwise allow `null`.
    pub status: LaunchStatus,
    #[schemars(pattern(RUN_ID_PATTERN))]
    pub run_id: String,
    pub name: String,
    pub surface: SurfaceKind,
    pub runner: Runner,
    pub session_file: String,
    /// The artifacts directory of the run.
    pub artifacts: String,
    pub cwd: String,
    pub persistent: bool,
    pub auto_exit: bool,
    pub interactive: bool,
    pub diagnostics: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub pane_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub tab_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub workspace_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fallback_models: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub thinking: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "AckWorktree")]
    pub worktree: Option<AckWorktree>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub accept_spec: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "crate::run::AcceptanceSummary")]
    pub acceptance: Option<crate::run::AcceptanceSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "PersistentIds")]
    pub persistent_ids: Option<PersistentIds>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub launch_failure: Option<String>,
    /// Earlier model attempts that failed definitely.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_attempts: Vec<FailedAttempt>,
    /// The host the child runs on, for a child on another machine (`--host`); `run_id` is
    /// then this machine's record of it and `remote_run_id` the host's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub host: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub remote_run_id: Option<String>,
}

impl LaunchAck {
    /// The version of this document's shape (not printed; see the crate docs).
    pub const FORMAT_VERSION: u64 = 1;
}

/// The managed worktree a child runs in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AckWorktree {
    pub path: String,
    pub branch: String,
    pub base_sha: String,
    pub manifest: String,
}

/// The identifiers of a persistent specialist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PersistentIds {
    pub logical_id: String,
    pub generation_id: String,
    pub task_id: String,
}

/// An earlier model attempt that failed definitely.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FailedAttempt {
    #[schemars(pattern(RUN_ID_PATTERN))]
    pub run_id: String,
    pub model: Option<String>,
    pub launch_failure: String,
}

/// What `herd-launch send` prints when it dispatched a task to an idle persistent specialist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LaunchSend {
    pub status: SendStatus,
    #[schemars(pattern(RUN_ID_PATTERN))]
    pub run_id: String,
    pub name: String,
    pub task_id: String,
    /// The inbox file the task was written to.
    pub inbox: String,
}

/// A send that printed a document dispatched its task; a refused one is an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SendStatus {
    Dispatched,
}
