//! SIGTERM to herd-accept itself while a check runs: the group is stopped and nothing is
//! answered, or the verdict is skipped as cancelled.

use std::ffi::OsString;

use herd_accept::bench::process_running;
use herd_protocol::accept::{AcceptCheck, CheckOutcome, Verdict, VerdictDetails};
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
    let doc: AcceptCheck = serde_json::from_value(json).unwrap();
    assert_eq!(code, 4);
    assert_eq!(doc.run.outcome, CheckOutcome::Cancelled);
    assert!(doc.run.cancelled);
    assert_eq!(pids.len(), 2);
    for pid in pids {
        assert!(!process_running(pid), "pid {pid} outlived herd-accept");
    }
}

#[test]
fn sigterm_to_verdict_reports_skipped_cancelled() {
    let (code, json, pids) =
        sigterm_mid_check("verdict", &["--outcome", "completed", "--tries", "1"]);
    let doc: VerdictDetails = serde_json::from_value(json).unwrap();
    assert_eq!(code, 5);
    assert_eq!(doc.verdict, Verdict::Skipped);
    assert_eq!(doc.check_line(), "Check: skipped (cancelled)");
    assert_eq!(pids.len(), 2);
    for pid in pids {
        assert!(!process_running(pid), "pid {pid} outlived herd-accept");
    }
}
