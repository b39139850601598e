use super::reconcile::reconcile;
use super::*;
use herd_protocol::result::Outcome;
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

/// A finished run's record and its result file as `bytes`, in the open-run set.
fn settled_run(artifacts: &Artifacts, id: &str, bytes: &[u8]) {
    let record: RunRecord = serde_json::from_value(serde_json::json!({
        "format_version": 1, "run_id": id, "name": format!("child {id}"), "created_at_ms": 1000,
        "runner": "exec", "surface": "process", "status": "launched", "cwd": "/",
        "session_file": format!("/nonexistent/{id}.jsonl"),
    }))
    .unwrap();
    herd_core::sidecar::write_json(&artifacts.run_record(id), &record).unwrap();
    herd_protocol::open_runs::add(artifacts, id).unwrap();
    std::fs::write(artifacts.run_result(id), bytes).unwrap();
}

fn result_bytes(id: &str, format_version: u64, padding: usize) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "format_version": format_version, "run_id": id, "name": format!("child {id}"),
        "outcome": "completed", "message": format!("Done. {}", "x".repeat(padding)),
        "details": {}, "settled_at_ms": 1,
    }))
    .unwrap()
}

#[test]
fn a_result_no_reader_can_read_is_settled_failed_and_the_others_are_delivered() {
    let dir = tempfile::tempdir().unwrap();
    let artifacts = Artifacts::new(dir.path().join("art"));
    // A result past the bound (as an older herd wrote one), one of a newer herd, and a good one.
    settled_run(
        &artifacts,
        "aa11aa11",
        &result_bytes("aa11aa11", 1, 3 << 20),
    );
    settled_run(&artifacts, "cc33cc33", &result_bytes("cc33cc33", 99, 0));
    settled_run(&artifacts, "bb22bb22", &result_bytes("bb22bb22", 1, 0));
    let mut supervisor = Supervisor::new(artifacts.clone(), None, Options::default());
    supervisor.scan().unwrap();
    let mut delivered = Vec::new();
    let events = supervisor
        .tick(|r| {
            delivered.push(r.clone());
            Ok(())
        })
        .unwrap();
    let outcome = |id: &str| {
        delivered
            .iter()
            .find(|r| r.run_id == id)
            .map(|r| (r.outcome, r.message.clone()))
    };
    let (good, _) = outcome("bb22bb22").expect("the good result is delivered");
    assert_eq!(good, Outcome::Completed);
    let (failed, message) = outcome("aa11aa11").expect("the unreadable one is settled");
    assert_eq!(failed, Outcome::Failed);
    assert!(
        message.contains("its result could not be read"),
        "{message}"
    );
    assert!(
        message.contains("is larger than 1048576 bytes"),
        "{message}"
    );
    let aside = artifacts.unreadable_result("aa11aa11");
    assert!(message.contains(&aside.display().to_string()), "{message}");
    assert!(
        std::fs::metadata(&aside).unwrap().len() > 3 << 20,
        "kept as it was"
    );
    // The newer herd's result is neither replaced nor delivered: said once, the others go on.
    assert!(outcome("cc33cc33").is_none());
    let notices: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, Event::Notice { run_id, .. } if run_id == "cc33cc33"))
        .collect();
    assert_eq!(notices.len(), 1, "{events:?}");
    assert!(artifacts.run_result("cc33cc33").exists());
    supervisor.all_changed = true;
    let again = supervisor
        .tick(|_| panic!("nothing more to deliver"))
        .unwrap();
    assert!(again.is_empty(), "{again:?}");
}
