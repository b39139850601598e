//! What setup reads from the repository, and whose word lets it run: files that could make it
//! wait (a FIFO where a file belongs), the code an approval covers, and the folder a parent's
//! trust was given for.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::setup::{All, approve, checkout, repo, says, setup_of};
use crate::{Run, World};

/// How long a creation that must not wait may take, at most.
const NO_WAIT: Duration = Duration::from_secs(30);

/// `create` that fails the test if it takes longer than [`NO_WAIT`].
fn create_within(w: &World, repo: &Path, branch: &str, run_id: &str) -> Run {
    w.run_within(
        &[
            "create",
            "--cwd",
            repo.to_str().expect("a UTF-8 path"),
            "--branch",
            branch,
            "--run-id",
            run_id,
            "--surface",
            "git",
            "--json",
        ],
        &[],
        NO_WAIT,
    )
}

fn mkfifo(path: &Path) {
    let cmd = herd_core::subprocess::Command::new("mkfifo", Duration::from_secs(10))
        .args([path])
        .stdin_null();
    let out = herd_core::subprocess::run(&cmd).expect("mkfifo runs");
    assert!(out.success(), "mkfifo {}", path.display());
}

/// The user's own setup file of `repo` (which needs no approval), with `toml`.
fn user_file(w: &World, repo: &Path, toml: &str) -> PathBuf {
    let file = herd_worktree::setup::config::user_file(&w.sb.home().join(".config/herd"), repo);
    std::fs::create_dir_all(file.parent().expect("a parent")).expect("the directory is made");
    std::fs::write(&file, toml).expect("the file is written");
    file
}

#[test]
fn a_when_file_turned_into_a_symlink_to_a_fifo_never_makes_creation_wait() {
    let w = World::new();
    let repo = repo(&w, "deps/\n", &[("lock", "v1\n")], &[]);
    std::fs::create_dir_all(repo.join("deps")).unwrap();
    std::fs::write(repo.join("deps/a"), "a\n").unwrap();
    user_file(
        &w,
        &repo,
        "[[link]]\npath = \"deps\"\nstrategy = \"copy\"\nwhen = \"lock\"\n",
    );
    // A commit turns the `when` file into a symlink to a FIFO nobody writes to.
    let fifo = w.sb.path().join("fifo");
    mkfifo(&fifo);
    std::fs::remove_file(repo.join("lock")).unwrap();
    std::os::unix::fs::symlink(&fifo, repo.join("lock")).unwrap();
    w.sb.commit_all(&repo, "lock is a fifo");

    let run = create_within(&w, &repo, "feat", "r1");
    assert_eq!(run.code, 0, "{run:?}");
    let (setup, m) = setup_of(&w, "r1");
    assert!(
        setup
            .skipped
            .iter()
            .any(|s| s.contains("link of deps") && s.contains("not a regular file")),
        "{m:?}"
    );
    assert!(!checkout(&w, "feat").join("deps").exists());
}

#[test]
fn setup_files_that_are_fifos_are_refused_without_waiting() {
    for rel in [".herd/worktree.toml", ".worktreeinclude"] {
        let w = World::new();
        let repo = repo(&w, "", &[], &[]);
        let fifo = w.sb.path().join("fifo");
        mkfifo(&fifo);
        let at = repo.join(rel);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&fifo, &at).unwrap();
        w.sb.commit_all(&repo, "a fifo");
        let run = create_within(&w, &repo, "feat", "r1");
        assert_eq!(run.code, 2, "{rel}: {run:?}");
        assert!(run.all().contains(rel), "{rel}: {run:?}");
    }
}

#[test]
fn the_parents_trust_holds_only_for_the_folder_it_was_given_for() {
    let w = World::new();
    let repo = repo(
        &w,
        "",
        &[(".herd/worktree.toml", "setup = [\"touch ran.txt\"]\n")],
        &[],
    );
    approve(&w, &repo);
    let elsewhere = w.sb.repo("elsewhere");
    std::fs::create_dir_all(repo.join("sub")).unwrap();
    // A parent that trusts the folder it launches from, `from`.
    let create_from = |from: &Path, branch: &str, run_id: &str| {
        w.run_at(
            from,
            &[
                "create",
                "--cwd",
                repo.to_str().expect("a UTF-8 path"),
                "--branch",
                branch,
                "--run-id",
                run_id,
                "--surface",
                "git",
                "--json",
            ],
            &[("HERD_PROJECT_TRUST".into(), "trusted".into())],
            herd_e2e::cli::RUN_BUDGET,
        )
    };
    let ran = |branch: &str| checkout(&w, branch).join("ran.txt").exists();

    // Trusted for another repository: this one's setup does not run, and the creation says why.
    let run = create_from(&elsewhere, "a", "ra");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!ran("a"), "{run:?}");
    assert!(says(&run, "does not hold this repository"), "{run}");
    // Trusted for a folder inside the repository: its setup file is outside what was trusted.
    let run = create_from(&repo.join("sub"), "b", "rb");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!ran("b"), "{run:?}");
    assert!(says(&run, "does not hold this repository"), "{run}");

    // Trusted for the repository, or for a folder that holds it: the approved setup runs.
    let run = create_from(&repo, "c", "rc");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(ran("c"), "{run:?}");
    let run = create_from(&w.sb.path(), "d", "rd");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(ran("d"), "{run:?}");
}
