//! `herd-accept verdict`: accepted, rejected, errors, skips, no spec, the suffixes and details
//! sidecar, and its check lines.

use std::ffi::OsString;
use std::fs;
use std::path::PathBuf;

use herd_core::error::ErrorDocument;
use herd_protocol::accept::{Verdict, VerdictDetails};
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::support::{herd_accept, redact, spec_file, verdict, verdict_run};

#[test]
fn verdict_accepted_and_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let (code, doc) = verdict(
        &dir,
        Some(json!({"run": "true"})),
        &["--outcome", "completed", "--tries", "2"],
    );
    assert_eq!((code, doc.verdict), (0, Verdict::Accepted));
    assert_eq!(doc.check_output_line, None);

    let (code, doc) = verdict(
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
    assert_eq!((code, doc.verdict), (1, Verdict::Rejected));
    assert_eq!(doc.exit_code, Some(1));
    assert_eq!(doc.recheck_dir, Some(dir.path().display().to_string()));

    let (code, doc) = verdict(
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
    assert_eq!((code, doc.verdict), (1, Verdict::Rejected));
}

#[test]
fn verdict_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (code, doc) = verdict(
        &dir,
        Some(json!({"run": "echo slow; sleep 30", "timeoutSec": 1})),
        &["--outcome", "completed"],
    );
    assert_eq!((code, doc.verdict), (4, Verdict::Error));
    assert!(doc.timed_out);

    let (code, doc) = verdict(
        &dir,
        Some(json!({"run": "kill -TERM $$"})),
        &["--outcome", "completed"],
    );
    assert_eq!((code, doc.verdict), (4, Verdict::Error));

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
    let doc: VerdictDetails = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!((run.code, doc.verdict), (4, Verdict::Error));
}

#[test]
fn verdict_skips_without_running_the_check() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let spec = json!({"run": format!("touch {}", marker.display())});
    for outcome in ["cancelled", "help", "provider-error", "failed"] {
        let (code, doc) = verdict(
            &dir,
            Some(spec.clone()),
            &["--outcome", outcome, "--shared-checkout"],
        );
        assert_eq!((code, doc.verdict), (5, Verdict::Skipped), "{outcome}");
        assert!(!marker.exists(), "the check ran for {outcome}");
    }
}

#[test]
fn verdict_none_without_a_spec() {
    let dir = tempfile::tempdir().unwrap();
    let (code, doc) = verdict(&dir, None, &["--outcome", "completed"]);
    assert_eq!((code, doc.verdict), (0, Verdict::None));
    // Without a spec no directory is needed.
    let run = herd_accept(&["verdict", "--outcome", "help", "--json"], b"", &[]);
    let doc: VerdictDetails = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!((run.code, doc.verdict), (0, Verdict::None));
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
    let error = run.doc::<ErrorDocument>().error;
    assert_eq!((run.code, error.field.as_deref()), (2, Some("cwd")));
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
    let (code, doc) = verdict(
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
    assert_eq!((code, doc.verdict), (0, Verdict::Accepted));
    assert_eq!(
        doc.changed_check_files,
        ["test/parser.test.js", "test/evil\u{202e}name.js"]
    );
    let written: VerdictDetails = serde_json::from_slice(&fs::read(&out).unwrap()).unwrap();
    assert_eq!(written, doc);
    assert_eq!(written.format_version, 1);
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
        let (code, doc) = verdict(&dir, spec, &args);
        assert_eq!(human.code, code, "{name}: {human}");
        let lines: Vec<&str> = [Some(doc.check_line()), doc.check_output_line.as_deref()]
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(human.stdout, format!("{}\n", lines.join("\n")), "{name}");
        transcript.push_str(&format!("{name} (exit {code}):\n{}\n", human.stdout));
    }
    insta::assert_snapshot!(redact(&dir, &transcript));
}

#[test]
fn verdict_output_line_keeps_the_last_1500_multibyte_characters() {
    let dir = tempfile::tempdir().unwrap();
    let (code, doc) = verdict(
        &dir,
        Some(json!({"run": "i=0; while [ $i -lt 2000 ]; do printf 'ж'; i=$((i+1)); done; exit 1"})),
        &["--outcome", "completed"],
    );
    assert_eq!(code, 1);
    let line = doc.check_output_line.as_deref().unwrap();
    let shown = line
        .strip_prefix("Check output (last 1,500 characters, encoded): ")
        .unwrap();
    assert_eq!(shown, "ж".repeat(1_500));
    assert_eq!(doc.output.chars().count(), 2_000);
}
