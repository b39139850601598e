//! The tmux and process surfaces against real processes and a real tmux server.
//!
//! Each tmux test runs its own server, the test kit's (`herd_e2e::tmux::Tmux`, a private socket),
//! which is killed at the end even when the test fails.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test on any error"
)]

use std::ffi::OsString;
use std::path::Path;
use std::time::{Duration, Instant};

use herd_e2e::tmux::Tmux as TestTmux;
use herd_e2e::wait::wait_for;

use crate::support::{PATIENCE, script, soon};

use herd_core::identity;
use herd_protocol::layout::Artifacts;
use herd_surface::process::Process;
use herd_surface::tmux::Tmux;
use herd_surface::{
    Closed, Error, Key, Launch, LaunchBudgets, LaunchError, Presence, Surface, Target,
    close_confirmed,
};

/// The test kit's private tmux server with one session, whose first pane stands for the
/// parent's: the surface splits new panes beside it.
struct Server {
    tmux: TestTmux,
    pane: String,
}

impl Server {
    fn start() -> Server {
        let tmux = TestTmux::start(&pane_vars());
        let pane = tmux.new_session("t", Path::new("/"), &["sh".into()]);
        Server { tmux, pane }
    }

    fn pid(&self) -> u32 {
        self.tmux.pid()
    }

    fn surface(&self) -> Tmux {
        Tmux::with_socket(
            herd_surface::tmux::find_program().unwrap(),
            self.tmux.socket_path(),
            Some(self.pane.clone()),
        )
    }
}

/// What the panes of a test server see: only `PATH` and `HOME`.
fn pane_vars() -> Vec<(OsString, OsString)> {
    ["PATH", "HOME"]
        .into_iter()
        .filter_map(|k| Some((OsString::from(k), std::env::var_os(k)?)))
        .collect()
}

fn launch<'a>(
    run_id: &'a str,
    name: &'a str,
    dir: &'a Path,
    script: &'a Path,
    session: &'a Path,
) -> Launch<'a> {
    Launch {
        run_id,
        name,
        cwd: dir,
        script,
        session_file: session,
        into: None,
    }
}

#[test]
fn tmux_pane_lives_reads_takes_keys_keeps_its_screen_and_closes() {
    let server = Server::start();
    let tmux = server.surface();
    let dir = tempfile::tempdir().unwrap();
    let body = "echo hello-from-child; echo \"surface=$PI_SUBAGENT_SURFACE\"; read line; \
                echo \"got:$line\" > answer.txt; echo __SUBAGENT_DONE_3__; exit 3";
    let path = script(dir.path(), "greeter", &tmux, body);
    let session = dir.path().join("s.jsonl");
    let target = tmux
        .launch(
            &launch("r1", "greeter", dir.path(), &path, &session),
            &LaunchBudgets::default(),
        )
        .unwrap();
    let pane = target.pane().unwrap().clone();
    assert!(pane.pane_id.starts_with('%'));
    assert_eq!(pane.server_pid, Some(server.pid()));
    assert!(pane.owned);

    assert_eq!(tmux.presence(&target, soon()).unwrap(), Presence::Running);
    // tmux knows nothing of agents: its inspection and listing carry no agent status.
    assert_eq!(tmux.inspect(&target, soon()).unwrap().agent, None);
    assert!(
        tmux.list(soon())
            .unwrap()
            .iter()
            .any(|row| row.pane_id == pane.pane_id && row.agent.is_none())
    );
    let screen = wait_for("the greeting", PATIENCE, || {
        let text = tmux.read_tail(&target, 50, soon()).unwrap();
        text.contains("hello-from-child").then_some(text)
    });
    assert!(
        screen.contains(&format!("surface={}", pane.pane_id)),
        "{screen}"
    );
    assert!(
        tmux.list(soon())
            .unwrap()
            .iter()
            .any(|row| row.pane_id == pane.pane_id)
    );

    tmux.send_keys(
        &target,
        &[Key::Text("typed words".into()), Key::Enter],
        soon(),
    )
    .unwrap();
    let status = wait_for("the exit", PATIENCE, || {
        match tmux.presence(&target, soon()).unwrap() {
            // tmux marks the pane dead when its terminal closes and records the status when
            // it reaps the process, a moment apart.
            Presence::Exited {
                status: Some(status),
            } => Some(status),
            // tmux 3.3 can miss the SIGCHLD and never record the status; the shell's sentinel
            // on the kept screen is then the evidence, as herd-watch reads it.
            Presence::Exited { status: None } => {
                let screen = tmux.read_tail(&target, 50, soon()).unwrap();
                screen.contains("__SUBAGENT_DONE_3__").then_some(3)
            }
            _ => None,
        }
    });
    assert_eq!(status, 3);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("answer.txt")).unwrap(),
        "got:typed words\n"
    );
    // The pane outlives its command, so its screen stays readable. (Its very last line may be
    // lost when tmux reaps the command before it has read the pty, which is why a recorded exit
    // status, when there is one, is the evidence and the sentinel only stands in for it.)
    assert!(
        tmux.read_tail(&target, 50, soon())
            .unwrap()
            .contains("hello-from-child")
    );

    assert_eq!(close_confirmed(&tmux, &target, soon()), Closed::Confirmed);
    assert_eq!(tmux.presence(&target, soon()).unwrap(), Presence::Absent);
    assert!(matches!(
        tmux.close(&target, soon()),
        Err(Error::NotFound { .. })
    ));
    assert!(matches!(
        tmux.read_tail(&target, 5, soon()),
        Err(Error::NotFound { .. })
    ));
}

