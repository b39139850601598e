//! A persistent specialist takes one task at a time.

use std::path::Path;

use herd_core::error::ErrorCode;
use herd_e2e::wait::wait_for;
use serde_json::Value;

use crate::support::{Env, WAIT, ack, exit_code, read, refusal};

#[test]
fn a_persistent_specialist_takes_one_task_at_a_time() {
    let env = Env::new();
    let request = serde_json::json!({"name": "keeper", "task": "first task", "persistent": true});
    let run = env.spawn_exec("process", &request, &["--persistent", "--wait", "go"]);
    assert_eq!(run.code, 0, "{run}");
    let launched = ack(&run);
    let run_id = launched.run_id;
    let first_task = launched.persistent_ids.expect("a specialist's ids").task_id;
    let session = launched.session_file;
    let ledger = || read(format!("{session}.ledger")).unwrap_or_default();
    assert!(
        ledger().contains(&format!("\"task\":\"{first_task}\""))
            && ledger().contains("\"dispatched\"")
    );

    // Busy with its first task: the send is recorded as rejected-busy and nothing is queued.
    let send = |message: &str| {
        env.run(
            &["send", "--run", &run_id, "--message", message, "--json"],
            &Value::Null,
        )
    };
    wait_for("the child to start", WAIT, || {
        read(env.work().join("child.pid"))
    });
    let busy = send("second task");
    assert_eq!(busy.code, 7, "{busy}");
    assert_eq!(refusal(&busy).code, ErrorCode::Conflict);
    assert!(ledger().contains("\"rejected-busy\""), "{}", ledger());
    assert!(!Path::new(&format!("{session}.task-inbox.000000000001.json")).exists());

    // Idle after its task event: the next task goes through the inbox.
    std::fs::write(env.work().join("go"), "").unwrap();
    wait_for("the first task's event", WAIT, || {
        read(format!("{session}.tasks")).filter(|t| t.contains(&first_task))
    });
    let sent = send("second task");
    assert_eq!(sent.code, 0, "{sent}");
    let second = sent.doc::<herd_protocol::launch::LaunchSend>().task_id;
    let log = wait_for("the child to take the task", WAIT, || {
        read(env.work().join("tasks.log")).filter(|l| l.contains(&second))
    });
    assert!(log.contains("second task"), "{log}");
    // It works on it until released, so it is busy again.
    let again = send("third task");
    assert_eq!(again.code, 7, "{again}");
    std::fs::write(env.work().join(format!("go.{second}")), "").unwrap();
    wait_for("the second task's event", WAIT, || {
        read(format!("{session}.tasks")).filter(|t| t.contains(&second))
    });

    // A stop directive ends it; afterwards sends are refused.
    let files = herd_protocol::layout::SessionFiles::new(&session);
    std::fs::write(
        files.inbox(99),
        "{\"version\":1,\"type\":\"stop\",\"task\":\"stop-1\",\"message\":\"\",\"at\":\"\"}\n",
    )
    .unwrap();
    assert_eq!(exit_code(&env, &run_id), 0);
    // It has ended: the proof every delivery makes refuses it as `conflict`, nothing written.
    let inboxes = || {
        let dir = Path::new(&session).parent().unwrap();
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.contains(".task-inbox."))
            .collect();
        names.sort();
        names
    };
    let before = inboxes();
    let refused = send("late task");
    assert_eq!(refused.code, 7, "{refused}");
    let error = refusal(&refused);
    assert_eq!(error.code, ErrorCode::Conflict, "{refused}");
    let reason = error.message;
    assert!(reason.contains("has ended"), "{reason}");
    assert_eq!(inboxes(), before, "no task was written for it");
    // Not a persistent run at all.
    let plain = env.spawn_exec(
        "process",
        &serde_json::json!({"name": "plain", "task": "t"}),
        &[],
    );
    let plain_id = ack(&plain).run_id;
    let not = env.run(
        &["send", "--run", &plain_id, "--message", "x", "--json"],
        &Value::Null,
    );
    assert_eq!(not.code, 2, "{not}");
}
