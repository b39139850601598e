//! The Herdr surface against the recorded-reply double of the `herdr` executable.
//!
//! Every reply comes from `herd-herdr`'s recordings of a real Herdr 0.8.0. Some replies are
//! derived, because no recording has them, and each is a recorded reply under the command line
//! herd runs, with the ids of the pane it is about:
//! - `900`: `pane process-info --pane w1:p2` of an idle shell: recording 016 with the foreground
//!   process group set to the shell's own PID (a shell is ready when its foreground process
//!   group is its own PID);
//! - `901`: `pane run w1:p2 "sh '<this test's script>'"`: silent success, as recording 008;
//! - `902`: `tab create --workspace w1 --label Agents --cwd /home/dev/src/proj --no-focus`:
//!   recording 040 (`--label logs`, made in that same directory), its tab labelled `Agents`;
//! - `903`, `904`: 900 and 901 for `w1:p4`, the root pane of 040's tab;
//! - `905`, `906`: `pane close w1:p4` and the `pane get w1:p4` after it: recordings 046 and 047
//!   (which closed `w1:p2`), naming `w1:p4`;
//! - `907`: `pane layout --pane w1:p1` of the tab while `w1:p1` was its only pane: recording 100
//!   with that one pane filling the area.
//!
//! Each test reaches the double through a wrapper script that sets the double's environment (which
//! recording wins among equal command lines, which command hangs or gets a fault), so tests
//! running in parallel never share environment variables.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test on any error"
)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use herd_protocol::layout::Artifacts;
use herd_surface::herdr::{Herdr, grouping};
use herd_surface::{Key, Launch, LaunchBudgets, LaunchError, Presence, Surface, Target};

