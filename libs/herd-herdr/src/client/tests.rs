//! Every call against the recorded replies (in-process, through the double's matching, so an
//! argv Herdr was not recorded accepting fails), and the malformed replies a call must refuse.

use std::path::{Path, PathBuf};

use herd_core::ErrorCode;
use serde_json::Value;

use super::*;
use crate::double::{FAULT_ENV, PICK_ENV};
use crate::recording::{self, Recording};
use crate::reply::Exit;
use crate::types::AgentStatus;

fn recorded(name: &str) -> Recording {
    recording::load(&recording::fixture_dir())
        .unwrap()
        .into_iter()
        .find(|rec| rec.name == name)
        .unwrap_or_else(|| panic!("no recording {name}"))
}

/// A client answered by the recordings, preferring `pick` where a command was recorded twice.
fn herdr(pick: &str) -> Herdr {
    Herdr::replaying(&[(PICK_ENV, pick)])
}

/// A client whose calls get the recording `name` exactly as Herdr printed it.
fn canned_recording(name: &str) -> Herdr {
    let rec = recorded(name);
    Herdr::canned(Reply {
        exit: Exit::Code(rec.exit),
        stdout: rec.stdout().to_vec(),
        stderr: rec.stderr().to_vec(),
        truncated: false,
    })
}

/// A client whose calls succeed (exit 0) with `stdout`.
fn canned_stdout(stdout: impl Into<Vec<u8>>) -> Herdr {
    canned(Exit::Code(0), stdout, "")
}

fn canned(exit: Exit, stdout: impl Into<Vec<u8>>, stderr: impl Into<Vec<u8>>) -> Herdr {
    Herdr::canned(Reply {
        exit,
        stdout: stdout.into(),
        stderr: stderr.into(),
        truncated: false,
    })
}

/// The JSON reply of a recording, to be edited into a malformed one.
fn reply_of(name: &str) -> Value {
    serde_json::from_slice(recorded(name).stdout()).unwrap()
}

fn protocol_problem(err: Error) -> (&'static str, String) {
    match err {
        Error::Protocol {
            command, problem, ..
        } => (command, problem),
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

fn remote(err: Error) -> (&'static str, String, String) {
    match err {
        Error::Remote {
            command,
            code,
            message,
        } => (command, code, message),
        other => panic!("expected an error reply, got {other:?}"),
    }
}

fn present(state: PaneState) -> PaneInfo {
    match state {
        PaneState::Present(info) => info,
        other => panic!("expected a present pane, got {other:?}"),
    }
}

// --- Every call from its recorded reply. ---

#[test]
fn pane_current_reads_the_callers_pane() {
    let pane = herdr("").pane_current(None).unwrap();
    assert_eq!(
        (pane.pane_id.as_str(), pane.workspace_id.as_str()),
        ("w1:p1", "w1")
    );
    assert_eq!(pane.tab_id.as_deref(), Some("w1:t1"));
    assert_eq!(pane.terminal_id.as_deref(), Some("term_6617240d0a2801"));
    let pane = herdr("").pane_current(Some("w1:p2")).unwrap();
    assert_eq!(pane.pane_id, "w1:p2");
}

#[test]
fn pane_split_returns_the_new_pane() {
    let herdr = herdr("");
    let pane = herdr
        .pane_split("w1:p1", Direction::Right, None, &[], true)
        .unwrap();
    assert_eq!(pane.pane_id, "w1:p2");
    assert_eq!(pane.tab_id.as_deref(), Some("w1:t1"));
    assert_eq!(pane.cwd.as_deref(), Some(Path::new("/home/dev/src/proj")));
    assert_eq!(pane.agent_status, AgentStatus::Unknown);

    let pane = herdr
        .pane_split("w1:p2", Direction::Down, None, &[], true)
        .unwrap();
    assert_eq!(pane.pane_id, "w1:p3");

    let pane = herdr
        .pane_split(
            "w1:p1",
            Direction::Right,
            Some(Path::new("/home/dev/src/repo")),
            &[("HERD_ROLE", "worker")],
            true,
        )
        .unwrap();
    assert_eq!(pane.pane_id, "w1:pA");
    assert_eq!(pane.cwd.as_deref(), Some(Path::new("/home/dev/src/repo")));
}

#[test]
fn tab_create_returns_the_tab_and_its_pane() {
    let created = herdr("").tab_create("w1", "logs", None, true).unwrap();
    assert_eq!(created.tab_id.as_deref(), Some("w1:t2"));
    assert_eq!(created.pane.pane_id, "w1:p4");
}

#[test]
fn workspace_list_reads_ids_and_checkouts() {
    assert_eq!(herdr("003").workspace_list().unwrap(), []);
    let one = herdr("005").workspace_list().unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].workspace_id, "w1");
    assert_eq!(one[0].label.as_deref(), Some("demo"));
    assert_eq!(one[0].worktree, None);

    let two = herdr("062").workspace_list().unwrap();
    let repo = &two[1];
    assert_eq!(repo.workspace_id, "w2");
    let tree = repo.worktree.as_ref().unwrap();
    assert_eq!(tree.checkout_path, Path::new("/home/dev/src/repo"));
    assert_eq!(tree.is_linked_worktree, Some(false));
    assert_eq!(tree.repo_key.as_deref(), Some("/home/dev/src/repo/.git"));

    assert_eq!(
        herdr("103").workspace_list().unwrap()[0].pane_count,
        Some(5)
    );
}

