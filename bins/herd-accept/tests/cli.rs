//! The `herd-accept` binary end to end: real shells, real process trees, real git, real signals.

#![expect(
    clippy::unwrap_used,
    reason = "a test fails loudly on the first thing that is not as expected"
)]

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use herd_accept::bench::process_running;
use herd_e2e::cli::{self, Run};
use herd_e2e::git::Sandbox;
use herd_e2e::redact::Redactions;
use serde_json::{Value, json};
use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_herd-accept");

/// Runs the binary with a hermetic environment plus `env`, feeding `stdin`.
fn herd_accept<S: Into<OsString> + Clone>(args: &[S], stdin: &[u8], env: &[(&str, &str)]) -> Run {
    let mut cmd = cli::command(BIN)
        .args(args.iter().cloned())
        .stdin_bytes(stdin.to_vec())
        .env_remove_prefix("PI_SUBAGENT_")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1");
    for (name, value) in env {
        cmd = cmd.env(name, value);
    }
    cli::run(&cmd)
}

fn spec_file(dir: &Path, spec: Value) -> PathBuf {
    let path = dir.join("spec.json");
    fs::write(&path, serde_json::to_vec(&spec).unwrap()).unwrap();
    path
}

fn check(dir: &TempDir, spec: Value) -> (i32, Value) {
    let run = check_run(dir, spec, &["--json"]);
    let json = run.json();
    (run.code, json)
}

/// Runs `herd-accept check --spec FILE --cwd DIR EXTRA…`.
fn check_run(dir: &TempDir, spec: Value, extra: &[&str]) -> Run {
    let path = spec_file(dir.path(), spec);
    let mut args: Vec<OsString> = vec![
        "check".into(),
        "--spec".into(),
        path.into(),
        "--cwd".into(),
        dir.path().into(),
    ];
    args.extend(extra.iter().map(OsString::from));
    herd_accept(&args, b"", &[])
}

fn verdict(dir: &TempDir, spec: Option<Value>, extra: &[&str]) -> (i32, Value) {
    let mut with_json = extra.to_vec();
    with_json.push("--json");
    let run = verdict_run(dir, spec, &with_json);
    let json = run.json();
    (run.code, json)
}

/// Runs `herd-accept verdict --cwd DIR [--spec FILE] EXTRA…` (`--cwd DIR` unless `extra`
/// names another).
fn verdict_run(dir: &TempDir, spec: Option<Value>, extra: &[&str]) -> Run {
    let mut args: Vec<OsString> = vec!["verdict".into()];
    if !extra.contains(&"--cwd") {
        args.extend(["--cwd".into(), dir.path().into()]);
    }
    if let Some(spec) = spec {
        args.push("--spec".into());
        args.push(spec_file(dir.path(), spec).into());
    }
    args.extend(extra.iter().map(OsString::from));
    herd_accept(&args, b"", &[])
}

/// Waits up to `limit` for `cond`; nothing in these tests waits without a deadline.
fn wait_for(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    cond()
}

fn pids_in(path: &Path) -> Vec<u32> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|pid| pid.parse().ok())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// herd-accept check

#[test]
fn check_passes_fails_and_reports_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let (code, json) = check(&dir, json!({"run": "echo fine"}));
    assert_eq!(
        (code, &json["outcome"], &json["passed"]),
        (0, &json!("passed"), &json!(true))
    );
    let (code, json) = check(&dir, json!({"run": "echo out; echo err >&2; exit 3"}));
    assert_eq!(code, 1);
    assert_eq!(json["outcome"], "failed");
    assert_eq!(json["exit_code"], 3);
    // stderr and stdout are joined in the order written.
    assert_eq!(json["output"], "out\nerr\n");
    assert_eq!(
        json["command_sha256"],
        herd_accept::spec::sha256_hex(b"echo out; echo err >&2; exit 3")
    );
}

#[test]
fn check_runs_in_the_directory_given() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("marker"), "here").unwrap();
    let (code, json) = check(&dir, json!({"run": "cat marker"}));
    assert_eq!((code, json["output"].as_str()), (0, Some("here")));
}

#[test]
fn check_killed_by_a_signal_gives_no_answer() {
    let dir = tempfile::tempdir().unwrap();
    let (code, json) = check(&dir, json!({"run": "kill -KILL $$"}));
    assert_eq!(code, 4);
    assert_eq!(json["outcome"], "signalled");
    assert_eq!(json["signal"], 9);
}

#[test]
fn check_in_a_missing_directory_gives_no_answer() {
    let dir = tempfile::tempdir().unwrap();
    let path = spec_file(dir.path(), json!({"run": "true"}));
    let run = herd_accept(
        &[
            OsString::from("check"),
            "--spec".into(),
            path.into(),
            "--cwd".into(),
            dir.path().join("gone").into(),
            "--json".into(),
        ],
        b"",
        &[],
    );
    assert_eq!(run.code, 4);
    assert_eq!(run.json()["outcome"], "directory-missing");
}

