//! Pi 1.6's project trust: an interactive child in a folder with `.pi` resources never stops at
//! "Trust project folder?". It inherits its parent's decision (`$HERD_PROJECT_TRUST`, for the
//! folder the parent launches from) and never widens it: the project's own extension loads only
//! for a child of a parent that trusted that folder, which the first request to the model shows.

#![expect(
    clippy::unwrap_used,
    reason = "scenario steps fail loudly on a broken fixture"
)]

use std::path::{Path, PathBuf};

use herd_e2e::herd::{Herd, Where};
use herd_e2e::model::{ModelServer, Said, Script, Text, ToolCall, request};
use herd_e2e::pi::PiEnv;
use herd_protocol::result::Outcome;
use serde_json::json;

/// The tool the project's own extension registers.
const PROJECT_TOOL: &str = "project_probe";

/// Makes `dir` a project with settings and an extension of its own, which Pi 1.6 loads only
/// once the folder is trusted (and asks about, in a terminal, when nothing decides).
fn project(dir: &Path) -> PathBuf {
    let extensions = dir.join(".pi/extensions");
    std::fs::create_dir_all(&extensions).unwrap();
    std::fs::write(dir.join(".pi/settings.json"), "{}\n").unwrap();
    std::fs::write(
        extensions.join("probe.ts"),
        format!(
            r#"import {{ Type }} from "typebox";
export default function (pi: any) {{
	pi.registerTool({{
		name: "{PROJECT_TOOL}",
		label: "Probe",
		description: "A tool of the project's own extension",
		parameters: Type.Object({{}}),
		async execute() {{
			return {{ content: [{{ type: "text", text: "probe" }}], details: {{}} }};
		}},
	}});
}}
"#
        ),
    )
    .unwrap();
    dir.to_path_buf()
}

/// Launches an interactive child (role `worker`, which ends with `subagent_done`) from `from`,
/// with the parent's decision `trust`, into `cwd` when given; returns whether the project's tool
/// was declared to the model.
fn child_sees_the_project_tool(trust: Option<&str>, cwd: Option<&str>) -> bool {
    let model = ModelServer::start(
        Script::new()
            .step(Said(
                "REPORT: started",
                ToolCall::new("subagent_done", json!({})),
            ))
            .step(Text("never asked: subagent_done ends the session")),
    );
    let env = PiEnv::new(&model);
    let agents = env.agent_dir().join("agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(agents.join("worker.md"), "You do what the task says.\n").unwrap();
    let from = project(&env.work_dir().join("project"));
    project(&env.work_dir().join("elsewhere"));

    let mut herd = Herd::new(&env, Where::Tmux);
    if let Some(trust) = trust {
        herd.set_var("HERD_PROJECT_TRUST", trust);
    }
    let mut req = json!({
        "name": "Truster",
        "task": "Start",
        "agent": "worker",
        "model": Herd::model("fake-model"),
    });
    if let Some(cwd) = cwd {
        req["cwd"] = cwd.into();
    }
    let ack = herd.launch_in(&from, &req);
    assert!(ack.interactive, "{ack:?}");
    // A child stopped at the trust prompt never asks the model and never ends: the wait would
    // run out of time.
    let (code, result) = herd.wait_result(&ack.run_id);
    assert_eq!(code, 0, "{result:#?}");
    assert_eq!(result.outcome, Outcome::Completed, "{result:#?}");
    let requests = model.requests();
    assert_eq!(requests.len(), 1, "subagent_done ends the child");
    let tools = request::tool_names(&requests[0]);
    assert!(tools.contains(&"subagent_done".to_owned()), "{tools:?}");
    tools.contains(&PROJECT_TOOL.to_owned())
}

#[test]
fn a_child_whose_parent_did_not_decide_runs_untrusted() {
    assert!(!child_sees_the_project_tool(None, None));
}

#[test]
fn a_child_of_an_untrusting_parent_runs_untrusted() {
    assert!(!child_sees_the_project_tool(Some("untrusted"), None));
}

#[test]
fn a_child_of_a_trusting_parent_runs_trusted() {
    assert!(child_sees_the_project_tool(Some("trusted"), None));
}

#[test]
fn a_trusting_parent_does_not_trust_another_folder_for_its_child() {
    assert!(!child_sees_the_project_tool(
        Some("trusted"),
        Some("../elsewhere")
    ));
}
