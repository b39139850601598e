//! The binary: each subcommand's `--json` shape, human output and exit codes.

use herd_core::ErrorCode;
use herd_e2e::redact::Redactions;
use herd_protocol::worktree::{
    InspectedState, State, Surface, WorktreeCreate, WorktreeInspect, WorktreeList,
};

use crate::{World, entries, fake_git, path_with, refusal, shown};

/// The sandbox's paths and the base commit named, so a snapshot holds the whole text.
fn redactions(w: &World, head: &str) -> Redactions {
    Redactions::new()
        .path(&w.managed_root(), "ROOT")
        .path(&w.sb.path(), "SANDBOX")
        .text(head, "[BASE]")
}

#[test]
fn create_show_inspect_round_trip() {
    let w = World::new();
    let repo = w.sb.repo("repo");
    let head = w.sb.head(&repo);
    let repo_s = repo.to_str().unwrap();

    let run = w.run(
        &[
            "create",
            "--cwd",
            repo_s,
            "--branch",
            "feat/cli",
            "--run-id",
            "r1",
            "--surface",
            "git",
            "--json",
        ],
        None,
    );
    assert_eq!(run.code, 0, "{run:?}");
    let doc = run.doc::<WorktreeCreate>();
    let path = w.managed_root().join("repo/feat-cli");
    assert_eq!(doc.run_id, "r1");
    assert_eq!(doc.state, State::Provisioned);
    assert_eq!(doc.path, path.to_str().unwrap());
    assert_eq!(doc.branch, "feat/cli");
    assert_eq!(doc.base_sha, head);
    assert_eq!(doc.base_ref, "HEAD");
    assert_eq!(doc.surface, Surface::Git);
    assert_eq!(doc.workspace_id, None);
    let manifest_file = w.sb.path().join("artifacts/worktree-runs/r1.json");
    assert_eq!(doc.manifest, manifest_file.to_str().unwrap());

    let run = w.run(&["show", "--run-id", "r1", "--json"], None);
    assert_eq!(run.code, 0, "{run:?}");
    // Read as a manifest: its kind (and the other constants) are checked.
    let manifest = shown(&run);
    assert_eq!(manifest.state, State::Provisioned);
    assert_eq!(manifest.path.as_deref(), Some(path.as_path()));
    let run = w.run(&["show", "--run-id", "r1"], None);
    assert_eq!(run.code, 0, "{run:?}");
    insta::assert_snapshot!("show", redactions(&w, &head).apply(&run.stdout));

    w.sb.write(&path, "new.txt", "n\n");
    let run = w.run(
        &[
            "inspect",
            "--path",
            path.to_str().unwrap(),
            "--base",
            &head,
            "--json",
        ],
        None,
    );
    assert_eq!(run.code, 0, "{run:?}");
    let doc = run.doc::<WorktreeInspect>();
    assert_eq!(doc.state, InspectedState::Dirty);
    assert_eq!(doc.branch.as_deref(), Some("feat/cli"));
    assert_eq!(doc.head_sha.as_deref(), Some(head.as_str()));
    assert_eq!(doc.commits_ahead, Some(0));
    assert_eq!(doc.changed_files, Some(vec!["new.txt".to_owned()]));
    assert_eq!(doc.untracked_files, Some(vec!["new.txt".to_owned()]));
    let run = w.run(
        &["inspect", "--path", path.to_str().unwrap(), "--base", &head],
        None,
    );
    assert_eq!(run.code, 0);
    insta::assert_snapshot!("inspect_dirty", redactions(&w, &head).apply(&run.stdout));

    let run = w.run(
        &[
            "create",
            "--cwd",
            repo_s,
            "--branch",
            "feat/text",
            "--run-id",
            "r2",
            "--surface",
            "git",
        ],
        None,
    );
    assert_eq!(run.code, 0, "{run:?}");
    insta::assert_snapshot!("create", redactions(&w, &head).apply(&run.stdout));
}

#[test]
fn create_refusals_exit_2_and_leave_nothing() {
    let w = World::new();
    let repo = w.sb.repo("repo");
    w.sb.git(&repo, ["branch", "taken"]);
    let run = w.run(
        &[
            "create",
            "--cwd",
            repo.to_str().unwrap(),
            "--branch",
            "taken",
            "--run-id",
            "r1",
            "--surface",
            "git",
            "--json",
        ],
        None,
    );
    assert_eq!(run.code, 2, "{run:?}");
    let err = refusal(&run);
    assert_eq!(err.code, ErrorCode::InvalidRequest);
    assert_eq!(err.field.as_deref(), Some("branch"));
    assert!(entries(&w.sb.path().join("artifacts")).is_empty());
    assert!(!w.managed_root().exists());

    let run = w.run(
        &[
            "create",
            "--cwd",
            repo.to_str().unwrap(),
            "--branch",
            "ok",
            "--run-id",
            "r1",
            "--surface",
            "nope",
        ],
        None,
    );
    assert_eq!(run.code, 2, "{run:?}");
}

