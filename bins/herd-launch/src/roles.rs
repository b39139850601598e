//! Role definitions (`agent`) and the durable model configuration the request may refer to.
//!
//! A role is a Markdown file with a front-matter block, `<cwd>/.pi/agents/<name>.md` (the
//! project's) or `<agent dir>/agents/<name>.md` (the user's), the project's first. Its body is the
//! role text; the front matter may set `description`, `model`, `thinking`, `tools`, `skills`,
//! `deny-tools`, `auto-exit`, `interactive`, `session-mode` (`fork`, `standalone`,
//! `lineage-only`), `defaultContext` (`fork` or `fresh`, another name for the same choice)
//! and `spawning`. Other keys belong to role packs and are ignored.
//!
//! The configuration is `<agent dir>/herdr-agents/config.json`: `models.default` (a model for
//! every child), `models.agents.<role>` (per role), `models.tasks.<category>` (the ordered
//! candidates of `task:<category>`), and `guidelines.launchRoster` (`false` drops the launch
//! roster from the `subagent` guidelines).

use std::path::{Path, PathBuf};

use herd_core::{Error, sidecar};

/// How many persistent specialists may be live when the configuration does not say.
pub const DEFAULT_MAX_PERSISTENT: usize = 3;

/// The bound of a role file or the configuration.
pub const READ_LIMIT: u64 = 1024 * 1024;

/// How a role starts its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionMode {
    Fork,
    Standalone,
    LineageOnly,
}

/// A role definition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Role {
    pub name: String,
    pub file: PathBuf,
    pub body: String,
    /// What the role is for, as `subagents_list` shows it.
    pub description: Option<String>,
    pub model: Option<String>,
    pub thinking: Option<String>,
    pub tools: Option<Vec<String>>,
    pub skills: Option<Vec<String>>,
    pub deny_tools: Vec<String>,
    pub auto_exit: Option<bool>,
    pub interactive: Option<bool>,
    pub session_mode: Option<SessionMode>,
    /// `defaultContext` (or `default-context`): whether a launch that says nothing forks.
    pub default_context: Option<DefaultContext>,
    /// `spawning: false` removes the subagent tools from the child.
    pub spawning: Option<bool>,
    /// `acceptance-role: read-only | writer`: how the acceptance gate is inferred
    /// for an ambiguous role; it does not change the role's tools.
    pub acceptance_role: Option<AcceptanceRole>,
    /// `sandbox` and `network`: narrower confinement for this role (never wider).
    pub sandbox: Option<herd_sandbox::Mode>,
    pub network: Option<herd_sandbox::Network>,
}

/// A role's `defaultContext`: the conversation a child starts with when the launch does not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultContext {
    Fork,
    Fresh,
}

impl DefaultContext {
    pub fn as_str(self) -> &'static str {
        match self {
            DefaultContext::Fork => "fork",
            DefaultContext::Fresh => "fresh",
        }
    }
}

impl Role {
    /// Whether a launch of this role that does not say `fork` copies the parent's conversation:
    /// `session-mode: fork`, or without a session-mode, `defaultContext: fork`.
    pub fn forks_by_default(&self) -> bool {
        match self.session_mode {
            Some(mode) => mode == SessionMode::Fork,
            None => self.default_context == Some(DefaultContext::Fork),
        }
    }
}

/// A role's `acceptance-role`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AcceptanceRole {
    ReadOnly,
    Writer,
}

/// The tools a child without spawning rights loses.
pub const SPAWNING_TOOLS: [&str; 6] = [
    "subagent",
    "subagent_resume",
    "subagent_interrupt",
    "subagent_cancel",
    "subagent_send",
    "subagent_stop",
];

/// Finds and reads the role `name`.
pub fn load(name: &str, cwd: &Path, agent_dir: &Path) -> Result<Role, Error> {
    let usable = !name.is_empty()
        && name.len() <= 128
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && !name.starts_with('.');
    if !usable {
        return Err(Error::invalid(
            "agent",
            format!("{name:?} is not a role name (letters, digits, '-', '_', '.')"),
        ));
    }
    let candidates = [cwd.join(".pi").join("agents"), agent_dir.join("agents")];
    for dir in &candidates {
        let file = dir.join(format!("{name}.md"));
        let Some(bytes) = sidecar::read_given(&file, READ_LIMIT)
            .map_err(|e| Error::from(e).with_field("agent"))?
        else {
            continue;
        };
        let text = String::from_utf8(bytes)
            .map_err(|_| Error::invalid("agent", format!("{} is not UTF-8", file.display())))?;
        return parse(name, &file, &text);
    }
    Err(Error::invalid(
        "agent",
        format!(
            "no role named {name:?} in {} or {}",
            candidates[0].display(),
            candidates[1].display()
        ),
    ))
}

