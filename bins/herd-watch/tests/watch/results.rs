//! What a finished child's result says of how it ended, against real children on every surface:
//! a failure carries the last lines herd holds of the child (its runner's stderr log, or its
//! pane's screen kept at `logs/<id>.screen`) and names the file they are in; an abbreviated
//! command report names the log that keeps it whole; a vanished specialist's notice states
//! facts; a headless child gone with a restart says so; a stopped specialist shows `stopped`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_e2e::herd::{Herd, Where};
use herd_e2e::model::{ModelServer, Script};
use herd_e2e::pi::{PiEnv, pi_bin};
use herd_e2e::proc::signal_pid;
use herd_e2e::wait::wait_for;
use herd_protocol::launch::LaunchAck;
use herd_protocol::result::Outcome;
use herd_protocol::run::LaunchStatus;
use herd_protocol::watch::{Label, StatusRuns, StopStatus, WatchStop, WatchWait};
use serde_json::{Value, json};

use crate::support::{redact, write_script};

/// Runs `test` over one artifacts directory on `place`, its children's Pi environment and
/// scripted model; without a Herdr (said on stderr) a Herdr test does not run.
fn with_herd(place: Where, name: &str, test: impl FnOnce(&mut Herd<'_>, &PiEnv)) {
    let model = ModelServer::start(Script::new());
    let env = PiEnv::new(&model);
    if let Some(mut herd) = Herd::try_new(&env, place, name) {
        test(&mut herd, &env);
    }
}

/// A Pi that cannot start: the real Pi CLI given an option it does not know, as a launcher that
/// adds one would. It says `Error: Unknown option: --no-such-option` and exits 1.
fn pi_with_a_bad_option(env: &PiEnv) -> PathBuf {
    let path = env.root().join("pi-bad-option");
    write_script(
        &path,
        &format!(
            "#!/bin/sh\nexec '{}' --no-such-option \"$@\"\n",
            pi_bin().display()
        ),
    );
    path
}

/// Launches a command child running `script` under `sh -c`; returns its run id.
fn spawn_exec(herd: &Herd, request: Value, script: &str) -> String {
    let name = request["name"].as_str().unwrap().to_owned();
    let path = herd.env().root().join(format!("request-{name}.json"));
    std::fs::write(&path, request.to_string()).unwrap();
    let out = herd.run(
        "herd-launch",
        [
            "spawn",
            "--request",
            path.to_str().unwrap(),
            "--surface",
            herd.place().surface(),
            "--json",
            "--runner",
            "exec",
            "--",
            "sh",
            "-c",
            script,
        ],
    );
    let ack: LaunchAck = out.doc();
    assert_eq!(ack.status, LaunchStatus::Launched, "{out}");
    ack.run_id
}

/// The one line of `message` that starts with `prefix`.
fn line<'m>(message: &'m str, prefix: &str) -> &'m str {
    let lines: Vec<&str> = message.lines().filter(|l| l.starts_with(prefix)).collect();
    assert_eq!(lines.len(), 1, "one line {prefix:?} in:\n{message}");
    lines[0]
}

/// A failed result's evidence: the details name `file` and hold its last lines, which contain
/// `said`; one host line, of `kind`, names the file and shows them.
fn assert_says_why(result: &WatchWait, kind: &str, file: &Path, said: &str) {
    let details = &result.details;
    let (named, tail) = match kind {
        "Stderr" => (&details.stderr_file, &details.stderr_tail),
        _ => (&details.screen_file, &details.screen_tail),
    };
    assert_eq!(named.as_deref(), file.to_str(), "{result:#?}");
    assert!(
        tail.as_deref().unwrap_or_default().contains(said),
        "{result:#?}"
    );
    let message = result.message.as_str();
    let evidence = line(message, &format!("{kind} (the last "));
    assert!(
        evidence.contains(&format!(" of {}): ", file.display())) && evidence.contains(said),
        "{message}"
    );
    assert!(
        std::fs::read_to_string(file).unwrap().contains(said),
        "{} keeps it",
        file.display()
    );
}

fn a_pi_child_that_cannot_start_says_why(herd: &mut Herd<'_>, env: &PiEnv) {
    let place = herd.place();
    herd.set_var("HERD_PI", pi_with_a_bad_option(env));
    let ack = herd.launch(&json!({
        "name": "Scout",
        "task": "Count the files here",
        "model": Herd::model("fake-model"),
    }));
    let id = ack.run_id.as_str();
    let (code, result) = herd.wait_result(id);
    assert_eq!((code, result.outcome), (1, Outcome::Failed), "{result:#?}");
    let logs = herd.artifacts().join("logs");
    match place {
        // Headless, Pi's stderr is its log.
        Where::Process => assert_says_why(
            &result,
            "Stderr",
            &logs.join(format!("{id}.err")),
            "Unknown option: --no-such-option",
        ),
        // In a pane, it was only on the screen: herd keeps the screen and shows its end.
        Where::Tmux | Where::Herdr => assert_says_why(
            &result,
            "Screen",
            &logs.join(format!("{id}.screen")),
            "Unknown option: --no-such-option",
        ),
    }
}

