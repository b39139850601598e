//! The Herdr surface against the recorded-reply double of the `herdr` executable.
//!
//! Every reply comes from `herd-herdr`'s recordings of a real Herdr 0.8.0. Two replies are
//! derived for the success path, because no recording has them, and each is a recorded reply
//! with one value changed:
//! - `900`: `pane process-info --pane w1:p2` of an idle shell: recording 016 with the foreground
//!   process group set to the shell's own PID (the readiness condition of protocol.md §2);
//! - `901`: `pane run w1:p2 "sh '<this test's script>'"`: silent success, as recording 008.
//!
//! Each test reaches the double through a wrapper script that sets the double's environment (which
//! recording wins among equal command lines, which command hangs), so tests running in parallel
//! never share environment variables.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test on any error"
)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use herd_surface::herdr::Herdr;
use herd_surface::{Key, Launch, LaunchError, Presence, Surface, Target};

struct Double {
    dir: tempfile::TempDir,
    script: PathBuf,
    session: PathBuf,
}

impl Double {
    /// Recordings (real and derived) in a directory of their own, and a launch script path.
    fn new() -> Double {
        let dir = tempfile::tempdir().unwrap();
        let recordings = dir.path().join("recordings");
        std::fs::create_dir(&recordings).unwrap();
        let source = herd_herdr::recording::fixture_dir();
        for entry in std::fs::read_dir(&source).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_file() {
                std::fs::copy(entry.path(), recordings.join(entry.file_name())).unwrap();
            }
        }
        let script = dir.path().join("child.sh");
        std::fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
        let busy = std::fs::read_to_string(source.join("016-pane-process-info.txt")).unwrap();
        let (line, reply) = busy.split_once('\n').unwrap();
        let mut idle: serde_json::Value = serde_json::from_str(reply.trim()).unwrap();
        let info = &mut idle["result"]["process_info"];
        info["foreground_process_group_id"] = info["shell_pid"].clone();
        info["foreground_processes"] = serde_json::json!([]);
        std::fs::write(
            recordings.join("900-derived-pane-process-info-idle.txt"),
            format!("{line}\n{idle}\n"),
        )
        .unwrap();
        std::fs::write(
            recordings.join("901-derived-pane-run-script.txt"),
            format!("herdr pane run w1:p2 \"sh '{}'\"\n", script.display()),
        )
        .unwrap();
        let mut readme = std::fs::read_to_string(recordings.join("README.md")).unwrap();
        readme.push_str(
            "| 900-derived-pane-process-info-idle.txt | 0 | stdout | derived from 016 |\n",
        );
        readme.push_str("| 901-derived-pane-run-script.txt | 0 | (none) | derived from 008 |\n");
        std::fs::write(recordings.join("README.md"), readme).unwrap();
        let session = dir.path().join("s.jsonl");
        Double {
            dir,
            script,
            session,
        }
    }

    /// A surface whose `herdr` replays with `pick`, and hangs on the command starting `hang`.
    fn surface(&self, name: &str, pick: &str, hang: Option<&str>) -> Herdr {
        let wrapper = self.dir.path().join(name);
        let double = env!("CARGO_BIN_EXE_herd-surface-herdr-double");
        let hang = hang.map_or_else(String::new, |h| {
            format!(
                "case \"$*\" in \"{h}\"*) HERDR_DOUBLE_FAULT=hang exec '{double}' \"$@\";; esac\n"
            )
        });
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\nexport HERDR_DOUBLE_RECORDINGS='{}' HERDR_DOUBLE_PICK='{pick}'\n{hang}exec '{double}' \"$@\"\n",
                self.dir.path().join("recordings").display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
        Herdr::with_client(
            herd_herdr::Herdr::new(&wrapper),
            Some(PathBuf::from("/home/dev/.config/herdr/herdr.sock")),
        )
    }

    fn launch(&self) -> Launch<'_> {
        Launch {
            run_id: "ab12cd34",
            name: "worker",
            cwd: Path::new("/"),
            script: &self.script,
            session_file: &self.session,
            into: None,
        }
    }
}

fn within(seconds: u64) -> Instant {
    Instant::now() + Duration::from_secs(seconds)
}

#[test]
fn launch_splits_the_caller_waits_for_the_shell_and_runs_the_script() {
    let double = Double::new();
    let herdr = double.surface("herdr", "900,011,030,012", None);
    let target = herdr.launch(&double.launch(), within(20)).unwrap();
    let pane = target.pane().unwrap();
    assert_eq!(pane.pane_id, "w1:p2");
    assert_eq!(pane.tab_id.as_deref(), Some("w1:t1"));
    assert_eq!(pane.workspace_id.as_deref(), Some("w1"));
    assert!(pane.owned);
    assert_eq!(
        pane.socket.as_deref(),
        Some("/home/dev/.config/herdr/herdr.sock")
    );
    assert_eq!(
        herdr.presence(&target, within(10)).unwrap(),
        Presence::Running
    );
    assert_eq!(
        herdr.read_tail(&target, 3, within(10)).unwrap(),
        "root@vm:/home/dev/src/proj# cho typed\nbash: cho: command not found\nroot@vm:/home/dev/src/proj#\n"
    );
    herdr
        .send_keys(&target, &[Key::Escape], within(10))
        .unwrap();
    assert!(
        herdr
            .list(within(10))
            .unwrap()
            .iter()
            .any(|row| row.pane_id == "w1:p2")
    );
    assert!(matches!(
        herdr.send_keys(&target, &[Key::Text("x".into())], within(10)),
        Err(herd_surface::Error::Unsupported { .. })
    ));
}

