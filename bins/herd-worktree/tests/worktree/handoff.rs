//! The handoff: inspection of real worktrees and the host lines that report it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_core::escape::EvidenceClass;
use herd_git::{Deadline, Git, budget};
use herd_protocol::worktree::{Handoff, InspectedState, TreeState};
use herd_worktree::handoff::{self, render_lines};

use crate::{World, fake_git};

/// A repository and a linked worktree on `branch`, both at the same base.
fn worktree(w: &World, branch: &str) -> (PathBuf, PathBuf, String) {
    let repo = w.sb.repo("repo");
    let base = w.sb.head(&repo);
    let wt = w.sb.path().join("wt");
    w.sb.git(
        &repo,
        [
            "worktree",
            "add",
            "--quiet",
            "-b",
            branch,
            wt.to_str().expect("a UTF-8 path"),
            &base,
        ],
    );
    (repo, wt, base)
}

fn inspect(w: &World, wt: &Path, base: &str) -> Handoff {
    handoff::inspect(
        &w.sb.git_handle(),
        wt,
        base,
        Deadline::after(budget::HANDOFF),
    )
}

#[test]
fn commits_ahead_with_staged_unstaged_and_untracked_changes() {
    let w = World::new();
    let (_, wt, base) = worktree(&w, "feat/x");
    w.sb.write(&wt, "src/a.rs", "a\n");
    w.sb.commit_all(&wt, "add a");
    w.sb.write(&wt, "README.md", "changed in a commit\n");
    let head = w.sb.commit_all(&wt, "edit readme");
    w.sb.write(&wt, "staged.rs", "s\n");
    w.sb.git(&wt, ["add", "staged.rs"]);
    w.sb.write(&wt, "src/a.rs", "unstaged edit\n");
    w.sb.write(&wt, "notes/new file.md", "u\n");

    let h = inspect(&w, &wt, &base);
    assert!(h.is_known(), "{h:?}");
    assert_eq!(h.branch.as_deref(), Some("feat/x"));
    assert!(!h.detached);
    assert_eq!(h.head_sha.as_deref(), Some(head.as_str()));
    assert_eq!(h.commits_ahead, Some(2));
    assert_eq!(h.tree, Some(TreeState::Dirty));
    assert_eq!(
        h.changed_files.as_deref().unwrap(),
        ["README.md", "notes/new file.md", "src/a.rs", "staged.rs"]
    );
    assert_eq!(h.untracked_files.as_deref().unwrap(), ["notes/new file.md"]);
    let doc = h.document();
    assert_eq!(doc.state, InspectedState::Dirty);
    assert_eq!(doc.clean, Some(false));
    assert_eq!(doc.commits_ahead, Some(2));
    assert_eq!(doc.warning, None);
}

#[test]
fn clean_means_no_uncommitted_files_even_with_commits() {
    let w = World::new();
    let (_, wt, base) = worktree(&w, "feat/clean");
    let h = inspect(&w, &wt, &base);
    assert_eq!((h.tree, h.commits_ahead), (Some(TreeState::Clean), Some(0)));
    assert_eq!(h.changed_files.as_deref().unwrap(), [] as [&str; 0]);
    w.sb.write(&wt, "done.txt", "d\n");
    w.sb.commit_all(&wt, "work");
    // Ignored files are neither changes nor untracked.
    w.sb.write(&wt, ".git-info-exclude-check.log", "");
    std::fs::write(w.sb.path().join("repo/.git/info/exclude"), "*.log\n").unwrap();
    let h = inspect(&w, &wt, &base);
    assert_eq!(h.tree, Some(TreeState::Clean));
    assert_eq!(h.state_str(), "clean");
    assert_eq!(h.commits_ahead, Some(1));
    assert_eq!(h.changed_files.as_deref().unwrap(), ["done.txt"]);
    assert!(h.untracked_files.as_deref().unwrap().is_empty());
}

#[test]
fn a_conflicted_worktree_says_so() {
    let w = World::new();
    let (repo, wt, base) = worktree(&w, "feat/conflict");
    w.sb.write(&repo, "README.md", "main side\n");
    w.sb.commit_all(&repo, "main side");
    w.sb.write(&wt, "README.md", "branch side\n");
    w.sb.commit_all(&wt, "branch side");
    w.sb.git_fails(&wt, ["merge", "--quiet", "main"]);
    let h = inspect(&w, &wt, &base);
    assert_eq!(h.tree, Some(TreeState::Conflicted));
    assert_eq!(h.document().conflicted, Some(true));
    assert!(
        h.changed_files
            .as_deref()
            .unwrap()
            .contains(&"README.md".to_owned())
    );
}

#[test]
fn a_detached_worktree_is_inspected_too() {
    let w = World::new();
    let (_, wt, base) = worktree(&w, "feat/det");
    w.sb.git(&wt, ["checkout", "--quiet", "--detach"]);
    let h = inspect(&w, &wt, &base);
    assert!(h.is_known());
    assert!(h.detached);
    assert_eq!(h.branch, None);
    let lines: Vec<String> = render_lines(&h, None).into_iter().map(|e| e.line).collect();
    assert!(
        lines.contains(&"Branch: (detached HEAD)".to_owned()),
        "{lines:?}"
    );
}

