//! Running the binary with a hermetic environment, its spec files, and a run interrupted by
//! SIGTERM.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_e2e::cli::{self, Run};
use herd_e2e::redact::Redactions;
use herd_e2e::wait::wait_for;
use herd_protocol::accept::{AcceptCheck, VerdictDetails};
use serde_json::Value;
use tempfile::TempDir;

pub const BIN: &str = env!("CARGO_BIN_EXE_herd-accept");

/// Runs the binary with a hermetic environment plus `env`, feeding `stdin`.
pub fn herd_accept<S: Into<OsString> + Clone>(
    args: &[S],
    stdin: &[u8],
    env: &[(&str, &str)],
) -> Run {
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

pub fn spec_file(dir: &Path, spec: Value) -> PathBuf {
    let path = dir.join("spec.json");
    fs::write(&path, serde_json::to_vec(&spec).unwrap()).unwrap();
    path
}

pub fn check(dir: &TempDir, spec: Value) -> (i32, Value) {
    let run = check_run(dir, spec, &["--json"]);
    let json = run.json();
    (run.code, json)
}

/// Runs `herd-accept check --spec FILE --cwd DIR --json` and reads the run it prints.
pub fn check_doc(dir: &TempDir, spec: Value) -> (i32, AcceptCheck) {
    let run = check_run(dir, spec, &["--json"]);
    let doc = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|err| panic!("check printed no run ({err}): {run}"));
    (run.code, doc)
}

/// Runs `herd-accept check --spec FILE --cwd DIR EXTRA…`.
pub fn check_run(dir: &TempDir, spec: Value, extra: &[&str]) -> Run {
    check_run_in(dir, spec, dir.path(), extra, &[])
}

/// Like [`check_doc`], the check run in `cwd` with more environment `vars`.
pub fn check_doc_in(
    dir: &TempDir,
    spec: Value,
    cwd: &Path,
    vars: &[(&str, &str)],
) -> (i32, AcceptCheck) {
    let run = check_run_in(dir, spec, cwd, &["--json"], vars);
    let doc = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|err| panic!("check printed no run ({err}): {run}"));
    (run.code, doc)
}

/// Runs `herd-accept check --spec FILE --cwd CWD EXTRA…` (the spec file in `dir`) with more
/// environment `vars`.
fn check_run_in(
    dir: &TempDir,
    spec: Value,
    cwd: &Path,
    extra: &[&str],
    vars: &[(&str, &str)],
) -> Run {
    let path = spec_file(dir.path(), spec);
    let mut args: Vec<OsString> = vec![
        "check".into(),
        "--spec".into(),
        path.into(),
        "--cwd".into(),
        cwd.into(),
    ];
    args.extend(extra.iter().map(OsString::from));
    herd_accept(&args, b"", vars)
}

/// Runs `herd-accept verdict … EXTRA… --json` (as [`verdict_run`]) and reads the verdict it
/// prints.
pub fn verdict(dir: &TempDir, spec: Option<Value>, extra: &[&str]) -> (i32, VerdictDetails) {
    let mut with_json = extra.to_vec();
    with_json.push("--json");
    let run = verdict_run(dir, spec, &with_json);
    let doc = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|err| panic!("verdict printed no verdict ({err}): {run}"));
    (run.code, doc)
}

/// Runs `herd-accept verdict --cwd DIR [--spec FILE] EXTRA…` (`--cwd DIR` unless `extra`
/// names another).
pub fn verdict_run(dir: &TempDir, spec: Option<Value>, extra: &[&str]) -> Run {
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

pub fn pids_in(path: &Path) -> Vec<u32> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|pid| pid.parse().ok())
        .collect()
}

/// Runs what `setup` builds for a command `run` that ignores SIGTERM in every process of its
/// tree (so only the SIGKILL a second later ends it), SIGTERMs herd-accept once the command is
/// running, and returns herd-accept's exit code, its JSON and the command's PIDs.
#[expect(
    clippy::disallowed_methods,
    reason = "the test must know herd-accept's PID to signal it mid-check"
)]
pub fn sigterm_mid_run(
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
    wait_for("the command to start", Duration::from_secs(30), || {
        ready.exists().then_some(())
    });
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: signalling our own child, which has not been reaped.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let exited = wait_for(
        "herd-accept to exit after SIGTERM",
        Duration::from_secs(30),
        || child.try_wait().unwrap(),
    );
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let json = serde_json::from_str(&stdout).unwrap_or_else(|err| panic!("{err}: {stdout:?}"));
    (exited.code().unwrap_or(-1), json, pids_in(&pids))
}

/// `text` with the test's directory as `[DIR]`, for a snapshot.
pub fn redact(dir: &TempDir, text: &str) -> String {
    Redactions::new()
        .path(&dir.path().canonicalize().unwrap(), "DIR")
        .path(dir.path(), "DIR")
        .apply(text)
}
