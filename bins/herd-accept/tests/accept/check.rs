//! `herd-accept check`: outcomes, the directory and environment it runs in, bounded output, its
//! summary, timeouts and spec errors.

use std::ffi::OsString;
use std::fs;

use herd_accept::bench::process_running;
use herd_core::error::{ErrorCode, ErrorDocument};
use herd_e2e::redact::Redactions;
use herd_protocol::accept::{AcceptCheck, CheckOutcome};
use serde_json::{Value, json};

use crate::support::{
    BIN, check, check_doc, check_doc_in, check_run, herd_accept, pids_in, redact, spec_file,
};

#[test]
fn check_passes_fails_and_reports_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let (code, doc) = check_doc(&dir, json!({"run": "echo fine"}));
    assert_eq!(
        (code, doc.run.outcome, doc.passed),
        (0, CheckOutcome::Passed, true)
    );
    let (code, doc) = check_doc(&dir, json!({"run": "echo out; echo err >&2; exit 3"}));
    assert_eq!(code, 1);
    assert_eq!(doc.run.outcome, CheckOutcome::Failed);
    assert_eq!(doc.run.exit_code, Some(3));
    // stderr and stdout are joined in the order written.
    assert_eq!(doc.run.output, "out\nerr\n");
    assert_eq!(
        doc.command_sha256,
        herd_accept::spec::sha256_hex(b"echo out; echo err >&2; exit 3")
    );
}

#[test]
fn check_runs_in_the_directory_given() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("marker"), "here").unwrap();
    let (code, doc) = check_doc(&dir, json!({"run": "cat marker"}));
    assert_eq!((code, doc.run.output.as_str()), (0, "here"));
}

#[test]
fn check_killed_by_a_signal_gives_no_answer() {
    let dir = tempfile::tempdir().unwrap();
    let (code, doc) = check_doc(&dir, json!({"run": "kill -KILL $$"}));
    assert_eq!(code, 4);
    assert_eq!(doc.run.outcome, CheckOutcome::Signalled);
    assert_eq!(doc.run.signal, Some(9));
}

#[test]
fn check_in_a_missing_directory_gives_no_answer() {
    let dir = tempfile::tempdir().unwrap();
    let (code, doc) = check_doc_in(&dir, json!({"run": "true"}), &dir.path().join("gone"), &[]);
    assert_eq!(code, 4);
    assert_eq!(doc.run.outcome, CheckOutcome::DirectoryMissing);
}

#[test]
fn check_environment_has_no_pi_subagent_variable() {
    let dir = tempfile::tempdir().unwrap();
    let (code, doc) = check_doc_in(
        &dir,
        json!({"run": "env"}),
        dir.path(),
        &[
            ("PI_SUBAGENT_ACCEPT_FILE", "/secret/spec"),
            ("PI_SUBAGENT_X", "hidden"),
            ("HERD_TEST_VISIBLE", "shown"),
        ],
    );
    assert_eq!(code, 0, "{doc:?}");
    let output = doc.run.output;
    assert!(output.contains("HERD_TEST_VISIBLE=shown"), "{output}");
    assert!(!output.contains("PI_SUBAGENT_"), "{output}");
}

#[test]
fn check_tail_is_4000_characters_of_multibyte_text() {
    let dir = tempfile::tempdir().unwrap();
    // 5,000 three-byte characters, then an end marker, on a failing check.
    let (code, doc) = check_doc(
        &dir,
        json!({"run": "i=0; while [ $i -lt 5000 ]; do printf '€'; i=$((i+1)); done; printf END; exit 1"}),
    );
    assert_eq!(code, 1);
    let output = doc.run.output.as_str();
    assert_eq!(output.chars().count(), 4_000);
    assert!(output.ends_with("€€END"));
    assert!(output.chars().take(3_997).all(|c| c == '€'));
    assert!(doc.run.output_truncated);
    assert_eq!(doc.run.output_bytes, 5_000 * 3 + 3);
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
    let doc: AcceptCheck = serde_json::from_str(&stdout).unwrap();
    let output = doc.run.output.as_str();
    assert_eq!(output.chars().count(), 4_000);
    assert!(output.ends_with("a\nLAST\n"));
    assert_eq!(doc.run.output_bytes, 104_857_600 + 6);
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
    let (code, doc) = check_doc(&dir, json!({"run": run, "timeoutSec": 1}));
    assert_eq!(code, 4);
    assert_eq!(doc.run.outcome, CheckOutcome::TimedOut);
    assert!(doc.run.timed_out);
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
        let run = check_run(&dir, spec.clone(), &["--json"]);
        assert_eq!(run.code, 2, "{spec}: {run}");
        let error = run.doc::<ErrorDocument>().error;
        assert_eq!(error.code, ErrorCode::InvalidRequest, "{spec}: {run}");
        assert_eq!(error.field.as_deref(), Some(field), "{spec}: {run}");
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
    let check_file = || {
        herd_accept(
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
        )
    };
    let run = check_file();
    let doc: AcceptCheck = run.doc();
    assert_eq!((run.code, doc.run.output.as_str()), (0, "versioned\n"));
    // A spec whose command was changed after it was written is refused.
    let mut value: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    value["run"] = json!("rm -rf /");
    fs::write(&path, value.to_string()).unwrap();
    let run = check_file();
    assert_eq!(run.code, 2, "{run}");
    let error = run.doc::<ErrorDocument>().error;
    assert_eq!(error.field.as_deref(), Some("sha256"), "{run}");
}