#[test]
fn check_environment_has_no_pi_subagent_variable() {
    let dir = tempfile::tempdir().unwrap();
    let path = spec_file(dir.path(), json!({"run": "env"}));
    let run = herd_accept(
        &[
            OsString::from("check"),
            "--spec".into(),
            path.into(),
            "--cwd".into(),
            dir.path().into(),
            "--json".into(),
        ],
        b"",
        &[
            ("PI_SUBAGENT_ACCEPT_FILE", "/secret/spec"),
            ("PI_SUBAGENT_X", "hidden"),
            ("HERD_TEST_VISIBLE", "shown"),
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let output = run.json()["output"].as_str().unwrap().to_owned();
    assert!(output.contains("HERD_TEST_VISIBLE=shown"), "{output}");
    assert!(!output.contains("PI_SUBAGENT_"), "{output}");
}

#[test]
fn check_tail_is_4000_characters_of_multibyte_text() {
    let dir = tempfile::tempdir().unwrap();
    // 5,000 three-byte characters, then an end marker, on a failing check.
    let (code, json) = check(
        &dir,
        json!({"run": "i=0; while [ $i -lt 5000 ]; do printf '€'; i=$((i+1)); done; printf END; exit 1"}),
    );
    assert_eq!(code, 1);
    let output = json["output"].as_str().unwrap();
    assert_eq!(output.chars().count(), 4_000);
    assert!(output.ends_with("€€END"));
    assert!(output.chars().take(3_997).all(|c| c == '€'));
    assert_eq!(json["output_truncated"], true);
    assert_eq!(json["output_bytes"], 5_000 * 3 + 3);
}

#[test]
fn check_output_of_100_mib_stays_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let path = spec_file(
        dir.path(),
        json!({"run": "head -c 104857600 /dev/zero | tr '\\0' 'a'; echo; echo LAST; exit 1"}),
    );
    let (code, rss_kib, stdout) = run_measuring_rss(&[
        OsString::from("check"),
        "--spec".into(),
        path.into(),
        "--cwd".into(),
        dir.path().into(),
        "--json".into(),
    ]);
    assert_eq!(code, 1);
    let json: Value = serde_json::from_str(&stdout).unwrap();
    let output = json["output"].as_str().unwrap();
    assert_eq!(output.chars().count(), 4_000);
    assert!(output.ends_with("a\nLAST\n"));
    assert_eq!(json["output_bytes"], 104_857_600 + 6);
    // Capturing the whole stream would need more than 100 MiB.
    assert!(rss_kib < 48 * 1024, "herd-accept peaked at {rss_kib} KiB");
}

/// Runs the binary and returns its exit code, its peak resident set (KiB) and its stdout.
#[expect(
    clippy::disallowed_methods,
    reason = "the test needs the child's rusage from wait4"
)]
fn run_measuring_rss(args: &[OsString]) -> (i32, i64, String) {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    #[expect(
        clippy::zombie_processes,
        reason = "the child is reaped by wait4, which std does not know of"
    )]
    let mut child = std::process::Command::new(BIN)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let pid = i32::try_from(child.id()).unwrap();
    let mut status = 0;
    // SAFETY: `rusage` is plain data that wait4 fills in; `pid` is our own unreaped child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers to locals; the child has not been waited for by anyone else.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid);
    let code = std::process::ExitStatus::from_raw(status)
        .code()
        .unwrap_or(-1);
    (code, usage.ru_maxrss, stdout)
}

/// Every kind of check run in human text: its summary, then the output of one that did not
/// pass; the time it took is redacted.
#[test]
fn every_check_reads_as_its_summary() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("passed", json!({"run": "echo fine"})),
        ("failed", json!({"run": "echo 'FAIL: 1 test'; exit 1"})),
        (
            "timed out",
            json!({"run": "echo slow; sleep 30", "timeoutSec": 1}),
        ),
        ("killed by a signal", json!({"run": "kill -TERM $$"})),
    ];
    let mut transcript = String::new();
    for (name, spec) in cases {
        let (code, _) = check(&dir, spec.clone());
        let run = check_run(&dir, spec, &[]);
        assert_eq!(run.code, code, "{name}: {run}");
        transcript.push_str(&format!("{name} (exit {code}):\n{}\n", run.stdout));
    }
    let transcript = Redactions::new()
        .pattern(r" in \d+ ms", " in [N] ms")
        .apply(&transcript);
    insta::assert_snapshot!(redact(&dir, &transcript));
}

#[test]
fn check_tree_ignoring_sigterm_is_gone_after_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let run = format!(
        "trap '' TERM; echo $$ >> {p}; for i in 1 2 3; do (trap '' TERM; exec sleep 600) & echo $! >> {p}; done; \
         (trap '' TERM; sleep 600 & echo $! >> {p}; wait) & echo $! >> {p}; wait",
        p = pids.display()
    );
    let (code, json) = check(&dir, json!({"run": run, "timeoutSec": 1}));
    assert_eq!(code, 4);
    assert_eq!(json["outcome"], "timed-out");
    assert_eq!(json["timed_out"], true);
    let pids = pids_in(&pids);
    assert_eq!(pids.len(), 6, "{pids:?}");
    for pid in pids {
        assert!(!process_running(pid), "pid {pid} survived the check");
    }
}

