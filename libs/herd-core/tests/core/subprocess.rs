//! Bounded subprocesses against real process trees: budgets, TERM → grace → KILL of the whole
//! group, capped output, filtered environments, cancellation and detached children.
//!
//! Test children are `sh -c` scripts. A script that builds a tree records every PID with its
//! kernel start time, so "gone" can be judged without being fooled by a reused PID. Processes
//! that lose their parent are adopted by whatever reaps orphans on the machine, which may never
//! do it: a zombie counts as gone.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::Duration;

use herd_core::ErrorCode;
use herd_core::subprocess::{
    self, Command, DEFAULT_CAP, Detached, Error, Keep, Output, run, run_with_cancel, spawn_detached,
};
use herd_e2e::wait::wait_for;

const MIB: usize = 1024 * 1024;

/// How long a test waits for something a child does; generous, as the machine may be loaded.
const PATIENCE: Duration = Duration::from_secs(30);

fn sh(script: &str, budget: Duration) -> Command {
    Command::new("sh", budget).args(["-c", script])
}

/// Records the calling shell's PIDs with their start times: `rec PID` appends `PID START`.
const REC: &str = r#"rec() { echo "$1 $(cut -d' ' -f22 "/proc/$1/stat")" >> "$PIDS"; }"#;

/// A tree of four processes that all ignore SIGTERM (an ignored signal survives fork and exec):
/// the shell, a background `sleep`, and a subshell with a `sleep` of its own.
fn stubborn_tree() -> String {
    format!(
        r#"{REC}
trap '' TERM
sleep 60 & rec $!
( sleep 60 & rec $!; wait ) & rec $!
rec $$
echo ready
wait"#
    )
}

/// A PID and the start time it had when the script recorded it.
#[derive(Debug, Clone, Copy)]
struct Recorded {
    pid: u32,
    start: u64,
}

fn read_recorded(path: &Path) -> Vec<Recorded> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let (pid, start) = line.split_once(' ')?;
            Some(Recorded {
                pid: pid.parse().ok()?,
                start: start.trim().parse().ok()?,
            })
        })
        .collect()
}

/// Waits until the script has recorded `n` processes.
fn wait_recorded(path: &Path, n: usize) -> Vec<Recorded> {
    wait_for(&format!("{n} processes recorded"), PATIENCE, || {
        let recorded = read_recorded(path);
        (recorded.len() >= n).then_some(recorded)
    })
}

/// State and start time of `pid` from `/proc/<pid>/stat`, if it exists.
fn proc_stat(pid: u32) -> Option<(char, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the command name: state is field 3 of the line, start time field 22.
    let state = fields.first()?.chars().next()?;
    let start = fields.get(22 - 3)?.parse().ok()?;
    Some((state, start))
}

/// Whether the recorded process still runs: same PID and start time, and not a zombie.
fn running(rec: Recorded) -> bool {
    match proc_stat(rec.pid) {
        Some((state, start)) => start == rec.start && !matches!(state, 'Z' | 'X'),
        None => false,
    }
}

fn assert_all_gone(recorded: &[Recorded]) {
    let left: Vec<_> = recorded.iter().filter(|rec| running(**rec)).collect();
    assert!(left.is_empty(), "still running: {left:?}");
}

#[test]
fn timeout_kills_a_tree_that_ignores_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let cmd = sh(&stubborn_tree(), Duration::from_millis(500))
        .grace(Duration::from_millis(300))
        .env("PIDS", &pids);
    let out = run(&cmd).unwrap();

    let recorded = read_recorded(&pids);
    assert_eq!(recorded.len(), 4, "the script recorded {recorded:?}");
    assert_all_gone(&recorded);
    assert!(out.timed_out);
    assert!(!out.cancelled);
    assert_eq!(out.code, None);
    assert_eq!(out.signal, Some(libc::SIGKILL));
    assert_eq!(out.stdout.text(), "ready\n");
    assert!(!out.success());
}

