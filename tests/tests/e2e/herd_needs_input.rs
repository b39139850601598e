//! A real Pi child waiting for a person: one that asks for help (`caller_ping`), and an
//! interactive one whose run settled (Pi 1.6's `agent_settled`, written by herd's child
//! extension into `<session>.needs-input.json`). `herd-watch status` says `waiting for input`
//! and `follow --json` has one `needs_input` event per transition; the state ends when the child
//! moves on.

use std::cell::Cell;
use std::time::Duration;

use herd_e2e::herd::{Herd, Where, json_doc};
use herd_e2e::model::{ModelServer, Said, Script, Text, ToolCall};
use herd_e2e::pi::PiEnv;

use serde_json::{Value, json};

fn status_row(herd: &Herd<'_>, run: &str) -> Value {
    let out = herd.run("herd-watch", ["status", "--run", run, "--json"]);
    json_doc(&out)["runs"][0].clone()
}

fn needs_input(events: &[Value], run: &str) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e["event"] == "needs_input" && e["run_id"] == run)
        .cloned()
        .collect()
}

#[test]
fn on_tmux_a_pi_child_that_asks_for_help_waits_for_input_until_it_is_resumed() {
    let question = "Which schema should the migration use?";
    let model = ModelServer::start(
        Script::new()
            .step(ToolCall::new("caller_ping", json!({ "message": question })))
            .step(Text("REPORT: migrated with schema v2")),
    );
    let env = PiEnv::new(&model);
    let herd = Herd::new(&env, Where::Tmux);
    let ack = herd.spawn(&json!({
        "name": "Migrator",
        "task": "Write the migration",
        "model": Herd::model("fake-model"),
    }));
    let run = ack["run_id"].as_str().unwrap().to_owned();
    let session_file = ack["session_file"].as_str().unwrap().to_owned();
    let events = herd.follow();
    let help = needs_input(&events, &run);
    assert_eq!(help.len(), 1, "{events:#?}");
    assert_eq!(help[0]["reason"], "help_request");
    let row = status_row(&herd, &run);
    assert_eq!(
        (&row["label"], &row["needs_input"]["reason"]),
        (&json!("waiting for input"), &json!("help_request")),
        "{row}"
    );
    let human = herd.run("herd-watch", ["status", "--run", &run]).stdout;
    assert!(
        human.contains("waiting for input · since ") && human.contains("help request"),
        "{human}"
    );

    // The answer: the session is resumed, and the run that asked no longer waits.
    let out = herd.run(
        "herd-launch",
        [
            "resume",
            "--session",
            &session_file,
            "--message",
            "Use schema v2.",
            "--surface",
            "tmux",
            "--json",
        ],
    );
    assert!(out.success(), "resume:\n{out}");
    let row = status_row(&herd, &run);
    assert_eq!(row["label"], "completed", "{row}");
    assert!(row.get("needs_input").is_none(), "{row}");
}

#[test]
fn on_tmux_an_interactive_pi_child_whose_run_settled_waits_for_its_person() {
    let model = ModelServer::start(
        Script::new()
            .step(Text("Ready: tell me what to look at."))
            .step(Said(
                "REPORT: looked",
                ToolCall::new("subagent_done", json!({})),
            ))
            .step(Text("never asked: subagent_done ends the session")),
    );
    let env = PiEnv::new(&model);
    // A role that does not exit by itself: its child stays open for its person after a turn.
    let dir = env.agent_dir().join("agents");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("planner.md"), "You plan with your person.\n").unwrap();
    let herd = Herd::new(&env, Where::Tmux);
    let ack = herd.spawn(&json!({
        "name": "Planner",
        "agent": "planner",
        "task": "Plan with me",
        "model": Herd::model("fake-model"),
        "interactive": true,
    }));
    let run = ack["run_id"].as_str().unwrap().to_owned();
    let steered = Cell::new(false);
    let seen_waiting = Cell::new(false);
    let events = herd.follow_until("the child's result", Duration::from_secs(90), || {
        if !steered.get() {
            let row = status_row(&herd, &run);
            if row["label"] == "waiting for input" {
                assert_eq!(row["needs_input"]["reason"], "turn_settled", "{row}");
                seen_waiting.set(true);
                // Its person answers in its pane: the child moves on.
                let out = herd.run(
                    "herd-watch",
                    [
                        "steer",
                        "--run",
                        &run,
                        "--message",
                        "Look at src/.",
                        "--json",
                    ],
                );
                assert!(out.success(), "steer:\n{out}");
                steered.set(true);
            }
        }
        herd.artifacts()
            .join("runs")
            .join(format!("{run}.delivered"))
            .exists()
    });
    assert!(seen_waiting.get(), "{events:#?}");
    let waits = needs_input(&events, &run);
    assert_eq!(waits.len(), 1, "{events:#?}");
    assert_eq!(waits[0]["reason"], "turn_settled");
    // A status line after the steer left the state before the result came.
    let labels: Vec<&str> = events
        .iter()
        .filter(|e| e["event"] == "status" && e["run_id"] == run.as_str())
        .filter_map(|e| e["label"].as_str())
        .collect();
    let at = labels
        .iter()
        .position(|l| *l == "waiting for input")
        .unwrap();
    assert!(
        labels[at + 1..].iter().any(|l| *l != "waiting for input"),
        "{labels:?}"
    );
    assert_eq!(status_row(&herd, &run)["label"], "completed");
}
