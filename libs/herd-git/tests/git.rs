//! herd-git against real repositories: facts, commits, branches, worktrees, status, counting,
//! and a git that hangs.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use herd_git::testkit::Sandbox;
use herd_git::{Deadline, EntryKind, Error, Git, Head, budget};

fn deadline() -> Deadline {
    Deadline::after(budget::HANDOFF)
}

#[test]
fn facts_of_principal_and_linked_checkouts() {
    let sb = Sandbox::new();
    let repo = sb.repo("repo");
    let git = sb.git_handle();
    let facts = git.facts(&repo.join("."), &deadline()).unwrap();
    assert_eq!(facts.toplevel, repo);
    assert!(!facts.is_linked());
    assert_eq!(
        git.principal_checkout(&repo, &facts, &deadline()).unwrap(),
        repo
    );

    let linked = sb.path().join("linked");
    sb.git(
        &repo,
        [
            "worktree",
            "add",
            "--quiet",
            "-b",
            "side",
            linked.to_str().unwrap(),
        ],
    );
    std::fs::create_dir_all(linked.join("sub")).unwrap();
    let facts = git.facts(&linked.join("sub"), &deadline()).unwrap();
    assert_eq!(facts.toplevel, linked);
    assert!(facts.is_linked());
    assert_eq!(facts.common_dir, repo.join(".git"));
    assert_eq!(
        git.principal_checkout(&linked, &facts, &deadline())
            .unwrap(),
        repo
    );
}

#[test]
fn head_branch_and_config() {
    let sb = Sandbox::new();
    let repo = sb.repo("repo");
    let git = sb.git_handle();
    assert_eq!(
        git.head_branch(&repo, &deadline()).unwrap().as_deref(),
        Some("main")
    );
    sb.git(&repo, ["checkout", "--quiet", "--detach"]);
    assert_eq!(git.head_branch(&repo, &deadline()).unwrap(), None);
    assert_eq!(
        git.config_get(&repo, None, "core.worktree", &deadline())
            .unwrap(),
        None
    );
    sb.git(&repo, ["config", "herd.test", "some value"]);
    assert_eq!(
        git.config_get(&repo, None, "herd.test", &deadline())
            .unwrap()
            .as_deref(),
        Some("some value")
    );
    let outside = sb.path();
    let git_dir = repo.join(".git");
    assert_eq!(
        git.config_get(&outside, Some(&git_dir), "herd.test", &deadline())
            .unwrap()
            .as_deref(),
        Some("some value")
    );
}

#[test]
fn commits_resolve_exactly_and_unknown_revisions_are_none() {
    let sb = Sandbox::new();
    let repo = sb.repo("repo");
    let git = sb.git_handle();
    let head = sb.head(&repo);
    let (facts, sha) = git.facts_and_commit(&repo, "HEAD", &deadline()).unwrap();
    assert_eq!(sha.as_deref(), Some(head.as_str()));
    assert_eq!(facts.toplevel, repo);
    let (_, none) = git
        .facts_and_commit(&repo, "no-such-rev", &deadline())
        .unwrap();
    assert_eq!(none, None);
    // A revision that looks like an option is a revision, never an option.
    let (_, none) = git.facts_and_commit(&repo, "--all", &deadline()).unwrap();
    assert_eq!(none, None);
    assert_eq!(
        git.resolve_commit(&repo, "main", &deadline()).unwrap(),
        Some(head)
    );
    assert_eq!(
        git.resolve_commit(&repo, "nope", &deadline()).unwrap(),
        None
    );

    let not_repo = sb.path().join("plain");
    std::fs::create_dir_all(&not_repo).unwrap();
    let err = git
        .facts_and_commit(&not_repo, "HEAD", &deadline())
        .unwrap_err();
    assert!(matches!(err, Error::Failed { .. }), "{err}");
    assert!(err.to_string().contains("not a git repository"), "{err}");
}

