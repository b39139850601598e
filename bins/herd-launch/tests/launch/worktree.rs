//! Launches into a new managed worktree.

use std::path::PathBuf;

use herd_protocol::launch::policy::{Owner, Policy};
use herd_protocol::layout::{Artifacts, SessionFiles};
use herd_protocol::worktree::{Manifest, State};

use crate::support::{ack, exit_code, read, repo_env};

#[test]
fn a_worktree_launch_runs_the_child_in_a_new_managed_checkout() {
    let (env, head) = repo_env();
    let root = env.dir.path().join("managed");
    let request = serde_json::json!({"name": "Ticket 1", "task": "t", "cwd": "repo", "worktree": {"branch": "ticket/1"}});
    let run = env.spawn_exec("process", &request, &["--done"]);
    assert_eq!(run.code, 0, "{run}");
    let launched = ack(&run);
    let wt = launched.worktree.as_ref().expect("the worktree");
    assert_eq!(wt.branch, "ticket/1");
    assert_eq!(wt.base_sha, head);
    let path = PathBuf::from(&wt.path);
    assert!(path.starts_with(&root), "{}", path.display());
    let run_id = launched.run_id.as_str();
    assert_eq!(exit_code(&env, run_id), 0);
    // The child ran in the worktree.
    assert!(path.join("child.pid").exists());
    let manifest = Manifest::load(&Artifacts::new(env.art()), run_id).unwrap();
    assert_eq!(manifest.state, State::Running);
    assert_eq!(manifest.branch.as_deref(), Some("ticket/1"));
    let policy = SessionFiles::new(&launched.session_file)
        .read::<Policy>()
        .unwrap()
        .expect("the launch wrote its policy");
    assert_eq!(policy.owner, Owner::ManagedWorktree);
    assert_eq!(policy.worktree.unwrap().branch, "ticket/1");
}

#[test]
fn a_worktree_launch_asks_git_about_the_source_once() {
    let (mut env, _) = repo_env();
    // A confined child's git overlay asks git once more, for the branch it starts from.
    env.unconfined();
    // Every git the launch starts goes through this one, which logs it.
    let bin = env.dir.path().join("logged-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = env.dir.path().join("git-calls.log");
    let real = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join("git"))
        .find(|git| git.is_file())
        .expect("git on PATH");
    std::fs::write(
        bin.join("git"),
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(bin.join("git"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    env.set("PATH", path);
    let request =
        serde_json::json!({"name": "w", "task": "t", "cwd": "repo", "worktree": {"branch": "w/1"}});
    let run = env.spawn_exec("process", &request, &["--done"]);
    assert_eq!(run.code, 0, "{run}");
    let calls = read(&log).unwrap();
    let calls: Vec<&str> = calls.lines().collect();
    // The source and its base once, the branch before the claim and again under the checkout's
    // lock, then the checkout itself.
    assert_eq!(calls.len(), 4, "{calls:#?}");
    assert_eq!(
        calls
            .iter()
            .filter(|c| c.contains("--show-toplevel"))
            .count(),
        1,
        "{calls:#?}"
    );
    assert!(calls[3].starts_with("worktree add"), "{calls:#?}");
}

#[test]
fn a_parents_trust_runs_setup_only_for_a_repository_in_its_folder() {
    let (mut env, _) = repo_env();
    env.set("HERD_PROJECT_TRUST", "trusted");
    // The parent launches from `work`, which it trusts; `work/here` is inside, `elsewhere` not.
    let here = env.work().join("here");
    let elsewhere = env.dir.path().join("elsewhere");
    let toml = "setup = [\"touch ran.txt\"]\n";
    crate::support::approved_setup_repo(&env, &here, toml);
    crate::support::approved_setup_repo(&env, &elsewhere, toml);
    let ran = |cwd: &std::path::Path, branch: &str| {
        let request = serde_json::json!({"name": branch, "task": "t", "cwd": cwd, "worktree": {"branch": branch}});
        let run = env.spawn_exec("process", &request, &["--done"]);
        assert_eq!(run.code, 0, "{run}");
        let launched = ack(&run);
        let wt = PathBuf::from(&launched.worktree.as_ref().expect("a worktree").path);
        (wt.join("ran.txt").exists(), launched)
    };
    let (set_up, launched) = ran(&here, "in-folder");
    assert!(set_up, "{launched:?}");
    let (set_up, launched) = ran(&elsewhere, "elsewhere");
    assert!(!set_up, "{launched:?}");
    assert!(
        launched
            .diagnostics
            .iter()
            .any(|d| d.contains("does not hold this repository")),
        "{launched:?}"
    );
}

#[test]
fn from_the_command_line_one_approval_runs_setup_and_a_skip_names_what_is_missing() {
    let (mut env, _) = repo_env();
    let toml = "setup = [\"touch ran.txt\"]\n";
    let approved = env.work().join("approved");
    crate::support::approved_setup_repo(&env, &approved, toml);
    let unapproved = env.work().join("unapproved");
    crate::support::approved_setup_repo(&env, &unapproved, toml);
    std::fs::remove_dir_all(env.dir.path().join("home/.config/herd/trust")).unwrap();
    crate::support::approved_setup_repo(&env, &approved, toml);
    let launch = |env: &crate::support::Env, cwd: &std::path::Path, branch: &str| {
        let request = serde_json::json!({"name": branch, "task": "t", "cwd": cwd, "worktree": {"branch": branch}});
        let run = env.spawn_exec("process", &request, &["--done"]);
        assert_eq!(run.code, 0, "{run}");
        let launched = ack(&run);
        let wt = PathBuf::from(&launched.worktree.as_ref().expect("a worktree").path);
        (wt.join("ran.txt").exists(), launched.diagnostics.join("\n"))
    };
    // No parent decided (a shell): the person's approval is enough.
    let (set_up, said) = launch(&env, &approved, "cli-approved");
    assert!(set_up, "{said}");
    assert!(!said.contains("skipped"), "{said}");
    // Not approved: the one thing missing is named, with what gives it.
    let (set_up, said) = launch(&env, &unapproved, "cli-unapproved");
    assert!(!set_up, "{said}");
    let file = std::fs::canonicalize(&unapproved).unwrap();
    assert!(
        said.contains(&format!(
            "skipped 1 setup command of {}/.herd/worktree.toml: you have not approved it: review it and run `herd-worktree trust --cwd {}`",
            file.display(),
            file.display()
        )),
        "{said}"
    );
    assert!(!said.contains("HERD_PROJECT_TRUST"), "{said}");
    // A Pi parent that does not trust the project: its trust is what is missing, not approval.
    env.set("HERD_PROJECT_TRUST", "untrusted");
    let (set_up, said) = launch(&env, &approved, "pi-untrusted");
    assert!(!set_up, "{said}");
    assert!(
        said.contains("the Pi session that launched it does not trust this project folder (HERD_PROJECT_TRUST=untrusted)"),
        "{said}"
    );
    assert!(!said.contains("herd-worktree trust"), "{said}");
    // Both missing: both named.
    let (_, said) = launch(&env, &unapproved, "pi-untrusted-unapproved");
    assert!(
        said.contains("(HERD_PROJECT_TRUST=untrusted): trust the folder in that Pi session; and you have not approved it"),
        "{said}"
    );
}
