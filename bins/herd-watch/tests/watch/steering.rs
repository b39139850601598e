//! Steering, follow-ups and interrupts: delivered, queued, bounded, refused, and never typed
//! into a child that has ended.

use std::time::Duration;

use herd_core::error::{ErrorCode, ErrorDocument};
use herd_e2e::wait::{try_wait_for, wait_for};
use herd_protocol::intents::SteeringLedger;
use herd_protocol::watch::{DeliveryStatus, SteerState, WatchSteer};

use crate::support::{Env, kill, launch_bin, redact, running};

impl Env {
    /// `herd-watch steer --run ID --message MESSAGE --mode MODE --json`: its exit code, the
    /// document it printed as `T`, and all its output.
    fn steer<T: serde::de::DeserializeOwned>(
        &self,
        id: &str,
        message: &str,
        mode: &str,
    ) -> (i32, T, String) {
        self.doc(&[
            "steer",
            "--run",
            id,
            "--message",
            message,
            "--mode",
            mode,
            "--json",
        ])
    }
}

#[test]
fn steering_is_delivered_queued_and_bounded() {
    let env = Env::tmux();
    let id = env.spawn("Steered", "sleep 30");
    let pid = env.identity_pid(&id);
    let (code, doc, text) = env.doc::<WatchSteer>(&[
        "steer",
        "--run",
        &id,
        "--message",
        "check the parser first",
        "--json",
    ]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(doc.receipt, SteerState::Delivered);
    assert_eq!(
        (doc.state, doc.delivery_status),
        (SteerState::Delivered, Some(DeliveryStatus::Delivered)),
        "{text}"
    );
    let ledger_path = env.art().join(format!("runs/{id}.steering.json"));
    let ledger: SteeringLedger =
        serde_json::from_slice(&std::fs::read(&ledger_path).unwrap()).unwrap();
    let first = &ledger.requests[0];
    assert_eq!(first.request_id, doc.request_id, "{ledger:?}");
    assert_eq!(first.state, SteerState::Delivered, "{ledger:?}");
    assert!(first.delivered_at_ms.is_some(), "{ledger:?}");
    let pane = env.pane(&id);
    let mut screen = String::new();
    let reached = try_wait_for(Duration::from_secs(10), || {
        screen = env.tmux_cmd(&["capture-pane", "-p", "-t", &pane]).stdout;
        screen.contains("check the parser first").then_some(())
    });
    assert!(
        reached.is_some(),
        "the message never reached the pane: {screen}"
    );
    // The human reply keeps the name the parent gave.
    let (code, _, text) = env.watch(&["steer", "--run", &id, "--message", "and the lexer"]);
    assert_eq!(code, 0, "{text}");
    insta::assert_snapshot!("steer_reply", redact(env.dir.path(), &text));
    for i in 0..20 {
        // pi-subagents' spelling is taken too: `steer` with `mode: "follow_up"`.
        let mode = if i % 2 == 0 { "follow-up" } else { "follow_up" };
        let (code, doc, text) = env.steer::<WatchSteer>(&id, &format!("later {i}"), mode);
        assert_eq!(
            (code, doc.receipt, doc.delivery_status),
            (0, SteerState::Queued, Some(DeliveryStatus::Queued)),
            "{text}"
        );
    }
    let (code, doc, text) = env.steer::<WatchSteer>(&id, "one too many", "follow-up");
    // A full queue is a failed receipt with its reason, kept in the ledger, exit 7.
    assert_eq!((code, doc.receipt), (7, SteerState::Failed), "{text}");
    assert_eq!(doc.delivery_status, None, "{text}");
    assert!(
        doc.error.as_ref().unwrap().message.contains("full"),
        "{text}"
    );
    let ledger: SteeringLedger =
        serde_json::from_slice(&std::fs::read(&ledger_path).unwrap()).unwrap();
    let requests = &ledger.requests;
    assert_eq!(
        requests.len(),
        20,
        "the ledger keeps the last 20: {ledger:?}"
    );
    let last = requests.last().unwrap();
    assert_eq!(
        (last.request_id.as_str(), last.state),
        (doc.request_id.as_str(), SteerState::Failed),
        "{ledger:?}"
    );
    assert!(
        last.error.as_deref().unwrap().contains("full"),
        "{ledger:?}"
    );
    kill(pid);
    let (_, result, text) = env.wait(&["wait", "--run", &id, "--json"]);
    assert_eq!(
        result.details.undelivered_steering.as_ref().map(Vec::len),
        Some(20),
        "{text}"
    );
    let steering = result.details.steering.as_ref().unwrap();
    assert_eq!(steering.len(), 20, "{text}");
    // Seed 004: "Terminal details report queued messages that the run did not deliver": none
    // stays `queued` in the ended run; each says it was not delivered, and the parent is told.
    assert!(
        steering.iter().all(|r| r.state == SteerState::Failed),
        "{text}"
    );
    assert_eq!(
        steering
            .iter()
            .filter(|r| r
                .error
                .as_deref()
                .is_some_and(|e| e.starts_with("not delivered")))
            .count(),
        19,
        "{text}"
    );
    assert!(
        result
            .message
            .contains("Steering: 20 queued messages were not delivered"),
        "{text}"
    );
}

#[test]
fn a_steering_message_the_pane_does_not_take_gets_a_failed_receipt_with_the_reason() {
    let env = Env::tmux();
    let id = env.spawn("Gone", "sleep 30");
    let pid = env.identity_pid(&id);
    let pane = env.pane(&id);
    let out = env.tmux_cmd(&["kill-pane", "-t", &pane]);
    assert!(out.success(), "{}", out.stderr);
    wait_for(
        "the child gone with its pane",
        Duration::from_secs(10),
        || (!running(pid)).then_some(()),
    );
    let (code, doc, text) = env.doc::<WatchSteer>(&[
        "steer",
        "--run",
        &id,
        "--message",
        "are you there",
        "--json",
    ]);
    assert_eq!(doc.receipt, SteerState::Failed, "{text}");
    assert_ne!(code, 0, "{text}");
    let reason = doc.error.as_ref().unwrap().message.as_str();
    assert!(!reason.is_empty(), "{text}");
    let ledger: SteeringLedger = serde_json::from_slice(
        &std::fs::read(env.art().join(format!("runs/{id}.steering.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(ledger.requests[0].state, SteerState::Failed, "{ledger:?}");
    assert_eq!(
        ledger.requests[0].error.as_deref(),
        Some(reason),
        "{ledger:?}"
    );
    // The human reply says it failed and why.
    let (_, _, text) = env.watch(&["steer", "--run", &id, "--message", "hello?"]);
    insta::assert_snapshot!("failed_steer_reply", redact(env.dir.path(), &text));
}

#[test]
fn a_steering_message_with_control_characters_or_nothing_in_it_is_refused() {
    let env = Env::new();
    let id = env.spawn("Unsteered", "sleep 30");
    let pid = env.identity_pid(&id);
    for message in [
        "half\rthe other half",
        "\u{1b}[A up",
        "tab\there",
        "",
        " \n\t ",
    ] {
        for mode in ["steer", "follow-up"] {
            let (code, doc, text) = env.steer::<ErrorDocument>(&id, message, mode);
            assert_eq!(
                (code, doc.error.code),
                (2, ErrorCode::InvalidRequest),
                "{message:?} {mode}: {text}"
            );
            assert_eq!(doc.error.field.as_deref(), Some("--message"), "{text}");
        }
    }
    assert!(
        !env.art().join(format!("runs/{id}.steer.json")).exists(),
        "nothing was queued"
    );
    // Lines of one message are one message.
    let (code, doc, text) = env.steer::<WatchSteer>(&id, "first line\nsecond line", "follow-up");
    assert_eq!((code, doc.receipt), (0, SteerState::Queued), "{text}");
    kill(pid);
}

/// Spawns a command child that ends at once, waits for its recorded exit (no watcher settles it,
/// so only the child's own files and its surface say it ended), then steers, queues a follow-up
/// and interrupts it with a message a shell would run: each is `conflict` "has ended" (exit 7),
/// nothing is queued and the shell command never runs. Returns the run id and the message.
fn an_ended_child_is_not_typed_into(env: &Env) -> (String, String) {
    let id = env.spawn("Ended", "true");
    let exit = env.art().join(format!("runs/{id}.runner-exit.json"));
    wait_for("the child's recorded exit", Duration::from_secs(20), || {
        exit.exists().then_some(())
    });
    let marker = env.dir.path().join("typed-into-a-shell");
    let message = format!("touch '{}'", marker.display());
    for mode in ["steer", "follow-up"] {
        let (code, doc, text) = env.steer::<WatchSteer>(&id, &message, mode);
        assert_eq!(
            (code, doc.receipt),
            (7, SteerState::Failed),
            "{mode}: {text}"
        );
        let error = doc.error.expect("the reason");
        assert_eq!(error.code, "conflict", "{mode}: {text}");
        assert!(error.message.contains("has ended"), "{mode}: {text}");
    }
    assert!(
        !env.art().join(format!("runs/{id}.steer.json")).exists(),
        "nothing was queued for a child that has ended"
    );
    let (code, doc, text) = env.doc::<ErrorDocument>(&["interrupt", "--run", &id, "--json"]);
    assert_eq!((code, doc.error.code), (7, ErrorCode::Conflict), "{text}");
    assert!(
        !env.art().join(format!("runs/{id}.interrupt.json")).exists(),
        "no interrupt was recorded"
    );
    assert!(!marker.exists(), "the steering message ran as a command");
    (id, message)
}

#[test]
fn a_process_child_that_has_ended_is_not_steered_queued_or_interrupted() {
    let env = Env::new();
    an_ended_child_is_not_typed_into(&env);
}

#[test]
fn a_tmux_child_that_has_ended_is_not_steered_queued_or_interrupted() {
    let env = Env::tmux();
    let (id, message) = an_ended_child_is_not_typed_into(&env);
    // Nothing was typed into its kept pane either.
    let pane = env.pane(&id);
    let screen = env.tmux_cmd(&["capture-pane", "-p", "-t", &pane]);
    assert!(screen.success(), "{}", screen.stderr);
    assert!(!screen.stdout.contains(&message), "{}", screen.stdout);
}

/// Ctrl+C on the process surface reaches a confined child inside its sandbox: the recorded
/// process is bubblewrap, which SIGINT would end (and the sandbox with it), so the command inside
/// gets the signal, handles it and runs on to its end.
#[test]
fn an_interrupt_reaches_a_confined_process_child_inside_its_sandbox() {
    let mut env = Env::new();
    env.confine("workspace");
    let id = env.spawn(
        "Trapper",
        "trap 'echo interrupted > \"$PWD/interrupted\"' INT; echo started > \"$PWD/started\"; \
         while [ ! -e \"$PWD/go\" ]; do sleep 0.05; done; echo finished",
    );
    let pid = env.identity_pid(&id);
    let dir = env.dir.path();
    wait_for("the child's start", Duration::from_secs(10), || {
        dir.join("started").exists().then_some(())
    });
    assert_eq!(
        std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .unwrap()
            .trim(),
        "bwrap",
        "the recorded process is the sandbox"
    );
    let artifacts = herd_protocol::layout::Artifacts::new(env.art());
    let (surface, target) = herd_surface::open(&env.run_record(&id), &artifacts).unwrap();
    surface
        .send_keys(
            &target,
            &[herd_surface::Key::Interrupt],
            std::time::Instant::now() + Duration::from_secs(10),
        )
        .unwrap();
    wait_for("the child's trap", Duration::from_secs(10), || {
        dir.join("interrupted").exists().then_some(())
    });
    assert!(running(pid), "the sandbox runs on");
    std::fs::write(dir.join("go"), "").unwrap();
    let (code, result, text) = env.wait(&["wait", "--run", &id, "--json"]);
    assert_eq!(code, 0, "{text}");
    assert!(result.message.contains("finished"), "{text}");
}

/// Seed 004: "A pending indexed child returns `scheduled`." A run launched whose child has not
/// started yet (its launch script has not reached `herd-launch exec`, so no runner identity is
/// recorded) has nothing to type into: the steer is held for the child, `scheduled` with
/// `deliveryStatus: "queued"`, and a run that ends without taking it reports it not delivered.
#[test]
fn a_steer_to_a_child_that_has_not_started_yet_is_scheduled() {
    let env = Env::new();
    let dir = env.dir.path();
    // The launch script's `herd-launch exec` waits for the gate: the child starts only then.
    let gate = dir.join("gate");
    let bins = dir.join("bins");
    std::fs::create_dir(&bins).unwrap();
    let real = launch_bin();
    for entry in std::fs::read_dir(real.parent().unwrap()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        if name.starts_with("herd-") && !name.contains('.') && name != "herd-launch" {
            std::os::unix::fs::symlink(&path, bins.join(&name)).unwrap();
        }
    }
    crate::support::write_script(
        &bins.join("herd-launch"),
        &format!(
            "#!/bin/sh\nwhile [ ! -e '{}' ]; do sleep 0.05; done\nexec '{}' \"$@\"\n",
            gate.display(),
            real.display()
        ),
    );
    let out = env.launch(
        &serde_json::json!({"name": "Late", "task": "the task"}),
        &["--runner", "exec", "--", "sh", "-c", "sleep 30"],
        &[("HERD_BIN_DIR", bins.to_str().unwrap())],
    );
    let ack: herd_protocol::launch::LaunchAck = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|_| panic!("spawn: {}\n{}", out.stdout, out.stderr));
    let id = ack.run_id;
    let (code, doc, text) = env.steer::<WatchSteer>(&id, "start with the parser", "steer");
    assert_eq!(code, 0, "{text}");
    assert_eq!(
        (doc.receipt, doc.state, doc.delivery_status),
        (
            SteerState::Scheduled,
            SteerState::Scheduled,
            Some(DeliveryStatus::Queued)
        ),
        "{text}"
    );
    let ledger: SteeringLedger = serde_json::from_slice(
        &std::fs::read(env.art().join(format!("runs/{id}.steering.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(
        ledger.requests[0].state,
        SteerState::Scheduled,
        "{ledger:?}"
    );
    std::fs::write(&gate, "").unwrap();
    let pid = env.identity_pid(&id);
    kill(pid);
    let (_, result, text) = env.wait(&["wait", "--run", &id, "--json"]);
    // A child that never reached a turn boundary did not take it, and the parent is told.
    let steering = result.details.steering.as_ref().unwrap();
    assert_eq!(steering.len(), 1, "{text}");
    assert_eq!(steering[0].state, SteerState::Failed, "{text}");
    assert_eq!(
        result.details.undelivered_steering.as_ref().map(Vec::len),
        Some(1),
        "{text}"
    );
}
