//! Requests refused before anything is created, and late refusals that change nothing.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use herd_core::error::ErrorCode;
use herd_e2e::cli::Run;
use serde_json::Value;

use crate::support::{Env, refusal, repo_env, script};

#[test]
fn every_request_rule_is_refused_before_anything_is_created() {
    let mut env = Env::new();
    env.set("HERD_PI", script("fake-pi.sh"));
    let base = || serde_json::json!({"name": "worker", "task": "do it"});
    let with = |key: &str, value: Value| {
        let mut r = base();
        r[key] = value;
        r
    };
    let without = |key: &str| {
        let mut r = base();
        r.as_object_mut().unwrap().remove(key);
        r
    };
    let pi = ["spawn", "--request", "-", "--json", "--surface", "process"];
    let cases: Vec<(&str, Value, &str)> = vec![
        ("unknown field", with("colour", "blue".into()), "colour"),
        ("name missing", without("name"), "name"),
        ("task missing", without("task"), "task"),
        ("name wrong type", with("name", 7.into()), "name"),
        (
            "name not a usable label",
            with("name", "bad\nname".into()),
            "name",
        ),
        ("name empty", with("name", "".into()), "name"),
        ("task only whitespace", with("task", "   ".into()), "task"),
        (
            "thinking out of range",
            with("thinking", "extreme".into()),
            "thinking",
        ),
        (
            "persistent wrong type",
            with("persistent", "yes".into()),
            "persistent",
        ),
        (
            "worktree without branch",
            with("worktree", serde_json::json!({"base": "main"})),
            "worktree.branch",
        ),
        (
            "worktree unknown field",
            with("worktree", serde_json::json!({"branch": "b", "x": 1})),
            "worktree.x",
        ),
        (
            "branch starting with a dash",
            with("worktree", serde_json::json!({"branch": "-b"})),
            "worktree.branch",
        ),
        (
            "accept without run",
            with("accept", serde_json::json!({"maxRetries": 1})),
            "accept.run",
        ),
        (
            "accept retries out of range",
            with(
                "accept",
                serde_json::json!({"run": "true", "maxRetries": 6}),
            ),
            "accept.maxRetries",
        ),
        (
            "accept timeout out of range",
            with(
                "accept",
                serde_json::json!({"run": "true", "timeoutSec": 3601}),
            ),
            "accept.timeoutSec",
        ),
        (
            "accept unknown field",
            with("accept", serde_json::json!({"run": "true", "when": "now"})),
            "accept.when",
        ),
        (
            "accept for a persistent child",
            serde_json::json!({"name": "w", "task": "t", "persistent": true, "accept": {"run": "true"}}),
            "accept",
        ),
        (
            "fallback list for a worktree",
            serde_json::json!({"name": "w", "task": "t", "model": "a/b,c/d", "worktree": {"branch": "x"}}),
            "model",
        ),
        (
            "task: prefix not the whole value",
            with("model", "a/b,task:coding".into()),
            "model",
        ),
        (
            "cwd that is not a directory",
            with("cwd", "does/not/exist".into()),
            "cwd",
        ),
        ("unknown role", with("agent", "nobody".into()), "agent"),
        (
            "fork without a parent session",
            with("fork", true.into()),
            "fork",
        ),
        (
            "task category without candidates",
            with("model", "task:coding".into()),
            "model",
        ),
    ];
    for (rule, request, field) in cases {
        let run = env.run(&pi, &request);
        assert_eq!(run.code, 2, "{rule}: {run}");
        assert_eq!(
            refusal(&run).code,
            ErrorCode::InvalidRequest,
            "{rule}: {}",
            run.json()
        );
        assert_eq!(refusal(&run).field.as_deref(), Some(field), "{rule}: {run}");
    }
    // The exec runner's own rules.
    let exec = [
        "spawn",
        "--request",
        "-",
        "--json",
        "--surface",
        "process",
        "--runner",
        "exec",
    ];
    let run = env.run(&exec, &base());
    assert_eq!(
        (run.code, refusal(&run).field.as_deref()),
        (2, Some("argv")),
        "{}",
        run.json()
    );
    let mut args = exec.to_vec();
    args.extend(["--", "true"]);
    for field in ["model", "thinking", "tools", "skills"] {
        let run = env.run(&args, &with(field, "x".into()));
        assert_eq!(
            (run.code, refusal(&run).field.as_deref()),
            (2, Some(field)),
            "{}",
            run.json()
        );
    }
    let run = env.run(
        &[
            "spawn",
            "--request",
            "-",
            "--json",
            "--runner",
            "pi",
            "--",
            "true",
        ],
        &base(),
    );
    assert_eq!(
        (run.code, refusal(&run).field.as_deref()),
        (2, Some("argv")),
        "{}",
        run.json()
    );
    assert!(
        env.run_ids().is_empty(),
        "nothing was created: {:?}",
        env.run_ids()
    );
    assert!(!env.art().join("subagent-scripts").exists());
}