#[test]
fn timeout_of_an_obedient_child_is_a_sigterm() {
    let out = run(&sh("sleep 60", Duration::from_millis(200))).unwrap();
    assert!(out.timed_out);
    assert_eq!(out.signal, Some(libc::SIGTERM));
    assert_eq!(out.code, None);
}

#[test]
fn a_stopped_child_is_continued_to_receive_sigterm() {
    // Stopped, the shell would only act on SIGTERM once continued: without the SIGCONT it would
    // sit out the whole grace period and die of SIGKILL.
    let cmd = sh("kill -STOP $$; sleep 60", Duration::from_millis(200)).grace(PATIENCE);
    let out = run(&cmd).unwrap();
    assert!(out.timed_out);
    assert_eq!(out.signal, Some(libc::SIGTERM));
}

#[test]
fn what_the_child_leaves_in_its_group_is_stopped_when_it_exits() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    // The leftover ignores SIGTERM and keeps stdout open; the child itself exits at once.
    let script = format!("{REC}\n(trap '' TERM; exec sleep 60) & rec $!\necho done");
    let cmd = sh(&script, PATIENCE)
        .grace(Duration::from_millis(300))
        .env("PIDS", &pids);
    let out = run(&cmd).unwrap();

    let recorded = read_recorded(&pids);
    assert_eq!(recorded.len(), 1);
    assert_all_gone(&recorded);
    assert_eq!(out.code, Some(0));
    assert!(!out.timed_out);
    assert!(out.success());
    assert_eq!(out.stdout.text(), "done\n");
}

