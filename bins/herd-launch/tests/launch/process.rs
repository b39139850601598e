//! Launches on the process surface: the run record, the runner's identity, concurrent spawns,
//! and a tree that ignores SIGTERM killed whole before its close is confirmed.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use herd_core::identity::Record;
use herd_e2e::cli::Run;
use herd_e2e::wait::wait_for;
use herd_protocol::child::{Phase, parse_activity};
use herd_protocol::run::{LaunchStatus, Runner, SurfaceKind};

use crate::support::{Env, WAIT, ack, exit_code, read};

fn stat_start_time(pid: u32) -> String {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    after.split(' ').nth(19).unwrap().to_owned()
}

#[test]
fn process_launch_records_everything_and_the_identity_is_the_runners_own() {
    let mut env = Env::new();
    // The child writes its own PID, which a confined child has of its own namespace.
    env.unconfined();
    env.set("HERDR_PANE_ID", "w1:p1");
    env.set("HERDR_TAB_ID", "w1:t1");
    env.set("HERDR_WORKSPACE_ID", "w1");
    let request = serde_json::json!({
        "name": "Echo child",
        "task": "say hi",
        "systemPrompt": "be brief",
        "accept": {"run": "echo SECRET-CHECK-COMMAND", "paths": ["tests"]},
    });
    let run = env.spawn_exec(
        "process",
        &request,
        &["--wait", "release", "--done", "--exit", "3"],
    );
    assert_eq!(run.code, 0, "{run}");
    let ack = ack(&run);
    assert_eq!(ack.status, LaunchStatus::Launched);
    assert_eq!(ack.surface, SurfaceKind::Process);
    assert_eq!(ack.runner, Runner::Exec);
    assert_eq!(ack.name, "Echo child");
    assert_eq!(ack.pane_id, None);
    let run_id = ack.run_id.as_str();
    assert_eq!(run_id.len(), 8);
    let session = PathBuf::from(&ack.session_file);
    let record = env.run_record(run_id);
    assert_eq!(record.status, LaunchStatus::Launched);

    // The identity record is the runner's own PID and kernel start time.
    let pid: u32 = wait_for("the child's pid", WAIT, || {
        read(env.work().join("child.pid"))?.trim().parse().ok()
    });
    let identity_file = PathBuf::from(format!("{}.process.json", session.display()));
    let identity = wait_for("the identity record", WAIT, || {
        Record::read(&identity_file).ok().flatten()
    });
    assert_eq!(identity.pid, pid);
    assert_eq!(identity.start_time.to_string(), stat_start_time(pid));
    assert_eq!(identity.id, run_id);
    assert_eq!(identity.session_file, session);

    // The child's environment (docs/protocol.md, "The child's environment"), and no Herdr pane
    // identity of the parent.
    let child_env = wait_for("the child's environment", WAIT, || {
        read(env.work().join("child.env"))
    });
    let accept_file = env.art().join("accept").join(format!("{run_id}.json"));
    for expected in [
        format!("PI_SUBAGENT_ID={run_id}"),
        format!("PI_HERDR_AGENTS_SESSION={}", session.display()),
        format!("PI_SUBAGENT_SESSION={}", session.display()),
        "PI_SUBAGENT_NAME=Echo child".to_owned(),
        "PI_SUBAGENT_AUTO_EXIT=1".to_owned(),
        format!(
            "PI_SUBAGENT_ACTIVITY_FILE={}",
            env.art()
                .join("subagent-activity")
                .join(format!("{run_id}.json"))
                .display()
        ),
        format!(
            "PI_SUBAGENT_PROCESS_FILE={}.process.json",
            session.display()
        ),
        format!("PI_SUBAGENT_ACCEPT_FILE={}", accept_file.display()),
    ] {
        assert!(
            child_env.lines().any(|l| l == expected),
            "missing {expected:?} in\n{child_env}"
        );
    }
    assert!(
        !child_env.contains("HERDR_PANE_ID") && !child_env.contains("HERDR_TAB_ID"),
        "{child_env}"
    );
    assert!(!child_env.contains("HERDR_WORKSPACE_ID"), "{child_env}");

    // The accept command is only in the spec file (mode 0600), never in the script, argv or env.
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&accept_file)
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
    assert!(read(&accept_file).unwrap().contains("SECRET-CHECK-COMMAND"));
    let script = read(env.run_record(run_id).extra.launch_script.unwrap()).unwrap();
    assert!(!script.contains("SECRET-CHECK-COMMAND"));
    assert!(!child_env.contains("SECRET-CHECK-COMMAND"));
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    assert!(!String::from_utf8_lossy(&cmdline).contains("SECRET-CHECK-COMMAND"));

    // The prompt arrived on stdin: the system prompt and the task.
    // The child may still be copying its stdin when its environment is there.
    let expected = "<System instructions>\nbe brief\n\n<Task>\nsay hi\n";
    let stdin = wait_for("the child's stdin", WAIT, || {
        read(env.work().join("child.stdin")).filter(|text| text == expected)
    });
    assert_eq!(stdin, expected);

    // The child finishes: its sidecar, its status, its logs with the sentinel.
    std::fs::write(env.work().join("release"), "").unwrap();
    assert_eq!(exit_code(&env, run_id), 3);
    assert_eq!(
        read(format!("{}.exit", session.display())).unwrap(),
        "{\"type\":\"done\"}\n"
    );
    let out = wait_for("the sentinel", WAIT, || {
        read(env.art().join("logs").join(format!("{run_id}.out")))
            .filter(|o| o.contains("__SUBAGENT_DONE_3__"))
    });
    assert!(out.contains(&format!("child {run_id} finished")), "{out}");
    let activity = parse_activity(
        &std::fs::read(
            env.art()
                .join("subagent-activity")
                .join(format!("{run_id}.json")),
        )
        .unwrap(),
        run_id,
    )
    .unwrap();
    assert_eq!(activity.phase, Phase::Done);
}

