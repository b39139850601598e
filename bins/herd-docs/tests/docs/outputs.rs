//! Real output against the schemas: each test runs the code a binary prints with (its `run`
//! entry point, or the function that builds the document), on real files, real git
//! repositories and real processes, and validates every document and sidecar it produces
//! against the committed schema. A derived schema (or an amendment) that drifts from what the code prints fails here.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Parser;
use herd_core::error::{ErrorCode, ErrorDocument};
use herd_protocol::launch::docs::{ModelCatalog, RolesListing};
use herd_protocol::layout::Artifacts;
use herd_protocol::watch::WatchEvent;
use herd_protocol::worktree::{InspectedState, WorktreeInspect};
use serde_json::{Value, json};

use crate::support::{self, assert_valid, decode};

/// The JSON document a command prints with `--json` (what `herd_cli::main` writes to stdout).
fn printed(output: Result<herd_cli::Output, herd_core::Error>) -> Value {
    match output {
        Ok(output) => output.json,
        Err(err) => err.to_json(),
    }
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

fn path_str(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Every line of a JSON Lines file.
fn lines(path: &Path) -> Vec<Value> {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

#[test]
fn errors_validate() {
    let dir = tempfile::tempdir().unwrap();
    let cli = herd_watch::Cli::try_parse_from(args(&[
        "herd-watch",
        "--artifacts",
        path_str(dir.path()),
        "wait",
        "--run",
        "nope",
        "--json",
    ]))
    .unwrap();
    let doc = printed(herd_watch::run(cli));
    assert_eq!(
        decode::<ErrorDocument>(&doc).error.code,
        ErrorCode::NotFound
    );
    assert_valid("error.schema.json", &doc);
}

#[test]
fn accept_outputs_and_spec_validate() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join("checkout");
    fs::create_dir_all(&cwd).unwrap();

    // The file form the launcher writes for a child.
    let spec = herd_accept::AcceptSpec::new("echo checked; exit 1").unwrap();
    let spec_file = dir.path().join("accept/r1.json");
    fs::create_dir_all(spec_file.parent().unwrap()).unwrap();
    spec.write(&spec_file).unwrap();
    assert_valid("accept-spec.schema.json", &read_json(&spec_file));

    for (run, exit) in [("true", 0), ("echo no; exit 3", 1)] {
        let tool_form = dir.path().join("spec.json");
        fs::write(
            &tool_form,
            json!({"run": run, "timeoutSec": 30}).to_string(),
        )
        .unwrap();
        let cli = herd_accept::Cli::try_parse_from(args(&[
            "herd-accept",
            "check",
            "--spec",
            path_str(&tool_form),
            "--cwd",
            path_str(&cwd),
            "--json",
        ]))
        .unwrap();
        let output = herd_accept::run(cli).unwrap();
        assert_eq!(output.exit, exit, "{run}");
        assert_valid("accept-check.schema.json", &output.json);
    }

    let out = dir.path().join("verdict.json");
    for outcome in ["completed", "failed", "help"] {
        let cli = herd_accept::Cli::try_parse_from(args(&[
            "herd-accept",
            "verdict",
            "--spec",
            path_str(&spec_file),
            "--cwd",
            path_str(&cwd),
            "--outcome",
            outcome,
            "--tries",
            "2",
            "--child-reported",
            "pass",
            "--out",
            path_str(&out),
            "--json",
        ]))
        .unwrap();
        let doc = printed(herd_accept::run(cli));
        assert_valid("accept-verdict.schema.json", &doc);
        assert_valid("accept-verdict.schema.json", &read_json(&out));
    }

    // `report` reads the child's output from stdin; its document is the ledger `evaluate`
    // returns, run here with the real host (git and verify commands).
    let sandbox = herd_e2e::git::Sandbox::new();
    let repo = sandbox.repo("repo");
    let signals = herd_core::subprocess::termination_signals().unwrap();
    let mut host = herd_accept::report::host::RealHost::new(&signals);
    let config = json!({"level": "verified", "criteria": ["tests pass"], "verify": [{"id": "unit", "command": "echo ok"}]});
    let input = herd_accept::report::config::parse_input(&config).unwrap();
    for (input, output) in [
        (
            input,
            "done\nACCEPTANCE_REPORT: {\"criteriaSatisfied\":[{\"id\":\"criterion-1\",\"status\":\"satisfied\"}],\"changedFiles\":[\"a.rs\"],\"commandsRun\":[{\"command\":\"cargo test\",\"result\":\"passed\"}]}",
        ),
        (herd_accept::report::AcceptanceInput::Omitted, "no report"),
    ] {
        let gate =
            herd_accept::report::config::resolve(&input, herd_protocol::accept::Level::Checked);
        let ledger = herd_accept::report::evaluate(&gate, output, &repo, &mut host);
        assert_valid(
            "accept-report.schema.json",
            &serde_json::to_value(&ledger).unwrap(),
        );
    }
}

/// A run record of the exec runner on the process surface, through serde so the test does not
/// name every field of the type.
fn record(art: &Artifacts, id: &str, name: &str, status: &str, session: &Path) {
    fs::create_dir_all(art.runs_dir()).unwrap();
    let mut record: herd_protocol::run::RunRecord = serde_json::from_value(json!({
        "format_version": 1, "run_id": id, "name": name, "created_at_ms": herd_core::time::now_ms(),
        "runner": "exec", "surface": "process", "status": status, "cwd": path_str(session.parent().unwrap()),
        "session_file": path_str(session), "auto_exit": true,
    }))
    .unwrap();
    record.save(art).unwrap();
    assert_valid("run-record.schema.json", &read_json(&art.run_record(id)));
}

fn watch(art: &Artifacts, rest: &[&str]) -> herd_cli::Output {
    let mut list = vec!["herd-watch", "--artifacts", path_str(art.root())];
    list.extend_from_slice(rest);
    let cli = herd_watch::Cli::try_parse_from(args(&list)).unwrap();
    herd_watch::run(cli)
        .unwrap_or_else(|err| herd_cli::Output::ok(err.to_json(), err.message).with_exit(-1))
}

#[test]
fn watch_outputs_and_sidecars_validate() {
    let dir = tempfile::tempdir().unwrap();
    let art = Artifacts::new(dir.path().join("art"));
    let sessions = dir.path().join("sessions");
    fs::create_dir_all(&sessions).unwrap();

    // A child that finished: its completion sidecar and its output are on disk.
    let done = sessions.join("done.jsonl");
    record(&art, "done1", "finisher", "launched", &done);
    fs::create_dir_all(art.logs_dir()).unwrap();
    fs::write(art.stdout_log("done1"), "building\nall tests pass\n").unwrap();
    fs::write(
        herd_protocol::layout::SessionFiles::new(&done).exit(),
        r#"{"type":"done"}"#,
    )
    .unwrap();
    // A child whose launch has not acquired its owner yet.
    let pending = sessions.join("pending.jsonl");
    record(&art, "pend1", "waiter", "pending", &pending);
    assert_valid(
        "completion.schema.json",
        &read_json(&herd_protocol::layout::SessionFiles::new(&done).exit()),
    );

    for rest in [
        &["status", "--json"][..],
        &["status", "--widget", "--json"],
        &["status", "--run", "done1", "--transcript", "--json"],
    ] {
        assert_valid("watch-status.schema.json", &watch(&art, rest).json);
    }

    let steer = watch(
        &art,
        &[
            "steer",
            "--run",
            "pend1",
            "--message",
            "also check the docs",
            "--mode",
            "follow-up",
            "--json",
        ],
    );
    assert_valid("watch-steer.schema.json", &steer.json);
    assert_valid(
        "steer-queue.schema.json",
        &read_json(
            &art.run("pend1")
                .path::<herd_protocol::intents::SteerQueue>(),
        ),
    );

    // `follow` prints the events of supervision, one per line; collect them from the
    // supervisor it runs, until the finished run's result is delivered.
    let mut supervisor = herd_watch::supervise::Supervisor::new(
        art.clone(),
        Some("done1".into()),
        herd_watch::supervise::Options::default(),
    );
    supervisor.scan().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut events = Vec::new();
    while !supervisor.is_idle() {
        assert!(
            Instant::now() < deadline,
            "no result within 60 s: {events:?}"
        );
        events.extend(supervisor.tick(|_| Ok(())).unwrap());
        supervisor.sleep();
    }
    let printed_events: Vec<Value> = events
        .iter()
        .map(|e| serde_json::to_value(e.to_json()).unwrap())
        .collect();
    let kinds: Vec<WatchEvent> = printed_events.iter().map(decode).collect();
    assert!(
        kinds.iter().any(|e| matches!(e, WatchEvent::Status { .. })),
        "{kinds:#?}"
    );
    assert!(
        kinds.iter().any(|e| matches!(e, WatchEvent::Result { .. })),
        "{kinds:#?}"
    );
    for event in &printed_events {
        assert_valid("watch-event.schema.json", event);
    }

    assert_valid(
        "run-result.schema.json",
        &read_json(&art.run_result("done1")),
    );
    for line in lines(&art.run_events("done1")) {
        assert_valid("run-event.schema.json", &line);
    }
    for line in lines(&art.root().join("outcomes.jsonl")) {
        assert_valid("outcome.schema.json", &line);
    }
    assert_valid("delivered.schema.json", &read_json(&art.delivered("done1")));
    assert_valid("ledgered.schema.json", &read_json(&art.ledgered("done1")));

    let wait = watch(&art, &["wait", "--run", "done1", "--json"]);
    assert_eq!(wait.exit, 0, "{}", wait.json);
    assert_valid("watch-wait.schema.json", &wait.json);

    for id in ["pend1", "done1"] {
        let cancel = watch(&art, &["cancel", "--run", id, "--json"]);
        assert_valid("watch-cancel.schema.json", &cancel.json);
    }
    assert_valid(
        "cancel-intent.schema.json",
        &read_json(
            &art.run("pend1")
                .path::<herd_protocol::intents::CancelIntent>(),
        ),
    );
    assert_valid(
        "watch-status.schema.json",
        &watch(&art, &["status", "--json"]).json,
    );
}

#[test]
fn worktree_outputs_and_manifest_validate() {
    let sandbox = herd_e2e::git::Sandbox::new();
    let repo = sandbox.repo("repo");
    let git = sandbox.git_handle();
    let art = Artifacts::new(sandbox.path().join("art"));
    let env = herd_worktree::create::CreateEnv {
        git: git.clone(),
        herdr: herd_herdr::Herdr::from_env(),
        managed_root: sandbox.path().join("worktrees"),
    };
    let request = herd_worktree::create::CreateRequest {
        source_cwd: repo.clone(),
        branch: "feat-x".into(),
        base: None,
        run_id: "wt1".into(),
        surface: herd_protocol::worktree::Surface::Git,
        label: None,
    };
    let created = herd_worktree::create::create(&art, &request, &env).unwrap();
    assert_valid(
        "worktree-create.schema.json",
        &serde_json::to_value(created.document()).unwrap(),
    );
    assert_valid(
        "worktree-manifest.schema.json",
        &read_json(&art.worktree_manifest("wt1")),
    );
    let cli = herd_worktree::Cli::try_parse_from(args(&[
        "herd-worktree",
        "--artifacts",
        path_str(art.root()),
        "show",
        "--run-id",
        "wt1",
        "--json",
    ]))
    .unwrap();
    assert_valid(
        "worktree-manifest.schema.json",
        &herd_worktree::run(cli).unwrap().json,
    );

    sandbox.write(&created.path, "src/new.rs", "fn main() {}\n");
    let inspect = |path: &Path| {
        let handoff = herd_worktree::handoff::inspect(
            &git,
            path,
            &created.base_sha,
            herd_git::Deadline::after(herd_git::budget::HANDOFF),
        );
        serde_json::to_value(handoff.document()).unwrap()
    };
    let known = inspect(&created.path);
    assert_eq!(
        decode::<WorktreeInspect>(&known).state,
        InspectedState::Dirty
    );
    assert_valid("worktree-inspect.schema.json", &known);
    let unknown = inspect(&sandbox.path().join("gone"));
    assert_eq!(
        decode::<WorktreeInspect>(&unknown).state,
        InspectedState::Unknown
    );
    assert_valid("worktree-inspect.schema.json", &unknown);

    let listing = herd_worktree::list::list(&git, &repo).unwrap();
    assert_eq!(listing.worktrees.len(), 2);
    assert_valid(
        "worktree-list.schema.json",
        &serde_json::to_value(listing.document()).unwrap(),
    );

    // The handoff recorded into the manifest, as herd-watch records it when the run ends.
    herd_protocol::worktree::manifest::Manifest::update(&art, "wt1", |m| {
        m.state = herd_protocol::worktree::manifest::State::Running;
    })
    .unwrap();
    assert_valid(
        "worktree-manifest.schema.json",
        &read_json(&art.worktree_manifest("wt1")),
    );

    // `herd-cleanup list` and `remove` over the same checkout: the inventory and a blocked
    // removal (the untracked file), then a preserving one.
    let mut ctx = herd_cleanup::inspect::Context::new(
        git.clone(),
        None,
        art.clone(),
        sandbox.path(),
        sandbox.path().join("worktrees"),
    );
    let discovery = herd_cleanup::paths::discover(&ctx.root).unwrap();
    let entries: Vec<_> = discovery
        .found
        .iter()
        .map(|found| {
            herd_cleanup::inspect::inspect(
                &mut ctx,
                found,
                herd_cleanup::inspect::Depth::Full,
                None,
            )
        })
        .collect();
    assert_eq!(entries.len(), 1);
    let list = serde_json::to_value(herd_cleanup::report::list_document(
        &ctx.root,
        &ctx.session_cwd,
        &entries,
        &[],
    ))
    .unwrap();
    assert_valid("cleanup-list.schema.json", &list);
    let target = path_str(&created.path).to_owned();
    for preserve in [false, true] {
        let discovery = herd_cleanup::paths::discover(&ctx.root).unwrap();
        let removal =
            herd_cleanup::remove::remove(&mut ctx, &discovery, &target, preserve).unwrap();
        assert_valid(
            "cleanup-remove.schema.json",
            &serde_json::to_value(&removal).unwrap(),
        );
    }
}

#[test]
fn doctor_and_docs_outputs_validate() {
    let dir = tempfile::tempdir().unwrap();
    let art = dir.path().join("art");
    let cli = herd_cleanup::Cli::try_parse_from(args(&[
        "herd-cleanup",
        "--artifacts",
        path_str(&art),
        "doctor",
        "--json",
    ]))
    .unwrap();
    assert_valid(
        "cleanup-doctor.schema.json",
        &herd_cleanup::run(cli).unwrap().json,
    );

    let root: PathBuf = support::workspace_root();
    let cli = herd_docs::Cli::try_parse_from(args(&[
        "herd-docs",
        "--check",
        "--json",
        "--root",
        path_str(&root),
    ]))
    .unwrap();
    assert_valid(
        "docs-report.schema.json",
        &herd_docs::run(cli).unwrap().json,
    );
}

#[test]
fn launch_acknowledgements_validate() {
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("s.jsonl");
    let art = Artifacts::new(dir.path().join("art"));
    record(&art, "ack1", "scout", "launched", &session);
    let mut full = herd_protocol::run::RunRecord::load(&art, "ack1").unwrap();
    let minimal = full.clone();
    full.pane = Some(herd_protocol::run::PaneRef {
        pane_id: "p_3".into(),
        tab_id: Some("t_1".into()),
        workspace_id: Some("w_2".into()),
        owned: true,
        socket: None,
        server_pid: None,
        terminal_id: None,
    });
    full.model = Some("anthropic/claude-sonnet-4".into());
    full.fallback_models = vec!["openai/gpt-5".into()];
    full.thinking = Some("high".into());
    full.worktree = Some(herd_protocol::run::WorktreeRef {
        path: "/w/feat-x".into(),
        branch: "feat-x".into(),
        base_sha: "d1ec649307ad35d111882f392d6a9bf0323ef97d".into(),
        manifest: "/art/worktree-runs/ack1.json".into(),
    });
    full.accept_spec = Some("/art/accept/ack1.json".into());
    full.launch_failure = Some("the pane did not confirm the launch command".into());
    for (status, record, attempts, ids) in [
        (
            herd_protocol::run::LaunchStatus::Launched,
            minimal,
            vec![],
            None,
        ),
        (
            herd_protocol::run::LaunchStatus::Uncertain,
            full,
            vec![(
                "0f0f0f0f".to_owned(),
                Some("openai/gpt-5".to_owned()),
                "provider error".to_owned(),
            )],
            Some(herd_protocol::launch::PersistentIds {
                logical_id: "reviewer".into(),
                generation_id: "g1".into(),
                task_id: "t1".into(),
            }),
        ),
    ] {
        let ack = herd_launch::spawn::Ack {
            status,
            record,
            artifacts: art.root().to_path_buf(),
            failed_attempts: attempts,
            persistent_ids: ids,
        };
        assert_valid(
            "launch-ack.schema.json",
            &serde_json::to_value(ack.document()).unwrap(),
        );
    }
}

#[test]
fn persistent_specialist_files_validate() {
    let dir = tempfile::tempdir().unwrap();
    let art = Artifacts::new(dir.path().join("art"));
    let session = dir.path().join("spec.jsonl");
    record(&art, "pers1", "reviewer", "launched", &session);
    let mut specialist = herd_protocol::run::RunRecord::load(&art, "pers1").unwrap();
    specialist.persistent = true;
    let files = specialist.session_files();
    let hash = "3f".repeat(32);
    herd_launch::persistent::append_ledger(
        &files.ledger(),
        "t1",
        herd_protocol::persistent::Outcome::Dispatched,
        "g1",
        "reviewer",
        &hash,
    )
    .unwrap();
    use herd_protocol::persistent::InboxKind;
    for (kind, task, message) in [
        (InboxKind::Task, "t1", "review the change"),
        (InboxKind::Stop, "", ""),
    ] {
        let inbox = herd_protocol::persistent::write_inbox(&files, kind, task, message).unwrap();
        assert_valid("task-inbox.schema.json", &read_json(&inbox));
    }
    let result: herd_protocol::result::RunResult = serde_json::from_value(json!({
        "format_version": 1, "run_id": "pers1", "name": "reviewer", "outcome": "completed",
        "message": "done", "details": {}, "settled_at_ms": 1, "task": "t1",
    }))
    .unwrap();
    herd_watch::tasks::record_delivery(&specialist, &result).unwrap();
    let policy = herd_protocol::launch::policy::Policy {
        version: 2,
        owner: herd_protocol::launch::policy::Owner::Public,
        tools: Some(vec!["read".into(), "bash".into()]),
        denied_tools: vec!["subagent".into()],
        persistent: true,
        logical_id: "reviewer".into(),
        generation_id: "g1".into(),
        worktree: None,
        sandbox: Some("workspace,on".into()),
    };
    policy.write(&files.policy()).unwrap();
    assert_valid("launch-policy.schema.json", &read_json(&files.policy()));
    let ledger = lines(&files.ledger());
    assert_eq!(ledger.len(), 2);
    for line in &ledger {
        assert_valid("task-ledger.schema.json", line);
    }
}

#[test]
fn launch_catalog_roles_task_models_and_handoff_validate() {
    let dir = tempfile::tempdir().unwrap();
    let art = Artifacts::new(dir.path().join("art"));
    let project = dir.path().join("project");
    let agent_dir = dir.path().join("agent");
    fs::create_dir_all(project.join(".pi/agents")).unwrap();
    fs::create_dir_all(&agent_dir).unwrap();
    // A role that parses and one that does not: the listing shows both shapes of a row.
    fs::write(
        project.join(".pi/agents/scout.md"),
        "---\nname: scout\nmodel: fake/a\ntools: read, grep\nauto-exit: true\n---\nLook around.\n",
    )
    .unwrap();
    fs::write(project.join(".pi/agents/broken.md"), "---\nname: [\n---\n").unwrap();
    let listing = herd_launch::list::list(&art, &project, &agent_dir).unwrap();
    let roles = serde_json::to_value(listing.to_json()).unwrap();
    assert_eq!(decode::<RolesListing>(&roles).roles.len(), 2, "{roles}");
    assert_valid("launch-roles.schema.json", &roles);

    let request = herd_tools::parse(
        "subagents_write_task_models",
        &json!({
            "tasks": {"coding": ["fake/a", "fake/b"]},
            "tasksMeta": {"generatedAt": "2026-12-01T00:00:00Z", "method": "registry-only"},
        }),
    )
    .unwrap();
    let written = herd_launch::models::write(&agent_dir, &request).unwrap();
    assert_valid(
        "launch-write-task-models.schema.json",
        &serde_json::to_value(written.to_json()).unwrap(),
    );

    let model = |provider: &str, id: &str| {
        herd_protocol::launch::docs::CatalogModel::new(
            provider.into(),
            id.into(),
            "128K".into(),
            "16K".into(),
            true,
            false,
        )
    };
    let catalog = herd_launch::catalog::Catalog::new(
        vec![model("fake", "a"), model("fake", "b")],
        &[(
            "coding".to_owned(),
            vec!["fake/a".to_owned(), "other/c".to_owned()],
        )],
    );
    let printed_catalog = serde_json::to_value(catalog.to_json()).unwrap();
    assert_eq!(
        decode::<ModelCatalog>(&printed_catalog).tasks[0].authenticated,
        ["fake/a"]
    );
    assert_valid("launch-models.schema.json", &printed_catalog);

    for (confirmed, focused) in [
        (Ok(4242), Ok(())),
        (
            Err("the new Pi did not start".to_owned()),
            Err("not focused: the start is unconfirmed".to_owned()),
        ),
    ] {
        let handoff = herd_launch::handoff::Handoff {
            id: "h1".into(),
            worktree: dir.path().join("wt"),
            branch: "feat-x".into(),
            base_sha: "d1ec649307ad35d111882f392d6a9bf0323ef97d".into(),
            workspace_id: None,
            session: dir.path().join("wt.jsonl"),
            pane: None,
            confirmed,
            focused,
            diagnostics: vec![],
        };
        assert_valid(
            "launch-handoff.schema.json",
            &serde_json::to_value(handoff.to_json()).unwrap(),
        );
    }
}

#[test]
fn host_documents_and_the_relay_state_validate() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config");
    let home = dir.path().join("home");
    let controls = dir.path().join("controls");
    fs::create_dir_all(&home).unwrap();
    let vars = [
        ("XDG_CONFIG_HOME", path_str(&config).to_owned()),
        ("HOME", path_str(&home).to_owned()),
        (
            herd_remote::ssh::CONTROL_DIR_ENV,
            path_str(&controls).to_owned(),
        ),
        // `host remove` closes the master connection; there is none, and no ssh is asked.
        (herd_remote::ssh::SSH_ENV, "true".to_owned()),
    ];
    let env = |key: &str| {
        vars.iter()
            .find(|(name, _)| *name == key)
            .map(|(_, value)| value.clone())
    };
    let (listing, _) = herd_launch::host::list(&env).unwrap();
    assert_valid(
        "launch-host-list.schema.json",
        &serde_json::to_value(&listing).unwrap(),
    );
    let record = herd_remote::HostRecord {
        format_version: herd_remote::host::FORMAT_VERSION,
        name: "devbox".into(),
        added_at_ms: 1_764_720_000_000,
        os: "Linux".into(),
        arch: "x86_64".into(),
        home: "/home/dev".into(),
        bin_dir: "/home/dev/.herd/bin/0.1.0".into(),
        herd_version: "0.1.0".into(),
        pi_version: None,
    };
    herd_remote::Hosts::from_env(&env)
        .unwrap()
        .put(&record)
        .unwrap();
    let written = config.join("herd/hosts/devbox.json");
    assert_valid("host-record.schema.json", &read_json(&written));
    let (listing, _) = herd_launch::host::list(&env).unwrap();
    assert_eq!(listing.hosts, std::slice::from_ref(&record));
    assert_valid(
        "launch-host-list.schema.json",
        &serde_json::to_value(&listing).unwrap(),
    );
    let (removed, _) = herd_launch::host::remove("devbox", &[], &env).unwrap();
    assert!(!written.exists());
    assert_valid(
        "launch-host-remove.schema.json",
        &serde_json::to_value(&removed).unwrap(),
    );
    // `host add` needs a host to copy herd to: the remote scenarios run it against a real sshd
    // and decode what it prints as this type.
    let added = herd_remote::host::HostAdded {
        status: herd_remote::host::AddStatus::Added,
        host: record,
        copied: herd_remote::host::PROGRAMS.map(str::to_owned).to_vec(),
    };
    assert_valid(
        "launch-host-add.schema.json",
        &serde_json::to_value(&added).unwrap(),
    );

    let art = Artifacts::new(dir.path().join("art"));
    fs::create_dir_all(art.root()).unwrap();
    herd_protocol::relay::RelayState {
        format_version: 0,
        host: "devbox".into(),
        connected: false,
        since_ms: 1_764_720_000_000,
        last_seen_ms: Some(1_764_719_990_000),
        error: Some("connection closed".into()),
    }
    .write(&art)
    .unwrap();
    assert_valid(
        "relay-state.schema.json",
        &read_json(&art.relay_state("devbox")),
    );
}