#[test]
fn a_process_that_leaves_the_group_does_not_hold_up_the_run() {
    // `setsid` takes the sleep out of the group: it is not ours to kill, and it keeps stdout
    // open. The run must still end when the group is gone, long before the budget.
    let out = run(&sh("setsid sleep 60 & echo $!", Duration::from_secs(20))).unwrap();
    let pid: u32 = out.stdout.text().trim().parse().unwrap();
    let escaped = proc_stat(pid);
    // Clean up the escaped process before asserting, so a failure leaves nothing behind.
    if escaped.is_some_and(|(state, _)| state != 'Z') {
        // SAFETY: kill has no memory effects; the PID was printed by the test's own child.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    }
    assert!(!out.timed_out, "the run waited for the escaped process");
    assert_eq!(out.code, Some(0));
    assert!(
        escaped.is_some(),
        "the escaped process was killed by the run"
    );
}

/// Set in the re-run of this test binary that adopts its orphans.
const ADOPT_PROBE_ENV: &str = "HERD_SUBPROCESS_ADOPT_PROBE";

#[test]
fn a_process_that_adopts_orphans_still_stops_what_its_child_leaves() {
    if std::env::var_os(ADOPT_PROBE_ENV).is_some() {
        assert!(
            subprocess::adopt_orphans(),
            "the kernel refused the subreaper flag"
        );
        // Nothing left: the run ends at once.
        let out = run(&sh("echo alone", PATIENCE)).unwrap();
        assert_eq!(out.stdout.text(), "alone\n");
        let dir = tempfile::tempdir().unwrap();
        let pids = dir.path().join("pids");
        // A leftover that ignores SIGTERM, and one orphaned twice over: its parent, a
        // subshell, exits at once, so both are adopted by this process, not by init.
        let script = format!(
            "{REC}\n(trap '' TERM; exec sleep 60) & rec $!\n\
             ( (trap '' TERM; exec sleep 60) & echo $! > \"$PIDS.inner\" ) \n\
             rec \"$(cat \"$PIDS.inner\")\"\necho done"
        );
        let cmd = sh(&script, PATIENCE)
            .grace(Duration::from_millis(300))
            .env("PIDS", &pids);
        let out = run(&cmd).unwrap();
        let recorded = read_recorded(&pids);
        assert_eq!(recorded.len(), 2, "{}", out.stderr.text());
        assert_all_gone(&recorded);
        assert_eq!(out.stdout.text(), "done\n");
        return;
    }
    let out = rerun_self(
        "a_process_that_adopts_orphans_still_stops_what_its_child_leaves",
        &[(ADOPT_PROBE_ENV, OsStr::new("1"))],
    );
    assert!(
        out.success(),
        "probe failed: {}{}",
        out.stdout.text(),
        out.stderr.text()
    );
}

/// Both streams, concurrently: 50 MiB of zeros between markers on stdout and on stderr.
const FLOOD: &str = "(printf HEAD; head -c 52428800 /dev/zero; printf TAIL) & \
                     (printf HEAD; head -c 52428800 /dev/zero; printf TAIL) >&2 & wait";
const FLOOD_TOTAL: u64 = 52_428_800 + 8;

#[test]
fn fifty_mebibytes_are_capped_to_the_head_or_the_tail() {
    let cmd = sh(FLOOD, PATIENCE)
        .stdout_cap(MIB, Keep::Head)
        .stderr_cap(MIB, Keep::Tail);
    let out = run(&cmd).unwrap();

    assert!(!out.timed_out);
    assert_eq!(out.code, Some(0));
    assert_eq!(out.stdout.total, FLOOD_TOTAL);
    assert_eq!(out.stderr.total, FLOOD_TOTAL);
    assert!(out.stdout.truncated);
    assert!(out.stderr.truncated);
    assert_eq!(out.stdout.bytes.len(), MIB);
    assert_eq!(out.stderr.bytes.len(), MIB);
    assert!(out.stdout.bytes.starts_with(b"HEAD"));
    assert!(out.stdout.bytes[4..].iter().all(|&b| b == 0));
    assert!(out.stderr.bytes.ends_with(b"TAIL"));
    assert!(out.stderr.bytes[..MIB - 4].iter().all(|&b| b == 0));
}

#[test]
fn short_output_is_kept_whole() {
    let out = run(&sh("printf out; printf err >&2", PATIENCE)).unwrap();
    assert_eq!(out.stdout.bytes, b"out");
    assert_eq!(out.stdout.total, 3);
    assert!(!out.stdout.truncated);
    assert_eq!(out.stderr.text(), "err");
    assert!(!out.stderr.truncated);
}

/// Set in the re-run of this test binary that measures its own peak memory.
const MEMORY_PROBE_ENV: &str = "HERD_SUBPROCESS_MEMORY_PROBE";

/// The peak resident set of this process, in KiB.
fn vm_hwm_kib() -> u64 {
    let status =
        std::fs::read_to_string("/proc/self/status").expect("/proc/self/status is readable");
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("Linux reports VmHWM");
    line.split_whitespace()
        .nth(1)
        .and_then(|kib| kib.parse().ok())
        .expect("VmHWM is a number of KiB")
}

#[test]
fn capture_memory_stays_bounded() {
    if let Some(report) = std::env::var_os(MEMORY_PROBE_ENV) {
        // The probe: capture 2 × 50 MiB with the default caps, head and tail, then report the
        // peak memory of the whole process.
        let out = run(&sh(FLOOD, PATIENCE).stderr_cap(DEFAULT_CAP, Keep::Tail)).unwrap();
        assert_eq!(out.stdout.total + out.stderr.total, 2 * FLOOD_TOTAL);
        std::fs::write(report, vm_hwm_kib().to_string()).unwrap();
        return;
    }
    // Run the probe alone in a fresh process, so no other test's memory counts.
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("vm_hwm");
    let out = rerun_self(
        "capture_memory_stays_bounded",
        &[(MEMORY_PROBE_ENV, report.as_os_str())],
    );
    assert!(out.success(), "probe failed: {}", out.stderr.text());
    let peak_kib: u64 = std::fs::read_to_string(&report).unwrap().parse().unwrap();
    // Keeping everything would take more than 100 MiB; the caps keep 2 MiB plus a read buffer.
    assert!(peak_kib < 32 * 1024, "peak memory {peak_kib} KiB");
}

/// Runs this test binary again with only `test` (a test of this module) selected and `env`
/// added.
fn rerun_self(test: &str, env: &[(&str, &OsStr)]) -> Output {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    // The harness names a test by its path below the binary's root: `subprocess::<test>`.
    let module = module_path!()
        .split_once("::")
        .map_or("", |(_, module)| module);
    let test = format!("{module}::{test}");
    let mut cmd = Command::new(exe, PATIENCE * 2).args(["--exact", &test, "--test-threads=1"]);
    for (name, value) in env {
        cmd = cmd.env(name, value);
    }
    run(&cmd).expect("the test binary runs again")
}

/// Set in the re-run of this test binary whose environment carries the variables to filter.
const ENV_PROBE_ENV: &str = "HERD_SUBPROCESS_ENV_PROBE";

#[test]
fn filtered_variables_are_invisible_to_the_child() {
    if let Some(report) = std::env::var_os(ENV_PROBE_ENV) {
        // The probe inherited the variables below, as herd-accept inherits `PI_SUBAGENT_*`
        // from the child session that runs it; the builder filters them by name and prefix.
        let cmd = sh("env", PATIENCE)
            .env_remove("HERD_TEST_DROPPED")
            .env_remove_prefix("PI_SUBAGENT_")
            .env("HERD_TEST_SET", "set")
            .env("PI_SUBAGENT_ID", "set-after-the-filter");
        let out = run(&cmd).unwrap();
        assert!(out.success(), "{}", out.stderr.text());
        std::fs::write(report, &out.stdout.bytes).unwrap();
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("env");
    let inherited = [
        (ENV_PROBE_ENV, report.as_os_str()),
        ("PI_SUBAGENT_ACCEPT_FILE", OsStr::new("/spec.json")),
        ("PI_SUBAGENT_ID", OsStr::new("run-1")),
        ("PI_SUBAGENTS_NEAR_MISS", OsStr::new("kept")),
        ("HERD_TEST_KEPT", OsStr::new("kept")),
        ("HERD_TEST_DROPPED", OsStr::new("dropped")),
    ];
    let out = rerun_self("filtered_variables_are_invisible_to_the_child", &inherited);
    assert!(out.success(), "probe failed: {}", out.stderr.text());

    let env = std::fs::read_to_string(&report).unwrap();
    let vars: Vec<(&str, &str)> = env.lines().filter_map(|l| l.split_once('=')).collect();
    let value = |name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
    assert_eq!(value("PI_SUBAGENT_ACCEPT_FILE"), None);
    assert_eq!(value("HERD_TEST_DROPPED"), None);
    assert_eq!(value("PI_SUBAGENT_ID"), Some("set-after-the-filter"));
    assert_eq!(value("PI_SUBAGENTS_NEAR_MISS"), Some("kept"));
    assert_eq!(value("HERD_TEST_KEPT"), Some("kept"));
    assert_eq!(value("HERD_TEST_SET"), Some("set"));
    let path = std::env::var("PATH").unwrap();
    assert_eq!(
        value("PATH"),
        Some(path.as_str()),
        "inherited PATH is missing"
    );
}

#[test]
fn a_cleared_environment_holds_only_what_was_set_after() {
    let cmd = Command::new("/usr/bin/env", PATIENCE)
        .env("BEFORE", "1")
        .env_clear()
        .env("ONLY", "this");
    let out = run(&cmd).unwrap();
    assert_eq!(out.stdout.text(), "ONLY=this\n");
}

#[test]
fn stdin_bytes_reach_the_child() {
    // Larger than a pipe buffer, so feeding and draining must overlap.
    let input: Vec<u8> = (0..3 * MIB).map(|i| (i % 251) as u8).collect();
    let cmd = Command::new("cat", PATIENCE)
        .stdin_bytes(input.clone())
        .stdout_cap(4 * MIB, Keep::Head);
    let out = run(&cmd).unwrap();
    assert_eq!(out.code, Some(0));
    assert_eq!(out.stdout.total, input.len() as u64);
    assert!(out.stdout.bytes == input, "stdout differs from stdin");
}

#[test]
fn stdin_is_null_by_default_and_unread_input_is_dropped() {
    let out = run(&Command::new("cat", PATIENCE)).unwrap();
    assert_eq!(out.code, Some(0));
    assert!(out.stdout.bytes.is_empty());

    let out = run(&sh("exit 0", PATIENCE).stdin_bytes(vec![b'x'; 3 * MIB])).unwrap();
    assert_eq!(out.code, Some(0));
    assert!(!out.timed_out);
}

/// Set in the re-run of this test binary that leaves SIGPIPE at its default.
const SIGPIPE_PROBE_ENV: &str = "HERD_SUBPROCESS_SIGPIPE_PROBE";

#[test]
fn stdin_left_unread_does_not_kill_a_caller_that_keeps_sigpipe() {
    if std::env::var_os(SIGPIPE_PROBE_ENV).is_some() {
        // A Rust program ignores SIGPIPE; a caller in another language may not.
        // SAFETY: restoring a default disposition installs no handler.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
        for _ in 0..3 {
            let out = run(&sh("exit 0", PATIENCE).stdin_bytes(vec![b'x'; 3 * MIB])).unwrap();
            assert_eq!(out.code, Some(0));
        }
        return;
    }
    let out = rerun_self(
        "stdin_left_unread_does_not_kill_a_caller_that_keeps_sigpipe",
        &[(SIGPIPE_PROBE_ENV, OsStr::new("1"))],
    );
    assert_eq!(out.signal, None, "the probe was killed by a signal");
    assert!(out.success(), "probe failed: {}", out.stderr.text());
}

#[test]
fn exit_code_and_signal_are_reported() {
    let out = run(&sh("sleep 0.1; exit 3", PATIENCE)).unwrap();
    assert_eq!((out.code, out.signal), (Some(3), None));
    assert!(!out.success());
    assert!(out.elapsed >= Duration::from_millis(100));

    let out = run(&sh("kill -USR1 $$", PATIENCE)).unwrap();
    assert_eq!((out.code, out.signal), (None, Some(libc::SIGUSR1)));
    assert!(!out.timed_out);

    let out = run(&sh("true", PATIENCE)).unwrap();
    assert!(out.success());
}

#[test]
fn a_missing_program_is_a_typed_error() {
    let err = run(&Command::new("herd-test-no-such-program", PATIENCE)).unwrap_err();
    assert!(matches!(err, Error::ProgramNotFound { .. }), "{err:?}");
    assert_eq!(err.code(), ErrorCode::Unavailable);
    let reported = herd_core::Error::from(err);
    assert_eq!(reported.code, ErrorCode::Unavailable);
    assert!(
        reported.message.contains("herd-test-no-such-program"),
        "{reported}"
    );
}

#[test]
fn a_missing_working_directory_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let err = run(&sh("true", PATIENCE).cwd(&missing)).unwrap_err();
    assert!(
        matches!(&err, Error::Cwd { path, .. } if *path == missing),
        "{err:?}"
    );
    assert_eq!(err.code(), ErrorCode::NotFound);

    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    let err = run(&sh("true", PATIENCE).cwd(&file)).unwrap_err();
    assert!(matches!(err, Error::Cwd { .. }), "{err:?}");

    let out = run(&sh("pwd", PATIENCE).cwd(dir.path())).unwrap();
    let pwd = PathBuf::from(out.stdout.text().trim());
    assert_eq!(
        pwd.canonicalize().unwrap(),
        dir.path().canonicalize().unwrap()
    );
}

#[test]
fn cancellation_kills_the_group() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    // Budget and grace are long: only the cancel and its own grace can end this run.
    let cmd = sh(&stubborn_tree(), Duration::from_secs(600))
        .grace(Duration::from_secs(600))
        .env("PIDS", &pids);
    let (cancel_tx, cancel_rx) = crossbeam_channel::bounded::<()>(1);
    let runner = thread::spawn(move || {
        run_with_cancel(&cmd, &cancel_rx, Duration::from_millis(300)).unwrap()
    });
    let recorded = wait_recorded(&pids, 4);
    assert!(recorded.iter().all(|rec| running(*rec)), "{recorded:?}");
    cancel_tx.send(()).unwrap();
    let out = runner.join().unwrap();

    assert_all_gone(&recorded);
    assert!(out.cancelled);
    assert!(!out.timed_out);
    assert_eq!(out.signal, Some(libc::SIGKILL));
}

