//! The model-facing tool registry: herd's tools and commands as JSON Schema files, and the
//! one validation of their requests.
//!
//! `schemas/` beside this crate holds one JSON Schema per tool (`<tool>.json`, whose root
//! `description` is the tool's description) and `registry.json`, which says in which sessions
//! each tool and command is registered, how a host exposes the tool, and each command's usage.
//! Those files are the single source of truth: `herd-docs` renders the docs tables from them,
//! `herd-docs schemas --json` hands them to a host, and every binary that takes a tool's
//! parameters validates with [`validate`] or [`parse`] here, so no rule has a second copy.
//!
//! ```
//! let request = serde_json::json!({"name": "scout", "task": "map the parser", "accept": {"run": "make test"}});
//! let parsed: herd_tools::SubagentRequest = herd_tools::parse("subagent", &request).unwrap();
//! assert_eq!(parsed.accept.unwrap().timeout_sec, 600);
//!
//! let bad = serde_json::json!({"name": "scout", "task": "x", "accept": {"run": "make test", "timeoutSec": 0}});
//! let err = herd_tools::validate("subagent", &bad).unwrap_err();
//! assert_eq!(err.field.as_deref(), Some("accept.timeoutSec"));
//! ```

mod request;
pub mod schema;
mod validate;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use herd_core::{Error, ErrorCode};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use request::{
    AcceptRequest, Basis, BasisSource, BudgetLimits, BudgetRequest, CallerPingRequest,
    EmptyRequest, ModelSpec, ResumeRequest, SendRequest, SubagentRequest, Target, TargetRequest,
    TaskMethod, TaskModels, TasksMeta, Thinking, ToolRequest, WorktreeRemoveRequest,
    WorktreeRequest, WriteTaskModelsRequest,
};
pub use schema::{JsonType, Schema};

/// The file of the registry inside the schema directory.
pub const REGISTRY_FILE: &str = "registry.json";

/// The newest `format_version` of `registry.json` this crate reads.
pub const REGISTRY_FORMAT_VERSION: u64 = 1;

/// The largest schema or registry file a load reads.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

macro_rules! embed {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../schemas/", $name)))),*]
    };
}

/// The schema directory compiled into the crate; a test keeps it equal to `schemas/`.
const BUILTIN: &[(&str, &str)] = embed![
    "registry.json",
    "caller_ping.json",
    "subagent.json",
    "subagent_cancel.json",
    "subagent_done.json",
    "subagent_interrupt.json",
    "subagent_resume.json",
    "subagent_send.json",
    "subagent_stop.json",
    "subagents_list.json",
    "subagents_write_task_models.json",
    "worktree_list.json",
    "worktree_remove.json",
];

/// A kind of Pi session a tool or command is registered in.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Session {
    /// A top-level session (no `PI_SUBAGENT_ID`).
    Parent,
    /// A session launched as a subagent.
    Child,
}

impl Session {
    pub fn as_str(self) -> &'static str {
        match self {
            Session::Parent => "parent",
            Session::Child => "child",
        }
    }
}

/// How a host exposes a tool to the model (docs/tools.md, "Tool loading").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Exposure {
    /// Registered with Pi's deferred exposure: loaded through `tool_search`.
    Deferred,
    /// Declared directly.
    Direct,
    /// Registered inactive; a command activates it (`/subagents-init`).
    Inactive,
}

/// One model-facing tool.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Tool {
    pub name: String,
    pub sessions: Vec<Session>,
    pub exposure: Exposure,
    /// The tool's description, exactly as the model sees it.
    pub description: String,
    /// The schema of the tool's parameters (an object), without the description.
    pub parameters: Schema,
}

impl Tool {
    /// Returns whether the tool is registered in `session`.
    pub fn registered_in(&self, session: Session) -> bool {
        self.sessions.contains(&session)
    }

    /// Returns whether only children register the tool.
    pub fn child_only(&self) -> bool {
        self.sessions == [Session::Child]
    }

    /// Checks `request` against the tool's parameters.
    pub fn validate(&self, request: &Value) -> Result<(), Error> {
        validate::check(&self.parameters, request, Some("the request"))
    }
}

/// One usage line of a command, and the sessions it is offered in when fewer than the command's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<Vec<Session>>,
}

/// One slash command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Command {
    /// The command with its slash, e.g. `/worktree`.
    pub name: String,
    pub sessions: Vec<Session>,
    pub usage: Vec<Usage>,
    pub description: String,
}

/// The whole registry: the tools and commands of one extension.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Registry {
    pub format_version: u64,
    /// The extension's name as the docs title it (`Subagents`).
    pub group: String,
    /// The tools, in registry order.
    pub tools: Vec<Tool>,
    pub commands: Vec<Command>,
}

