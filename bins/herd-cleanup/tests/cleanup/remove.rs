//! Removal: clean, preserved, failed preservation, repeated, and bad targets.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use herd_cleanup::remove::WIP_MESSAGE;
use herd_core::error::{ErrorCode, ErrorDocument};
use herd_protocol::cleanup::{Classification, Outcome, Removal, Via};
use herd_protocol::worktree::manifest::{Manifest, State};

use crate::World;

#[test]
fn a_clean_worktree_is_removed_and_its_branch_kept() {
    let w = World::new();
    let repo = w.repo("repo");
    let wt = w.worktree(&repo, "feat/done", "r1");
    w.sb.write(&wt, "f.txt", "work\n");
    let head = w.sb.commit_all(&wt, "work");

    let run = w.remove(&wt, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    let doc = run.doc::<Removal>();
    assert_eq!(doc.outcome, Outcome::Removed);
    assert_eq!(doc.removed_via, Some(Via::Git));
    assert_eq!(doc.branch.as_deref(), Some("feat/done"));
    assert_eq!(doc.manifests_marked, ["r1"]);
    assert_eq!(doc.ignored_files, Some(0));
    assert!(wt.symlink_metadata().is_err(), "the checkout is gone");
    // The branch and its commit are untouched, and git no longer lists the checkout.
    assert_eq!(
        w.sb.git(&repo, ["rev-parse", "refs/heads/feat/done"])
            .trim(),
        head
    );
    assert!(
        !w.sb
            .git(&repo, ["worktree", "list", "--porcelain"])
            .contains("feat-done")
    );
    let manifest = Manifest::load(&w.artifacts(), "r1").unwrap();
    assert_eq!(manifest.state, State::Removed);
    assert!(manifest.workspace_removed_at.is_some());

    // A second removal, by path or by branch, answers "already removed".
    let again = w.remove(&wt, &[]);
    assert_eq!(again.code, 0, "{again:?}");
    assert_eq!(again.doc::<Removal>().outcome, Outcome::AlreadyRemoved);
    let by_branch = w.cleanup(&["remove", "feat/done"]);
    assert_eq!(by_branch.code, 0, "{by_branch:?}");
    insta::assert_snapshot!(w.redact(&by_branch.stdout));
}

#[test]
fn a_target_by_branch_is_removed_with_a_human_report() {
    let w = World::new();
    let repo = w.repo("repo");
    let wt = w.worktree(&repo, "topic", "r2");
    let run = w.cleanup(&["remove", "topic"]);
    assert_eq!(run.code, 0, "{run:?}");
    insta::assert_snapshot!(w.redact(&run.stdout));
    assert!(!wt.exists());
}

#[test]
fn dirty_work_is_preserved_as_a_wip_commit_then_removed() {
    let w = World::new();
    let repo = w.repo("repo");
    let wt = w.worktree(&repo, "wip", "r3");
    w.sb.write(&wt, ".gitignore", "*.log\n");
    w.sb.commit_all(&wt, "ignore logs");
    w.sb.write(&wt, "README.md", "edited\n");
    w.sb.write(&wt, "new/file.txt", "untracked\n");
    w.sb.write(&wt, "debug.log", "ignored\n");

    // Without --preserve the work blocks.
    let refused = w.remove(&wt, &[]);
    assert_eq!(refused.code, 1, "{refused:?}");

    let run = w.remove(&wt, &["--preserve"]);
    assert_eq!(run.code, 0, "{run:?}");
    let doc = run.doc::<Removal>();
    assert_eq!(doc.outcome, Outcome::Removed, "{doc:#?}");
    let sha = doc.preservation.as_ref().unwrap().sha.clone().unwrap();
    assert_eq!(w.sb.git(&repo, ["rev-parse", "refs/heads/wip"]).trim(), sha);
    assert_eq!(
        w.sb.git(&repo, ["log", "-1", "--format=%s", "wip"]).trim(),
        WIP_MESSAGE
    );
    let files = w.sb.git(&repo, ["show", "--name-only", "--format=", &sha]);
    assert_eq!(
        files.lines().collect::<Vec<_>>(),
        ["README.md", "new/file.txt"],
        "ignored files are not preserved"
    );
    assert_eq!(doc.ignored_files, Some(1), "{doc:#?}");
    assert!(!wt.exists());
}

#[test]
fn failed_preservation_restores_the_index_and_removes_nothing() {
    let w = World::new();
    let repo = w.repo("repo");
    let hook = repo.join(".git/hooks/pre-commit");
    std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
    std::fs::write(&hook, "#!/bin/sh\necho refused by the hook >&2\nexit 1\n").unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();

    let wt = w.worktree(&repo, "hooked", "r4");
    let base = w.sb.head(&wt);
    w.sb.write(&wt, "README.md", "staged\n");
    w.sb.git(&wt, ["add", "README.md"]);
    w.sb.write(&wt, "README.md", "staged, then edited again\n");
    w.sb.write(&wt, "untracked.txt", "u\n");
    let index = Path::new(
        w.sb.git(
            &wt,
            ["rev-parse", "--path-format=absolute", "--git-path", "index"],
        )
        .trim(),
    )
    .to_path_buf();
    let before = std::fs::read(&index).unwrap();

    let run = w.remove(&wt, &["--preserve"]);
    assert_eq!(run.code, 1, "{run:?}");
    let doc = run.doc::<Removal>();
    assert_eq!(doc.outcome, Outcome::Blocked);
    let preservation = doc.preservation.unwrap();
    assert_eq!(preservation.sha, None);
    assert_eq!(preservation.index_restored, Some(true));
    assert!(
        preservation
            .error
            .as_deref()
            .unwrap()
            .contains("refused by the hook"),
        "{preservation:#?}"
    );
    // The failure names the git command that failed, not the option before it (it once read
    // `git maintenance.auto=false failed`).
    assert!(
        preservation
            .error
            .as_deref()
            .unwrap()
            .starts_with("the WIP commit failed: git commit failed (exit 1)"),
        "{preservation:#?}"
    );
    assert_eq!(
        std::fs::read(&index).unwrap(),
        before,
        "the index is restored byte for byte"
    );
    assert!(wt.exists());
    assert_eq!(w.sb.head(&wt), base);
    assert_eq!(
        std::fs::read_to_string(wt.join("README.md")).unwrap(),
        "staged, then edited again\n"
    );
    // Nothing was left beside the index.
    let leftovers: Vec<_> = std::fs::read_dir(index.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("herd-preserve"))
        .collect();
    assert!(leftovers.is_empty());

    let human = w.cleanup(&["remove", "hooked", "--preserve"]);
    assert_eq!(human.code, 1, "{human:?}");
    insta::assert_snapshot!(w.redact(&human.stdout));
}

#[test]
fn bad_targets_are_refused_with_exit_2() {
    let w = World::new();
    let one = w.repo("one");
    let two = w.repo("two");
    let a = w.worktree(&one, "same", "ra");
    let b = w.worktree(&two, "same", "rb");

    let none = w.cleanup(&["remove", "no-such-branch", "--json"]);
    assert_eq!(none.code, 2, "{none:?}");
    assert_eq!(none.doc::<ErrorDocument>().error.code, ErrorCode::NotFound);

    let both = w.cleanup(&["remove", "same", "--json"]);
    assert_eq!(both.code, 2, "{both:?}");
    let error = both.doc::<ErrorDocument>().error;
    assert_eq!(error.code, ErrorCode::Ambiguous);
    assert_eq!(error.field.as_deref(), Some("target"));
    let message = &error.message;
    assert!(
        message.contains(a.to_str().unwrap()) && message.contains(b.to_str().unwrap()),
        "{message}"
    );

    let human = w.cleanup(&["remove", "same"]);
    assert_eq!(human.code, 2, "{human:?}");
    insta::assert_snapshot!(w.redact(&human.stderr));
    assert!(a.exists() && b.exists());

    // The exact path still picks one.
    let run = w.remove(&a, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!a.exists() && b.exists());
}

#[test]
fn an_orphan_without_manifest_is_removed_and_pruned() {
    let w = World::new();
    let repo = w.repo("repo");
    let orphan = w.root().join("repo/orphan");
    w.sb.git(
        &repo,
        [
            "worktree",
            "add",
            "--quiet",
            "-b",
            "orphan",
            orphan.to_str().unwrap(),
        ],
    );
    let run = w.remove(&orphan, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.doc::<Removal>().manifests_marked.is_empty());
    assert!(!orphan.exists());
    let list = w.sb.git(&repo, ["worktree", "list", "--porcelain"]);
    assert!(!list.contains("orphan"), "{list}");
    // No manifest says it was removed, so a second attempt finds nothing.
    let again = w.remove(&orphan, &[]);
    assert_eq!(again.code, 2, "{again:?}");
}

#[test]
fn a_removed_manifest_never_governs_a_recreated_checkout() {
    let w = World::new();
    let repo = w.repo("repo");
    let wt = w.worktree(&repo, "again", "r5");
    assert_eq!(w.remove(&wt, &[]).code, 0);

    // The same path and branch, re-created by hand: nobody owns it now.
    w.sb.git(
        &repo,
        ["worktree", "add", "--quiet", wt.to_str().unwrap(), "again"],
    );
    let list = w.list();
    let row = &list.worktrees[0].entry;
    assert_eq!(row.classification, Classification::Eligible, "{row:#?}");
    assert_eq!(row.manifests[0].state, "removed");
    assert!(!row.manifests[0].owner);

    let run = w.remove(&wt, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    let doc = run.doc::<Removal>();
    assert_eq!(
        doc.outcome,
        Outcome::Removed,
        "not merely \"already removed\": {doc:#?}"
    );
    assert!(doc.manifests_marked.is_empty());
    assert!(!wt.exists());
}

#[test]
fn a_submodule_source_is_found_through_core_worktree() {
    let w = World::new();
    let library = w.sb.repo("library");
    let superproject = w.repo("super");
    w.sb.git(
        &superproject,
        [
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "--quiet",
            library.to_str().unwrap(),
            "lib",
        ],
    );
    w.sb.commit_all(&superproject, "add lib");
    let sub = superproject.join("lib");
    // The submodule's git directory lives under the superproject's .git/modules.
    let common = w.sb.git(
        &sub,
        ["rev-parse", "--path-format=absolute", "--git-common-dir"],
    );
    assert!(common.trim().ends_with(".git/modules/lib"), "{common}");

    let wt = w.root().join("lib/feature");
    w.sb.git(
        &sub,
        [
            "worktree",
            "add",
            "--quiet",
            "-b",
            "feature",
            wt.to_str().unwrap(),
        ],
    );
    let list = w.list();
    let row = &list.worktrees[0].entry;
    assert_eq!(row.source.as_deref(), sub.to_str(), "{row:#?}");
    assert_eq!(row.classification, Classification::Eligible, "{row:#?}");

    let run = w.remove(&wt, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!wt.exists());
    assert!(
        !w.sb
            .git(&sub, ["worktree", "list", "--porcelain"])
            .contains("feature")
    );
}

#[test]
fn with_a_symlinked_managed_root_what_create_printed_is_listed_and_removed() {
    let w = World::new();
    let repo = w.repo("repo");
    // The managed root is a symlink to the real directory: removal keeps working.
    let real = w.sb.path().join("real-root");
    std::fs::create_dir_all(&real).unwrap();
    std::os::unix::fs::symlink(&real, w.root()).unwrap();
    let printed = w.worktree(&repo, "feat/linked", "r1");
    assert!(printed.starts_with(&real), "{}", printed.display());

    let list = w.list();
    let row = list
        .worktrees
        .iter()
        .find(|r| Some(r.entry.path.as_str()) == printed.to_str())
        .unwrap_or_else(|| panic!("{} is listed: {list:#?}", printed.display()));
    assert_eq!(
        row.entry.classification,
        Classification::Eligible,
        "{row:#?}"
    );
    let run = w.remove(&printed, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.doc::<Removal>().outcome, Outcome::Removed);
    assert!(printed.symlink_metadata().is_err(), "the checkout is gone");
}

#[test]
fn what_the_losers_of_concurrent_creates_leave_never_blocks_the_winners_removal() {
    const N: usize = 6;
    let w = World::new();
    let repo = w.repo("repo");
    let barrier = std::sync::Barrier::new(N);
    let results: Vec<Result<std::path::PathBuf, herd_core::Error>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..N)
            .map(|i| {
                let (w, repo, barrier) = (&w, &repo, &barrier);
                scope.spawn(move || {
                    barrier.wait();
                    herd_worktree::create::create(
                        &w.artifacts(),
                        &herd_worktree::create::CreateRequest {
                            source_cwd: repo.clone(),
                            branch: "feat/race".into(),
                            base: None,
                            run_id: format!("r{i}"),
                            surface: herd_protocol::worktree::Surface::Git,
                            label: None,
                        },
                        &herd_worktree::create::CreateEnv {
                            git: w.sb.git_handle(),
                            herdr: herd_herdr::Herdr::new("herdr"),
                            managed_root: w.root(),
                        },
                    )
                    .map(|created| created.path)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let winners: Vec<&std::path::PathBuf> =
        results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(winners.len(), 1, "{results:#?}");
    for err in results.iter().filter_map(|r| r.as_ref().err()) {
        assert_eq!(err.code, herd_core::ErrorCode::Conflict, "{err}");
        assert_eq!(err.exit_code(), 7);
    }
    let winner = winners[0].clone();
    let run = w.remove(&winner, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.doc::<Removal>().outcome, Outcome::Removed);
    assert!(winner.symlink_metadata().is_err(), "the checkout is gone");
}
