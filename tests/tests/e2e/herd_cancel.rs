//! A cancel while the child's model turn is in flight: one cancelled result, and the child is
//! gone.

#![expect(
    clippy::unwrap_used,
    reason = "scenario steps shared by the tmux and process tests fail loudly on a broken fixture"
)]

use std::time::Duration;

use herd_e2e::herd::{Herd, Where, json_doc, read_json, results_of};
use herd_e2e::model::{ModelServer, Script, Stall, ToolCall};
use herd_e2e::pi::PiEnv;
use herd_e2e::proc::process_alive;
use herd_e2e::wait::wait_for;
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
    let ack = herd.spawn(&json!({
        "name": "Slowpoke",
        "task": "Think for a long time",
        "model": Herd::model("fake-model"),
    }));
    let run = ack["run_id"].as_str().unwrap();
    let pid = herd.child_pid(run);
    // The second request is the stalled turn: the model is busy answering it.
    model.wait_for_requests(2, Duration::from_secs(60));
    wait_for(
        "the child's activity to show an active turn",
        Duration::from_secs(30),
        || {
            let activity = read_json(
                &herd
                    .artifacts()
                    .join(format!("subagent-activity/{run}.json")),
            )?;
            (activity["phase"] == "active").then_some(())
        },
    );
    assert!(process_alive(pid));

    let out = herd.run("herd-watch", ["cancel", "--run", run, "--json"]);
    let cancel = json_doc(&out);
    assert!(out.success(), "herd-watch cancel:\n{out}");
    assert_eq!(cancel["status"], "confirmed", "{cancel:#}");
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
    let results = results_of(&events, run);
    assert_eq!(results.len(), 1, "{events:#?}");
    let result = results[0];
    assert_eq!(result["outcome"], "cancelled", "{result:#}");
    assert_eq!(result["details"]["error"], "cancelled");
    assert!(
        result["details"]["cancellation"]["requestedAt"].is_u64(),
        "{result:#}"
    );
    let message = result["message"].as_str().unwrap();
    assert!(message.contains("was cancelled"), "{message}");
    assert!(!message.contains("provider"), "{message}");
    assert!(
        !message.contains("<subagent_report"),
        "a cancelled run has no report: {message}"
    );
    // Asked again, the answers stay the same: one result, delivered once.
    let (code, again) = herd.wait(run);
    assert_eq!((code, &again["message"]), (5, &result["message"]));
    assert!(results_of(&herd.follow(), run).is_empty());
    let out = herd.run("herd-watch", ["cancel", "--run", run, "--json"]);
    assert_eq!(json_doc(&out)["status"], "already-terminal", "{out}");
    assert_eq!(model.requests().len(), 2, "nothing asked the model again");
    if let Some(herdr) = herd.herdr() {
        let pane = ack["pane_id"].as_str().unwrap();
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
        let pane = ack["pane_id"].as_str().unwrap();
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
