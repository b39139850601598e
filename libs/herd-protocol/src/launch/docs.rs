//! herd-launch's other `--json` documents: `models` (the catalog), `roles` (the listing of
//! `subagents_list`), `write-task-models`, and `handoff` (also kept as `handoffs/<id>.json`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::layout::RUN_ID_PATTERN;

/// The version of the catalog document.
pub const CATALOG_VERSION: u64 = 1;

/// What `herd-launch models --json` prints: the models Pi has credentials for, the candidates of
/// each task category, and the catalog as one guideline of the `subagent` tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "LaunchModels")]
pub struct ModelCatalog {
    #[schemars(schema_with = "crate::version_is::<{ CATALOG_VERSION }>")]
    pub format_version: u64,
    pub models: Vec<CatalogModel>,
    pub tasks: Vec<CatalogTask>,
    /// At most 2,000 characters, every value encoded.
    pub guideline: String,
    /// `guidelines.launchRoster` of the configuration: whether the `subagent` guidelines ask
    /// for the launch roster table after the final launch (true unless it is `false`).
    pub launch_roster: bool,
}

/// A model Pi has credentials for, as `pi --list-models` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CatalogModel {
    /// `provider/id`, the value `model` takes.
    pub model: String,
    pub provider: String,
    pub id: String,
    /// The context window as Pi shows it (`128K`).
    pub context: String,
    pub max_out: String,
    pub thinking: bool,
    pub images: bool,
}

impl CatalogModel {
    /// The model `id` of `provider`, named `provider/id`.
    pub fn new(
        provider: String,
        id: String,
        context: String,
        max_out: String,
        thinking: bool,
        images: bool,
    ) -> CatalogModel {
        CatalogModel {
            model: format!("{provider}/{id}"),
            provider,
            id,
            context,
            max_out,
            thinking,
            images,
        }
    }
}

/// A task category (`task:<category>`) and its candidates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CatalogTask {
    pub category: String,
    pub candidates: Vec<String>,
    /// The candidates that have credentials, in order.
    pub authenticated: Vec<String>,
}

/// What `herd-launch roles --json` prints: the roles of the project and the user, the live
/// persistent specialists, and the configuration `expectedConfigRevision` compares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RolesListing {
    pub roles: Vec<RoleRow>,
    pub specialists: Vec<SpecialistRow>,
    /// How herd-watch notices changes: `wake+batch` with file events, else `polling(fallback)`.
    pub supervision: String,
    pub config: String,
    pub config_revision: String,
}

/// A role file: its settings, or why it does not parse (`error`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RoleRow {
    pub name: String,
    /// `project` or `user`.
    pub scope: String,
    pub file: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(flatten)]
    pub settings: Option<RoleSettings>,
}

/// What a role that parses sets; `null` where it sets nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RoleSettings {
    pub model: Option<String>,
    pub thinking: Option<String>,
    pub tools: Option<Vec<String>>,
    pub deny_tools: Vec<String>,
    pub auto_exit: Option<bool>,
    pub interactive: Option<bool>,
    pub spawning: Option<bool>,
    /// What the role is for (`description`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The skills its children load (`skills`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills: Option<Vec<String>>,
    /// Whether a launch that does not say `fork` copies the parent's conversation: `fork` or
    /// `fresh`, from `session-mode` or else `defaultContext`; absent when the role sets neither.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_context: Option<String>,
}

/// A live persistent specialist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SpecialistRow {
    #[schemars(pattern(RUN_ID_PATTERN))]
    pub run_id: String,
    pub name: String,
    pub agent: Option<String>,
    pub logical_id: String,
    pub generation_id: String,
    pub state: String,
    pub completed_tasks: u64,
    pub model: Option<String>,
    pub thinking: Option<String>,
    /// `null`: unrestricted.
    pub tools: Option<Vec<String>>,
    pub denied_tools: Vec<String>,
}

/// What `herd-launch write-task-models --json` prints after it wrote the task models.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ModelsWritten {
    pub status: WrittenStatus,
    pub file: String,
    pub previous_revision: String,
    pub revision: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WrittenStatus {
    Written,
}

/// The version of a handoff record.
pub const HANDOFF_VERSION: u64 = 1;

/// What `herd-launch handoff --json` prints, also kept as `handoffs/<id>.json`: the worktree, the
/// new session, and whether the new Pi's start and the focus were confirmed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HandoffDoc {
    #[schemars(schema_with = "crate::version_is::<{ HANDOFF_VERSION }>")]
    pub format_version: u64,
    pub status: HandoffStatus,
    pub handoff_id: String,
    pub worktree: HandoffWorktree,
    pub session_file: String,
    pub pane: Option<crate::run::PaneRef>,
    /// The new Pi's PID, once its start is confirmed.
    pub pid: Option<u32>,
    /// Why the start is not confirmed.
    pub unconfirmed: Option<String>,
    pub focused: bool,
    pub focus_error: Option<String>,
    pub diagnostics: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HandoffStatus {
    /// The new Pi runs in the worktree (exit 0).
    Started,
    /// Its start could not be confirmed (exit 3); nothing was focused.
    Uncertain,
}

/// The managed worktree of a handoff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HandoffWorktree {
    pub path: String,
    pub branch: String,
    pub base_sha: String,
    pub workspace_id: Option<String>,
}
