//! A child's hard budget: a child whose usage reaches its `budget` is stopped the way a cancel
//! stops it, its process gone, and its result says what it spent of what, its last report kept;
//! a child's own spawn asking for more than its parent run has left is refused before anything
//! is launched.

use herd_e2e::herd::{Herd, Where, read_json};
use herd_e2e::model::{ModelServer, Models, Said, Script, Text, ToolCall, Usage};
use herd_e2e::pi::PiEnv;
use herd_e2e::proc::process_alive;
use herd_e2e::session;
use herd_protocol::result::{CancelError, Outcome};
use serde_json::json;

/// The spender's script: more steps than its budget allows, each a report so far and a tool
/// call that takes a moment.
fn spender() -> Script {
    let mut script = Script::new().step(Said(
        "SPENDER: first findings",
        ToolCall::bash("sleep 0.25"),
    ));
    for _ in 0..40 {
        script = script.step(Said("SPENDER: still working", ToolCall::bash("sleep 0.25")));
    }
    script.step(Text("SPENDER: never reached"))
}

fn models() -> Models {
    Models::new()
        .model("spender", spender())
        // A dollar per thousand input tokens, so that the cost is a few dollars.
        .priced(
            "spender",
            json!({"input": 1000.0, "output": 1000.0, "cacheRead": 0.0, "cacheWrite": 0.0}),
        )
        .reporting(
            "spender",
            Usage {
                prompt: 1_000,
                completion: 20,
                cached: 0,
            },
        )
}

#[test]
fn on_process_a_child_at_its_hard_budget_is_stopped_and_says_what_it_spent() {
    let model = ModelServer::start_models(models());
    let env = PiEnv::new(&model);
    let Some(herd) = Herd::try_new(
        &env,
        Where::Process,
        "on_process_a_child_at_its_hard_budget_is_stopped_and_says_what_it_spent",
    ) else {
        return;
    };
    let run = herd
        .launch(&json!({
            "name": "Spender", "task": "Keep working", "model": Herd::model("spender"),
            "budget": {"tokens": 3_000, "usd": 3.0},
        }))
        .run_id;
    assert_eq!(
        herd.run_record(&run).extra.budget.and_then(|b| b.tokens),
        Some(3_000)
    );
    let pid = herd.child_pid(&run);
    let (code, result) = herd.wait_result(&run);
    assert_ne!(code, 0, "{result:#?}");
    assert_eq!(result.outcome, Outcome::Failed, "{result:#?}");
    assert_eq!(result.details.error, Some(CancelError::BudgetSpent));
    let stop = result.details.budget.clone().expect("details.budget");
    let spent = stop.spent.tokens.unwrap();
    // Stopped at its budget, long before its script's end: each step is 1,020 tokens.
    assert!((3_000..3_000 + 3 * 1_020).contains(&spent), "{stop:#?}");
    let session = herd.run_record(&run).session_file;
    let messages = session::messages(session.as_ref());
    let assistant = messages.iter().filter(|m| m["role"] == "assistant").count();
    assert!(assistant < 10, "{assistant} assistant messages");
    // What herd counted is what Pi recorded, up to when it stopped.
    let recorded: u64 = messages
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| m["usage"]["totalTokens"].as_u64().unwrap())
        .sum();
    assert!(spent <= recorded, "{spent} of {recorded}");
    let line = stop.budget.host_line(&stop.spent, true);
    assert!(
        line.starts_with("Budget: spent 3.") && line.contains(" of 3 k tokens ($"),
        "{line}"
    );
    assert!(line.ends_with(" of $3.00); stopped"), "{line}");
    let message = &result.message;
    assert!(
        message.lines().any(|l| l == line),
        "{line:?} in:\n{message}"
    );
    assert!(message.contains("was stopped at its budget"), "{message}");
    // Its last report is kept.
    assert!(
        message.contains("<subagent_report from=\"Spender\" kind=\"failure\">\nSPENDER: "),
        "{message}"
    );
    assert!(!message.contains("never reached"), "{message}");
    // Its process is gone: the runner, and the launch script that held it.
    assert!(!process_alive(pid), "the child {pid} outlived its stop");
    herd.wait_for_child_gone(&run);
    let stopped = read_json(&herd.artifacts().join(format!("runs/{run}.budget.json"))).unwrap();
    assert_eq!(stopped["spent"]["tokens"].as_u64(), Some(spent));
}
