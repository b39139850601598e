//! A provider error on the first model of a request's list: herd-watch launches the next model
//! (`herd-launch spawn --fallback-of`), one result answers for both attempts, and the outcome
//! ledger keeps a line for each.

#![expect(
    clippy::unwrap_used,
    reason = "scenario steps shared by the tmux and process tests fail loudly on a broken fixture"
)]

use herd_e2e::herd::{Herd, Where, results_of};
use herd_e2e::model::{Fail, ModelServer, Models, Script, Text, ToolCall};
use herd_e2e::pi::PiEnv;
use serde_json::{Value, json};

fn a_provider_error_falls_back_to_the_next_model(place: Where) {
    let model = ModelServer::start_models(
        Models::new()
            .model("down", Script::new().step(Fail(500, "scripted outage")))
            .model(
                "up",
                Script::new()
                    .step(ToolCall::bash("echo recovered > up.txt"))
                    .step(Text("REPORT: answered by the second model")),
            ),
    );
    let env = PiEnv::new(&model);
    let herd = Herd::new(&env, place);
    let ack = herd.spawn(&json!({
        "name": "Resilient",
        "task": "Answer the question",
        "model": format!("{},{}", Herd::model("down"), Herd::model("up")),
    }));
    let first = ack["run_id"].as_str().unwrap().to_owned();
    assert_eq!(ack["model"], "fake/down", "{ack}");
    assert_eq!(ack["fallback_models"], json!(["fake/up"]), "{ack}");

    let events = herd.follow();

    // One result, from the successor, for the whole logical run.
    let results: Vec<_> = events.iter().filter(|e| e["event"] == "result").collect();
    assert_eq!(results.len(), 1, "{events:#?}");
    let result = results[0];
    let second = result["run_id"].as_str().unwrap().to_owned();
    assert_ne!(second, first, "the next model runs as a run of its own");
    assert!(results_of(&events, &first).is_empty());
    assert_eq!(result["outcome"], "completed");
    let message = result["message"].as_str().unwrap();
    assert!(
        message.contains(
            "<subagent_report from=\"Resilient\" kind=\"result\">\nREPORT: answered by the second model\n</subagent_report>"
        ),
        "{message}"
    );
    assert!(
        message.contains("Models attempted: fake/down, fake/up"),
        "{message}"
    );
    assert!(message.contains("Model used: fake/up"), "{message}");
    assert!(
        events.iter().any(|e| e["event"] == "notice"
            && e["run_id"] == first.as_str()
            && e["message"].as_str().unwrap_or_default().contains(&second)),
        "a notice names the successor: {events:#?}"
    );

    // herd-watch launched the successor through herd-launch, on the same surface.
    let record = herd.record(&second);
    assert_eq!(record["model"], "fake/up", "{record}");
    assert_eq!(record["attempted_models"], json!(["fake/down"]), "{record}");
    assert_eq!(record["surface"], place.surface(), "{record}");
    assert_eq!(herd.run_ids().len(), 2);
    // The fallback records: the first attempt gave way to the second, which knows what it
    // replaced.
    let runs = herd.artifacts().join("runs");
    let read = |name: String| -> Value {
        serde_json::from_slice(&std::fs::read(runs.join(&name)).unwrap()).unwrap()
    };
    let superseded = read(format!("{first}.superseded.json"));
    assert_eq!(superseded["successor"], second.as_str(), "{superseded}");
    assert!(
        superseded["error"]
            .as_str()
            .is_some_and(|e| e.contains("scripted outage")),
        "{superseded}"
    );
    let predecessor = read(format!("{second}.predecessor.json"));
    assert_eq!(predecessor["run_id"], first.as_str(), "{predecessor}");
    assert_eq!(predecessor["models"], json!(["fake/down"]), "{predecessor}");
    assert_eq!(model.requests_for("down").len(), 1, "retries are off");
    assert_eq!(model.requests_for("up").len(), 2);
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("up.txt")).unwrap(),
        "recovered\n"
    );

    // The ledger shows both attempts, in order.
    let ledger = herd.ledger();
    assert_eq!(ledger.len(), 2, "{ledger:#?}");
    assert_eq!(ledger[0]["runId"], first.as_str());
    assert_eq!(ledger[0]["model"], "fake/down");
    assert_eq!(ledger[0]["attempt"], 1);
    assert_eq!(ledger[0]["outcome"], "provider-error");
    assert_eq!(ledger[1]["runId"], second.as_str());
    assert_eq!(ledger[1]["model"], "fake/up");
    assert_eq!(ledger[1]["attempt"], 2);
    assert_eq!(ledger[1]["outcome"], "completed");
    for line in &ledger {
        assert_eq!(
            line["candidates"],
            json!(["fake/down", "fake/up"]),
            "{line}"
        );
    }

    // Waiting on the first run answers with its successor's result.
    let (code, doc) = herd.wait(&first);
    assert_eq!((code, &doc["run_id"]), (0, &result["run_id"]), "{doc:#}");
    assert_eq!(
        herd.ledger().len(),
        2,
        "the ledger is written once per attempt"
    );
}

#[test]
fn on_process_a_provider_error_falls_back_to_the_next_model() {
    a_provider_error_falls_back_to_the_next_model(Where::Process);
}

#[test]
fn on_tmux_a_provider_error_falls_back_to_the_next_model() {
    a_provider_error_falls_back_to_the_next_model(Where::Tmux);
}

/// Pi 1.6 words a provider's HTTP error as `<status>: <JSON body>`; the parent's `Error:` line
/// reads as Pi 0.73 wrote it, and the raw text stays in the details.
#[test]
fn a_provider_error_with_no_model_left_reaches_the_parent_readable() {
    let model = ModelServer::start(Script::new().step(Fail(500, "scripted outage")));
    let env = PiEnv::new(&model);
    let herd = Herd::new(&env, Where::Process);
    let ack = herd.spawn(&json!({
        "name": "Unlucky",
        "task": "Answer the question",
        "model": Herd::model("fake-model"),
    }));
    let (code, result) = herd.wait(ack["run_id"].as_str().unwrap());
    assert_eq!(code, 1, "{result:#}");
    assert_eq!(result["outcome"], "failed", "{result:#}");
    let message = result["message"].as_str().unwrap();
    assert!(message.contains("provider/agent error"), "{message}");
    assert!(
        message.lines().any(|l| l == "Error: 500 scripted outage"),
        "{message}"
    );
    let raw = result["details"]["errorMessage"].as_str().unwrap();
    assert!(
        raw.starts_with("500: {") && raw.contains(r#""message":"scripted outage""#),
        "the raw error stays in the details: {raw}"
    );
}
