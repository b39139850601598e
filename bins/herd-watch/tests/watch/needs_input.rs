//! A child waiting for a person, on tmux and on a real Herdr server: launched by the real
//! herd-launch with the exec runner, each child a shell script that writes its
//! `<session>.needs-input.json` as the child extension does when Pi opens a dialog, closes it, and
//! settles. `status`, the widget and `follow --json` say `waiting for input` from that file alone.
//!
//! `herd-watch notify` tells the person at the parent, and the tests read what tmux (its message
//! log and the client's screen) and Herdr (its answer to `notification show`) really showed.
//!
//! Without a Herdr (`HERD_TEST_HERDR`) the Herdr tests say on stderr that they did not run.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use herd_e2e::cli::{self, Run};
use herd_e2e::herdr::HerdrServer;
use herd_e2e::tmux::Tmux;
use herd_e2e::wait::wait_for;
use herd_protocol::launch::LaunchAck;
use herd_protocol::needs_input::InputReason;
use herd_protocol::result::Outcome;
use herd_protocol::run::{LaunchStatus, RunRecord};
use herd_protocol::watch::{Label, StatusRow, StatusRuns, WatchEvent, WatchNotify};
use serde_json::Value;

use crate::support::{redact, watch_bin};

/// Where the children run: a private tmux server or Herdr server, and the environment a herd
/// program gets there (the parent's pane's).
struct Place {
    dir: tempfile::TempDir,
    surface: &'static str,
    vars: Vec<(OsString, OsString)>,
    tmux: Option<Tmux>,
    herdr: Option<HerdrServer>,
    /// The parent's pane, on Herdr.
    parent: String,
}

impl Place {
    fn tmux() -> Place {
        let dir = tempfile::tempdir().unwrap();
        let vars: Vec<(OsString, OsString)> = ["PATH", "HOME"]
            .into_iter()
            .filter_map(|k| Some((k.into(), std::env::var_os(k)?)))
            .collect();
        let server = Tmux::start(&vars);
        server.new_session("herd-test", dir.path(), &["sh".into()]);
        let socket = server.socket_path();
        Place {
            dir,
            surface: "tmux",
            vars: vec![("HERD_TMUX_SOCKET".into(), socket.into())],
            tmux: Some(server),
            herdr: None,
            parent: String::new(),
        }
    }

    fn herdr(test: &str) -> Option<Place> {
        let herdr = HerdrServer::start(test, &[])?;
        let dir = tempfile::tempdir().unwrap();
        let (_, parent) = herdr.workspace(&dir.path().canonicalize().unwrap());
        let vars = herdr.pane_vars(&parent);
        Some(Place {
            dir,
            surface: "herdr",
            vars,
            tmux: None,
            herdr: Some(herdr),
            parent,
        })
    }

    fn art(&self) -> PathBuf {
        self.dir.path().join("art")
    }

    fn command(
        &self,
        program: &Path,
        args: &[&str],
        budget: Duration,
    ) -> herd_core::subprocess::Command {
        let mut cmd = cli::within(program, budget)
            .arg("--artifacts")
            .arg(self.art())
            .args(args.iter().copied())
            .cwd(self.dir.path())
            .grace(Duration::from_millis(200))
            .env("HERD_HANG_WARNING_SECS", "0");
        for (k, v) in &self.vars {
            cmd = cmd.env(k, v);
        }
        cmd
    }

    fn run(&self, program: &Path, args: &[&str]) -> Run {
        cli::try_run(&self.command(program, args, Duration::from_secs(60)))
    }

    fn spawn(&self, request: Value, script: &str) -> String {
        let path = self.dir.path().join("request.json");
        std::fs::write(&path, request.to_string()).unwrap();
        let args = [
            "spawn",
            "--request",
            path.to_str().unwrap(),
            "--surface",
            self.surface,
            "--json",
            "--runner",
            "exec",
            "--",
            "sh",
            "-c",
            script,
        ];
        let out = self.run(&herd_e2e::bin("herd-launch"), &args);
        let ack: LaunchAck = serde_json::from_str(&out.stdout)
            .unwrap_or_else(|_| panic!("spawn: {}\n{}", out.stdout, out.stderr));
        assert_eq!(
            ack.status,
            LaunchStatus::Launched,
            "{ack:?}\n{}",
            out.stderr
        );
        ack.run_id
    }