#[test]
fn branches_and_worktrees() {
    let sb = Sandbox::new();
    let repo = sb.repo("repo");
    let git = sb.git_handle();
    let base = sb.head(&repo);
    assert!(git.branch_exists(&repo, "main", &deadline()).unwrap());
    assert!(!git.branch_exists(&repo, "feat/x", &deadline()).unwrap());

    let wt = sb.path().join("wts/feat x");
    std::fs::create_dir_all(wt.parent().unwrap()).unwrap();
    git.worktree_add(
        &repo,
        &wt,
        "feat/x",
        &base,
        &Deadline::after(budget::ACQUISITION),
    )
    .unwrap();
    assert!(git.branch_exists(&repo, "feat/x", &deadline()).unwrap());
    let err = git
        .worktree_add(
            &repo,
            &sb.path().join("other"),
            "feat/x",
            &base,
            &deadline(),
        )
        .unwrap_err();
    assert!(err.to_string().contains("already exists"), "{err}");

    sb.git(&wt, ["checkout", "--quiet", "--detach"]);
    let list = git.worktree_list(&repo, &deadline()).unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0].path, repo);
    assert_eq!(list[0].branch.as_deref(), Some("main"));
    assert_eq!(list[1].path, wt);
    assert_eq!(list[1].branch_label(), "(detached HEAD)");

    // Removal is never forced: a dirty checkout stays.
    sb.write(&wt, "dirty.txt", "x");
    assert!(git.worktree_remove(&repo, &wt, &deadline()).is_err());
    assert!(wt.exists());
    std::fs::remove_file(wt.join("dirty.txt")).unwrap();
    git.worktree_remove(&repo, &wt, &deadline()).unwrap();
    assert!(!wt.exists());
    git.worktree_prune(&repo, &deadline()).unwrap();
    assert_eq!(git.worktree_list(&repo, &deadline()).unwrap().len(), 1);
}

#[test]
fn status_sees_every_kind_of_change() {
    let sb = Sandbox::new();
    let repo = sb.repo("repo");
    let git = sb.git_handle();
    sb.write(&repo, "tracked.txt", "one\n");
    sb.write(&repo, "gone.txt", "bye\n");
    sb.write(&repo, ".gitignore", "*.log\n");
    sb.commit_all(&repo, "more");
    sb.write(&repo, "tracked.txt", "two\n");
    std::fs::remove_file(repo.join("gone.txt")).unwrap();
    sb.write(&repo, "staged.txt", "new\n");
    sb.git(&repo, ["add", "staged.txt"]);
    sb.write(&repo, "dir/untracked file.txt", "u\n");
    sb.write(&repo, "debug.log", "ignored\n");

    let status = git.status(&repo, &deadline()).unwrap();
    assert_eq!(status.head, Some(Head::Branch("main".into())));
    assert_eq!(status.head_oid.as_deref(), Some(sb.head(&repo).as_str()));
    assert!(!status.is_clean());
    assert!(!status.is_conflicted());
    let mut changed: Vec<_> = status.changed_paths().collect();
    changed.sort_unstable();
    assert_eq!(
        changed,
        [
            "dir/untracked file.txt",
            "gone.txt",
            "staged.txt",
            "tracked.txt"
        ]
    );
    assert_eq!(
        status.untracked().collect::<Vec<_>>(),
        ["dir/untracked file.txt"]
    );
    assert_eq!(git.count_ignored(&repo, &deadline()).unwrap(), 1);
}

