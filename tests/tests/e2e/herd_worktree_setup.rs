//! A child launched into a worktree, and a `/worktree` handoff, start in a worktree that setup
//! made ready: the repository's `.herd/worktree.toml` (approved with `herd-worktree trust`, the
//! parent trusting the project) copied its ignored `.env`, linked its `node_modules`, ran its
//! setup command, and gave a `HERD_PORT` that the child's environment carries too.

#![expect(
    clippy::unwrap_used,
    reason = "scenario steps fail loudly on a broken fixture"
)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_e2e::git::Sandbox;
use herd_e2e::herd::{Herd, Where, decode, read_json};
use herd_e2e::model::{ModelServer, Script, Text, ToolCall};
use herd_e2e::pi::PiEnv;
use herd_protocol::launch::docs::{HandoffDoc, HandoffStatus};
use herd_protocol::result::Outcome;
use herd_protocol::worktree::Manifest;
use herd_protocol::worktree::manifest::SetupKind;
use serde_json::json;

const PROJECT_FILE: &str = "copy = [\".env\"]\n\
setup = [\"echo \\\"setup ran for $HERD_BRANCH on port $HERD_PORT\\\" > setup-out.txt\"]\n\
\n\
[[link]]\n\
path = \"node_modules\"\n\
strategy = \"symlink\"\n";

/// A repository whose committed `.herd/worktree.toml` copies `.env`, links `node_modules` and
/// runs one setup command; `.env` and `node_modules` are there, ignored.
fn setup_repo(sb: &Sandbox) -> PathBuf {
    let repo = sb.repo("repo");
    sb.write(&repo, ".gitignore", ".env\nnode_modules/\nsetup-out.txt\n");
    sb.write(&repo, ".herd/worktree.toml", PROJECT_FILE);
    sb.commit_all(&repo, "setup description");
    sb.write(&repo, ".env", "SECRET=from-the-source\n");
    sb.write(&repo, "node_modules/dep/index.js", "module.exports = 42;\n");
    repo
}

/// Where, in its worktree, the process running there writes what it sees.
const EVIDENCE: &str = "evidence.txt";

/// The shell lines that write what the process running in the worktree sees to [`EVIDENCE`].
const EVIDENCE_SCRIPT: &str = "{ echo \"pwd=$(pwd -P)\"; echo \"env=$(cat .env)\"; \
    echo \"link=$(readlink node_modules)\"; echo \"dep=$(cat node_modules/dep/index.js)\"; \
    echo \"port=$HERD_PORT\"; echo \"setup=$(cat setup-out.txt)\"; } > evidence.tmp \
    && mv evidence.tmp evidence.txt";

/// Approves the project file as the user would.
fn approve(herd: &Herd<'_>, repo: &Path) {
    let out = herd.run_in(
        repo,
        "herd-worktree",
        ["trust", "--yes", "--cwd", repo.to_str().unwrap()],
    );
    assert!(out.success(), "herd-worktree trust:\n{out}");
}