#[test]
fn accept_is_refused_for_a_role_that_does_not_exit_by_itself() {
    let env = Env::with_role("planner", "---\ninteractive: true\n---\nYou plan.\n");
    let request = serde_json::json!({"name": "p", "task": "t", "agent": "planner", "accept": {"run": "true"}});
    let run = env.run(
        &["spawn", "--request", "-", "--json", "--surface", "tmux"],
        &request,
    );
    assert_eq!(
        (run.code, refusal(&run).field.as_deref()),
        (2, Some("accept")),
        "{}",
        run.json()
    );
    // The same role without accept is an interactive child: it needs a terminal.
    let request = serde_json::json!({"name": "p", "task": "t", "agent": "planner"});
    let run = env.run(
        &["spawn", "--request", "-", "--json", "--surface", "process"],
        &request,
    );
    assert_eq!(
        (run.code, refusal(&run).field.as_deref()),
        (2, Some("surface")),
        "{}",
        run.json()
    );
    assert!(env.run_ids().is_empty());
}

/// `run` was refused as an invalid request naming `field` (exit 2), and nothing was written: no
/// file in the artifacts directory, no managed checkout.
fn assert_refused_with_nothing_written(env: &Env, run: &Run, rule: &str, field: &str) {
    assert_eq!(run.code, 2, "{rule}: {run}");
    let refused = refusal(run);
    assert_eq!(refused.code, ErrorCode::InvalidRequest, "{rule}: {run}");
    assert_eq!(refused.field.as_deref(), Some(field), "{rule}: {run}");
    assert_eq!(
        files_under(&env.art()),
        Vec::<PathBuf>::new(),
        "{rule}: files were left"
    );
    assert!(
        !env.dir.path().join("managed").exists(),
        "{rule}: a checkout was made"
    );
}

/// Every file under `dir`, relative to it.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.map(Result::unwrap) {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            } else {
                found.push(path.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    found
}