#[test]
fn close_is_confirmed_only_by_pane_get_saying_missing() {
    let double = Double::new();
    let target = Target::Pane(herd_surface::PaneRef {
        pane_id: "w1:p2".into(),
        owned: true,
        ..Default::default()
    });
    let gone = double.surface("gone", "047", None);
    assert_eq!(
        herd_surface::close_confirmed(&gone, &target, within(10)),
        herd_surface::Closed::Confirmed
    );
    assert_eq!(
        gone.presence(&target, within(10)).unwrap(),
        Presence::Absent
    );
    let still = double.surface("still", "011", None);
    let closed =
        herd_surface::close_confirmed(&still, &target, Instant::now() + Duration::from_millis(600));
    assert!(
        matches!(closed, herd_surface::Closed::Unconfirmed(_)),
        "{closed:?}"
    );
}

#[test]
fn a_shell_that_never_gets_ready_is_rolled_back_and_confirmed_absent() {
    let double = Double::new();
    let herdr = double.surface("herdr", "016,047", None);
    let err = herdr.launch(&double.launch(), within(2)).unwrap_err();
    assert!(matches!(err, LaunchError::Definite(_)), "{err:?}");
    assert!(
        err.error().to_string().contains("not ready"),
        "{}",
        err.error()
    );
}

#[test]
fn a_rollback_without_proof_of_absence_leaves_an_uncertain_owner() {
    let double = Double::new();
    let herdr = double.surface("herdr", "016,011", None);
    match herdr.launch(&double.launch(), within(2)).unwrap_err() {
        LaunchError::Uncertain { owner, .. } => assert_eq!(owner.pane().unwrap().pane_id, "w1:p2"),
        other => panic!("expected an uncertain launch, got {other:?}"),
    }
}

#[test]
fn a_herdr_that_hangs_while_splitting_is_uncertain_within_the_budget() {
    let double = Double::new();
    let herdr = double.surface("herdr", "900", Some("pane split"));
    let started = Instant::now();
    let err = herdr.launch(&double.launch(), within(2)).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );
    assert!(
        matches!(err, LaunchError::Unowned(ref e) if e.is_uncertain()),
        "{err:?}"
    );
}

#[test]
fn a_herdr_that_hangs_on_dispatch_keeps_the_pane_as_owner() {
    let double = Double::new();
    let herdr = double.surface("herdr", "900", Some("pane run"));
    let started = Instant::now();
    let err = herdr.launch(&double.launch(), within(3)).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    match err {
        LaunchError::Uncertain { owner, error } => {
            assert!(error.is_uncertain(), "{error}");
            assert_eq!(owner.pane().unwrap().pane_id, "w1:p2");
        }
        other => panic!("expected an uncertain launch, got {other:?}"),
    }
}

#[test]
fn a_missing_server_is_a_definite_failure() {
    let double = Double::new();
    // `pane current` was not recorded against the absent socket: the double refuses (exit 125),
    // which the client reads as an unavailable Herdr.
    let herdr = Herdr::with_client(herd_herdr::Herdr::new("/nonexistent/herdr"), None);
    let err = herdr.launch(&double.launch(), within(5)).unwrap_err();
    assert!(matches!(err, LaunchError::Definite(_)), "{err:?}");
}

#[test]
fn a_worktree_root_pane_is_used_as_is_and_never_owned() {
    let double = Double::new();
    let herdr = double.surface("herdr", "900,011", None);
    let root = herd_surface::PaneRef {
        pane_id: "w1:p2".into(),
        workspace_id: Some("w1".into()),
        owned: true,
        ..Default::default()
    };
    let mut launch = double.launch();
    launch.into = Some(&root);
    let target = herdr.launch(&launch, within(10)).unwrap();
    let pane = target.pane().unwrap();
    assert_eq!(pane.pane_id, "w1:p2");
    assert!(!pane.owned, "a retained root pane is never closed by herd");
    assert!(matches!(
        herdr.close(&target, within(5)),
        Err(herd_surface::Error::Unsupported { .. })
    ));
}

#[test]
fn inspection_carries_the_agent_status_herdr_reports() {
    use herd_surface::{AgentStatus, Inspection};
    let double = Double::new();
    let pane = Target::Pane(herd_surface::PaneRef {
        pane_id: "w1:p7".into(),
        owned: true,
        ..Default::default()
    });
    // 073: the pane after `pane report-agent … --state working`.
    let working = double.surface("working", "073", None);
    assert_eq!(
        working.inspect(&pane, within(10)).unwrap(),
        Inspection {
            presence: Presence::Running,
            agent: Some(AgentStatus::Working),
        }
    );
    assert_eq!(
        working.presence(&pane, within(10)).unwrap(),
        Presence::Running
    );
    // 082: the same pane after `pane release-agent`.
    let released = double.surface("released", "082", None);
    assert_eq!(
        released.inspect(&pane, within(10)).unwrap().agent,
        Some(AgentStatus::Unknown)
    );
    let gone = double.surface("gone", "047", None);
    let closed = Target::Pane(herd_surface::PaneRef {
        pane_id: "w1:p2".into(),
        owned: true,
        ..Default::default()
    });
    assert_eq!(
        gone.inspect(&closed, within(10)).unwrap(),
        Inspection {
            presence: Presence::Absent,
            agent: None,
        }
    );
}

#[test]
fn a_listing_row_carries_the_agent_status_of_its_pane() {
    use herd_surface::AgentStatus;
    let double = Double::new();
    // 104: five panes after a restart, every agent status `unknown`.
    let herdr = double.surface("herdr", "104", None);
    let rows = herdr.list(within(10)).unwrap();
    assert_eq!(rows.len(), 5);
    for row in &rows {
        assert_eq!(row.agent, Some(AgentStatus::Unknown), "{row:?}");
        assert_eq!(row.inspection().presence, Presence::Running);
    }
}