#[test]
fn conflicts_show_as_unmerged() {
    let sb = Sandbox::new();
    let repo = sb.repo("repo");
    let git = sb.git_handle();
    sb.git(&repo, ["checkout", "--quiet", "-b", "other"]);
    sb.write(&repo, "README.md", "other\n");
    sb.commit_all(&repo, "other");
    sb.git(&repo, ["checkout", "--quiet", "main"]);
    sb.write(&repo, "README.md", "main\n");
    sb.commit_all(&repo, "main");
    sb.git_fails(&repo, ["merge", "--quiet", "other"]);
    let status = git.status(&repo, &deadline()).unwrap();
    assert!(status.is_conflicted());
    let unmerged: Vec<_> = status
        .entries
        .iter()
        .filter(|e| e.kind == EntryKind::Unmerged)
        .map(|e| e.path.as_str())
        .collect();
    assert_eq!(unmerged, ["README.md"]);
}

#[test]
fn ahead_counts_and_committed_changes() {
    let sb = Sandbox::new();
    let repo = sb.repo("repo");
    let git = sb.git_handle();
    let base = sb.head(&repo);
    sb.write(&repo, "a.txt", "a\n");
    sb.commit_all(&repo, "a");
    sb.git(&repo, ["mv", "README.md", "README2.md"]);
    sb.commit_all(&repo, "rename");
    assert_eq!(git.commits_ahead(&repo, &base, &deadline()).unwrap(), 2);
    let mut files = git
        .changed_since_merge_base(&repo, &base, &deadline())
        .unwrap();
    files.sort();
    assert_eq!(files, ["README.md", "README2.md", "a.txt"]);
    assert!(
        git.commits_ahead(
            &repo,
            "0000000000000000000000000000000000000001",
            &deadline()
        )
        .is_err()
    );
}

#[test]
fn a_base_is_never_read_as_an_option() {
    // A base that looks like an option must name a revision (and fail), never steer git: as an
    // option, `--output=<file>` would make `git diff` write that file.
    let sb = Sandbox::new();
    let repo = sb.repo("repo");
    let git = sb.git_handle();
    let planted = sb.path().join("planted");
    let base = format!("--output={}", planted.display());
    assert!(
        git.changed_since_merge_base(&repo, &base, &deadline())
            .is_err()
    );
    assert!(git.commits_ahead(&repo, &base, &deadline()).is_err());
    let written: Vec<_> = std::fs::read_dir(sb.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|name| name.to_string_lossy().starts_with("planted"))
        .collect();
    assert!(written.is_empty(), "git wrote {written:?}");
}

#[test]
fn ignored_files_are_counted_without_holding_the_listing() {
    let sb = Sandbox::new();
    let repo = sb.repo("repo");
    let git = sb.git_handle();
    sb.write(&repo, ".gitignore", "build/\n");
    // More names than the 1 MiB output cap would hold.
    let dir = repo.join("build");
    std::fs::create_dir_all(&dir).unwrap();
    let long = "x".repeat(200);
    for i in 0..6000 {
        std::fs::write(dir.join(format!("{long}-{i}")), "").unwrap();
    }
    assert_eq!(git.count_ignored(&repo, &deadline()).unwrap(), 6000);
    let plain = sb.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let err = git.count_ignored(&plain, &deadline()).unwrap_err();
    assert!(matches!(err, Error::Failed { .. }), "{err}");
}

#[test]
fn oversized_output_is_an_error_not_a_truncated_answer() {
    let sb = Sandbox::new();
    let repo = sb.repo("repo");
    let git = sb.git_handle();
    let long = "y".repeat(250);
    for i in 0..5000 {
        std::fs::write(repo.join(format!("{long}-{i}")), "").unwrap();
    }
    let err = git.status(&repo, &deadline()).unwrap_err();
    assert!(matches!(err, Error::TooLarge { .. }), "{err}");
}

fn fake_git(dir: &Path, body: &str) -> std::path::PathBuf {
    let path = dir.join("git");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("the fake git can be written");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .expect("the fake git can be made executable");
    path
}

