//! A bound never turns one run's files into a stop for the others: a child whose session names
//! twelve thousand models gets a result within the bound every reader applies (its usage
//! names ten models and sums the rest), and the result of a second child of the same parent
//! session is delivered by the same `herd-watch follow`.

use herd_e2e::herd::{Herd, Where, results};
use herd_e2e::model::{ModelServer, Models, Script, Text, ToolCall};
use herd_e2e::pi::PiEnv;
use herd_protocol::result::Outcome;
use herd_protocol::usage::UsageReport;
use herd_protocol::watch::StatusRuns;
use serde_json::json;

/// The number of models the flooding child's session names: its own and the ones it appends.
const MODELS: u64 = 12_000;

#[test]
fn a_child_whose_session_names_thousands_of_models_stops_no_other_child_s_result() {
    // The child appends a usage entry of another model to its own session, 11,999 times, as a
    // child's Pi records cache warming: every one a model of its own.
    let flood = format!(
        "for i in $(seq 1 {}); do printf '{{\"type\":\"usage\",\"kind\":\"cache-warm\",\"provider\":\"fake\",\"model\":\"m%d\",\"usage\":{{\"input\":1,\"output\":1,\"totalTokens\":2,\"cost\":{{\"total\":0.001}}}}}}\\n' \"$i\"; done >> \"$PI_HERDR_AGENTS_SESSION\"",
        MODELS - 1
    );
    let model = ModelServer::start_models(
        Models::new()
            .model(
                "flood",
                Script::new()
                    .step(ToolCall::bash(flood))
                    .step(Text("FLOOD REPORT: done")),
            )
            .model("plain", Script::new().step(Text("PLAIN REPORT: ok"))),
    );
    let env = PiEnv::new(&model);
    let herd = Herd::new(&env, Where::Process);
    let flood = herd
        .launch(&json!({"name": "Flood", "task": "Flood", "model": Herd::model("flood")}))
        .run_id;
    let plain = herd
        .launch(&json!({"name": "Plain", "task": "Answer", "model": Herd::model("plain")}))
        .run_id;

    // One follow supervises both to their ends and delivers both results.
    let events = herd.follow();
    let delivered = results(&events, &plain);
    assert_eq!(delivered.len(), 1, "{events:#?}");
    assert_eq!(
        delivered[0].outcome,
        Outcome::Completed,
        "{:#?}",
        delivered[0]
    );
    assert!(delivered[0].message.contains("PLAIN REPORT: ok"));
    let delivered = results(&events, &flood);
    assert_eq!(delivered.len(), 1, "{events:#?}");
    let result = &delivered[0];
    assert_eq!(result.outcome, Outcome::Completed, "{result:#?}");

    // Its result is within the bound, its usage names ten models and sums the rest.
    let file = herd
        .artifacts()
        .join("runs")
        .join(format!("{flood}.result.json"));
    let size = std::fs::metadata(&file).unwrap().len();
    assert!(size < herd_protocol::result::READ_LIMIT, "{size} bytes");
    let usage = result.details.usage.as_ref().expect("details.usage");
    assert_eq!(usage.tally.models.len(), 10, "{:#?}", usage.tally.models);
    assert_eq!(usage.tally.models[0].model, "fake/flood");
    let more = usage.tally.more_models.expect("the models past ten");
    assert_eq!(more.count, MODELS - 10);
    assert_eq!(more.figures.input, Some(MODELS - 10));
    assert!(
        result.message.contains(", … and 11,990 more models)"),
        "{}",
        result.message
    );

    // The directory's readers read it too.
    let out = herd.run("herd-watch", ["status", "--json"]);
    assert!(out.success(), "{out}");
    let status: StatusRuns = out.doc();
    assert_eq!(status.runs.len(), 2, "{status:#?}");
    let out = herd.run("herd-watch", ["usage", "--json"]);
    assert!(out.success(), "{out}");
    let report: UsageReport = out.doc();
    assert_eq!(report.by_model.len(), 10, "{report:#?}");
    let cursor = herd
        .artifacts()
        .join("runs")
        .join(format!("{flood}.usage.json"));
    assert!(std::fs::metadata(&cursor).unwrap().len() < 4 * 1024 * 1024);
}
