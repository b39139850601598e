//! Closing a reusable Pi Herd worker (docs/pi-herd.md, `close`): a real Pi parent with the
//! scripted model, the worker a persistent specialist on a private tmux server.

use herd_e2e::model::{ModelServer, Models, Script, Text};
use herd_e2e::pi::PiEnv;
use herd_e2e::rpc::{PiRpc, STEP_BUDGET};
use herd_e2e::tmux::Tmux;
use herd_e2e::wait::wait_for;
use serde_json::json;

use crate::pi_herd::{
    FACE, answers, artifacts_of, call, envelope, result_entries, role, wait_answer,
};

/// Seed 000: "An accepted assignment has one correlated final result." Closing a reusable
/// worker whose assignment's result was delivered ends its specialist, and that end is the
/// close's (its answer says how the run ended), not a second final result of the assignment:
/// nothing more reaches the owner, and no result says `completed` for a close.
#[test]
fn pi_herd_closing_a_reusable_worker_delivers_no_second_final_result() {
    let model = ModelServer::start_models(
        Models::new()
            .model(
                "parent",
                Script::new()
                    .step(call(json!({
                        "action": "assign", "agent": "keeper", "task": "First task", "reusable": true,
                    })))
                    .step(Text("Assigned."))
                    .step(Text("First done."))
                    .step(call(json!({"action": "close", "label": "keeper"})))
                    .step(Text("Closed.")),
            )
            .model("keeper", Script::new().step(Text("FIRST: done"))),
    );
    let env = PiEnv::new(&model);
    role(&env, "keeper", "keeper");
    let tmux = Tmux::start(env.vars());
    let socket = tmux.socket_path();
    let session = env.session_path("parent");
    let mut parent = PiRpc::start_with(
        &env,
        &session,
        "parent",
        &[
            (FACE.0, FACE.1.as_ref()),
            ("HERD_TMUX_SOCKET", socket.as_os_str()),
        ],
        &["--herd-surface", "tmux"],
    );
    parent.prompt("Keep a worker.");
    wait_answer(&session, "First done.");
    let first = &answers(&model, 1)[0];
    let run = first["run_id"].as_str().unwrap().to_owned();
    parent.prompt("Close it.");
    wait_answer(&session, "Closed.");
    let closed = &answers(&model, 4)[0];
    assert_eq!(closed["ok"], true, "{closed:#}");
    assert_eq!(closed["ended"][0]["run_id"], run.as_str(), "{closed:#}");

    // The specialist's own end is settled (acknowledged) without a message of its own.
    let delivered = artifacts_of(&session).join(format!("runs/{run}.delivered"));
    wait_for("the worker's end to be settled", STEP_BUDGET, || {
        delivered.exists().then_some(())
    });
    let entries = result_entries(&session);
    assert_eq!(entries.len(), 1, "one final result: {entries:#?}");
    let content = entries[0]["content"].as_str().unwrap();
    let request_id = first["request_id"].as_str().unwrap();
    assert!(
        content.starts_with(&envelope("keeper", "keeper", request_id, "completed")),
        "{content}"
    );
    assert_eq!(
        model.requests_for("parent").len(),
        5,
        "no turn after the close"
    );
    assert!(parent.close().success());
}
