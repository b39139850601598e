//! The `subagent` guidelines a real parent Pi shows its model once `tool_search` loads the tool,
//! as the configuration shapes them.

use herd_e2e::model::{ModelServer, Models, Script, Text, ToolCall, request};
use herd_e2e::pi::PiEnv;
use herd_e2e::rpc::{PiRpc, STEP_BUDGET};
use herd_e2e::session;
use serde_json::json;

/// The naming guidance of the `subagent` guidelines (docs/tools.md, "Tool loading").
const NAMING: &str = "Before launching a new group, choose a short task slug and label each new child \
    `<task>-<role>[-n]`, such as `login-api` or `login-test2`. Roles are `plan`, `research`, `ui`, \
    `api`, `build`, `test`, `review`, `browser`, `security`, `perf`, and `merge`. Leave existing \
    labels unchanged.";

/// Seed: "Set `guidelines.launchRoster` to `false` to drop the table instruction while keeping
/// the rest of this naming guidance."
#[test]
fn guidelines_launch_roster_false_drops_the_table_instruction_and_keeps_the_naming_guidance() {
    let model = ModelServer::start_models(
        Models::new().model(
            "parent",
            Script::new()
                .step(Text("Nothing to delegate yet."))
                .step(ToolCall::new("tool_search", json!({"query": "subagent"})))
                .step(Text("Loaded.")),
        ),
    );
    let env = PiEnv::new(&model);
    let dir = env.agent_dir().join("herdr-agents");
    std::fs::create_dir_all(&dir).expect("the configuration's directory");
    std::fs::write(
        dir.join("config.json"),
        json!({"guidelines": {"launchRoster": false}}).to_string(),
    )
    .expect("the configuration");
    let session = env.session_path("parent");
    let mut parent = PiRpc::start_with(
        &env,
        &session,
        "parent",
        &[],
        &["--herd-surface", "process"],
    );
    parent.prompt("Hello.");
    session::wait_for_answer(&session, "Nothing to delegate yet.", STEP_BUDGET);
    parent.prompt("Load the subagent tools.");
    session::wait_for_answer(&session, "Loaded.", STEP_BUDGET);

    let requests = model.requests_for("parent");
    let loaded = requests.last().expect("the parent's requests");
    assert!(request::tool_names(loaded).contains(&"subagent".to_owned()));
    let text = loaded.to_string();
    // The catalog came (so the configuration was read), the naming guidance stays, the roster
    // table instruction is gone.
    assert!(text.contains("Model catalog for `subagent`"), "{loaded:#}");
    assert_eq!(text.matches(NAMING).count(), 1, "{text}");
    assert!(!text.contains("| name | agent kind |"), "{text}");
    assert!(parent.close().success());
}