#[test]
fn a_disconnected_cancel_channel_never_cancels() {
    let (cancel_tx, cancel_rx) = crossbeam_channel::bounded::<()>(1);
    drop(cancel_tx);
    let out = run_with_cancel(
        &sh("sleep 0.1; echo finished", PATIENCE),
        &cancel_rx,
        Duration::ZERO,
    )
    .unwrap();
    assert!(!out.cancelled);
    assert_eq!(out.stdout.text(), "finished\n");
}

/// Set in the re-run of this test binary that receives SIGTERM while it runs a check.
const SIGNAL_PROBE_ENV: &str = "HERD_SUBPROCESS_SIGNAL_PROBE";

/// Runs `test` again as the probe, which runs a stubborn tree the way herd-accept runs a check,
/// cancelled by its own termination signals as `cancel` makes them; sends the probe SIGTERM once
/// the tree is up, and checks that the run was cancelled and the whole tree is gone.
fn sigterm_of_the_probe_stops_the_group(
    test: &str,
    cancel: impl FnOnce() -> Box<dyn subprocess::Cancel>,
) {
    if let Some(dir) = std::env::var_os(SIGNAL_PROBE_ENV) {
        // Installing the handlers here, in a process of its own, keeps SIGTERM and SIGINT
        // working for the rest of the tests.
        let dir = PathBuf::from(dir);
        let cancel = cancel();
        std::fs::write(dir.join("probe.pid"), std::process::id().to_string())
            .expect("the probe writes its PID");
        let cmd = sh(&stubborn_tree(), Duration::from_secs(600))
            .grace(Duration::from_secs(600))
            .env("PIDS", dir.join("pids"));
        let out = run_with_cancel(&cmd, cancel.as_ref(), Duration::from_millis(300))
            .expect("the probe's run ends");
        let summary = format!("cancelled={} signal={:?}", out.cancelled, out.signal);
        std::fs::write(dir.join("outcome"), summary).expect("the probe writes its outcome");
        return;
    }
    let dir = tempfile::tempdir().expect("a scratch directory");
    let probe_dir = dir.path().to_path_buf();
    let test = test.to_owned();
    let probe =
        thread::spawn(move || rerun_self(&test, &[(SIGNAL_PROBE_ENV, probe_dir.as_os_str())]));
    let recorded = wait_recorded(&dir.path().join("pids"), 4);
    let probe_pid: libc::pid_t = std::fs::read_to_string(dir.path().join("probe.pid"))
        .expect("the probe wrote its PID")
        .parse()
        .expect("a PID");
    // SAFETY: kill has no memory effects; the probe is our own child, still running (it waits
    // for its check, which cannot end without this signal).
    assert_eq!(unsafe { libc::kill(probe_pid, libc::SIGTERM) }, 0);
    let out = probe.join().expect("the probe thread ends");

    assert!(out.success(), "probe failed: {}", out.stderr.text());
    let outcome =
        std::fs::read_to_string(dir.path().join("outcome")).expect("the probe wrote its outcome");
    assert_eq!(
        outcome,
        format!("cancelled=true signal=Some({})", libc::SIGKILL)
    );
    assert_all_gone(&recorded);
}