/// The one worktree manifest of the artifacts directory.
fn the_manifest(artifacts: &Path) -> Manifest {
    let files: Vec<PathBuf> = std::fs::read_dir(artifacts.join("worktree-runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    decode(&read_json(&files[0]).unwrap())
}

/// The port worktree setup gave, from its record in `manifest`.
fn setup_port(manifest: &Manifest) -> u64 {
    let port = manifest.setup.as_ref().and_then(|s| s.port);
    u64::from(port.unwrap_or_else(|| panic!("setup gave a port: {manifest:#?}")))
}

/// What the process in the worktree saw is setup's work: the copied `.env`, the link to the
/// source's `node_modules`, the setup command's file, and the manifest's port.
fn assert_set_up(evidence: &str, worktree: &Path, repo: &Path, branch: &str, port: u64) {
    let line = |key: &str| -> String {
        evidence
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("no {key} in {evidence}"))
            .to_owned()
    };
    let worktree = std::fs::canonicalize(worktree).unwrap();
    assert_eq!(line("pwd"), worktree.to_str().unwrap(), "{evidence}");
    assert_eq!(line("env"), "SECRET=from-the-source", "{evidence}");
    let source_modules = std::fs::canonicalize(repo).unwrap().join("node_modules");
    assert_eq!(line("link"), source_modules.to_str().unwrap(), "{evidence}");
    assert_eq!(line("dep"), "module.exports = 42;", "{evidence}");
    assert_eq!(line("port"), port.to_string(), "{evidence}");
    assert_eq!(
        line("setup"),
        format!("setup ran for {branch} on port {port}"),
        "{evidence}"
    );
}

#[test]
fn a_child_spawned_into_a_worktree_starts_in_what_setup_made() {
    let sb = Sandbox::new();
    let repo = setup_repo(&sb);
    let model = ModelServer::start(
        Script::new()
            .step(ToolCall::bash(EVIDENCE_SCRIPT))
            .step(Text("REPORT: looked around")),
    );
    let env = PiEnv::new(&model);
    let mut herd = Herd::new(&env, Where::Process);
    herd.set_var("HERD_WORKTREE_ROOT", env.root().join("worktrees"));
    herd.set_var("HERD_PROJECT_TRUST", "trusted");
    approve(&herd, &repo);

    let ack = herd.launch_in(
        &repo,
        &json!({
            "name": "Looker",
            "task": "Look at the worktree",
            "model": Herd::model("fake-model"),
            "worktree": {"branch": "feature/setup"},
        }),
    );
    let worktree = PathBuf::from(&ack.worktree.as_ref().expect("a worktree").path);
    let (code, result) = herd.wait_result(&ack.run_id);
    assert_eq!(code, 0, "{result:#?}");
    assert_eq!(result.outcome, Outcome::Completed, "{result:#?}");

    let manifest = the_manifest(herd.artifacts());
    let port = setup_port(&manifest);
    let seen =
        std::fs::read_to_string(worktree.join(EVIDENCE)).expect("the child wrote what it saw");
    assert_set_up(&seen, &worktree, &repo, "feature/setup", port);
    let kinds: Vec<SetupKind> = manifest
        .setup
        .iter()
        .flat_map(|s| &s.entries)
        .map(|e| e.kind)
        .collect();
    assert_eq!(
        kinds,
        [SetupKind::Copy, SetupKind::Symlink],
        "{manifest:#?}"
    );
}

#[test]
fn a_worktree_handoff_starts_its_pi_in_what_setup_made() {
    let sb = Sandbox::new();
    let repo = setup_repo(&sb);
    let model = ModelServer::start(Script::new().step(Text("unused")));
    let env = PiEnv::new(&model);
    let mut herd = Herd::new(&env, Where::Tmux);
    herd.set_var("HERD_WORKTREE_ROOT", env.root().join("worktrees"));
    herd.set_var("HERD_PROJECT_TRUST", "trusted");
    approve(&herd, &repo);
    // The handed-off Pi: a stand-in that writes what it sees in its worktree, then stays, so
    // the handoff can confirm it as the runner of the pane.
    let pi = env.root().join("fake-pi");
    std::fs::write(
        &pi,
        format!("#!/bin/sh\n{EVIDENCE_SCRIPT}\nexec sleep 60\n"),
    )
    .unwrap();
    std::fs::set_permissions(&pi, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    herd.set_var("HERD_PI", &pi);
    let from = env.root().join("from.jsonl");
    std::fs::write(
        &from,
        "{\"type\":\"session\",\"id\":\"p\"}\n{\"type\":\"message\",\"id\":\"1\",\"parentId\":null}\n",
    )
    .unwrap();

    let out = herd.run_in(
        &repo,
        "herd-launch",
        [
            "handoff",
            "--json",
            "--surface",
            "tmux",
            "--cwd",
            repo.to_str().unwrap(),
            "--from",
            from.to_str().unwrap(),
            "--branch",
            "feat-handoff",
        ],
    );
    assert!(out.success(), "herd-launch handoff:\n{out}");
    let doc: HandoffDoc = out.doc();
    assert_eq!(doc.status, HandoffStatus::Started, "{doc:#?}");
    let worktree = PathBuf::from(&doc.worktree.path);

    let port = setup_port(&the_manifest(herd.artifacts()));
    let seen = herd_e2e::wait::wait_for(
        "what the handed-off Pi saw",
        Duration::from_secs(30),
        || std::fs::read_to_string(worktree.join(EVIDENCE)).ok(),
    );
    assert_set_up(&seen, &worktree, &repo, "feat-handoff", port);
    // The running Pi itself carries the port.
    let pid = doc.pid.expect("the handed-off Pi's PID");
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let want = format!("HERD_PORT={port}");
    assert!(
        environ.split(|b| *b == 0).any(|v| v == want.as_bytes()),
        "the handed-off Pi has {want}"
    );
}

/// The background command of the test below: a dev server of two processes, the first writing
/// its PID.
const DEV_SERVER: &str = "background = [\"echo $$ > dev.pid; sleep 300 & exec sleep 300\"]\n";

#[test]
fn cleanup_stops_the_worktrees_own_background_command_and_removes_it() {
    let sb = Sandbox::new();
    let repo = sb.repo("repo");
    sb.write(&repo, ".gitignore", "dev.pid\n");
    sb.write(&repo, ".herd/worktree.toml", DEV_SERVER);
    sb.commit_all(&repo, "a dev server");
    let model = ModelServer::start(Script::new().step(Text("unused")));
    let env = PiEnv::new(&model);
    let mut herd = Herd::new(&env, Where::Process);
    herd.set_var("HERD_WORKTREE_ROOT", env.root().join("worktrees"));
    approve(&herd, &repo);

    // From a command line the approval is enough: the dev server starts with the worktree.
    let out = herd.run_in(
        &repo,
        "herd-worktree",
        [
            "create",
            "--cwd",
            repo.to_str().unwrap(),
            "--branch",
            "dev",
            "--run-id",
            "devrun1",
            "--surface",
            "git",
            "--json",
        ],
    );
    assert!(out.success(), "herd-worktree create:\n{out}");
    let worktree = PathBuf::from(herd_e2e::herd::json_doc(&out)["path"].as_str().unwrap());
    let server: u32 =
        herd_e2e::wait::wait_for("the dev server's pid", Duration::from_secs(10), || {
            std::fs::read_to_string(worktree.join("dev.pid"))
                .ok()
                .and_then(|s| s.trim().parse().ok())
        });
    assert!(herd_e2e::proc::process_alive(server));

    // The list says it is the worktree's own, and that removal stops it.
    let out = herd.run_in(&repo, "herd-cleanup", ["list"]);
    assert!(out.success(), "herd-cleanup list:\n{out}");
    let command = "`echo $$ > dev.pid; sleep 300 & exec sleep 300`";
    assert!(
        out.stdout.contains(&format!(
            "warning: its own background command {command} runs as "
        )),
        "{out}"
    );
    assert!(
        out.stdout
            .contains("setup started it, so `herd-cleanup remove` stops it, the whole session, before it removes the checkout"),
        "{out}"
    );
    assert!(out.stdout.contains("[eligible]"), "{out}");
    assert!(!out.stdout.contains("blocker"), "{out}");

    // An explicit removal stops it, all of it, and removes the checkout.
    let out = herd.run_in(&repo, "herd-cleanup", ["remove", "dev"]);
    assert!(out.success(), "herd-cleanup remove:\n{out}");
    assert!(
        out.stdout
            .contains(&format!("stopped its own background command {command} (")),
        "{out}"
    );
    assert!(out.stdout.starts_with("removed "), "{out}");
    assert!(!worktree.exists(), "{out}");
    assert!(
        !out.stdout.contains(" runs as "),
        "said once, before: {out}"
    );
    herd_e2e::wait::wait_for("the dev server to be gone", Duration::from_secs(10), || {
        (!herd_e2e::proc::process_alive(server)).then_some(())
    });
}
