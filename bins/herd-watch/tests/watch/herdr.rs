//! herd-watch against children on a real headless Herdr server: launched by the real
//! herd-launch from the parent's pane (its `HERDR_*` environment) with the exec runner, each
//! child a small shell script. One server per test (`herd_e2e::herdr::HerdrServer`).
//!
//! Without a Herdr (`HERD_TEST_HERDR`) each test says on stderr that it did not run; in CI it
//! fails.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use herd_core::error::{ErrorCode, ErrorDocument};
use herd_e2e::cli::{self, Run};
use herd_e2e::herdr::HerdrServer;
use herd_e2e::proc::{process_alive, signal_pid};
use herd_e2e::wait::wait_for;
use herd_protocol::intents::SteeringLedger;
use herd_protocol::launch::LaunchAck;
use herd_protocol::result::Outcome;
use herd_protocol::run::{LaunchStatus, RunRecord};
use herd_protocol::watch::{
    CancelStatus, Interrupted, Label, RunEvent, StatusRow, StatusRuns, StatusWidget, SteerState,
    StopStatus, WatchCancel, WatchEvent, WatchInterrupt, WatchSteer, WatchStop, WatchWait,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::support::{launch_bin, redact, watch_bin};

/// A server, the parent's pane, and an artifacts directory.
struct Env {
    herdr: HerdrServer,
    dir: tempfile::TempDir,
    parent: String,
}

impl Env {
    fn start(test: &str) -> Option<Env> {
        let herdr = HerdrServer::start(test, &[])?;
        let dir = tempfile::tempdir().unwrap();
        let (_, parent) = herdr.workspace(&dir.path().canonicalize().unwrap());
        Some(Env { herdr, dir, parent })
    }

    fn art(&self) -> PathBuf {
        self.dir.path().join("art")
    }

    /// Runs a herd program as from inside the parent's pane.
    fn run(&self, program: &Path, args: &[&str], budget: Duration) -> Run {
        self.run_env(program, args, &[], budget)
    }

    /// Like [`Env::run`], with more environment `extra` (set last).
    fn run_env(
        &self,
        program: &Path,
        args: &[&str],
        extra: &[(&str, &str)],
        budget: Duration,
    ) -> Run {
        let mut cmd = cli::within(program, budget)
            .arg("--artifacts")
            .arg(self.art())
            .args(args)
            .cwd(self.dir.path())
            .grace(Duration::from_millis(200))
            .env("HERD_HANG_WARNING_SECS", "0");
        for (k, v) in self.herdr.pane_vars(&self.parent) {
            cmd = cmd.env(k, v);
        }
        for (k, v) in extra {
            cmd = cmd.env(k, v);
        }
        cli::try_run(&cmd)
    }

    /// Launches a child running `script` under `sh -c`; returns its run id.
    fn spawn(&self, name: &str, script: &str) -> String {
        let (out, ack) = self.try_spawn(name, script, &[]);
        assert_eq!(
            ack.status,
            LaunchStatus::Launched,
            "{ack:?}\n{}",
            out.stderr
        );
        ack.run_id
    }

    /// Launches a child running `script` under `sh -c` with more environment `extra`; returns
    /// the outcome and the acknowledgement.
    fn try_spawn(&self, name: &str, script: &str, extra: &[(&str, &str)]) -> (Run, LaunchAck) {
        let request = serde_json::json!({"name": name, "task": "the task"});
        self.try_launch(&request, script, extra)
    }

    /// Launches `request` as a child running `script` under `sh -c` with more environment
    /// `extra`; returns the outcome and the acknowledgement.
    fn try_launch(
        &self,
        request: &Value,
        script: &str,
        extra: &[(&str, &str)],
    ) -> (Run, LaunchAck) {
        let name = request["name"].as_str().unwrap_or("child");
        let path = self.dir.path().join(format!("req-{name}.json"));
        std::fs::write(&path, request.to_string()).unwrap();
        let args = [
            "spawn",
            "--request",
            path.to_str().unwrap(),
            "--surface",
            "herdr",
            "--json",
            "--runner",
            "exec",
            "--",
            "sh",
            "-c",
            script,
        ];
        let out = self.run_env(&launch_bin(), &args, extra, Duration::from_secs(90));
        let ack: LaunchAck = serde_json::from_str(&out.stdout)
            .unwrap_or_else(|_| panic!("spawn: {}\n{}", out.stdout, out.stderr));
        (out, ack)
    }

    /// Runs `herd-watch ARGS`: exit code, JSON document, all output, and the time it took.
    fn watch(&self, args: &[&str]) -> (i32, Value, String, Duration) {
        let started = Instant::now();
        let out = self.run(&watch_bin(), args, Duration::from_secs(60));
        let took = started.elapsed();
        let doc = serde_json::from_str(&out.stdout).unwrap_or(Value::Null);
        let text = out.stdout.clone() + &out.stderr;
        assert!(!out.timed_out, "herd-watch {args:?} did not end:\n{text}");
        (out.code, doc, text, took)
    }

    /// `herd-watch ARGS` (with `--json`): its exit code, the document it printed as `T`, and all
    /// its output.
    fn doc<T: DeserializeOwned>(&self, args: &[&str]) -> (i32, T, String) {
        let (code, doc, text, _) = self.watch(args);
        let doc = serde_json::from_value(doc).unwrap_or_else(|err| {
            panic!("herd-watch {args:?} printed no such document ({err}): {text}")
        });
        (code, doc, text)
    }

    /// `herd-watch ARGS` (a `wait … --json`): its exit code, the settled result and all output.
    fn wait(&self, args: &[&str]) -> (i32, WatchWait, String) {
        self.doc(args)
    }

    fn record(&self, run_id: &str) -> RunRecord {
        let path = self.art().join("runs").join(format!("{run_id}.json"));
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    }

    fn pane(&self, run_id: &str) -> String {
        self.record(run_id).pane.expect("a pane").pane_id
    }

    fn identity_pid(&self, run_id: &str) -> u32 {
        let path = PathBuf::from(format!("{}.process.json", self.record(run_id).session_file));
        wait_for(
            &format!("an identity record at {}", path.display()),
            Duration::from_secs(20),
            || herd_core::identity::Record::read(&path).ok().flatten(),
        )
        .pid
    }

    /// Starts `herd-watch follow --json --forever`, stopped when the handle is dropped.
    fn follow_in_background(&self) -> Background {
        use std::os::unix::process::CommandExt;
        #[expect(
            clippy::disallowed_methods,
            reason = "a watcher the test stops when it has seen what it waits for"
        )]
        let mut cmd = std::process::Command::new(watch_bin());
        cmd.arg("--artifacts")
            .arg(self.art())
            .args(["follow", "--json", "--forever"])
            .current_dir(self.dir.path())
            .env("HERD_HANG_WARNING_SECS", "0")
            .envs(self.herdr.pane_vars(&self.parent))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0);
        #[expect(
            clippy::disallowed_methods,
            reason = "a watcher the test stops when it has seen what it waits for"
        )]
        let child = cmd.spawn().unwrap();
        Background(child)
    }

    /// The labels of the run's recorded status transitions, in order.
    fn event_labels(&self, run_id: &str) -> Vec<Label> {
        let path = self
            .art()
            .join("runs")
            .join(format!("{run_id}.events.jsonl"));
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<RunEvent>(l).ok())
            .map(|e| e.label)
            .collect()
    }

    /// Waits until a watcher recorded a transition of the run to `label`.
    fn wait_for_event_label(&self, run_id: &str, label: Label) {
        wait_for(
            &format!("a transition of {run_id} to {}", label.as_str()),
            Duration::from_secs(30),
            || self.event_labels(run_id).contains(&label).then_some(()),
        );
    }

    /// `herd-watch status --run ID --json`'s row of the run.
    fn status(&self, run_id: &str) -> StatusRow {
        let (_, mut doc, text) = self.doc::<StatusRuns>(&["status", "--run", run_id, "--json"]);
        assert_eq!(doc.runs.len(), 1, "{text}");
        doc.runs.remove(0)
    }

    /// Polls the run's status until its label is `label`.
    fn wait_for_label(&self, run_id: &str, label: Label) -> StatusRow {
        wait_for(
            &format!("run {run_id} to be {label:?}"),
            Duration::from_secs(30),
            || {
                let row = self.status(run_id);
                (row.label == label).then_some(row)
            },
        )
    }
}

