//! Children that launch children (docs/lifecycle.md): an auto-exit child that launched a child of
//! its own stays open until that child has delivered, takes its result as a turn, and only then
//! ends.

#![expect(
    clippy::unwrap_used,
    reason = "scenario steps shared by the tmux and process tests fail loudly on a broken fixture"
)]

use std::time::Duration;

use herd_e2e::herd::{Herd, Where, decode, read_json, results_of};
use herd_e2e::model::{ModelServer, Models, Script, Text, ToolCall, request};
use herd_e2e::pi::PiEnv;
use herd_e2e::proc::process_alive;
use herd_e2e::wait::wait_for;
use herd_protocol::launch::LaunchAck;
use herd_protocol::run::LaunchStatus;
use serde_json::json;

fn a_child_is_held_open_until_its_own_child_delivers(place: Where) {
    let env_root = tempfile::Builder::new()
        .prefix("herd-e2e-nested-")
        .tempdir()
        .unwrap();
    let helper_request = env_root.path().join("helper.json");
    std::fs::write(
        &helper_request,
        json!({"name": "Helper", "task": "Find the answer", "model": Herd::model("helper")})
            .to_string(),
    )
    .unwrap();
    let launch = format!(
        "\"$HERD_BIN_DIR/herd-launch\" spawn --request {} --surface {} --json > launched.json",
        helper_request.display(),
        place.surface()
    );
    let model = ModelServer::start_models(
        Models::new()
            .model(
                "lead",
                Script::new()
                    .step(ToolCall::bash(launch))
                    .step(Text("LEAD: waiting for the helper"))
                    .step(Text("LEAD REPORT: the helper found 42")),
            )
            .model("helper", Script::new().step(Text("HELPER REPORT: 42"))),
    );
    let env = PiEnv::new(&model);
    let herd = Herd::new(&env, place);
    let lead = herd
        .launch(&json!({
            "name": "Lead",
            "task": "Delegate the question",
            "model": Herd::model("lead"),
        }))
        .run_id;
    let pid = herd.child_pid(&lead);

    let (code, result) = herd.wait_result(&lead);

    assert_eq!(code, 0, "{result:#?}");
    let message = &result.message;
    assert!(
        message.contains("<subagent_report from=\"Lead\" kind=\"result\">\nLEAD REPORT: the helper found 42\n</subagent_report>"),
        "the lead ended after the helper's result, not at its first settlement: {message}"
    );
    // The helper was launched by the lead and recorded as its child.
    let launched: LaunchAck =
        decode(&read_json(&env.work_dir().join("launched.json")).expect("the helper's ack"));
    assert_eq!(launched.status, LaunchStatus::Launched, "{launched:#?}");
    let helper = launched.run_id.as_str();
    assert_eq!(
        herd.run_record(helper).parent_run_id.as_deref(),
        Some(lead.as_str())
    );
    // Its result reached the lead as the user message of a turn of its own.
    let lead_requests = model.requests_for("lead");
    assert_eq!(lead_requests.len(), 3, "a third turn for the delivery");
    let users = request::user_texts(&lead_requests[2]);
    let delivered = users.last().unwrap();
    assert!(
        delivered.contains("<subagent_report from=\"Helper\" kind=\"result\">\nHELPER REPORT: 42\n</subagent_report>"),
        "{delivered}"
    );
    assert_eq!(model.requests_for("helper").len(), 1);
    // The lead delivered it; nobody delivers it again.
    assert!(
        herd.artifacts()
            .join(format!("runs/{helper}.delivered"))
            .exists()
    );
    let events = herd.follow();
    assert!(results_of(&events, helper).is_empty(), "{events:#?}");
    assert!(results_of(&events, &lead).is_empty(), "{events:#?}");
    wait_for("the lead to exit", Duration::from_secs(30), || {
        (!process_alive(pid)).then_some(())
    });
}

#[test]
fn on_process_a_child_is_held_open_until_its_own_child_delivers() {
    a_child_is_held_open_until_its_own_child_delivers(Where::Process);
}

#[test]
fn on_tmux_a_child_is_held_open_until_its_own_child_delivers() {
    a_child_is_held_open_until_its_own_child_delivers(Where::Tmux);
}
