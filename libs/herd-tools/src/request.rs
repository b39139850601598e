//! Typed tool requests, produced by [`crate::parse`] after schema validation.
//!
//! The types carry no rule of their own that the schema states: ranges, types, unknown fields and
//! defaults come from the schema files (defaults are filled in before deserializing). What they
//! add is the few rules across fields that a JSON Schema cannot say, in [`ToolRequest::check`].

use std::path::PathBuf;

use herd_core::{Error, ErrorCode};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// A type that holds the parameters of one or more tools.
pub trait ToolRequest: DeserializeOwned {
    /// The tools whose parameters this type holds.
    const TOOLS: &'static [&'static str];

    /// Checks the rules across fields that the schema cannot express.
    fn check(&self) -> Result<(), Error> {
        Ok(())
    }
}

/// The parameters of `subagent`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubagentRequest {
    pub name: String,
    pub task: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking: Option<Thinking>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skills: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// `None` when omitted or `null`: a plain pane in `cwd`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worktree: Option<WorktreeRequest>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fork: Option<bool>,
    pub persistent: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accept: Option<AcceptRequest>,
    /// The acceptance gate, as given; herd-accept validates it field by field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acceptance: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate: Option<String>,
    /// The run this child reviews.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reviews: Option<String>,
    /// The prepared host (`herd-launch host add`) the child runs on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// How the child is confined (`read-only`, `workspace`, `off`); `None`: the user's default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<herd_sandbox::Mode>,
    /// Where the child may connect (`on`, `off`, a list of `host:port`); `None`: the user's
    /// default. Read by [`SubagentRequest::network`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<herd_sandbox::policy::WrittenNetwork>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interactive: Option<bool>,
    /// The child's hard budget, as given; read by [`SubagentRequest::budget`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetRequest>,
}

/// `subagent.budget` as given: its numbers are checked by [`SubagentRequest::budget`], so that
/// every refusal of a budget names the field `budget`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BudgetRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<serde_json::Number>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usd: Option<serde_json::Number>,
}

/// A budget's bounds, each positive and finite.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BudgetLimits {
    pub tokens: Option<u64>,
    pub usd: Option<f64>,
}

/// What `model` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSpec {
    /// One exact `provider/model-id`, or an ordered fallback list of them.
    Models(Vec<String>),
    /// `task:<category>`: the category's candidates from the config.
    Task(String),
}

impl SubagentRequest {
    /// Returns what `model` asks for, `None` when it is omitted.
    ///
    /// Valid only after [`ToolRequest::check`], which refuses empty list entries and a
    /// `task:` prefix that is not the whole value.
    pub fn model_spec(&self) -> Option<ModelSpec> {
        let model = self.model.as_deref()?.trim();
        Some(match model.strip_prefix("task:") {
            Some(category) => ModelSpec::Task(category.to_owned()),
            None => ModelSpec::Models(model.split(',').map(|m| m.trim().to_owned()).collect()),
        })
    }
}

impl SubagentRequest {
    /// The network asked for, `None` when omitted; a list entry that is not a `host:port` is
    /// refused (field `network`).
    pub fn network(&self) -> Result<Option<herd_sandbox::Network>, Error> {
        self.network
            .as_ref()
            .map(|written| written.read().map_err(|why| Error::invalid("network", why)))
            .transpose()
    }
}

impl SubagentRequest {
    /// The budget asked for, `None` when omitted; one without a bound, a token count that is not
    /// a positive whole number or an amount that is not a positive finite number is refused
    /// (field `budget`).
    pub fn budget(&self) -> Result<Option<BudgetLimits>, Error> {
        let Some(budget) = &self.budget else {
            return Ok(None);
        };
        let tokens = match &budget.tokens {
            None => None,
            Some(n) => match n.as_u64() {
                Some(n) if n > 0 => Some(n),
                _ => {
                    return Err(Error::invalid(
                        "budget",
                        format!("budget.tokens must be a positive whole number, not {n}"),
                    ));
                }
            },
        };
        let usd = match &budget.usd {
            None => None,
            Some(n) => match n.as_f64() {
                Some(x) if x.is_finite() && x > 0.0 => Some(x),
                _ => {
                    return Err(Error::invalid(
                        "budget",
                        format!("budget.usd must be a positive amount of US dollars, not {n}"),
                    ));
                }
            },
        };
        if tokens.is_none() && usd.is_none() {
            return Err(Error::invalid(
                "budget",
                "budget needs tokens, usd or both; omit it for no budget",
            ));
        }
        Ok(Some(BudgetLimits { tokens, usd }))
    }
}

impl ToolRequest for SubagentRequest {
    const TOOLS: &'static [&'static str] = &["subagent"];

    fn check(&self) -> Result<(), Error> {
        self.network()?;
        self.budget()?;
        if let Some(model) = &self.model {
            let model = model.trim();
            if let Some(category) = model.strip_prefix("task:") {
                if category.is_empty()
                    || category.contains(',')
                    || category.contains(char::is_whitespace)
                {
                    return Err(Error::invalid(
                        "model",
                        "model task:<category> must be the whole value, with one category name",
                    ));
                }
            } else if model.split(',').any(|entry| entry.trim().is_empty()) {
                return Err(Error::invalid(
                    "model",
                    "model has an empty entry in its fallback list",
                ));
            } else if model.contains(',') && self.worktree.is_some() {
                return Err(Error::invalid(
                    "model",
                    "model fallback lists are refused for worktree launches; give one model or a task:<category>",
                ));
            }
        }
        if self.accept.is_some() && self.persistent {
            return Err(Error::invalid(
                "accept",
                "accept is refused for a persistent child; checks run only for auto-exit, non-persistent children",
            ));
        }
        Ok(())
    }
}