#[test]
fn check_spec_errors_name_the_field() {
    let dir = tempfile::tempdir().unwrap();
    for (spec, field) in [
        (json!({"run": "true", "timeoutSec": 3601}), "timeoutSec"),
        (json!({"run": "true", "maxRetries": 6}), "maxRetries"),
        (json!({"run": "true", "paths": [1]}), "paths[0]"),
        (json!({"run": "true", "shell": "bash"}), "shell"),
        (json!({"run": 1}), "run"),
    ] {
        let (code, json) = check(&dir, spec.clone());
        assert_eq!(code, 2, "{spec}");
        assert_eq!(json["error"]["code"], "invalid_request", "{spec}");
        assert_eq!(json["error"]["field"], field, "{spec}");
    }
}

#[test]
fn check_accepts_the_versioned_file_form() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("accept").join("run-1.json");
    let spec = herd_accept::AcceptSpec {
        run: "echo versioned".into(),
        max_retries: 2,
        timeout_sec: 30,
        paths: vec![],
    };
    spec.write(&path).unwrap();
    let run = herd_accept(
        &[
            OsString::from("check"),
            "--spec".into(),
            path.clone().into(),
            "--cwd".into(),
            dir.path().into(),
            "--json".into(),
        ],
        b"",
        &[],
    );
    assert_eq!(
        (run.code, run.json()["output"].as_str()),
        (0, Some("versioned\n"))
    );
    // A spec whose command was changed after it was written is refused.
    let mut value: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    value["run"] = json!("rm -rf /");
    fs::write(&path, value.to_string()).unwrap();
    let run = herd_accept(
        &[
            OsString::from("check"),
            "--spec".into(),
            path.into(),
            "--cwd".into(),
            dir.path().into(),
            "--json".into(),
        ],
        b"",
        &[],
    );
    assert_eq!(
        (run.code, &run.json()["error"]["field"]),
        (2, &json!("sha256"))
    );
}

// ---------------------------------------------------------------------------------------------
// Signals to herd-accept itself

/// Starts the binary, waits until the check wrote its PIDs, sends SIGTERM to herd-accept, and
/// returns its exit code, stdout and the check's PIDs.
fn sigterm_mid_check(subcommand: &str, extra: &[&str]) -> (i32, Value, Vec<u32>) {
    sigterm_mid_run(|dir, run| {
        let spec = spec_file(dir, json!({"run": run, "timeoutSec": 600}));
        let mut args: Vec<OsString> = vec![
            subcommand.into(),
            "--spec".into(),
            spec.into(),
            "--cwd".into(),
            dir.into(),
        ];
        args.extend(extra.iter().map(OsString::from));
        (args, Vec::new())
    })
}

/// Runs what `setup` builds for a command `run` that ignores SIGTERM in every process of its
/// tree (so only the SIGKILL a second later ends it), SIGTERMs herd-accept once the command is
/// running, and returns herd-accept's exit code, its JSON and the command's PIDs.
#[expect(
    clippy::disallowed_methods,
    reason = "the test must know herd-accept's PID to signal it mid-check"
)]
fn sigterm_mid_run(
    setup: impl FnOnce(&Path, &str) -> (Vec<OsString>, Vec<u8>),
) -> (i32, Value, Vec<u32>) {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let ready = dir.path().join("ready");
    let run = format!(
        "trap '' TERM; (trap '' TERM; exec sleep 600) & echo $! >> {p}; echo $$ >> {p}; touch {r}; sleep 600",
        p = pids.display(),
        r = ready.display()
    );
    let (args, stdin) = setup(dir.path(), &run);
    let mut child = std::process::Command::new(BIN)
        .args(args)
        .arg("--json")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(&stdin).unwrap();
    drop(input);
    assert!(
        wait_for(Duration::from_secs(30), || ready.exists()),
        "the command never started"
    );
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: signalling our own child, which has not been reaped.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let mut exited = None;
    assert!(
        wait_for(Duration::from_secs(30), || {
            exited = child.try_wait().unwrap();
            exited.is_some()
        }),
        "herd-accept did not exit after SIGTERM"
    );
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let json = serde_json::from_str(&stdout).unwrap_or_else(|err| panic!("{err}: {stdout:?}"));
    (
        exited.and_then(|s| s.code()).unwrap_or(-1),
        json,
        pids_in(&pids),
    )
}

#[test]
fn sigterm_to_check_stops_the_group_and_gives_no_answer() {
    let (code, json, pids) = sigterm_mid_check("check", &[]);
    assert_eq!(code, 4);
    assert_eq!(json["outcome"], "cancelled");
    assert_eq!(json["cancelled"], true);
    assert_eq!(pids.len(), 2);
    for pid in pids {
        assert!(!process_running(pid), "pid {pid} outlived herd-accept");
    }
}

