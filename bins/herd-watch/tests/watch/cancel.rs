//! Cancelling a child: confirmed through its verified identity, retried until confirmed, and
//! never a signal to a process whose recorded start time differs.

use std::path::PathBuf;
use std::time::Duration;

use herd_e2e::proc::process_alive;
use herd_e2e::wait::{try_wait_for, wait_for};
use herd_protocol::result::{CancelTermination, Outcome, RunResult};
use herd_protocol::watch::{CancelStatus, Label, WatchCancel};
use serde_json::Value;

use crate::support::{Env, kill, result_events, watch_bin};

#[test]
fn cancel_confirms_and_delivers_one_cancelled_result() {
    let env = Env::new();
    let id = env.spawn("Sleeper", "sleep 30");
    let pid = env.identity_pid(&id);
    let (code, doc, text) = env.doc::<WatchCancel>(&["cancel", "--name", "Sleeper", "--json"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(doc.status, CancelStatus::Confirmed);
    assert!(!process_alive(pid));
    let (code, doc, _) = env.doc::<WatchCancel>(&["cancel", "--run", &id, "--json"]);
    assert_eq!((code, doc.status), (0, CancelStatus::AlreadyTerminal));
    // By name too, once nothing in flight has the name; and it reads as cancelled everywhere.
    let (code, doc, text) = env.doc::<WatchCancel>(&["cancel", "--name", "Sleeper", "--json"]);
    assert_eq!(
        (code, doc.status),
        (0, CancelStatus::AlreadyTerminal),
        "{text}"
    );
    let row = env.status(&id).runs.remove(0);
    assert_eq!(row.label, Label::Cancelled, "{row:?}");
    let out = env.run(
        &watch_bin(),
        &["follow", "--json"],
        &[],
        Duration::from_secs(60),
    );
    assert_eq!(result_events(&out.stdout, &id), 1);
    let result: RunResult = serde_json::from_slice(
        &std::fs::read(env.art().join(format!("runs/{id}.result.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(result.outcome, Outcome::Cancelled);
    assert!(result.message.contains("was cancelled"), "{result:?}");
    assert!(
        !result.message.contains("provider"),
        "never presented as a provider failure"
    );
}

/// The identity records of a headless run: the runner's and the launch script's.
fn identity_files(env: &Env, id: &str) -> Vec<PathBuf> {
    let session = env.run_record(id).session_file;
    vec![
        PathBuf::from(format!("{session}.process.json")),
        env.art().join(format!("runs/{id}.leader.json")),
    ]
}

/// Rewrites `field` of every identity record of run `id` with `forge` of its value, so nothing of
/// the child is a verified identity; returns each file's bytes before, to put back.
fn forge_identities(
    env: &Env,
    id: &str,
    field: &str,
    forge: impl Fn(&Value) -> Value,
) -> Vec<(PathBuf, Vec<u8>)> {
    let mut saved = Vec::new();
    for file in identity_files(env, id) {
        let Ok(bytes) = std::fs::read(&file) else {
            continue;
        };
        let mut record: Value = serde_json::from_slice(&bytes).unwrap();
        record[field] = forge(&record[field]);
        std::fs::write(&file, record.to_string()).unwrap();
        saved.push((file, bytes));
    }
    saved
}

/// A start time one tick later than `start`: the PID now names another process.
fn later_start(start: &Value) -> Value {
    let start: u64 = start.as_str().unwrap().parse().unwrap();
    Value::String((start + 1).to_string())
}

#[test]
fn a_recorded_start_time_that_differs_is_never_signalled() {
    let env = Env::new();
    let id = env.spawn("Impostor", "sleep 30");
    let pid = env.identity_pid(&id);
    forge_identities(&env, &id, "startTime", later_start);
    let (code, doc, text) = env.doc::<WatchCancel>(&["cancel", "--run", &id, "--json"]);
    assert_eq!(code, 3, "{text}");
    assert_eq!(doc.status, CancelStatus::Unconfirmed);
    let ended = try_wait_for(Duration::from_millis(200), || {
        (!process_alive(pid)).then_some(())
    });
    assert!(
        ended.is_none(),
        "a process whose start time differs from the record is never signalled"
    );
    kill(pid);
}

/// A confined child is its sandbox: the process herd recorded is bubblewrap, and a confirmed
/// cancel leaves no process of the sandbox, one that ignores SIGTERM included.
#[test]
fn a_confirmed_cancel_of_a_confined_child_leaves_no_process_of_its_sandbox() {
    let mut env = Env::new();
    env.confine("workspace");
    let id = env.spawn(
        "Builder",
        "trap '' TERM; (trap '' TERM; sleep 300) & echo started > \"$PWD/started\"; while :; do sleep 0.05; done",
    );
    let pid = env.identity_pid(&id);
    wait_for("the child's start", Duration::from_secs(10), || {
        env.dir.path().join("started").exists().then_some(())
    });
    // The sandbox's init, the shell, its subshell and their sleeps.
    let tree = wait_for("the sandbox's processes", Duration::from_secs(10), || {
        let tree = herd_e2e::proc::descendants(pid);
        (tree.len() >= 3).then_some(tree)
    });
    assert_eq!(
        std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .unwrap()
            .trim(),
        "bwrap",
        "the recorded process is the sandbox"
    );
    let (code, doc, text) = env.doc::<WatchCancel>(&["cancel", "--run", &id, "--json"]);
    assert_eq!((code, doc.status), (0, CancelStatus::Confirmed), "{text}");
    assert!(!process_alive(pid), "the sandbox is gone");
    for process in tree {
        assert!(
            !process_alive(process),
            "process {process} of the sandbox outlived it"
        );
    }
}

#[test]
fn a_confirmed_cancel_leaves_no_process_of_the_childs_tree() {
    let mut env = Env::new();
    // The child writes its grandchild's PID, which a confined child has of its own namespace;
    // the confined case is the test above.
    env.confine("off");
    let id = env.spawn(
        "Builder",
        "trap '' TERM; (trap '' TERM; sleep 300) & echo $! > \"$PWD/grandchild.pid\"; while :; do sleep 0.05; done",
    );
    let pid = env.identity_pid(&id);
    let grandchild: u32 = wait_for("the grandchild", Duration::from_secs(10), || {
        std::fs::read_to_string(env.dir.path().join("grandchild.pid"))
            .ok()?
            .trim()
            .parse()
            .ok()
    });
    let (code, doc, text) = env.doc::<WatchCancel>(&["cancel", "--run", &id, "--json"]);
    assert_eq!((code, doc.status), (0, CancelStatus::Confirmed), "{text}");
    assert!(!process_alive(pid), "the child is gone");
    assert!(!process_alive(grandchild), "its build went with it");
    let (code, doc, _) = env.wait(&["wait", "--run", &id, "--json"]);
    assert_eq!((code, doc.outcome), (5, Outcome::Cancelled));
}

#[test]
fn an_unconfirmed_cancel_is_retried_by_the_watcher_until_it_confirms() {
    let env = Env::new();
    let id = env.spawn("Retry", "sleep 60");
    let pid = env.identity_pid(&id);
    // While the identities read wrong, nothing is signalled and the cancel stays unconfirmed.
    let saved = forge_identities(&env, &id, "startTime", later_start);
    let (code, doc, text) = env.doc::<WatchCancel>(&["cancel", "--run", &id, "--json"]);
    assert_eq!((code, doc.status), (3, CancelStatus::Unconfirmed), "{text}");
    assert!(process_alive(pid));
    assert!(
        !env.art()
            .join("runs")
            .join(format!("{id}.result.json"))
            .exists(),
        "nothing is delivered while unconfirmed"
    );
    let row = env.status(&id).runs.remove(0);
    assert_eq!(row.label, Label::CancelUnconfirmed, "{row:?}");
    // The probe reads true again: the watcher's next attempt confirms without another cancel.
    for (file, bytes) in &saved {
        std::fs::write(file, bytes).unwrap();
    }
    let (code, doc, text) = env.wait(&["wait", "--run", &id, "--json"]);
    assert_eq!(code, 5, "{text}");
    assert_eq!(
        doc.details.cancellation.map(|c| c.termination),
        Some(CancelTermination::Confirmed),
        "{text}"
    );
    assert!(!process_alive(pid));
}

#[test]
fn a_headless_child_whose_identity_no_longer_matches_settles_failed_and_is_never_signalled() {
    for (field, forged) in [
        (
            "bootId",
            Value::from("00000000-0000-0000-0000-000000000000"),
        ),
        ("startTime", Value::Null),
    ] {
        let env = Env::new();
        let id = env.spawn("Ghost", "sleep 60");
        let pid = env.identity_pid(&id);
        forge_identities(&env, &id, field, |old| {
            if forged.is_null() {
                later_start(old)
            } else {
                forged.clone()
            }
        });
        let (code, doc, text) = env.wait(&["wait", "--run", &id, "--json"]);
        assert_eq!(code, 1, "{field}: {text}");
        assert_eq!(doc.outcome, Outcome::Failed, "{field}");
        assert!(
            process_alive(pid),
            "{field}: a process that no longer matches is never signalled"
        );
        kill(pid);
    }
}