/// Why the registry could not be loaded; every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read {file}")]
    Read {
        file: String,
        #[source]
        source: herd_core::sidecar::Error,
    },
    #[error("{file} is missing")]
    Missing { file: String },
    #[error("{file} is not valid JSON of the registry's shape: {source}")]
    Registry {
        file: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("{file}: {message}")]
    Invalid { file: String, message: String },
    #[error("{file}: {source}")]
    Schema {
        file: String,
        #[source]
        source: schema::ParseError,
    },
    #[error("{file} is not listed in {REGISTRY_FILE}")]
    Unlisted { file: String },
}

impl LoadError {
    /// The file the error is about.
    pub fn file(&self) -> &str {
        match self {
            LoadError::Read { file, .. }
            | LoadError::Missing { file }
            | LoadError::Registry { file, .. }
            | LoadError::Invalid { file, .. }
            | LoadError::Schema { file, .. }
            | LoadError::Unlisted { file } => file,
        }
    }
}

impl From<LoadError> for Error {
    fn from(err: LoadError) -> Error {
        let field = err.file().to_owned();
        herd_core::error::report(ErrorCode::Internal, &err).with_field(field)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRegistry {
    format_version: u64,
    group: String,
    tools: Vec<RawTool>,
    commands: Vec<Command>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTool {
    name: String,
    sessions: Vec<Session>,
    exposure: Exposure,
}

impl Registry {
    /// Returns the registry compiled into this crate, parsed once.
    pub fn builtin() -> Result<&'static Registry, Error> {
        static BUILTIN_REGISTRY: OnceLock<Result<Registry, String>> = OnceLock::new();
        let loaded = BUILTIN_REGISTRY.get_or_init(|| {
            Registry::load_with(
                &mut |name: &str| {
                    BUILTIN
                        .iter()
                        .find(|(file, _)| *file == name)
                        .map(|(_, text)| (*text).to_owned())
                        .ok_or_else(|| LoadError::Missing {
                            file: format!("{name} (built in)"),
                        })
                },
                &|name| format!("{name} (built in)"),
            )
            .map_err(|err| err.to_string())
        });
        loaded.as_ref().map_err(|message| {
            Error::internal(format!("the built-in tool registry is broken: {message}"))
        })
    }

    /// Loads `registry.json` and the schema of every tool it lists from `dir`.
    ///
    /// A `.json` file in `dir` that the registry does not list is an error too: it is a schema
    /// nobody would register or document.
    pub fn load_dir(dir: &Path) -> Result<Registry, LoadError> {
        let display = |name: &str| dir.join(name).display().to_string();
        let registry = Registry::load_with(
            &mut |name: &str| {
                let path = dir.join(name);
                let bytes = herd_core::sidecar::read_given(&path, MAX_FILE_BYTES)
                    .map_err(|source| LoadError::Read {
                        file: display(name),
                        source,
                    })?
                    .ok_or_else(|| LoadError::Missing {
                        file: display(name),
                    })?;
                String::from_utf8(bytes).map_err(|_| LoadError::Invalid {
                    file: display(name),
                    message: "is not UTF-8".to_owned(),
                })
            },
            &display,
        )?;
        let entries = std::fs::read_dir(dir).map_err(|err| LoadError::Read {
            file: dir.display().to_string(),
            source: herd_core::sidecar::Error::io(dir, err),
        })?;
        let mut unlisted: Vec<PathBuf> = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|err| LoadError::Read {
                file: dir.display().to_string(),
                source: herd_core::sidecar::Error::io(dir, err),
            })?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let listed = name == REGISTRY_FILE
                || registry
                    .tools
                    .iter()
                    .any(|tool| schema_file(&tool.name) == name);
            if name.ends_with(".json") && !listed {
                unlisted.push(entry.path());
            }
        }
        unlisted.sort();
        match unlisted.first() {
            Some(path) => Err(LoadError::Unlisted {
                file: path.display().to_string(),
            }),
            None => Ok(registry),
        }
    }

