//! Children in panes of a private tmux server: completion, reconciliation by one listing per
//! interval, backoff of a failing pane query, a pane gone without evidence.

use std::time::Duration;

use herd_e2e::wait::wait_for;
use herd_protocol::result::Outcome;
use herd_protocol::watch::{
    CancelStatus, Interrupted, Label, WatchCancel, WatchEvent, WatchInterrupt, WatchWait,
};

use crate::support::{Env, events, kill, wait_for_label, watch_bin, write_script};

#[test]
fn on_tmux_a_child_completes_is_interrupted_and_cancelled() {
    let env = Env::tmux();
    let done = env.spawn("Painter", "echo painted");
    let (code, doc, text) = env.wait(&["wait", "--run", &done, "--json"]);
    assert_eq!(code, 0, "{text}");
    assert!(doc.message.contains("painted"), "{text}");

    let id = env.spawn("Looper", "while :; do sleep 0.05; done");
    wait_for_label(&env, &id, Label::Running);
    let (code, doc, text) = env.doc::<WatchInterrupt>(&["interrupt", "--run", &id, "--json"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(doc.status, Interrupted::Interrupted);
    let row = wait_for_label(&env, &id, Label::Interrupted);
    assert_eq!(row.label, Label::Interrupted, "{row:?}");
    let (code, doc, text) = env.doc::<WatchCancel>(&["cancel", "--run", &id, "--json"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(doc.status, CancelStatus::Confirmed, "{text}");
    let (code, doc, _) = env.wait(&["wait", "--run", &id, "--json"]);
    assert_eq!((code, doc.outcome), (5, Outcome::Cancelled));
}

#[test]
fn tmux_panes_are_reconciled_by_one_listing_per_interval() {
    let mut env = Env::tmux();
    let log = env.dir.path().join("tmux-calls.log");
    let wrapper = env.dir.path().join("logging-tmux");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec tmux \"$@\"\n",
            log.display()
        ),
    )
    .unwrap();
    let mut perms = std::fs::metadata(&wrapper).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&wrapper, perms).unwrap();
    env.extra
        .push(("HERD_TMUX".into(), wrapper.to_str().unwrap().into()));
    let ids: Vec<String> = (0..3)
        .map(|i| env.spawn(&format!("idle {i}"), "sleep 30"))
        .collect();
    let pids: Vec<u32> = ids.iter().map(|id| env.identity_pid(id)).collect();
    let _ = std::fs::remove_file(&log);
    // Four seconds of supervision: four or five reconciliation intervals.
    let out = env.run(
        &watch_bin(),
        &["follow", "--json", "--forever"],
        &[],
        Duration::from_secs(4),
    );
    let calls = std::fs::read_to_string(&log).unwrap_or_default();
    let listings = calls
        .lines()
        .filter(|l| l.contains("list-panes -a"))
        .count();
    let per_pane = calls
        .lines()
        .filter(|l| l.contains("list-panes -t"))
        .count();
    assert!(listings >= 3, "one listing per interval: {calls}");
    assert!(
        per_pane <= ids.len(),
        "only the first interval queries panes one by one: {calls}"
    );
    let running = out
        .stdout
        .lines()
        .filter(|l| l.contains("\"label\":\"running\""))
        .count();
    assert_eq!(running, ids.len(), "every child is seen running");
    for pid in pids {
        kill(pid);
    }
}

/// The times (seconds since the epoch) of the lines of `log` that contain `what`.
fn times_of(log: &str, what: &str) -> Vec<f64> {
    log.lines()
        .filter(|l| l.contains(what))
        .filter_map(|l| l.split(' ').next()?.parse().ok())
        .collect()
}

/// Each gap between `times` is the backoff's wait (1 s, then 2 s, then 4 s), not the interval.
fn assert_doubling(times: &[f64], log: &str) {
    for (i, pair) in times.windows(2).take(3).enumerate() {
        let gap = pair[1] - pair[0];
        let wait = f64::from(1u32 << i);
        assert!(
            gap >= wait - 0.05 && gap < wait + 1.5,
            "gap {i} is {gap:.2} s, the backoff says {wait} s: {log}"
        );
    }
}

#[test]
fn a_failing_pane_query_is_asked_again_after_one_then_two_then_four_seconds() {
    let env = Env::tmux();
    let dir = env.dir.path();
    let failing = dir.join("tmux-fails");
    let log = dir.join("failed-queries.log");
    let go = dir.join("go");
    std::fs::write(&failing, "").unwrap();
    // A tmux whose every listing and pane query fails while `failing` exists, each failure
    // written with its time.
    let shim = dir.join("failing-tmux");
    write_script(
        &shim,
        &format!(
            "#!/bin/sh\ncase \"$*\" in *list-panes*) if [ -e '{}' ]; then \
             echo \"$(date +%s.%N) $*\" >> '{}'; echo 'lost the reply of the server' >&2; exit 1; \
             fi;; esac\nexec tmux \"$@\"\n",
            failing.display(),
            log.display()
        ),
    );
    let id = env.spawn(
        "Probed",
        &format!(
            "while [ ! -e '{}' ]; do sleep 0.1; done; echo probed report",
            go.display()
        ),
    );
    let shim = shim.to_str().unwrap();
    let (code, doc, text, calls) = std::thread::scope(|scope| {
        let waiter = scope
            .spawn(|| env.watch_env(&["wait", "--run", &id, "--json"], &[("HERD_TMUX", shim)]));
        // Four failed queries of the pane: three waits of the backoff between them.
        wait_for(
            "four failed queries of the pane",
            Duration::from_secs(30),
            || {
                let calls = std::fs::read_to_string(&log).ok()?;
                (times_of(&calls, "list-panes -t").len() >= 4).then_some(())
            },
        );
        std::fs::remove_file(&failing).unwrap();
        let calls = std::fs::read_to_string(&log).unwrap();
        std::fs::write(&go, "").unwrap();
        let (code, doc, text) = waiter.join().unwrap();
        (code, doc, text, calls)
    });
    // The failures were never taken for the child's end: its own result arrives.
    assert_eq!(code, 0, "{text}");
    let doc: WatchWait = serde_json::from_value(doc).unwrap();
    assert_eq!(doc.outcome, Outcome::Completed, "{text}");
    assert!(text.contains("probed report"), "{text}");
    assert_doubling(&times_of(&calls, "list-panes -t"), &calls);
    // The listing of every pane fails too, and is paced the same way.
    assert_doubling(&times_of(&calls, "list-panes -a"), &calls);
}

#[test]
fn a_pane_gone_without_evidence_stalls_then_fails() {
    let env = Env::tmux();
    let id = env.spawn("Vanisher", "sleep 30");
    let pid = env.identity_pid(&id);
    let pane = env.pane(&id);
    let out = env.tmux_cmd(&["kill-pane", "-t", &pane]);
    assert!(out.success(), "{}", out.stderr);
    let out = env.run(
        &watch_bin(),
        &["follow", "--json"],
        &[],
        Duration::from_secs(60),
    );
    let events = events(&out.stdout);
    let stalled: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            WatchEvent::Stalled { message, .. } => Some(message.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(stalled.len(), 1, "{events:?}");
    let line = stalled[0];
    assert!(
        line.starts_with("\"Vanisher\" running ") && line.ends_with(", stalled."),
        "{line}"
    );
    let Some(WatchEvent::Result {
        outcome, message, ..
    }) = events
        .iter()
        .find(|e| matches!(e, WatchEvent::Result { .. }))
    else {
        panic!("a result: {events:?}");
    };
    assert_eq!(*outcome, Outcome::Failed);
    assert!(message.contains("pane disappeared"), "{message}");
    kill(pid);
}
