//! A child's own spawn and its parent run's budget (`docs/tools.md`, `budget`): a child's budget
//! is at most what its parent run has left; a spawn without one gets what is left; a tree with
//! nothing left launches nothing.

use serde_json::json;

use crate::support::{Env, ack, refusal, script};

/// A Pi child (the stand-in Pi) spawned with `request`; its run id.
fn spawn_pi(env: &Env, request: serde_json::Value) -> Result<String, herd_e2e::cli::Run> {
    let run = env.run(
        &["spawn", "--request", "-", "--json", "--surface", "process"],
        &request,
    );
    if run.code == 0 {
        Ok(ack(&run).run_id)
    } else {
        Err(run)
    }
}

#[test]
fn a_childs_own_spawn_gets_at_most_what_its_parent_run_has_left() {
    let mut env = Env::new();
    env.unconfined();
    env.set(
        "PI_CODING_AGENT_DIR",
        env.dir.path().join("agent").to_string_lossy(),
    );
    env.set("HERD_PI", script("fake-pi.sh"));
    let parent = spawn_pi(
        &env,
        json!({"name": "Parent", "task": "t", "budget": {"tokens": 1000}}),
    )
    .unwrap_or_else(|run| panic!("{run}"));
    assert_eq!(
        env.run_record(&parent).extra.budget.and_then(|b| b.tokens),
        Some(1000),
        "the budget is kept in the run's record"
    );

    // Spawns from inside that run.
    env.set("PI_SUBAGENT_ID", parent.clone());
    let before = env.run_ids().len();
    let run = spawn_pi(
        &env,
        json!({"name": "Greedy", "task": "t", "budget": {"tokens": 5000}}),
    )
    .expect_err("wider than what is left");
    assert_eq!(run.code, 2, "{run}");
    let err = refusal(&run);
    assert_eq!(err.field.as_deref(), Some("budget"), "{run}");
    assert!(err.message.contains(&parent), "{}", err.message);
    assert_eq!(env.run_ids().len(), before, "a refusal launches nothing");

    let modest = spawn_pi(
        &env,
        json!({"name": "Modest", "task": "t", "budget": {"tokens": 400}}),
    )
    .unwrap_or_else(|run| panic!("{run}"));
    assert_eq!(
        env.run_record(&modest).extra.budget.and_then(|b| b.tokens),
        Some(400)
    );
    // Without a budget of its own: what its parent has left.
    let heir =
        spawn_pi(&env, json!({"name": "Heir", "task": "t"})).unwrap_or_else(|run| panic!("{run}"));
    let left = env.run_record(&heir).extra.budget.and_then(|b| b.tokens);
    assert!(left.is_some_and(|t| t <= 1000), "{left:?}");
}