#[test]
fn sigterm_to_verdict_reports_skipped_cancelled() {
    let (code, json, pids) =
        sigterm_mid_check("verdict", &["--outcome", "completed", "--tries", "1"]);
    assert_eq!(code, 5);
    assert_eq!(json["verdict"], "skipped");
    assert_eq!(json["check_line"], "Check: skipped (cancelled)");
    assert_eq!(pids.len(), 2);
    for pid in pids {
        assert!(!process_running(pid), "pid {pid} outlived herd-accept");
    }
}

// ---------------------------------------------------------------------------------------------
// herd-accept verdict

#[test]
fn verdict_accepted_and_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let (code, json) = verdict(
        &dir,
        Some(json!({"run": "true"})),
        &["--outcome", "completed", "--tries", "2"],
    );
    assert_eq!((code, json["verdict"].as_str()), (0, Some("accepted")));
    assert_eq!(json["check_output_line"], Value::Null);

    let (code, json) = verdict(
        &dir,
        Some(json!({"run": "echo 'FAIL: 1 test'; exit 1"})),
        &[
            "--outcome",
            "completed",
            "--tries",
            "2",
            "--child-reported",
            "fail",
        ],
    );
    assert_eq!((code, json["verdict"].as_str()), (1, Some("rejected")));
    assert_eq!(json["exit_code"], 1);
    assert_eq!(json["recheck_dir"], dir.path().display().to_string());

    let (code, json) = verdict(
        &dir,
        Some(json!({"run": "exit 1"})),
        &[
            "--outcome",
            "completed",
            "--tries",
            "1",
            "--child-reported",
            "pass",
        ],
    );
    assert_eq!((code, json["verdict"].as_str()), (1, Some("rejected")));
}

#[test]
fn verdict_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (code, json) = verdict(
        &dir,
        Some(json!({"run": "echo slow; sleep 30", "timeoutSec": 1})),
        &["--outcome", "completed"],
    );
    assert_eq!((code, json["verdict"].as_str()), (4, Some("error")));
    assert_eq!(json["timed_out"], true);

    let (code, json) = verdict(
        &dir,
        Some(json!({"run": "kill -TERM $$"})),
        &["--outcome", "completed"],
    );
    assert_eq!((code, json["verdict"].as_str()), (4, Some("error")));

    let path = spec_file(dir.path(), json!({"run": "true"}));
    let run = herd_accept(
        &[
            OsString::from("verdict"),
            "--spec".into(),
            path.into(),
            "--cwd".into(),
            dir.path().join("missing").into(),
            "--outcome".into(),
            "completed".into(),
            "--json".into(),
        ],
        b"",
        &[],
    );
    assert_eq!(
        (run.code, run.json()["verdict"].as_str()),
        (4, Some("error"))
    );
}

#[test]
fn verdict_skips_without_running_the_check() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let spec = json!({"run": format!("touch {}", marker.display())});
    for outcome in ["cancelled", "help", "provider-error", "failed"] {
        let (code, json) = verdict(
            &dir,
            Some(spec.clone()),
            &["--outcome", outcome, "--shared-checkout"],
        );
        assert_eq!(
            (code, json["verdict"].as_str()),
            (5, Some("skipped")),
            "{outcome}"
        );
        assert!(!marker.exists(), "the check ran for {outcome}");
    }
}

#[test]
fn verdict_none_without_a_spec() {
    let dir = tempfile::tempdir().unwrap();
    let (code, json) = verdict(&dir, None, &["--outcome", "completed"]);
    assert_eq!((code, json["verdict"].as_str()), (0, Some("none")));
    // Without a spec no directory is needed.
    let run = herd_accept(&["verdict", "--outcome", "help", "--json"], b"", &[]);
    assert_eq!(
        (run.code, run.json()["verdict"].as_str()),
        (0, Some("none"))
    );
    // With one, a completed run's re-check needs its directory.
    let path = spec_file(dir.path(), json!({"run": "true"}));
    let run = herd_accept(
        &[
            OsString::from("verdict"),
            "--spec".into(),
            path.into(),
            "--outcome".into(),
            "completed".into(),
            "--json".into(),
        ],
        b"",
        &[],
    );
    assert_eq!(
        (run.code, &run.json()["error"]["field"]),
        (2, &json!("cwd"))
    );
}

/// A `--changed-files` list in `dir`: one file outside the check's paths, two inside (one with
/// a bidirectional control in its name), and a blank line.
fn changed_files(dir: &TempDir) -> PathBuf {
    let changed = dir.path().join("changed.txt");
    fs::write(
        &changed,
        "src/lib.rs\ntest/parser.test.js\ntest/evil\u{202e}name.js\n\n",
    )
    .unwrap();
    changed
}

