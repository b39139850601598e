//! A parent Pi as a new user starts it: through a launcher that runs Pi on a Node of its own
//! while an older `node` comes first on `PATH`, and in a session file named by hand. The child
//! starts on the parent's own Pi and Node, and its report arrives once.

#![expect(
    clippy::unwrap_used,
    reason = "scenario steps fail loudly on a broken fixture"
)]

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use herd_e2e::model::{ModelServer, Models, Script, Text};
use herd_e2e::pi::PiEnv;
use herd_e2e::rpc::{PiRpc, STEP_BUDGET};
use herd_e2e::session;
use herd_e2e::wait::wait_for;
use serde_json::{Value, json};

/// A directory whose `node` stands for an older Node.js: Pi's `cli.js` started on it dies at
/// once, as Pi 1.6 does on Node 20 (`SyntaxError: … 'enableCompileCache'`), and it leaves a mark.
fn older_node(dir: &Path) -> PathBuf {
    let bin = dir.join("old-node");
    std::fs::create_dir_all(&bin).unwrap();
    let node = bin.join("node");
    std::fs::write(
        &node,
        format!(
            "#!/bin/sh\ntouch '{}'\necho \"SyntaxError: The requested module 'node:module' does not provide an export named 'enableCompileCache'\" >&2\nexit 1\n",
            dir.join("old-node-ran").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&node, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// `PATH` with `first` before the environment's own.
fn path_with_first(env: &PiEnv, first: &Path) -> OsString {
    let own = env
        .vars()
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    std::env::join_paths(std::iter::once(first.to_path_buf()).chain(std::env::split_paths(&own)))
        .unwrap()
}

/// Waits until `session` holds a `subagent_result` entry; returns every one.
fn results(session: &Path) -> Vec<Value> {
    wait_for(
        &format!("a subagent_result in {}", session.display()),
        STEP_BUDGET,
        || {
            let found = session::custom_entries(session, "subagent_result");
            (!found.is_empty()).then_some(found)
        },
    )
}

#[test]
fn a_parent_on_a_node_of_its_own_launches_a_child_that_reports_whatever_node_is_first_on_path() {
    let model = ModelServer::start_models(
        Models::new()
            .model(
                "parent",
                Script::delegating(
                    json!({"name": "Scout", "task": "Report the answer", "model": PiEnv::model_arg("child")}),
                ),
            )
            .model("child", Script::new().step(Text("REPORT: 42"))),
    );
    let env = PiEnv::new(&model);
    let scratch = tempfile::tempdir().unwrap();
    let path = path_with_first(&env, &older_node(scratch.path()));
    let session = env.session_path("parent");
    // The pinned launcher runs Pi on its own Node; nothing names the children's Pi (`HERD_PI`
    // empty is unset), so the extension must hand over its own.
    let mut parent = PiRpc::start_with(
        &env,
        &session,
        "parent",
        &[("PATH", path.as_os_str()), ("HERD_PI", "".as_ref())],
        &["--herd-surface", "process"],
    );
    parent.prompt("Delegate to a scout.");
    session::wait_for_answer(&session, "Integrated the report.", STEP_BUDGET);
    let found = results(&session);
    assert_eq!(found.len(), 1, "{found:#?}");
    let content = found[0]["content"].as_str().unwrap();
    assert!(
        content.starts_with("Sub-agent \"Scout\" completed"),
        "{content}"
    );
    assert!(content.contains("REPORT: 42"), "{content}");
    assert!(
        !scratch.path().join("old-node-ran").exists(),
        "the child was started on the older node first on PATH"
    );
    assert!(parent.close().success());
}

#[test]
fn a_subagent_command_as_the_first_input_of_a_session_named_by_hand_is_delivered() {
    let model = ModelServer::start_models(
        Models::new()
            .model("parent", Script::new().step(Text("Integrated the report.")))
            .model("child", Script::new().step(Text("REPORT: 42"))),
    );
    let env = PiEnv::new(&model);
    let agents = env.agent_dir().join("agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("scout.md"),
        format!(
            "---\nmodel: {}\nauto-exit: true\n---\nReport what the task asks.\n",
            PiEnv::model_arg("child")
        ),
    )
    .unwrap();
    // `parent.jsonl`, not Pi's `<time>_<id>.jsonl`: the file's name is not its session id, and
    // at the first input Pi has not written the file yet.
    let session = env.session_path("parent");
    let mut parent = PiRpc::start_with(
        &env,
        &session,
        "parent",
        &[],
        &["--herd-surface", "process"],
    );
    parent.prompt("/subagent scout Report the answer");
    session::wait_for_answer(&session, "Integrated the report.", STEP_BUDGET);
    let found = results(&session);
    assert_eq!(found.len(), 1, "{found:#?}");
    let content = found[0]["content"].as_str().unwrap();
    assert!(content.contains("REPORT: 42"), "{content}");
    // The run lives where the session's follower looks: artifacts/<the session's id>.
    let id = session::entries(&session)[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let runs = session
        .parent()
        .unwrap()
        .join("artifacts")
        .join(&id)
        .join("runs");
    assert!(runs.is_dir(), "no runs in {}", runs.display());
    assert!(
        !session.parent().unwrap().join("artifacts/parent").exists(),
        "a run was placed by the file's name"
    );
    assert!(parent.close().success());
}

#[test]
fn a_child_launched_without_a_parent_session_keeps_a_private_transcript() {
    use herd_e2e::herd::{Herd, Where};
    let model = ModelServer::start(Script::new().step(Text("REPORT: 42")));
    let env = PiEnv::new(&model);
    // The command line, `HERD_ARTIFACTS` alone: no parent session to seed the child's from.
    let herd = Herd::new(&env, Where::Process);
    let ack = herd
        .launch(&json!({"name": "Scout", "task": "Report", "model": Herd::model("fake-model")}));
    let (code, result) = herd.wait_result(&ack.run_id);
    assert_eq!(code, 0, "{result:#?}");
    let session = PathBuf::from(&ack.session_file);
    let mode = std::fs::metadata(&session).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{} is {mode:o}", session.display());
    // Pi wrote its conversation into the file herd made.
    let messages = session::messages(&session);
    assert!(
        messages
            .iter()
            .any(|m| m["role"] == "assistant" && session::text(m) == "REPORT: 42"),
        "{messages:#?}"
    );
}

#[test]
fn in_a_child_worktree_remove_says_removal_is_the_parents_and_hands_nothing_off() {
    let model = ModelServer::start(Script::new().step(Text("unused")));
    let env = PiEnv::new(&model);
    let scratch = tempfile::tempdir().unwrap();
    let art = scratch.path().join("art");
    std::fs::create_dir_all(art.join("subagent-activity")).unwrap();
    let activity = art.join("subagent-activity/c1.json");
    let session = env.session_path("child");
    // A Pi that herd launched as a child: the protocol's variables name its run and files.
    let mut child = PiRpc::start_with(
        &env,
        &session,
        "fake-model",
        &[
            ("PI_SUBAGENT_ID", "c1".as_ref()),
            ("PI_SUBAGENT_NAME", "Worker".as_ref()),
            ("PI_SUBAGENT_ACTIVITY_FILE", activity.as_os_str()),
        ],
        &["--herd-surface", "tmux"],
    );
    child.prompt("/worktree remove feature-x");
    let notice = child.wait_event("the /worktree notice", |e| {
        e["type"] == "extension_ui_request" && e["method"] == "notify"
    });
    let text = notice["message"].as_str().unwrap();
    assert!(text.contains("belongs to the parent session"), "{notice:#}");
    // Not a handoff to a branch named `remove`: nothing was launched.
    assert!(!art.join("handoffs").exists(), "a handoff was started");
    assert!(model.requests().is_empty(), "the command reached the model");
    assert!(child.close().success());
}
