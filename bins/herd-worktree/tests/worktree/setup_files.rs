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

/// `create --base BASE` (or from `HEAD`) by a parent that trusts the project.
fn create_at(w: &World, repo: &Path, branch: &str, run_id: &str, base: Option<&str>) -> Run {
    let mut args = vec![
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
    ];
    if let Some(base) = base {
        args.extend(["--base", base]);
    }
    w.run_with_env(&args, &[("HERD_PROJECT_TRUST".into(), "trusted".into())])
}

/// What the setup script wrote in the worktree of `branch`, if it ran.
fn script_ran(w: &World, branch: &str) -> Option<String> {
    std::fs::read_to_string(checkout(w, branch).join("ran.txt")).ok()
}

#[test]
fn an_approval_covers_the_script_its_command_names_at_the_commit_used() {
    let w = World::new();
    let repo = repo(
        &w,
        "",
        &[
            (".herd/worktree.toml", "setup = [\"sh ./scripts/gen.sh\"]\n"),
            ("scripts/gen.sh", "echo v1 > ran.txt\n"),
            ("README", "one\n"),
        ],
        &[],
    );
    let shown = approve(&w, &repo);
    assert!(shown.stdout.contains("scripts/gen.sh"), "{shown:?}");

    // A later commit that leaves the script as approved: its worktrees run it, asking nothing.
    w.sb.write(&repo, "README", "two\n");
    let unchanged = w.sb.commit_all(&repo, "readme");
    let run = create_at(&w, &repo, "a", "ra", None);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(script_ran(&w, "a").as_deref(), Some("v1\n"), "{run:?}");

    // A commit that changes the script: a worktree made of it asks again, and runs nothing.
    w.sb.write(&repo, "scripts/gen.sh", "echo changed > ran.txt\n");
    let changed = w.sb.commit_all(&repo, "another script");
    let run = create_at(&w, &repo, "b", "rb", Some(&changed));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(script_ran(&w, "b"), None, "{run:?}");
    assert!(says(&run, "scripts/gen.sh"), "{run}");
    assert!(says(&run, "differ"), "{run}");
    // The base a request chooses decides: the approved script's commit still runs.
    let run = create_at(&w, &repo, "c", "rc", Some(&unchanged));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(script_ran(&w, "c").as_deref(), Some("v1\n"), "{run:?}");

    // A commit that moves the script's directory behind a symlink to other code asks again too.
    std::fs::rename(repo.join("scripts"), repo.join("real")).unwrap();
    w.sb.write(&repo, "real/gen.sh", "echo v1 > ran.txt\n");
    w.sb.write(&repo, "elsewhere/gen.sh", "echo linked > ran.txt\n");
    std::os::unix::fs::symlink("elsewhere", repo.join("scripts")).unwrap();
    let linked = w.sb.commit_all(&repo, "scripts is a link");
    let run = create_at(&w, &repo, "d", "rd", Some(&linked));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(script_ran(&w, "d"), None, "{run:?}");

    // Approved again (at HEAD, the linked script), as a document naming what it covers.
    let run = w.run(
        &[
            "trust",
            "--yes",
            "--json",
            "--cwd",
            repo.to_str().expect("a UTF-8 path"),
        ],
        None,
    );
    assert_eq!(run.code, 0, "{run:?}");
    let approved = run.doc::<herd_protocol::worktree::TrustApproved>();
    assert_eq!(approved.commit.as_deref(), Some(linked.as_str()));
    let blob =
        w.sb.git(&repo, ["rev-parse", "HEAD:elsewhere/gen.sh"])
            .trim()
            .to_owned();
    let files: Vec<(&str, &str)> = approved
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.object.as_str()))
        .collect();
    assert_eq!(files, [("scripts/gen.sh", format!("blob {blob}").as_str())]);
    let run = create_at(&w, &repo, "e", "re", None);
    assert_eq!(script_ran(&w, "e").as_deref(), Some("linked\n"), "{run:?}");
    // …and the first script's commit now asks again.
    let run = create_at(&w, &repo, "f", "rf", Some(&unchanged));
    assert_eq!(script_ran(&w, "f"), None, "{run:?}");
}

#[test]
fn approving_refuses_a_named_script_with_changes_not_committed() {
    let w = World::new();
    let repo = repo(
        &w,
        "",
        &[
            (".herd/worktree.toml", "setup = [\"./scripts/gen.sh\"]\n"),
            ("scripts/gen.sh", "echo v1 > ran.txt\n"),
        ],
        &[("scripts/gen.sh", "echo seen > ran.txt\n")],
    );
    let run = w.run(
        &[
            "trust",
            "--yes",
            "--cwd",
            repo.to_str().expect("a UTF-8 path"),
        ],
        None,
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.all().contains("scripts/gen.sh"), "{run:?}");
    assert!(run.all().contains("not committed"), "{run:?}");
    let approval =
        herd_worktree::setup::trust::approval_file(&w.sb.home().join(".config/herd"), &repo);
    assert!(!approval.exists(), "a refused approval records nothing");
}