#[test]
fn workspace_get_reads_the_worktree_fields() {
    let ws = herdr("").workspace_get("w1").unwrap();
    assert_eq!(
        (ws.label.as_deref(), ws.focused, ws.tab_count),
        (Some("demo"), Some(true), Some(1))
    );
    let ws = herdr("").workspace_get("w3").unwrap();
    let tree = ws.worktree.unwrap();
    assert_eq!(tree.is_linked_worktree, Some(true));
    assert_eq!(tree.repo_name.as_deref(), Some("repo"));
    assert_eq!(
        tree.checkout_path,
        Path::new("/home/dev/.herdr/worktrees/repo/feat-x")
    );
}

#[test]
fn workspace_close_accepts_ok() {
    herdr("").workspace_close("w2").unwrap();
    herdr("").workspace_close("w5").unwrap();
}

#[test]
fn pane_list_is_a_snapshot_of_ids() {
    let list = herdr("012").pane_list(None).unwrap();
    let ids: Vec<_> = list.panes.iter().map(|p| p.pane_id.as_str()).collect();
    assert_eq!(ids, ["w1:p1", "w1:p2"]);
    assert!(list.find("w1:p2").is_some());
    assert!(list.find("w1:p3").is_none());
    assert_eq!(
        list.sole_pane().unwrap_err(),
        "expected exactly one pane, found 2"
    );

    let list = herdr("").pane_list(Some("w1")).unwrap();
    assert_eq!(list.panes.len(), 2);

    let restarted = herdr("104").pane_list(None).unwrap();
    assert_eq!(restarted.panes.len(), 5);
    assert_eq!(restarted.panes[1].pane_id, "w1:pA");

    // A named session reaches Herdr through the environment.
    let named = Herdr::replaying(&[("HERDR_SESSION", "herdtest")])
        .pane_list(None)
        .unwrap();
    assert_eq!(named.sole_pane().unwrap().pane_id, "w1:p1");
}

#[test]
fn pane_get_reads_agent_and_status() {
    let pane = present(herdr("011").pane_get("w1:p2"));
    assert_eq!(
        (pane.agent, pane.agent_status),
        (None, AgentStatus::Unknown)
    );

    let pane = present(herdr("073").pane_get("w1:p7"));
    assert_eq!(pane.agent.as_deref(), Some("herd-worker"));
    assert_eq!(pane.agent_status, AgentStatus::Working);

    let released = present(herdr("082").pane_get("w1:p7"));
    assert_eq!(
        (released.agent, released.agent_status),
        (None, AgentStatus::Unknown)
    );
}

#[test]
fn pane_process_info_reads_the_shell_and_the_foreground_job() {
    let info = herdr("").pane_process_info("w1:p2").unwrap();
    assert_eq!(info.shell_pid, Some(24950));
    assert_eq!(info.foreground_pgid, Some(24967));
    assert!(!info.shell_ready());
    let pids: Vec<_> = info.foreground.iter().map(|p| p.pid).collect();
    assert_eq!(pids, [24967, 24969]);
    assert_eq!(info.foreground[0].argv, ["sh", "-c", "echo hi; sleep 30"]);
    assert_eq!(info.foreground[1].name, "sleep");
    assert_eq!(
        info.foreground[1].cwd.as_deref(),
        Some(Path::new("/home/dev/src/proj"))
    );

    // A pane whose process is the command itself: it holds the foreground.
    let argv_pane = herdr("").pane_process_info("w1:pB").unwrap();
    assert_eq!(argv_pane.shell_pid, Some(28611));
    assert!(argv_pane.shell_ready());
}