#[test]
fn sigterm_of_the_caller_stops_the_group() {
    sigterm_of_the_probe_stops_the_group("sigterm_of_the_caller_stops_the_group", || {
        Box::new(subprocess::TerminationSignals::install().unwrap())
    });
}

#[test]
fn sigterm_of_the_caller_stops_the_group_through_a_channel() {
    sigterm_of_the_probe_stops_the_group(
        "sigterm_of_the_caller_stops_the_group_through_a_channel",
        || Box::new(subprocess::termination_signals().unwrap()),
    );
}

#[test]
fn a_detached_child_has_its_own_session_and_appends_to_its_logs() {
    let dir = tempfile::tempdir().unwrap();
    let (stdin, out_log, err_log) = (
        dir.path().join("stdin"),
        dir.path().join("out.log"),
        dir.path().join("err.log"),
    );
    std::fs::write(&stdin, "from-stdin\n").unwrap();
    std::fs::write(&out_log, "earlier\n").unwrap();
    let script = r#"read line; echo "got $line $HERD_TEST_DETACHED"; echo err >&2; echo ready; exec sleep 60"#;
    let pid = spawn_detached(
        &Detached::new("sh", &out_log, &err_log)
            .args(["-c", script])
            .cwd(dir.path())
            .stdin_file(&stdin)
            .env("HERD_TEST_DETACHED", "yes"),
    )
    .unwrap();

    wait_for("the detached child's log", PATIENCE, || {
        std::fs::read_to_string(&out_log)
            .unwrap()
            .contains("ready")
            .then_some(())
    });
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..]
        .split_whitespace()
        .collect();
    let (ppid, pgrp, sid) = (fields[1], fields[2], fields[3]);
    // Clean up before asserting, so a failure leaves nothing running.
    // SAFETY: kill has no memory effects; the PID was just returned for our own child.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };

    assert_eq!(sid, pid.to_string(), "not a session leader");
    assert_eq!(pgrp, pid.to_string(), "not a group leader");
    assert_ne!(
        ppid,
        std::process::id().to_string(),
        "still our child, to be reaped by us"
    );
    assert_eq!(
        std::fs::read_to_string(&out_log).unwrap(),
        "earlier\ngot from-stdin yes\nready\n"
    );
    assert_eq!(std::fs::read_to_string(&err_log).unwrap(), "err\n");
}