#[test]
fn twenty_concurrent_spawns_collide_in_nothing() {
    let env = Env::new();
    let runs: Vec<Run> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..20)
            .map(|_| {
                let env = &env;
                scope.spawn(move || {
                    env.spawn_exec(
                        "process",
                        &serde_json::json!({"name": "Same Name", "task": "t"}),
                        &["--exit", "0"],
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut ids = HashSet::new();
    let mut sessions = HashSet::new();
    let mut scripts = HashSet::new();
    for run in &runs {
        assert_eq!(run.code, 0, "{run}");
        let id = ack(run).run_id;
        let record = env.run_record(&id);
        assert!(ids.insert(id.clone()));
        assert!(sessions.insert(record.session_file));
        assert!(scripts.insert(record.extra.launch_script.unwrap()));
        assert_eq!(exit_code(&env, &id), 0);
    }
    assert_eq!(ids.len(), 20);
    assert_eq!(env.run_ids().len(), 20);
}

#[test]
fn a_tree_that_ignores_sigterm_is_killed_whole_before_its_close_is_confirmed() {
    let env = Env::new();
    // The child writes its PIDs, which a confined child has of its own namespace; the confined
    // case is `cancel::a_confirmed_cancel_of_a_confined_child_leaves_no_process_of_its_sandbox`.
    env.unconfined();
    let run = env.spawn_exec(
        "process",
        &serde_json::json!({"name": "stubborn", "task": "t"}),
        &["--ignore-term", "--grandchild", "--hang"],
    );
    assert_eq!(run.code, 0, "{run}");
    let run_id = ack(&run).run_id;
    let child: u32 = wait_for("the child's pid", WAIT, || {
        read(env.work().join("child.pid"))?.trim().parse().ok()
    });
    let grandchild: i32 = wait_for("the grandchild's pid", WAIT, || {
        read(env.work().join("grandchild.pid"))?.trim().parse().ok()
    });
    // What herd-watch does: open the surface from the record alone and close the child.
    let artifacts = herd_protocol::layout::Artifacts::new(env.art());
    let record = herd_protocol::run::RunRecord::load(&artifacts, &run_id).unwrap();
    let (surface, target) = herd_surface::open(&record, &artifacts).unwrap();
    assert_eq!(
        surface
            .presence(&target, Instant::now() + Duration::from_secs(5))
            .unwrap(),
        herd_surface::Presence::Running
    );
    let identity = herd_core::identity::Record::read(&record.session_files().process())
        .unwrap()
        .unwrap();
    assert_eq!(identity.pid, child);
    // SIGTERM is ignored by the whole tree: after the grace, SIGKILL ends every process of the
    // child's session, the grandchild included, and only then is the close confirmed.
    let closed = herd_surface::close_confirmed(
        surface.as_ref(),
        &target,
        Instant::now() + Duration::from_secs(10),
    );
    assert_eq!(closed, herd_surface::Closed::Confirmed);
    assert_eq!(
        herd_core::identity::judge(&identity),
        herd_core::identity::Judgement::Exited
    );
    // SAFETY: kill with signal 0 only probes; the PID is the test child's grandchild, and a
    // reused PID would have to belong to this user and start in the last instant.
    let grandchild_alive = unsafe { libc::kill(grandchild, 0) } == 0
        && std::fs::read_to_string(format!("/proc/{grandchild}/stat"))
            .is_ok_and(|stat| !stat.contains(") Z "));
    assert!(
        !grandchild_alive,
        "the grandchild {grandchild} outlived a confirmed close"
    );
}
