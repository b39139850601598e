//! Persistent specialists: each task delivered once, stops published, pending, unconfirmed
//! and stalled, and a vanished specialist's crash notice.

use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_e2e::wait::wait_for;
use herd_protocol::persistent::{LedgerLine, Outcome as TaskOutcome};
use herd_protocol::result::Details;
use herd_protocol::watch::{Label, StopStatus, WatchEvent, WatchStop};

use crate::support::{Env, events, kill, launch_bin, redact, result_events, running, watch_bin};

/// A persistent specialist that keeps its files as docs/protocol.md ("A persistent specialist's
/// files") gives them: it reports its first task, then
/// claims inbox files — a task is answered with a `task-done` event, a stop ends it.
const SPECIALIST: &str = r#"
s="$PI_SUBAGENT_SESSION"
event() { printf '{"version":1,"type":"task-done","task":"%s","generation":"%s","at":"t","message":"%s"}\n' "$1" "$PI_SUBAGENT_GENERATION_ID" "$2" >> "$s.tasks"; }
event "$PI_SUBAGENT_TASK_ID" "first task done"
event "task-not-issued" "forged"
while :; do
  for f in "$s".task-inbox.*.json; do
    [ -e "$f" ] || continue
    body=$(cat "$f"); rm -f "$f"
    case "$body" in
      *'"type":"stop"'*) printf '{"type":"done"}' > "$s.exit"; exit 0;;
      *) task=$(printf '%s' "$body" | sed 's/.*"task":"\([^"]*\)".*/\1/'); event "$task" "answered $task";;
    esac
  done
  sleep 0.05
done
"#;