#[test]
fn a_detached_child_that_cannot_start_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let err = spawn_detached(&Detached::new("herd-test-no-such-program", &log, &log)).unwrap_err();
    assert!(matches!(err, Error::ProgramNotFound { .. }), "{err:?}");

    let missing = dir.path().join("missing");
    let err = spawn_detached(&Detached::new("sh", &log, &log).cwd(&missing)).unwrap_err();
    assert!(matches!(err, Error::Cwd { .. }), "{err:?}");

    let err = spawn_detached(&Detached::new("sh", &log, &log).stdin_file(&missing)).unwrap_err();
    assert!(
        matches!(&err, Error::File { path, .. } if *path == missing),
        "{err:?}"
    );
    assert_eq!(err.code(), ErrorCode::Unavailable);
}

#[test]
fn a_script_still_open_for_writing_runs_once_it_is_closed() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("fresh.sh");
    let mut file = std::fs::File::create(&script).unwrap();
    file.write_all(b"#!/bin/sh\necho ran\n").unwrap();
    let mut perms = file.metadata().unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).unwrap();
    // While the writer is open, exec fails with ETXTBSY; it closes a moment later, as a
    // descriptor inherited by another thread's fork does at that child's exec.
    let closer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(50));
        drop(file);
    });
    let out = herd_core::subprocess::run(&herd_core::subprocess::Command::new(
        &script,
        std::time::Duration::from_secs(10),
    ))
    .unwrap();
    closer.join().unwrap();
    assert_eq!(out.stdout.text(), "ran\n");
}
