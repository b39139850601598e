//! The child's environment (docs/protocol.md, "The child's environment"): the variables herd-launch hands a child and the
//! child extension reads, as one type.
//!
//! [`ChildEnv::to_vars`] is the only place they are spelled for a launch; [`ChildEnv::VARS`]
//! names every one of them, so a launch can unset what its own environment inherited from a
//! parent that is itself a child.

use std::ffi::OsString;
use std::path::PathBuf;

/// A persistent specialist's ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecialistEnv {
    pub logical_id: String,
    pub generation_id: String,
    pub task_id: String,
}

/// What one child is told by its environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildEnv {
    /// The child's session file (`PI_HERDR_AGENTS_SESSION` and `PI_SUBAGENT_SESSION`).
    pub session: PathBuf,
    /// `PI_DENY_TOOLS`, comma-separated; absent when empty.
    pub denied_tools: Vec<String>,
    /// `PI_SUBAGENT_ID`.
    pub run_id: String,
    /// `PI_SUBAGENT_NAME`.
    pub name: String,
    /// `PI_SUBAGENT_AGENT`: the role it runs as, when it has one.
    pub agent: Option<String>,
    /// `PI_SUBAGENT_AUTO_EXIT`: `1` when it ends as its turn settles.
    pub auto_exit: bool,
    /// `PI_SUBAGENT_PERSISTENT=1` and the specialist's ids.
    pub specialist: Option<SpecialistEnv>,
    /// `PI_SUBAGENT_ACTIVITY_FILE`: where it writes its activity snapshot.
    pub activity_file: PathBuf,
    /// `PI_SUBAGENT_PROCESS_FILE`: where it records its process identity.
    pub process_file: PathBuf,
    /// `PI_SUBAGENT_ACCEPT_FILE`: the accept spec, when the run has a check.
    pub accept_file: Option<PathBuf>,
}

impl ChildEnv {
    /// Every variable of the child protocol, the pane's own (`PI_SUBAGENT_SURFACE`, which the
    /// launch script sets from its pane) included: a launch unsets them all before it sets its
    /// child's.
    pub const VARS: [&'static str; 15] = [
        "PI_HERDR_AGENTS_SESSION",
        "PI_DENY_TOOLS",
        "PI_SUBAGENT_NAME",
        "PI_SUBAGENT_AGENT",
        "PI_SUBAGENT_AUTO_EXIT",
        "PI_SUBAGENT_PERSISTENT",
        "PI_SUBAGENT_LOGICAL_ID",
        "PI_SUBAGENT_GENERATION_ID",
        "PI_SUBAGENT_TASK_ID",
        "PI_SUBAGENT_SESSION",
        "PI_SUBAGENT_ID",
        "PI_SUBAGENT_ACTIVITY_FILE",
        "PI_SUBAGENT_SURFACE",
        "PI_SUBAGENT_PROCESS_FILE",
        "PI_SUBAGENT_ACCEPT_FILE",
    ];

    /// The session's variable: what names a Pi session herd started (a handoff's too).
    pub const SESSION: &'static str = "PI_HERDR_AGENTS_SESSION";

    /// The variables to export, in a stable order.
    pub fn to_vars(&self) -> Vec<(String, OsString)> {
        let mut vars: Vec<(String, OsString)> = Vec::new();
        let mut set = |key: &str, value: OsString| vars.push((key.to_owned(), value));
        set(Self::SESSION, self.session.clone().into_os_string());
        if !self.denied_tools.is_empty() {
            set("PI_DENY_TOOLS", self.denied_tools.join(",").into());
        }
        set("PI_SUBAGENT_ID", self.run_id.clone().into());
        set("PI_SUBAGENT_NAME", self.name.clone().into());
        if let Some(agent) = &self.agent {
            set("PI_SUBAGENT_AGENT", agent.clone().into());
        }
        set(
            "PI_SUBAGENT_AUTO_EXIT",
            if self.auto_exit { "1" } else { "0" }.into(),
        );
        if let Some(ids) = &self.specialist {
            set("PI_SUBAGENT_PERSISTENT", "1".into());
            set("PI_SUBAGENT_LOGICAL_ID", ids.logical_id.clone().into());
            set(
                "PI_SUBAGENT_GENERATION_ID",
                ids.generation_id.clone().into(),
            );
            set("PI_SUBAGENT_TASK_ID", ids.task_id.clone().into());
        }
        set("PI_SUBAGENT_SESSION", self.session.clone().into_os_string());
        set(
            "PI_SUBAGENT_ACTIVITY_FILE",
            self.activity_file.clone().into_os_string(),
        );
        set(
            "PI_SUBAGENT_PROCESS_FILE",
            self.process_file.clone().into_os_string(),
        );
        if let Some(spec) = &self.accept_file {
            set("PI_SUBAGENT_ACCEPT_FILE", spec.clone().into_os_string());
        }
        vars
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variable_set_is_one_a_launch_unsets() {
        let env = ChildEnv {
            session: "/s/a.jsonl".into(),
            denied_tools: vec!["bash".into(), "edit".into()],
            run_id: "ab12cd34".into(),
            name: "Scout".into(),
            agent: Some("scout".into()),
            auto_exit: true,
            specialist: Some(SpecialistEnv {
                logical_id: "l".into(),
                generation_id: "g".into(),
                task_id: "t".into(),
            }),
            activity_file: "/a/activity.json".into(),
            process_file: "/s/a.jsonl.process.json".into(),
            accept_file: Some("/a/accept.json".into()),
        };
        let vars = env.to_vars();
        assert_eq!(
            vars.len(),
            ChildEnv::VARS.len() - 1,
            "all but the pane's own"
        );
        for (key, _) in &vars {
            assert!(ChildEnv::VARS.contains(&key.as_str()), "{key}");
        }
        let get = |key: &str| vars.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        assert_eq!(get("PI_DENY_TOOLS"), Some("bash,edit".into()));
        assert_eq!(get("PI_SUBAGENT_AUTO_EXIT"), Some("1".into()));
        assert_eq!(get(ChildEnv::SESSION), get("PI_SUBAGENT_SESSION"));
        let plain = ChildEnv {
            denied_tools: Vec::new(),
            agent: None,
            specialist: None,
            accept_file: None,
            auto_exit: false,
            ..env
        };
        let keys: Vec<String> = plain.to_vars().into_iter().map(|(k, _)| k).collect();
        assert!(
            !keys
                .iter()
                .any(|k| k == "PI_DENY_TOOLS" || k == "PI_SUBAGENT_PERSISTENT")
        );
    }
}