#[test]
fn a_persistent_specialist_delivers_each_task_once_and_stops() {
    let env = Env::new();
    let id = env.spawn_request(
        serde_json::json!({"name": "Specialist", "task": "first", "persistent": true}),
        &["--runner", "exec", "--", "sh", "-c", SPECIALIST],
    );
    let task_results = |stdout: &str| -> Vec<String> {
        events(stdout)
            .into_iter()
            .filter_map(|event| match event {
                WatchEvent::Result { details, .. } => details.task,
                _ => None,
            })
            .collect()
    };
    // A follow that runs a while: the first task's result, and one notice for the forged event.
    let first = env.run(
        &watch_bin(),
        &["follow", "--json", "--forever"],
        &[],
        Duration::from_secs(3),
    );
    let text = first.stdout;
    assert_eq!(task_results(&text).len(), 1, "{text}");
    assert_eq!(text.matches("did not issue").count(), 1, "{text}");
    let send = env.run(
        &launch_bin(),
        &["send", "--run", &id, "--message", "second", "--json"],
        &[],
        Duration::from_secs(30),
    );
    assert_eq!(send.code, 0, "{}{}", send.stdout, send.stderr);
    wait_for("the second task's answer", Duration::from_secs(10), || {
        std::fs::read_to_string(format!("{}.tasks", env.run_record(&id).session_file))
            .unwrap()
            .contains("answered")
            .then_some(())
    });
    let (code, doc, text) = env.doc::<WatchStop>(&["stop", "--run", &id, "--json"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(doc.status, StopStatus::Stopped);
    let last = env.run(
        &watch_bin(),
        &["follow", "--json"],
        &[],
        Duration::from_secs(30),
    );
    assert_eq!(last.code, 0, "{}", last.stderr);
    let text = last.stdout;
    let tasks = task_results(&text);
    assert_eq!(tasks.len(), 1, "only the second task is new: {text}");
    assert!(text.contains("answered"), "{text}");
    assert!(text.contains("kind=\\\"task-result\\\""), "{text}");
    assert_eq!(
        result_events(&text, &id),
        2,
        "the second task and the run's own end: {text}"
    );
    // The run's own end says it stopped, and repeats no task's report.
    let end = run_end(&text);
    let message = end.message.as_str();
    assert!(
        message.starts_with("Persistent specialist \"Specialist\" stopped ("),
        "{message}"
    );
    assert!(!message.contains("<subagent_report"), "{message}");
    assert_eq!(end.details.stopped, Some(true));
}

/// A herd-watch that may write no file byte: a file-size limit, with SIGXFSZ ignored so that a
/// write fails instead of killing it.
fn limited_watch(env: &Env) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let limited = env.dir.path().join("limited-watch.sh");
    std::fs::write(
        &limited,
        format!(
            "#!/bin/sh\nulimit -f 0\ntrap '' XFSZ\nexec '{}' \"$@\"\n",
            watch_bin().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&limited, std::fs::Permissions::from_mode(0o755)).unwrap();
    limited
}

#[test]
fn a_stop_that_cannot_be_published_fails_retryably_and_the_next_one_stops() {
    let env = Env::new();
    let id = env.spawn_request(
        serde_json::json!({"name": "Stubborn", "task": "first", "persistent": true}),
        &["--runner", "exec", "--", "sh", "-c", SPECIALIST],
    );
    let pid = env.identity_pid(&id);
    let session = PathBuf::from(env.run_record(&id).session_file);
    let dir = session.parent().unwrap().to_path_buf();
    // A herd-watch that may write no file byte: the directive cannot be published.
    let limited = limited_watch(&env);
    let out = env.run(
        &limited,
        &["stop", "--run", &id, "--json"],
        &[],
        Duration::from_secs(60),
    );
    let text = out.stdout.clone() + &out.stderr;
    assert_eq!(out.code, 4, "{text}");
    let doc: WatchStop = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc.status, StopStatus::StopFailed, "{text}");
    assert!(doc.error.is_some_and(|e| !e.is_empty()), "{text}");
    // A failed stop is not stop-pending: nothing was published and the specialist runs on.
    assert!(running(pid), "a failed stop changes nothing");
    let outcomes = |session: &Path| ledger_outcomes(session.to_str().unwrap());
    let before = outcomes(&session);
    assert!(
        !before.iter().any(|o| o.as_str().starts_with("stop")),
        "{before:?}"
    );
    assert!(
        std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .all(|e| !e.file_name().to_string_lossy().contains(".task-inbox.")),
        "no directive was left behind"
    );
    // Asked again once the directory is back: published, confirmed, stopped.
    let (code, doc, text) = env.doc::<WatchStop>(&["stop", "--run", &id, "--json"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(doc.status, StopStatus::Stopped, "{text}");
    assert!(!running(pid));
    let after = outcomes(&session);
    assert_eq!(
        after[before.len()..],
        [TaskOutcome::StopPending, TaskOutcome::Stopped],
        "{after:?}"
    );
}

#[test]
fn an_exit_after_a_failed_stop_is_one_stopped_result() {
    let env = Env::new();
    let id = env.spawn_request(
        serde_json::json!({"name": "Unreached", "task": "first", "persistent": true}),
        &["--runner", "exec", "--", "sh", "-c", SPECIALIST],
    );
    let pid = env.identity_pid(&id);
    let session = env.run_record(&id).session_file;
    // A herd-watch that may write no file byte: the directive is not published.
    let limited = limited_watch(&env);
    let out = env.run(
        &limited,
        &["stop", "--run", &id, "--json"],
        &[],
        Duration::from_secs(60),
    );
    assert_eq!(out.code, 4, "{}", out.stdout);
    // The ledger line cannot be written by that herd-watch either; the parent records it.
    if !ledger_outcomes(&session).contains(&TaskOutcome::StopFailed) {
        use herd_protocol::persistent::{At, LedgerLine, Outcome};
        LedgerLine {
            task: "first".into(),
            outcome: Outcome::StopFailed,
            generation: "g".into(),
            logical_id: "l".into(),
            policy_hash: String::new(),
            at: At::now(),
        }
        .append(Path::new(&format!("{session}.ledger")))
        .unwrap();
    }
    // The specialist then exits (here: it is killed): the stop's confirmed exit, not a crash.
    kill(pid);
    let text = follow_to_the_end(&env).stdout;
    let message = stopped_once(&text, "Unreached", &session).message;
    assert!(
        !message.contains("vanished") && !message.contains("Subagent error"),
        "{message}"
    );
}

/// A specialist (`SPECIALIST`, doing `on_stop` when its stop directive comes) that has answered
/// its first task: its run id, its runner's PID and its session file.
fn specialist_after_its_first_task(env: &Env, name: &str, on_stop: &str) -> (String, u32, String) {
    let script = SPECIALIST.replace(
        r#"*'"type":"stop"'*) printf '{"type":"done"}' > "$s.exit"; exit 0;;"#,
        &format!(r#"*'"type":"stop"'*) {on_stop};;"#),
    );
    assert_ne!(script, SPECIALIST);
    let id = env.spawn_request(
        serde_json::json!({"name": name, "task": "first", "persistent": true}),
        &["--runner", "exec", "--", "sh", "-c", &script],
    );
    let pid = env.identity_pid(&id);
    let session = env.run_record(&id).session_file;
    wait_for("the first task's answer", Duration::from_secs(10), || {
        std::fs::read_to_string(format!("{session}.tasks"))
            .ok()
            .filter(|t| t.contains("first task done"))
    });
    (id, pid, session)
}

#[test]
fn a_stop_is_pending_behind_a_task_and_unconfirmed_when_nothing_holds_it() {
    let env = Env::new();
    // Idle after its first task, it claims the stop directive and ignores it.
    let (id, pid, session) = specialist_after_its_first_task(&env, "Deaf", "");
    let (code, doc, text) = env.doc::<WatchStop>(&["stop", "--run", &id, "--json"]);
    assert_eq!(code, 3, "{text}");
    assert_eq!(doc.status, StopStatus::StopUnconfirmed, "{text}");
    assert!(running(pid));
    // It takes no follow-up work while its stop is unconfirmed.
    let send = env.run(
        &launch_bin(),
        &["send", "--run", &id, "--message", "more", "--json"],
        &[],
        Duration::from_secs(30),
    );
    assert_eq!(send.code, 2, "{}", send.stdout);
    assert!(send.stdout.contains("stopping"), "{}", send.stdout);
    // Killed after its unconfirmed stop, it is gone after a stop directive: stopped, once.
    kill(pid);
    stopped_once(&follow_to_the_end(&env).stdout, "Deaf", &session);

    // Busy with its first task until the gate opens: the stop waits behind the task.
    let gate = env.dir.path().join("gate");
    let busy = SPECIALIST.replace(
        r#"event "$PI_SUBAGENT_TASK_ID" "first task done""#,
        &format!(
            r#"for i in $(seq 1 1200); do [ -e '{}' ] && break; sleep 0.05; done; event "$PI_SUBAGENT_TASK_ID" "first task done""#,
            gate.display()
        ),
    );
    assert_ne!(busy, SPECIALIST);
    let id = env.spawn_request(
        serde_json::json!({"name": "Busy", "task": "first", "persistent": true}),
        &["--runner", "exec", "--", "sh", "-c", &busy],
    );
    let pid = env.identity_pid(&id);
    let (code, doc, text) = env.doc::<WatchStop>(&["stop", "--run", &id, "--json"]);
    assert_eq!(code, 3, "{text}");
    assert_eq!(doc.status, StopStatus::StopPending, "{text}");
    assert!(running(pid));
    std::fs::write(&gate, b"open").unwrap();
    wait_for(
        "the specialist to exit after its task",
        Duration::from_secs(30),
        || (!running(pid)).then_some(()),
    );

    // The initial task of an uncertain launch does not hold the stop: its bounded exit wait
    // starts at once, and the stop is unconfirmed (and `stalled`) when it passes.
    let never = env.dir.path().join("never");
    let unsure = busy.replace(&gate.display().to_string(), &never.display().to_string());
    let id = env.spawn_request(
        serde_json::json!({"name": "Unsure", "task": "first", "persistent": true}),
        &["--runner", "exec", "--", "sh", "-c", &unsure],
    );
    let pid = env.identity_pid(&id);
    let path = env.art().join("runs").join(format!("{id}.json"));
    let mut record = env.record(&id);
    record["status"] = "uncertain".into();
    std::fs::write(&path, record.to_string()).unwrap();
    let (code, doc, text) = env.doc::<WatchStop>(&["stop", "--run", &id, "--json"]);
    assert_eq!(code, 3, "{text}");
    assert_eq!(doc.status, StopStatus::StopUnconfirmed, "{text}");
    let row = env.status(&id).runs.remove(0);
    assert_eq!(row.label, Label::Stalled, "{row:?}");
    kill(pid);
}

/// The outcomes of a specialist's ledger, oldest first.
fn ledger_outcomes(session: &str) -> Vec<TaskOutcome> {
    std::fs::read_to_string(format!("{session}.ledger"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<LedgerLine>(l).ok())
        .map(|line| line.outcome)
        .collect()
}

/// Runs `herd-watch follow --json` until no run is left (within 40 s).
fn follow_to_the_end(env: &Env) -> herd_e2e::cli::Run {
    env.run(
        &watch_bin(),
        &["follow", "--json"],
        &[],
        Duration::from_secs(40),
    )
}

/// Asserts that a follow's output `text` ends the specialist `name` as stopped on its stop
/// directive, and that its ledger (beside `session`) says `stopped` once; returns that end.
fn stopped_once(text: &str, name: &str, session: &str) -> RunEnd {
    let end = run_end(text);
    assert_eq!(end.details.stopped, Some(true), "{text}");
    assert!(
        end.message
            .starts_with(&format!("Persistent specialist \"{name}\" stopped (")),
        "{}",
        end.message
    );
    let outcomes = ledger_outcomes(session);
    let stopped = outcomes
        .iter()
        .filter(|o| **o == TaskOutcome::Stopped)
        .count();
    assert_eq!(stopped, 1, "{outcomes:?}");
    end
}

/// The run's own end among a follow's results: the message and details of the result without a
/// task.
struct RunEnd {
    message: String,
    details: Details,
}

fn run_end(stdout: &str) -> RunEnd {
    events(stdout)
        .into_iter()
        .find_map(|event| match event {
            WatchEvent::Result {
                message,
                details,
                task: None,
                ..
            } => Some(RunEnd {
                message,
                details: *details,
            }),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no run result in {stdout}"))
}

#[test]
fn an_unconfirmed_stop_is_stalled_and_its_late_exit_is_one_stopped_result() {
    let env = Env::new();
    // It honours the stop directive, but only after the stop's 5 s deadline.
    let (id, pid, session) = specialist_after_its_first_task(
        &env,
        "Late",
        r#"sleep 9; printf '{"type":"done"}' > "$s.exit"; exit 0"#,
    );
    // The first task's result is delivered before the stop.
    let first = env.run(
        &watch_bin(),
        &["follow", "--json", "--forever"],
        &[],
        Duration::from_secs(2),
    );
    assert!(first.stdout.contains("first task done"));
    let (code, doc, text) = env.doc::<WatchStop>(&["stop", "--run", &id, "--json"]);
    assert_eq!(code, 3, "{text}");
    assert_eq!(doc.status, StopStatus::StopUnconfirmed, "{text}");
    assert!(running(pid));
    // The unconfirmed stop is `stalled`, in the status and in the widget (docs/lifecycle.md,
    // "Persistent specialists").
    let row = env.status(&id).runs.remove(0);
    assert_eq!(row.label, Label::Stalled, "{row:?}");
    assert_eq!(row.detail.as_deref(), Some("stop unconfirmed"), "{row:?}");
    let (_, _, widget) = env.watch(&["status", "--widget"]);
    insta::assert_snapshot!("stalled_widget", redact(env.dir.path(), &widget));
    // It takes no follow-up work, and the evidence stays.
    let send = env.run(
        &launch_bin(),
        &["send", "--run", &id, "--message", "more", "--json"],
        &[],
        Duration::from_secs(30),
    );
    assert_eq!(send.code, 2, "{}", send.stdout);
    assert!(send.stdout.contains("stopping"));
    assert!(Path::new(&format!("{session}.tasks")).exists());
    assert!(!ledger_outcomes(&session).contains(&TaskOutcome::Stopped));
    // Its exit, confirmed after the deadline: one terminal stopped result and one stopped line.
    let last = follow_to_the_end(&env);
    assert_eq!(last.code, 0, "{}", last.stderr);
    let text = last.stdout;
    assert_eq!(result_events(&text, &id), 1, "{text}");
    // The follower hears of the unconfirmed stop once: the stop attempt's timeout notice.
    assert_eq!(
        text.matches("did not confirm its exit within 5 s of its stop directive")
            .count(),
        1,
        "{text}"
    );
    assert!(!text.contains("recovered"), "{text}");
    stopped_once(&text, "Late", &session);
    assert_eq!(
        ledger_outcomes(&session).last(),
        Some(&TaskOutcome::Stopped)
    );
}

#[test]
fn a_specialist_that_vanishes_without_a_stop_gives_one_crash_notice() {
    let env = Env::new();
    let id = env.spawn_request(
        serde_json::json!({"name": "Fragile", "task": "first", "persistent": true}),
        &["--runner", "exec", "--", "sh", "-c", "sleep 60"],
    );
    kill(env.identity_pid(&id));
    let out = env.run(
        &watch_bin(),
        &["follow", "--json"],
        &[],
        Duration::from_secs(60),
    );
    let text = out.stdout;
    assert_eq!(result_events(&text, &id), 1, "{text}");
    let end = run_end(&text);
    let message = end.message.as_str();
    assert!(
        message.starts_with("Persistent specialist \"Fragile\" vanished after ")
            && message.contains(
                "without a stop directive; it cannot be resumed: spawn a new specialist."
            ),
        "{message}"
    );
}