#[test]
fn tmux_text_ending_in_a_semicolon_arrives_whole() {
    let server = Server::start();
    let tmux = server.surface();
    let dir = tempfile::tempdir().unwrap();
    let body = "read -r one; read -r two; printf '%s|%s\\n' \"$one\" \"$two\" > answer.tmp; \
                mv answer.tmp answer.txt; echo __SUBAGENT_DONE_0__";
    let path = script(dir.path(), "typist", &tmux, body);
    let session = dir.path().join("s.jsonl");
    let target = tmux
        .launch(
            &launch("r1", "typist", dir.path(), &path, &session),
            &LaunchBudgets::default(),
        )
        .unwrap();
    // tmux ends a command at an argument ending in `;` and reads a final `\;` as `;`.
    tmux.send_keys(
        &target,
        &[Key::Text("make; make check;".into()), Key::Enter],
        soon(),
    )
    .unwrap();
    tmux.send_keys(&target, &[Key::Text("a\\;".into()), Key::Enter], soon())
        .unwrap();
    let answer = wait_for("the answer", PATIENCE, || {
        std::fs::read_to_string(dir.path().join("answer.txt")).ok()
    });
    assert_eq!(answer, "make; make check;|a\\;\n");
    assert_eq!(close_confirmed(&tmux, &target, soon()), Closed::Confirmed);
}

