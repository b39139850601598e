//! What `create` never does: a checkout outside the canonical managed root, two winners of one
//! branch, a loser's leftovers naming the winner's checkout, or a file others may read.

#![expect(
    clippy::unwrap_used,
    reason = "a broken fixture should fail the test loudly"
)]

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use herd_core::ErrorCode;
use herd_e2e::cli;
use herd_protocol::worktree::{WorktreeCreate, claims};

use crate::{Run, World, entries, refusal, shown};

fn create_args<'a>(repo: &'a str, branch: &'a str, run_id: &'a str) -> Vec<&'a str> {
    vec![
        "create",
        "--cwd",
        repo,
        "--branch",
        branch,
        "--run-id",
        run_id,
        "--surface",
        "git",
        "--json",
    ]
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().mode() & 0o7777
}

#[test]
fn a_symlink_in_the_managed_root_that_leaves_it_is_refused_and_nothing_is_created() {
    let w = World::new();
    let repo = w.sb.repo("repo");
    let outside = w.sb.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(w.managed_root()).unwrap();
    std::os::unix::fs::symlink(&outside, w.managed_root().join("repo")).unwrap();
    let before = w.sb.git(&repo, ["worktree", "list", "--porcelain"]);

    let run = w.run(&create_args(repo.to_str().unwrap(), "feat/x", "r1"), None);
    assert_eq!(run.code, 2, "{run:?}");
    let err = refusal(&run);
    assert_eq!(err.code, ErrorCode::InvalidRequest, "{run}");
    assert_eq!(err.field.as_deref(), Some("HERD_WORKTREE_ROOT"), "{run}");
    assert!(err.message.contains("symlink"), "{run}");
    assert!(entries(&outside).is_empty(), "nothing was created outside");
    assert!(entries(&w.artifacts().worktree_runs_dir()).is_empty());
    assert_eq!(w.sb.git(&repo, ["branch", "--list", "feat/x"]), "");
    assert_eq!(w.sb.git(&repo, ["worktree", "list", "--porcelain"]), before);
}

#[test]
fn a_managed_root_that_is_a_symlink_keeps_working_and_the_printed_path_is_canonical() {
    let w = World::new();
    let repo = w.sb.repo("repo");
    let real = w.sb.path().join("real-root");
    std::fs::create_dir_all(&real).unwrap();
    std::os::unix::fs::symlink(&real, w.managed_root()).unwrap();

    let run = w.run(&create_args(repo.to_str().unwrap(), "feat/y", "r1"), None);
    assert_eq!(run.code, 0, "{run:?}");
    let path = real.join("repo/feat-y");
    assert_eq!(
        run.doc::<WorktreeCreate>().path,
        path.to_str().unwrap(),
        "{run}"
    );
    assert!(path.join("README.md").exists());
    let show = w.run(&["show", "--run-id", "r1", "--json"], None);
    assert_eq!(shown(&show).path.as_deref(), Some(path.as_path()), "{show}");
}

