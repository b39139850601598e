//! `herd-worktree trust` as a person uses it: the file shown as it is, what changed since the
//! last approval, a question on a terminal (a real tmux pane), `--yes` for scripts, `--show`,
//! and nothing recorded without a yes.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use herd_e2e::tmux::Tmux;

use crate::World;
use crate::setup::setup_repo;

const BUDGET: Duration = Duration::from_secs(20);

/// A tmux server whose panes get the environment `World::run` gives the binary.
fn tmux_for(w: &World) -> Tmux {
    let mut vars: Vec<(OsString, OsString)> = vec![
        ("PATH".into(), std::env::var_os("PATH").unwrap_or_default()),
        ("HERD_WORKTREE_ROOT".into(), w.managed_root().into()),
        (
            "HERD_ARTIFACTS".into(),
            w.sb.path().join("artifacts").into(),
        ),
        ("TERM".into(), "xterm-256color".into()),
    ];
    vars.extend(w.sb.env());
    let tmux = Tmux::start(&vars);
    tmux.cmd(["set-option", "-g", "remain-on-exit", "on"]);
    tmux
}

/// Runs `herd-worktree trust` in a new pane in `repo`; returns the pane once it asks.
fn ask_in_pane(tmux: &Tmux, name: &str, repo: &Path) -> (String, String) {
    let argv: Vec<OsString> = vec![env!("CARGO_BIN_EXE_herd-worktree").into(), "trust".into()];
    let pane = tmux.new_session(name, repo, &argv);
    let screen = tmux.wait_for_text(&pane, "[y/N]", BUDGET);
    (pane, screen)
}

/// Answers the question in `pane` and waits for the command's exit status.
fn answer(tmux: &Tmux, pane: &str, text: &str) -> i32 {
    tmux.send_text(pane, text);
    tmux.send_keys(pane, &["Enter"]);
    herd_e2e::wait::wait_for("trust to exit", BUDGET, || tmux.pane_exit_status(pane))
}

#[test]
fn trust_shows_the_file_as_it_is_and_what_changed_and_approves_only_on_a_yes() {
    let w = World::new();
    let toml = "copy = [\".env*\"]\nsetup = [\"make\"]\n";
    let repo = setup_repo(&w, toml);
    let cwd = repo.to_str().expect("a UTF-8 path");
    let approval =
        herd_worktree::setup::trust::approval_file(&w.sb.home().join(".config/herd"), &repo);

    // No terminal and no --yes: nothing is approved, and the person is told how.
    let run = w.run(&["trust", "--cwd", cwd], None);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains(
            "nothing was approved: standard input is not a terminal, so there is no one to ask"
        ),
        "{run:?}"
    );
    assert!(run.stderr.contains("trust --show --cwd"), "{run:?}");
    assert!(run.stderr.contains("trust --yes --cwd"), "{run:?}");
    assert!(!approval.exists(), "a refusal records nothing");

    // --show: the file as it is (its quotes unescaped), nothing approved.
    let run = w.run(&["trust", "--show", "--cwd", cwd], None);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("\n  copy = [\".env*\"]\n  setup = [\"make\"]\n"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains('\\'), "{}", run.stdout);
    assert!(
        run.stdout.contains("Not approved before."),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("Nothing was approved (--show)"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("Approved"), "{}", run.stdout);
    assert!(!approval.exists(), "--show records nothing");

    // On a terminal: the file, then the question; "Approved" only after the yes.
    let tmux = tmux_for(&w);
    let (pane, screen) = ask_in_pane(&tmux, "first", &repo);
    assert!(screen.contains("  copy = [\".env*\"]"), "{screen}");
    assert!(
        screen.contains(&format!(
            "Approve it for new worktrees of {}? [y/N]",
            std::fs::canonicalize(&repo).unwrap().display()
        )),
        "{screen}"
    );
    assert!(!screen.contains("Approved"), "{screen}");
    assert!(!approval.exists(), "nothing is recorded before the answer");
    assert_eq!(answer(&tmux, &pane, "y"), 0);
    let screen = tmux.capture(&pane);
    assert!(screen.contains("Approved "), "{screen}");
    let approved = std::fs::read(&approval).expect("the approval is recorded");

    // A pull adds a command: the change is shown; a no records nothing.
    w.sb.write(
        &repo,
        ".herd/worktree.toml",
        &toml.replace("[\"make\"]", "[\"make\", \"echo pwned\"]"),
    );
    w.sb.commit_all(&repo, "pull");
    let (pane, screen) = ask_in_pane(&tmux, "second", &repo);
    assert!(
        screen.contains(
            "Changes since your last approval (- removed, + added):\n    copy = [\".env*\"]\n  - setup = [\"make\"]\n  + setup = [\"make\", \"echo pwned\"]"
        ),
        "{screen}"
    );
    assert_eq!(answer(&tmux, &pane, "n"), 5);
    assert!(
        tmux.capture(&pane)
            .contains("Not approved: nothing was recorded."),
        "{}",
        tmux.capture(&pane)
    );
    assert_eq!(std::fs::read(&approval).unwrap(), approved, "unchanged");

    // A script says --yes: the file and the change are shown, then "Approved".
    let run = w.run(&["trust", "--yes", "--cwd", cwd], None);
    assert_eq!(run.code, 0, "{run:?}");
    let change = run.stdout.find("+ setup = [\"make\", \"echo pwned\"]");
    let done = run.stdout.find("\nApproved ");
    assert!(change.is_some() && done > change, "{}", run.stdout);
    assert_ne!(std::fs::read(&approval).unwrap(), approved);

    // Nothing changed since: nothing to ask, with or without a terminal.
    let run = w.run(&["trust", "--cwd", cwd], None);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("Already approved: nothing changed since your last approval."),
        "{}",
        run.stdout
    );
}