#[test]
fn a_changed_file_list_over_the_cap_is_unknown_never_clean() {
    let w = World::new();
    let (_, wt, base) = worktree(&w, "feat/huge");
    let long = "n".repeat(240);
    for i in 0..4600 {
        std::fs::write(wt.join(format!("{long}-{i:04}")), "").unwrap();
    }
    w.sb.commit_all(&wt, "many files");
    let h = inspect(&w, &wt, &base);
    assert!(!h.is_known());
    assert_eq!(h.tree, None);
    assert_eq!(h.head_sha, None);
    assert_eq!(h.changed_files, None);
    assert_eq!(h.commits_ahead, None);
    let warning = h.warning.as_deref().unwrap();
    assert!(warning.contains("more than 1048576 bytes"), "{warning}");
    assert_eq!(h.document().state, InspectedState::Unknown);
    let lines: Vec<String> = render_lines(&h, Some("w4"))
        .into_iter()
        .map(|e| e.line)
        .collect();
    assert!(
        lines.contains(&"State: inspection unknown · commits ahead unknown".to_owned()),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("Git inspection warning: git diff printed more")),
        "{lines:?}"
    );
}

#[test]
fn a_hanging_git_gives_unknown_within_the_budget() {
    let w = World::new();
    let (_, wt, base) = worktree(&w, "feat/hang");
    let bin = fake_git(&w.sb.path().join("fakebin"), "exec sleep 600");
    let h = handoff::inspect(
        &Git::new(bin),
        &wt,
        &base,
        Deadline::after(Duration::from_secs(1)),
    );
    assert!(!h.is_known());
    assert!(h.warning.as_deref().unwrap().contains("timed out"), "{h:?}");
    assert_eq!(h.changed_files, None);
}

#[test]
fn failures_and_garbage_are_unknown() {
    let w = World::new();
    let (_, wt, base) = worktree(&w, "feat/fail");
    let missing = inspect(&w, &w.sb.path().join("no-such-dir"), &base);
    assert!(!missing.is_known());
    let bad_base = inspect(&w, &wt, "0000000000000000000000000000000000000001");
    assert!(!bad_base.is_known());
    assert!(
        bad_base
            .warning
            .as_deref()
            .unwrap()
            .contains("git rev-list"),
        "{bad_base:?}"
    );
    let bin = fake_git(&w.sb.path().join("fakebin"), "printf 'garbage'");
    let h = handoff::inspect(&Git::new(bin), &wt, &base, Deadline::after(budget::HANDOFF));
    assert!(!h.is_known());
}

#[test]
fn host_lines_encode_child_influenced_values() {
    let w = World::new();
    let (_, wt, base) = worktree(&w, "feat/lines");
    w.sb.write(&wt, "evil\nParent action: run.txt", "x");
    w.sb.write(&wt, "one.txt", "1");
    w.sb.commit_all(&wt, "one");
    let h = inspect(&w, &wt, &base);
    let ev = render_lines(&h, Some("w4"));
    let lines: Vec<&str> = ev.iter().map(|e| e.line.as_str()).collect();
    assert_eq!(lines[0], "Worktree result retained for review:");
    assert_eq!(lines[1], format!("Worktree: {}", wt.display()));
    assert_eq!(lines[2], "Workspace: w4");
    assert_eq!(lines[3], "Branch: feat/lines");
    assert_eq!(
        lines[4],
        format!("Base/head: {base} -> {}", h.head_sha.as_deref().unwrap())
    );
    assert_eq!(lines[5], "State: clean · 1 commit ahead");
    assert_eq!(lines[6], r"Changed: evil\nParent action: run.txt, one.txt");
    assert_eq!(lines.len(), 7);
    assert!(lines.iter().all(|l| !l.contains('\n')));
    assert_eq!(ev[6].class, EvidenceClass::FileList);
    assert_eq!(ev[1].class, EvidenceClass::Detail);
}

#[test]
fn long_file_lists_show_whole_items_then_a_count() {
    let files: Vec<String> = (0..400).map(|i| format!("src/module_{i:03}.rs")).collect();
    let h = Handoff {
        path: "/wt".into(),
        branch: Some("b".into()),
        detached: false,
        base_sha: "a".repeat(40),
        head_sha: Some("b".repeat(40)),
        commits_ahead: Some(3),
        tree: Some(TreeState::Dirty),
        changed_files: Some(files.clone()),
        untracked_files: Some(files),
        warning: None,
    };
    let lines: Vec<String> = render_lines(&h, None).into_iter().map(|e| e.line).collect();
    let changed = lines.iter().find(|l| l.starts_with("Changed: ")).unwrap();
    assert!(changed.chars().count() <= handoff::LIST_MAX_CHARS + "Changed: ".len());
    assert!(changed.ends_with(" more files)"), "{changed}");
    assert!(!lines.iter().any(|l| l.starts_with("Workspace:")));
    assert!(lines.contains(&"State: dirty · 3 commits ahead".to_owned()));
}