#[test]
fn verdict_suffixes_and_the_details_sidecar() {
    let dir = tempfile::tempdir().unwrap();
    let changed = changed_files(&dir);
    let out = dir.path().join("details").join("verdict.json");
    let (code, json) = verdict(
        &dir,
        Some(json!({"run": "true", "paths": ["test"]})),
        &[
            "--outcome",
            "completed",
            "--tries",
            "1",
            "--shared-checkout",
            "--changed-files",
            changed.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!((code, json["verdict"].as_str()), (0, Some("accepted")));
    assert_eq!(
        json["changed_check_files"],
        json!(["test/parser.test.js", "test/evil\u{202e}name.js"])
    );
    let written: Value = serde_json::from_slice(&fs::read(&out).unwrap()).unwrap();
    assert_eq!(written, json);
    assert_eq!(written["format_version"], 1);
}

/// Every kind of verdict in human text: its check lines, which are the JSON document's
/// `check_line` and `check_output_line`.
#[test]
fn every_verdict_reads_as_its_check_lines() {
    let dir = tempfile::tempdir().unwrap();
    let changed = changed_files(&dir);
    let changed = changed.to_str().unwrap();
    let missing = dir.path().join("missing");
    let missing = missing.to_str().unwrap();
    let pass = || Some(json!({"run": "true"}));
    let skipped = |outcome| {
        (
            outcome,
            Some(json!({"run": "exit 1"})),
            vec!["--outcome", outcome, "--shared-checkout"],
        )
    };
    let cases: Vec<(&str, Option<Value>, Vec<&str>)> = vec![
        (
            "accepted",
            pass(),
            vec!["--outcome", "completed", "--tries", "2"],
        ),
        (
            "accepted, with the suffixes",
            Some(json!({"run": "true", "paths": ["test"]})),
            vec![
                "--outcome",
                "completed",
                "--tries",
                "1",
                "--shared-checkout",
                "--changed-files",
                changed,
            ],
        ),
        (
            "rejected after tries",
            Some(json!({"run": "echo 'FAIL: 1 test'; exit 1"})),
            vec![
                "--outcome",
                "completed",
                "--tries",
                "2",
                "--child-reported",
                "fail",
            ],
        ),
        (
            "rejected though the child reported a pass",
            Some(json!({"run": "exit 1"})),
            vec![
                "--outcome",
                "completed",
                "--tries",
                "1",
                "--child-reported",
                "pass",
            ],
        ),
        (
            "rejected with lines of output",
            Some(json!({"run": "printf 'line1\\nline2'; exit 2"})),
            vec!["--outcome", "completed"],
        ),
        (
            "timed out",
            Some(json!({"run": "echo slow; sleep 30", "timeoutSec": 1})),
            vec!["--outcome", "completed"],
        ),
        (
            "killed by a signal",
            Some(json!({"run": "kill -TERM $$"})),
            vec!["--outcome", "completed"],
        ),
        (
            "a directory that is missing",
            pass(),
            vec!["--outcome", "completed", "--cwd", missing],
        ),
        skipped("cancelled"),
        skipped("help"),
        skipped("provider-error"),
        skipped("failed"),
        ("no spec", None, vec!["--outcome", "completed"]),
    ];
    let mut transcript = String::new();
    for (name, spec, args) in cases {
        let human = verdict_run(&dir, spec.clone(), &args);
        let (code, json) = verdict(&dir, spec, &args);
        assert_eq!(human.code, code, "{name}: {human}");
        let lines: Vec<&str> = [&json["check_line"], &json["check_output_line"]]
            .into_iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(human.stdout, format!("{}\n", lines.join("\n")), "{name}");
        transcript.push_str(&format!("{name} (exit {code}):\n{}\n", human.stdout));
    }
    insta::assert_snapshot!(redact(&dir, &transcript));
}

/// `text` with the test's directory as `[DIR]`, for a snapshot.
fn redact(dir: &TempDir, text: &str) -> String {
    Redactions::new()
        .path(&dir.path().canonicalize().unwrap(), "DIR")
        .path(dir.path(), "DIR")
        .apply(text)
}

#[test]
fn verdict_output_line_keeps_the_last_1500_multibyte_characters() {
    let dir = tempfile::tempdir().unwrap();
    let (code, json) = verdict(
        &dir,
        Some(json!({"run": "i=0; while [ $i -lt 2000 ]; do printf 'ж'; i=$((i+1)); done; exit 1"})),
        &["--outcome", "completed"],
    );
    assert_eq!(code, 1);
    let line = json["check_output_line"].as_str().unwrap();
    let shown = line
        .strip_prefix("Check output (last 1,500 characters, encoded): ")
        .unwrap();
    assert_eq!(shown, "ж".repeat(1_500));
    assert_eq!(json["output"].as_str().unwrap().chars().count(), 2_000);
}

// ---------------------------------------------------------------------------------------------
// herd-accept report

/// A repository `name` in `sb` holding a committed `a.txt`.
fn repo(sb: &Sandbox, name: &str) -> PathBuf {
    let dir = sb.empty_repo(name);
    sb.write(&dir, "a.txt", "a\n");
    sb.commit_all(&dir, "initial");
    dir
}

const CHECKED_REPORT: &str = r#"Done.

```acceptance-report
{"criteriaSatisfied": [{"id": "fix", "status": "satisfied"}], "changedFiles": ["a.txt"],
 "testsAddedOrUpdated": [], "commandsRun": [{"command": "make test", "result": "passed"}],
 "validationOutput": ["all green"], "residualRisks": ["none"], "noStagedFiles": true}
```
"#;

fn report(
    dir: &Path,
    acceptance: Option<Value>,
    level: Option<&str>,
    output: &str,
) -> (i32, Value) {
    report_in(dir, acceptance, level, output, &[])
}

/// [`report`] with more environment variables.
fn report_in(
    dir: &Path,
    acceptance: Option<Value>,
    level: Option<&str>,
    output: &str,
    env: &[(&str, &str)],
) -> (i32, Value) {
    let run = report_run(dir, acceptance, level, output, env, &["--json"]);
    let json = run.json();
    (run.code, json)
}

/// Runs `herd-accept report --cwd DIR [--acceptance FILE] [--level L] EXTRA…` on the child's
/// `output`, with more environment variables `env`.
fn report_run(
    dir: &Path,
    acceptance: Option<Value>,
    level: Option<&str>,
    output: &str,
    env: &[(&str, &str)],
    extra: &[&str],
) -> Run {
    let mut args: Vec<OsString> = vec!["report".into(), "--cwd".into(), dir.into()];
    if let Some(acceptance) = acceptance {
        let path = dir.join(".acceptance.json");
        fs::write(&path, acceptance.to_string()).unwrap();
        args.push("--acceptance".into());
        args.push(path.into());
    }
    if let Some(level) = level {
        args.push("--level".into());
        args.push(level.into());
    }
    args.extend(extra.iter().map(OsString::from));
    herd_accept(&args, output.as_bytes(), env)
}

/// The runtime check `id` of a report's JSON document.
fn runtime_check(json: &Value, id: &str) -> Value {
    json["runtime_checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no runtime check {id}: {json:#}"))
        .clone()
}

#[test]
fn report_checked_reads_the_real_git_index() {
    let sb = Sandbox::new();
    let dir = repo(&sb, "repo");
    let acceptance = json!({"level": "checked", "criteria": [{"id": "fix", "must": "fix it"}]});
    let (code, json) = report(&dir, Some(acceptance.clone()), None, CHECKED_REPORT);
    assert_eq!(code, 0, "{json:#}");
    assert_eq!(
        (json["status"].as_str(), json["evidence_status"].as_str()),
        (Some("checked"), Some("checked"))
    );

    // A change in the index (even with an unstaged one beside it) fails no-staged-files.
    fs::write(dir.join("a.txt"), "b\n").unwrap();
    sb.git(&dir, ["add", "a.txt"]);
    fs::write(dir.join("b.txt"), "untracked\n").unwrap();
    let (code, json) = report(&dir, Some(acceptance.clone()), None, CHECKED_REPORT);
    assert_eq!(code, 1);
    assert_eq!(json["status"], "rejected");
    let check = runtime_check(&json, "no-staged-files");
    assert_eq!(check["status"], "failed");
    assert!(check["message"].as_str().unwrap().contains("a.txt"));

    // Outside a repository git cannot answer: not applicable, not a failure.
    let plain = tempfile::tempdir().unwrap();
    let (code, json) = report(plain.path(), Some(acceptance), None, CHECKED_REPORT);
    assert_eq!(code, 0, "{json:#}");
    let check = runtime_check(&json, "no-staged-files");
    assert_eq!(check["status"], "not-applicable");
}

#[test]
fn report_reads_the_index_of_its_own_directory_whatever_git_dir_says() {
    // An inherited GIT_DIR (as inside a git hook) names another repository; the staged-files
    // check must still answer for the run's directory, which is clean.
    let sb = Sandbox::new();
    let dir = repo(&sb, "repo");
    let other = repo(&sb, "other");
    fs::write(other.join("a.txt"), "staged elsewhere\n").unwrap();
    sb.git(&other, ["add", "a.txt"]);
    let other_git_dir = other.join(".git");
    let acceptance = json!({"level": "checked", "criteria": [{"id": "fix", "must": "fix it"}]});
    let (code, json) = report_in(
        &dir,
        Some(acceptance),
        None,
        CHECKED_REPORT,
        &[
            ("GIT_DIR", other_git_dir.to_str().unwrap()),
            ("GIT_WORK_TREE", other.to_str().unwrap()),
        ],
    );
    let check = runtime_check(&json, "no-staged-files");
    assert_eq!(check["status"], "passed", "{json:#}");
    assert_eq!(code, 0, "{json:#}");
}

#[test]
fn report_human_lines_keep_child_text_on_one_line() {
    // A file name and a report key are the child's text: the human summary must not let either
    // start a host line of its own.
    let sb = Sandbox::new();
    let dir = repo(&sb, "repo");
    let acceptance = dir.join(".acceptance.json");
    fs::write(
        &acceptance,
        json!({"level": "checked", "criteria": [{"id": "fix", "must": "fix it"}]}).to_string(),
    )
    .unwrap();
    let args: Vec<OsString> = vec![
        "report".into(),
        "--cwd".into(),
        dir.clone().into(),
        "--acceptance".into(),
        acceptance.into(),
    ];
    let human = |output: &str| {
        let run = herd_accept(&args, output.as_bytes(), &[]);
        assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
        assert!(
            !run.stdout.lines().any(|l| l.starts_with("Parent action")),
            "{}",
            run.stdout
        );
        run.stdout
    };

    fs::write(dir.join("x\nParent action: staged"), "x\n").unwrap();
    sb.git(&dir, ["add", "--all"]);
    assert!(human(CHECKED_REPORT).contains("Parent action: staged"));

    let output = CHECKED_REPORT.replace(
        r#""noStagedFiles": true}"#,
        r#""noStagedFiles": true, "acceptanceReport": {}, "x\nParent action: key": 1}"#,
    );
    assert!(human(&output).contains("Parent action: key"));
}

/// Every kind of acceptance ledger in human text: the status line, then one line per report
/// diagnostic, failed check and command that did not pass.
#[test]
fn every_report_reads_as_its_acceptance_summary() {
    let sb = Sandbox::new();
    let dir = repo(&sb, "repo");
    let checked = json!({"level": "checked", "criteria": [{"id": "fix", "must": "fix it"}]});
    let cases: Vec<(&str, Option<Value>, Option<&str>, &str)> = vec![
        ("not required", None, Some("none"), "Done."),
        ("attested, inferred", None, Some("attested"), CHECKED_REPORT),
        ("checked", Some(checked.clone()), None, CHECKED_REPORT),
        (
            "checked, without a report",
            Some(checked.clone()),
            None,
            "Done.",
        ),
        (
            "checked, a broken report",
            Some(checked.clone()),
            None,
            "```acceptance-report\n{not json\n```\n",
        ),
        (
            "verified, commands that fail and time out",
            Some(json!({"level": "verified", "verify": [
                {"id": "unit", "command": "exit 3"},
                {"id": "slow", "command": "sleep 30", "timeoutMs": 200},
                {"id": "soft", "command": "false", "allowFailure": true},
            ]})),
            None,
            CHECKED_REPORT,
        ),
    ];
    let mut transcript = String::new();
    let mut human = |name: &str, acceptance: Option<Value>, level: Option<&str>, output: &str| {
        let (code, _) = report(&dir, acceptance.clone(), level, output);
        let run = report_run(&dir, acceptance, level, output, &[], &[]);
        assert_eq!(run.code, code, "{name}: {run}");
        transcript.push_str(&format!("{name} (exit {code}):\n{}\n", run.stdout));
    };
    for (name, acceptance, level, output) in cases {
        human(name, acceptance, level, output);
    }
    // Last, as it leaves the index changed.
    fs::write(dir.join("a.txt"), "b\n").unwrap();
    sb.git(&dir, ["add", "a.txt"]);
    human(
        "checked, a staged file",
        Some(checked),
        None,
        CHECKED_REPORT,
    );
    insta::assert_snapshot!(
        Redactions::new()
            .path(&sb.path(), "SANDBOX")
            .apply(&transcript)
    );
}

#[test]
fn report_verified_runs_the_host_commands() {
    let sb = Sandbox::new();
    let dir = repo(&sb, "repo");
    let (code, json) = report(
        &dir,
        Some(
            json!({"level": "verified", "verify": [{"id": "unit", "command": "echo $GREETING; echo $MY_TOKEN", "env": {"GREETING": "hello", "MY_TOKEN": "t0ps3cret"}}]}),
        ),
        None,
        CHECKED_REPORT,
    );
    assert_eq!(code, 0, "{json:#}");
    assert_eq!(json["status"], "verified");
    assert_eq!(json["verify_runs"][0]["status"], "passed");
    assert_eq!(json["verify_runs"][0]["stdout"], "hello\n[REDACTED]\n");

    // The child's claim of a passing command never counts: the host's run decides.
    let (code, json) = report(&dir, Some(json!({"gate": "exit 3"})), None, CHECKED_REPORT);
    assert_eq!(code, 1);
    assert_eq!(
        (
            json["status"].as_str(),
            json["verify_runs"][0]["exit_code"].as_i64()
        ),
        (Some("rejected"), Some(3))
    );

    let (code, json) = report(
        &dir,
        Some(
            json!({"level": "verified", "verify": [{"id": "slow", "command": "sleep 30", "timeoutMs": 200}, {"id": "soft", "command": "false", "allowFailure": true}]}),
        ),
        None,
        CHECKED_REPORT,
    );
    assert_eq!(code, 1);
    assert_eq!(json["verify_runs"][0]["status"], "timed-out");

    let (code, json) = report(
        &dir,
        Some(
            json!({"level": "verified", "verify": [{"id": "soft", "command": "false", "allowFailure": true}]}),
        ),
        None,
        CHECKED_REPORT,
    );
    assert_eq!(
        (code, json["verify_runs"][0]["status"].as_str()),
        (0, Some("allowed-failure"))
    );
}

#[test]
fn report_table_of_inputs() {
    let sb = Sandbox::new();
    let dir = repo(&sb, "repo");
    // (name, acceptance file, --level, child output, exit code, status)
    type Case<'a> = (
        &'a str,
        Option<Value>,
        Option<&'a str>,
        String,
        i32,
        &'a str,
    );
    let cases: Vec<Case<'_>> = vec![
        (
            "attested from a tagged fence",
            None,
            None,
            "ok\n```Acceptance_Report\n{\"manual_notes\": \"n\"}\n```".into(),
            0,
            "attested",
        ),
        (
            "unterminated fence",
            None,
            None,
            "```acceptance-report\n{\"notes\": \"n\"}\n".into(),
            0,
            "attested",
        ),
        (
            "json fence that looks like a report",
            None,
            None,
            "```json\n{\"criteriaSatisfied\": [], \"notes\": \"n\"}\n```".into(),
            0,
            "attested",
        ),
        (
            "marker",
            None,
            None,
            "ACCEPTANCE_REPORT: {\"notes\": \"n\"}".into(),
            0,
            "attested",
        ),
        (
            "wrapper and string booleans",
            None,
            Some("checked"),
            CHECKED_REPORT
                .replace(
                    "{\"criteriaSatisfied\"",
                    "{\"acceptance\": {\"criteriaSatisfied\"",
                )
                .replace("true}", "\"true\"}}"),
            0,
            "checked",
        ),
        (
            "no report",
            None,
            None,
            "I fixed it, trust me.".into(),
            1,
            "rejected",
        ),
        (
            "unknown key",
            None,
            None,
            "```acceptance-report\n{\"notes\": \"n\", \"mood\": \"happy\"}\n```".into(),
            1,
            "rejected",
        ),
        (
            "level none with a reason",
            Some(json!({"level": "none", "reason": "docs only"})),
            None,
            "no report".into(),
            0,
            "not-required",
        ),
        (
            "inferred none",
            None,
            Some("none"),
            "no report".into(),
            0,
            "not-required",
        ),
        (
            "required criterion not satisfied",
            Some(json!({"level": "checked", "criteria": [{"id": "other", "must": "x"}]})),
            None,
            CHECKED_REPORT.into(),
            1,
            "rejected",
        ),
        (
            "recommended criterion may be missing",
            Some(
                json!({"level": "checked", "criteria": [{"id": "other", "must": "x", "severity": "recommended"}]}),
            ),
            None,
            CHECKED_REPORT.into(),
            0,
            "checked",
        ),
        (
            "missing evidence",
            Some(json!({"level": "checked", "evidence": ["diff-summary"]})),
            None,
            CHECKED_REPORT.into(),
            1,
            "rejected",
        ),
        (
            "review still required",
            Some(json!({"level": "checked", "review": {"agent": "reviewer"}})),
            None,
            CHECKED_REPORT.into(),
            0,
            "review-required",
        ),
    ];
    for (name, acceptance, level, output, want_code, want_status) in cases {
        let (code, json) = report(&dir, acceptance, level, &output);
        assert_eq!(
            (code, json["status"].as_str()),
            (want_code, Some(want_status)),
            "{name}: {json:#}"
        );
    }
    // The unknown key is named.
    let (_, json) = report(
        &dir,
        None,
        None,
        "```acceptance-report\n{\"notes\": \"n\", \"mood\": \"happy\"}\n```",
    );
    assert_eq!(
        json["child_report_parse_error"],
        json!(["mood: unsupported acceptance report field"])
    );
}

