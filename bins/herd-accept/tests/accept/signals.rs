//! SIGTERM to herd-accept itself while a check runs: the group is stopped and nothing is
//! answered, or the verdict is skipped as cancelled.

use std::ffi::OsString;

use herd_accept::bench::process_running;
use serde_json::{Value, json};

use crate::support::{sigterm_mid_run, spec_file};

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