/// A child's name and directory are text: tmux expands formats in a window name (`-n`), a pane
/// title (`-T`) and a start directory (`-c`), where `#(…)` runs a command in the server and a
/// final `;` ends the command. Both placements that carry the name are taken: a new session,
/// then a new window of it (no caller's pane to split).
#[test]
fn tmux_names_and_directories_are_data_never_formats_or_commands() {
    let server = TestTmux::start(&pane_vars());
    let tmux = Tmux::with_socket(
        herd_surface::tmux::find_program().unwrap(),
        server.socket_path(),
        None,
    );
    let work = tempfile::tempdir().unwrap();
    let marker = work.path().join("ran");
    let name = format!("n #(touch {}) #{{pane_id}} #[fg=red] ;", marker.display());
    let cwd = work.path().join("w #{pane_id} #(true);");
    std::fs::create_dir(&cwd).unwrap();
    let seen = work.path().join("seen");
    let mut targets = Vec::new();
    for run in ["r1", "r2"] {
        let body = format!("pwd > '{}/{run}.cwd'; exec sleep 30", seen.display());
        std::fs::create_dir_all(&seen).unwrap();
        let scripts = work.path().join(run);
        std::fs::create_dir(&scripts).unwrap();
        let path = script(&scripts, &name, &tmux, &body);
        let session = work.path().join(format!("{run}.jsonl"));
        let target = tmux
            .launch(
                &launch(run, &name, &cwd, &path, &session),
                &LaunchBudgets::default(),
            )
            .unwrap();
        let pane = target.pane().unwrap().pane_id.clone();
        // The body runs after the prologue, which titles the pane.
        let dir = wait_for("the child's directory", PATIENCE, || {
            std::fs::read_to_string(seen.join(format!("{run}.cwd"))).ok()
        });
        assert_eq!(dir.trim_end(), cwd.to_str().unwrap());
        // tmux keeps a style's `##[` as it is, to be drawn as the text `#[`.
        let drawn = name.replace("#[", "##[");
        let title = server.cmd(["display-message", "-p", "-t", &pane, "#{pane_title}"]);
        assert_eq!(
            title.trim_end(),
            drawn,
            "the pane's title is the name, as text"
        );
        let window = server.cmd(["display-message", "-p", "-t", &pane, "#{window_name}"]);
        assert_eq!(
            window.trim_end(),
            drawn,
            "the window's name is the name, as text"
        );
        targets.push(target);
    }
    assert!(!marker.exists(), "a name ran a command in the tmux server");
    for target in &targets {
        assert_eq!(close_confirmed(&tmux, target, soon()), Closed::Confirmed);
    }
}

#[test]
fn tmux_server_without_sessions_gets_a_herd_session() {
    // The test kit's server starts with no session and stays up without one.
    let server = TestTmux::start(&pane_vars());
    let socket = server.socket_path();
    let tmux = Tmux::with_socket(herd_surface::tmux::find_program().unwrap(), socket, None);
    let work = tempfile::tempdir().unwrap();
    let path = script(work.path(), "first", &tmux, "exec sleep 30");
    let session = work.path().join("s.jsonl");
    let target = tmux
        .launch(
            &launch("r1", "first", work.path(), &path, &session),
            &LaunchBudgets::default(),
        )
        .unwrap();
    let pane = target.pane().unwrap().clone();
    assert_eq!(pane.server_pid, Some(server.pid()));
    assert_eq!(tmux.presence(&target, soon()).unwrap(), Presence::Running);
    assert_eq!(close_confirmed(&tmux, &target, soon()), Closed::Confirmed);
    assert!(tmux.list(soon()).unwrap().is_empty());
}

#[test]
fn tmux_pane_of_another_server_is_absent_and_never_closed() {
    let server = Server::start();
    let tmux = server.surface();
    let dir = tempfile::tempdir().unwrap();
    let path = script(dir.path(), "sleeper", &tmux, "exec sleep 30");
    let session = dir.path().join("s.jsonl");
    let target = tmux
        .launch(
            &launch("r2", "sleeper", dir.path(), &path, &session),
            &LaunchBudgets::default(),
        )
        .unwrap();
    let mut stale = target.pane().unwrap().clone();
    stale.server_pid = Some(stale.server_pid.unwrap() + 1);
    let stale = Target::Pane(stale);
    assert_eq!(tmux.presence(&stale, soon()).unwrap(), Presence::Absent);
    assert!(matches!(
        tmux.close(&stale, soon()),
        Err(Error::NotFound { .. })
    ));
    assert_eq!(
        tmux.presence(&target, soon()).unwrap(),
        Presence::Running,
        "the real pane was not touched"
    );

    // A pane herd did not create is never closed.
    let mut foreign = target.pane().unwrap().clone();
    foreign.owned = false;
    assert!(matches!(
        tmux.close(&Target::Pane(foreign), soon()),
        Err(Error::Unsupported { .. })
    ));

    // No server at that socket: every pane of it is gone.
    let gone = Tmux::with_socket(
        herd_surface::tmux::find_program().unwrap(),
        dir.path().join("nothing"),
        None,
    );
    let mut elsewhere = target.pane().unwrap().clone();
    elsewhere.socket = Some(dir.path().join("nothing").to_string_lossy().into_owned());
    assert_eq!(
        gone.presence(&Target::Pane(elsewhere), soon()).unwrap(),
        Presence::Absent
    );
}

