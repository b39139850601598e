//! An exec child's time limit: past it the child is terminated and fails as timed out.

use std::time::{Duration, Instant};

use herd_e2e::proc::process_alive;
use herd_e2e::wait::wait_for;
use herd_protocol::result::{CancelError, Outcome};

use crate::support::Env;

#[test]
fn an_exec_child_past_its_time_limit_is_terminated_and_fails_as_timed_out() {
    let env = Env::new();
    let id = env.spawn_request(
        serde_json::json!({"name": "Slow", "task": "t"}),
        &[
            "--runner",
            "exec",
            "--timeout-ms",
            "1500",
            "--",
            "sh",
            "-c",
            "echo 'started the slow part'; exec sleep 120",
        ],
    );
    assert_eq!(env.run_record(&id).time_limit_ms, Some(1500));
    let pid = env.identity_pid(&id);
    let started = Instant::now();
    let (code, doc, text) = env.wait(&["wait", "--run", &id, "--json"]);
    assert_eq!(code, 1, "{text}");
    assert!(started.elapsed() < Duration::from_secs(60), "{text}");
    assert_eq!(doc.outcome, Outcome::Failed, "{text}");
    assert_eq!(doc.details.timed_out, Some(true), "{text}");
    assert_eq!(doc.details.time_limit_ms, Some(1500), "{text}");
    assert_eq!(doc.details.error, Some(CancelError::TimedOut), "{text}");
    let message = doc.message.as_str();
    assert!(
        message.starts_with("Sub-agent \"Slow\" timed out after"),
        "{message}"
    );
    assert!(message.contains("time limit of 1500 ms"), "{message}");
    assert!(message.contains("started the slow part"), "{message}");
    wait_for("the runner to be gone", Duration::from_secs(10), || {
        (!process_alive(pid)).then_some(())
    });
}

#[test]
fn a_time_limit_is_only_for_the_exec_runner() {
    let env = Env::new();
    let out = env.launch(
        &serde_json::json!({"name": "P", "task": "t"}),
        &["--timeout-ms", "100"],
        &[],
    );
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(!env.art().join("runs").exists(), "nothing was written");
}