#[test]
fn concurrent_creates_of_one_branch_have_one_winner_and_every_loser_answers_conflict() {
    const N: usize = 8;
    let w = World::new();
    let repo = w.sb.repo("repo");
    let repo_s = repo.to_str().unwrap().to_owned();
    let barrier = std::sync::Barrier::new(N);
    let runs: Vec<(String, Run)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..N)
            .map(|i| {
                let (w, barrier, repo_s) = (&w, &barrier, &repo_s);
                scope.spawn(move || {
                    let run_id = format!("r{i}");
                    barrier.wait();
                    let run = w.run(&create_args(repo_s, "feat/race", &run_id), None);
                    (run_id, run)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let winners: Vec<&(String, Run)> = runs.iter().filter(|(_, r)| r.code == 0).collect();
    assert_eq!(winners.len(), 1, "{runs:#?}");
    for (id, run) in &runs {
        if run.code == 0 {
            continue;
        }
        // A loser that met the winner's creation running is refused as busy; one that came
        // after it had finished finds the branch taken, which no retry makes good.
        let err = refusal(run);
        match run.code {
            7 => assert_eq!(err.code, ErrorCode::Conflict, "{id}: {run:?}"),
            2 => assert_eq!(err.code, ErrorCode::InvalidRequest, "{id}: {run:?}"),
            _ => panic!("{id}: {run:?}"),
        }
        assert_eq!(err.field.as_deref(), Some("branch"), "{id}: {run:?}");
    }
    let (winner, run) = winners[0];
    let path = PathBuf::from(run.doc::<WorktreeCreate>().path);
    // No loser left a manifest, so the winner's checkout has one owner, and cleanup can tell.
    assert_eq!(
        entries(&w.artifacts().worktree_runs_dir()),
        [format!("{winner}.json")]
    );
    let ownership = claims::ownership_of(&w.artifacts(), &path).unwrap();
    let owners: Vec<&str> = ownership.owners.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(owners, [winner.as_str()]);
    assert!(ownership.undecidable.is_empty(), "{ownership:?}");
    let listed = w.sb.git(&repo, ["worktree", "list", "--porcelain"]);
    assert_eq!(listed.matches("worktree ").count(), 2, "{listed}");
}

#[test]
fn a_branch_created_before_is_an_invalid_request_and_only_a_creation_running_now_is_busy() {
    let w = World::new();
    let repo = w.sb.repo("repo");
    let repo_s = repo.to_str().unwrap();
    assert_eq!(
        w.run(&create_args(repo_s, "feat/again", "r1"), None).code,
        0
    );

    // The first creation has finished: its branch and checkout are simply there.
    let again = w.run(&create_args(repo_s, "feat/again", "r2"), None);
    assert_eq!(again.code, 2, "{again:?}");
    let err = refusal(&again);
    assert_eq!(err.code, ErrorCode::InvalidRequest, "{again}");
    assert_eq!(err.field.as_deref(), Some("branch"), "{again}");
    assert!(!w.artifacts().worktree_manifest("r2").exists());

    // A creation that holds the checkout's lock right now makes the next one wait its turn.
    let lock = w.managed_root().join("repo/.feat-busy.lock");
    let held = herd_core::lock::exclusive(&lock, std::time::Instant::now()).unwrap();
    let busy = w.run(&create_args(repo_s, "feat/busy", "r3"), None);
    assert_eq!(busy.code, 7, "{busy:?}");
    let err = refusal(&busy);
    assert_eq!(err.code, ErrorCode::Conflict, "{busy}");
    assert_eq!(err.field.as_deref(), Some("branch"), "{busy}");
    assert!(!w.artifacts().worktree_manifest("r3").exists());
    drop(held);
    assert_eq!(w.run(&create_args(repo_s, "feat/busy", "r3"), None).code, 0);
}

#[test]
fn managed_directories_are_private_whatever_the_umask() {
    let w = World::new();
    let repo = w.sb.repo("repo");
    let mut cmd = cli::command("sh")
        .args(["-c", "umask 000 && exec \"$@\"", "sh"])
        .arg(env!("CARGO_BIN_EXE_herd-worktree"))
        .args(create_args(repo.to_str().unwrap(), "feat/p", "r1"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HERD_WORKTREE_ROOT", w.managed_root())
        .env("HERD_ARTIFACTS", w.artifacts().root())
        .cwd(w.sb.path());
    for (k, v) in w.sb.env() {
        cmd = cmd.env(k, v);
    }
    let out = cli::run(&cmd);
    assert_eq!(out.code, 0, "{out}");
    let root = w.managed_root();
    for dir in [
        root.clone(),
        root.join("repo"),
        root.join("repo/feat-p"),
        w.artifacts().root().to_path_buf(),
        w.artifacts().worktree_runs_dir(),
    ] {
        assert_eq!(mode(&dir), 0o700, "{}", dir.display());
    }
    for file in std::fs::read_dir(w.artifacts().root().join("locks"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .chain([w.artifacts().worktree_manifest("r1")])
    {
        assert_eq!(mode(&file), 0o600, "{}", file.display());
    }
}

#[test]
fn a_managed_root_others_may_write_or_own_is_refused_with_nothing_created() {
    let w = World::new();
    let repo = w.sb.repo("repo");
    let root = w.managed_root();
    std::fs::create_dir_all(&root).unwrap();
    let refused = |why: &str| {
        let run = w.run(&create_args(repo.to_str().unwrap(), "feat/q", "r1"), None);
        assert_eq!(run.code, 2, "{why}: {run:?}");
        let err = refusal(&run);
        assert_eq!(
            err.field.as_deref(),
            Some("HERD_WORKTREE_ROOT"),
            "{why}: {run}"
        );
        assert!(entries(&root).is_empty(), "{why}: nothing in the root");
        assert!(!w.artifacts().root().exists(), "{why}: no artifacts");
        assert_eq!(w.sb.git(&repo, ["branch", "--list", "feat/q"]), "");
        err.message
    };
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o777)).unwrap();
    assert!(refused("world-writable").contains("writable"));
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o770)).unwrap();
    assert!(refused("group-writable").contains("writable"));
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700)).unwrap();
    // Giving a directory to another user takes root (the owner of what this test creates);
    // otherwise only the mode rule is tested.
    if std::fs::metadata(&root).unwrap().uid() == 0 {
        std::os::unix::fs::chown(&root, Some(65534), Some(65534)).unwrap();
        assert!(refused("foreign-owned").contains("owned by uid 65534"));
    }
}