/// The directory the recorded workspace was made in, where grouped children are launched.
const PROJ: &str = "/home/dev/src/proj";
/// The socket every surface of these tests names.
const SOCKET: &str = "/home/dev/.config/herdr/herdr.sock";

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
        let recorded = |name: &str| -> (String, String) {
            let text = std::fs::read_to_string(source.join(name)).unwrap();
            let (line, reply) = text.split_once('\n').unwrap();
            (line.to_owned(), reply.to_owned())
        };
        let mut table = String::new();
        let mut derive = |name: &str, line: &str, reply: &str, exit: u8, stream: &str| {
            std::fs::write(
                recordings.join(format!("{name}.txt")),
                format!("{line}\n{reply}"),
            )
            .unwrap();
            table.push_str(&format!("| {name}.txt | {exit} | {stream} | derived |\n"));
        };
        let idle = |pane: &str| {
            let (_, busy) = recorded("016-pane-process-info.txt");
            let mut idle: serde_json::Value = serde_json::from_str(busy.trim()).unwrap();
            let info = &mut idle["result"]["process_info"];
            info["foreground_process_group_id"] = info["shell_pid"].clone();
            info["foreground_processes"] = serde_json::json!([]);
            info["pane_id"] = pane.into();
            format!("{idle}\n")
        };
        let run = |pane: &str| format!("herdr pane run {pane} \"sh '{}'\"", script.display());
        derive(
            "900-derived-pane-process-info-idle",
            "herdr pane process-info --pane w1:p2",
            &idle("w1:p2"),
            0,
            "stdout",
        );
        derive(
            "901-derived-pane-run-script",
            &run("w1:p2"),
            "",
            0,
            "(none)",
        );
        let (_, created) = recorded("040-tab-create.txt");
        let mut created: serde_json::Value = serde_json::from_str(created.trim()).unwrap();
        created["result"]["tab"]["label"] = "Agents".into();
        derive(
            "902-derived-tab-create-agents",
            &format!("herdr tab create --workspace w1 --label Agents --cwd {PROJ} --no-focus"),
            &format!("{created}\n"),
            0,
            "stdout",
        );
        derive(
            "903-derived-pane-process-info-idle-root",
            "herdr pane process-info --pane w1:p4",
            &idle("w1:p4"),
            0,
            "stdout",
        );
        derive(
            "904-derived-pane-run-script-root",
            &run("w1:p4"),
            "",
            0,
            "(none)",
        );
        let (_, closed) = recorded("046-pane-close.txt");
        derive(
            "905-derived-pane-close-root",
            "herdr pane close w1:p4",
            &closed,
            0,
            "stdout",
        );
        let (_, gone) = recorded("047-pane-get-after-close.txt");
        derive(
            "906-derived-pane-get-root-after-close",
            "herdr pane get w1:p4",
            &gone.replace("w1:p2", "w1:p4"),
            1,
            "+stderr",
        );
        let (_, layout) = recorded("100-pane-layout.txt");
        let mut layout: serde_json::Value = serde_json::from_str(layout.trim()).unwrap();
        let tab = &mut layout["result"]["layout"];
        let area = tab["area"].clone();
        tab["panes"] = serde_json::json!([{"focused": true, "pane_id": "w1:p1", "rect": area}]);
        tab["splits"] = serde_json::json!([]);
        derive(
            "907-derived-pane-layout-one-pane",
            "herdr pane layout --pane w1:p1",
            &format!("{layout}\n"),
            0,
            "stdout",
        );
        let mut readme = std::fs::read_to_string(recordings.join("README.md")).unwrap();
        readme.push_str(&table);
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
        self.surface_with(name, pick, hang.map(|command| (command, "hang")))
    }

    /// A surface whose `herdr` replays with `pick`, and injects `fault` into the command starting
    /// with its first part.
    fn surface_with(&self, name: &str, pick: &str, fault: Option<(&str, &str)>) -> Herdr {
        let wrapper = self.dir.path().join(name);
        let double = env!("CARGO_BIN_EXE_herd-surface-herdr-double");
        let fault = fault.map_or_else(String::new, |(command, fault)| {
            format!(
                "case \"$*\" in \"{command}\"*) HERDR_DOUBLE_FAULT='{fault}' exec '{double}' \"$@\";; esac\n"
            )
        });
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\nexport HERDR_DOUBLE_RECORDINGS='{}' HERDR_DOUBLE_PICK='{pick}'\n{fault}exec '{double}' \"$@\"\n",
                self.dir.path().join("recordings").display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
        Herdr::with_client(
            herd_herdr::Herdr::new(&wrapper),
            Some(PathBuf::from(SOCKET)),
        )
    }

    /// A surface whose `herdr` replays with `pick` and takes `seconds` before answering each
    /// command starting with one of `slow`, as a busy server does.
    fn slow_surface(&self, name: &str, pick: &str, slow: &[&str], seconds: f64) -> Herdr {
        let wrapper = self.dir.path().join(name);
        let double = env!("CARGO_BIN_EXE_herd-surface-herdr-double");
        let cases: Vec<String> = slow.iter().map(|c| format!("\"{c}\"*")).collect();
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\nexport HERDR_DOUBLE_RECORDINGS='{}' HERDR_DOUBLE_PICK='{pick}'\ncase \"$*\" in {}) sleep {seconds};; esac\nexec '{double}' \"$@\"\n",
                self.dir.path().join("recordings").display(),
                cases.join("|"),
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
        Herdr::with_client(
            herd_herdr::Herdr::new(&wrapper),
            Some(PathBuf::from(SOCKET)),
        )
    }

    /// The artifacts directory of grouped launches.
    fn artifacts(&self) -> Artifacts {
        Artifacts::new(self.dir.path().join("artifacts"))
    }

    /// The owned tabs recorded in the artifacts directory, as JSON.
    fn owned_tabs(&self) -> Option<serde_json::Value> {
        let text = std::fs::read_to_string(grouping::owned_tabs_file(&self.artifacts())).ok()?;
        Some(serde_json::from_str(&text).unwrap())
    }

    /// Records `tabs` (socket, workspace, tab) as the owned tabs, as an earlier launch would.
    fn own_tabs(&self, tabs: &[(&str, &str, &str)]) {
        let tabs: Vec<serde_json::Value> = tabs
            .iter()
            .map(|(socket, workspace, tab)| {
                serde_json::json!({"socket": socket, "workspace_id": workspace, "tab_id": tab})
            })
            .collect();
        let path = grouping::owned_tabs_file(&self.artifacts());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            path,
            serde_json::json!({"format_version": 1, "tabs": tabs}).to_string(),
        )
        .unwrap();
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

/// Every operation of a launch within `seconds`.
fn budgets(seconds: u64) -> LaunchBudgets {
    LaunchBudgets::default().capped(Duration::from_secs(seconds))
}

fn within(seconds: u64) -> Instant {
    Instant::now() + Duration::from_secs(seconds)
}

/// A pane herd made (and may close), known by its id.
fn owned_pane(pane_id: &str) -> Target {
    Target::Pane(herd_surface::PaneRef {
        pane_id: pane_id.into(),
        owned: true,
        ..Default::default()
    })
}

#[test]
fn launch_splits_the_caller_waits_for_the_shell_and_runs_the_script() {
    let double = Double::new();
    let herdr = double.surface("herdr", "900,011,030,012", None);
    let target = herdr.launch(&double.launch(), &budgets(20)).unwrap();
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
    // Literal text goes in with `pane send-text` (025), keys after it with `pane send-keys`.
    herdr
        .send_keys(
            &target,
            &[Key::Text("echo typed".into()), Key::Enter],
            within(10),
        )
        .unwrap();
}