#[test]
fn a_late_refusal_exits_2_and_changes_nothing() {
    let (mut env, _) = repo_env();
    let outside = tempfile::tempdir().unwrap();
    let cases = [
        (
            "a branch that exists",
            serde_json::json!({"branch": "taken"}),
            "repo",
            "worktree.branch",
        ),
        (
            "a branch with ..",
            serde_json::json!({"branch": "../x"}),
            "repo",
            "worktree.branch",
        ),
        (
            "a branch ending .lock",
            serde_json::json!({"branch": "x.lock"}),
            "repo",
            "worktree.branch",
        ),
        (
            "a base naming no commit",
            serde_json::json!({"branch": "b1", "base": "no-such-rev"}),
            "repo",
            "worktree.base",
        ),
        (
            "a cwd outside any repository",
            serde_json::json!({"branch": "b2"}),
            outside.path().to_str().unwrap(),
            "cwd",
        ),
    ];
    // A Pi child too, so the shared child extension would be installed if anything were.
    let pi = env.work().join("fake-pi");
    std::fs::write(&pi, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&pi, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    env.set("HERD_PI", pi.to_string_lossy());
    for (rule, worktree, cwd, field) in cases {
        let request =
            serde_json::json!({"name": "w", "task": "t", "cwd": cwd, "worktree": worktree});
        for args in [
            &["spawn", "--request", "-", "--json", "--surface", "process"][..],
            &[
                "spawn",
                "--request",
                "-",
                "--json",
                "--surface",
                "process",
                "--runner",
                "exec",
                "--",
                "true",
            ][..],
        ] {
            assert_refused_with_nothing_written(&env, &env.run(args, &request), rule, field);
        }
    }
    // A directory as the request is as unreadable as a missing file.
    let run = env.run(
        &["spawn", "--request", ".", "--json", "--surface", "process"],
        &Value::Null,
    );
    assert_eq!(run.code, 2, "{run}");
    assert_eq!(refusal(&run).code, ErrorCode::InvalidRequest);
    assert_eq!(refusal(&run).field.as_deref(), Some("request"));
    assert_eq!(files_under(&env.art()), Vec::<PathBuf>::new());
}

#[test]
fn a_handoff_that_cannot_work_is_refused_with_nothing_written() {
    let (mut env, _) = repo_env();
    let from = env.work().join("from.jsonl");
    std::fs::write(
        &from,
        "{\"type\":\"session\",\"id\":\"p\"}\n{\"type\":\"message\",\"id\":\"1\",\"parentId\":null}\n",
    )
    .unwrap();
    let pi = env.work().join("fake-pi");
    std::fs::write(&pi, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&pi, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    env.set("HERD_PI", pi.to_string_lossy());
    // A tmux server that is never reached: every refusal comes first.
    env.set(
        "HERD_TMUX_SOCKET",
        env.dir.path().join("no-tmux").to_string_lossy(),
    );
    let repo = env.work().join("repo");
    let from = from.to_string_lossy().into_owned();
    let repo = repo.to_string_lossy().into_owned();
    let missing = env
        .work()
        .join("missing.jsonl")
        .to_string_lossy()
        .into_owned();
    let cases: [(&str, Vec<&str>, &str); 5] = [
        (
            "no terminal",
            vec!["--surface", "process", "--from", &from, "--branch", "b1"],
            "surface",
        ),
        (
            "no session",
            vec!["--surface", "tmux", "--from", &missing, "--branch", "b1"],
            "from",
        ),
        (
            "an unknown leaf",
            vec![
                "--surface",
                "tmux",
                "--from",
                &from,
                "--leaf",
                "9",
                "--branch",
                "b1",
            ],
            "leaf",
        ),
        (
            "a branch that exists",
            vec!["--surface", "tmux", "--from", &from, "--branch", "taken"],
            "branch",
        ),
        (
            "an invalid branch",
            vec!["--surface", "tmux", "--from", &from, "--branch", "x.lock"],
            "branch",
        ),
    ];
    for (rule, extra, field) in cases {
        let mut args = vec!["handoff", "--json", "--cwd", &repo];
        args.extend(extra);
        assert_refused_with_nothing_written(&env, &env.run(&args, &Value::Null), rule, field);
    }
}

/// The README's old tour put the artifacts directory in the project's committed `.herd/`: a
/// directory git tracks files in is refused (exit 2, saying why) before anything is written.
#[test]
fn an_artifacts_directory_among_tracked_files_is_refused() {
    let (mut env, _) = repo_env();
    let repo = env.work().join("repo");
    let sb = herd_e2e::git::Sandbox::new();
    sb.write(&repo, ".herd/worktree.toml", "copy = []\n");
    sb.commit_all(&repo, "herd setup");
    let art = repo.join(".herd");
    std::fs::set_permissions(&art, std::fs::Permissions::from_mode(0o700)).unwrap();
    env.set("HERD_ARTIFACTS", art.to_string_lossy());
    let run = env.spawn_exec(
        "process",
        &serde_json::json!({"name": "n", "task": "t"}),
        &[],
    );
    assert_eq!(run.code, 2, "{run}");
    let refused = refusal(&run);
    assert_eq!(refused.field.as_deref(), Some("--artifacts"), "{run}");
    assert!(
        refused
            .message
            .contains("holds files git tracks (worktree.toml)"),
        "{run}"
    );
    let mut names: Vec<String> = std::fs::read_dir(&art)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["worktree.toml"], "nothing was written");
}
