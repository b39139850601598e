//! Forked contexts: a role's fork without a parent session, the parent's conversation, and a
//! role's default context.

use std::path::{Path, PathBuf};

use herd_core::error::ErrorDocument;
use herd_e2e::wait::wait_for;
use herd_protocol::launch::LaunchAck;
use herd_protocol::launch::docs::RolesListing;
use serde_json::Value;

use crate::support::{Env, WAIT, ack, read, redact, script};

/// Writes a parent's Pi session `parent.jsonl`: its header (id `parent-1`), then the messages
/// `a` (user), `b` (assistant) and `c` (user).
fn parent_session(env: &Env) -> PathBuf {
    let parent = env.dir.path().join("parent.jsonl");
    std::fs::write(
        &parent,
        "{\"type\":\"session\",\"version\":3,\"id\":\"parent-1\",\"cwd\":\"/\"}\n\
         {\"type\":\"message\",\"id\":\"a\",\"message\":{\"role\":\"user\",\"content\":[]}}\n\
         {\"type\":\"message\",\"id\":\"b\",\"message\":{\"role\":\"assistant\",\"content\":[]}}\n\
         {\"type\":\"message\",\"id\":\"c\",\"message\":{\"role\":\"user\",\"content\":[]}}\n",
    )
    .unwrap();
    parent
}

/// Launches `request` on the process surface from the parent session `parent`; returns the
/// acknowledgement of the launch, which succeeded.
fn spawn_in_parent(env: &Env, parent: &Path, request: &Value) -> LaunchAck {
    let parent = parent.to_string_lossy().into_owned();
    let args = [
        "--parent-session",
        parent.as_str(),
        "spawn",
        "--request",
        "-",
        "--json",
        "--surface",
        "process",
    ];
    let run = env.run(&args, request);
    assert_eq!(run.code, 0, "{run}");
    ack(&run)
}

#[test]
fn a_roles_fork_without_a_parent_session_starts_fresh_and_an_explicit_one_explains() {
    let env = Env::with_role(
        "forker",
        "---\nname: forker\ndescription: d\nsession-mode: fork\nauto-exit: true\n---\nRole text.\n",
    );
    let args = ["spawn", "--request", "-", "--json", "--surface", "process"];
    let run = env.run(
        &args,
        &serde_json::json!({"name": "F", "task": "t", "agent": "forker"}),
    );
    assert_eq!(run.code, 0, "{run}");
    let launched = ack(&run);
    assert!(
        launched
            .diagnostics
            .iter()
            .any(|d| d.contains("the child starts fresh")),
        "{launched:?}"
    );
    let argv = wait_for("pi's argv", WAIT, || read(env.work().join("pi.argv")));
    assert!(
        argv.lines().last().unwrap().starts_with('@'),
        "a fresh child gets its artifact: {argv}"
    );
    let run = env.run(
        &args,
        &serde_json::json!({"name": "G", "task": "t", "agent": "forker", "fork": true}),
    );
    assert_eq!(run.code, 2, "{run}");
    let refused = run.doc::<ErrorDocument>().error;
    assert_eq!(refused.field.as_deref(), Some("fork"), "{run}");
    assert!(refused.message.contains("no parent session"), "{run}");
}

#[test]
fn a_fork_gets_the_raw_task_and_the_parents_conversation() {
    let mut env = Env::new();
    let agent_dir = env.dir.path().join("agent");
    std::fs::create_dir_all(&agent_dir).unwrap();
    env.set("PI_CODING_AGENT_DIR", agent_dir.to_string_lossy());
    env.set("HERD_PI", script("fake-pi.sh"));
    let parent = parent_session(&env);
    let launched = spawn_in_parent(
        &env,
        &parent,
        &serde_json::json!({"name": "Fix", "task": "Fix it.", "fork": true, "systemPrompt": "dropped"}),
    );
    assert_eq!(
        Some(launched.artifacts.as_str()),
        env.dir.path().join("artifacts/parent-1").to_str()
    );
    let argv = wait_for("pi's argv", WAIT, || read(env.work().join("pi.argv")));
    // The raw task, and after it the acceptance section (a fork has no task artifact).
    let task = &argv[argv.find("\nFix it.").expect("the raw task") + 1..];
    assert!(
        task.starts_with("Fix it.\n\n## Acceptance\n\nThis run has the acceptance level `checked` (inferred for this task)."),
        "{argv}"
    );
    assert!(task.trim_end().ends_with("```"), "{argv}");
    assert!(!argv.contains("dropped"));
    let session = read(&launched.session_file).unwrap();
    let lines: Vec<Value> = session
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // "`true` copies this conversation into the child": up to and including the parent's
    // current user message.
    assert_eq!(lines.len(), 4, "{session}");
    assert_eq!(lines[0]["type"], "session");
    assert_eq!(
        lines[0]["parentSession"].as_str().unwrap(),
        parent.to_str().unwrap()
    );
    assert_eq!(lines[1]["id"], "a");
    assert_eq!(lines[2]["id"], "b");
    assert_eq!(lines[3]["id"], "c");
}

/// A role's `defaultContext: fork` forks a launch that does not say `fork`, as
/// `session-mode: fork` does; `roles --json` shows it with the role's description and skills.
#[test]
fn a_roles_default_context_fork_forks_the_launch_and_the_listing_shows_it() {
    let env = Env::with_role(
        "planner",
        "---\ndescription: Plans the work\nskills: plan, review\ndefaultContext: fork\nauto-exit: true\n---\nPlan.\n",
    );
    let listed = env.run(&["roles", "--json"], &Value::Null);
    assert_eq!(listed.code, 0, "{listed}");
    let listing: RolesListing = listed.doc();
    let settings = listing.roles[0].settings.as_ref().expect("the role parses");
    assert_eq!(
        settings.description.as_deref(),
        Some("Plans the work"),
        "{listed}"
    );
    assert_eq!(
        settings.skills.as_deref(),
        Some(&["plan".to_owned(), "review".to_owned()][..]),
        "{listed}"
    );
    assert_eq!(
        settings.default_context.as_deref(),
        Some("fork"),
        "{listed}"
    );
    let text = env.run(&["roles"], &Value::Null);
    assert_eq!(text.code, 0, "{text}");
    insta::assert_snapshot!("roles", redact(&env, &text.stdout));

    let parent = parent_session(&env);
    let launched = spawn_in_parent(
        &env,
        &parent,
        &serde_json::json!({"name": "P", "task": "Plan it.", "agent": "planner"}),
    );
    let session = read(&launched.session_file).unwrap();
    let first: Value = serde_json::from_str(session.lines().next().unwrap()).unwrap();
    assert_eq!(
        first["parentSession"].as_str(),
        parent.to_str(),
        "the child forked: {session}"
    );
    // The parent's conversation up to the launch, as an explicit fork copies it.
    assert!(
        session.contains("\"id\":\"a\"") && session.contains("\"id\":\"b\""),
        "{session}"
    );
    let argv = wait_for("pi's argv", WAIT, || read(env.work().join("pi.argv")));
    assert!(
        argv.contains("\nPlan it."),
        "a fork gets the raw task: {argv}"
    );
}