/// A Pi thinking level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Thinking {
    Off,
    Minimal,
    Low,
    Medium,
    High,
    Xhigh,
    Max,
}

impl Thinking {
    /// Every level, lowest first (the schema's `enum`, which a test keeps equal).
    pub const ALL: [Thinking; 7] = [
        Thinking::Off,
        Thinking::Minimal,
        Thinking::Low,
        Thinking::Medium,
        Thinking::High,
        Thinking::Xhigh,
        Thinking::Max,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Thinking::Off => "off",
            Thinking::Minimal => "minimal",
            Thinking::Low => "low",
            Thinking::Medium => "medium",
            Thinking::High => "high",
            Thinking::Xhigh => "xhigh",
            Thinking::Max => "max",
        }
    }
}

/// `subagent.worktree`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorktreeRequest {
    pub branch: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
}

/// `subagent.accept`, with the schema's defaults filled in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AcceptRequest {
    pub run: String,
    pub max_retries: u32,
    pub timeout_sec: u32,
    pub paths: Vec<String>,
}

/// Which run a control tool means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Id(String),
    Name(String),
}

fn target_of(id: Option<&String>, name: Option<&String>) -> Result<Target, Error> {
    // When both are supplied, `id` is used (docs/tools.md, "Validation").
    match (id, name) {
        (Some(id), _) => Ok(Target::Id(id.clone())),
        (None, Some(name)) => Ok(Target::Name(name.clone())),
        (None, None) => Err(Error {
            code: ErrorCode::InvalidRequest,
            message: "one of id or name is required".to_owned(),
            field: Some("id".to_owned()),
        }),
    }
}

/// The parameters of `subagent_cancel`, `subagent_interrupt` and `subagent_stop`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TargetRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl TargetRequest {
    /// The run meant: `id` when given, else `name`.
    pub fn target(&self) -> Result<Target, Error> {
        target_of(self.id.as_ref(), self.name.as_ref())
    }
}

impl ToolRequest for TargetRequest {
    const TOOLS: &'static [&'static str] =
        &["subagent_cancel", "subagent_interrupt", "subagent_stop"];

    fn check(&self) -> Result<(), Error> {
        self.target().map(drop)
    }
}

/// The parameters of `subagent_resume`, with the schema's defaults filled in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResumeRequest {
    pub session_path: PathBuf,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub auto_exit: bool,
}

impl ToolRequest for ResumeRequest {
    const TOOLS: &'static [&'static str] = &["subagent_resume"];
}

/// The parameters of `subagent_send`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SendRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub message: String,
}

impl SendRequest {
    /// The specialist meant: `id` when given, else `name`.
    pub fn target(&self) -> Result<Target, Error> {
        target_of(self.id.as_ref(), self.name.as_ref())
    }
}

impl ToolRequest for SendRequest {
    const TOOLS: &'static [&'static str] = &["subagent_send"];

    fn check(&self) -> Result<(), Error> {
        self.target().map(drop)
    }
}

/// The parameters of `caller_ping`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CallerPingRequest {
    pub message: String,
}

impl ToolRequest for CallerPingRequest {
    const TOOLS: &'static [&'static str] = &["caller_ping"];
}

/// The parameters of `worktree_remove`, with the schema's defaults filled in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorktreeRemoveRequest {
    pub target: String,
    pub preserve: bool,
    /// The host the worktree is on (`herd-cleanup remove --host`); `None` for this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

impl ToolRequest for WorktreeRemoveRequest {
    const TOOLS: &'static [&'static str] = &["worktree_remove"];
}

/// The parameters of the tools that take none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmptyRequest {}

impl ToolRequest for EmptyRequest {
    const TOOLS: &'static [&'static str] = &["subagents_list", "worktree_list", "subagent_done"];
}

/// The parameters of `subagents_write_task_models`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WriteTaskModelsRequest {
    pub tasks: TaskModels,
    pub tasks_meta: TasksMeta,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_config_revision: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub basis: Option<Basis>,
}

impl ToolRequest for WriteTaskModelsRequest {
    const TOOLS: &'static [&'static str] = &["subagents_write_task_models"];

    fn check(&self) -> Result<(), Error> {
        match &self.basis {
            Some(basis) if basis.kind != self.tasks_meta.method => Err(Error::invalid(
                "basis.kind",
                "basis.kind must equal tasksMeta.method",
            )),
            _ => Ok(()),
        }
    }
}

/// `models.tasks`: ordered model candidates per task category.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaskModels {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coding: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recon: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qa: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub architecture: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub docs: Option<Vec<String>>,
}

/// `models.tasksMeta`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TasksMeta {
    pub generated_at: String,
    pub method: TaskMethod,
}

/// How a task-model proposal was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TaskMethod {
    Research,
    RegistryOnly,
}

/// What a task-model ranking rests on, as the proposer submitted it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Basis {
    pub kind: TaskMethod,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<BasisSource>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uncertainty: Option<String>,
}

/// One source a research ranking consulted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BasisSource {
    pub url: String,
    pub influence: String,
}
