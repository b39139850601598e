//! A worktree child commits on its own branch: the result's handoff shows the commit ahead of
//! the base, and `herd-cleanup remove` removes the checkout afterwards and keeps the branch.

#![expect(
    clippy::unwrap_used,
    reason = "scenario steps shared by the tmux and process tests fail loudly on a broken fixture"
)]

use herd_e2e::git::Sandbox;
use herd_e2e::herd::{Herd, Where, decode, read_json};
use herd_e2e::model::{ModelServer, Script, Text, ToolCall};
use herd_e2e::pi::PiEnv;
use herd_protocol::cleanup::{Outcome as Removed, Removal, Via};
use herd_protocol::result::Outcome;
use herd_protocol::worktree::{Manifest, State};
use serde_json::json;

fn a_worktree_childs_commits_are_handed_off_and_cleanup_removes_it(place: Where, test: &str) {
    let model = ModelServer::start(
        Script::new()
            .step(ToolCall::bash(
                "echo hi > greeting.txt && git add greeting.txt && git commit -q -m 'add greeting'",
            ))
            .step(Text("REPORT: committed greeting.txt")),
    );
    let env = PiEnv::new(&model);
    let sb = Sandbox::new();
    let repo = sb.repo("repo");
    let base = sb.head(&repo);
    let root = env.root().join("worktrees");
    let Some(mut herd) = Herd::try_new(&env, place, test) else {
        return;
    };
    herd.set_var("HERD_WORKTREE_ROOT", &root);

    let ack = herd.launch_in(
        &repo,
        &json!({
            "name": "Greeter",
            "task": "Add a greeting and commit it",
            "model": Herd::model("fake-model"),
            "worktree": {"branch": "feature/greeting"},
        }),
    );
    let run = ack.run_id.as_str();
    let worktree = ack.worktree.clone().expect("a worktree");
    let checkout = worktree.path.clone();
    assert!(
        checkout.starts_with(root.to_str().unwrap()),
        "{checkout} is under the managed root"
    );
    assert_eq!(worktree.base_sha, base);

    let (code, result) = herd.wait_result(run);

    assert_eq!(code, 0, "{result:#?}");
    assert_eq!(result.outcome, Outcome::Completed);
    let message = &result.message;
    assert!(
        message.contains("<subagent_report from=\"Greeter\" kind=\"result\">\nREPORT: committed greeting.txt\n</subagent_report>"),
        "{message}"
    );
    assert!(
        message.contains("Worktree result retained for review:"),
        "{message}"
    );
    assert!(
        message.contains(&format!("Worktree: {checkout}")),
        "{message}"
    );
    assert!(message.contains("Branch: feature/greeting"), "{message}");
    // A Herdr workspace is named; tmux's session id (`$0`) means nothing to a person.
    assert_eq!(
        message.contains("\nWorkspace: "),
        matches!(place, Where::Herdr),
        "{message}"
    );
    assert!(
        message.contains("State: clean · 1 commit ahead"),
        "{message}"
    );
    let handoff = result.details.worktree.as_ref().expect("the handoff");
    assert_eq!(handoff.commits_ahead, Some(1), "{handoff:#?}");
    assert_eq!(handoff.base_sha, base, "{handoff:#?}");
    // The commit is the child's, on the branch, and the source checkout is untouched.
    let head = sb.git(checkout.as_ref(), ["rev-parse", "HEAD"]);
    assert_eq!(handoff.head_sha.as_ref(), Some(&head), "{handoff:#?}");
    assert_eq!(
        sb.git(&repo, ["log", "-1", "--format=%s", "feature/greeting"]),
        "add greeting"
    );
    assert_eq!(sb.head(&repo), base);
    assert!(!repo.join("greeting.txt").exists());
    let manifest: Manifest = decode(
        &read_json(&herd.artifacts().join(format!("worktree-runs/{run}.json")))
            .expect("the ownership manifest"),
    );
    assert_eq!(manifest.state, State::ReadyForReview, "{manifest:#?}");

    // Cleanup refuses a checkout that a process still has as its directory (a child shutting
    // down after its result, its launch script): the parent removes it once the child is gone.
    herd.wait_for_child_gone(run);
    let workspaces_before = herd.herdr().map(|herdr| herdr.json(["workspace", "list"]));
    // Herdr opened a workspace on the source repository (none was open) when it created the
    // worktree, and nothing used it since.
    let opened_source = herd.herdr().map(|herdr| {
        let list = herdr.json(["worktree", "list", "--cwd", repo.to_str().unwrap()]);
        list["source"]["source_workspace_id"]
            .as_str()
            .expect("Herdr opened a workspace on the source repository")
            .to_owned()
    });
    let out = herd.run_in(
        &repo,
        "herd-cleanup",
        ["remove", "feature/greeting", "--json"],
    );
    assert!(out.success(), "herd-cleanup remove:\n{out}");
    let removal: Removal = out.doc();
    assert_eq!(removal.outcome, Removed::Removed, "{removal:#?}");
    assert!(
        !std::path::Path::new(&checkout).exists(),
        "the checkout is gone: {removal:#?}"
    );
    assert!(
        !sb.git(&repo, ["worktree", "list"]).contains(&checkout),
        "git forgot the worktree"
    );
    assert_eq!(
        sb.git(&repo, ["rev-parse", "feature/greeting"]),
        head,
        "the branch and its commit are kept"
    );
    // Seed: "If this process recorded that worktree creation appeared to open it and a read
    // taken just before the report still shows it untouched, removal adds `wX appears to have
    // been opened by worktree creation; if you haven't used it, close it with herdr workspace
    // close wX`". Without Herdr nothing was opened and nothing is said.
    let notes: Vec<String> = opened_source
        .iter()
        .map(|w| {
            format!(
                "{w} appears to have been opened by worktree creation; if you haven't used it, \
                 close it with herdr workspace close {w}"
            )
        })
        .collect();
    assert_eq!(removal.notes, notes, "{removal:#?}");
    if let (Some(herdr), Some(before)) = (herd.herdr(), workspaces_before) {
        // Herdr removed the checkout with its workspace; every other workspace stays, the
        // parent's and the one Herdr opened for the source repository included.
        let workspace = herd
            .run_record(run)
            .pane
            .and_then(|p| p.workspace_id)
            .or(ack.workspace_id.clone())
            .unwrap();
        let after = herdr.json(["workspace", "list"]);
        let ids = |list: &serde_json::Value| -> Vec<String> {
            list["workspaces"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w["workspace_id"].as_str().unwrap().to_owned())
                .collect()
        };
        let (before, after) = (ids(&before), ids(&after));
        assert!(before.contains(&workspace), "{before:?}");
        assert!(!after.contains(&workspace), "{after:?}");
        let kept: Vec<&String> = before.iter().filter(|w| **w != workspace).collect();
        assert!(
            kept.iter().all(|w| after.contains(w)),
            "{before:?} -> {after:?}"
        );
        assert!(herdr.pane_exists(herd.parent_pane().unwrap()));
        assert!(
            removal.removed_via == Some(Via::Herdr)
                || removal.workspace.as_deref() == Some(workspace.as_str()),
            "the removal says Herdr removed it: {removal:#?}"
        );
    }
}

