//! A launch as the watcher sees it: a record followed as it fills in, a definite failure, a
//! herd-launch that dies while it acquires its pane, a cancel during acquisition.

use std::time::Duration;

use herd_e2e::cli::Run;
use herd_e2e::proc::{process_alive, signal_pid};
use herd_e2e::wait::wait_for;
use herd_protocol::cleanup::{DoctorReport, FindingState};
use herd_protocol::launch::LaunchAck;
use herd_protocol::result::Outcome;
use herd_protocol::run::LaunchStatus;
use herd_protocol::watch::{CancelStatus, Label, WatchCancel, WatchEvent, WatchWait};

use crate::support::{Env, kill, launch_bin, result_events, watch_bin, write_script};

#[test]
fn a_cancel_during_acquisition_ends_the_owner_once_acquired() {
    // A tmux that takes a second to place a pane, so the cancel lands while the launch is
    // still acquiring its owner.
    let env = slow_tmux();
    let id = std::thread::scope(|scope| {
        let spawner = scope.spawn(|| env.spawn("Late", "sleep 30"));
        let pending = first_record(&env);
        let (code, doc, text) = env.doc::<WatchCancel>(&["cancel", "--run", &pending, "--json"]);
        assert_eq!((code, doc.status), (3, CancelStatus::Requested), "{text}");
        let launched = spawner.join().unwrap();
        assert_eq!(launched, pending);
        launched
    });
    // The launch closed its pane once acquired: tmux no longer knows it.
    let pane = env.pane(&id);
    let out = env.tmux_cmd(&["list-panes", "-t", &pane]);
    assert!(
        !out.success(),
        "the pane {pane} is still there: {}",
        out.stdout
    );
    let (code, doc, text) = env.wait(&["wait", "--run", &id, "--json"]);
    assert_eq!(code, 5, "{text}");
    assert_eq!(doc.outcome, Outcome::Cancelled);
}

/// An environment whose tmux takes a second to place a pane.
fn slow_tmux() -> Env {
    let mut env = Env::tmux();
    let slow = env.dir.path().join("slow-tmux");
    std::fs::write(
        &slow,
        "#!/bin/sh\ncase \"$*\" in *split-window*|*new-window*) sleep 1;; esac\nexec tmux \"$@\"\n",
    )
    .unwrap();
    let mut perms = std::fs::metadata(&slow).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&slow, perms).unwrap();
    env.extra
        .push(("HERD_TMUX".into(), slow.to_str().unwrap().into()));
    env
}

/// Waits for the first run record of `env` to appear; returns its id.
fn first_record(env: &Env) -> String {
    let runs = env.art().join("runs");
    wait_for("a run record", Duration::from_secs(15), || {
        std::fs::read_dir(&runs)
            .ok()?
            .filter_map(Result::ok)
            .find_map(|e| {
                let name = e.file_name().to_str()?.to_owned();
                let stem = name.strip_suffix(".json")?;
                (!stem.contains('.')).then(|| stem.to_owned())
            })
    })
}

#[test]
fn a_watcher_started_during_the_launch_follows_the_record_as_it_fills_in() {
    let env = slow_tmux();
    let out = std::thread::scope(|scope| {
        let spawner = scope.spawn(|| env.spawn("Early", "sleep 2; echo late report"));
        let id = first_record(&env);
        let out = env.run(
            &watch_bin(),
            &["follow", "--json"],
            &[],
            Duration::from_secs(60),
        );
        assert_eq!(spawner.join().unwrap(), id);
        out
    });
    let labels: Vec<Label> = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<WatchEvent>(l).ok())
        .filter_map(|e| match e {
            WatchEvent::Status { label, .. } => Some(label),
            _ => None,
        })
        .collect();
    assert!(
        labels.contains(&Label::Running),
        "the pane was reconciled once the launch named it: {labels:?}"
    );
    assert!(out.stdout.contains("late report"));
}

/// A tmux environment whose `split-window` first writes its PID to `tmux-hold.pid` and waits
/// until `tmux-release` exists (or for good, when `release` is false), so a launch can be caught
/// while it is acquiring its pane.
fn held_tmux(release: bool) -> Env {
    let mut env = Env::tmux();
    let dir = env.dir.path().to_str().unwrap().to_owned();
    let then = if release {
        "exec tmux \"$@\""
    } else {
        "exit 1"
    };
    let script = format!(
        "#!/bin/sh\ncase \"$*\" in *split-window*|*new-window*)\n  echo $$ > '{dir}/tmux-hold.pid'\n  i=0; while [ ! -e '{dir}/tmux-release' ] && [ $i -lt 6000 ]; do sleep 0.05; i=$((i+1)); done\n  {then};;\nesac\nexec tmux \"$@\"\n"
    );
    let held = env.dir.path().join("held-tmux");
    write_script(&held, &script);
    env.extra
        .push(("HERD_TMUX".into(), held.to_str().unwrap().into()));
    env
}

/// The PID of the herd-launch that claimed `run_id`, from the identity it recorded.
fn launcher_pid(env: &Env, run_id: &str) -> u32 {
    let path = env.art().join(format!("runs/{run_id}.launcher.json"));
    wait_for("the launcher's identity", Duration::from_secs(15), || {
        herd_core::identity::Record::read(&path).ok().flatten()
    })
    .pid
}