/// Parses a role file.
pub fn parse(name: &str, file: &Path, text: &str) -> Result<Role, Error> {
    let bad = |key: &str, why: &str| {
        Error::invalid("agent", format!("{}: `{key}` {why}", file.display()))
    };
    let mut role = Role {
        name: name.to_owned(),
        file: file.to_path_buf(),
        ..Role::default()
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        role.body = text.trim().to_owned();
        return Ok(role);
    };
    let (front, body) = match rest.find("\n---") {
        Some(end) => {
            let after = &rest[end + 4..];
            (&rest[..end], after.split_once('\n').map_or("", |(_, b)| b))
        }
        None => return Err(bad("---", "front matter is not closed")),
    };
    role.body = body.trim().to_owned();
    for line in front.lines() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(bad(line, "is not a `key: value` line"));
        };
        let key = key.trim();
        let value = unquote(value.trim());
        let flag = |v: &str| match v {
            "true" | "yes" => Ok(true),
            "false" | "no" => Ok(false),
            _ => Err(bad(key, "is not true or false")),
        };
        match key {
            "description" => {
                role.description = Some(value.to_owned()).filter(|v| !v.is_empty());
            }
            "defaultContext" | "default-context" => {
                role.default_context = Some(match value {
                    "fork" => DefaultContext::Fork,
                    "fresh" => DefaultContext::Fresh,
                    _ => return Err(bad(key, "is not fork or fresh")),
                });
            }
            "model" => role.model = Some(value.to_owned()).filter(|v| !v.is_empty()),
            "thinking" => role.thinking = Some(value.to_owned()).filter(|v| !v.is_empty()),
            "tools" => role.tools = Some(list(value)),
            "skills" => role.skills = Some(list(value)),
            "deny-tools" => role.deny_tools = list(value),
            "auto-exit" => role.auto_exit = Some(flag(value)?),
            "interactive" => role.interactive = Some(flag(value)?),
            "spawning" => role.spawning = Some(flag(value)?),
            // A role narrows a child's confinement only (`crate::sandbox`).
            "sandbox" => {
                role.sandbox = Some(
                    herd_sandbox::Mode::parse(value)
                        .ok_or_else(|| bad(key, "is not read-only, workspace or off"))?,
                );
            }
            "network" => {
                role.network = Some(
                    herd_sandbox::Network::parse(value)
                        .ok_or_else(|| bad(key, "is not on or off"))?,
                );
            }
            "acceptance-role" | "acceptanceRole" => {
                role.acceptance_role = Some(match value {
                    "read-only" => AcceptanceRole::ReadOnly,
                    "writer" => AcceptanceRole::Writer,
                    _ => return Err(bad(key, "is not read-only or writer")),
                });
            }
            "session-mode" => {
                role.session_mode = Some(match value {
                    "fork" => SessionMode::Fork,
                    "standalone" => SessionMode::Standalone,
                    "lineage-only" => SessionMode::LineageOnly,
                    _ => return Err(bad(key, "is not fork, standalone or lineage-only")),
                });
            }
            _ => {}
        }
    }
    Ok(role)
}

fn unquote(value: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = value.strip_prefix(q).and_then(|v| v.strip_suffix(q)) {
            return inner;
        }
    }
    value
}

