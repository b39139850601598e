//! An accept check that the child's first attempt fails: the child extension runs the check
//! after the turn, feeds the failure back, the child fixes it, the check passes, and the
//! parent's re-check accepts with the child's count of tries.

#![expect(
    clippy::unwrap_used,
    reason = "scenario steps shared by the tmux and process tests fail loudly on a broken fixture"
)]

use herd_e2e::herd::{Herd, Where, decode, read_json};
use herd_e2e::model::{ModelServer, Script, Text, ToolCall, request};
use herd_e2e::pi::PiEnv;
use herd_e2e::session;
use herd_protocol::accept::{AcceptTries, ChildReport, Verdict};
use herd_protocol::result::{LedgerLine, Outcome, ParentCheck};
use serde_json::json;

fn a_rejected_check_is_accepted_after_the_childs_retry(place: Where) {
    let model = ModelServer::start(
        Script::new()
            .step(Text("first attempt: nothing written yet"))
            .step(ToolCall::bash("echo fixed > fixed.txt"))
            .step(Text("REPORT: wrote fixed.txt")),
    );
    let env = PiEnv::new(&model);
    let herd = Herd::new(&env, place);
    let ack = herd.launch(&json!({
        "name": "Fixer",
        "task": "Make the check pass",
        "model": Herd::model("fake-model"),
        "accept": {"run": "echo checking; grep -q fixed fixed.txt", "maxRetries": 2, "timeoutSec": 30},
    }));
    let session_file = ack.session_file.clone();

    let (code, result) = herd.wait_result(&ack.run_id);

    assert_eq!(code, 0, "{result:#?}");
    assert_eq!(result.outcome, Outcome::Completed, "{result:#?}");
    let message = &result.message;
    assert_eq!(
        message.lines().nth(1),
        // The re-check ran in the child's own directory, which others may share.
        Some("Check: accepted (2 tries) · shared checkout"),
        "{message}"
    );
    assert!(
        message.contains("<subagent_report from=\"Fixer\" kind=\"result\">\nREPORT: wrote fixed.txt\n</subagent_report>"),
        "{message}"
    );
    let Some(ParentCheck::Ran(accept)) = &result.details.accept else {
        panic!("the parent re-check ran: {result:#?}");
    };
    assert_eq!(
        (
            accept.verdict,
            accept.tries,
            accept.child_reported,
            accept.exit_code
        ),
        (Verdict::Accepted, Some(2), Some(ChildReport::Pass), Some(0)),
        "{accept:#?}"
    );

    // The child ran the check twice and recorded it.
    let tries = read_json(format!("{session_file}.accept-tries.json").as_ref()).unwrap();
    assert_eq!(
        decode::<AcceptTries>(&tries),
        AcceptTries {
            version: Some(1),
            tries: 2,
            last: Some(ChildReport::Pass)
        },
        "{tries}"
    );
    let checks: Vec<_> = session::entries(session_file.as_ref())
        .into_iter()
        .filter(|e| e["type"] == "custom" && e["customType"] == "herd-accept-check")
        .map(|e| e["data"]["exitCode"].clone())
        .collect();
    // grep exits 2 while the file is missing.
    assert_eq!(checks, [json!(2), json!(0)]);
    // The failure went back to the model as the next user message, with the check's output.
    let requests = model.requests();
    assert_eq!(requests.len(), 3, "one turn, a retry turn with a tool call");
    let users = request::user_texts(&requests[1]);
    let feedback = users.last().unwrap();
    assert!(
        feedback.contains("The acceptance check failed (exited with 2, try 1 of 3)"),
        "{feedback}"
    );
    assert!(feedback.contains("checking"), "{feedback}");
    // The command lives only in the accept spec, never in what the child was told.
    assert!(
        !request::user_texts(&requests[0])
            .join("\n")
            .contains("grep -q fixed"),
        "{:?}",
        request::user_texts(&requests[0])
    );
    let ledger: Vec<LedgerLine> = herd.ledger().iter().map(decode).collect();
    assert_eq!(ledger.len(), 1, "{ledger:#?}");
    assert_eq!(
        (ledger[0].check, ledger[0].tries),
        (Verdict::Accepted, Some(2)),
        "{ledger:#?}"
    );
}

#[test]
fn on_process_a_rejected_check_is_accepted_after_the_childs_retry() {
    a_rejected_check_is_accepted_after_the_childs_retry(Where::Process);
}

#[test]
fn on_tmux_a_rejected_check_is_accepted_after_the_childs_retry() {
    a_rejected_check_is_accepted_after_the_childs_retry(Where::Tmux);
}