#[test]
fn tmux_concurrent_launches_get_distinct_panes() {
    let server = Server::start();
    let tmux = server.surface();
    let dir = tempfile::tempdir().unwrap();
    let targets: Vec<Target> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..20)
            .map(|i| {
                let tmux = tmux.clone();
                let dir = dir.path().to_path_buf();
                scope.spawn(move || {
                    let name = format!("child-{i}");
                    let path = script(&dir, &name, &tmux, "exec sleep 30");
                    let session = dir.join(format!("{name}.jsonl"));
                    let run_id = format!("r{i}");
                    tmux.launch(
                        &launch(&run_id, &name, &dir, &path, &session),
                        &LaunchBudgets::default(),
                    )
                    .unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut ids: Vec<&str> = targets
        .iter()
        .map(|t| t.pane().unwrap().pane_id.as_str())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 20);
    let listed = tmux.list(soon()).unwrap();
    for id in &ids {
        assert!(
            listed.iter().any(|row| row.pane_id == *id),
            "{id} is listed"
        );
    }
}

#[test]
fn tmux_that_hangs_is_a_timeout_not_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("tmux");
    std::fs::write(&fake, "#!/bin/sh\nexec sleep 60\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let tmux = Tmux::with_socket(fake, dir.path().join("sock"), Some("%0".into()));
    let path = dir.path().join("x.sh");
    let session = dir.path().join("s.jsonl");
    let started = Instant::now();
    let err = tmux
        .launch(
            &launch("r3", "x", dir.path(), &path, &session),
            &LaunchBudgets::default().capped(Duration::from_secs(2)),
        )
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10));
    match err {
        LaunchError::Unowned(e) => assert!(e.is_uncertain(), "{e}"),
        other => panic!("expected an unowned uncertain launch, got {other:?}"),
    }
}

/// Writes the runner's identity the way `herd-launch exec` does, from the PID the script wrote.
fn record_runner(dir: &Path, run_id: &str, session: &Path, pid_file: &str) -> identity::Record {
    let pid: u32 = wait_for("the runner's pid", PATIENCE, || {
        std::fs::read_to_string(dir.join(pid_file))
            .ok()
            .and_then(|s| s.trim().parse().ok())
    });
    let record = identity::capture(pid, run_id, session).unwrap();
    assert!(
        record
            .write_once(&herd_protocol::layout::SessionFiles::new(session).process())
            .unwrap()
    );
    record
}

#[test]
fn process_child_is_detached_logged_and_closed_through_its_identity() {
    let dir = tempfile::tempdir().unwrap();
    let art = Artifacts::new(dir.path().join("art"));
    let process = Process::new(art.clone());
    let session = dir.path().join("s.jsonl");
    let body = "echo out-line; echo err-line >&2; sh -c 'echo $$ > runner.pid; exec sleep 30'; \
                rc=$?; printf '{\"format_version\":1,\"exit_code\":%d}\\n' $rc > art/runs/r4.runner-exit.json; \
                echo __SUBAGENT_DONE_${rc}__; exit $rc";
    let path = script(dir.path(), "proc", &process, body);
    let target = process
        .launch(
            &launch("r4", "proc", dir.path(), &path, &session),
            &LaunchBudgets::default(),
        )
        .unwrap();
    let Target::Process(files) = &target else {
        panic!("a process target")
    };
    let runner = record_runner(dir.path(), "r4", &session, "runner.pid");
    assert_eq!(
        process.presence(&target, soon()).unwrap(),
        Presence::Running
    );
    let leader = identity::Record::read(&files.leader).unwrap().unwrap();
    assert_ne!(leader.pid, runner.pid);
    // Presence is the leader's life, and its exit watch stands for it while it runs.
    let watch = process
        .exit_watch(&target)
        .expect("a running launch script can be watched");
    assert!(!watch.has_exited());
    // The script leads a session of its own.
    // SAFETY: getsid has no memory-safety preconditions.
    let sid = unsafe { libc::getsid(leader.pid as i32) };
    assert_eq!(sid, leader.pid as i32);
    wait_for("the output", PATIENCE, || {
        process
            .read_tail(&target, 10, soon())
            .unwrap()
            .contains("out-line")
            .then_some(())
    });
    assert!(
        std::fs::read_to_string(&files.stderr)
            .unwrap()
            .contains("err-line")
    );
    assert!(matches!(
        process.send_keys(&target, &[Key::Escape], soon()),
        Err(Error::Unsupported { .. })
    ));
    // Messages name the key, never a Rust form of it or the caller's text.
    let err = process
        .send_keys(&target, &[Key::Text("secret words".into())], soon())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("send text: the child has no terminal"),
        "{err}"
    );
    assert!(!err.contains("Text(") && !err.contains("secret"), "{err}");

    assert_eq!(
        close_confirmed(&process, &target, soon()),
        Closed::Confirmed
    );
    assert_eq!(identity::judge(&runner), identity::Judgement::Exited);
    let presence = process.presence(&target, soon()).unwrap();
    assert_eq!(presence, Presence::Exited { status: Some(143) });
    assert!(
        watch.has_exited(),
        "the watch turned readable when presence ended"
    );
    assert!(
        process.exit_watch(&target).is_none(),
        "nothing left to watch"
    );
    assert!(
        process
            .read_tail(&target, 1, soon())
            .unwrap()
            .contains("__SUBAGENT_DONE_143__")
    );
}

