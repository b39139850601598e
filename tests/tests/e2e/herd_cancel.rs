//! A cancel while the child's model turn is in flight: one cancelled result, and the child is
//! gone.

#![expect(
    clippy::unwrap_used,
    reason = "scenario steps shared by the tmux and process tests fail loudly on a broken fixture"
)]

use std::time::Duration;

use herd_e2e::herd::{Herd, Where, read_doc, results};
use herd_e2e::model::{ModelServer, Script, Stall, ToolCall};
use herd_e2e::pi::PiEnv;
use herd_e2e::proc::process_alive;
use herd_e2e::wait::wait_for;
use herd_protocol::child::{Activity, Phase};
use herd_protocol::result::{CancelError, Outcome};
use herd_protocol::watch::{CancelStatus, WatchCancel};
use serde_json::json;

fn a_cancel_during_a_turn_gives_one_cancelled_result(place: Where, test: &str) {
    let model = ModelServer::start(
        Script::new()
            .step(ToolCall::bash("echo started > started.txt"))
            // Longer than any budget of the scenario: only the cancel ends this turn.
            .step(Stall(Duration::from_secs(300))),
    );
    let env = PiEnv::new(&model);
    let Some(herd) = Herd::try_new(&env, place, test) else {
        return;
    };
    let ack = herd.launch(&json!({
        "name": "Slowpoke",
        "task": "Think for a long time",
        "model": Herd::model("fake-model"),
    }));
    let run = ack.run_id.as_str();
    let pid = herd.child_pid(run);
    // The second request is the stalled turn: the model is busy answering it.
    model.wait_for_requests(2, Duration::from_secs(60));
    wait_for(
        "the child's activity to show an active turn",
        Duration::from_secs(30),
        || {
            let activity: Activity = read_doc(
                &herd
                    .artifacts()
                    .join(format!("subagent-activity/{run}.json")),
            )?;
            (activity.phase == Phase::Active).then_some(())
        },
    );
    assert!(process_alive(pid));

    let out = herd.run("herd-watch", ["cancel", "--run", run, "--json"]);
    assert!(out.success(), "herd-watch cancel:\n{out}");
    let cancel: WatchCancel = out.doc();
    assert_eq!(cancel.status, CancelStatus::Confirmed, "{cancel:#?}");
    match place {
        // The identity was signalled and seen gone.
        Where::Process => assert!(!process_alive(pid), "a confirmed cancel leaves no child"),
        // The pane was closed and seen gone (an ordinary pane's cancel is confirmed by its
        // absence); closing it hung up Pi, which exits on SIGHUP a moment later.
        Where::Tmux | Where::Herdr => {
            wait_for("Pi to exit on the hang-up", Duration::from_secs(30), || {
                (!process_alive(pid)).then_some(())
            })
        }
    }

    let events = herd.follow();
    let results = results(&events, run);
    assert_eq!(results.len(), 1, "{events:#?}");
    let result = &results[0];
    assert_eq!(result.outcome, Outcome::Cancelled, "{result:#?}");
    assert_eq!(result.details.error, Some(CancelError::Cancelled));
    assert!(result.details.cancellation.is_some(), "{result:#?}");
    let message = &result.message;
    assert!(message.contains("was cancelled"), "{message}");
    assert!(!message.contains("provider"), "{message}");
    assert!(
        !message.contains("<subagent_report"),
        "a cancelled run has no report: {message}"
    );
    // Asked again, the answers stay the same: one result, delivered once.
    let (code, again) = herd.wait_result(run);
    assert_eq!((code, &again.message), (5, &result.message));
    assert!(herd_e2e::herd::results(&herd.follow(), run).is_empty());
    let out = herd.run("herd-watch", ["cancel", "--run", run, "--json"]);
    assert_eq!(
        out.doc::<WatchCancel>().status,
        CancelStatus::AlreadyTerminal,
        "{out}"
    );
    assert_eq!(model.requests().len(), 2, "nothing asked the model again");
    if let Some(herdr) = herd.herdr() {
        let pane = ack.pane_id.as_deref().unwrap();
        assert!(
            !herdr.pane_exists(pane),
            "the child's pane {pane} is closed"
        );
        assert!(
            herdr.pane_exists(herd.parent_pane().unwrap()),
            "the parent's pane stays"
        );
    }
    if let Some(tmux) = herd.tmux() {
        let pane = ack.pane_id.as_deref().unwrap();
        // A server left without sessions answers "no current target": it has no panes.
        let panes = tmux
            .try_cmd(["list-panes", "-a", "-F", "#{pane_id}"])
            .stdout;
        assert!(
            !panes.lines().any(|p| p == pane),
            "the child's pane {pane} is closed: {panes}"
        );
    }
}

#[test]
fn on_process_a_cancel_during_a_turn_gives_one_cancelled_result() {
    a_cancel_during_a_turn_gives_one_cancelled_result(Where::Process, "");
}

#[test]
fn on_tmux_a_cancel_during_a_turn_gives_one_cancelled_result() {
    a_cancel_during_a_turn_gives_one_cancelled_result(Where::Tmux, "");
}

#[test]
fn on_herdr_a_cancel_during_a_turn_gives_one_cancelled_result() {
    a_cancel_during_a_turn_gives_one_cancelled_result(
        Where::Herdr,
        "on_herdr_a_cancel_during_a_turn_gives_one_cancelled_result",
    );
}