    /// The pane run `id`'s record names.
    fn pane(&self, id: &str) -> String {
        let path = self.art().join("runs").join(format!("{id}.json"));
        let record: RunRecord = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        record.pane.expect("a pane").pane_id
    }

    /// The status row of run `id`, when `status` answers with one.
    fn status(&self, id: &str) -> Option<StatusRow> {
        let out = self.run(&watch_bin(), &["status", "--run", id, "--json"]);
        let mut doc: StatusRuns = serde_json::from_str(&out.stdout).ok()?;
        (doc.runs.len() == 1).then(|| doc.runs.remove(0))
    }

    fn wait_label(&self, id: &str, what: &str, pred: impl Fn(&StatusRow) -> bool) -> StatusRow {
        wait_for(what, Duration::from_secs(20), || {
            self.status(id).filter(|row| pred(row))
        })
    }

    /// `herd-watch follow --json --forever`, its lines into a file; the test stops it.
    #[expect(
        clippy::disallowed_methods,
        reason = "a follow stopped by the test once what it waits for is on disk"
    )]
    fn follow(&self) -> (Child, PathBuf) {
        let out = self.dir.path().join("follow.jsonl");
        let mut cmd = Command::new(watch_bin());
        cmd.arg("--artifacts")
            .arg(self.art())
            .args(["follow", "--json", "--forever"])
            .current_dir(self.dir.path())
            .env("HERD_HANG_WARNING_SECS", "0")
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(Stdio::null());
        for (k, v) in &self.vars {
            cmd.env(k, v);
        }
        (cmd.spawn().unwrap(), out)
    }

    fn go(&self, step: &str) {
        std::fs::write(self.dir.path().join(step), "").unwrap();
    }
}

/// A child that works (a tool runs), opens a dialog, closes it, settles, and ends: each step
/// after the test creates its `goN` file. It writes its needs-input file as the child extension
/// does, atomically.
const ASKER: &str = r#"
f="$PI_SUBAGENT_SESSION.needs-input.json"
w() { printf '{"version":1,"runningChildId":"%s","sequence":%s,"state":"%s","since":%s%s}\n' "$PI_SUBAGENT_ID" "$1" "$2" "$(date +%s%3N)" "$3" > "$f.tmp" && mv "$f.tmp" "$f"; }
step() { until [ -e "$1" ]; do sleep 0.05; done; }
step go1
w 1 dialog ',"kind":"confirm","title":"Delete the \"old\" branch?"'
step go2
w 2 working ''
step go3
w 3 settled ''
step go4
echo finished
"#;

/// A `needs_input` line of a follow: the run, why it waits, and the notice a person is shown.
#[derive(Debug)]
struct NeedsInputEvent {
    run_id: String,
    reason: InputReason,
    message: String,
}

fn needs_input_events(file: &Path) -> Vec<NeedsInputEvent> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| match serde_json::from_str(l).ok()? {
            WatchEvent::NeedsInput {
                run_id,
                reason,
                message,
                ..
            } => Some(NeedsInputEvent {
                run_id,
                reason,
                message,
            }),
            _ => None,
        })
        .collect()
}

/// Why a status row waits for input, when it does.
fn waits_for(row: &StatusRow) -> Option<InputReason> {
    row.needs_input.as_ref().map(|n| n.reason)
}

