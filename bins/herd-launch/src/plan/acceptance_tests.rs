use super::*;
use herd_accept::report::config::Context;

fn role(name: &str, acceptance_role: Option<roles::AcceptanceRole>) -> Role {
    Role {
        name: name.to_owned(),
        acceptance_role,
        ..Role::default()
    }
}

#[test]
fn the_context_follows_the_reviewer_the_role_the_name_and_the_tools() {
    let tools = |list: &[&str]| list.iter().map(|t| (*t).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        acceptance_context(None, None, "", false, false),
        Context::Writer
    );
    assert_eq!(
        acceptance_context(None, None, "", true, false),
        Context::RiskyWriter
    );
    assert_eq!(
        acceptance_context(None, None, "", true, true),
        Context::ReadOnly
    );
    let scout = role("code-scout", None);
    assert_eq!(
        acceptance_context(Some(&scout), None, "", true, false),
        Context::ReadOnly
    );
    // The role's own word wins over its name.
    let writer = role("reviewer", Some(roles::AcceptanceRole::Writer));
    assert_eq!(
        acceptance_context(Some(&writer), None, "", true, false),
        Context::RiskyWriter
    );
    let mapper = role("mapper", Some(roles::AcceptanceRole::ReadOnly));
    assert_eq!(
        acceptance_context(Some(&mapper), None, "", false, false),
        Context::ReadOnly
    );
    assert_eq!(
        acceptance_context(None, Some(&tools(&["read", "grep"])), "", false, false),
        Context::ReadOnly
    );
    assert_eq!(
        acceptance_context(None, Some(&tools(&["read", "edit"])), "", false, false),
        Context::Writer
    );
    // A worker is a writer whatever its tools.
    let worker = role("worker", None);
    assert_eq!(
        acceptance_context(Some(&worker), Some(&tools(&["read"])), "", false, false),
        Context::Writer
    );
}

#[test]
fn the_tasks_own_intent_wins_over_the_role_and_the_name() {
    let scout = role("scout", None);
    let read_only = role("mapper", Some(roles::AcceptanceRole::ReadOnly));
    let writer = role("worker", Some(roles::AcceptanceRole::Writer));
    let fix = "Fix the overflow in parse_len";
    let look = "Find the callers of parse_len. Do not edit any files.";
    assert_eq!(
        acceptance_context(Some(&scout), None, fix, false, false),
        Context::Writer
    );
    assert_eq!(
        acceptance_context(Some(&read_only), None, fix, true, false),
        Context::RiskyWriter
    );
    assert_eq!(
        acceptance_context(Some(&writer), None, look, true, false),
        Context::ReadOnly
    );
    assert_eq!(
        acceptance_context(None, None, look, false, false),
        Context::ReadOnly
    );
    // A task that states neither leaves it to the role; a reviewer stays read-only.
    let neutral = "Look at parse_len";
    assert_eq!(
        acceptance_context(Some(&scout), None, neutral, false, false),
        Context::ReadOnly
    );
    assert_eq!(
        acceptance_context(Some(&writer), None, neutral, false, false),
        Context::Writer
    );
    assert_eq!(
        acceptance_context(None, None, fix, false, true),
        Context::ReadOnly
    );
}

#[test]
fn acceptance_and_gate_are_validated_by_their_field() {
    let err =
        acceptance_input(&serde_json::json!({"acceptance": {"level": "checked", "bogus": 1}}))
            .unwrap_err();
    assert_eq!(
        err.field.as_deref(),
        Some("acceptance.bogus"),
        "{}",
        err.message
    );
    assert_eq!(
        acceptance_input(&serde_json::json!({"name": "x"})).unwrap(),
        herd_accept::report::AcceptanceInput::Omitted
    );
}