    fn load_with(
        read: &mut dyn FnMut(&str) -> Result<String, LoadError>,
        display: &dyn Fn(&str) -> String,
    ) -> Result<Registry, LoadError> {
        let text = read(REGISTRY_FILE)?;
        let raw: RawRegistry =
            serde_json::from_str(&text).map_err(|source| LoadError::Registry {
                file: display(REGISTRY_FILE),
                source,
            })?;
        let invalid = |message: String| LoadError::Invalid {
            file: display(REGISTRY_FILE),
            message,
        };
        if raw.format_version != REGISTRY_FORMAT_VERSION {
            return Err(invalid(format!(
                "format_version {} is not the supported {REGISTRY_FORMAT_VERSION}",
                raw.format_version
            )));
        }
        if raw.group.trim().is_empty() {
            return Err(invalid("`group` is empty".to_owned()));
        }

        let mut tools: Vec<Tool> = Vec::new();
        for entry in raw.tools {
            let is_identifier = !entry.name.is_empty()
                && entry
                    .name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
            if !is_identifier {
                return Err(invalid(format!(
                    "tool name `{}` is not a lowercase identifier",
                    entry.name
                )));
            }
            if tools.iter().any(|tool| tool.name == entry.name) {
                return Err(invalid(format!("tool `{}` is listed twice", entry.name)));
            }
            check_sessions(&entry.sessions, &format!("tool `{}`", entry.name)).map_err(invalid)?;

            let file = schema_file(&entry.name);
            let text = read(&file)?;
            let mut parameters = schema::parse(&text).map_err(|source| LoadError::Schema {
                file: display(&file),
                source,
            })?;
            let schema_invalid = |message: &str| LoadError::Invalid {
                file: display(&file),
                message: message.to_owned(),
            };
            if parameters.types != [JsonType::Object] {
                return Err(schema_invalid(
                    "the parameters must be `\"type\": \"object\"`",
                ));
            }
            let description = parameters
                .description
                .take()
                .filter(|text| !text.trim().is_empty())
                .ok_or_else(|| {
                    schema_invalid("the root `description` (the tool's description) is missing")
                })?;
            tools.push(Tool {
                name: entry.name,
                sessions: entry.sessions,
                exposure: entry.exposure,
                description,
                parameters,
            });
        }

        let mut commands: Vec<Command> = Vec::new();
        for command in raw.commands {
            check_command(&command, &commands).map_err(invalid)?;
            commands.push(command);
        }

        Ok(Registry {
            format_version: raw.format_version,
            group: raw.group,
            tools,
            commands,
        })
    }

    /// Returns the tool called `name`.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|tool| tool.name == name)
    }

    /// Returns the tool called `name`, or `invalid_request` when there is none.
    pub fn require_tool(&self, name: &str) -> Result<&Tool, Error> {
        self.tool(name).ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidRequest,
                format!("there is no tool called {name:?}"),
            )
        })
    }

    /// Checks `request` against the parameters of tool `name`.
    pub fn validate(&self, name: &str, request: &Value) -> Result<(), Error> {
        self.require_tool(name)?.validate(request)
    }

    /// Validates `request` for tool `name`, fills the schema's defaults, and parses it as `T`.
    pub fn parse<T: ToolRequest>(&self, name: &str, request: &Value) -> Result<T, Error> {
        if !T::TOOLS.contains(&name) {
            return Err(Error::internal(format!(
                "{} does not hold the parameters of {name}",
                std::any::type_name::<T>()
            )));
        }
        let tool = self.require_tool(name)?;
        tool.validate(request)?;
        let mut filled = request.clone();
        validate::apply_defaults(&tool.parameters, &mut filled);
        let parsed: T = serde_json::from_value(filled).map_err(|err| {
            // The schema accepted the request, so a failure here is a schema and type drift.
            Error::internal(format!(
                "{name} request passed its schema but not its type: {err}"
            ))
        })?;
        parsed.check()?;
        Ok(parsed)
    }

    /// Writes the registry as JSON, properties in schema order; a host registers exactly this.
    pub fn to_json_pretty(&self) -> Result<String, Error> {
        serde_json::to_string_pretty(self)
            .map_err(|err| Error::internal(format!("cannot serialize the tool registry: {err}")))
    }
}

/// Checks one command of the registry against its rules and the commands before it; the
/// problem in a sentence when it breaks one.
fn check_command(command: &Command, earlier: &[Command]) -> Result<(), String> {
    let what = format!("command `{}`", command.name);
    let valid_name = command.name.len() > 1
        && command.name.starts_with('/')
        && !command.name.contains(char::is_whitespace);
    if !valid_name {
        return Err(format!("{what} must be a slash and a word"));
    }
    if earlier.iter().any(|other| other.name == command.name) {
        return Err(format!("{what} is listed twice"));
    }
    check_sessions(&command.sessions, &what)?;
    if command.description.trim().is_empty() {
        return Err(format!("{what} has no description"));
    }
    if command.usage.is_empty() {
        return Err(format!("{what} has no usage"));
    }
    for usage in &command.usage {
        let starts =
            usage.text == command.name || usage.text.starts_with(&format!("{} ", command.name));
        if !starts {
            return Err(format!(
                "{what}: usage `{}` does not start with the command",
                usage.text
            ));
        }
        if let Some(sessions) = &usage.sessions {
            check_sessions(sessions, &what)?;
            if !sessions.iter().all(|s| command.sessions.contains(s)) {
                return Err(format!(
                    "{what}: usage `{}` names a session the command is not registered in",
                    usage.text
                ));
            }
        }
    }
    Ok(())
}