fn a_child_waits_for_input_while_its_dialog_is_open_and_after_it_settles(place: &Place) {
    let id = place.spawn(
        serde_json::json!({"name": "Asker", "task": "ask", "interactive": true}),
        ASKER,
    );
    let (mut follower, follow_file) = place.follow();
    // Running, silent and slow: not waiting.
    let row = place.wait_label(&id, "the child running", |r| r.label == Label::Running);
    assert_eq!(row.needs_input, None, "{row:?}");

    place.go("go1");
    let row = place.wait_label(&id, "waiting for input (dialog)", |r| {
        r.label == Label::WaitingForInput
    });
    let waiting = row.needs_input.as_ref().unwrap();
    assert_eq!(waiting.reason, InputReason::Dialog, "{row:?}");
    assert_eq!(waiting.kind.as_deref(), Some("confirm"), "{row:?}");
    assert_eq!(
        waiting.title.as_deref(),
        Some("Delete the \"old\" branch?"),
        "{row:?}"
    );
    let human = place.run(&watch_bin(), &["status", "--run", &id]).stdout;
    insta::assert_snapshot!("dialog_status", redact(place.dir.path(), &human));
    let widget = place.run(&watch_bin(), &["status", "--widget"]).stdout;
    insta::assert_snapshot!("dialog_widget", redact(place.dir.path(), &widget));
    let events = wait_for("a needs_input event", Duration::from_secs(20), || {
        let e = needs_input_events(&follow_file);
        (!e.is_empty()).then_some(e)
    });
    assert_eq!(events[0].run_id, id);
    assert_eq!(events[0].reason, InputReason::Dialog);
    assert!(
        events[0]
            .message
            .starts_with(r#""Asker" is waiting for input: dialog"#),
        "{:?}",
        events[0]
    );

    // The dialog closed: the child moved on.
    place.go("go2");
    place.wait_label(&id, "out of waiting for input", |r| {
        r.label != Label::WaitingForInput
    });
    // Its run settled: an interactive child waits for its person.
    place.go("go3");
    let row = place.wait_label(&id, "waiting for input (settled)", |r| {
        waits_for(r) == Some(InputReason::TurnSettled)
    });
    assert_eq!(row.label, Label::WaitingForInput, "{row:?}");
    let events = wait_for("the second needs_input", Duration::from_secs(20), || {
        let e = needs_input_events(&follow_file);
        (e.len() >= 2).then_some(e)
    });
    assert_eq!(events[1].reason, InputReason::TurnSettled);

    place.go("go4");
    place.wait_label(&id, "the child completed", |r| r.label == Label::Completed);
    wait_for("the result line", Duration::from_secs(20), || {
        std::fs::read_to_string(&follow_file)
            .unwrap_or_default()
            .contains(r#""event":"result""#)
            .then_some(())
    });
    // Once per transition: the follower, reading the same files on every tick, said it twice.
    let events = needs_input_events(&follow_file);
    assert_eq!(events.len(), 2, "{events:?}");
    let _ = follower.kill();
    let _ = follower.wait();
}

#[test]
fn on_tmux_a_dialog_and_a_settled_interactive_child_wait_for_input() {
    a_child_waits_for_input_while_its_dialog_is_open_and_after_it_settles(&Place::tmux());
}

#[test]
fn on_herdr_a_dialog_and_a_settled_interactive_child_wait_for_input() {
    let Some(place) =
        Place::herdr("on_herdr_a_dialog_and_a_settled_interactive_child_wait_for_input")
    else {
        return;
    };
    a_child_waits_for_input_while_its_dialog_is_open_and_after_it_settles(&place);
}

/// A child that asks for help (`caller_ping`) ends with its help request, which waits for its
/// answer in `status` until the session is resumed.
#[test]
fn a_help_request_waits_for_input_and_follow_says_so_once() {
    let place = Place::tmux();
    let id = place.spawn(
        serde_json::json!({"name": "Pinger", "task": "ask"}),
        r#"printf '{"type":"ping","name":"Pinger","message":"which schema?"}' > "$PI_SUBAGENT_SESSION.exit""#,
    );
    let (mut follower, follow_file) = place.follow();
    let row = place.wait_label(&id, "waiting for input (help)", |r| {
        r.label == Label::WaitingForInput
    });
    assert_eq!(row.outcome, Some(Outcome::Help), "{row:?}");
    assert_eq!(waits_for(&row), Some(InputReason::HelpRequest), "{row:?}");
    let events = wait_for("the needs_input event", Duration::from_secs(20), || {
        let e = needs_input_events(&follow_file);
        (!e.is_empty()).then_some(e)
    });
    assert_eq!(events[0].reason, InputReason::HelpRequest);
    let _ = follower.kill();
    let _ = follower.wait();
    assert_eq!(needs_input_events(&follow_file).len(), 1);
}

/// A child that runs until the test lets it end.
const SLEEPER: &str = r#"until [ -e stop ]; do sleep 0.05; done"#;

fn notify(place: &Place, id: &str, extra: &[(&str, &str)]) -> WatchNotify {
    let mut cmd = place.command(
        &watch_bin(),
        &["notify", "--run", id, "--kind", "waiting", "--json"],
        Duration::from_secs(30),
    );
    for (k, v) in extra {
        cmd = cmd.env(k, v);
    }
    let out = cli::try_run(&cmd);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    serde_json::from_str(&out.stdout).unwrap()
}

#[test]
fn on_tmux_a_notice_is_the_parents_clients_message_unless_it_looks_at_the_childs_pane() {
    let place = Place::tmux();
    let server = place.tmux.as_ref().unwrap();
    let socket = server.socket_path();
    // The person: a tmux client of the parent's session, in a terminal of its own (a pane of
    // another tmux server), and long enough on screen to be read back.
    server.cmd(["set", "-g", "display-time", "60000"]);
    let viewer = Tmux::start(&place.vars);
    viewer.new_session(
        "person",
        place.dir.path(),
        &[
            "tmux".into(),
            "-S".into(),
            socket.clone().into(),
            "attach".into(),
            "-t".into(),
            "herd-test".into(),
        ],
    );
    wait_for("the person's client", Duration::from_secs(10), || {
        (!server
            .cmd(["list-clients", "-F", "#{client_name}"])
            .is_empty())
        .then_some(())
    });
    let parent = server.cmd(["display-message", "-p", "-t", "herd-test", "#{pane_id}"]);
    let id = place.spawn(
        serde_json::json!({"name": "Asker #{pane_id}", "task": "t"}),
        SLEEPER,
    );
    place.wait_label(&id, "the child running", |r| r.label == Label::Running);
    let inside = format!("{},{},0", socket.display(), server.pid());
    let env = [("TMUX", inside.as_str()), ("TMUX_PANE", parent.as_str())];

    let doc = notify(&place, &id, &env);
    assert!(!doc.looking, "{doc:?}");
    assert_eq!(doc.told[0].via, "tmux", "{doc:?}");
    assert!(doc.told[0].shown, "{doc:?}");
    let line = r#"herd: "Asker #{pane_id}" is waiting for input"#;
    let log = server.cmd(["show-messages"]);
    assert_eq!(
        log.lines()
            .filter(|l| l.ends_with(&format!("message: {line}")))
            .count(),
        1,
        "{log}"
    );
    // What the person's terminal shows: the message on the status line, the name's own `#{…}`
    // as it is.
    viewer.wait_for_text("person", line, Duration::from_secs(10));

    // The person looks at the child's pane: nothing is shown.
    let row = place.status(&id).unwrap();
    assert_eq!(row.run_id, id);
    let child_pane = place.pane(&id);
    server.cmd(["switch-client", "-t", &child_pane]);
    server.cmd(["select-pane", "-t", &child_pane]);
    let doc = notify(&place, &id, &env);
    assert!(doc.looking, "{doc:?}");
    assert_eq!(doc.told, [], "{doc:?}");
    let log = server.cmd(["show-messages"]);
    assert_eq!(
        log.lines()
            .filter(|l| l.contains(" message: herd:"))
            .count(),
        1,
        "{log}"
    );
    place.go("stop");
}

#[test]
fn on_herdr_a_notice_is_herdrs_notification_and_says_what_herdr_answered() {
    let Some(place) =
        Place::herdr("on_herdr_a_notice_is_herdrs_notification_and_says_what_herdr_answered")
    else {
        return;
    };
    let herdr = place.herdr.as_ref().unwrap();
    let id = place.spawn(serde_json::json!({"name": "Asker", "task": "t"}), SLEEPER);
    place.wait_label(&id, "the child running", |r| r.label == Label::Running);
    // Herdr's default: its notifications are off, and it says so.
    let doc = notify(&place, &id, &[]);
    assert_eq!(doc.told[0].via, "herdr", "{doc:?}");
    assert!(!doc.told[0].shown, "{doc:?}");
    assert_eq!(doc.told[0].detail, "disabled", "{doc:?}");
    // Turned on, as a person does in Herdr's configuration: shown.
    let config = herdr
        .home()
        .parent()
        .unwrap()
        .join("config/herdr/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("[ui.toast]\nenabled = true\ndelivery = \"herdr\"\n");
    std::fs::write(&config, text).unwrap();
    herdr.ok(["server", "reload-config"]);
    // Herdr shows one toast at a time, its own of the reload first (`busy` while it stays): the
    // first notice after turning them on waits for it and is shown.
    let doc = notify(&place, &id, &[]);
    assert_eq!(
        (doc.told[0].shown, doc.told[0].detail.as_str()),
        (true, "shown"),
        "{doc:?}"
    );
    assert_eq!(doc.text, r#""Asker" is waiting for input"#, "{doc:?}");
    // Another at once waits for this one to go, and is shown too.
    let doc = notify(&place, &id, &[]);
    assert_eq!(
        (doc.told[0].shown, doc.told[0].detail.as_str()),
        (true, "shown"),
        "{doc:?}"
    );
    // The person brings the child's tab to the front: nothing is shown.
    let pane = herdr.pane(&place.pane(&id)).unwrap();
    herdr.ok(["workspace", "focus", pane["workspace_id"].as_str().unwrap()]);
    herdr.ok(["tab", "focus", pane["tab_id"].as_str().unwrap()]);
    let doc = notify(&place, &id, &[]);
    assert!(doc.looking, "{doc:?}");
    assert_eq!(doc.told, [], "{doc:?}");
    // Back at the parent's own tab: the child's pane, still the focused one of its tab, is not
    // in front.
    let parent = herdr.pane(&place.parent).unwrap();
    if parent["tab_id"] != pane["tab_id"] {
        herdr.ok(["tab", "focus", parent["tab_id"].as_str().unwrap()]);
        let doc = notify(&place, &id, &[]);
        assert!(!doc.looking, "{doc:?}");
    }
    place.go("stop");
}

/// A persistent specialist whose first task ends with a help request (a `help-request` task
/// event), and which answers every later task.
const ASKING_SPECIALIST: &str = r#"
s="$PI_SUBAGENT_SESSION"
event() { printf '{"version":1,"type":"%s","task":"%s","generation":"%s","at":"t","message":"%s"}\n' "$1" "$2" "$PI_SUBAGENT_GENERATION_ID" "$3" >> "$s.tasks"; }
event help-request "$PI_SUBAGENT_TASK_ID" "which schema?"
while :; do
  for f in "$s".task-inbox.*.json; do
    [ -e "$f" ] || continue
    body=$(cat "$f"); rm -f "$f"
    case "$body" in
      *'"type":"stop"'*) printf '{"type":"done"}' > "$s.exit"; exit 0;;
      *) task=$(printf '%s' "$body" | sed 's/.*"task":"\([^"]*\)".*/\1/'); event task-done "$task" "answered $task";;
    esac
  done
  sleep 0.05
done
"#;

#[test]
fn a_specialists_help_request_waits_for_input_until_its_next_task() {
    let place = Place::tmux();
    let id = place.spawn(
        serde_json::json!({"name": "Specialist", "task": "first", "persistent": true}),
        ASKING_SPECIALIST,
    );
    let (mut follower, follow_file) = place.follow();
    let row = place.wait_label(&id, "the specialist waiting for input", |r| {
        r.label == Label::WaitingForInput
    });
    assert_eq!(waits_for(&row), Some(InputReason::HelpRequest), "{row:?}");
    let events = wait_for("its needs_input event", Duration::from_secs(20), || {
        let e = needs_input_events(&follow_file);
        (!e.is_empty()).then_some(e)
    });
    assert_eq!(events[0].reason, InputReason::HelpRequest);
    // The answer is its next task: it moves on.
    let send = place.run(
        &herd_e2e::bin("herd-launch"),
        &["send", "--run", &id, "--message", "use v2", "--json"],
    );
    assert_eq!(send.code, 0, "{}{}", send.stdout, send.stderr);
    place.wait_label(&id, "the specialist past its help request", |r| {
        r.label != Label::WaitingForInput
    });
    let stop = place.run(&watch_bin(), &["stop", "--run", &id, "--json"]);
    assert_eq!(stop.code, 0, "{}{}", stop.stdout, stop.stderr);
    wait_for("the specialist's end", Duration::from_secs(20), || {
        std::fs::read_to_string(&follow_file)
            .unwrap_or_default()
            .contains("stopped (")
            .then_some(())
    });
    let _ = follower.kill();
    let _ = follower.wait();
    assert_eq!(needs_input_events(&follow_file).len(), 1);
}
