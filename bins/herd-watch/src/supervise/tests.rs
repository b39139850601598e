use super::reconcile::reconcile;
use super::*;
use herd_surface::AgentStatus as HerdrStatus;
use herd_surface::Presence;

/// A run in a Herdr pane, seen by nothing yet: its surface is opened from the record alone,
/// which asks Herdr nothing.
fn tracked_in_herdr() -> Tracked {
    let record: RunRecord = serde_json::from_value(serde_json::json!({
        "format_version": 1, "run_id": "ab12cd34", "name": "worker", "created_at_ms": 1000,
        "runner": "pi", "surface": "herdr", "status": "launched", "cwd": "/",
        "session_file": "/nonexistent/s.jsonl",
        "pane": {"pane_id": "w1:p7", "workspace_id": "w1", "owned": true},
    }))
    .unwrap();
    Tracked::new(record)
}

fn listed(agent: Option<HerdrStatus>) -> Option<Inspection> {
    Some(Inspection {
        presence: Presence::Running,
        agent,
    })
}

/// A child on the process surface whose launch script sleeps, and its record, written.
fn launch_sleeping(
    artifacts: &Artifacts,
    dir: &Path,
    extra: serde_json::Value,
) -> (RunRecord, Target) {
    let sessions = dir.join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let session = sessions.join("2026_ab12cd34.jsonl");
    let script = dir.join("child.sh");
    std::fs::write(&script, "exec sleep 120\n").unwrap();
    let process = herd_surface::process::Process::new(artifacts.clone());
    let launch = herd_surface::Launch {
        run_id: "ab12cd34",
        name: "worker",
        cwd: dir,
        script: &script,
        session_file: &session,
        into: None,
    };
    let target = process
        .launch(&launch, &herd_surface::LaunchBudgets::default())
        .unwrap();
    let mut record = serde_json::json!({
        "format_version": 1, "run_id": "ab12cd34", "name": "worker", "created_at_ms": 1000,
        "runner": "exec", "surface": "process", "status": "launched", "cwd": "/",
        "session_file": session,
    });
    record
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let record: RunRecord = serde_json::from_value(record).unwrap();
    herd_core::sidecar::write_json(&artifacts.run_record("ab12cd34"), &record).unwrap();
    herd_protocol::open_runs::add(artifacts, "ab12cd34").unwrap();
    (record, target)
}

/// Ends the launch script `launch_sleeping` started, through its verified identity.
fn kill_leader(target: &Target) {
    let Target::Process(files) = target else {
        panic!("a process target")
    };
    if let Ok(Some(leader)) = herd_core::identity::Record::read(&files.leader) {
        herd_core::identity::terminate(&leader, libc::SIGKILL);
    }
}

#[test]
fn a_pending_stop_wakes_the_loop_at_its_deadline_not_at_the_long_interval() {
    let dir = tempfile::tempdir().unwrap();
    let artifacts = Artifacts::new(dir.path().join("art"));
    let (record, target) = launch_sleeping(
        &artifacts,
        dir.path(),
        serde_json::json!({"persistent": true}),
    );
    let ledger = record.session_files().ledger();
    // The stop directive was published just now, and no task holds it.
    herd_protocol::persistent::LedgerLine {
        task: "t1".into(),
        outcome: herd_protocol::persistent::Outcome::StopPending,
        generation: "g1".into(),
        logical_id: "l1".into(),
        policy_hash: String::new(),
        at: herd_protocol::persistent::At::now(),
    }
    .append(&ledger)
    .unwrap();
    let mut supervisor = Supervisor::new(artifacts.clone(), None, Options::default());
    supervisor.scan().unwrap();
    supervisor.tick(|_| Ok(())).unwrap();
    let run = &supervisor.tracked["ab12cd34"];
    assert!(
        run.exit_watch.is_some(),
        "the specialist's process is watched"
    );
    assert!(run.stop_due_ms.is_some(), "the stop's deadline is known");
    let sleep = supervisor.idle_sleep();
    kill_leader(&target);
    assert!(
        sleep <= Duration::from_millis(crate::tasks::STOP_DEADLINE_MS),
        "the loop wakes when the stop becomes unconfirmed: {sleep:?}"
    );
}

#[test]
fn an_idle_process_child_costs_no_tick_until_it_exits() {
    let dir = tempfile::tempdir().unwrap();
    let artifacts = Artifacts::new(dir.path().join("art"));
    let (_, target) = launch_sleeping(&artifacts, dir.path(), serde_json::json!({}));
    let mut supervisor = Supervisor::new(artifacts.clone(), None, Options::default());
    supervisor.scan().unwrap();
    let events = supervisor.tick(|_| Ok(())).unwrap();
    assert!(events.iter().all(|e| !matches!(e, Event::Result(_))));
    let run = &supervisor.tracked["ab12cd34"];
    assert!(
        run.exit_watch.is_some(),
        "the running launch script is watched"
    );
    // Nothing is due before the long interval: the loop sleeps past many short ones.
    assert!(supervisor.quiet(run));
    assert!(supervisor.idle_sleep() > 10 * Options::default().reconcile_interval);

    kill_leader(&target);
    // The exit ends the sleep and makes the run due at once.
    let mut woke = false;
    for _ in 0..5 {
        woke = supervisor.sleep();
        if woke && supervisor.tracked["ab12cd34"].exit_watch.is_none() {
            break;
        }
    }
    assert!(woke, "the exit woke the loop");
    let run = &supervisor.tracked["ab12cd34"];
    assert!(run.exit_watch.is_none() && supervisor.due(run));
}