#[test]
fn a_hanging_git_times_out_within_the_deadline() {
    let sb = Sandbox::new();
    let repo = sb.repo("repo");
    let git = Git::new(fake_git(&sb.path(), "exec sleep 600"));
    let err = git
        .status(&repo, &Deadline::after(Duration::from_secs(1)))
        .unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err}");
    // A spent deadline starts nothing.
    let spent = Deadline::after(Duration::ZERO);
    assert!(matches!(
        git.status(&repo, &spent),
        Err(Error::Timeout { .. })
    ));
}

#[test]
fn garbage_from_git_is_malformed_and_a_missing_git_is_a_spawn_error() {
    let sb = Sandbox::new();
    let repo = sb.repo("repo");
    let git = Git::new(fake_git(&sb.path(), "printf 'not porcelain\\0'"));
    assert!(matches!(
        git.status(&repo, &deadline()),
        Err(Error::Malformed { .. })
    ));
    assert!(matches!(
        git.worktree_list(&repo, &deadline()),
        Err(Error::Malformed { .. })
    ));
    let git = Git::new(sb.path().join("no-such-git"));
    assert!(matches!(
        git.status(&repo, &deadline()),
        Err(Error::Spawn { .. })
    ));
}

/// The gitlinks `git ls-files --stage` reports, path and whether in conflict, each path once.
fn gitlinks_by_git(sb: &Sandbox, repo: &Path) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = Vec::new();
    for line in sb
        .git(repo, ["ls-files", "--stage", "-z"])
        .split('\0')
        .filter(|l| !l.is_empty())
    {
        let (meta, path) = line.split_once('\t').expect("a stage line has a tab");
        let fields: Vec<&str> = meta.split(' ').collect();
        if fields[0] != "160000" {
            continue;
        }
        let conflicted = fields[2] != "0";
        match out.last_mut() {
            Some(last) if last.0 == path => last.1 |= conflicted,
            _ => out.push((path.to_owned(), conflicted)),
        }
    }
    out
}

#[test]
fn gitlinks_of_the_index_match_git_in_every_index_version() {
    use herd_git::index::{Gitlinks, gitlinks};
    let sb = Sandbox::new();
    let repo = sb.repo("repo");
    let head = sb.head(&repo);
    for i in 0..300 {
        sb.write(&repo, &format!("d{}/file-{i}.txt", i % 7), "x\n");
    }
    sb.git(&repo, ["add", "."]);
    // Gitlinks whose directories do not exist (`git add .` would record them as removed).
    for path in ["a-sub", "d3/nested sub", "zz/ü-sub"] {
        let info = format!("160000,{head},{path}");
        sb.git(&repo, ["update-index", "--add", "--cacheinfo", &info]);
    }
    // An intent-to-add entry carries the extended flags (version 3).
    sb.write(&repo, "later.txt", "y\n");
    sb.git(&repo, ["add", "--intent-to-add", "later.txt"]);
    let git_dir = repo.join(".git");
    let expected = gitlinks_by_git(&sb, &repo);
    assert_eq!(expected.len(), 3);
    for version in ["3", "4", "2"] {
        if version == "2" {
            sb.git(&repo, ["rm", "--cached", "--quiet", "later.txt"]);
        }
        sb.git(&repo, ["update-index", "--index-version", version]);
        let Gitlinks::Paths(found) = gitlinks(&git_dir, 20) else {
            panic!("index version {version} is not read");
        };
        let found: Vec<(String, bool)> = found
            .into_iter()
            .map(|l| (l.path.to_str().unwrap().to_owned(), l.conflicted))
            .collect();
        assert_eq!(found, expected, "index version {version}");
    }
    // A split index keeps its entries elsewhere: left to git.
    sb.git(&repo, ["update-index", "--split-index"]);
    assert!(matches!(gitlinks(&git_dir, 20), Gitlinks::Unreadable(_)));
    // No index records nothing.
    let empty = sb.path().join("no-index");
    std::fs::create_dir_all(&empty).unwrap();
    assert_eq!(gitlinks(&empty, 20), Gitlinks::Paths(Vec::new()));
}
