//! The doctor: one line per check, findings for runs that need a hand, exit 0 only when
//! everything needed is fine and no run needs a hand, else exit 1 with what is wrong.

use std::path::PathBuf;

use herd_protocol::cleanup::{DoctorReport, FindingState};

use crate::{Sleeper, World};

/// A stand-in Pi in the sandbox: a shell script with `body`.
fn pi(w: &World, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = w.sb.path().join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// A Pi that starts: it answers `--version`.
fn good_pi(w: &World) -> PathBuf {
    pi(w, "pi", "echo 1.6.0")
}

#[test]
fn doctor_reports_checks_and_runs_whose_owner_is_gone() {
    let w = World::new();
    let repo = w.repo("repo");
    let wt = w.worktree(&repo, "x", "r1");
    let gone = Sleeper::in_dir(&w.sb.path());
    w.run_record("run-gone", &wt, gone.pid(), false);
    drop(gone);
    let alive = Sleeper::in_dir(&w.sb.path());
    w.run_record("run-alive", &wt, alive.pid(), false);

    let pi = good_pi(&w);
    let env = [("HERD_PI", pi.to_str().unwrap())];
    let run = w.cleanup_with(&["doctor", "--json"], &env);
    // A run needs a hand: that is a valid negative answer.
    assert_eq!(run.code, 1, "{run:?}");
    let doc = run.doc::<DoctorReport>();
    assert!(!doc.ok, "{doc:#?}");
    let check = |name: &str| {
        doc.checks
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("check {name}: {doc:#?}"))
    };
    assert!(check("git").ok);
    assert!(check("git").detail.starts_with("git version "));
    assert!(check("proc").ok);
    assert!(check("artifacts").ok);
    assert_eq!(check("herdr").detail, "not in use (HERDR_ENV is not 1)");
    assert!(check("managed root").ok);
    assert!(check("pi").ok);
    assert_eq!(check("pi").detail, "pi 1.6.0");
    assert!(!check("runs").ok);
    assert_eq!(doc.runs_inspected, 2);
    assert_eq!(doc.runs.len(), 1, "{doc:#?}");
    assert_eq!(doc.runs[0].run_id, "run-gone");
    assert_eq!(doc.runs[0].state, FindingState::OwnerGone);

    let human = w.cleanup_with(&["doctor"], &env);
    assert_eq!(human.code, 1, "{human:?}");
    insta::assert_snapshot!(w.redact(&human.stdout));
    drop(alive);
}