#[test]
fn each_launch_operation_has_a_budget_of_its_own() {
    // Placement, readiness and dispatch each take 2.5 s of their own 6 s: 7.5 s together, more
    // than any one budget, so the launch succeeds only if none eats another's.
    let double = Double::new();
    let slow = ["pane split", "pane process-info", "pane run"];
    let herdr = double.slow_surface("herdr", "900,011,030,012", &slow, 2.5);
    let budgets = LaunchBudgets {
        placement: Duration::from_secs(6),
        rename: Duration::from_secs(1),
        readiness: Duration::from_secs(6),
        dispatch: Duration::from_secs(6),
    };
    let target = herdr.launch(&double.launch(), &budgets).unwrap();
    assert_eq!(target.pane().unwrap().pane_id, "w1:p2");
    // The same server with a readiness budget shorter than its answer: the failure names the
    // operation, and the pane is rolled back.
    let short = LaunchBudgets {
        readiness: Duration::from_millis(500),
        ..budgets
    };
    let herdr = double.slow_surface("slow-ready", "900,030,012,047", &["pane process-info"], 2.5);
    let err = herdr.launch(&double.launch(), &short).unwrap_err();
    assert!(matches!(err, LaunchError::Definite(_)), "{err:?}");
    assert!(
        err.error()
            .to_string()
            .starts_with("shell readiness (its budget is 500 ms): "),
        "{err:?}"
    );
}

#[test]
fn close_is_confirmed_only_by_pane_get_saying_missing() {
    let double = Double::new();
    let target = owned_pane("w1:p2");
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
    let err = herdr.launch(&double.launch(), &budgets(2)).unwrap_err();
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
    match herdr.launch(&double.launch(), &budgets(2)).unwrap_err() {
        LaunchError::Uncertain { owner, .. } => assert_eq!(owner.pane().unwrap().pane_id, "w1:p2"),
        other => panic!("expected an uncertain launch, got {other:?}"),
    }
}

#[test]
fn a_herdr_that_hangs_while_splitting_is_uncertain_within_the_budget() {
    let double = Double::new();
    let herdr = double.surface("herdr", "900", Some("pane split"));
    let started = Instant::now();
    let err = herdr.launch(&double.launch(), &budgets(2)).unwrap_err();
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
    let err = herdr.launch(&double.launch(), &budgets(3)).unwrap_err();
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
    let err = herdr.launch(&double.launch(), &budgets(5)).unwrap_err();
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
    let target = herdr.launch(&launch, &budgets(10)).unwrap();
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
    let pane = owned_pane("w1:p7");
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
    let closed = owned_pane("w1:p2");
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

impl Double {
    /// A launch of a child in the recorded workspace's directory.
    fn launch_in_proj(&self) -> Launch<'_> {
        Launch {
            cwd: Path::new(PROJ),
            ..self.launch()
        }
    }

    /// A surface placing children in the owned `Agents` tab of the workspace list `workspaces`.
    fn grouped(&self, name: &str, workspaces: &str, pick: &str) -> Herdr {
        self.surface(name, &format!("{workspaces},{pick}"), None)
            .grouped(&self.artifacts())
    }
}

#[test]
fn the_first_grouped_child_creates_the_agents_tab_and_records_it() {
    let double = Double::new();
    // 005: one workspace, w1, on no checkout: the caller's workspace (014: w1) is the one.
    let herdr = double.grouped("herdr", "005", "");
    let target = herdr
        .launch(&double.launch_in_proj(), &budgets(20))
        .unwrap();
    let pane = target.pane().unwrap();
    assert_eq!(pane.pane_id, "w1:p4");
    assert_eq!(pane.tab_id.as_deref(), Some("w1:t2"));
    assert_eq!(pane.workspace_id.as_deref(), Some("w1"));
    assert!(pane.owned);
    assert_eq!(pane.socket.as_deref(), Some(SOCKET));
    assert_eq!(
        double.owned_tabs().unwrap(),
        serde_json::json!({"format_version": 1, "tabs": [
            {"socket": SOCKET, "workspace_id": "w1", "tab_id": "w1:t2"},
        ]})
    );
}