#[test]
fn a_pi_child_that_cannot_start_says_why_on_the_process_surface() {
    with_herd(
        Where::Process,
        "a_pi_child_that_cannot_start_says_why",
        a_pi_child_that_cannot_start_says_why,
    );
}

#[test]
fn a_pi_child_that_cannot_start_says_why_on_tmux() {
    with_herd(
        Where::Tmux,
        "a_pi_child_that_cannot_start_says_why",
        a_pi_child_that_cannot_start_says_why,
    );
}

#[test]
fn a_pi_child_that_cannot_start_says_why_on_herdr() {
    with_herd(
        Where::Herdr,
        "a_pi_child_that_cannot_start_says_why_on_herdr",
        a_pi_child_that_cannot_start_says_why,
    );
}

fn a_command_child_that_fails_says_why(herd: &mut Herd<'_>, _: &PiEnv) {
    let id = spawn_exec(
        herd,
        json!({"name": "Builder", "task": "build it"}),
        "echo 'reading config.toml'; echo 'config.toml: permission denied' >&2; exit 1",
    );
    let (code, result) = herd.wait_result(&id);
    assert_eq!((code, result.outcome), (1, Outcome::Failed), "{result:#?}");
    let message = result.message.as_str();
    assert!(
        message.starts_with("Sub-agent \"Builder\" failed (exit code 1) after "),
        "{message}"
    );
    // What it printed is its report; what it said on stderr is the failure's evidence.
    let close = message.find("</subagent_report>").expect("a report block");
    assert!(message.find("reading config.toml").unwrap() < close);
    assert_says_why(
        &result,
        "Stderr",
        &herd.artifacts().join(format!("logs/{id}.err")),
        "config.toml: permission denied",
    );
    assert_eq!(
        result.details.stderr_tail.as_deref(),
        Some("config.toml: permission denied"),
        "{result:#?}"
    );
}

#[test]
fn a_command_child_that_fails_says_why_on_the_process_surface() {
    with_herd(
        Where::Process,
        "a_command_child_that_fails_says_why",
        a_command_child_that_fails_says_why,
    );
}

#[test]
fn a_command_child_that_fails_says_why_on_tmux() {
    with_herd(
        Where::Tmux,
        "a_command_child_that_fails_says_why",
        a_command_child_that_fails_says_why,
    );
}

#[test]
fn a_command_child_that_fails_says_why_on_herdr() {
    with_herd(
        Where::Herdr,
        "a_command_child_that_fails_says_why_on_herdr",
        a_command_child_that_fails_says_why,
    );
}

#[test]
fn an_abbreviated_command_report_names_the_log_that_keeps_it_whole() {
    with_herd(
        Where::Process,
        "an_abbreviated_command_report_names_the_log_that_keeps_it_whole",
        |herd, _| {
            // One line of 100,000 bytes: its end is the report, abbreviated in the middle.
            let id = spawn_exec(
                herd,
                json!({"name": "LongLine", "task": "t"}),
                "head -c 100000 /dev/zero | tr '\\0' 'y'",
            );
            let (code, result) = herd.wait_result(&id);
            assert_eq!(code, 0, "{result:#?}");
            let out = herd.artifacts().join(format!("logs/{id}.out"));
            let marker = format!(
                "[... result abbreviated; full output remains in {} ...]",
                out.display()
            );
            let message = result.message.as_str();
            assert!(message.contains(&marker), "{message}");
            assert!(!message.contains("child session"), "{message}");
            let report = &result.details.report.as_ref().unwrap().text;
            assert!(report.contains(&marker), "{report}");
        },
    );
}

/// A persistent specialist that prints its first task's answer and records it, then waits for
/// its inbox; on a stop directive it completes and exits.
const SPECIALIST: &str = r#"
s="$PI_SUBAGENT_SESSION"
echo "first task done: 42 files"
printf '{"version":1,"type":"task-done","task":"%s","generation":"%s","at":"t","message":"first task done"}\n' "$PI_SUBAGENT_TASK_ID" "$PI_SUBAGENT_GENERATION_ID" >> "$s.tasks"
while :; do
  for f in "$s".task-inbox.*.json; do
    [ -e "$f" ] || continue
    case "$(cat "$f")" in
      *'"type":"stop"'*) rm -f "$f"; printf '{"type":"done"}' > "$s.exit"; exit 0;;
    esac
  done
  sleep 0.05
