//! Launches on a private tmux server: panes, herd windows per parent, placement, a hanging
//! tmux, and a worktree handoff's window.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use herd_e2e::cli::Run;
use herd_e2e::wait::wait_for;
use herd_protocol::launch::docs::{HandoffDoc, HandoffStatus};
use herd_protocol::run::{LaunchStatus, RunRecord, SurfaceKind};
use serde_json::Value;

use crate::support::{Env, WAIT, ack, exit_code, read, redact, refusal, repo_env, script};

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
    let launched = ack(&run);
    assert_eq!(launched.surface, SurfaceKind::Tmux);
    let pane = launched.pane_id.unwrap();
    assert!(pane.starts_with('%') && pane != tmux.pane, "{pane}");
    let run_id = launched.run_id.as_str();
    let recorded = env.run_record(run_id).pane.unwrap();
    assert_eq!(
        recorded.socket.as_deref(),
        Some(tmux.socket.to_str().unwrap())
    );
    assert_eq!(recorded.server_pid, Some(tmux.pid()));
    assert_eq!(exit_code(&env, run_id), 4);
    wait_for("the sentinel on the pane", WAIT, || {
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

/// The acknowledgement a person reads of a launch on tmux names the pane the child runs in.
#[test]
fn the_tmux_acknowledgement_names_the_childs_pane() {
    let mut env = Env::new();
    let tmux = Tmux::start(env.dir.path());
    tmux.inside(&mut env);
    let child = script("child.sh");
    let run = env.run(
        &[
            "spawn",
            "--request",
            "-",
            "--surface",
            "tmux",
            "--runner",
            "exec",
            "--",
            "sh",
            &child,
            "--done",
        ],
        &serde_json::json!({"name": "pane child", "task": "t"}),
    );
    assert_eq!(run.code, 0, "{run}");
    let record: RunRecord = serde_json::from_value(env.record(&env.run_ids()[0])).unwrap();
    let pane = record.pane.unwrap().pane_id;
    assert!(pane.starts_with('%') && pane != tmux.pane, "{pane}");
    let text = herd_e2e::redact::Redactions::new()
        .text(&format!("pane {pane}"), "pane [PANE]")
        .apply(&redact(&env, &run.stdout));
    insta::assert_snapshot!(text);
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
        let launched = ack(&run);
        let pane = launched.pane_id.unwrap();
        let window = tmux.show(&pane, "#{window_id}");
        let record = env.run_record(&launched.run_id);
        assert_eq!(
            record.pane.and_then(|p| p.tab_id).as_deref(),
            Some(window.as_str())
        );
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
        tmux.show(&ack(&run).pane_id.unwrap(), "#{window_id}")
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
        let pane = ack(&run).pane_id.unwrap();
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
    let pane = ack(&run).pane_id.unwrap();
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
    assert_eq!(refusal(&run).field.as_deref(), Some("HERD_TMUX_PLACEMENT"));
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
        let pane = ack(run).pane_id.unwrap();
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
    // A server with no windows yet, whose placement of the first one never answers. (A query that
    // hangs creates nothing: that launch fails definitely.)
    env.fake_tmux(
        "case \"$*\" in *list-windows*) echo 'no server running on sock' >&2; exit 1;; esac\nexec sleep 60\n",
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
    let launched = ack(&run);
    assert_eq!(launched.status, LaunchStatus::Uncertain);
    let failure = launched.launch_failure.as_deref().unwrap();
    assert!(failure.contains("did not answer"), "{run}");
    assert!(
        failure.starts_with("pane placement (its budget is 1500 ms): "),
        "the failure names the operation and its budget: {}",
        run.json()
    );
    assert_eq!(
        env.run_record(&launched.run_id).status,
        LaunchStatus::Uncertain
    );
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
    let doc = run.doc::<HandoffDoc>();
    let pane = doc
        .pane
        .as_ref()
        .map(|pane| pane.pane_id.as_str())
        .unwrap_or_else(|| panic!("{run}"));
    assert_eq!(tmux.show(&tmux.pane, size), before, "{run}");
    assert_ne!(
        tmux.show(pane, "#{window_id}"),
        tmux.show(&tmux.pane, "#{window_id}"),
        "{run}"
    );
    assert_eq!(tmux.show(pane, "#{window_name}"), "feat-h");
    // Started and brought in front: it is meant to be looked at.
    assert_eq!(doc.status, HandoffStatus::Started, "{run}");
    assert_eq!(tmux.show(pane, "#{window_active}#{pane_active}"), "11");
}

/// A person's Ctrl+C in a confined child's pane reaches the child, as it would unconfined, and
/// does not end the sandbox around it (bubblewrap, in the same foreground group, ignores it).
#[test]
fn ctrl_c_in_a_confined_childs_pane_reaches_the_child_and_leaves_it_running() {
    let mut env = Env::new();
    let dir = env.dir.path().join("home/.config/herd");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), "[sandbox]\nmode = \"workspace\"\n").unwrap();
    let tmux = Tmux::start(env.dir.path());
    tmux.inside(&mut env);
    let run = env.run(
        &[
            "spawn",
            "--request",
            "-",
            "--json",
            "--surface",
            "tmux",
            "--runner",
            "exec",
            "--",
            "/bin/sh",
            "-c",
            "trap 'echo INT >> int.txt' INT; echo ready > ready.txt; while :; do sleep 0.1; done",
        ],
        &serde_json::json!({"name": "Trapper", "task": "t"}),
    );
    assert_eq!(run.code, 0, "{run}");
    let pane = ack(&run).pane_id.unwrap();
    let script = env
        .run_record(&ack(&run).run_id)
        .extra
        .launch_script
        .unwrap();
    assert!(
        read(&script).unwrap().contains("'--sandboxed'"),
        "a confined child"
    );
    wait_for("the child to start", WAIT, || {
        read(env.work().join("ready.txt"))
    });
    for presses in 1..=2 {
        tmux.server.cmd(["send-keys", "-t", &pane, "C-c"]);
        // The second press is handled only by a child the first left running.
        wait_for("the child's trap", WAIT, || {
            read(env.work().join("int.txt")).filter(|t| t.lines().count() == presses)
        });
    }
    tmux.server.cmd(["kill-pane", "-t", &pane]);
}