#[test]
fn pane_read_returns_the_text_as_printed() {
    let herdr = herdr("");
    let text = |pane, source, lines| herdr.pane_read(pane, source, lines).unwrap();
    let visible = text("w1:p2", ReadSource::Visible, None);
    assert_eq!(
        visible.as_bytes(),
        recorded("018-pane-read-visible").stdout()
    );
    assert!(visible.ends_with("hi\n"));
    let recent = text("w1:p2", ReadSource::Recent, None);
    assert!(recent.contains("bash: cho: command not found"));
    let unwrapped = text("w1:p2", ReadSource::RecentUnwrapped, None);
    assert!(unwrapped.starts_with("root@vm:/home/dev/src/proj# sh -c 'echo hi; sleep 30'\nhi"));
    assert_eq!(
        text("w1:p2", ReadSource::Visible, Some(3)).lines().count(),
        3
    );
    // `--lines` on a mostly empty screen selects blank rows: empty, and still a success.
    assert_eq!(text("w1:p2", ReadSource::Recent, Some(20)), "");
    assert_eq!(text("w1:pB", ReadSource::Recent, None), "hi-from-argv\n");
}

#[test]
fn silent_commands_succeed_on_no_output() {
    let herdr = herdr("");
    herdr
        .pane_run("w1:p2", "sh -c 'echo hi; sleep 30'")
        .unwrap();
    herdr.pane_run("w1:p3", "exit 3").unwrap();
    for key in ["ctrl+c", "esc", "escape", "Escape", "enter"] {
        herdr.pane_send_keys("w1:p2", &[key]).unwrap();
    }
}

#[test]
fn pane_close_accepts_ok() {
    herdr("046").pane_close("w1:p2").unwrap();
}

fn create_from_workspace() -> WorktreeCreate {
    WorktreeCreate {
        source: Source::Workspace("w2".into()),
        branch: "feat/x".into(),
        base: None,
        path: None,
        label: None,
        no_focus: true,
    }
}

fn create_with_path() -> WorktreeCreate {
    WorktreeCreate {
        source: Source::Cwd("/home/dev/src/repo".into()),
        branch: "feat/y".into(),
        base: Some("main".into()),
        path: Some("/home/dev/src/wt-y".into()),
        label: Some("wt-y".into()),
        no_focus: true,
    }
}

#[test]
fn worktree_create_returns_the_complete_worktree() {
    let created = herdr("054")
        .worktree_create(&create_from_workspace())
        .unwrap();
    assert_eq!(created.missing(), Vec::<&str>::new());
    assert_eq!(
        created.complete().unwrap(),
        Worktree {
            workspace_id: "w3".into(),
            pane_id: "w3:p1".into(),
            tab_id: "w3:t1".into(),
            path: "/home/dev/.herdr/worktrees/repo/feat-x".into(),
            branch: "feat/x".into(),
        }
    );
    // The same branch again once its checkout was removed: an existing branch checked out.
    let again = herdr("063")
        .worktree_create(&create_from_workspace())
        .unwrap();
    assert_eq!(again.workspace_id.as_deref(), Some("w5"));

    let with_path = herdr("").worktree_create(&create_with_path()).unwrap();
    let tree = with_path.complete().unwrap();
    assert_eq!(
        (tree.workspace_id.as_str(), tree.pane_id.as_str()),
        ("w4", "w4:p1")
    );
    assert_eq!(tree.path, Path::new("/home/dev/src/wt-y"));
}

#[test]
fn worktree_list_reads_the_repository_and_its_checkouts() {
    let list = herdr("")
        .worktree_list(Some(&Source::Cwd("/home/dev/src/repo".into())))
        .unwrap();
    assert_eq!(list.repo.repo_key, "/home/dev/src/repo/.git");
    assert_eq!(list.repo.source_workspace_id, None);
    assert_eq!(list.worktrees.len(), 1);
    assert!(!list.worktrees[0].is_linked_worktree);
    assert_eq!(list.worktrees[0].open_workspace_id, None);

    let list = herdr("056")
        .worktree_list(Some(&Source::Workspace("w2".into())))
        .unwrap();
    assert_eq!(list.repo.source_workspace_id.as_deref(), Some("w2"));
    let y = list.unique_branch("feat/y").unwrap();
    assert!(y.is_linked_worktree);
    assert_eq!(y.open_workspace_id.as_deref(), Some("w4"));
    assert_eq!(y.path, Path::new("/home/dev/src/wt-y"));
    assert_eq!(
        list.unique_branch("feat/q").unwrap_err(),
        "no checkout of branch feat/q"
    );
}