/// A background process, its group killed when dropped.
struct Background(std::process::Child);

impl Drop for Background {
    fn drop(&mut self) {
        herd_e2e::proc::signal_group(self.0.id(), libc::SIGKILL);
        let _ = self.0.wait();
    }
}

#[test]
fn on_herdr_a_finished_child_reports_its_own_run_time_and_its_pane_closes() {
    let Some(env) = Env::start("on_herdr_a_finished_child_reports_its_own_run_time") else {
        return;
    };
    let id = env.spawn("Painter", "echo painted");
    let pane = env.pane(&id);
    let exit = env.art().join(format!("runs/{id}.runner-exit.json"));
    wait_for("the runner's exit record", Duration::from_secs(30), || {
        exit.exists().then_some(())
    });
    let ended = std::fs::metadata(&exit).unwrap().modified().unwrap();
    // Herd looks only later: the run time is still the child's.
    wait_for(
        "three seconds past the child's end",
        Duration::from_secs(10),
        || {
            (SystemTime::now().duration_since(ended).unwrap_or_default() >= Duration::from_secs(3))
                .then_some(())
        },
    );
    let (code, doc, text) = env.wait(&["wait", "--run", &id, "--json"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(doc.outcome, Outcome::Completed, "{doc:?}");
    assert!(doc.message.contains("painted"), "{doc:?}");
    let elapsed = doc.details.elapsed_ms.unwrap();
    assert!(
        elapsed < 3000,
        "the child ran {elapsed} ms by its own clock: {text}"
    );
    let row = env.status(&id);
    assert!(row.elapsed_ms < 3000, "{row:?}");
    // Herdr would keep the finished child's pane as an idle shell: herd closes it.
    wait_for(
        "the finished child's pane to close",
        Duration::from_secs(20),
        || (!env.herdr.pane_exists(&pane)).then_some(()),
    );
    assert!(env.herdr.pane_exists(&env.parent));
}

#[test]
fn on_herdr_a_child_completes_by_its_sidecar_and_by_its_shell_sentinel() {
    let Some(env) = Env::start("on_herdr_a_child_completes_by_its_sidecar_and_sentinel") else {
        return;
    };
    // The sidecar decides, as the child extension writes it.
    let sidecar = env.spawn(
        "Reporter",
        r#"printf '%s' '{"type":"done"}' > "$PI_SUBAGENT_SESSION.exit"; echo reported"#,
    );
    let (code, doc, text) = env.wait(&["wait", "--run", &sidecar, "--json"]);
    assert_eq!((code, doc.outcome), (0, Outcome::Completed), "{text}");
    // Without a sidecar, the runner's exit status decides: the launch script's record.
    let failing = env.spawn("Failer", "echo failing; exit 4");
    let (code, doc, text) = env.wait(&["wait", "--run", &failing, "--json"]);
    assert_ne!(code, 0, "{text}");
    assert_eq!(doc.outcome, Outcome::Failed, "{doc:?}");
    assert!(doc.message.contains("code 4"), "{doc:?}");
    // Without that record either, the sentinel the script printed on the pane, whose shell
    // Herdr keeps: the runner is gone, its status is on the screen.
    let unrecorded = env.spawn("Unrecorded", "echo unrecorded; exit 5");
    let pane = env.pane(&unrecorded);
    env.herdr
        .wait_for_text(&pane, "__SUBAGENT_DONE_5__", Duration::from_secs(30));
    std::fs::remove_file(
        env.art()
            .join(format!("runs/{unrecorded}.runner-exit.json")),
    )
    .unwrap();
    let (code, doc, text) = env.wait(&["wait", "--run", &unrecorded, "--json"]);
    assert_ne!(code, 0, "{text}");
    assert_eq!(doc.outcome, Outcome::Failed, "{doc:?}");
    assert!(doc.message.contains("code 5"), "{doc:?}");
}

#[test]
fn on_herdr_a_child_is_steered_interrupted_and_cancelled_with_its_pane_closed() {
    let Some(env) = Env::start("on_herdr_a_child_is_interrupted_steered_and_cancelled") else {
        return;
    };
    // A child that echoes every line it reads from its terminal, as a Pi prompt takes a
    // steering message (the exec runner's stdin is its task, its stdout a log).
    let id = env.spawn(
        "Looper",
        "exec < /dev/tty > /dev/tty; while IFS= read -r line; do printf 'heard<%s>\\n' \"$line\"; done",
    );
    let pid = env.identity_pid(&id);
    let pane = env.pane(&id);
    // The runner herd recorded is what the pane runs.
    let info = env.herdr.json(["pane", "process-info", "--pane", &pane]);
    let pids: Vec<u64> = info["process_info"]["foreground_processes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["pid"].as_u64())
        .collect();
    assert!(pids.contains(&u64::from(pid)), "{pid} in {info}");
    env.wait_for_label(&id, Label::Running);
    let (code, doc, text) = env.doc::<WatchSteer>(&[
        "steer",
        "--run",
        &id,
        "--message",
        "check the parser; then the lexer",
        "--mode",
        "steer",
        "--json",
    ]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(doc.receipt, SteerState::Delivered, "{doc:?}");
    env.herdr.wait_for_text(
        &pane,
        "heard<check the parser; then the lexer>",
        Duration::from_secs(20),
    );

    let (code, doc, text) = env.doc::<WatchInterrupt>(&["interrupt", "--run", &id, "--json"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(doc.status, Interrupted::Interrupted);
    env.wait_for_label(&id, Label::Interrupted);

    let (code, doc, text) = env.doc::<WatchCancel>(&["cancel", "--run", &id, "--json"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(doc.status, CancelStatus::Confirmed, "{doc:?}");
    assert!(
        !env.herdr.pane_exists(&pane),
        "a confirmed cancel closed the pane"
    );
    assert!(
        env.herdr.pane_exists(&env.parent),
        "the parent's pane stays"
    );
    wait_for(
        "the child to end with its pane",
        Duration::from_secs(20),
        || (!process_alive(pid)).then_some(()),
    );
    let (code, doc, _) = env.wait(&["wait", "--run", &id, "--json"]);
    assert_eq!((code, doc.outcome), (5, Outcome::Cancelled));
}

/// Steers run `id` with `message`, a command a shell would run, in each of `modes`, and
/// interrupts it: each answers `conflict` (exit 7) with a reason that holds `why`, and nothing is
/// queued or recorded as an interrupt.
fn refused_every_typed_delivery(env: &Env, id: &str, modes: &[&str], message: &str, why: &str) {
    for &mode in modes {
        let (code, doc, text) = env.doc::<WatchSteer>(&[
            "steer",
            "--run",
            id,
            "--message",
            message,
            "--mode",
            mode,
            "--json",
        ]);
        assert_eq!(
            (code, doc.receipt),
            (7, SteerState::Failed),
            "{mode}: {text}"
        );
        let error = doc.error.expect("the reason");
        assert_eq!(error.code, "conflict", "{mode}: {text}");
        assert!(error.message.contains(why), "{mode}: {text}");
    }
    let (code, doc, text) = env.doc::<ErrorDocument>(&["interrupt", "--run", id, "--json"]);
    assert_eq!((code, doc.error.code), (7, ErrorCode::Conflict), "{text}");
    for file in ["steer.json", "interrupt.json"] {
        assert!(
            !env.art().join(format!("runs/{id}.{file}")).exists(),
            "runs/{id}.{file} was written"
        );
    }
}

/// Types `touch <after>` into `pane`'s shell and waits for the file: the shell reads its input
/// in order, so whatever was typed before it has run by then.
fn shell_has_read_its_input(env: &Env, pane: &str, after: &Path) {
    let command = format!("touch '{}'", after.display());
    env.herdr.ok(["pane", "run", pane, command.as_str()]);
    wait_for(
        "the shell to run the test's own command",
        Duration::from_secs(20),
        || after.exists().then_some(()),
    );
}

#[test]
fn on_herdr_a_child_that_has_ended_is_never_typed_into_and_its_shell_runs_nothing() {
    let Some(env) = Env::start("on_herdr_a_child_that_has_ended_is_never_typed_into") else {
        return;
    };
    let id = env.spawn("Ended", "true");
    let pane = env.pane(&id);
    // No watcher settles it: only its own files and its pane say that it ended, and the pane
    // is back at its interactive shell, which would run what it is given.
    env.herdr
        .wait_for_text(&pane, "__SUBAGENT_DONE_0__", Duration::from_secs(20));
    env.herdr.wait_shell(&pane);
    let marker = env.dir.path().join("typed-into-a-shell");
    let message = format!("touch '{}'", marker.display());
    refused_every_typed_delivery(&env, &id, &["steer", "follow-up"], &message, "has ended");
    shell_has_read_its_input(&env, &pane, &env.dir.path().join("after"));
    assert!(!marker.exists(), "the steering message ran as a command");
    assert!(
        !env.herdr.read(&pane).contains(&message),
        "{}",
        env.herdr.read(&pane)
    );
}

#[test]
fn on_herdr_a_suspended_child_whose_shell_has_its_pane_is_not_typed_into() {
    let Some(env) = Env::start("on_herdr_a_suspended_child_whose_shell_has_its_pane") else {
        return;
    };
    // The child stops its whole job (as Ctrl+Z would): it is alive, but the pane's shell is in
    // the foreground again and reads what is typed. A confined child cannot stop the launch
    // script around its sandbox (its signals stay inside): this one is unconfined, as its
    // person's configuration says.
    let config = env.dir.path().join("config");
    std::fs::create_dir_all(config.join("herd")).unwrap();
    std::fs::write(
        config.join("herd/config.toml"),
        "[sandbox]\nmode = \"off\"\n",
    )
    .unwrap();
    let (out, ack) = env.try_spawn(
        "Suspended",
        "kill -STOP 0",
        &[("XDG_CONFIG_HOME", config.to_str().unwrap())],
    );
    assert_eq!(ack.status, LaunchStatus::Launched, "{}", out.stderr);
    let id = ack.run_id;
    let pid = env.identity_pid(&id);
    let pane = env.pane(&id);
    env.herdr
        .wait_for_text(&pane, "Stopped", Duration::from_secs(20));
    env.herdr.wait_shell(&pane);
    assert!(process_alive(pid), "a stopped runner is alive");
    let marker = env.dir.path().join("typed-into-a-shell");
    let message = format!("touch '{}'", marker.display());
    // A follow-up is still queued for it (it may be resumed); a watcher types it only once the
    // same proof holds.
    refused_every_typed_delivery(&env, &id, &["steer"], &message, "foreground");
    shell_has_read_its_input(&env, &pane, &env.dir.path().join("after"));
    assert!(!marker.exists(), "the steering message ran as a command");
    signal_pid(pid, libc::SIGKILL);
}

#[test]
fn on_herdr_a_dispatch_leaves_nothing_in_the_childs_input() {
    let Some(env) = Env::start("on_herdr_a_dispatch_leaves_nothing_in_the_childs_input") else {
        return;
    };
    // The child reads one line from its terminal: the first it gets is the steering message,
    // not an empty line left by the dispatch.
    let id = env.spawn(
        "Reader",
        "exec < /dev/tty; IFS= read -r line; printf 'got:%s\\n' \"$line\" > answer.tmp; \
         mv answer.tmp answer.txt; exec sleep 30",
    );
    let pid = env.identity_pid(&id);
    let pane = env.pane(&id);
    wait_for(
        "the child in its pane's foreground",
        Duration::from_secs(20),
        || {
            let info = env.herdr.json(["pane", "process-info", "--pane", &pane]);
            info["process_info"]["foreground_processes"]
                .as_array()?
                .iter()
                .any(|p| p["pid"].as_u64() == Some(u64::from(pid)))
                .then_some(())
        },
    );
    let (code, doc, text) =
        env.doc::<WatchSteer>(&["steer", "--run", &id, "--message", "hello there", "--json"]);
    assert_eq!((code, doc.receipt), (0, SteerState::Delivered), "{text}");
    let answer = env.dir.path().join("answer.txt");
    let got = wait_for("the child's answer", Duration::from_secs(20), || {
        std::fs::read_to_string(&answer).ok()
    });
    assert_eq!(got, "got:hello there\n");
    signal_pid(pid, libc::SIGKILL);
}

/// A child that reports its agent status through Herdr as Pi's Herdr integration does, one
/// state per file the test writes: `working`, then `blocked`, then `idle`, then it ends.
const REPORTER: &str = r#"
report() { "$HERDR_BIN_PATH" pane report-agent "$HERDR_PANE_ID" --source custom:herd --agent herd-worker --state "$1"; }
for state in working blocked idle; do
  while [ ! -e "$state" ]; do sleep 0.05; done
  report "$state"
done
while [ ! -e end ]; do sleep 0.05; done
printf '%s' '{"type":"done"}' > "$PI_SUBAGENT_SESSION.exit"
"#;

#[test]
fn on_herdr_the_agent_status_a_child_reports_drives_status_and_the_widget() {
    let Some(env) = Env::start("on_herdr_the_agent_status_a_child_reports") else {
        return;
    };
    let id = env.spawn("Worker", REPORTER);
    let pane = env.pane(&id);
    env.wait_for_label(&id, Label::Running);
    // A watcher follows the run as the parent's does, recording each status transition.
    let follow = env.follow_in_background();
    std::fs::write(env.dir.path().join("working"), "").unwrap();
    env.wait_for_label(&id, Label::Active);
    let (code, doc, text) = env.doc::<StatusWidget>(&["status", "--widget", "--json"]);
    assert_eq!(code, 0, "{text}");
    let widget = doc.widget.as_str();
    assert!(
        widget.contains("active") && widget.contains("Worker"),
        "{widget}"
    );
    for (file, label) in [("blocked", Label::Blocked), ("idle", Label::Waiting)] {
        std::fs::write(env.dir.path().join(file), "").unwrap();
        env.wait_for_event_label(&id, label);
    }
    // Between turns a follow-up goes out: queued now, typed into the pane by the watcher.
    let (code, doc, text) = env.doc::<WatchSteer>(&[
        "steer",
        "--run",
        &id,
        "--message",
        "now the next step",
        "--mode",
        "follow-up",
        "--json",
    ]);
    assert_eq!((code, doc.receipt), (0, SteerState::Queued), "{text}");
    let request_id = doc.request_id;
    env.herdr
        .wait_for_text(&pane, "now the next step", Duration::from_secs(20));
    // The watcher that typed it turns its receipt `delivered`.
    let ledger = env.art().join(format!("runs/{id}.steering.json"));
    wait_for(
        "the queued request's receipt to say delivered",
        Duration::from_secs(20),
        || {
            let doc: SteeringLedger = serde_json::from_slice(&std::fs::read(&ledger).ok()?).ok()?;
            let receipt = doc.requests.iter().find(|r| r.request_id == request_id)?;
            (receipt.state == SteerState::Delivered && receipt.delivered_at_ms.is_some())
                .then_some(())
        },
    );
    std::fs::write(env.dir.path().join("end"), "").unwrap();
    let (code, doc, text) = env.wait(&["wait", "--run", &id, "--json"]);
    assert_eq!((code, doc.outcome), (0, Outcome::Completed), "{text}");
    let steering = doc.details.steering.as_deref().unwrap_or_default();
    assert_eq!(
        steering.first().map(|r| r.state),
        Some(SteerState::Delivered),
        "{text}"
    );
    assert_eq!(doc.details.undelivered_steering, None, "{text}");
    drop(follow);
    let labels = env.event_labels(&id);
    let at = |label: Label| labels.iter().position(|l| *l == label);
    assert!(
        at(Label::Active) < at(Label::Blocked) && at(Label::Blocked) < at(Label::Waiting),
        "{labels:?}"
    );
}

#[test]
fn on_herdr_a_server_stopped_mid_run_stalls_settles_and_is_not_revived_by_a_restart() {
    let Some(mut env) = Env::start("on_herdr_a_server_stopped_mid_run_stalls_settles") else {
        return;
    };
    let first = env.spawn("Sleeper", "exec sleep 300");
    let second = env.spawn("Dozer", "exec sleep 300");
    let pids = [env.identity_pid(&first), env.identity_pid(&second)];
    env.wait_for_label(&first, Label::Running);
    env.herdr.stop();
    for pid in pids {
        wait_for(
            "the server stop to end the child",
            Duration::from_secs(20),
            || (!process_alive(pid)).then_some(()),
        );
    }
    // Herdr does not answer and the runner is gone: stalled, not `starting` or `running`.
    for id in [&first, &second] {
        let row = env.status(id);
        assert_eq!(row.label, Label::Stalled, "{row:?}");
    }
    let (code, doc, text) = env.doc::<StatusWidget>(&["status", "--widget", "--json"]);
    assert_eq!(code, 0, "{text}");
    // Its rows come in the runs directory's order, which is not fixed: sorted for the snapshot.
    let mut lines: Vec<&str> = doc.widget.lines().collect();
    let rows = 1..lines.len().saturating_sub(1);
    lines[rows].sort_unstable();
    insta::assert_snapshot!("stalled_widget", redact(env.dir.path(), &lines.join("\n")));
    // `follow` says so once and settles the run: nothing waits forever.
    let (_, _, text, _) = env.watch(&["follow", "--json"]);
    let events: Vec<WatchEvent> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    for id in [&first, &second] {
        let stalled = events
            .iter()
            .filter(|e| matches!(e, WatchEvent::Stalled { run_id, .. } if run_id == id))
            .count();
        let results = events
            .iter()
            .filter(|e| matches!(e, WatchEvent::Result { run_id, .. } if run_id == id))
            .count();
        assert_eq!((stalled, results), (1, 1), "{events:#?}");
    }
    let (code, doc, _) = env.wait(&["wait", "--run", &first, "--json"]);
    assert_ne!(code, 0);
    assert_eq!(doc.outcome, Outcome::Failed, "{doc:?}");

    // The layout comes back with fresh shells under the same pane ids: none of them is a run.
    env.herdr.restart();
    let pane = env.pane(&second);
    assert!(env.herdr.pane_exists(&pane), "Herdr restores the pane id");
    let (_, doc, text) = env.doc::<StatusRuns>(&["status", "--json"]);
    for row in &doc.runs {
        assert_eq!(row.label, Label::Failed, "{row:?}\n{text}");
    }
}

#[test]
fn on_herdr_a_restart_before_anyone_looked_is_not_taken_for_the_run() {
    let Some(mut env) = Env::start("on_herdr_a_restart_before_anyone_looked") else {
        return;
    };
    let id = env.spawn("Sleeper", "exec sleep 300");
    let pid = env.identity_pid(&id);
    let pane = env.pane(&id);
    env.herdr.restart();
    assert!(!process_alive(pid), "the stop ended the child");
    assert!(env.herdr.pane_exists(&pane), "Herdr restores the pane id");
    // The pane id answers with a fresh shell and the runner is gone: the run is lost.
    let row = env.status(&id);
    assert_eq!(
        row.label,
        Label::Stalled,
        "{row:?}\n{:?}\n{:?}",
        env.record(&id),
        env.herdr.pane(&pane)
    );
    let (code, doc, text) = env.wait(&["wait", "--run", &id, "--json"]);
    assert_ne!(code, 0, "{text}");
    assert_eq!(doc.outcome, Outcome::Failed, "{doc:?}");
    // The fresh shell was not the run's: herd leaves it open.
    assert!(env.herdr.pane_exists(&pane));
}

#[test]
fn on_herdr_a_pane_closed_by_the_user_stalls_then_fails() {
    let Some(env) = Env::start("on_herdr_a_pane_closed_by_the_user") else {
        return;
    };
    let id = env.spawn("Vanisher", "exec sleep 300");
    let pid = env.identity_pid(&id);
    let pane = env.pane(&id);
    env.herdr.json(["pane", "close", &pane]);
    let (_, _, text, _) = env.watch(&["follow", "--json"]);
    let events: Vec<WatchEvent> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let stalled = events
        .iter()
        .filter(|e| matches!(e, WatchEvent::Stalled { .. }))
        .count();
    assert_eq!(stalled, 1, "{events:#?}");
    let (outcome, message) = events
        .iter()
        .find_map(|e| match e {
            WatchEvent::Result {
                outcome, message, ..
            } => Some((*outcome, message)),
            _ => None,
        })
        .expect("a result");
    assert_eq!(outcome, Outcome::Failed, "{message}");
    assert!(message.contains("pane disappeared"), "{message}");
    if process_alive(pid) {
        signal_pid(pid, libc::SIGKILL);
    }
}

#[test]
fn on_herdr_a_hung_server_costs_one_status_budget_not_one_per_run() {
    let Some(env) = Env::start("on_herdr_a_hung_server_costs_one_status_budget") else {
        return;
    };
    let ids: Vec<String> = (0..4)
        .map(|n| env.spawn(&format!("Sleeper{n}"), "exec sleep 300"))
        .collect();
    for id in &ids {
        env.wait_for_label(id, Label::Running);
    }
    env.herdr.hang();
    let (code, doc, text, took) = env.watch(&["status", "--json"]);
    let (wcode, _, wtext, wtook) = env.watch(&["status", "--widget", "--json"]);
    env.herdr.resume();
    assert_eq!(code, 0, "{text}");
    assert_eq!(wcode, 0, "{wtext}");
    // One presence budget (2 s) for the whole status, however many runs it shows.
    assert!(took < Duration::from_secs(5), "status took {took:?}");
    assert!(wtook < Duration::from_secs(5), "the widget took {wtook:?}");
    let doc: StatusRuns = serde_json::from_value(doc).unwrap();
    for row in &doc.runs {
        // Nothing answered, so nothing is claimed beyond what the files say.
        assert!(
            !matches!(row.label, Label::Running | Label::Active),
            "{row:?}"
        );
    }
    // Once Herdr answers again, so does status.
    for id in &ids {
        env.wait_for_label(id, Label::Running);
    }
}

/// A persistent specialist (docs/protocol.md, "A persistent specialist's files"): it reports its
/// first task, then waits for its
/// inbox; a stop ends it.
const SPECIALIST: &str = r#"
s="$PI_SUBAGENT_SESSION"
printf '{"version":1,"type":"task-done","task":"%s","generation":"%s","at":"t","message":"first task done"}\n' "$PI_SUBAGENT_TASK_ID" "$PI_SUBAGENT_GENERATION_ID" >> "$s.tasks"
while :; do
  for f in "$s".task-inbox.*.json; do
    [ -e "$f" ] || continue
    body=$(cat "$f"); rm -f "$f"
    case "$body" in *'"type":"stop"'*) printf '{"type":"done"}' > "$s.exit"; exit 0;; esac
  done
  sleep 0.05
done
"#;

#[test]
fn on_herdr_a_persistent_specialist_stops_and_its_pane_closes() {
    let Some(env) = Env::start("on_herdr_a_persistent_specialist_stops") else {
        return;
    };
    let request = serde_json::json!({"name": "Specialist", "task": "first", "persistent": true});
    let (_, ack) = env.try_launch(&request, SPECIALIST, &[]);
    assert_eq!(ack.status, LaunchStatus::Launched, "{ack:?}");
    let id = ack.run_id;
    let pid = env.identity_pid(&id);
    let pane = env.pane(&id);
    let tasks = format!("{}.tasks", env.record(&id).session_file);
    wait_for("the first task's answer", Duration::from_secs(20), || {
        std::fs::read_to_string(&tasks)
            .ok()?
            .contains("first task done")
            .then_some(())
    });
    let (code, doc, text) = env.doc::<WatchStop>(&["stop", "--run", &id, "--json"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(doc.status, StopStatus::Stopped, "{doc:?}");
    assert!(!process_alive(pid));
    let (code, _, text, _) = env.watch(&["follow", "--json"]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("\"event\":\"result\""), "{text}");
    wait_for(
        "the stopped specialist's pane to close",
        Duration::from_secs(20),
        || (!env.herdr.pane_exists(&pane)).then_some(()),
    );
}

#[test]
fn on_herdr_a_dispatch_herdr_does_not_answer_is_uncertain_and_never_retried() {
    let Some(env) = Env::start("on_herdr_a_dispatch_herdr_does_not_answer") else {
        return;
    };
    // The real Herdr types the script, then its answer never comes within the budget.
    let wrapper = env.dir.path().join("herdr-slow-run");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\ncase \"$1 $2\" in \"pane run\") '{}' \"$@\"; exec sleep 60;; esac\nexec '{}' \"$@\"\n",
            env.herdr.bin().display(),
            env.herdr.bin().display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let started = Instant::now();
    let (out, ack) = env.try_spawn(
        "Once",
        "echo ran >> runs.log",
        &[("HERD_HERDR_BIN", wrapper.to_str().unwrap())],
    );
    assert_eq!(out.code, 3, "{ack:?}\n{}", out.stderr);
    assert_eq!(ack.status, LaunchStatus::Uncertain, "{ack:?}");
    assert!(
        started.elapsed() < Duration::from_secs(45),
        "{:?}",
        started.elapsed()
    );
    let id = ack.run_id;
    // The owner stays supervised and the child it did start completes, once.
    let (code, doc, text) = env.wait(&["wait", "--run", &id, "--json"]);
    assert_eq!((code, doc.outcome), (0, Outcome::Completed), "{text}");
    let log = std::fs::read_to_string(env.dir.path().join("runs.log")).unwrap();
    assert_eq!(log, "ran\n", "the script ran once: nothing was retried");
}