/// A comma-separated list (YAML flow lists `[a, b]` too), trimmed, without empty entries.
pub fn list(value: &str) -> Vec<String> {
    let value = value.trim();
    let value = value
        .strip_prefix('[')
        .and_then(|v| v.strip_suffix(']'))
        .unwrap_or(value);
    value
        .split(',')
        .map(|s| unquote(s.trim()).to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The durable model configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    pub file: PathBuf,
    pub default_model: Option<String>,
    pub agent_models: Vec<(String, String)>,
    pub tasks: Vec<(String, Vec<String>)>,
    /// `guidelines.launchRoster`: `false` drops the roster table from the `subagent` guidelines
    /// and keeps the rest of the naming guidance.
    pub launch_roster: bool,
}

impl Config {
    /// Reads `<agent dir>/herdr-agents/config.json`; a missing file is an empty configuration.
    pub fn load(agent_dir: &Path) -> Result<Config, Error> {
        let file = agent_dir.join("herdr-agents").join("config.json");
        let mut config = Config {
            file: file.clone(),
            launch_roster: true,
            ..Config::default()
        };
        let Some(bytes) = sidecar::read_given(&file, READ_LIMIT)
            .map_err(|e| Error::from(e).with_field("model"))?
        else {
            return Ok(config);
        };
        let bad = |what: &str| Error::invalid("model", format!("{}: {what}", file.display()));
        let value: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| bad(&format!("not JSON: {e}")))?;
        if let Some(roster) = value.pointer("/guidelines/launchRoster") {
            config.launch_roster = roster
                .as_bool()
                .ok_or_else(|| bad("guidelines.launchRoster is not true or false"))?;
        }
        let Some(models) = value.get("models") else {
            return Ok(config);
        };
        if let Some(default) = models.get("default") {
            config.default_model = Some(
                default
                    .as_str()
                    .ok_or_else(|| bad("models.default is not a string"))?
                    .to_owned(),
            );
        }
        if let Some(agents) = models.get("agents") {
            let agents = agents
                .as_object()
                .ok_or_else(|| bad("models.agents is not an object"))?;
            for (name, model) in agents {
                let model = model
                    .as_str()
                    .ok_or_else(|| bad(&format!("models.agents.{name} is not a string")))?;
                config.agent_models.push((name.clone(), model.to_owned()));
            }
        }
        if let Some(tasks) = models.get("tasks") {
            let tasks = tasks
                .as_object()
                .ok_or_else(|| bad("models.tasks is not an object"))?;
            for (category, list) in tasks {
                let list = list
                    .as_array()
                    .and_then(|l| {
                        l.iter()
                            .map(|m| m.as_str().map(str::to_owned))
                            .collect::<Option<Vec<_>>>()
                    })
                    .ok_or_else(|| {
                        bad(&format!("models.tasks.{category} is not a list of strings"))
                    })?;
                config.tasks.push((category.clone(), list));
            }
        }
        Ok(config)
    }

    /// `persistent.maxAgents` of the configuration of `agent_dir`: how many persistent
    /// specialists may be live at once (default 3).
    pub fn max_persistent(agent_dir: &Path) -> Result<usize, Error> {
        let file = agent_dir.join("herdr-agents").join("config.json");
        let Some(bytes) = sidecar::read_given(&file, READ_LIMIT)
            .map_err(|e| Error::from(e).with_field("persistent"))?
        else {
            return Ok(DEFAULT_MAX_PERSISTENT);
        };
        let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
            Error::invalid("persistent", format!("{}: not JSON: {e}", file.display()))
        })?;
        match value.pointer("/persistent/maxAgents") {
            None => Ok(DEFAULT_MAX_PERSISTENT),
            Some(v) => v
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| {
                    Error::invalid(
                        "persistent",
                        format!("{}: persistent.maxAgents is not a count", file.display()),
                    )
                }),
        }
    }

    pub fn agent_model(&self, role: &str) -> Option<&str> {
        self.agent_models
            .iter()
            .find(|(n, _)| n == role)
            .map(|(_, m)| m.as_str())
    }

    /// The candidates of `task:<category>`.
    pub fn task_candidates(&self, category: &str) -> Result<&[String], Error> {
        match self.tasks.iter().find(|(c, _)| c == category) {
            Some((_, list)) if !list.is_empty() => Ok(list),
            _ => Err(Error::invalid(
                "model",
                format!(
                    "task:{category} has no candidates in models.tasks of {}",
                    self.file.display()
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_sets_the_defaults_and_the_body_is_the_role() {
        let text = "---\nname: scout\nmodel: \"fake/fast\"\nthinking: low\ntools: read, bash\nskills: [a, b]\n\
                    deny-tools: subagent\nauto-exit: true\nsession-mode: fork\nspawning: false\ncolor: blue\n---\n\
                    You are a scout.\n";
        let role = parse("scout", Path::new("scout.md"), text).unwrap();
        assert_eq!(role.model.as_deref(), Some("fake/fast"));
        assert_eq!(role.tools, Some(vec!["read".to_owned(), "bash".to_owned()]));
        assert_eq!(role.skills, Some(vec!["a".to_owned(), "b".to_owned()]));
        assert_eq!(role.deny_tools, ["subagent"]);
        assert_eq!(role.auto_exit, Some(true));
        assert_eq!(role.session_mode, Some(SessionMode::Fork));
        assert_eq!(role.spawning, Some(false));
        assert_eq!(role.body, "You are a scout.");
        assert_eq!(role.description, None);
        assert!(role.forks_by_default());
    }

    #[test]
    fn default_context_forks_unless_a_session_mode_says_otherwise() {
        let role = |front: &str| {
            parse("r", Path::new("r.md"), &format!("---\n{front}\n---\nbody")).unwrap()
        };
        let fork = role("description: \"Scans the code\"\ndefaultContext: fork");
        assert_eq!(fork.description.as_deref(), Some("Scans the code"));
        assert_eq!(fork.default_context, Some(DefaultContext::Fork));
        assert!(fork.forks_by_default());
        assert!(!role("default-context: fresh").forks_by_default());
        assert!(!role("defaultContext: fork\nsession-mode: standalone").forks_by_default());
        assert!(role("defaultContext: fresh\nsession-mode: fork").forks_by_default());
        let err = parse("r", Path::new("r.md"), "---\ndefaultContext: maybe\n---\n").unwrap_err();
        assert_eq!(err.field.as_deref(), Some("agent"));
    }

    #[test]
    fn bad_front_matter_names_the_role_field() {
        for text in [
            "---\nauto-exit: maybe\n---\n",
            "---\nnot a line\n---\n",
            "---\nmodel: x\n",
        ] {
            let err = parse("r", Path::new("r.md"), text).unwrap_err();
            assert_eq!(err.field.as_deref(), Some("agent"), "{text}");
        }
        let role = parse("r", Path::new("r.md"), "just a body").unwrap();
        assert_eq!(role.body, "just a body");
    }

    #[test]
    fn roles_are_found_project_first_and_names_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let agent_dir = dir.path().join("agent");
        std::fs::create_dir_all(agent_dir.join("agents")).unwrap();
        std::fs::write(agent_dir.join("agents/r.md"), "user role").unwrap();
        assert_eq!(load("r", dir.path(), &agent_dir).unwrap().body, "user role");
        std::fs::create_dir_all(dir.path().join(".pi/agents")).unwrap();
        std::fs::write(dir.path().join(".pi/agents/r.md"), "project role").unwrap();
        assert_eq!(
            load("r", dir.path(), &agent_dir).unwrap().body,
            "project role"
        );
        assert!(load("missing", dir.path(), &agent_dir).is_err());
        assert!(load("../r", dir.path(), &agent_dir).is_err());
    }

    #[test]
    fn config_gives_task_candidates() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Config::load(dir.path()).unwrap().default_model, None);
        std::fs::create_dir_all(dir.path().join("herdr-agents")).unwrap();
        std::fs::write(
            dir.path().join("herdr-agents/config.json"),
            r#"{"models":{"default":"p/d","agents":{"scout":"p/s"},"tasks":{"coding":["p/a","p/b"],"none":[]}}}"#,
        )
        .unwrap();
        let config = Config::load(dir.path()).unwrap();
        assert_eq!(config.default_model.as_deref(), Some("p/d"));
        assert_eq!(config.agent_model("scout"), Some("p/s"));
        assert_eq!(config.task_candidates("coding").unwrap(), ["p/a", "p/b"]);
        assert!(config.task_candidates("none").is_err());
        assert!(config.task_candidates("other").is_err());
        assert!(
            config.launch_roster,
            "the roster is asked for unless turned off"
        );
    }

    #[test]
    fn config_reads_guidelines_launch_roster() {
        let dir = tempfile::tempdir().unwrap();
        assert!(Config::load(dir.path()).unwrap().launch_roster);
        std::fs::create_dir_all(dir.path().join("herdr-agents")).unwrap();
        let file = dir.path().join("herdr-agents/config.json");
        std::fs::write(&file, r#"{"guidelines":{"launchRoster":false}}"#).unwrap();
        assert!(!Config::load(dir.path()).unwrap().launch_roster);
        std::fs::write(&file, r#"{"guidelines":{"launchRoster":"no"}}"#).unwrap();
        let err = Config::load(dir.path()).unwrap_err();
        assert!(err.message.contains("guidelines.launchRoster"), "{err}");
    }
}
