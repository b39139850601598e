//! `herd-accept report`: the real git index, verify commands on the host, the table of inputs,
//! configuration errors, and its human lines.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use herd_accept::bench::process_running;
use herd_core::error::{ErrorCode, ErrorDocument};
use herd_e2e::cli::Run;
use herd_e2e::git::Sandbox;
use herd_e2e::redact::Redactions;
use herd_protocol::accept::{CheckStatus, Ledger, RuntimeCheck, Status, VerifyStatus};
use serde_json::{Value, json};

use crate::support::{herd_accept, sigterm_mid_run};

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
) -> (i32, Ledger) {
    report_in(dir, acceptance, level, output, &[])
}

/// [`report`] with more environment variables.
fn report_in(
    dir: &Path,
    acceptance: Option<Value>,
    level: Option<&str>,
    output: &str,
    env: &[(&str, &str)],
) -> (i32, Ledger) {
    let run = report_run(dir, acceptance, level, output, env, &["--json"]);
    let ledger = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|err| panic!("report printed no ledger ({err}): {run}"));
    (run.code, ledger)
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

/// The runtime check `id` of a report's ledger.
fn runtime_check<'l>(ledger: &'l Ledger, id: &str) -> &'l RuntimeCheck {
    ledger
        .runtime_checks
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no runtime check {id}: {ledger:#?}"))
}

#[test]
fn report_checked_reads_the_real_git_index() {
    let sb = Sandbox::new();
    let dir = repo(&sb, "repo");
    let acceptance = json!({"level": "checked", "criteria": [{"id": "fix", "must": "fix it"}]});
    let (code, ledger) = report(&dir, Some(acceptance.clone()), None, CHECKED_REPORT);
    assert_eq!(code, 0, "{ledger:#?}");
    assert_eq!(
        (ledger.status, ledger.evidence_status),
        (Status::Checked, Status::Checked)
    );

    // A change in the index (even with an unstaged one beside it) fails no-staged-files.
    fs::write(dir.join("a.txt"), "b\n").unwrap();
    sb.git(&dir, ["add", "a.txt"]);
    fs::write(dir.join("b.txt"), "untracked\n").unwrap();
    let (code, ledger) = report(&dir, Some(acceptance.clone()), None, CHECKED_REPORT);
    assert_eq!(code, 1);
    assert_eq!(ledger.status, Status::Rejected);
    let check = runtime_check(&ledger, "no-staged-files");
    assert_eq!(check.status, CheckStatus::Failed);
    assert!(check.message.contains("a.txt"));

    // Outside a repository git cannot answer: not applicable, not a failure.
    let plain = tempfile::tempdir().unwrap();
    let (code, ledger) = report(plain.path(), Some(acceptance), None, CHECKED_REPORT);
    assert_eq!(code, 0, "{ledger:#?}");
    let check = runtime_check(&ledger, "no-staged-files");
    assert_eq!(check.status, CheckStatus::NotApplicable);
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
    let (code, ledger) = report_in(
        &dir,
        Some(acceptance),
        None,
        CHECKED_REPORT,
        &[
            ("GIT_DIR", other_git_dir.to_str().unwrap()),
            ("GIT_WORK_TREE", other.to_str().unwrap()),
        ],
    );
    let check = runtime_check(&ledger, "no-staged-files");
    assert_eq!(check.status, CheckStatus::Passed, "{ledger:#?}");
    assert_eq!(code, 0, "{ledger:#?}");
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
    let (code, ledger) = report(
        &dir,
        Some(
            json!({"level": "verified", "verify": [{"id": "unit", "command": "echo $GREETING; echo $MY_TOKEN", "env": {"GREETING": "hello", "MY_TOKEN": "t0ps3cret"}}]}),
        ),
        None,
        CHECKED_REPORT,
    );
    assert_eq!(code, 0, "{ledger:#?}");
    assert_eq!(ledger.status, Status::Verified);
    assert_eq!(ledger.verify_runs[0].status, VerifyStatus::Passed);
    assert_eq!(ledger.verify_runs[0].stdout, "hello\n[REDACTED]\n");

    // The child's claim of a passing command never counts: the host's run decides.
    let (code, ledger) = report(&dir, Some(json!({"gate": "exit 3"})), None, CHECKED_REPORT);
    assert_eq!(code, 1);
    assert_eq!(
        (ledger.status, ledger.verify_runs[0].exit_code),
        (Status::Rejected, Some(3))
    );

    let (code, ledger) = report(
        &dir,
        Some(
            json!({"level": "verified", "verify": [{"id": "slow", "command": "sleep 30", "timeoutMs": 200}, {"id": "soft", "command": "false", "allowFailure": true}]}),
        ),
        None,
        CHECKED_REPORT,
    );
    assert_eq!(code, 1);
    assert_eq!(ledger.verify_runs[0].status, VerifyStatus::TimedOut);

    let (code, ledger) = report(
        &dir,
        Some(
            json!({"level": "verified", "verify": [{"id": "soft", "command": "false", "allowFailure": true}]}),
        ),
        None,
        CHECKED_REPORT,
    );
    assert_eq!(
        (code, ledger.verify_runs[0].status),
        (0, VerifyStatus::AllowedFailure)
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
        let (code, ledger) = report(&dir, acceptance, level, &output);
        assert_eq!(
            (code, ledger.status.as_str()),
            (want_code, want_status),
            "{name}: {ledger:#?}"
        );
    }
    // The unknown key is named.
    let (_, ledger) = report(
        &dir,
        None,
        None,
        "```acceptance-report\n{\"notes\": \"n\", \"mood\": \"happy\"}\n```",
    );
    assert_eq!(
        ledger.child_report_parse_error,
        Some(vec!["mood: unsupported acceptance report field".to_owned()])
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
        let run = report_run(
            &dir,
            acceptance.clone(),
            level,
            CHECKED_REPORT,
            &[],
            &["--json"],
        );
        assert_eq!(run.code, 2, "{acceptance:?} {level:?}");
        let error = run.doc::<ErrorDocument>().error;
        assert_eq!(error.code, ErrorCode::InvalidRequest, "{run}");
        assert_eq!(error.field.as_deref(), Some(field), "{run}");
        assert!(!marker.exists());
    }
}

#[test]
fn sigterm_to_report_stops_the_verify_command() {
    let (code, ledger, pids) = sigterm_mid_run(|dir, run| {
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
    let ledger: Ledger = serde_json::from_value(ledger).unwrap();
    assert_eq!(code, 5, "{ledger:#?}");
    assert!(ledger.cancelled);
    assert_eq!(ledger.verify_runs[0].status, VerifyStatus::Cancelled);
    assert_eq!(pids.len(), 2);
    for pid in pids {
        assert!(!process_running(pid), "pid {pid} outlived herd-accept");
    }
}