done
"#;

/// Launches [`SPECIALIST`] as `name` and waits for its first answer; returns its run id and
/// its runner's PID.
fn specialist(herd: &Herd, name: &str) -> (String, u32) {
    let id = spawn_exec(
        herd,
        json!({"name": name, "task": "count the files", "persistent": true}),
        SPECIALIST,
    );
    let session = herd.run_record(&id).session_file;
    wait_for("the first task's answer", Duration::from_secs(20), || {
        std::fs::read_to_string(format!("{session}.tasks"))
            .ok()
            .filter(|t| t.contains("first task done"))
    });
    let pid = identity_pid(herd, &id);
    (id, pid)
}

/// The PID of run `id`'s runner, from its identity record.
fn identity_pid(herd: &Herd, id: &str) -> u32 {
    let path = PathBuf::from(format!("{}.process.json", herd.run_record(id).session_file));
    wait_for(
        &format!("an identity record at {}", path.display()),
        Duration::from_secs(20),
        || herd_core::identity::Record::read(&path).ok().flatten(),
    )
    .pid
}

#[test]
fn a_vanished_specialists_notice_states_facts_and_is_no_report() {
    with_herd(
        Where::Process,
        "a_vanished_specialists_notice_states_facts_and_is_no_report",
        |herd, _| {
            let (id, pid) = specialist(herd, "Fragile");
            signal_pid(pid, libc::SIGKILL);
            let (code, result) = herd.wait_result(&id);
            assert_eq!(code, 1, "{result:#?}");
            let message = result.message.as_str();
            assert!(
                message.starts_with("Persistent specialist \"Fragile\" vanished after "),
                "{message}"
            );
            // Its last good answer went out with its task; the crash notice does not wrap it as a
            // failure's report.
            assert!(!message.contains("<subagent_report"), "{message}");
            assert!(!message.contains("first task done"), "{message}");
            assert_eq!(result.details.report, None, "{result:#?}");
            assert_eq!(
                line(message, "Error: "),
                "Error: its runner exited with code 137"
            );
            assert!(!message.contains("Subagent error"), "{message}");
        },
    );
}

#[test]
fn a_stopped_specialist_shows_stopped() {
    with_herd(
        Where::Process,
        "a_stopped_specialist_shows_stopped",
        |herd, _| {
            let (id, _) = specialist(herd, "Keeper");
            let out = herd.run("herd-watch", ["stop", "--run", &id, "--json"]);
            let stop: WatchStop = serde_json::from_value(out.json()).unwrap();
            assert_eq!(stop.status, StopStatus::Stopped, "{out}");
            let (code, result) = herd.wait_result(&id);
            assert_eq!(
                (code, result.details.stopped),
                (0, Some(true)),
                "{result:#?}"
            );
            let out = herd.run("herd-watch", ["status", "--run", &id, "--json"]);
            let status: StatusRuns = serde_json::from_value(out.json()).unwrap();
            assert_eq!(status.runs[0].label, Label::Stopped, "{out}");
            let out = herd.run("herd-watch", ["status", "--run", &id]);
            insta::assert_snapshot!("stopped_status", redact(herd.artifacts(), &out.stdout));
        },
    );
}

#[test]
fn a_headless_child_gone_with_a_restart_says_so_in_process_terms() {
    with_herd(
        Where::Process,
        "a_headless_child_gone_with_a_restart_says_so_in_process_terms",
        |herd, _| {
            let id = spawn_exec(herd, json!({"name": "Sleeper", "task": "t"}), "sleep 60");
            let pid = identity_pid(herd, &id);
            // Its identities as an earlier boot recorded them: after a restart nothing of them runs.
            let session = herd.run_record(&id).session_file;
            for file in [
                PathBuf::from(format!("{session}.process.json")),
                herd.artifacts().join(format!("runs/{id}.leader.json")),
            ] {
                let Ok(bytes) = std::fs::read(&file) else {
                    continue;
                };
                let mut identity: Value = serde_json::from_slice(&bytes).unwrap();
                identity["bootId"] = Value::from("00000000-0000-0000-0000-000000000000");
                std::fs::write(&file, identity.to_string()).unwrap();
            }
            let (code, result) = herd.wait_result(&id);
            signal_pid(pid, libc::SIGKILL);
            assert_eq!(code, 1, "{result:#?}");
            let message = result.message.as_str();
            assert!(
                !message.contains("pane"),
                "a headless child has no pane: {message}"
            );
            let error = line(message, "Error: ");
            assert!(
                error.contains("the machine restarted") && error.contains("its process is gone"),
                "{message}"
            );
            assert_eq!(
                result.details.error_message.as_deref(),
                error.strip_prefix("Error: "),
                "{result:#?}"
            );
        },
    );
}
