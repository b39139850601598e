//! A provider error launches the next model; a cancel wins over a pending fallback.

use std::time::Duration;

use herd_e2e::wait::wait_for;
use herd_protocol::cleanup::DoctorReport;
use herd_protocol::result::{LedgerLine, RunOutcome};
use herd_protocol::watch::{CancelStatus, StatusRuns, WatchCancel, WatchEvent};

use crate::support::{Env, events, result_events, watch_bin, with_fake_pi};

#[test]
fn a_provider_error_launches_the_next_model_and_one_result_names_both() {
    let mut env = Env::new();
    with_fake_pi(&mut env);
    let first = env.spawn_request(
        serde_json::json!({"name": "Fallback", "task": "t", "model": "prov/a,prov/b"}),
        &["--runner", "pi"],
    );
    let out = env.run(
        &watch_bin(),
        &["follow", "--json"],
        &[],
        Duration::from_secs(60),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let events = events(&out.stdout);
    let results: Vec<(&str, &str)> = events
        .iter()
        .filter_map(|e| match e {
            WatchEvent::Result {
                run_id, message, ..
            } => Some((run_id.as_str(), message.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        results.len(),
        1,
        "one result for the logical run: {events:?}"
    );
    let (successor, message) = results[0];
    assert_ne!(successor, first, "the successor delivers it");
    assert!(message.contains("done with prov/b"), "{message}");
    assert!(
        message.contains("Models attempted: prov/a, prov/b"),
        "{message}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, WatchEvent::Notice { run_id, .. } if *run_id == first)),
        "{events:?}"
    );
    let ledger = std::fs::read_to_string(env.art().join("outcomes.jsonl")).unwrap();
    let lines: Vec<LedgerLine> = ledger
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let attempts: Vec<(Option<&str>, RunOutcome)> = lines
        .iter()
        .map(|line| (line.model.as_deref(), line.outcome))
        .collect();
    assert_eq!(
        attempts,
        [
            (Some("prov/a"), RunOutcome::ProviderError),
            (Some("prov/b"), RunOutcome::Completed)
        ],
        "{ledger}"
    );
    // `wait` on the first run answers with its successor's result.
    let (code, doc, text) = env.wait(&["wait", "--run", &first, "--json"]);
    assert_eq!((code, doc.run_id.as_str()), (0, successor));
    // The failed model and its raw error, in the details and on a host line.
    let failures = doc.details.fallback_failures.as_deref().unwrap();
    assert_eq!(failures.len(), 1, "{text}");
    assert_eq!(failures[0].model.as_deref(), Some("prov/a"));
    assert_eq!(failures[0].run_id, first);
    assert!(!failures[0].error.is_empty());
    assert!(message.contains("Model prov/a failed: "), "{message}");
    // The superseded attempt is no run of its own: not in status, not a doctor's finding.
    let (_, status, text) = env.doc::<StatusRuns>(&["status", "--json"]);
    assert!(!status.runs.iter().any(|r| r.run_id == first), "{text}");
    let doctor = env.run(
        &herd_e2e::bin("herd-cleanup"),
        &["doctor", "--json"],
        &[],
        Duration::from_secs(60),
    );
    let doctor: DoctorReport = serde_json::from_str(&doctor.stdout).unwrap();
    assert_eq!(doctor.runs, [], "{doctor:?}");
}

#[test]
fn a_cancel_wins_over_a_pending_fallback() {
    let mut env = Env::new();
    with_fake_pi(&mut env);
    let first = env.spawn_request(
        serde_json::json!({"name": "NoFallback", "task": "t", "model": "prov/a,prov/b"}),
        &["--runner", "pi"],
    );
    // The child fails at once; a cancel arrives before any watcher has looked.
    let runner_exit = env.art().join(format!("runs/{first}.runner-exit.json"));
    wait_for("the child to finish", Duration::from_secs(10), || {
        runner_exit.exists().then_some(())
    });
    let (code, doc, text) = env.doc::<WatchCancel>(&["cancel", "--run", &first, "--json"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(doc.status, CancelStatus::Confirmed);
    let out = env.run(
        &watch_bin(),
        &["follow", "--json"],
        &[],
        Duration::from_secs(60),
    );
    let text = out.stdout;
    assert_eq!(result_events(&text, &first), 1, "{text}");
    assert!(
        !text.contains("next model"),
        "no fallback after a cancel: {text}"
    );
    let records = std::fs::read_dir(env.art().join("runs"))
        .unwrap()
        .filter_map(|e| {
            e.unwrap()
                .file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".json"))
                .map(str::to_owned)
        })
        .filter(|stem| !stem.contains('.'))
        .count();
    assert_eq!(records, 1, "no second run was launched");
}
