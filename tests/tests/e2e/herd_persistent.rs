//! A persistent specialist: it answers its first task, then two more sent with
//! `herd-launch send`, and stops on `herd-watch stop`; `herd-watch follow` delivers each task's
//! result once.
//!
//! On tmux only: a persistent Pi child stays open between tasks, which needs a terminal, and
//! herd-launch refuses it on the process surface (Pi runs there in print mode, which quits when
//! its first prompt is answered).

use std::time::Duration;

use herd_e2e::herd::{Herd, Where, events as decoded, read_text};
use herd_e2e::model::{ModelServer, Script, Text, ToolCall, request};
use herd_e2e::pi::PiEnv;
use herd_e2e::proc::process_alive;
use herd_e2e::wait::wait_for;
use herd_protocol::launch::{LaunchSend, SendStatus};
use herd_protocol::persistent::{TaskEvent, TaskEventKind};
use herd_protocol::watch::{StatusWidget, StopStatus, WatchEvent, WatchStop};
use serde_json::{Value, json};

/// The `task-done` events the specialist wrote to `<session>.tasks` (a line still being
/// written, or of another shape, left out).
fn tasks_done(session_file: &str) -> Vec<TaskEvent> {
    read_text(format!("{session_file}.tasks").as_ref())
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<TaskEvent>(l).ok())
        .filter(|e| e.kind == TaskEventKind::TaskDone)
        .collect()
}

/// The task results among `events`: (task id, message).
fn task_results(events: &[Value]) -> Vec<(String, String)> {
    decoded(events)
        .into_iter()
        .filter_map(|e| match e {
            WatchEvent::Result {
                message, details, ..
            } => Some((details.task?, message)),
            _ => None,
        })
        .collect()
}

/// The widget's row of the idle specialist: the seed's label `waiting` ("turn finished; the
/// process is intentionally open for more input or another stage"), not `waiting for input`, and
/// nothing it does not know (no `cost unknown`, no `unknown tok`).
fn idle_row_says_waiting(herd: &Herd<'_>) {
    let mut widget = String::new();
    let row = herd_e2e::wait::try_wait_for(Duration::from_secs(30), || {
        let out = herd.run("herd-watch", ["status", "--widget", "--json"]);
        assert!(out.success(), "herd-watch status --widget:\n{out}");
        let doc: StatusWidget = out.doc();
        widget = doc.widget;
        widget
            .lines()
            .find(|l| l.contains(" Specialist ") && l.contains(" waiting "))
            .map(str::to_owned)
    });
    let row = row.unwrap_or_else(|| panic!("no idle `waiting` row in the widget:\n{widget}"));
    assert!(!row.contains("waiting for input"), "{row}");
    assert!(!row.contains("unknown"), "{row}");
}

#[test]
fn on_tmux_a_persistent_specialist_answers_two_sent_tasks_and_stops() {
    let model = ModelServer::start(
        Script::new()
            .step(Text("ANSWER 1: ready"))
            .step(ToolCall::bash("echo two > two.txt"))
            .step(Text("ANSWER 2: wrote two.txt"))
            .step(Text("ANSWER 3: done")),
    );
    let env = PiEnv::new(&model);
    let herd = Herd::new(&env, Where::Tmux);
    let ack = herd.launch(&json!({
        "name": "Specialist",
        "task": "Get ready",
        "model": Herd::model("fake-model"),
        "persistent": true,
    }));
    let run = ack.run_id.clone();
    let session_file = ack.session_file.clone();
    let first_task = ack.persistent_ids.expect("a specialist's ids").task_id;
    let done = |n: usize| {
        wait_for(
            &format!("{n} tasks done by the specialist"),
            Duration::from_secs(60),
            || (tasks_done(&session_file).len() >= n).then_some(()),
        );
    };
    done(1);

    // A follow while the specialist idles: the first task's result, delivered once.
    let delivered = herd
        .artifacts()
        .join(format!("runs/{run}.task-{first_task}.delivered"));
    let early = herd.follow_until(
        "the first task's result is delivered",
        Duration::from_secs(60),
        || delivered.exists(),
    );
    let early_results = task_results(&early);
    assert_eq!(early_results.len(), 1, "{early:#?}");
    assert_eq!(early_results[0].0, first_task);
    assert!(
        early_results[0].1.contains("ANSWER 1: ready"),
        "{early_results:?}"
    );

    let send = |message: &str| -> String {
        let out = herd.run(
            "herd-launch",
            ["send", "--run", &run, "--message", message, "--json"],
        );
        assert!(out.success(), "send:\n{out}");
        let sent: LaunchSend = out.doc();
        assert_eq!(sent.status, SendStatus::Dispatched, "send:\n{out}");
        sent.task_id
    };
    let second_task = send("Write two.txt");
    done(2);
    let third_task = send("Say you are done");
    done(3);
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("two.txt")).unwrap(),
        "two\n"
    );
    let pid = herd.child_pid(&run);
    assert!(process_alive(pid), "the specialist stays between tasks");
    idle_row_says_waiting(&herd);

    let out = herd.run("herd-watch", ["stop", "--run", &run, "--json"]);
    assert!(out.success(), "herd-watch stop:\n{out}");
    let stop: WatchStop = out.doc();
    assert_eq!(stop.status, StopStatus::Stopped, "{stop:#?}");
    wait_for("the specialist to exit", Duration::from_secs(30), || {
        (!process_alive(pid)).then_some(())
    });

    // The rest: the two sent tasks' results, once each, and the specialist's own end.
    let events = herd.follow();
    let later = task_results(&events);
    let ids: Vec<&str> = later.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(
        ids,
        [second_task.as_str(), third_task.as_str()],
        "{events:#?}"
    );
    assert!(later[0].1.contains("ANSWER 2: wrote two.txt"), "{later:?}");
    assert!(later[1].1.contains("ANSWER 3: done"), "{later:?}");
    for (_, message) in &later {
        assert!(
            message.contains("kind=\"task-result\""),
            "a task result is a report block: {message}"
        );
    }
    let own: Vec<_> = herd_e2e::herd::results(&events, &run)
        .into_iter()
        .filter(|r| r.details.task.is_none())
        .collect();
    assert_eq!(own.len(), 1, "the run's own end, once: {events:#?}");
    assert!(task_results(&herd.follow()).is_empty(), "nothing twice");

    // Each task reached the model as a user message of the one conversation.
    let requests = model.requests();
    assert_eq!(requests.len(), 4);
    let users = request::user_texts(&requests[3]);
    assert!(
        users.iter().any(|t| t.contains("Write two.txt")),
        "{users:?}"
    );
    assert!(
        users.last().is_some_and(|t| t.contains("Say you are done")),
        "{users:?}"
    );
}