#[test]
fn worktree_remove_reads_the_removed_checkout() {
    let removed = herdr("").worktree_remove("w3").unwrap();
    assert_eq!(
        removed,
        WorktreeRemoved {
            workspace_id: "w3".into(),
            path: "/home/dev/.herdr/worktrees/repo/feat-x".into(),
            forced: false,
        }
    );
    assert_eq!(herdr("").worktree_remove("w6").unwrap().workspace_id, "w6");
}

#[test]
fn commands_never_recorded_are_built_as_protocol_md_writes_them() {
    // `pane rename`, `tab rename`, `workspace rename` and `workspace focus` were not recorded:
    // the double refuses them, and the refusal quotes the argv the client built.
    let herdr = herdr("");
    let quoted = |err: Error| protocol_problem(err).1;
    let err = herdr.pane_rename("w1:p2", "worker one").unwrap_err();
    assert!(quoted(err).contains("`herdr pane rename w1:p2 worker one`"));
    let err = herdr.tab_rename("w1:t2", "Agents").unwrap_err();
    assert!(quoted(err).contains("`herdr tab rename w1:t2 Agents`"));
    let err = herdr.workspace_focus("w3").unwrap_err();
    assert!(quoted(err).contains("`herdr workspace focus w3`"));
    let err = herdr.workspace_rename("w3", "repo").unwrap_err();
    assert!(quoted(err).contains("`herdr workspace rename w3 repo`"));
}

// --- Every recorded error reply maps to its kind. ---

#[test]
fn server_not_running_is_unavailable() {
    let absent = Herdr::replaying(&[("HERDR_SOCKET_PATH", "/home/dev/src/absent.sock")]);
    let err = absent.pane_list(None).unwrap_err();
    assert!(
        matches!(&err, Error::Unavailable { command: "pane list", reason } if reason.starts_with("server_not_running: no herdr server is running at /home/dev/src/absent.sock")),
        "{err:?}"
    );
    assert_eq!(err.code(), ErrorCode::Unavailable);

    let stopped = herdr("102").pane_list(None).unwrap_err();
    assert_eq!(stopped.code(), ErrorCode::Unavailable);
    // The same state seen by `pane get` is not "missing".
    let state = canned_recording("102-pane-list-after-stop").pane_get("w1:p2");
    assert!(
        matches!(state, PaneState::Unavailable(Error::Unavailable { .. })),
        "{state:?}"
    );
}

#[test]
fn a_missing_pane_is_missing() {
    assert_eq!(herdr("").pane_get("w1:p3"), PaneState::Missing);
    assert_eq!(herdr("047").pane_get("w1:p2"), PaneState::Missing);
    assert_eq!(herdr("108").pane_get("w1:pB"), PaneState::Missing);

    let err = herdr("048").pane_close("w1:p2").unwrap_err();
    assert!(err.is_pane_missing());
    assert_eq!(err.code(), ErrorCode::NotFound);
    assert_eq!(
        err.to_string(),
        "herdr `pane close` failed with pane_not_found: pane w1:p2 not found"
    );
    let err = herdr("")
        .pane_read("w9:p9", ReadSource::Visible, None)
        .unwrap_err();
    assert_eq!(remote(err).1, "pane_not_found");

    let err = herdr("").workspace_get("w2").unwrap_err();
    assert_eq!(remote(err.clone()).1, "workspace_not_found");
    assert_eq!(err.code(), ErrorCode::NotFound);
}

#[test]
fn usage_errors_name_the_command_line_problem() {
    let err = canned_recording("049-usage-error")
        .pane_split("w1:p1", Direction::Right, None, &[], true)
        .unwrap_err();
    assert_eq!(
        err,
        Error::Usage {
            command: "pane split",
            message: "invalid split direction: sideways".into()
        }
    );
    assert_eq!(err.code(), ErrorCode::Unavailable);
    assert!(!err.effect_possible());
    let err = canned_recording("050-pane-close-usage")
        .pane_close("w1:p2")
        .unwrap_err();
    assert!(
        matches!(err, Error::Usage { message, .. } if message == "usage: herdr pane close <pane_id>")
    );
}