#[test]
fn show_fails_closed() {
    let w = World::new();
    let run = w.run(&["show", "--run-id", "absent", "--json"], None);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(refusal(&run).code, ErrorCode::NotFound);
    let dir = w.sb.path().join("artifacts/worktree-runs");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("fake.json"),
        r#"{"version":1,"kind":"worktree-run","owner":"x","state":"running","id":"fake"}"#,
    )
    .unwrap();
    let run = w.run(&["show", "--run-id", "fake", "--json"], None);
    assert_eq!(run.code, 2, "{run:?}");
    let err = refusal(&run);
    assert_eq!(err.field.as_deref(), Some("owner"));
    assert!(err.message.contains("not a worktree manifest"), "{run}");
}

#[test]
fn inspect_unknown_exits_4_and_bad_base_exits_2() {
    let w = World::new();
    let repo = w.sb.repo("repo");
    let head = w.sb.head(&repo);
    let run = w.run(
        &[
            "inspect",
            "--path",
            w.sb.path().join("gone").to_str().unwrap(),
            "--base",
            &head,
            "--json",
        ],
        None,
    );
    assert_eq!(run.code, 4, "{run:?}");
    let doc = run.doc::<WorktreeInspect>();
    assert_eq!(doc.state, InspectedState::Unknown);
    assert_eq!(doc.changed_files, None);
    assert!(doc.warning.is_some(), "{run}");
    let run = w.run(
        &[
            "inspect",
            "--path",
            repo.to_str().unwrap(),
            "--base",
            "HEAD~1",
            "--json",
        ],
        None,
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(refusal(&run).field.as_deref(), Some("base"));
    // A git that answers garbage, found first on PATH.
    let fakebin = w.sb.path().join("fakebin");
    fake_git(&fakebin, "echo 'fatal: broken' >&2; exit 128");
    let run = w.run(
        &["inspect", "--path", repo.to_str().unwrap(), "--base", &head],
        Some(&path_with(&fakebin)),
    );
    assert_eq!(run.code, 4, "{run:?}");
    insta::assert_snapshot!("inspect_unknown", redactions(&w, &head).apply(&run.stdout));
}

#[test]
fn a_git_that_hangs_gives_unknown_within_the_handoff_budget() {
    let w = World::new();
    let repo = w.sb.repo("repo");
    let head = w.sb.head(&repo);
    let fakebin = w.sb.path().join("fakebin");
    fake_git(&fakebin, "exec sleep 600");
    let run = w.run(
        &[
            "inspect",
            "--path",
            repo.to_str().unwrap(),
            "--base",
            &head,
            "--json",
        ],
        Some(&path_with(&fakebin)),
    );
    assert_eq!(run.code, 4, "{run:?}");
    let doc = run.doc::<WorktreeInspect>();
    assert_eq!(doc.state, InspectedState::Unknown);
    assert!(
        doc.warning
            .as_deref()
            .is_some_and(|w| w.contains("timed out after 15s")),
        "{run}"
    );
}

#[test]
fn list_labels_detached_entries() {
    let w = World::new();
    let repo = w.sb.repo("repo");
    let a = w.sb.path().join("wt-a");
    let d = w.sb.path().join("wt-d");
    w.sb.git(
        &repo,
        [
            "worktree",
            "add",
            "--quiet",
            "-b",
            "feat/a",
            a.to_str().unwrap(),
        ],
    );
    w.sb.git(
        &repo,
        [
            "worktree",
            "add",
            "--quiet",
            "--detach",
            d.to_str().unwrap(),
        ],
    );
    let run = w.run(&["list", "--cwd", a.to_str().unwrap(), "--json"], None);
    assert_eq!(run.code, 0, "{run:?}");
    let doc = run.doc::<WorktreeList>();
    assert_eq!(doc.repository, repo.to_str().unwrap());
    let rows = &doc.worktrees;
    assert_eq!(rows.len(), 3, "{run}");
    assert!(rows[0].principal);
    assert_eq!(rows[0].branch.as_deref(), Some("main"));
    assert_eq!(rows[1].branch.as_deref(), Some("feat/a"));
    assert_eq!(rows[2].branch, None);
    assert_eq!(rows[2].label, "(detached HEAD)");
    assert!(rows[2].detached);
    let run = w.run(&["list", "--cwd", repo.to_str().unwrap()], None);
    assert_eq!(run.code, 0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines,
        [
            format!("{}  main", repo.display()),
            format!("{}  feat/a", a.display()),
            format!("{}  (detached HEAD)", d.display()),
        ]
    );
    let plain = w.sb.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let run = w.run(&["list", "--cwd", plain.to_str().unwrap(), "--json"], None);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(refusal(&run).field.as_deref(), Some("cwd"));
}