#[test]
fn doctor_is_fine_only_when_pi_starts_and_no_run_needs_a_hand() {
    let w = World::new();
    let repo = w.repo("repo");
    let wt = w.worktree(&repo, "x", "r1");
    let alive = Sleeper::in_dir(&w.sb.path());
    w.run_record("run-alive", &wt, alive.pid(), false);
    let good = good_pi(&w);
    let fine = w.cleanup_with(&["doctor"], &[("HERD_PI", good.to_str().unwrap())]);
    assert_eq!(fine.code, 0, "{fine:?}");
    assert!(
        fine.stdout
            .ends_with("everything herd needs here is fine\n"),
        "{fine:?}"
    );

    // A Pi that dies at start (the wrong Node, say), and one that is not there at all.
    let broken = pi(
        &w,
        "broken-pi",
        "echo \"SyntaxError: Unexpected identifier 'enableCompileCache'\" >&2; exit 1",
    );
    for (pi, why) in [
        (
            broken.to_str().unwrap(),
            "SyntaxError: Unexpected identifier",
        ),
        ("/nonexistent/pi", "not found"),
    ] {
        let run = w.cleanup_with(&["doctor"], &[("HERD_PI", pi)]);
        assert_eq!(run.code, 1, "{run:?}");
        let line = run
            .stdout
            .lines()
            .find(|l| l.starts_with("pi: "))
            .unwrap_or_else(|| panic!("{run:?}"));
        assert!(line.starts_with("pi: FAILED: "), "{line}");
        assert!(line.contains(why), "{line}");
        assert!(line.contains("Pi cannot start"), "{line}");
        assert!(
            run.stdout
                .ends_with("herd cannot work here until fixed: pi\n"),
            "{run:?}"
        );
        let json = w.cleanup_with(&["doctor", "--json"], &[("HERD_PI", pi)]);
        assert_eq!(json.code, 1, "{json:?}");
        assert!(!json.doc::<DoctorReport>().ok);
    }

    // A real Node that cannot load Pi's cli.js: its first stderr line says only where
    // (`file:///…/cli.js:2`); the check quotes the error that explains it too.
    let node = std::env::var_os("PATH")
        .and_then(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join("node"))
                .find(|node| node.is_file())
        })
        .expect("node on PATH");
    let cli = w.sb.path().join("cli.mjs");
    std::fs::write(
        &cli,
        "// pi\nconst x = enableCompileCache enableCompileCache;\n",
    )
    .unwrap();
    let run = w.cleanup_with(
        &["doctor"],
        &[
            ("HERD_PI", cli.to_str().unwrap()),
            ("HERD_PI_NODE", node.to_str().unwrap()),
        ],
    );
    assert_eq!(run.code, 1, "{run:?}");
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("pi: "))
        .unwrap_or_else(|| panic!("{run:?}"));
    assert!(line.contains("cli.mjs:2"), "{line}");
    assert!(
        line.contains("SyntaxError: Unexpected identifier 'enableCompileCache'"),
        "{line}"
    );

    // $HERD_PI_NODE runs $HERD_PI, as herd-launch does.
    let node = pi(
        &w,
        "node",
        "[ \"$2\" = --version ] && echo \"run by node: $1\"",
    );
    let script = w.sb.path().join("cli.js");
    std::fs::write(&script, "").unwrap();
    let run = w.cleanup_with(
        &["doctor", "--json"],
        &[
            ("HERD_PI", script.to_str().unwrap()),
            ("HERD_PI_NODE", node.to_str().unwrap()),
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    drop(alive);
}

#[test]
fn doctor_fails_when_something_needed_is_missing() {
    let w = World::new();
    let pi = good_pi(&w);
    let run = w.cleanup_with(
        &["doctor"],
        &[
            ("HERD_GIT_BIN", "/nonexistent/git"),
            ("HERDR_ENV", "1"),
            ("HERD_HERDR_BIN", "/nonexistent/herdr"),
            ("HERD_PI", pi.to_str().unwrap()),
        ],
    );
    assert_eq!(run.code, 1, "{run:?}");
    insta::assert_snapshot!(w.redact(&run.stdout));
}

/// The person chose confined children: the doctor says up front whether this machine can
/// confine them, and the fix when it cannot.
#[test]
fn doctor_says_whether_confined_children_can_run_here() {
    let w = World::new();
    let pi = good_pi(&w);
    let config = w.sb.path().join("config");
    std::fs::create_dir_all(config.join("herd")).unwrap();
    std::fs::write(
        config.join("herd/config.toml"),
        "[sandbox]\nmode = \"workspace\"\n",
    )
    .unwrap();
    let sandbox_line = |path: &str| {
        let run = w.cleanup_with(
            &["doctor"],
            &[
                ("XDG_CONFIG_HOME", config.to_str().unwrap()),
                ("HERD_PI", pi.to_str().unwrap()),
                ("PATH", path),
            ],
        );
        let line = run
            .stdout
            .lines()
            .find(|l| l.starts_with("sandbox: "))
            .unwrap_or_else(|| panic!("no sandbox line: {run:?}"))
            .to_owned();
        (run.code, line)
    };
    let path = std::env::var("PATH").unwrap();
    let (_, line) = sandbox_line(&path);
    assert!(
        line.starts_with("sandbox: ok: sandbox workspace: writes its working directory"),
        "{line}"
    );
    // A PATH without bubblewrap: every confined spawn would be refused, and the doctor fails.
    let empty = w.sb.path().join("no-bwrap");
    std::fs::create_dir_all(&empty).unwrap();
    let (code, line) = sandbox_line(&format!("{}:/usr/local/bin", empty.display()));
    assert_eq!(code, 1, "{line}");
    assert!(
        line.starts_with("sandbox: FAILED: bubblewrap (bwrap) is not on PATH"),
        "{line}"
    );
    assert!(line.contains("apt-get install bubblewrap"), "{line}");
}

/// From a shell whose own artifacts directory is quiet, the doctor still says where else a run
/// of this user needs a hand: every directory of the index herd-launch keeps.
#[test]
fn doctor_names_the_other_directories_where_runs_need_a_hand() {
    let w = World::new();
    let other = World::new();
    let repo = other.repo("repo");
    let wt = other.worktree(&repo, "x", "r1");
    let gone = Sleeper::in_dir(&other.sb.path());
    other.run_record("run-gone", &wt, gone.pid(), false);
    drop(gone);
    let state = w.sb.path().join("state");
    herd_protocol::artifacts_index::Index::in_dir(&state.join("herd"))
        .record(&other.artifacts())
        .unwrap();
    let pi = good_pi(&w);
    let env = [
        ("HERD_PI", pi.to_str().unwrap()),
        ("XDG_STATE_HOME", state.to_str().unwrap()),
    ];
    let run = w.cleanup_with(&["doctor", "--json"], &env);
    let doc = run.doc::<DoctorReport>();
    let check = doc
        .checks
        .iter()
        .find(|c| c.name == "other directories")
        .unwrap_or_else(|| panic!("{doc:#?}"));
    assert!(!check.ok && !check.needed, "{check:?}");
    assert_eq!(
        check.detail,
        format!(
            "1 more artifacts directory of this user: 1 run record, 1 needs a hand; \
             `herd-cleanup --artifacts {} doctor` names them",
            other.artifacts().root().display()
        )
    );
    assert!(doc.runs.is_empty(), "this directory's own runs: {doc:#?}");
}

#[test]
fn doctor_says_when_herdrs_notifications_are_off_and_the_line_that_turns_them_on() {
    let w = World::new();
    let good = good_pi(&w);
    let config = w.sb.path().join("xdg");
    let file = config.join("herdr/config.toml");
    let env = [
        ("HERD_PI", good.to_str().unwrap()),
        ("HERDR_ENV", "1"),
        ("XDG_CONFIG_HOME", config.to_str().unwrap()),
    ];
    let line = |run: &herd_e2e::cli::Run| {
        run.stdout
            .lines()
            .find(|l| l.starts_with("herdr notifications: "))
            .unwrap_or_else(|| panic!("{run:?}"))
            .to_owned()
    };
    // Herdr's default: off, and the lines that turn them on, in Herdr's own file.
    let run = w.cleanup_with(&["doctor"], &env);
    assert_eq!(
        line(&run),
        format!(
            "herdr notifications: unavailable: off (Herdr's default), so herd's notices show only in Pi; to turn them on, create {} with the lines `[ui.toast]` and `delivery = \"herdr\"`, then run `herdr server reload-config`",
            file.display()
        )
    );
    // The person does as told: on.
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "[ui.toast]\ndelivery = \"herdr\"\n").unwrap();
    let run = w.cleanup_with(&["doctor", "--json"], &env);
    let doc = run.doc::<DoctorReport>();
    let check = doc
        .checks
        .iter()
        .find(|c| c.name == "herdr notifications")
        .unwrap_or_else(|| panic!("{doc:#?}"));
    assert!(check.ok && !check.needed, "{check:?}");
    assert!(check.detail.starts_with("on: "), "{check:?}");
    // Installed (on `PATH`) but not in use: said too.
    let bin = w.sb.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let herdr = pi(&w, "bin/herdr", "exit 0");
    assert!(herdr.starts_with(&bin));
    let path = format!("{}:/nonexistent", bin.display());
    let env = [
        ("HERD_PI", good.to_str().unwrap()),
        ("XDG_CONFIG_HOME", config.to_str().unwrap()),
        ("PATH", path.as_str()),
    ];
    let run = w.cleanup_with(&["doctor"], &env);
    assert!(
        line(&run).starts_with("herdr notifications: ok: on: "),
        "{run:?}"
    );
    // Neither in use nor installed: no word of it.
    let env = [
        ("HERD_PI", good.to_str().unwrap()),
        ("PATH", "/nonexistent"),
    ];
    let run = w.cleanup_with(&["doctor"], &env);
    assert!(!run.stdout.contains("herdr notifications"), "{run:?}");
}
