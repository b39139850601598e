//! The doctor: one line per check, findings for runs that need a hand, exit 0 when everything
//! needed is fine.

use crate::{Sleeper, World};

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

    let run = w.cleanup(&["doctor", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let doc = run.json();
    assert_eq!(doc["ok"], true, "{doc:#}");
    let check = |name: &str| {
        doc["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("check {name}: {doc:#}"))
            .clone()
    };
    assert_eq!(check("git")["ok"], true);
    assert!(
        check("git")["detail"]
            .as_str()
            .unwrap()
            .starts_with("git version ")
    );
    assert_eq!(check("proc")["ok"], true);
    assert_eq!(check("artifacts")["ok"], true);
    assert_eq!(check("herdr")["detail"], "not in use (HERDR_ENV is not 1)");
    assert_eq!(check("managed root")["ok"], true);
    assert_eq!(doc["runs_inspected"], 2);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{doc:#}");
    assert_eq!(runs[0]["run_id"], "run-gone");
    assert_eq!(runs[0]["state"], "owner_gone");

    let human = w.cleanup(&["doctor"]);
    assert_eq!(human.code, 0, "{human:?}");
    insta::assert_snapshot!(w.redact(&human.stdout));
    drop(alive);
}

#[test]
fn doctor_fails_when_something_needed_is_missing() {
    let w = World::new();
    let run = w.cleanup_with(
        &["doctor"],
        &[
            ("HERD_GIT_BIN", "/nonexistent/git"),
            ("HERDR_ENV", "1"),
            ("HERD_HERDR_BIN", "/nonexistent/herdr"),
        ],
    );
    assert_eq!(run.code, 4, "{run:?}");
    insta::assert_snapshot!(w.redact(&run.stdout));
}
