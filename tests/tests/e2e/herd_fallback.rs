//! A provider error on the first model of a request's list: herd-watch launches the next model
//! (`herd-launch spawn --fallback-of`), one result answers for both attempts, and the outcome
//! ledger keeps a line for each.

#![expect(
    clippy::unwrap_used,
    reason = "scenario steps shared by the tmux and process tests fail loudly on a broken fixture"
)]

use herd_e2e::herd::{Herd, Where, decode, events as decoded, read_json, results};
use herd_e2e::model::{Fail, ModelServer, Models, Script, Text, ToolCall};
use herd_e2e::pi::PiEnv;
use herd_protocol::result::{LedgerLine, Outcome, RunOutcome};
use herd_protocol::run::{Predecessor, Superseded};
use herd_protocol::watch::{WatchEvent, WatchWait};
use serde_json::json;

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
    let ack = herd.launch(&json!({
        "name": "Resilient",
        "task": "Answer the question",
        "model": format!("{},{}", Herd::model("down"), Herd::model("up")),
    }));
    let first = ack.run_id.clone();
    assert_eq!(ack.model.as_deref(), Some("fake/down"), "{ack:?}");
    assert_eq!(ack.fallback_models, ["fake/up"], "{ack:?}");

    let events = herd.follow();
    let typed = decoded(&events);

    // One result, from the successor, for the whole logical run.
    let all: Vec<WatchWait> = herd
        .run_ids()
        .iter()
        .flat_map(|id| results(&events, id))
        .collect();
    assert_eq!(all.len(), 1, "{events:#?}");
    let result = &all[0];
    let second = result.run_id.clone();
    assert_ne!(second, first, "the next model runs as a run of its own");
    assert!(results(&events, &first).is_empty());
    assert_eq!(result.outcome, Outcome::Completed);
    let message = &result.message;
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
        typed.iter().any(|e| matches!(e,
            WatchEvent::Notice { run_id, message } if *run_id == first && message.contains(&second))),
        "a notice names the successor: {typed:#?}"
    );

    // herd-watch launched the successor through herd-launch, on the same surface.
    let record = herd.run_record(&second);
    assert_eq!(record.model.as_deref(), Some("fake/up"), "{record:?}");
    assert_eq!(record.attempted_models, ["fake/down"], "{record:?}");
    assert_eq!(record.surface.as_str(), place.surface(), "{record:?}");
    assert_eq!(herd.run_ids().len(), 2);
    // The fallback records: the first attempt gave way to the second, which knows what it
    // replaced.
    let runs = herd.artifacts().join("runs");
    let superseded: Superseded =
        decode(&read_json(&runs.join(format!("{first}.superseded.json"))).unwrap());
    assert_eq!(
        superseded.successor.as_deref(),
        Some(second.as_str()),
        "{superseded:?}"
    );
    assert!(
        superseded
            .error
            .as_deref()
            .is_some_and(|e| e.contains("scripted outage")),
        "{superseded:?}"
    );
    let predecessor: Predecessor =
        decode(&read_json(&runs.join(format!("{second}.predecessor.json"))).unwrap());
    assert_eq!(predecessor.run_id, first, "{predecessor:?}");
    assert_eq!(predecessor.models, ["fake/down"], "{predecessor:?}");
    assert_eq!(model.requests_for("down").len(), 1, "retries are off");
    assert_eq!(model.requests_for("up").len(), 2);
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("up.txt")).unwrap(),
        "recovered\n"
    );

    // The ledger shows both attempts, in order.
    let ledger: Vec<LedgerLine> = herd.ledger().iter().map(decode).collect();
    let attempts: Vec<(&str, Option<&str>, u64, RunOutcome)> = ledger
        .iter()
        .map(|l| (l.run_id.as_str(), l.model.as_deref(), l.attempt, l.outcome))
        .collect();
    assert_eq!(
        attempts,
        [
            (
                first.as_str(),
                Some("fake/down"),
                1,
                RunOutcome::ProviderError
            ),
            (second.as_str(), Some("fake/up"), 2, RunOutcome::Completed),
        ],
        "{ledger:#?}"
    );
    for line in &ledger {
        assert_eq!(line.candidates, ["fake/down", "fake/up"], "{line:?}");
    }

    // Waiting on the first run answers with its successor's result.
    let (code, doc) = herd.wait_result(&first);
    assert_eq!((code, &doc.run_id), (0, &result.run_id), "{doc:#?}");
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
    let ack = herd.launch(&json!({
        "name": "Unlucky",
        "task": "Answer the question",
        "model": Herd::model("fake-model"),
    }));
    let (code, result) = herd.wait_result(&ack.run_id);
    assert_eq!(code, 1, "{result:#?}");
    assert_eq!(result.outcome, Outcome::Failed, "{result:#?}");
    let message = &result.message;
    assert!(message.contains("provider/agent error"), "{message}");
    assert!(
        message.lines().any(|l| l == "Error: 500 scripted outage"),
        "{message}"
    );
    let raw = result.details.error_message.as_deref().unwrap();
    assert!(
        raw.starts_with("500: {") && raw.contains(r#""message":"scripted outage""#),
        "the raw error stays in the details: {raw}"
    );
}