#[test]
fn socket_errors_on_stdout_are_errors() {
    // The raw socket answers an unknown method and unparseable JSON on stdout, exit 0.
    let (command, code, message) = remote(
        canned_recording("034-raw-unknown-method")
            .workspace_list()
            .unwrap_err(),
    );
    assert_eq!(
        (command, code.as_str()),
        ("workspace list", "invalid_request")
    );
    assert!(message.starts_with("invalid request: unknown variant `pane.nope`"));
    let err = canned_recording("035-raw-bad-json")
        .pane_close("w1:p2")
        .unwrap_err();
    assert_eq!(
        remote(err.clone()),
        (
            "pane close",
            "invalid_request".into(),
            "invalid request: expected ident at line 1 column 2".into()
        )
    );
    assert_eq!(err.code(), ErrorCode::InvalidRequest);
}

#[test]
fn refusals_of_keys_and_worktrees_keep_herdrs_code() {
    let client = herdr("");
    let err = client.pane_send_keys("w1:p2", &["notakey"]).unwrap_err();
    assert_eq!(remote(err.clone()).1, "invalid_key");
    assert_eq!(err.code(), ErrorCode::InvalidRequest);

    let dirty = client.worktree_remove("w4").unwrap_err();
    assert_eq!(remote(dirty.clone()).1, "dirty_worktree_requires_force");
    assert_eq!(dirty.code(), ErrorCode::Conflict);
    let parent = client.worktree_remove("w2").unwrap_err();
    assert_eq!(remote(parent).1, "not_linked_worktree");

    let not_git = client
        .worktree_create(&WorktreeCreate {
            source: Source::Cwd("/home/dev/src/proj".into()),
            branch: "nope".into(),
            ..create_from_workspace()
        })
        .unwrap_err();
    assert_eq!(remote(not_git).1, "not_git_worktree");
    let in_use = herdr("065")
        .worktree_create(&create_from_workspace())
        .unwrap_err();
    let (_, code, message) = remote(in_use.clone());
    assert_eq!(code, "worktree_create_failed");
    assert!(message.ends_with("already exists"));
    assert_eq!(in_use.code(), ErrorCode::Conflict);
}

// --- Malformed replies are errors naming the command, never successes. ---

#[test]
fn truncated_json_is_malformed() {
    let body = recorded("012-pane-list").stdout()[..100].to_vec();
    let (command, problem) = protocol_problem(canned_stdout(body).pane_list(None).unwrap_err());
    assert_eq!(command, "pane list");
    assert!(problem.starts_with("the reply is not JSON"), "{problem}");

    // Truncated on a mutating call: the effect is unknown.
    let body = recorded("007-pane-split").stdout()[..50].to_vec();
    let err = canned_stdout(body)
        .pane_split("w1:p1", Direction::Right, None, &[], true)
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Uncertain);
    assert!(err.effect_possible());
}