/// Spawns `script` on `env` in a thread, kills its herd-launch with `signal` while the pane is
/// being acquired, and returns the run id and what herd-launch printed.
fn launch_killed_during_acquisition(env: &Env, signal: i32, script: &str) -> (String, Run) {
    std::thread::scope(|scope| {
        let spawner = scope.spawn(|| {
            let path = env.dir.path().join("req.json");
            std::fs::write(&path, r#"{"name":"Orphan","task":"t"}"#).unwrap();
            env.run(
                &launch_bin(),
                &[
                    "spawn",
                    "--request",
                    path.to_str().unwrap(),
                    "--surface",
                    env.surface,
                    "--json",
                    "--runner",
                    "exec",
                    "--",
                    "sh",
                    "-c",
                    script,
                ],
                &[],
                Duration::from_secs(60),
            )
        });
        let id = first_record(env);
        wait_for("the held tmux", Duration::from_secs(15), || {
            std::fs::metadata(env.dir.path().join("tmux-hold.pid")).ok()
        });
        signal_pid(launcher_pid(env, &id), signal);
        (id, spawner.join().unwrap())
    })
}

#[test]
fn a_definite_launch_failure_settles_at_once_as_failed() {
    let env = Env::new();
    // `logs` is a file, so the process surface cannot place the child: nothing starts.
    std::fs::create_dir_all(env.art()).unwrap();
    std::fs::write(env.art().join("logs"), "").unwrap();
    let out = env.launch(
        &serde_json::json!({"name": "Doomed", "task": "t"}),
        &["--runner", "exec", "--", "true"],
        &[],
    );
    let ack: LaunchAck = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        (out.code, ack.status),
        (4, LaunchStatus::Failed),
        "{}",
        out.stdout
    );
    let id = ack.run_id.as_str();
    // Before any watcher settled it, status already says failed.
    let row = env.status(id).runs.remove(0);
    assert_eq!(row.label, Label::Failed, "{row:?}");
    let (code, doc, text) = env.wait(&["wait", "--run", id, "--json"]);
    assert_eq!(code, 1, "{text}");
    assert_eq!(doc.outcome, Outcome::Failed);
    assert!(
        doc.details
            .launch_failure
            .as_deref()
            .unwrap()
            .contains("cannot create"),
        "{text}"
    );
    // follow emits it (already delivered: no second result) and ends.
    let out = env.run(
        &watch_bin(),
        &["follow", "--json"],
        &[],
        Duration::from_secs(30),
    );
    assert!(out.success(), "{}", out.stderr);
    assert_eq!(result_events(&out.stdout, id), 0);
    let row = env.status(id).runs.remove(0);
    assert_eq!(row.label, Label::Failed, "{row:?}");
}

#[test]
fn a_launch_whose_herd_launch_dies_settles_as_lost() {
    for signal in [libc::SIGKILL, libc::SIGTERM, libc::SIGABRT] {
        let env = held_tmux(false);
        let (id, launch) = launch_killed_during_acquisition(&env, signal, "echo never");
        assert_ne!(launch.code, 0, "signal {signal}: {}", launch.stdout);
        assert_eq!(
            env.run_record(&id).status,
            LaunchStatus::Pending,
            "signal {signal}"
        );
        // The doctor names the run and says what `wait` does with it, which the wait then does.
        let doctor = env.run(
            &herd_e2e::bin("herd-cleanup"),
            &["doctor", "--json"],
            &[],
            Duration::from_secs(60),
        );
        let report: DoctorReport = serde_json::from_str(&doctor.stdout).unwrap();
        let finding = report
            .runs
            .iter()
            .find(|r| r.run_id == id)
            .unwrap_or_else(|| panic!("signal {signal}: {report:#?}"));
        assert_eq!(finding.state, FindingState::LaunchLost, "{finding:?}");
        assert!(
            finding
                .detail
                .contains("settles it as failed (`lost`, exit 1)"),
            "{finding:?}"
        );
        let (code, doc, text) = env.watch_env(
            &["wait", "--run", &id, "--json"],
            &[("HERD_LOST_GRACE_MS", "300")],
        );
        assert_eq!(code, 1, "signal {signal}: {text}");
        let doc: WatchWait = serde_json::from_value(doc).unwrap();
        assert_eq!(doc.outcome, Outcome::Failed);
        let failure = doc.details.launch_failure.as_deref().unwrap();
        assert!(failure.starts_with("lost: herd-launch ended"), "{failure}");
        let hold: u32 = std::fs::read_to_string(env.dir.path().join("tmux-hold.pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        kill(hold);
    }
}

#[test]
fn a_child_started_after_its_launcher_died_is_cancelled_through_its_identity() {
    let env = held_tmux(true);
    let (id, _) = launch_killed_during_acquisition(&env, libc::SIGKILL, "echo started; sleep 60");
    std::fs::write(env.dir.path().join("tmux-release"), "").unwrap();
    let pid = env.identity_pid(&id);
    assert_eq!(env.run_record(&id).status, LaunchStatus::Pending);
    let (code, doc, text) = env.doc::<WatchCancel>(&["cancel", "--run", &id, "--json"]);
    assert_eq!((code, doc.status), (0, CancelStatus::Confirmed), "{text}");
    assert!(
        !process_alive(pid),
        "the child was signalled through its identity"
    );
    let (code, doc, text) = env.wait(&["wait", "--run", &id, "--json"]);
    assert_eq!(code, 5, "{text}");
    assert_eq!(doc.outcome, Outcome::Cancelled);
}
