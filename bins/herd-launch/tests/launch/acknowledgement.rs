//! The acknowledgement a person reads (`spawn` without `--json`): what was launched where and its
//! session, or why the launch failed.

use crate::support::{Env, redact, script};

#[test]
fn the_acknowledgement_says_what_was_launched_or_why_it_failed() {
    let mut env = Env::new();
    let child = script("child.sh");
    let request = serde_json::json!({"name": "Echo child", "task": "say hi"});
    let launched = env.run(
        &[
            "spawn",
            "--request",
            "-",
            "--surface",
            "process",
            "--runner",
            "exec",
            "--",
            "sh",
            &child,
            "--done",
        ],
        &request,
    );
    assert_eq!(launched.code, 0, "{launched}");

    // A tmux that refuses every placement: each model's attempt fails definitely.
    env.fake_tmux("echo 'no space for new pane' >&2\nexit 1\n");
    env.set("HERD_PI", script("fake-pi.sh"));
    let request = serde_json::json!({"name": "Worker", "task": "t", "model": "p/one,p/two"});
    let failed = env.run(&["spawn", "--request", "-", "--surface", "tmux"], &request);
    assert_eq!(failed.code, 4, "{failed}");

    let transcript = format!(
        "launched (exit {}):\n{}\nfailed (exit {}):\n{}",
        launched.code, launched.stdout, failed.code, failed.stdout
    );
    insta::assert_snapshot!(redact(&env, &transcript));
}
