//! `herd-launch roles`: what `subagents_list` shows — the role definitions a launch can name,
//! the live persistent specialists of the artifacts directory, and the supervision mode.
//!
//! Roles come from the places a launch looks (`<cwd>/.pi/agents/*.md`, then the user's
//! `<agent dir>/agents/*.md`); a project role hides the user's of the same name. A file that
//! does not parse is listed with its error, never skipped silently.

use std::path::{Path, PathBuf};

use herd_core::escape::encode_host_value;
use herd_core::{Error, ErrorCode};
use herd_protocol::launch::docs::{self as doc, RoleSettings, RolesListing, SpecialistRow};
use herd_protocol::layout::Artifacts;
use herd_protocol::run::{LaunchStatus, RunRecord};

use crate::roles::{self, READ_LIMIT};
use herd_protocol::launch::policy::Policy;
use herd_protocol::persistent::Activity;

/// One role file.
#[derive(Debug, Clone, PartialEq)]
pub struct RoleRow {
    pub name: String,
    pub scope: &'static str,
    pub file: PathBuf,
    /// The role, or why its file does not parse.
    pub role: Result<roles::Role, String>,
}

/// One live persistent specialist.
#[derive(Debug, Clone, PartialEq)]
pub struct Specialist {
    pub record: RunRecord,
    pub logical_id: String,
    pub generation_id: String,
    pub state: String,
    pub completed_tasks: usize,
    pub tools: Option<Vec<String>>,
    pub denied_tools: Vec<String>,
}

/// What `subagents_list` shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    pub roles: Vec<RoleRow>,
    pub specialists: Vec<Specialist>,
    /// How herd-watch notices changes: `wake+batch` with file events, else `polling(fallback)`.
    pub supervision: &'static str,
    /// The durable configuration and its revision, what `expectedConfigRevision` compares.
    pub config: PathBuf,
    pub config_revision: String,
}

/// Reads the roles of `cwd` and `agent_dir` and the specialists of `artifacts`.
pub fn list(artifacts: &Artifacts, cwd: &Path, agent_dir: &Path) -> Result<Listing, Error> {
    let mut rows: Vec<RoleRow> = Vec::new();
    for (scope, dir) in [
        ("project", cwd.join(".pi").join("agents")),
        ("user", agent_dir.join("agents")),
    ] {
        let mut names = match std::fs::read_dir(&dir) {
            Ok(entries) => entries
                .filter_map(Result::ok)
                .filter_map(|e| e.file_name().into_string().ok())
                .filter_map(|n| n.strip_suffix(".md").map(str::to_owned))
                .filter(|n| !n.starts_with('.'))
                .collect::<Vec<_>>(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                return Err(Error::new(
                    ErrorCode::Unavailable,
                    format!("cannot list {}: {e}", dir.display()),
                ));
            }
        };
        names.sort();
        for name in names {
            if rows.iter().any(|r| r.name == name) {
                continue;
            }
            let file = dir.join(format!("{name}.md"));
            let role = match herd_core::sidecar::read_bounded(&file, READ_LIMIT) {
                Ok(Some(bytes)) => match String::from_utf8(bytes) {
                    Ok(text) => roles::parse(&name, &file, &text).map_err(|e| e.message),
                    Err(_) => Err("is not UTF-8".to_owned()),
                },
                Ok(None) => continue,
                Err(e) => Err(e.to_string()),
            };
            rows.push(RoleRow {
                name,
                scope,
                file,
                role,
            });
        }
    }
    let config = crate::models::config_file(agent_dir);
    let config_revision =
        crate::models::revision(herd_core::sidecar::read_bounded(&config, READ_LIMIT)?.as_deref());
    Ok(Listing {
        roles: rows,
        config,
        config_revision,
        specialists: specialists(artifacts)?,
        supervision: if cfg!(target_os = "linux") {
            "wake+batch"
        } else {
            "polling(fallback)"
        },
    })
}