#[test]
fn process_child_that_ignores_sigterm_is_killed_after_the_grace() {
    let dir = tempfile::tempdir().unwrap();
    let art = Artifacts::new(dir.path().join("art"));
    let process = Process::new(art);
    let session = dir.path().join("s.jsonl");
    let body = "trap '' TERM; sh -c 'trap \"\" TERM; echo $$ > runner.pid; exec sleep 30'";
    let path = script(dir.path(), "stubborn", &process, body);
    let target = process
        .launch(
            &launch("r5", "stubborn", dir.path(), &path, &session),
            &LaunchBudgets::default(),
        )
        .unwrap();
    let runner = record_runner(dir.path(), "r5", &session, "runner.pid");
    let started = Instant::now();
    assert_eq!(
        close_confirmed(&process, &target, soon()),
        Closed::Confirmed
    );
    // SIGTERM was ignored: only SIGKILL, after the grace, ended it.
    assert!(started.elapsed() >= herd_surface::process::TERM_GRACE);
    assert_eq!(identity::judge(&runner), identity::Judgement::Exited);
}

#[test]
fn process_interrupt_is_sigint_to_the_verified_runner() {
    // As in a launcher started in the background: SIGINT ignored. The detached child must get
    // its default back, or the interrupt could never reach it.
    // SAFETY: setting a disposition has no memory-safety preconditions; no test of this binary
    // relies on SIGINT reaching the test process.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
    }
    let dir = tempfile::tempdir().unwrap();
    let art = Artifacts::new(dir.path().join("art"));
    let process = Process::new(art);
    let session = dir.path().join("s.jsonl");
    // The trap is set before the pid is published: the test signals as soon as it reads the pid.
    let body = "sh -c 'trap \"echo interrupted; exit 130\" INT; echo $$ > runner.pid; while :; do sleep 0.05; done'";
    let path = script(dir.path(), "int", &process, body);
    let target = process
        .launch(
            &launch("r6", "int", dir.path(), &path, &session),
            &LaunchBudgets::default(),
        )
        .unwrap();
    record_runner(dir.path(), "r6", &session, "runner.pid");
    process
        .send_keys(&target, &[Key::Interrupt], soon())
        .unwrap();
    wait_for("the interrupt", PATIENCE, || {
        process
            .read_tail(&target, 5, soon())
            .unwrap()
            .contains("interrupted")
            .then_some(())
    });
    wait_for("the exit", PATIENCE, || {
        matches!(
            process.presence(&target, soon()),
            Ok(Presence::Exited { .. })
        )
        .then_some(())
    });
}