#[test]
fn a_file_event_names_the_run_whose_file_changed() {
    let dir = tempfile::tempdir().unwrap();
    let artifacts = Artifacts::new(dir.path().join("art"));
    let sessions = dir.path().join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let record: RunRecord = serde_json::from_value(serde_json::json!({
        "format_version": 1, "run_id": "ab12cd34", "name": "worker", "created_at_ms": 1000,
        "runner": "pi", "surface": "process", "status": "launched", "cwd": "/",
        "session_file": sessions.join("2026_ab12cd34.jsonl"),
    }))
    .unwrap();
    herd_core::sidecar::write_json(&artifacts.run_record("ab12cd34"), &record).unwrap();
    herd_protocol::open_runs::add(&artifacts, "ab12cd34").unwrap();
    let mut supervisor = Supervisor::new(artifacts.clone(), None, Options::default());
    supervisor.scan().unwrap();
    let of = |dir: &Path, name: &str| supervisor.run_of(dir, &OsString::from(name));
    let runs = artifacts.runs_dir();
    assert_eq!(
        of(&runs, "ab12cd34.cancel.json").as_deref(),
        Some("ab12cd34")
    );
    assert_eq!(
        of(&runs, "ab12cd34.result.json").as_deref(),
        Some("ab12cd34")
    );
    assert_eq!(
        of(&artifacts.activity_dir(), "ab12cd34.json").as_deref(),
        Some("ab12cd34")
    );
    assert_eq!(
        of(&sessions, "2026_ab12cd34.jsonl.exit").as_deref(),
        Some("ab12cd34")
    );
    assert_eq!(
        of(&sessions, "2026_ab12cd34.jsonl").as_deref(),
        Some("ab12cd34")
    );
    // Temporary files, other runs and other sessions name no tracked run.
    assert_eq!(of(&runs, ".ab12cd34.json.x1.tmp"), None);
    assert_eq!(of(&runs, "ff00ff00.json"), None);
    assert_eq!(of(&sessions, "2026_other.jsonl.exit"), None);
}

#[test]
fn a_child_written_detail_is_encoded_on_the_status_line() {
    let event = Event::Status {
        run_id: "ab12cd34".into(),
        name: "worker".into(),
        projection: Projection {
            label: Label::Active,
            detail: Some("read\u{1b}[2J\u{2028}x".into()),
            since_ms: Some(1),
        },
    };
    assert_eq!(event.human(), r"worker: active · read\u001b[2J\u2028x");
}

#[test]
fn the_listed_agent_status_drives_the_turn() {
    let artifacts = Artifacts::new("/nonexistent/artifacts");
    let mut run = tracked_in_herdr();
    let label = |run: &Tracked, now| run.lifecycle.project(now).label;

    // Present but not yet working: the process is confirmed, the turn not begun.
    assert!(
        reconcile(
            &mut run,
            &artifacts,
            2000,
            listed(Some(HerdrStatus::Idle)),
            false
        )
        .is_none()
    );
    assert_eq!(label(&run, 2000), Label::Running);
    assert!(
        reconcile(
            &mut run,
            &artifacts,
            3000,
            listed(Some(HerdrStatus::Working)),
            false
        )
        .is_none()
    );
    assert_eq!(label(&run, 3000), Label::Active);
    // `unknown` (and a surface without statuses) keeps the turn.
    reconcile(
        &mut run,
        &artifacts,
        4000,
        listed(Some(HerdrStatus::Unknown)),
        false,
    );
    assert_eq!(label(&run, 4000), Label::Active);
    reconcile(&mut run, &artifacts, 4500, listed(None), false);
    assert_eq!(label(&run, 4500), Label::Active);
    reconcile(
        &mut run,
        &artifacts,
        5000,
        listed(Some(HerdrStatus::Blocked)),
        false,
    );
    assert_eq!(label(&run, 5000), Label::Blocked);
    reconcile(
        &mut run,
        &artifacts,
        6000,
        listed(Some(HerdrStatus::Done)),
        false,
    );
    assert_eq!(label(&run, 6000), Label::Waiting);
    reconcile(
        &mut run,
        &artifacts,
        7000,
        listed(Some(HerdrStatus::Idle)),
        false,
    );
    assert_eq!(label(&run, 7000), Label::Waiting);
    assert!(
        run.surface.is_some(),
        "the surface was opened from the record"
    );
}
