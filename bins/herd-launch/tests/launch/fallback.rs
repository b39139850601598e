//! A definite launch failure tries the next model; a fallback launch continues an earlier run.

use herd_protocol::run::{LaunchStatus, RunRecord, SurfaceKind};
use serde_json::Value;

use crate::support::{Env, ack, refusal, script};

#[test]
fn a_definite_failure_tries_the_next_model_and_reports_every_attempt() {
    let mut env = Env::new();
    // A tmux that refuses every placement: nothing is created, so the next model may be tried.
    env.fake_tmux("echo 'no space for new pane' >&2\nexit 1\n");
    env.set("HERD_PI", script("fake-pi.sh"));
    let request = serde_json::json!({"name": "w", "task": "t", "model": "p/one,p/two"});
    let run = env.run(
        &["spawn", "--request", "-", "--json", "--surface", "tmux"],
        &request,
    );
    assert_eq!(run.code, 4, "{run}");
    let ack = ack(&run);
    assert_eq!(ack.status, LaunchStatus::Failed);
    assert_eq!(ack.model.as_deref(), Some("p/two"));
    assert_eq!(ack.failed_attempts[0].model.as_deref(), Some("p/one"));
    assert!(
        ack.launch_failure
            .as_deref()
            .unwrap()
            .contains("no space for new pane"),
        "{run}"
    );
    let first = &ack.failed_attempts[0].run_id;
    let record: RunRecord = serde_json::from_value(env.record(first)).unwrap();
    assert_eq!(record.status, LaunchStatus::Failed);
    assert_eq!(env.run_ids().len(), 2, "each attempt is a run of its own");
}

#[test]
fn a_fallback_launch_takes_the_next_model_of_an_earlier_run() {
    let mut env = Env::new();
    let agent_dir = env.dir.path().join("agent");
    std::fs::create_dir_all(&agent_dir).unwrap();
    env.set("PI_CODING_AGENT_DIR", agent_dir.to_string_lossy());
    env.set("HERD_PI", script("fake-pi.sh"));
    let request = serde_json::json!({"name": "w", "task": "t", "model": "p/one,p/two"});
    let first = env.run(
        &["spawn", "--request", "-", "--json", "--surface", "process"],
        &request,
    );
    assert_eq!(first.code, 0, "{first}");
    let first = ack(&first);
    assert_eq!(first.model.as_deref(), Some("p/one"));
    let first_id = first.run_id;
    let second = env.run(
        &["spawn", "--fallback-of", &first_id, "--json"],
        &Value::Null,
    );
    assert_eq!(second.code, 0, "{second}");
    let second = ack(&second);
    assert_eq!(second.model.as_deref(), Some("p/two"));
    assert_eq!(second.surface, SurfaceKind::Process);
    let record = env.run_record(&second.run_id);
    assert_eq!(record.fallback_models, Vec::<String>::new(), "{record:?}");
    assert_eq!(record.attempted_models, ["p/one"]);
    // No candidate is left after the last one.
    let second_id = second.run_id;
    let third = env.run(
        &["spawn", "--fallback-of", &second_id, "--json"],
        &Value::Null,
    );
    assert_eq!(third.code, 2, "{third}");
    assert_eq!(refusal(&third).field.as_deref(), Some("fallback_of"));
}