#[test]
fn a_reply_of_another_type_is_malformed() {
    let pane_info = recorded("011-pane-get").stdout().to_vec();
    let (command, problem) = protocol_problem(
        canned_stdout(pane_info.clone())
            .pane_list(None)
            .unwrap_err(),
    );
    assert_eq!(command, "pane list");
    assert_eq!(problem, r#"result.type is "pane_info", expected pane_list"#);
    let state = canned_stdout(recorded("012-pane-list").stdout().to_vec()).pane_get("w1:p2");
    assert!(matches!(
        state,
        PaneState::Unavailable(Error::Protocol { .. })
    ));

    let (_, problem) = protocol_problem(
        canned_stdout(br#"{"id":"cli:pane:close","result":{}}"#.to_vec())
            .pane_close("w1:p2")
            .unwrap_err(),
    );
    assert_eq!(problem, "result.type is missing");
    let (_, problem) = protocol_problem(
        canned_stdout(b"[1,2]\n".to_vec())
            .workspace_list()
            .unwrap_err(),
    );
    assert_eq!(problem, "the reply is not a JSON object");
    let (_, problem) = protocol_problem(
        canned_stdout(br#"{"id":"x"}"#.to_vec())
            .workspace_list()
            .unwrap_err(),
    );
    assert_eq!(problem, "the reply has no result");
}

#[test]
fn duplicate_or_incomplete_pane_rows_refuse_the_snapshot() {
    let mut dup = reply_of("012-pane-list");
    dup["result"]["panes"][1]["pane_id"] = "w1:p1".into();
    let (command, problem) =
        protocol_problem(canned_stdout(dup.to_string()).pane_list(None).unwrap_err());
    assert_eq!(command, "pane list");
    assert_eq!(problem, "result.panes[1] repeats pane w1:p1");

    let mut no_workspace = reply_of("012-pane-list");
    no_workspace["result"]["panes"][0]
        .as_object_mut()
        .unwrap()
        .remove("workspace_id");
    let (_, problem) = protocol_problem(
        canned_stdout(no_workspace.to_string())
            .pane_list(None)
            .unwrap_err(),
    );
    assert_eq!(problem, "result.panes[0].workspace_id is missing");

    let mut null_pane = reply_of("012-pane-list");
    null_pane["result"]["panes"][1]["pane_id"] = Value::Null;
    let (_, problem) = protocol_problem(
        canned_stdout(null_pane.to_string())
            .pane_list(None)
            .unwrap_err(),
    );
    assert_eq!(problem, "result.panes[1].pane_id is missing");

    // With a workspace filter, a row of another workspace is not part of the snapshot.
    let (_, problem) = protocol_problem(
        canned_recording("012-pane-list")
            .pane_list(Some("w2"))
            .unwrap_err(),
    );
    assert_eq!(
        problem,
        "result.panes[0] is in workspace w1, not the requested w2"
    );

    let mut dup_ws = reply_of("062-workspace-list-after-remove");
    dup_ws["result"]["workspaces"][1]["workspace_id"] = "w1".into();
    let (_, problem) = protocol_problem(
        canned_stdout(dup_ws.to_string())
            .workspace_list()
            .unwrap_err(),
    );
    assert_eq!(problem, "result.workspaces[1] repeats workspace w1");
}

#[test]
fn pane_get_must_describe_the_requested_pane() {
    let state = canned_recording("011-pane-get").pane_get("w1:p7");
    let PaneState::Unavailable(err) = state else {
        panic!("{state:?}")
    };
    assert_eq!(
        protocol_problem(err).1,
        "result.pane.pane_id is w1:p2, not the requested w1:p7"
    );

    let mut odd = reply_of("073-pane-get-after-report");
    odd["result"]["pane"]["agent_status"] = "thinking".into();
    let pane = present(canned_stdout(odd.to_string()).pane_get("w1:p7"));
    assert_eq!(pane.agent_status, AgentStatus::Unknown);
    odd["result"]["pane"]["agent_status"] = 3.into();
    let state = canned_stdout(odd.to_string()).pane_get("w1:p7");
    let PaneState::Unavailable(err) = state else {
        panic!("{state:?}")
    };
    assert_eq!(
        protocol_problem(err).1,
        "result.pane.agent_status is not a string"
    );
}

#[test]
fn missing_is_read_from_either_stream_and_from_plain_text() {
    let not_found = br#"{"error":{"code":"not_found","message":"no such pane"}}"#;
    for herdr in [
        canned(Exit::Code(1), not_found.to_vec(), ""),
        canned(Exit::Code(1), "", not_found.to_vec()),
        canned(Exit::Code(1), "pane_not_found\n", ""),
        canned(Exit::Code(1), "", "not_found"),
    ] {
        assert_eq!(herdr.pane_get("w1:p2"), PaneState::Missing);
    }
    // Any other failure leaves the pane's existence open.
    for herdr in [
        canned(Exit::Code(1), "", ""),
        canned(Exit::Code(1), "", "pane w1:p2 not found"),
        canned(Exit::Signal(9), "", ""),
        canned_recording("043-agent-get-no-agent"),
    ] {
        let state = herdr.pane_get("w1:p2");
        assert!(matches!(state, PaneState::Unavailable(_)), "{state:?}");
    }
}

#[test]
fn odd_exits_and_outputs_are_errors() {
    let err = canned(Exit::Code(1), "", "boom")
        .pane_close("w1:p2")
        .unwrap_err();
    assert_eq!(
        protocol_problem(err).1,
        "exit status 1 without an error reply: boom"
    );
    let err = canned(Exit::Signal(9), "", "").pane_list(None).unwrap_err();
    assert_eq!(
        err,
        Error::Unavailable {
            command: "pane list",
            reason: "killed by signal 9".into()
        }
    );
    // A silent command that prints something did not answer as Herdr does.
    let err = canned_recording("046-pane-close")
        .pane_run("w1:p2", "true")
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Uncertain);
    assert!(
        protocol_problem(err)
            .1
            .starts_with("expected no output, got: {")
    );
    // Output beyond the cap is never parsed.
    let rec = recorded("012-pane-list");
    let capped = Herdr::canned(Reply {
        exit: Exit::Code(0),
        stdout: rec.stdout().to_vec(),
        stderr: Vec::new(),
        truncated: true,
    });
    assert_eq!(
        protocol_problem(capped.pane_list(None).unwrap_err()).1,
        "the output exceeds the capture limit"
    );
    // An error document without a code is malformed, not a success.
    let err = canned(Exit::Code(1), "", r#"{"error":{"message":"x"}}"#)
        .pane_list(None)
        .unwrap_err();
    assert_eq!(protocol_problem(err).1, "reply.error.code is missing");
}

#[test]
fn pane_current_needs_the_tab() {
    let mut reply = reply_of("014-pane-current");
    reply["result"]["pane"]
        .as_object_mut()
        .unwrap()
        .remove("tab_id");
    let err = canned_stdout(reply.to_string())
        .pane_current(None)
        .unwrap_err();
    assert_eq!(
        protocol_problem(err),
        ("pane current", "result.pane.tab_id is missing".into())
    );
}

#[test]
fn process_info_pids_are_checked() {
    let mut reply = reply_of("016-pane-process-info");
    reply["result"]["process_info"]["foreground_processes"][1]["pid"] = (-4).into();
    let err = canned_stdout(reply.to_string())
        .pane_process_info("w1:p2")
        .unwrap_err();
    assert_eq!(
        protocol_problem(err).1,
        "result.process_info.foreground_processes[1].pid is not a process id"
    );
    let mut reply = reply_of("016-pane-process-info");
    reply["result"]["process_info"]["foreground_process_group_id"] = Value::Null;
    let info = canned_stdout(reply.to_string())
        .pane_process_info("w1:p2")
        .unwrap();
    assert_eq!(info.foreground_pgid, None);
    assert!(!info.shell_ready());
}

// --- The incomplete `worktree create` reply and its recovery. ---

fn incomplete_create() -> WorktreeCreated {
    Herdr::replaying(&[(FAULT_ENV, "omit:result.root_pane")])
        .worktree_create(&create_with_path())
        .unwrap()
}

#[test]
fn an_incomplete_worktree_reply_returns_what_it_found() {
    let partial = incomplete_create();
    assert_eq!(partial.complete(), None);
    assert_eq!(partial.missing(), ["pane_id"]);
    assert_eq!(partial.workspace_id.as_deref(), Some("w4"));
    assert_eq!(partial.tab_id.as_deref(), Some("w4:t1"));
    assert_eq!(
        partial.path.as_deref(),
        Some(Path::new("/home/dev/src/wt-y"))
    );

    // A reply naming another branch than the one asked for is not the requested worktree.
    let mut other = reply_of("055-worktree-create-path");
    other["result"]["worktree"]["branch"] = "feat/z".into();
    let err = canned_stdout(other.to_string())
        .worktree_create(&create_with_path())
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Uncertain);
    assert_eq!(
        protocol_problem(err).1,
        "result.worktree.branch is feat/z, not the requested feat/y"
    );
    // A wrong type is still a malformed reply, even where parts may be missing.
    let mut bad = reply_of("055-worktree-create-path");
    bad["result"]["root_pane"]["pane_id"] = 5.into();
    let err = canned_stdout(bad.to_string())
        .worktree_create(&create_with_path())
        .unwrap_err();
    assert_eq!(
        protocol_problem(err).1,
        "result.root_pane.pane_id is not a string"
    );
}

/// The pane a recorded `worktree create` reply says its workspace was made with.
fn root_pane_of(name: &str) -> PaneList {
    let reply = reply_of(name);
    let node = crate::json::Node::root(&reply["result"]["root_pane"], "root_pane");
    PaneList {
        panes: vec![PaneInfo::from_node(&node).unwrap()],
    }
}

#[test]
fn recovery_finds_the_unique_branch_and_its_single_pane() {
    let list = herdr("056")
        .worktree_list(Some(&Source::Workspace("w2".into())))
        .unwrap();
    let mut asked = Vec::new();
    let partial = WorktreeCreated {
        workspace_id: Some("w3".into()),
        ..WorktreeCreated::default()
    };
    let found = recover(&list, "feat/x", &partial, |workspace| {
        asked.push(workspace.to_owned());
        Ok(root_pane_of("054-worktree-create"))
    })
    .unwrap();
    assert_eq!(asked, ["w3"]);
    assert_eq!(
        found,
        Recovery::Found(Worktree {
            workspace_id: "w3".into(),
            pane_id: "w3:p1".into(),
            tab_id: "w3:t1".into(),
            path: PathBuf::from("/home/dev/.herdr/worktrees/repo/feat-x"),
            branch: "feat/x".into(),
        })
    );
}

#[test]
fn recovery_is_inconclusive_unless_everything_agrees() {
    let repo = Source::Workspace("w2".into());
    let list = herdr("056").worktree_list(Some(&repo)).unwrap();
    let no_panes = |_: &str| -> Result<PaneList, Error> { panic!("no pane lookup expected") };
    let inconclusive = |recovery: Recovery| match recovery {
        Recovery::Inconclusive(why) => why,
        found => panic!("{found:?}"),
    };
    let none = WorktreeCreated::default();

    let why = inconclusive(recover(&list, "feat/q", &none, no_panes).unwrap());
    assert_eq!(why, "no checkout of branch feat/q");
    let why = inconclusive(recover(&list, "main", &none, no_panes).unwrap());
    assert_eq!(why, "branch main is the main checkout");
    let elsewhere = WorktreeCreated {
        workspace_id: Some("w9".into()),
        ..WorktreeCreated::default()
    };
    let why = inconclusive(recover(&list, "feat/y", &elsewhere, no_panes).unwrap());
    assert_eq!(why, "the reply named workspace w9, the list w4");

    // Two panes in the workspace: which one is the worktree's is not known.
    let two = herdr("").pane_list(Some("w1")).unwrap();
    let why = inconclusive(recover(&list, "feat/x", &none, |_| Ok(two)).unwrap());
    assert_eq!(why, "workspace w3: expected exactly one pane, found 2");

    let unopened = herdr("")
        .worktree_list(Some(&Source::Cwd("/home/dev/src/repo".into())))
        .unwrap();
    let why = inconclusive(recover(&unopened, "feat/y", &none, no_panes).unwrap());
    assert_eq!(why, "no checkout of branch feat/y");
}

#[test]
fn recovery_asks_herdr_for_exactly_the_lookups() {
    // Through the client: the list is recorded, the pane list of w4 was never recorded, so the
    // double refuses it, quoting the command the recovery asked for.
    let partial = incomplete_create();
    let err = herdr("056")
        .recover_worktree(&Source::Workspace("w2".into()), "feat/y", &partial)
        .unwrap_err();
    let (command, problem) = protocol_problem(err);
    assert_eq!(command, "pane list");
    assert!(
        problem.contains("no recording of `herdr pane list --workspace w4`"),
        "{problem}"
    );
}

// --- Availability: `HERDR_ENV=1` and the executable found. ---

#[test]
fn available_needs_herdr_env_and_the_executable() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("herdr");
    std::fs::write(&bin, "#!/bin/sh\n").unwrap();
    let path = std::env::join_paths(["/nonexistent".as_ref(), dir.path()]).unwrap();
    let herdr = Herdr::new("herdr");
    let one = Some(OsStr::new("1"));

    assert!(!available_with(one, &herdr, Some(&path)), "not executable");
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(available_with(one, &herdr, Some(&path)));
    assert!(!available_with(None, &herdr, Some(&path)));
    assert!(!available_with(Some(OsStr::new("0")), &herdr, Some(&path)));
    assert!(!available_with(one, &herdr, None));
    assert!(!available_with(
        one,
        &herdr,
        Some(OsStr::new("/nonexistent"))
    ));
    // An explicit path is used as it is, not looked up.
    assert!(available_with(one, &Herdr::new(&bin), None));
    assert!(!available_with(one, &Herdr::new(dir.path()), None));
}