#[test]
fn a_later_grouped_child_splits_a_pane_of_the_recorded_tab() {
    let double = Double::new();
    // As if an earlier child had made w1:t1 the Agents tab: 013 lists w1:p1 and w1:p2 in it.
    double.own_tabs(&[(SOCKET, "w1", "w1:t1")]);
    let herdr = double.grouped("herdr", "005", "900,907");
    let target = herdr
        .launch(&double.launch_in_proj(), &budgets(20))
        .unwrap();
    let pane = target.pane().unwrap();
    // 907 shows w1:p1 alone and wide: 007, `pane split w1:p1 --direction right --no-focus`, not
    // a new tab (which is w1:p4).
    assert_eq!(pane.pane_id, "w1:p2");
    assert_eq!(pane.tab_id.as_deref(), Some("w1:t1"));
    assert!(pane.owned);
    assert_eq!(
        double.owned_tabs().unwrap()["tabs"],
        serde_json::json!([{"socket": SOCKET, "workspace_id": "w1", "tab_id": "w1:t1"}])
    );
}

#[test]
fn a_recorded_tab_that_is_gone_is_created_again() {
    let double = Double::new();
    // w1:t7 has no pane in 013's listing; the w1:t1 of another Herdr server is not this one's.
    double.own_tabs(&[("/elsewhere.sock", "w1", "w1:t1"), (SOCKET, "w1", "w1:t7")]);
    let herdr = double.grouped("herdr", "005", "");
    let target = herdr
        .launch(&double.launch_in_proj(), &budgets(20))
        .unwrap();
    assert_eq!(target.pane().unwrap().pane_id, "w1:p4");
    assert_eq!(target.pane().unwrap().tab_id.as_deref(), Some("w1:t2"));
    assert_eq!(
        double.owned_tabs().unwrap()["tabs"],
        serde_json::json!([
            {"socket": "/elsewhere.sock", "workspace_id": "w1", "tab_id": "w1:t1"},
            {"socket": SOCKET, "workspace_id": "w1", "tab_id": "w1:t2"},
        ])
    );
}

#[test]
fn a_new_tab_without_its_id_loses_its_pane_and_the_launch_fails() {
    let double = Double::new();
    let herdr = double
        .surface_with("herdr", "005", Some(("tab create", "omit:result.tab")))
        .grouped(&double.artifacts());
    let err = herdr
        .launch(&double.launch_in_proj(), &budgets(20))
        .unwrap_err();
    // The root pane was closed (905) and its absence confirmed (906): nothing is left.
    assert!(matches!(err, LaunchError::Definite(_)), "{err:?}");
    assert!(
        err.error().to_string().contains("names no tab"),
        "{}",
        err.error()
    );
    assert_eq!(double.owned_tabs(), None);
}

#[test]
fn a_herdr_that_hangs_while_creating_the_tab_is_uncertain_within_the_budget() {
    let double = Double::new();
    let herdr = double
        .surface("herdr", "005", Some("tab create"))
        .grouped(&double.artifacts());
    let started = Instant::now();
    let err = herdr
        .launch(&double.launch_in_proj(), &budgets(2))
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );
    assert!(
        matches!(err, LaunchError::Unowned(ref e) if e.is_uncertain()),
        "{err:?}"
    );
    assert_eq!(double.owned_tabs(), None);
}

#[test]
fn grouped_placement_waits_its_turn_only_until_the_deadline() {
    let double = Double::new();
    let artifacts = double.artifacts();
    let turn = grouping::Turn::take(&artifacts, within(5)).unwrap();
    let herdr = double.grouped("herdr", "005", "");
    let err = herdr
        .launch(
            &double.launch_in_proj(),
            &LaunchBudgets::default().capped(Duration::from_millis(800)),
        )
        .unwrap_err();
    assert!(
        matches!(
            err,
            LaunchError::Definite(herd_surface::Error::During { operation: herd_surface::Operation::Placement, ref source, .. })
                if matches!(**source, herd_surface::Error::Timeout { .. })
        ),
        "{err:?}"
    );
    assert!(
        err.error()
            .to_string()
            .starts_with("pane placement (its budget is 800 ms): "),
        "{}",
        err.error()
    );
    drop(turn);
    assert_eq!(double.owned_tabs(), None);
}

#[test]
fn a_child_in_another_checkout_goes_to_the_workspace_open_on_it() {
    let double = Double::new();
    // 062: w1 (the caller's, 014) on no checkout, w2 on /home/dev/src/repo. No tab was recorded
    // in w2, so the double refuses the creation, and its refusal names the command line.
    let herdr = double.grouped("herdr", "062", "");
    let launch = Launch {
        cwd: Path::new("/home/dev/src/repo/src"),
        ..double.launch()
    };
    let err = herdr.launch(&launch, &budgets(20)).unwrap_err();
    assert!(
        err.error().to_string().contains(
            "no recording of `herdr tab create --workspace w2 --label Agents \
             --cwd /home/dev/src/repo/src --no-focus`"
        ),
        "{}",
        err.error()
    );
}