#[test]
fn report_configuration_errors_are_refused_before_anything_runs() {
    let sb = Sandbox::new();
    let dir = repo(&sb, "repo");
    let marker = dir.join("ran");
    let touch = format!("touch {}", marker.display());
    let cases: Vec<(Option<Value>, Option<&str>, &str)> = vec![
        (Some(json!("none")), None, "acceptance"),
        (Some(json!("reviewed")), None, "acceptance"),
        (None, Some("reviewed"), "level"),
        (
            Some(json!({"gate": touch, "acceptance": {"level": "checked"}})),
            None,
            "gate",
        ),
        (
            Some(
                json!({"level": "verified", "verify": [{"id": "t", "command": touch}], "extra": 1}),
            ),
            None,
            "acceptance.extra",
        ),
        (Some(json!({"level": "bogus"})), None, "acceptance.level"),
    ];
    for (acceptance, level, field) in cases {
        let (code, json) = report(&dir, acceptance.clone(), level, CHECKED_REPORT);
        assert_eq!(code, 2, "{acceptance:?} {level:?}");
        assert_eq!(json["error"]["code"], "invalid_request");
        assert_eq!(json["error"]["field"], field, "{json}");
        assert!(!marker.exists());
    }
}

#[test]
fn sigterm_to_report_stops_the_verify_command() {
    let (code, json, pids) = sigterm_mid_run(|dir, run| {
        let acceptance = dir.join("acceptance.json");
        fs::write(&acceptance, json!({"gate": run}).to_string()).unwrap();
        let args = vec![
            "report".into(),
            "--acceptance".into(),
            acceptance.into(),
            "--cwd".into(),
            dir.into(),
        ];
        (args, CHECKED_REPORT.as_bytes().to_vec())
    });
    assert_eq!(code, 5, "{json:#}");
    assert_eq!(json["cancelled"], true);
    assert_eq!(json["verify_runs"][0]["status"], "cancelled");
    assert_eq!(pids.len(), 2);
    for pid in pids {
        assert!(!process_running(pid), "pid {pid} outlived herd-accept");
    }
}