#[test]
fn on_process_a_worktree_childs_commits_are_handed_off_and_cleanup_removes_it() {
    a_worktree_childs_commits_are_handed_off_and_cleanup_removes_it(Where::Process, "");
}

#[test]
fn on_tmux_a_worktree_childs_commits_are_handed_off_and_cleanup_removes_it() {
    a_worktree_childs_commits_are_handed_off_and_cleanup_removes_it(Where::Tmux, "");
}

#[test]
fn on_herdr_a_worktree_childs_commits_are_handed_off_and_cleanup_removes_it() {
    a_worktree_childs_commits_are_handed_off_and_cleanup_removes_it(
        Where::Herdr,
        "on_herdr_a_worktree_childs_commits_are_handed_off_and_cleanup_removes_it",
    );
}

/// Seed 003: the note is added only while "a read taken just before the report still shows it
/// untouched". The workspace Herdr opened on the source repository is recorded at creation; once
/// a person has used it (here: split its pane), removal names nothing.
#[test]
fn on_herdr_a_source_workspace_used_since_the_worktree_was_created_is_not_named() {
    let model = ModelServer::start(Script::new());
    let env = PiEnv::new(&model);
    let sb = Sandbox::new();
    let repo = sb.repo("repo");
    let test = "on_herdr_a_source_workspace_used_since_the_worktree_was_created_is_not_named";
    let Some(mut herd) = Herd::try_new(&env, Where::Herdr, test) else {
        return;
    };
    herd.set_var("HERD_WORKTREE_ROOT", env.root().join("worktrees"));
    let out = herd.run_in(
        &repo,
        "herd-worktree",
        [
            "create",
            "--cwd",
            repo.to_str().unwrap(),
            "--branch",
            "feature/used",
            "--run-id",
            "u1",
            "--surface",
            "herdr",
            "--json",
        ],
    );
    assert!(out.success(), "herd-worktree create:\n{out}");
    let manifest: Manifest =
        decode(&read_json(&herd.artifacts().join("worktree-runs/u1.json")).expect("the manifest"));
    let opened = manifest
        .opened_source_workspace
        .clone()
        .expect("the creation recorded the workspace it opened on the source repository");
    let herdr = herd.herdr().unwrap();
    herdr.ok([
        "pane",
        "split",
        opened.pane_id.as_str(),
        "--direction",
        "right",
        "--no-focus",
    ]);
    let out = herd.run_in(&repo, "herd-cleanup", ["remove", "feature/used", "--json"]);
    assert!(out.success(), "herd-cleanup remove:\n{out}");
    let removal: Removal = out.doc();
    assert_eq!(removal.outcome, Removed::Removed, "{removal:#?}");
    assert!(removal.notes.is_empty(), "{removal:#?}");
    // The workspace is never closed by herd.
    assert!(
        herdr
            .cmd(["workspace", "get", opened.workspace_id.as_str()])
            .success()
    );
}