fn check_sessions(sessions: &[Session], what: &str) -> Result<(), String> {
    if sessions.is_empty() {
        return Err(format!("{what} is registered in no session"));
    }
    for (idx, session) in sessions.iter().enumerate() {
        if sessions[..idx].contains(session) {
            return Err(format!("{what} lists session `{session}` twice"));
        }
    }
    Ok(())
}

impl fmt::Display for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Returns the schema file of tool `name`.
pub fn schema_file(name: &str) -> String {
    format!("{name}.json")
}

/// Checks `request` against the built-in schema of tool `name`.
///
/// An unknown field, a wrong type or a value out of range is `invalid_request` whose `field` is
/// the path of the value (`accept.timeoutSec`, `worktree.branch`, `accept.paths[1]`); a request
/// that is not an object is `invalid_request` without a field.
pub fn validate(tool: &str, request: &Value) -> Result<(), Error> {
    Registry::builtin()?.validate(tool, request)
}

/// Validates `request` against the built-in schema of `tool`, fills the schema's defaults, parses
/// it as `T`, and runs `T`'s checks across fields.
pub fn parse<T: ToolRequest>(tool: &str, request: &Value) -> Result<T, Error> {
    Registry::builtin()?.parse(tool, request)
}

/// Like [`parse`], from JSON text; text that is not JSON is `invalid_request`.
pub fn parse_slice<T: ToolRequest>(tool: &str, bytes: &[u8]) -> Result<T, Error> {
    let value: Value = serde_json::from_slice(bytes).map_err(|err| {
        Error::new(
            ErrorCode::InvalidRequest,
            format!("the request is not valid JSON: {err}"),
        )
    })?;
    parse(tool, &value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas")
    }

    #[test]
    fn builtin_equals_the_schema_directory() {
        let builtin = Registry::builtin().unwrap();
        let from_dir = Registry::load_dir(&schema_dir()).unwrap();
        assert_eq!(*builtin, from_dir);
        let mut on_disk: Vec<String> = std::fs::read_dir(schema_dir())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> =
            BUILTIN.iter().map(|(name, _)| (*name).to_owned()).collect();
        embedded.sort();
        assert_eq!(
            embedded, on_disk,
            "BUILTIN must embed every file of schemas/"
        );
    }

    #[test]
    fn registers_the_seed_tools_in_their_sessions() {
        let registry = Registry::builtin().unwrap();
        let names = |session: Session| -> Vec<&str> {
            let mut names: Vec<&str> = registry
                .tools
                .iter()
                .filter(|tool| tool.registered_in(session))
                .map(|tool| tool.name.as_str())
                .collect();
            names.sort_unstable();
            names
        };
        assert_eq!(
            names(Session::Parent),
            [
                "subagent",
                "subagent_cancel",
                "subagent_interrupt",
                "subagent_resume",
                "subagent_send",
                "subagent_stop",
                "subagents_list",
                "subagents_write_task_models",
                "worktree_list",
                "worktree_remove"
            ]
        );
        assert_eq!(
            names(Session::Child),
            [
                "caller_ping",
                "subagent",
                "subagent_cancel",
                "subagent_done",
                "subagent_interrupt",
                "subagent_resume",
                "subagent_send",
                "subagent_stop",
                "subagents_list"
            ]
        );
        let commands: Vec<&str> = registry.commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(commands, ["/subagent", "/subagents-init", "/worktree"]);
    }

    #[test]
    fn thinking_levels_are_the_schema_enum() {
        let registry = Registry::builtin().unwrap();
        let thinking = registry
            .tool("subagent")
            .unwrap()
            .parameters
            .property("thinking")
            .unwrap();
        let listed: Vec<&str> = thinking
            .enum_values
            .as_ref()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let typed: Vec<&str> = Thinking::ALL.iter().map(|t| t.as_str()).collect();
        assert_eq!(listed, typed);
        for level in Thinking::ALL {
            assert_eq!(serde_json::to_value(level).unwrap(), level.as_str());
        }
    }

    #[test]
    fn every_tool_has_a_request_type() {
        fn holder(tool: &str) -> bool {
            [
                SubagentRequest::TOOLS,
                TargetRequest::TOOLS,
                ResumeRequest::TOOLS,
                SendRequest::TOOLS,
                CallerPingRequest::TOOLS,
                WorktreeRemoveRequest::TOOLS,
                EmptyRequest::TOOLS,
                WriteTaskModelsRequest::TOOLS,
            ]
            .iter()
            .any(|tools| tools.contains(&tool))
        }
        for tool in &Registry::builtin().unwrap().tools {
            assert!(holder(&tool.name), "no request type holds {}", tool.name);
        }
    }

    #[test]
    fn parse_refuses_a_type_for_another_tool() {
        let err = parse::<CallerPingRequest>("subagent_done", &serde_json::json!({})).unwrap_err();
        assert_eq!(err.code, ErrorCode::Internal);
    }
}
