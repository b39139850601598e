//! The client against the `herdr-double` executable: real processes, budgets and environment.

use std::ffi::OsStr;
use std::path::Path;
use std::time::Duration;

use herd_core::ErrorCode;
use herd_herdr::double::{FAULT_ENV, PICK_ENV};
use herd_herdr::{
    AgentStatus, Error, Herdr, PaneState, Recovery, Source, WorktreeCreate, available_with,
};

fn double() -> Herdr {
    Herdr::new(env!("CARGO_BIN_EXE_herdr-double"))
}

#[test]
fn replies_come_back_through_a_real_process() {
    let state = double().with_env(PICK_ENV, "073").pane_get("w1:p7");
    let PaneState::Present(pane) = state else {
        panic!("{state:?}")
    };
    assert_eq!(pane.agent.as_deref(), Some("herd-worker"));
    assert_eq!(pane.agent_status, AgentStatus::Working);

    assert_eq!(
        double().with_env(PICK_ENV, "047").pane_get("w1:p2"),
        PaneState::Missing
    );
    let text = double()
        .pane_read("w1:pB", herd_herdr::ReadSource::Recent, None)
        .unwrap();
    assert_eq!(text, "hi-from-argv\n");
    double().pane_send_keys("w1:p2", &["Escape"]).unwrap();
}

#[test]
fn the_environment_reaches_herdr() {
    // The socket path selects the recording made against an absent server.
    let err = double()
        .with_env("HERDR_SOCKET_PATH", "/home/dev/src/absent.sock")
        .pane_list(None)
        .unwrap_err();
    assert!(
        matches!(&err, Error::Unavailable { command: "pane list", reason } if reason.starts_with("server_not_running:")),
        "{err:?}"
    );
    let named = double()
        .with_env("HERDR_SESSION", "herdtest")
        .pane_list(None)
        .unwrap();
    assert_eq!(named.sole_pane().unwrap().pane_id, "w1:p1");
}

#[test]
fn a_hanging_herdr_times_out() {
    let hung = double()
        .with_env(FAULT_ENV, "hang")
        .with_budget(Duration::from_millis(300));
    let err = hung.pane_run("w1:p2", "true").unwrap_err();
    assert!(
        matches!(
            err,
            Error::Timeout {
                command: "pane run",
                mutating: true,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(err.code(), ErrorCode::Uncertain);

    let err = hung.workspace_list().unwrap_err();
    assert_eq!(err.code(), ErrorCode::Timeout);
    let state = hung.pane_get("w1:p2");
    assert!(
        matches!(state, PaneState::Unavailable(Error::Timeout { .. })),
        "{state:?}"
    );
}

#[test]
fn a_truncated_reply_is_malformed() {
    let err = double()
        .with_env(FAULT_ENV, "truncate:40")
        .workspace_get("w1")
        .unwrap_err();
    assert!(
        matches!(&err, Error::Protocol { command: "workspace get", problem, mutating: false } if problem.starts_with("the reply is not JSON")),
        "{err:?}"
    );
}

#[test]
fn an_incomplete_worktree_reply_and_the_recovery_lookups() {
    let params = WorktreeCreate {
        source: Source::Workspace("w2".into()),
        branch: "feat/x".into(),
        base: None,
        path: None,
        label: None,
        no_focus: true,
    };
    let partial = double()
        .with_env(PICK_ENV, "054")
        .with_env(FAULT_ENV, "omit:result.root_pane")
        .worktree_create(&params)
        .unwrap();
    assert_eq!(partial.missing(), ["pane_id"]);
    assert_eq!(partial.workspace_id.as_deref(), Some("w3"));

    // The recovery lists the repository's checkouts (recorded) and then asks for the panes of
    // w3, which Herdr was never recorded answering: the double refuses, and the refusal names
    // exactly that lookup.
    let err = double()
        .with_env(PICK_ENV, "056")
        .recover_worktree(&params.source, "feat/x", &partial)
        .unwrap_err();
    let Error::Protocol {
        command, problem, ..
    } = err
    else {
        panic!("{err:?}")
    };
    assert_eq!(command, "pane list");
    assert!(
        problem.contains("no recording of `herdr pane list --workspace w3`"),
        "{problem}"
    );

    // A branch the list does not hold ends the recovery before any pane lookup.
    let unknown = double()
        .with_env(PICK_ENV, "056")
        .recover_worktree(&params.source, "feat/q", &partial)
        .unwrap();
    assert_eq!(
        unknown,
        Recovery::Inconclusive("no checkout of branch feat/q".into())
    );
}

#[test]
fn a_missing_executable_is_unavailable() {
    let err = Herdr::new("/nonexistent/herdr")
        .workspace_list()
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Unavailable {
                command: "workspace list",
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(err.code(), ErrorCode::Unavailable);
}

#[test]
fn available_finds_herdr_on_path() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_herdr-double"), dir.path().join("herdr"))
        .unwrap();
    let path = dir.path().as_os_str();
    let one = Some(OsStr::new("1"));
    assert!(available_with(one, &Herdr::new("herdr"), Some(path)));
    assert!(!available_with(None, &Herdr::new("herdr"), Some(path)));
    // The client found that way answers.
    let found = Herdr::new(Path::new(path).join("herdr"));
    assert_eq!(found.workspace_get("w1").unwrap().workspace_id, "w1");
}
