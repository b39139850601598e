//! `fork: true` from a real parent Pi: the child starts with the parent's conversation.

use herd_e2e::model::{Models, Script, Text, request};
use herd_e2e::pi::PiEnv;
use herd_e2e::rpc::{PiRpc, STEP_BUDGET};
use herd_e2e::session;
use serde_json::json;

/// Seed: "`true` copies this conversation into the child". A one-turn parent's conversation is
/// the message that asked for the delegation: the child sees it (and whatever the person said
/// in it), then its task; it does not see the parent's in-flight turn (the `subagent` call).
#[test]
fn fork_true_copies_the_parents_current_user_message_into_the_child() {
    let asked = "Delegate this: the release codename is HERON-42, keep it in mind.";
    let model = herd_e2e::model::ModelServer::start_models(
        Models::new()
            .model(
                "parent",
                Script::delegating(json!({
                    "name": "Scout",
                    "task": "Report the codename",
                    "fork": true,
                    "model": PiEnv::model_arg("child"),
                })),
            )
            .model("child", Script::new().step(Text("REPORT: HERON-42"))),
    );
    let env = PiEnv::new(&model);
    let session = env.session_path("parent");
    let mut parent = PiRpc::start_with(
        &env,
        &session,
        "parent",
        &[],
        &["--herd-surface", "process"],
    );
    parent.prompt(asked);
    session::wait_for_answer(&session, "Integrated the report.", STEP_BUDGET);

    let child = model.requests_for("child");
    assert_eq!(child.len(), 1, "{child:#?}");
    let users = request::user_texts(&child[0]);
    assert!(
        users.first().is_some_and(|t| t.contains("HERON-42")),
        "the parent's message comes first: {users:?}"
    );
    assert!(
        users
            .last()
            .is_some_and(|t| t.contains("Report the codename")),
        "then the task: {users:?}"
    );
    // Not the parent's turn in flight: its tool calls stay the parent's.
    assert_eq!(request::assistant_count(&child[0]), 0, "{:#}", child[0]);
    assert!(parent.close().success());
}
