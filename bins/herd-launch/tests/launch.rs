//! `herd-launch` as its users run it: real processes on the process and tmux surfaces, with the
//! exec runner and a test child that follows the on-disk protocol (`tests/support/child.sh`), and
//! a stand-in Pi (`tests/support/fake-pi.sh`) for the Pi runner's command line.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test on any error"
)]

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use herd_e2e::cli::Run;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_herd-launch");

fn support(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/support")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// A scratch home, an artifacts directory and a working directory for one test.
struct Env {
    dir: tempfile::TempDir,
    vars: Vec<(String, String)>,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["home", "work", "art"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let vars = vec![
            ("PATH".to_owned(), std::env::var("PATH").unwrap_or_default()),
            (
                "HOME".to_owned(),
                dir.path().join("home").to_string_lossy().into_owned(),
            ),
            (
                "HERD_ARTIFACTS".to_owned(),
                dir.path().join("art").to_string_lossy().into_owned(),
            ),
        ];
        Env { dir, vars }
    }

    /// An environment whose agent directory holds the role `name` (`text`, frontmatter and
    /// body) and whose Pi is the stand-in.
    fn with_role(name: &str, text: &str) -> Env {
        let mut env = Env::new();
        let agent_dir = env.dir.path().join("agent");
        std::fs::create_dir_all(agent_dir.join("agents")).unwrap();
        std::fs::write(agent_dir.join(format!("agents/{name}.md")), text).unwrap();
        env.set("PI_CODING_AGENT_DIR", agent_dir.to_string_lossy());
        env.set("HERD_PI", support("fake-pi.sh"));
        env
    }

    fn set(&mut self, key: &str, value: impl Into<String>) {
        self.vars.retain(|(k, _)| k != key);
        self.vars.push((key.to_owned(), value.into()));
    }

    fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    fn art(&self) -> PathBuf {
        self.dir.path().join("art")
    }

    fn run(&self, args: &[&str], request: &Value) -> Run {
        // A command that does not read its stdin (send, resume) may have closed it already.
        let mut cmd = herd_e2e::cli::command(BIN)
            .args(args.iter().copied())
            .env_clear()
            .cwd(self.work())
            .stdin_bytes(request.to_string());
        for (k, v) in &self.vars {
            cmd = cmd.env(k, v);
        }
        herd_e2e::cli::run(&cmd)
    }

    /// `herd-launch spawn --request - --json` with the exec runner running the test child.
    fn spawn_exec(&self, surface: &str, request: &Value, child_args: &[&str]) -> Run {
        let child = support("child.sh");
        let mut args = vec![
            "spawn",
            "--request",
            "-",
            "--json",
            "--surface",
            surface,
            "--runner",
            "exec",
            "--",
            "sh",
            &child,
        ];
        args.extend_from_slice(child_args);
        self.run(&args, request)
    }

    fn record(&self, run_id: &str) -> Value {
        serde_json::from_slice(
            &std::fs::read(self.art().join("runs").join(format!("{run_id}.json"))).unwrap(),
        )
        .unwrap()
    }

    fn run_ids(&self) -> Vec<String> {
        match std::fs::read_dir(self.art().join("runs")) {
            Ok(dir) => dir
                .filter_map(|e| {
                    e.ok()?
                        .file_name()
                        .to_str()?
                        .strip_suffix(".json")
                        .map(str::to_owned)
                })
                .filter(|n| !n.contains('.'))
                .collect(),
            Err(_) => Vec::new(),
        }
    }
}

fn eventually<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn read(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn exit_code(env: &Env, run_id: &str) -> i32 {
    let file = env
        .art()
        .join("runs")
        .join(format!("{run_id}.runner-exit.json"));
    let value: Value = eventually("the runner's exit", || {
        serde_json::from_str(&read(&file)?).ok()
    });
    value["exit_code"].as_i64().unwrap() as i32
}

fn stat_start_time(pid: u32) -> String {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    after.split(' ').nth(19).unwrap().to_owned()
}

#[test]
fn process_launch_records_everything_and_the_identity_is_the_runners_own() {
    let mut env = Env::new();
    env.set("HERDR_PANE_ID", "w1:p1");
    env.set("HERDR_TAB_ID", "w1:t1");
    env.set("HERDR_WORKSPACE_ID", "w1");
    let request = serde_json::json!({
        "name": "Echo child",
        "task": "say hi",
        "systemPrompt": "be brief",
        "accept": {"run": "echo SECRET-CHECK-COMMAND", "paths": ["tests"]},
    });
    let run = env.spawn_exec(
        "process",
        &request,
        &["--wait", "release", "--done", "--exit", "3"],
    );
    assert_eq!(run.code, 0, "{run}");
    let ack = &run.json();
    assert_eq!(ack["status"], "launched");
    assert_eq!(ack["surface"], "process");
    assert_eq!(ack["runner"], "exec");
    assert_eq!(ack["name"], "Echo child");
    assert!(ack.get("pane_id").is_none());
    let run_id = ack["run_id"].as_str().unwrap();
    assert_eq!(run_id.len(), 8);
    let session = PathBuf::from(ack["session_file"].as_str().unwrap());
    assert_eq!(env.record(run_id)["status"], "launched");

    // The identity record is the runner's own PID and kernel start time.
    let pid: u32 = eventually("the child's pid", || {
        read(env.work().join("child.pid"))?.trim().parse().ok()
    });
    let identity: Value = eventually("the identity record", || {
        serde_json::from_str(&read(format!("{}.process.json", session.display()))?).ok()
    });
    assert_eq!(identity["pid"].as_u64(), Some(u64::from(pid)));
    assert_eq!(
        identity["startTime"].as_str().unwrap(),
        stat_start_time(pid)
    );
    assert_eq!(identity["id"], run_id);
    assert_eq!(
        identity["sessionFile"].as_str().unwrap(),
        session.to_str().unwrap()
    );

    // The child's environment (protocol.md §1.1), and no Herdr pane identity of the parent.
    let child_env = eventually("the child's environment", || {
        read(env.work().join("child.env"))
    });
    let accept_file = env.art().join("accept").join(format!("{run_id}.json"));
    for expected in [
        format!("PI_SUBAGENT_ID={run_id}"),
        format!("PI_HERDR_AGENTS_SESSION={}", session.display()),
        format!("PI_SUBAGENT_SESSION={}", session.display()),
        "PI_SUBAGENT_NAME=Echo child".to_owned(),
        "PI_SUBAGENT_AUTO_EXIT=1".to_owned(),
        format!(
            "PI_SUBAGENT_ACTIVITY_FILE={}",
            env.art()
                .join("subagent-activity")
                .join(format!("{run_id}.json"))
                .display()
        ),
        format!(
            "PI_SUBAGENT_PROCESS_FILE={}.process.json",
            session.display()
        ),
        format!("PI_SUBAGENT_ACCEPT_FILE={}", accept_file.display()),
    ] {
        assert!(
            child_env.lines().any(|l| l == expected),
            "missing {expected:?} in\n{child_env}"
        );
    }
    assert!(
        !child_env.contains("HERDR_PANE_ID") && !child_env.contains("HERDR_TAB_ID"),
        "{child_env}"
    );
    assert!(!child_env.contains("HERDR_WORKSPACE_ID"), "{child_env}");

    // The accept command is only in the spec file (mode 0600), never in the script, argv or env.
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&accept_file)
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
    assert!(read(&accept_file).unwrap().contains("SECRET-CHECK-COMMAND"));
    let script = read(
        env.record(run_id)["extra"]["launch_script"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert!(!script.contains("SECRET-CHECK-COMMAND"));
    assert!(!child_env.contains("SECRET-CHECK-COMMAND"));
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    assert!(!String::from_utf8_lossy(&cmdline).contains("SECRET-CHECK-COMMAND"));

    // The prompt arrived on stdin: the system prompt and the task.
    // The child may still be copying its stdin when its environment is there.
    let expected = "<System instructions>\nbe brief\n\n<Task>\nsay hi\n";
    let stdin = eventually("the child's stdin", || {
        read(env.work().join("child.stdin")).filter(|text| text == expected)
    });
    assert_eq!(stdin, expected);

    // The child finishes: its sidecar, its status, its logs with the sentinel.
    std::fs::write(env.work().join("release"), "").unwrap();
    assert_eq!(exit_code(&env, run_id), 3);
    assert_eq!(
        read(format!("{}.exit", session.display())).unwrap(),
        "{\"type\":\"done\"}\n"
    );
    let out = eventually("the sentinel", || {
        read(env.art().join("logs").join(format!("{run_id}.out")))
            .filter(|o| o.contains("__SUBAGENT_DONE_3__"))
    });
    assert!(out.contains(&format!("child {run_id} finished")), "{out}");
    let activity: Value = serde_json::from_str(
        &read(
            env.art()
                .join("subagent-activity")
                .join(format!("{run_id}.json")),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(activity["phase"], "done");
}

#[test]
fn every_request_rule_is_refused_before_anything_is_created() {
    let mut env = Env::new();
    env.set("HERD_PI", support("fake-pi.sh"));
    let base = || serde_json::json!({"name": "worker", "task": "do it"});
    let with = |key: &str, value: Value| {
        let mut r = base();
        r[key] = value;
        r
    };
    let without = |key: &str| {
        let mut r = base();
        r.as_object_mut().unwrap().remove(key);
        r
    };
    let pi = ["spawn", "--request", "-", "--json", "--surface", "process"];
    let cases: Vec<(&str, Value, &str)> = vec![
        ("unknown field", with("colour", "blue".into()), "colour"),
        ("name missing", without("name"), "name"),
        ("task missing", without("task"), "task"),
        ("name wrong type", with("name", 7.into()), "name"),
        (
            "name not a usable label",
            with("name", "bad\nname".into()),
            "name",
        ),
        ("name empty", with("name", "".into()), "name"),
        ("task only whitespace", with("task", "   ".into()), "task"),
        (
            "thinking out of range",
            with("thinking", "extreme".into()),
            "thinking",
        ),
        (
            "persistent wrong type",
            with("persistent", "yes".into()),
            "persistent",
        ),
        (
            "worktree without branch",
            with("worktree", serde_json::json!({"base": "main"})),
            "worktree.branch",
        ),
        (
            "worktree unknown field",
            with("worktree", serde_json::json!({"branch": "b", "x": 1})),
            "worktree.x",
        ),
        (
            "branch starting with a dash",
            with("worktree", serde_json::json!({"branch": "-b"})),
            "worktree.branch",
        ),
        (
            "accept without run",
            with("accept", serde_json::json!({"maxRetries": 1})),
            "accept.run",
        ),
        (
            "accept retries out of range",
            with(
                "accept",
                serde_json::json!({"run": "true", "maxRetries": 6}),
            ),
            "accept.maxRetries",
        ),
        (
            "accept timeout out of range",
            with(
                "accept",
                serde_json::json!({"run": "true", "timeoutSec": 3601}),
            ),
            "accept.timeoutSec",
        ),
        (
            "accept unknown field",
            with("accept", serde_json::json!({"run": "true", "when": "now"})),
            "accept.when",
        ),
        (
            "accept for a persistent child",
            serde_json::json!({"name": "w", "task": "t", "persistent": true, "accept": {"run": "true"}}),
            "accept",
        ),
        (
            "fallback list for a worktree",
            serde_json::json!({"name": "w", "task": "t", "model": "a/b,c/d", "worktree": {"branch": "x"}}),
            "model",
        ),
        (
            "task: prefix not the whole value",
            with("model", "a/b,task:coding".into()),
            "model",
        ),
        (
            "cwd that is not a directory",
            with("cwd", "does/not/exist".into()),
            "cwd",
        ),
        ("unknown role", with("agent", "nobody".into()), "agent"),
        (
            "fork without a parent session",
            with("fork", true.into()),
            "fork",
        ),
        (
            "task category without candidates",
            with("model", "task:coding".into()),
            "model",
        ),
    ];
    for (rule, request, field) in cases {
        let run = env.run(&pi, &request);
        assert_eq!(run.code, 2, "{rule}: {run}");
        assert_eq!(
            run.json()["error"]["code"],
            "invalid_request",
            "{rule}: {}",
            run.json()
        );
        assert_eq!(run.json()["error"]["field"], field, "{rule}: {run}");
    }
    // The exec runner's own rules.
    let exec = [
        "spawn",
        "--request",
        "-",
        "--json",
        "--surface",
        "process",
        "--runner",
        "exec",
    ];
    let run = env.run(&exec, &base());
    assert_eq!(
        (run.code, run.json()["error"]["field"].as_str()),
        (2, Some("argv")),
        "{}",
        run.json()
    );
    let mut args = exec.to_vec();
    args.extend(["--", "true"]);
    for field in ["model", "thinking", "tools", "skills"] {
        let run = env.run(&args, &with(field, "x".into()));
        assert_eq!(
            (run.code, run.json()["error"]["field"].as_str()),
            (2, Some(field)),
            "{}",
            run.json()
        );
    }
    let run = env.run(
        &[
            "spawn",
            "--request",
            "-",
            "--json",
            "--runner",
            "pi",
            "--",
            "true",
        ],
        &base(),
    );
    assert_eq!(
        (run.code, run.json()["error"]["field"].as_str()),
        (2, Some("argv")),
        "{}",
        run.json()
    );
    assert!(
        env.run_ids().is_empty(),
        "nothing was created: {:?}",
        env.run_ids()
    );
    assert!(!env.art().join("subagent-scripts").exists());
}

#[test]
fn accept_is_refused_for_a_role_that_does_not_exit_by_itself() {
    let env = Env::with_role("planner", "---\ninteractive: true\n---\nYou plan.\n");
    let request = serde_json::json!({"name": "p", "task": "t", "agent": "planner", "accept": {"run": "true"}});
    let run = env.run(
        &["spawn", "--request", "-", "--json", "--surface", "tmux"],
        &request,
    );
    assert_eq!(
        (run.code, run.json()["error"]["field"].as_str()),
        (2, Some("accept")),
        "{}",
        run.json()
    );
    // The same role without accept is an interactive child: it needs a terminal.
    let request = serde_json::json!({"name": "p", "task": "t", "agent": "planner"});
    let run = env.run(
        &["spawn", "--request", "-", "--json", "--surface", "process"],
        &request,
    );
    assert_eq!(
        (run.code, run.json()["error"]["field"].as_str()),
        (2, Some("surface")),
        "{}",
        run.json()
    );
    assert!(env.run_ids().is_empty());
}

#[test]
fn twenty_concurrent_spawns_collide_in_nothing() {
    let env = Env::new();
    let runs: Vec<Run> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..20)
            .map(|_| {
                let env = &env;
                scope.spawn(move || {
                    env.spawn_exec(
                        "process",
                        &serde_json::json!({"name": "Same Name", "task": "t"}),
                        &["--exit", "0"],
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut ids = HashSet::new();
    let mut sessions = HashSet::new();
    let mut scripts = HashSet::new();
    for run in &runs {
        assert_eq!(run.code, 0, "{run}");
        let id = run.json()["run_id"].as_str().unwrap().to_owned();
        let record = env.record(&id);
        assert!(ids.insert(id.clone()));
        assert!(sessions.insert(record["session_file"].as_str().unwrap().to_owned()));
        assert!(
            scripts.insert(
                record["extra"]["launch_script"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            )
        );
        assert_eq!(exit_code(&env, &id), 0);
    }
    assert_eq!(ids.len(), 20);
    assert_eq!(env.run_ids().len(), 20);
}

/// The test kit's private tmux server with one session, whose first pane the test runs
/// "inside" (`TMUX`, `TMUX_PANE`).
struct Tmux {
    server: herd_e2e::tmux::Tmux,
    socket: PathBuf,
    pane: String,
}

impl Tmux {
    fn start(dir: &Path) -> Tmux {
        let vars: Vec<(std::ffi::OsString, std::ffi::OsString)> = ["PATH", "HOME"]
            .into_iter()
            .filter_map(|k| Some((k.into(), std::env::var_os(k)?)))
            .collect();
        let server = herd_e2e::tmux::Tmux::start(&vars);
        let pane = server.new_session("t", dir, &["sh".into()]);
        let socket = server.socket_path();
        Tmux {
            server,
            socket,
            pane,
        }
    }

    fn pid(&self) -> u32 {
        self.server.pid()
    }

    fn capture(&self, pane: &str) -> String {
        self.server
            .cmd(["capture-pane", "-p", "-S", "-50", "-t", pane])
    }

    fn inside(&self, env: &mut Env) {
        env.set(
            "TMUX",
            format!("{},{},0", self.socket.display(), self.pid()),
        );
        env.set("TMUX_PANE", self.pane.clone());
    }
}

#[test]
fn tmux_launch_places_a_pane_that_keeps_its_sentinel() {
    let mut env = Env::new();
    let tmux = Tmux::start(env.dir.path());
    tmux.inside(&mut env);
    let run = env.spawn_exec(
        "auto",
        &serde_json::json!({"name": "pane child", "task": "t"}),
        &["--done", "--exit", "4"],
    );
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(run.json()["surface"], "tmux");
    let pane = run.json()["pane_id"].as_str().unwrap().to_owned();
    assert!(pane.starts_with('%') && pane != tmux.pane, "{pane}");
    let run_doc = run.json();
    let run_id = run_doc["run_id"].as_str().unwrap();
    let record = env.record(run_id);
    assert_eq!(
        record["pane"]["socket"].as_str().unwrap(),
        tmux.socket.to_str().unwrap()
    );
    assert_eq!(
        record["pane"]["server_pid"].as_i64(),
        Some(i64::from(tmux.pid()))
    );
    assert_eq!(exit_code(&env, run_id), 4);
    eventually("the sentinel on the pane", || {
        tmux.capture(&pane)
            .contains("__SUBAGENT_DONE_4__")
            .then_some(())
    });
    let child_env = read(env.work().join("child.env")).unwrap();
    assert!(
        child_env
            .lines()
            .any(|l| l == format!("PI_SUBAGENT_SURFACE={pane}")),
        "{child_env}"
    );
    // The exec runner's output is logged in full on a pane surface too.
    let out = read(env.art().join("logs").join(format!("{run_id}.out"))).unwrap();
    assert!(out.contains("working"), "{out}");
}

impl Tmux {
    /// `format` of `target`, as tmux expands it.
    fn show(&self, target: &str, format: &str) -> String {
        self.server
            .cmd(["display-message", "-p", "-t", target, format])
    }
}

#[test]
fn eight_tmux_children_share_one_herd_window_and_the_parent_keeps_its_pane() {
    let mut env = Env::new();
    let tmux = Tmux::start(env.dir.path());
    tmux.inside(&mut env);
    tmux.server
        .cmd(["resize-window", "-t", &tmux.pane, "-x", "160", "-y", "45"]);
    let parent = |format: &str| tmux.show(&tmux.pane, format);
    let before = parent("#{pane_width}x#{pane_height}");
    assert_eq!(before, "160x45");
    let parent_window = parent("#{window_id}");
    let mut windows = HashSet::new();
    for i in 0..8 {
        let run = env.spawn_exec(
            "tmux",
            &serde_json::json!({"name": format!("c{i}"), "task": "t"}),
            &["--hang"],
        );
        assert_eq!(run.code, 0, "{run}");
        let pane = run.json()["pane_id"].as_str().unwrap().to_owned();
        let window = tmux.show(&pane, "#{window_id}");
        let record = env.record(run.json()["run_id"].as_str().unwrap());
        assert_eq!(record["pane"]["tab_id"].as_str(), Some(window.as_str()));
        windows.insert(window);
        // The parent's pane keeps its size, its window stays in front and the focus stays in it.
        assert_eq!(
            parent("#{pane_width}x#{pane_height}"),
            before,
            "after child {i}"
        );
        assert_eq!(
            parent("#{window_active}#{pane_active}"),
            "11",
            "after child {i}"
        );
    }
    assert_eq!(windows.len(), 1, "one herd window: {windows:?}");
    let window = windows.into_iter().next().unwrap();
    assert_ne!(window, parent_window);
    assert_eq!(
        tmux.show(&window, "#{window_name} #{window_panes}"),
        "herd 8"
    );
    let art = std::fs::canonicalize(env.art()).unwrap();
    assert_eq!(tmux.show(&window, "#{@herd-parent}"), art.to_string_lossy());
    // Tiled: eight panes of a 160 x 45 window in three columns and three rows.
    let sizes = tmux.server.cmd([
        "list-panes",
        "-t",
        &window,
        "-F",
        "#{pane_width}x#{pane_height}",
    ]);
    for size in sizes.lines() {
        let (w, h) = size.split_once('x').unwrap();
        let (w, h): (u32, u32) = (w.parse().unwrap(), h.parse().unwrap());
        assert!(w >= 50 && h >= 13, "a tiled pane is {size}: {sizes}");
    }
}

#[test]
fn tmux_children_of_two_parents_get_a_herd_window_each() {
    let mut env = Env::new();
    let tmux = Tmux::start(env.dir.path());
    tmux.inside(&mut env);
    let request = serde_json::json!({"name": "c", "task": "t"});
    let window_of = |env: &Env| {
        let run = env.spawn_exec("tmux", &request, &["--hang"]);
        assert_eq!(run.code, 0, "{run}");
        tmux.show(run.json()["pane_id"].as_str().unwrap(), "#{window_id}")
    };
    let first = window_of(&env);
    assert_eq!(window_of(&env), first);
    let other = env.dir.path().join("other-art");
    env.set("HERD_ARTIFACTS", other.to_string_lossy());
    assert_ne!(window_of(&env), first);
}

#[test]
fn a_grouped_tmux_placement_is_two_client_calls_and_marks_its_window_where_tmux_puts_it() {
    let mut env = Env::new();
    let tmux = Tmux::start(env.dir.path());
    tmux.inside(&mut env);
    // New windows count from 1 here, and index 2 is taken: the first free one is 1.
    tmux.server.cmd(["set-option", "-g", "base-index", "1"]);
    tmux.server.cmd(["new-window", "-d", "-t", "t:2", "sh"]);
    let log = env.dir.path().join("tmux-calls.log");
    let logged = env.dir.path().join("tmux-logged");
    std::fs::write(
        &logged,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nexec tmux \"$@\"\n",
            log.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&logged, std::fs::Permissions::from_mode(0o755)).unwrap();
    env.set("HERD_TMUX", logged.to_string_lossy());
    // The launch's own calls; the pane's script makes one of its own (its title, remain-on-exit).
    let placement_calls = || {
        read(&log)
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.contains("remain-on-exit"))
            .count()
    };
    let mut window = None;
    for i in 0..3 {
        let run = env.spawn_exec(
            "tmux",
            &serde_json::json!({"name": format!("c{i}"), "task": "t"}),
            &["--hang"],
        );
        assert_eq!(run.code, 0, "{run}");
        assert_eq!(placement_calls(), 2 * (i + 1), "{}", read(&log).unwrap());
        let pane = run.json()["pane_id"].as_str().unwrap().to_owned();
        let placed = tmux.show(&pane, "#{window_id}");
        assert_eq!(*window.get_or_insert_with(|| placed.clone()), placed);
    }
    let window = window.unwrap();
    assert_eq!(
        tmux.show(
            &window,
            "#{window_index} #{window_name} #{window_panes} #{pane-border-status}"
        ),
        "1 herd 3 top"
    );
    let art = std::fs::canonicalize(env.art()).unwrap();
    assert_eq!(tmux.show(&window, "#{@herd-parent}"), art.to_string_lossy());
    // The caller's window stays in front.
    assert_eq!(
        tmux.show(&tmux.pane, "#{window_active}#{pane_active}"),
        "11"
    );
}

#[test]
fn tmux_placement_split_puts_the_child_beside_the_parent() {
    let mut env = Env::new();
    let tmux = Tmux::start(env.dir.path());
    tmux.inside(&mut env);
    env.set("HERD_TMUX_PLACEMENT", "split");
    let run = env.spawn_exec(
        "tmux",
        &serde_json::json!({"name": "beside", "task": "t"}),
        &["--hang"],
    );
    assert_eq!(run.code, 0, "{run}");
    let pane = run.json()["pane_id"].as_str().unwrap().to_owned();
    assert_eq!(
        tmux.show(&pane, "#{window_id}"),
        tmux.show(&tmux.pane, "#{window_id}")
    );

    // Any other value is a usage error, and nothing is launched.
    env.set("HERD_TMUX_PLACEMENT", "beside");
    let run = env.spawn_exec(
        "tmux",
        &serde_json::json!({"name": "nowhere", "task": "t"}),
        &["--hang"],
    );
    assert_eq!(run.code, 2, "{run}");
    assert_eq!(run.json()["error"]["field"], "HERD_TMUX_PLACEMENT");
    assert_eq!(env.run_ids().len(), 1);
}

#[test]
fn twenty_concurrent_tmux_spawns_get_their_own_panes() {
    let mut env = Env::new();
    let tmux = Tmux::start(env.dir.path());
    tmux.inside(&mut env);
    let runs: Vec<Run> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..20)
            .map(|i| {
                let env = &env;
                scope.spawn(move || {
                    env.spawn_exec(
                        "tmux",
                        &serde_json::json!({"name": format!("c{i}"), "task": "t"}),
                        &["--exit", "0"],
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut panes = HashSet::new();
    let mut windows = HashSet::new();
    for run in &runs {
        assert_eq!(run.code, 0, "{run}");
        let pane = run.json()["pane_id"].as_str().unwrap().to_owned();
        windows.insert(tmux.show(&pane, "#{window_id}"));
        assert!(panes.insert(pane));
    }
    assert_eq!(panes.len(), 20);
    // They took turns: the first made the parent's herd window, every other found it (twenty
    // tiled panes of 160 x 48 still have 39 x 8 cells each).
    assert_eq!(windows.len(), 1, "{windows:?}");
}

#[test]
fn a_hanging_tmux_is_an_uncertain_launch_within_the_budget() {
    let mut env = Env::new();
    let fake = env.dir.path().join("tmux");
    // A server with no windows yet, whose placement of the first one never answers. (A query that
    // hangs creates nothing: that launch fails definitely.)
    std::fs::write(
        &fake,
        "#!/bin/sh\ncase \"$*\" in *list-windows*) echo 'no server running on sock' >&2; exit 1;; esac\nexec sleep 60\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    env.set("HERD_TMUX", fake.to_string_lossy());
    env.set(
        "HERD_TMUX_SOCKET",
        env.dir.path().join("sock").to_string_lossy(),
    );
    env.set("HERD_LAUNCH_BUDGET_MS", "1500");
    let started = Instant::now();
    let run = env.spawn_exec("tmux", &serde_json::json!({"name": "w", "task": "t"}), &[]);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(run.code, 3, "{run}");
    assert_eq!(run.json()["status"], "uncertain");
    let run_doc = run.json();
    let failure = run_doc["launch_failure"].as_str().unwrap();
    assert!(failure.contains("did not answer"), "{run}");
    assert!(
        failure.starts_with("pane placement (its budget is 1500 ms): "),
        "the failure names the operation and its budget: {}",
        run.json()
    );
    assert_eq!(
        env.record(run.json()["run_id"].as_str().unwrap())["status"],
        "uncertain"
    );
}

#[test]
fn a_definite_failure_tries_the_next_model_and_reports_every_attempt() {
    let mut env = Env::new();
    // A tmux that refuses every placement: nothing is created, so the next model may be tried.
    let fake = env.dir.path().join("tmux");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'no space for new pane' >&2\nexit 1\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    env.set("HERD_TMUX", fake.to_string_lossy());
    env.set(
        "HERD_TMUX_SOCKET",
        env.dir.path().join("sock").to_string_lossy(),
    );
    env.set("HERD_PI", support("fake-pi.sh"));
    let request = serde_json::json!({"name": "w", "task": "t", "model": "p/one,p/two"});
    let run = env.run(
        &["spawn", "--request", "-", "--json", "--surface", "tmux"],
        &request,
    );
    assert_eq!(run.code, 4, "{run}");
    assert_eq!(run.json()["status"], "failed");
    assert_eq!(run.json()["model"], "p/two");
    assert_eq!(run.json()["failed_attempts"][0]["model"], "p/one");
    assert!(
        run.json()["launch_failure"]
            .as_str()
            .unwrap()
            .contains("no space for new pane"),
        "{}",
        run.json()
    );
    let run_doc = run.json();
    let first = run_doc["failed_attempts"][0]["run_id"].as_str().unwrap();
    assert_eq!(env.record(first)["status"], "failed");
    assert_eq!(env.run_ids().len(), 2, "each attempt is a run of its own");
}

#[test]
fn the_pi_runner_gets_its_session_model_tools_extension_and_task_artifact() {
    let mut env = Env::new();
    let agent_dir = env.dir.path().join("agent");
    let skill = agent_dir.join("skills/search");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: search\n---\nSearch well.\n",
    )
    .unwrap();
    env.set("PI_CODING_AGENT_DIR", agent_dir.to_string_lossy());
    env.set("HERD_PI", support("fake-pi.sh"));
    let request = serde_json::json!({
        "name": "Scout",
        "task": "Find the parser.",
        "systemPrompt": "You are a careful scout.",
        "model": "fake/fast,fake/slow",
        "thinking": "max",
        "tools": "read,bash",
        "skills": "search",
    });
    let run = env.run(
        &["spawn", "--request", "-", "--json", "--surface", "process"],
        &request,
    );
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(run.json()["model"], "fake/fast");
    assert_eq!(
        run.json()["fallback_models"],
        serde_json::json!(["fake/slow"])
    );
    let run_doc = run.json();
    let run_id = run_doc["run_id"].as_str().unwrap();
    let session = run.json()["session_file"].as_str().unwrap().to_owned();
    assert!(
        session.starts_with(agent_dir.join("sessions").to_str().unwrap()),
        "{session}"
    );
    assert!(
        Path::new(&session)
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .contains(&format!("_{run_id}-"))
    );
    let argv = eventually("pi's argv", || read(env.work().join("pi.argv")));
    let argv: Vec<&str> = argv.lines().collect();
    let record = env.record(run_id);
    let artifact = record["extra"]["task_artifact"].as_str().unwrap();
    let extension = argv[argv.iter().position(|a| *a == "-e").unwrap() + 1];
    assert_eq!(
        argv,
        [
            "-p",
            "--session",
            session.as_str(),
            "--model",
            "fake/fast",
            "--thinking",
            "xhigh",
            "--tools",
            "read,bash,caller_ping",
            "-e",
            extension,
            "--skill",
            skill.to_str().unwrap(),
            &format!("@{artifact}"),
        ]
    );
    assert!(
        read(extension).unwrap().contains("subagent_done"),
        "the shipped child extension"
    );
    let text = read(artifact).unwrap();
    assert!(text.starts_with("You are a careful scout.\n\n"), "{text}");
    // The skill arrives with the task, not as a prompt typed after it.
    assert!(
        text.contains("\n\nSkills for this task: `search`."),
        "{text}"
    );
    assert!(text.contains("\n\nFind the parser.\n\n"), "{text}");
    // The launch policy restores exactly these tools.
    let policy: Value =
        serde_json::from_str(&read(format!("{session}.pi-herdr-subagent-policy.json")).unwrap())
            .unwrap();
    assert_eq!(policy["version"], 2);
    assert_eq!(policy["owner"], "public");
    assert_eq!(policy["tools"], serde_json::json!(["read", "bash"]));
    assert_eq!(policy["policyHash"].as_str().unwrap().len(), 64);
    let pi_env = eventually("pi's environment", || read(env.work().join("pi.env")));
    assert!(
        pi_env
            .lines()
            .any(|l| l == format!("PI_CODING_AGENT_DIR={}", agent_dir.display())),
        "{pi_env}"
    );
    // No parent decision: the child is untrusted, and never asks.
    assert!(
        pi_env.lines().any(|l| l == "HERD_PROJECT_TRUST=untrusted"),
        "{pi_env}"
    );
    // The extension finds herd-accept and herd-watch where the caller said, or beside herd-launch.
    assert!(
        pi_env.lines().any(|l| l.starts_with("HERD_BIN_DIR=/")),
        "{pi_env}"
    );
    assert_eq!(
        env.record(run_id)["extra"]["project_trust"],
        "untrusted",
        "a model fallback repeats the decision"
    );
}

#[test]
fn a_roles_fork_without_a_parent_session_starts_fresh_and_an_explicit_one_explains() {
    let env = Env::with_role(
        "forker",
        "---\nname: forker\ndescription: d\nsession-mode: fork\nauto-exit: true\n---\nRole text.\n",
    );
    let args = ["spawn", "--request", "-", "--json", "--surface", "process"];
    let run = env.run(
        &args,
        &serde_json::json!({"name": "F", "task": "t", "agent": "forker"}),
    );
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.json()["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d.as_str().unwrap().contains("the child starts fresh")),
        "{}",
        run.json()
    );
    let argv = eventually("pi's argv", || read(env.work().join("pi.argv")));
    assert!(
        argv.lines().last().unwrap().starts_with('@'),
        "a fresh child gets its artifact: {argv}"
    );
    let run = env.run(
        &args,
        &serde_json::json!({"name": "G", "task": "t", "agent": "forker", "fork": true}),
    );
    assert_eq!(run.code, 2, "{run}");
    assert_eq!(run.json()["error"]["field"], "fork");
    assert!(
        run.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no parent session"),
        "{}",
        run.json()
    );
}

#[test]
fn a_fork_gets_the_raw_task_and_the_parents_conversation() {
    let mut env = Env::new();
    let agent_dir = env.dir.path().join("agent");
    std::fs::create_dir_all(&agent_dir).unwrap();
    env.set("PI_CODING_AGENT_DIR", agent_dir.to_string_lossy());
    env.set("HERD_PI", support("fake-pi.sh"));
    let parent = env.dir.path().join("parent.jsonl");
    std::fs::write(
        &parent,
        "{\"type\":\"session\",\"version\":3,\"id\":\"parent-1\",\"cwd\":\"/\"}\n\
         {\"type\":\"message\",\"id\":\"a\",\"message\":{\"role\":\"user\",\"content\":[]}}\n\
         {\"type\":\"message\",\"id\":\"b\",\"message\":{\"role\":\"assistant\",\"content\":[]}}\n\
         {\"type\":\"message\",\"id\":\"c\",\"message\":{\"role\":\"user\",\"content\":[]}}\n",
    )
    .unwrap();
    let request = serde_json::json!({"name": "Fix", "task": "Fix it.", "fork": true, "systemPrompt": "dropped"});
    let parent_arg = parent.to_string_lossy().into_owned();
    let args = [
        "--parent-session",
        parent_arg.as_str(),
        "spawn",
        "--request",
        "-",
        "--json",
        "--surface",
        "process",
    ];
    let run = env.run(&args, &request);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(
        run.json()["artifacts"].as_str().unwrap(),
        env.dir.path().join("artifacts/parent-1").to_str().unwrap()
    );
    let argv = eventually("pi's argv", || read(env.work().join("pi.argv")));
    // The raw task, and after it seed 004's acceptance section (a fork has no task artifact).
    let task = &argv[argv.find("\nFix it.").expect("the raw task") + 1..];
    assert!(
        task.starts_with("Fix it.\n\n## Acceptance\n\nThis run has the acceptance level `checked` (inferred for this task)."),
        "{argv}"
    );
    assert!(task.trim_end().ends_with("```"), "{argv}");
    assert!(!argv.contains("dropped"));
    let session = read(run.json()["session_file"].as_str().unwrap()).unwrap();
    let lines: Vec<Value> = session
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{session}");
    assert_eq!(lines[0]["type"], "session");
    assert_eq!(
        lines[0]["parentSession"].as_str().unwrap(),
        parent.to_str().unwrap()
    );
    assert_eq!(lines[1]["id"], "a");
    assert_eq!(lines[2]["id"], "b");
}

/// seed 004's `defaultContext: fork` forks a launch that does not say `fork`, as
/// `session-mode: fork` does; `roles --json` shows it with the role's description and skills.
#[test]
fn a_roles_default_context_fork_forks_the_launch_and_the_listing_shows_it() {
    let env = Env::with_role(
        "planner",
        "---\ndescription: Plans the work\nskills: plan, review\ndefaultContext: fork\nauto-exit: true\n---\nPlan.\n",
    );
    let listed = env.run(&["roles", "--json"], &Value::Null);
    assert_eq!(listed.code, 0, "{listed}");
    let settings = &listed.json()["roles"][0];
    assert_eq!(settings["description"], "Plans the work", "{listed}");
    assert_eq!(
        settings["skills"],
        serde_json::json!(["plan", "review"]),
        "{listed}"
    );
    assert_eq!(settings["default_context"], "fork", "{listed}");
    let text = env.run(&["roles"], &Value::Null);
    assert!(
        text.stdout.contains(
            "- planner (user): Plans the work · auto-exit true · skills plan,review · context fork"
        ),
        "{text}"
    );

    let parent = env.dir.path().join("parent.jsonl");
    std::fs::write(
        &parent,
        "{\"type\":\"session\",\"version\":3,\"id\":\"parent-1\",\"cwd\":\"/\"}\n\
         {\"type\":\"message\",\"id\":\"a\",\"message\":{\"role\":\"user\",\"content\":[]}}\n\
         {\"type\":\"message\",\"id\":\"b\",\"message\":{\"role\":\"assistant\",\"content\":[]}}\n\
         {\"type\":\"message\",\"id\":\"c\",\"message\":{\"role\":\"user\",\"content\":[]}}\n",
    )
    .unwrap();
    let parent_arg = parent.to_string_lossy().into_owned();
    let args = [
        "--parent-session",
        parent_arg.as_str(),
        "spawn",
        "--request",
        "-",
        "--json",
        "--surface",
        "process",
    ];
    let run = env.run(
        &args,
        &serde_json::json!({"name": "P", "task": "Plan it.", "agent": "planner"}),
    );
    assert_eq!(run.code, 0, "{run}");
    let session = read(run.json()["session_file"].as_str().unwrap()).unwrap();
    let first: Value = serde_json::from_str(session.lines().next().unwrap()).unwrap();
    assert_eq!(
        first["parentSession"].as_str(),
        parent.to_str(),
        "the child forked: {session}"
    );
    // The parent's conversation up to the launch, as an explicit fork copies it.
    assert!(
        session.contains("\"id\":\"a\"") && session.contains("\"id\":\"b\""),
        "{session}"
    );
    let argv = eventually("pi's argv", || read(env.work().join("pi.argv")));
    assert!(
        argv.contains("\nPlan it."),
        "a fork gets the raw task: {argv}"
    );
}

#[test]
fn a_persistent_specialist_takes_one_task_at_a_time() {
    let env = Env::new();
    let request = serde_json::json!({"name": "keeper", "task": "first task", "persistent": true});
    let run = env.spawn_exec("process", &request, &["--persistent", "--wait", "go"]);
    assert_eq!(run.code, 0, "{run}");
    let run_id = run.json()["run_id"].as_str().unwrap().to_owned();
    let ids = &run.json()["persistent_ids"];
    let first_task = ids["task_id"].as_str().unwrap().to_owned();
    let session = run.json()["session_file"].as_str().unwrap().to_owned();
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
    eventually("the child to start", || read(env.work().join("child.pid")));
    let busy = send("second task");
    assert_eq!(busy.code, 7, "{busy}");
    assert_eq!(busy.json()["error"]["code"], "conflict");
    assert!(ledger().contains("\"rejected-busy\""), "{}", ledger());
    assert!(!Path::new(&format!("{session}.task-inbox.000000000001.json")).exists());

    // Idle after its task event: the next task goes through the inbox.
    std::fs::write(env.work().join("go"), "").unwrap();
    eventually("the first task's event", || {
        read(format!("{session}.tasks")).filter(|t| t.contains(&first_task))
    });
    let sent = send("second task");
    assert_eq!(sent.code, 0, "{sent}");
    let second = sent.json()["task_id"].as_str().unwrap().to_owned();
    let log = eventually("the child to take the task", || {
        read(env.work().join("tasks.log")).filter(|l| l.contains(&second))
    });
    assert!(log.contains("second task"), "{log}");
    // It works on it until released, so it is busy again.
    let again = send("third task");
    assert_eq!(again.code, 7, "{again}");
    std::fs::write(env.work().join(format!("go.{second}")), "").unwrap();
    eventually("the second task's event", || {
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
    assert_eq!(
        (refused.code, refused.json()["error"]["code"].as_str()),
        (7, Some("conflict")),
        "{refused}"
    );
    let reason = refused.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(reason.contains("has ended"), "{reason}");
    assert_eq!(inboxes(), before, "no task was written for it");
    // Not a persistent run at all.
    let plain = env.spawn_exec(
        "process",
        &serde_json::json!({"name": "plain", "task": "t"}),
        &[],
    );
    let plain_id = plain.json()["run_id"].as_str().unwrap().to_owned();
    let not = env.run(
        &["send", "--run", &plain_id, "--message", "x", "--json"],
        &Value::Null,
    );
    assert_eq!(not.code, 2, "{not}");
}

#[test]
fn resume_restores_the_saved_policy_and_fails_closed() {
    let mut env = Env::new();
    let agent_dir = env.dir.path().join("agent");
    std::fs::create_dir_all(&agent_dir).unwrap();
    env.set("PI_CODING_AGENT_DIR", agent_dir.to_string_lossy());
    env.set("HERD_PI", support("fake-pi.sh"));
    let request = serde_json::json!({"name": "first", "task": "t", "tools": "read,grep"});
    let run = env.run(
        &["spawn", "--request", "-", "--json", "--surface", "process"],
        &request,
    );
    assert_eq!(run.code, 0, "{run}");
    let session = run.json()["session_file"].as_str().unwrap().to_owned();
    let first_run = run.json()["run_id"].as_str().unwrap().to_owned();
    assert_eq!(exit_code(&env, &first_run), 0);
    // Pi creates the session file; the stand-in does not, so give it the header Pi writes.
    std::fs::write(
        &session,
        format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"cwd\":\"{}\"}}\n",
            env.work().display()
        ),
    )
    .unwrap();
    std::fs::remove_file(env.work().join("pi.argv")).unwrap();

    let resume = [
        "resume",
        "--session",
        session.as_str(),
        "--message",
        "carry on",
        "--surface",
        "process",
        "--json",
    ];
    let run = env.run(&resume, &Value::Null);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(run.json()["name"], "Resume");
    assert_eq!(run.json()["session_file"].as_str().unwrap(), session);
    let argv = eventually("pi's argv", || read(env.work().join("pi.argv")));
    let argv: Vec<&str> = argv.lines().collect();
    let tools = argv[argv.iter().position(|a| *a == "--tools").unwrap() + 1];
    assert_eq!(tools, "read,grep,caller_ping");
    assert!(
        !argv.contains(&"--model"),
        "the session keeps its model: {argv:?}"
    );
    let message = argv.last().unwrap().strip_prefix('@').unwrap();
    assert_eq!(read(message).unwrap(), "carry on\n");
    let resumed = run.json()["run_id"].as_str().unwrap().to_owned();
    assert_eq!(exit_code(&env, &resumed), 0);

    // A refused resume changes nothing, not even a stale identity record it would replace.
    let identity_file = format!("{session}.process.json");
    let mut stale: Value = serde_json::from_str(&read(&identity_file).unwrap()).unwrap();
    stale["bootId"] = "00000000-0000-0000-0000-000000000000".into();
    std::fs::write(&identity_file, stale.to_string()).unwrap();
    let empty = [
        "resume",
        "--session",
        &session,
        "--message",
        "  ",
        "--surface",
        "process",
        "--json",
    ];
    let run = env.run(&empty, &Value::Null);
    assert_eq!(run.code, 2, "{run}");
    assert_eq!(read(&identity_file).unwrap(), stale.to_string());

    // Fails closed: a changed policy, a managed-worktree owner, no policy at all.
    let policy_file = format!("{session}.pi-herdr-subagent-policy.json");
    let policy = read(&policy_file).unwrap();
    let check = |env: &Env, text: &str| {
        std::fs::write(&policy_file, text).unwrap();
        let run = env.run(&resume, &Value::Null);
        assert_eq!(run.code, 2, "{text}: {run}");
        run.json()["error"]["message"].as_str().unwrap().to_owned()
    };
    let widened = policy.replace("[\"read\",\"grep\"]", "[\"read\",\"grep\",\"bash\"]");
    assert!(check(&env, &widened).contains("policyHash"));
    let managed = herd_launch::policy::Policy::new(
        herd_launch::policy::Owner::ManagedWorktree,
        None,
        Vec::new(),
        false,
        "l".into(),
        "g".into(),
        Some(herd_launch::policy::WorktreeBinding {
            path: "/w".into(),
            workspace_id: "w2".into(),
            branch: "b".into(),
            base_sha: "abc".into(),
        }),
    );
    assert!(
        check(&env, &String::from_utf8(managed.to_json()).unwrap()).contains("managed-worktree")
    );
    let persistent = herd_launch::policy::Policy::new(
        herd_launch::policy::Owner::Public,
        None,
        Vec::new(),
        true,
        "l".into(),
        "g".into(),
        None,
    );
    assert!(check(&env, &String::from_utf8(persistent.to_json()).unwrap()).contains("persistent"));
    assert!(check(&env, "{\"version\":2,\"owner\":\"workflow\"}").contains("owner"));
    std::fs::remove_file(&policy_file).unwrap();
    let run = env.run(&resume, &Value::Null);
    assert_eq!(run.code, 2, "{run}");
    assert!(
        run.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("start a new subagent"),
        "{}",
        run.json()
    );
}

#[test]
fn a_refused_resume_writes_nothing_not_even_the_child_extension_copy() {
    let mut env = Env::new();
    env.set("HERD_PI", support("fake-pi.sh"));
    let session = env.work().join("s.jsonl");
    std::fs::write(
        &session,
        format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"cwd\":\"{}\"}}\n",
            env.work().display()
        ),
    )
    .unwrap();
    let art = env.dir.path().join("art");
    let before = every_path(&art);
    let session = session.to_string_lossy().into_owned();
    let args = [
        "resume",
        "--session",
        &session,
        "--message",
        "go",
        "--surface",
        "process",
        "--json",
    ];
    // No launch policy beside the session: refused, exit 2.
    let run = env.run(&args, &Value::Null);
    assert_eq!(run.code, 2, "{run}");
    assert_eq!(run.json()["error"]["field"], "policy", "{run}");
    assert_eq!(
        every_path(&art),
        before,
        "a refused resume wrote into {}",
        art.display()
    );
}

/// Every path under `dir`, sorted.
fn every_path(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(next) = todo.pop() {
        for entry in std::fs::read_dir(&next).into_iter().flatten().flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                todo.push(path.clone());
            }
            out.push(path);
        }
    }
    out.sort();
    out
}

/// An environment with a repository `repo` (one commit) in its work directory and a managed
/// root of its own; returns it with the commit.
fn repo_env() -> (Env, String) {
    let mut env = Env::new();
    let repo = env.work().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let sb = herd_e2e::git::Sandbox::new();
    sb.git(&repo, ["init", "-q", "-b", "main"]);
    sb.write(&repo, "README", "hi\n");
    let head = sb.commit_all(&repo, "first");
    sb.git(&repo, ["branch", "taken"]);
    let root = env.dir.path().join("managed");
    env.set("HERD_WORKTREE_ROOT", root.to_string_lossy());
    env.set("GIT_CONFIG_GLOBAL", "/dev/null");
    env.set("GIT_CONFIG_NOSYSTEM", "1");
    (env, head)
}

/// `run` was refused as an invalid request naming `field` (exit 2), and nothing was written: no
/// file in the artifacts directory, no managed checkout.
fn assert_refused_with_nothing_written(env: &Env, run: &Run, rule: &str, field: &str) {
    assert_eq!(run.code, 2, "{rule}: {run}");
    assert_eq!(run.json()["error"]["code"], "invalid_request", "{rule}");
    assert_eq!(run.json()["error"]["field"], field, "{rule}: {run}");
    assert_eq!(
        files_under(&env.art()),
        Vec::<PathBuf>::new(),
        "{rule}: files were left"
    );
    assert!(
        !env.dir.path().join("managed").exists(),
        "{rule}: a checkout was made"
    );
}

/// Every file under `dir`, relative to it.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.map(Result::unwrap) {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            } else {
                found.push(path.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    found
}

#[test]
fn a_late_refusal_exits_2_and_changes_nothing() {
    let (mut env, _) = repo_env();
    let outside = tempfile::tempdir().unwrap();
    let cases = [
        (
            "a branch that exists",
            serde_json::json!({"branch": "taken"}),
            "repo",
            "worktree.branch",
        ),
        (
            "a branch with ..",
            serde_json::json!({"branch": "../x"}),
            "repo",
            "worktree.branch",
        ),
        (
            "a branch ending .lock",
            serde_json::json!({"branch": "x.lock"}),
            "repo",
            "worktree.branch",
        ),
        (
            "a base naming no commit",
            serde_json::json!({"branch": "b1", "base": "no-such-rev"}),
            "repo",
            "worktree.base",
        ),
        (
            "a cwd outside any repository",
            serde_json::json!({"branch": "b2"}),
            outside.path().to_str().unwrap(),
            "cwd",
        ),
    ];
    // A Pi child too, so the shared child extension would be installed if anything were.
    let pi = env.work().join("fake-pi");
    std::fs::write(&pi, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&pi, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    env.set("HERD_PI", pi.to_string_lossy());
    for (rule, worktree, cwd, field) in cases {
        let request =
            serde_json::json!({"name": "w", "task": "t", "cwd": cwd, "worktree": worktree});
        for args in [
            &["spawn", "--request", "-", "--json", "--surface", "process"][..],
            &[
                "spawn",
                "--request",
                "-",
                "--json",
                "--surface",
                "process",
                "--runner",
                "exec",
                "--",
                "true",
            ][..],
        ] {
            assert_refused_with_nothing_written(&env, &env.run(args, &request), rule, field);
        }
    }
    // A directory as the request is as unreadable as a missing file.
    let run = env.run(
        &["spawn", "--request", ".", "--json", "--surface", "process"],
        &Value::Null,
    );
    assert_eq!(run.code, 2, "{run}");
    assert_eq!(run.json()["error"]["code"], "invalid_request");
    assert_eq!(run.json()["error"]["field"], "request");
    assert_eq!(files_under(&env.art()), Vec::<PathBuf>::new());
}

#[test]
fn a_worktree_launch_runs_the_child_in_a_new_managed_checkout() {
    let (env, head) = repo_env();
    let root = env.dir.path().join("managed");
    let request = serde_json::json!({"name": "Ticket 1", "task": "t", "cwd": "repo", "worktree": {"branch": "ticket/1"}});
    let run = env.spawn_exec("process", &request, &["--done"]);
    assert_eq!(run.code, 0, "{run}");
    let wt = &run.json()["worktree"];
    assert_eq!(wt["branch"], "ticket/1");
    assert_eq!(wt["base_sha"], head.as_str());
    let path = PathBuf::from(wt["path"].as_str().unwrap());
    assert!(path.starts_with(&root), "{}", path.display());
    let run_doc = run.json();
    let run_id = run_doc["run_id"].as_str().unwrap();
    assert_eq!(exit_code(&env, run_id), 0);
    // The child ran in the worktree.
    assert!(path.join("child.pid").exists());
    let manifest: Value = serde_json::from_str(
        &read(
            env.art()
                .join("worktree-runs")
                .join(format!("{run_id}.json")),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(manifest["state"], "running");
    assert_eq!(manifest["branch"], "ticket/1");
    let run_doc = run.json();
    let session = run_doc["session_file"].as_str().unwrap();
    let policy: Value =
        serde_json::from_str(&read(format!("{session}.pi-herdr-subagent-policy.json")).unwrap())
            .unwrap();
    assert_eq!(policy["owner"], "managed-worktree");
    assert_eq!(policy["worktree"]["branch"], "ticket/1");
}

#[test]
fn a_worktree_launch_asks_git_about_the_source_once() {
    let (mut env, _) = repo_env();
    // Every git the launch starts goes through this one, which logs it.
    let bin = env.dir.path().join("logged-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = env.dir.path().join("git-calls.log");
    let real = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join("git"))
        .find(|git| git.is_file())
        .expect("git on PATH");
    std::fs::write(
        bin.join("git"),
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(bin.join("git"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    env.set("PATH", path);
    let request =
        serde_json::json!({"name": "w", "task": "t", "cwd": "repo", "worktree": {"branch": "w/1"}});
    let run = env.spawn_exec("process", &request, &["--done"]);
    assert_eq!(run.code, 0, "{run}");
    let calls = read(&log).unwrap();
    let calls: Vec<&str> = calls.lines().collect();
    // The source and its base once, the branch before the claim and again under the checkout's
    // lock, then the checkout itself.
    assert_eq!(calls.len(), 4, "{calls:#?}");
    assert_eq!(
        calls
            .iter()
            .filter(|c| c.contains("--show-toplevel"))
            .count(),
        1,
        "{calls:#?}"
    );
    assert!(calls[3].starts_with("worktree add"), "{calls:#?}");
}

#[test]
fn a_fallback_launch_takes_the_next_model_of_an_earlier_run() {
    let mut env = Env::new();
    let agent_dir = env.dir.path().join("agent");
    std::fs::create_dir_all(&agent_dir).unwrap();
    env.set("PI_CODING_AGENT_DIR", agent_dir.to_string_lossy());
    env.set("HERD_PI", support("fake-pi.sh"));
    let request = serde_json::json!({"name": "w", "task": "t", "model": "p/one,p/two"});
    let first = env.run(
        &["spawn", "--request", "-", "--json", "--surface", "process"],
        &request,
    );
    assert_eq!(first.code, 0, "{first}");
    assert_eq!(first.json()["model"], "p/one");
    let first_id = first.json()["run_id"].as_str().unwrap().to_owned();
    let second = env.run(
        &["spawn", "--fallback-of", &first_id, "--json"],
        &Value::Null,
    );
    assert_eq!(second.code, 0, "{second}");
    assert_eq!(second.json()["model"], "p/two");
    assert_eq!(second.json()["surface"], "process");
    let record = env.record(second.json()["run_id"].as_str().unwrap());
    assert!(record.get("fallback_models").is_none(), "{record}");
    assert_eq!(record["attempted_models"], serde_json::json!(["p/one"]));
    // No candidate is left after the last one.
    let second_id = second.json()["run_id"].as_str().unwrap().to_owned();
    let third = env.run(
        &["spawn", "--fallback-of", &second_id, "--json"],
        &Value::Null,
    );
    assert_eq!(third.code, 2, "{third}");
    assert_eq!(third.json()["error"]["field"], "fallback_of");
}

#[test]
fn a_tree_that_ignores_sigterm_is_killed_whole_before_its_close_is_confirmed() {
    let env = Env::new();
    let run = env.spawn_exec(
        "process",
        &serde_json::json!({"name": "stubborn", "task": "t"}),
        &["--ignore-term", "--grandchild", "--hang"],
    );
    assert_eq!(run.code, 0, "{run}");
    let run_doc = run.json();
    let run_id = run_doc["run_id"].as_str().unwrap();
    let child: u32 = eventually("the child's pid", || {
        read(env.work().join("child.pid"))?.trim().parse().ok()
    });
    let grandchild: i32 = eventually("the grandchild's pid", || {
        read(env.work().join("grandchild.pid"))?.trim().parse().ok()
    });
    // What herd-watch does: open the surface from the record alone and close the child.
    let artifacts = herd_protocol::layout::Artifacts::new(env.art());
    let record = herd_protocol::run::RunRecord::load(&artifacts, run_id).unwrap();
    let (surface, target) = herd_surface::open(&record, &artifacts).unwrap();
    assert_eq!(
        surface
            .presence(&target, Instant::now() + Duration::from_secs(5))
            .unwrap(),
        herd_surface::Presence::Running
    );
    let identity = herd_core::identity::Record::read(&record.session_files().process())
        .unwrap()
        .unwrap();
    assert_eq!(identity.pid, child);
    // SIGTERM is ignored by the whole tree: after the grace, SIGKILL ends every process of the
    // child's session, the grandchild included, and only then is the close confirmed.
    let closed = herd_surface::close_confirmed(
        surface.as_ref(),
        &target,
        Instant::now() + Duration::from_secs(10),
    );
    assert_eq!(closed, herd_surface::Closed::Confirmed);
    assert_eq!(
        herd_core::identity::judge(&identity),
        herd_core::identity::Judgement::Exited
    );
    // SAFETY: kill with signal 0 only probes; the PID is the test child's grandchild, and a
    // reused PID would have to belong to this user and start in the last instant.
    let grandchild_alive = unsafe { libc::kill(grandchild, 0) } == 0
        && std::fs::read_to_string(format!("/proc/{grandchild}/stat"))
            .is_ok_and(|stat| !stat.contains(") Z "));
    assert!(
        !grandchild_alive,
        "the grandchild {grandchild} outlived a confirmed close"
    );
}

#[test]
fn a_handoff_that_cannot_work_is_refused_with_nothing_written() {
    let (mut env, _) = repo_env();
    let from = env.work().join("from.jsonl");
    std::fs::write(
        &from,
        "{\"type\":\"session\",\"id\":\"p\"}\n{\"type\":\"message\",\"id\":\"1\",\"parentId\":null}\n",
    )
    .unwrap();
    let pi = env.work().join("fake-pi");
    std::fs::write(&pi, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&pi, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    env.set("HERD_PI", pi.to_string_lossy());
    // A tmux server that is never reached: every refusal comes first.
    env.set(
        "HERD_TMUX_SOCKET",
        env.dir.path().join("no-tmux").to_string_lossy(),
    );
    let repo = env.work().join("repo");
    let from = from.to_string_lossy().into_owned();
    let repo = repo.to_string_lossy().into_owned();
    let missing = env
        .work()
        .join("missing.jsonl")
        .to_string_lossy()
        .into_owned();
    let cases: [(&str, Vec<&str>, &str); 5] = [
        (
            "no terminal",
            vec!["--surface", "process", "--from", &from, "--branch", "b1"],
            "surface",
        ),
        (
            "no session",
            vec!["--surface", "tmux", "--from", &missing, "--branch", "b1"],
            "from",
        ),
        (
            "an unknown leaf",
            vec![
                "--surface",
                "tmux",
                "--from",
                &from,
                "--leaf",
                "9",
                "--branch",
                "b1",
            ],
            "leaf",
        ),
        (
            "a branch that exists",
            vec!["--surface", "tmux", "--from", &from, "--branch", "taken"],
            "branch",
        ),
        (
            "an invalid branch",
            vec!["--surface", "tmux", "--from", &from, "--branch", "x.lock"],
            "branch",
        ),
    ];
    for (rule, extra, field) in cases {
        let mut args = vec!["handoff", "--json", "--cwd", &repo];
        args.extend(extra);
        assert_refused_with_nothing_written(&env, &env.run(&args, &Value::Null), rule, field);
    }
}

#[test]
fn a_tmux_handoff_gets_a_window_of_its_own_in_front_and_the_parent_keeps_its_pane() {
    let (mut env, _) = repo_env();
    let tmux = Tmux::start(env.dir.path());
    tmux.inside(&mut env);
    let from = env.work().join("from.jsonl");
    std::fs::write(
        &from,
        "{\"type\":\"session\",\"id\":\"p\"}\n{\"type\":\"message\",\"id\":\"1\",\"parentId\":null}\n",
    )
    .unwrap();
    // A Pi that stays, so its pane stays for the look.
    let pi = env.work().join("fake-pi");
    std::fs::write(&pi, "#!/bin/sh\nexec sleep 30\n").unwrap();
    std::fs::set_permissions(&pi, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    env.set("HERD_PI", pi.to_string_lossy());
    let size = "#{pane_width}x#{pane_height}";
    let before = tmux.show(&tmux.pane, size);
    let repo = env.work().join("repo").to_string_lossy().into_owned();
    let from = from.to_string_lossy().into_owned();
    let args = [
        "handoff",
        "--json",
        "--surface",
        "tmux",
        "--cwd",
        &repo,
        "--from",
        &from,
        "--branch",
        "feat-h",
    ];
    let run = env.run(&args, &Value::Null);
    let doc = run.json();
    let pane = doc["pane"]["pane_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{run}"));
    assert_eq!(tmux.show(&tmux.pane, size), before, "{run}");
    assert_ne!(
        tmux.show(pane, "#{window_id}"),
        tmux.show(&tmux.pane, "#{window_id}"),
        "{run}"
    );
    assert_eq!(tmux.show(pane, "#{window_name}"), "feat-h");
    // Started and brought in front: it is meant to be looked at.
    assert_eq!(doc["status"], "started", "{run}");
    assert_eq!(tmux.show(pane, "#{window_active}#{pane_active}"), "11");
}