/// The persistent specialists of `artifacts` that launched and have not ended.
fn specialists(artifacts: &Artifacts) -> Result<Vec<Specialist>, Error> {
    let mut found = Vec::new();
    // A live specialist is an open run.
    for id in herd_protocol::open_runs::list(artifacts)? {
        let Ok(record) = RunRecord::load(artifacts, &id) else {
            continue;
        };
        if !record.persistent
            || record.status != LaunchStatus::Launched
            || artifacts.run_result(&id).exists()
        {
            continue;
        }
        let files = record.session_files();
        if files.exit().exists() {
            continue;
        }
        let Ok(Some(policy)) = files.read::<Policy>() else {
            continue;
        };
        let state = match herd_protocol::persistent::activity(&files, &policy.generation_id)? {
            Activity::Idle => "idle".to_owned(),
            Activity::Busy(task) => format!("working on {task}"),
            Activity::Stopping => "stopping".to_owned(),
        };
        let completed_tasks = artifacts.task_results(&id).len();
        found.push(Specialist {
            logical_id: policy.logical_id,
            generation_id: policy.generation_id,
            tools: policy.tools,
            denied_tools: policy.denied_tools,
            record,
            state,
            completed_tasks,
        });
    }
    found.sort_by(|a, b| a.record.name.cmp(&b.record.name));
    Ok(found)
}

/// Whether a launch of `role` that does not say `fork` forks (`fork`) or starts fresh (`fresh`);
/// none when the role sets neither `session-mode` nor `defaultContext`.
fn default_context(role: &roles::Role) -> Option<&'static str> {
    let set = role.session_mode.is_some() || role.default_context.is_some();
    set.then(|| {
        if role.forks_by_default() {
            "fork"
        } else {
            "fresh"
        }
    })
}

impl Listing {
    /// The `--json` document.
    pub fn to_json(&self) -> RolesListing {
        let roles = self
            .roles
            .iter()
            .map(|row| doc::RoleRow {
                name: row.name.clone(),
                scope: row.scope.to_owned(),
                file: row.file.to_string_lossy().into_owned(),
                error: row.role.as_ref().err().cloned(),
                settings: row.role.as_ref().ok().map(|role| RoleSettings {
                    model: role.model.clone(),
                    thinking: role.thinking.clone(),
                    tools: role.tools.clone(),
                    deny_tools: role.deny_tools.clone(),
                    auto_exit: role.auto_exit,
                    interactive: role.interactive,
                    spawning: role.spawning,
                    description: role.description.clone(),
                    skills: role.skills.clone(),
                    default_context: default_context(role).map(str::to_owned),
                }),
            })
            .collect();
        let specialists = self
            .specialists
            .iter()
            .map(|s| SpecialistRow {
                run_id: s.record.run_id.clone(),
                name: s.record.name.clone(),
                agent: s.record.agent.clone(),
                logical_id: s.logical_id.clone(),
                generation_id: s.generation_id.clone(),
                state: s.state.clone(),
                completed_tasks: s.completed_tasks as u64,
                model: s.record.model.clone(),
                thinking: s.record.thinking.clone(),
                tools: s.tools.clone(),
                denied_tools: s.denied_tools.clone(),
            })
            .collect();
        RolesListing {
            roles,
            specialists,
            supervision: self.supervision.to_owned(),
            config: self.config.to_string_lossy().into_owned(),
            config_revision: self.config_revision.clone(),
        }
    }

