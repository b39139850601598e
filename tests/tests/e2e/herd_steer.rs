//! Steering a real Pi child that exits at its settlement (seed 004, `steer`): a follow-up
//! queued during its turn reaches it at the turn's end and it works on; one it can no longer
//! take is reported as not delivered, never left `queued` in the terminal run.

use std::time::Duration;

use herd_e2e::herd::{Herd, Where};
use herd_e2e::model::{ModelServer, Script, Text, ToolCall};
use herd_e2e::pi::PiEnv;
use herd_e2e::wait::try_wait_for;
use herd_protocol::intents::SteerReceipt;
use herd_protocol::result::Outcome;
use herd_protocol::watch::{DeliveryStatus, SteerState, WatchSteer};
use serde_json::json;

const BUDGET: Duration = Duration::from_secs(60);

/// The first turn's tool waits for this file in the child's working directory, so the
/// follow-up is queued while the turn is certainly still running.
const GO: &str = "go";

/// An auto-exit child whose first turn runs a tool that waits for [`GO`], then reports.
fn launch_waiting_child<'e>(env: &'e PiEnv, model: &ModelServer) -> (Herd<'e>, String) {
    let herd = Herd::new(env, Where::Tmux);
    let ack = herd.launch(&json!({
        "name": "Quick",
        "task": "Wait for the go, then report",
        "model": Herd::model("fake-model"),
    }));
    assert!(ack.auto_exit, "{ack:?}");
    if try_wait_for(BUDGET, || (!model.requests().is_empty()).then_some(())).is_none() {
        let pane = herd.run_record(&ack.run_id).pane.expect("a pane").pane_id;
        panic!(
            "no request; the pane shows:\n{}",
            herd.tmux().expect("a tmux server").capture(&pane)
        );
    }
    (herd, ack.run_id)
}

/// `herd-watch steer --mode follow_up` (seed 004's spelling), answered `queued`.
fn follow_up(herd: &Herd, run: &str, message: &str) -> WatchSteer {
    let out = herd.run(
        "herd-watch",
        [
            "steer",
            "--run",
            run,
            "--message",
            message,
            "--mode",
            "follow_up",
            "--json",
        ],
    );
    let queued: WatchSteer = out.doc();
    assert_eq!(
        (queued.state, queued.delivery_status),
        (SteerState::Queued, Some(DeliveryStatus::Queued)),
        "{out}"
    );
    queued
}

/// Issue 39: "`details.steering` still says `queued` in a terminal run" — it never does.
fn none_queued(steering: &[SteerReceipt]) {
    assert!(
        steering.iter().all(|r| r.state != SteerState::Queued),
        "a terminal run keeps no receipt `queued`: {steering:#?}"
    );
}

/// Seed 004: "`follow_up` waits for the next turn boundary." A follow-up queued for an
/// auto-exit child during its turn is that boundary's: the child does not exit at the turn's
/// end, the watcher types the message, the child works one more turn on it, and the run
/// completes after that turn with the message `delivered`.
#[test]
fn on_tmux_a_follow_up_queued_before_an_auto_exit_childs_settlement_reaches_it_and_it_works_on() {
    let model = ModelServer::start(
        Script::new()
            .step(ToolCall::bash(format!(
                "while [ ! -e {GO} ]; do sleep 0.1; done"
            )))
            .step(Text("REPORT: waited"))
            .step(Text("REPORT: the lexer is checked too")),
    );
    let env = PiEnv::new(&model);
    let (herd, run) = launch_waiting_child(&env, &model);
    let queued = follow_up(&herd, &run, "and check the lexer");
    // The child is told what waits for its turn boundary, beside its session.
    let session = herd.run_record(&run).session_file;
    let marker = std::path::PathBuf::from(format!("{session}.steering-queued.json"));
    let listed = std::fs::read_to_string(&marker).expect("the steering queued for the child");
    assert!(listed.contains(&queued.request_id), "{listed}");
    std::fs::write(env.work_dir().join(GO), "").unwrap();

    let (code, result) = herd.wait_result(&run);
    assert_eq!(code, 0, "{result:#?}");
    assert_eq!(result.outcome, Outcome::Completed, "{result:#?}");
    let requests = model.requests();
    assert_eq!(requests.len(), 3, "one more turn, on the follow-up");
    assert!(
        requests[2].to_string().contains("and check the lexer"),
        "the model was asked with the follow-up"
    );
    assert!(
        result.message.contains("REPORT: the lexer is checked too"),
        "the result is the last turn's: {}",
        result.message
    );
    let steering = result
        .details
        .steering
        .clone()
        .expect("the steering ledger");
    none_queued(&steering);
    let receipt = steering
        .iter()
        .find(|r| r.request_id == queued.request_id)
        .expect("the follow-up's receipt");
    assert_eq!(receipt.state, SteerState::Delivered, "{steering:#?}");
    assert!(receipt.delivered_at_ms.is_some(), "{receipt:?}");
    assert_eq!(result.details.undelivered_steering, None, "{result:#?}");
    assert!(
        !result.message.contains("not delivered"),
        "{}",
        result.message
    );
    assert!(!marker.exists(), "nothing is left queued for the child");
}

/// Seed 004: "Terminal details report queued messages that the run did not deliver." A
/// follow-up queued for a child that ends before its turn boundary (cancelled during its
/// turn) is reported to the parent as not delivered, its receipt `failed` with why — never
/// kept `queued` in the terminal run.
#[test]
fn on_tmux_a_follow_up_a_child_ended_before_taking_is_failed_not_kept_queued() {
    let model = ModelServer::start(
        Script::new()
            .step(ToolCall::bash(format!(
                "while [ ! -e {GO} ]; do sleep 0.1; done"
            )))
            .step(Text("REPORT: waited")),
    );
    let env = PiEnv::new(&model);
    let (herd, run) = launch_waiting_child(&env, &model);
    let queued = follow_up(&herd, &run, "and check the lexer");
    let out = herd.run("herd-watch", ["cancel", "--run", &run, "--json"]);
    assert!(out.success(), "cancel:\n{out}");

    let (_, result) = herd.wait_result(&run);
    assert_eq!(result.outcome, Outcome::Cancelled, "{result:#?}");
    assert_eq!(
        model.requests().len(),
        1,
        "the follow-up never reached the model"
    );
    let steering = result
        .details
        .steering
        .clone()
        .expect("the steering ledger");
    none_queued(&steering);
    let receipt = steering
        .iter()
        .find(|r| r.request_id == queued.request_id)
        .expect("the follow-up's receipt");
    assert_eq!(receipt.state, SteerState::Failed, "{steering:#?}");
    assert!(
        receipt
            .error
            .as_deref()
            .is_some_and(|e| e.starts_with("not delivered")),
        "{steering:#?}"
    );
    assert_eq!(
        result.details.undelivered_steering.as_deref(),
        Some(&["and check the lexer".to_owned()][..])
    );
    assert!(
        result
            .message
            .contains("Steering: 1 queued message was not delivered"),
        "{}",
        result.message
    );
}