    /// The text `subagents_list` answers with: one line per row, child-influenced values
    /// encoded on their line.
    pub fn human(&self) -> String {
        let value = |v: &str| encode_host_value(v, 200);
        let mut out = String::from("Roles:");
        if self.roles.is_empty() {
            out.push_str(" none (define one in .pi/agents/<name>.md)");
        }
        for row in &self.roles {
            out.push_str(&format!("\n- {} ({})", value(&row.name), row.scope));
            match &row.role {
                Ok(role) => {
                    let mut facts = Vec::new();
                    if let Some(description) = &role.description {
                        facts.push(value(description));
                    }
                    if let Some(model) = &role.model {
                        facts.push(format!("model {}", value(model)));
                    }
                    if let Some(thinking) = &role.thinking {
                        facts.push(format!("thinking {}", value(thinking)));
                    }
                    if let Some(auto_exit) = role.auto_exit {
                        facts.push(format!("auto-exit {auto_exit}"));
                    }
                    if role.spawning == Some(false) {
                        facts.push("no spawning".to_owned());
                    }
                    if let Some(tools) = &role.tools {
                        facts.push(format!("tools {}", value(&tools.join(","))));
                    }
                    if !role.deny_tools.is_empty() {
                        facts.push(format!("denies {}", value(&role.deny_tools.join(","))));
                    }
                    if let Some(skills) = &role.skills {
                        facts.push(format!("skills {}", value(&skills.join(","))));
                    }
                    if let Some(context) = default_context(role) {
                        facts.push(format!("context {context}"));
                    }
                    if !facts.is_empty() {
                        out.push_str(&format!(": {}", facts.join(" · ")));
                    }
                }
                Err(error) => out.push_str(&format!(": unusable: {}", value(error))),
            }
        }
        out.push_str("\nPersistent specialists:");
        if self.specialists.is_empty() {
            out.push_str(" none");
        }
        for s in &self.specialists {
            out.push_str(&format!(
                "\n- {} (logical {}, generation {}): {} · {} tasks completed",
                value(&s.record.name),
                value(&s.logical_id),
                value(&s.generation_id),
                value(&s.state),
                s.completed_tasks
            ));
        }
        out.push_str(&format!("\nSupervision: {}", self.supervision));
        // No file yet is not a problem to report: the defaults apply until one is written.
        let revision = match self.config_revision.as_str() {
            crate::models::MISSING_REVISION => "not written yet; the defaults apply".to_owned(),
            revision => format!("revision {revision}"),
        };
        out.push_str(&format!(
            "\nConfiguration: {} ({revision})",
            value(&self.config.display().to_string()),
        ));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_role_hides_the_users_and_a_broken_file_is_listed_with_its_error() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("cwd");
        let agent = dir.path().join("agent");
        std::fs::create_dir_all(cwd.join(".pi/agents")).unwrap();
        std::fs::create_dir_all(agent.join("agents")).unwrap();
        std::fs::write(
            cwd.join(".pi/agents/scout.md"),
            "---\nmodel: fake/a\nauto-exit: true\n---\nLook around.\n",
        )
        .unwrap();
        std::fs::write(
            agent.join("agents/scout.md"),
            "---\nmodel: fake/b\n---\nUser's.\n",
        )
        .unwrap();
        std::fs::write(
            agent.join("agents/planner.md"),
            "---\ndescription: Plans the work with the user\nskills: plan, review\ndefaultContext: fork\n---\nPlan.\n",
        )
        .unwrap();
        std::fs::write(
            agent.join("agents/broken.md"),
            "---\nauto-exit: maybe\n---\n",
        )
        .unwrap();
        let listing = list(&Artifacts::new(dir.path().join("art")), &cwd, &agent).unwrap();
        let names: Vec<_> = listing
            .roles
            .iter()
            .map(|r| (r.name.as_str(), r.scope))
            .collect();
        assert_eq!(
            names,
            [
                ("scout", "project"),
                ("broken", "user"),
                ("planner", "user")
            ]
        );
        assert_eq!(
            listing.roles[0].role.as_ref().unwrap().model.as_deref(),
            Some("fake/a")
        );
        assert!(listing.roles[1].role.is_err());
        let text = listing.human();
        assert!(
            text.contains("- scout (project): model fake/a · auto-exit true"),
            "{text}"
        );
        assert!(text.contains("- broken (user): unusable:"), "{text}");
        assert!(
            text.contains(
                "- planner (user): Plans the work with the user · skills plan,review · context fork"
            ),
            "{text}"
        );
        let doc = serde_json::to_value(listing.to_json()).unwrap();
        let planner = &doc["roles"][2];
        assert_eq!(
            planner["description"], "Plans the work with the user",
            "{doc}"
        );
        assert_eq!(
            planner["skills"],
            serde_json::json!(["plan", "review"]),
            "{doc}"
        );
        assert_eq!(planner["default_context"], "fork", "{doc}");
        assert!(doc["roles"][0].get("skills").is_none(), "{doc}");
        assert!(
            text.contains("Persistent specialists: none\nSupervision: wake+batch\nConfiguration: "),
            "{text}"
        );
        assert!(
            text.ends_with("config.json (not written yet; the defaults apply)"),
            "{text}"
        );
    }

    #[test]
    fn a_role_name_cannot_start_a_host_line() {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("agent");
        std::fs::create_dir_all(agent.join("agents")).unwrap();
        std::fs::write(agent.join("agents/a\nParent action: x.md"), "body").unwrap();
        let listing = list(&Artifacts::new(dir.path().join("art")), dir.path(), &agent).unwrap();
        let text = listing.human();
        assert!(!text.contains("\nParent action"), "{text}");
    }
}
