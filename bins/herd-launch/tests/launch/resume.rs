//! Resume restores the saved policy and fails closed; a refused resume writes nothing.

use std::path::{Path, PathBuf};

use herd_e2e::wait::wait_for;
use serde_json::Value;

use crate::support::{Env, WAIT, ack, exit_code, read, refusal, script};

/// Writes at `session` the header of a Pi session (id `s1`) in the environment's work directory,
/// as Pi writes it when it creates the file.
fn session_header(env: &Env, session: &Path) {
    std::fs::write(
        session,
        format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"cwd\":\"{}\"}}\n",
            env.work().display()
        ),
    )
    .unwrap();
}

#[test]
fn resume_restores_the_saved_policy_and_fails_closed() {
    let mut env = Env::new();
    let agent_dir = env.dir.path().join("agent");
    std::fs::create_dir_all(&agent_dir).unwrap();
    env.set("PI_CODING_AGENT_DIR", agent_dir.to_string_lossy());
    env.set("HERD_PI", script("fake-pi.sh"));
    let request = serde_json::json!({"name": "first", "task": "t", "tools": "read,grep"});
    let run = env.run(
        &["spawn", "--request", "-", "--json", "--surface", "process"],
        &request,
    );
    assert_eq!(run.code, 0, "{run}");
    let launched = ack(&run);
    let (session, first_run) = (launched.session_file, launched.run_id);
    assert_eq!(exit_code(&env, &first_run), 0);
    // Pi creates the session file; the stand-in does not, so give it the header Pi writes.
    session_header(&env, session.as_ref());
    std::fs::remove_file(env.work().join("pi.argv")).unwrap();

    let resume = [
        "resume",
        "--session",
        session.as_str(),
        "--message",
        "carry on",
        "--surface",
        "process",
        "--json",
    ];
    let run = env.run(&resume, &Value::Null);
    assert_eq!(run.code, 0, "{run}");
    let resumed = ack(&run);
    assert_eq!(resumed.name, "Resume");
    assert_eq!(resumed.session_file, session);
    let argv = wait_for("pi's argv", WAIT, || read(env.work().join("pi.argv")));
    let argv: Vec<&str> = argv.lines().collect();
    let tools = argv[argv.iter().position(|a| *a == "--tools").unwrap() + 1];
    assert_eq!(tools, "read,grep,caller_ping");
    assert!(
        !argv.contains(&"--model"),
        "the session keeps its model: {argv:?}"
    );
    let message = argv.last().unwrap().strip_prefix('@').unwrap();
    assert_eq!(read(message).unwrap(), "carry on\n");
    assert_eq!(exit_code(&env, &resumed.run_id), 0);

    // A refused resume changes nothing, not even a stale identity record it would replace.
    let identity_file = format!("{session}.process.json");
    let mut stale: Value = serde_json::from_str(&read(&identity_file).unwrap()).unwrap();
    stale["bootId"] = "00000000-0000-0000-0000-000000000000".into();
    std::fs::write(&identity_file, stale.to_string()).unwrap();
    let empty = [
        "resume",
        "--session",
        &session,
        "--message",
        "  ",
        "--surface",
        "process",
        "--json",
    ];
    let run = env.run(&empty, &Value::Null);
    assert_eq!(run.code, 2, "{run}");
    assert_eq!(read(&identity_file).unwrap(), stale.to_string());

    // Fails closed: a changed policy, a managed-worktree owner, no policy at all.
    let policy_file = format!("{session}.pi-herdr-subagent-policy.json");
    let policy = read(&policy_file).unwrap();
    let check = |env: &Env, text: &str| {
        std::fs::write(&policy_file, text).unwrap();
        let run = env.run(&resume, &Value::Null);
        assert_eq!(run.code, 2, "{text}: {run}");
        refusal(&run).message
    };
    let widened = policy.replace("[\"read\",\"grep\"]", "[\"read\",\"grep\",\"bash\"]");
    assert!(check(&env, &widened).contains("policyHash"));
    let managed = herd_protocol::launch::policy::Policy::new(
        herd_protocol::launch::policy::Owner::ManagedWorktree,
        None,
        Vec::new(),
        false,
        "l".into(),
        "g".into(),
        Some(herd_protocol::launch::policy::WorktreeBinding {
            path: "/w".into(),
            workspace_id: "w2".into(),
            branch: "b".into(),
            base_sha: "abc".into(),
        }),
    );
    assert!(
        check(&env, &String::from_utf8(managed.to_json()).unwrap()).contains("managed-worktree")
    );
    let persistent = herd_protocol::launch::policy::Policy::new(
        herd_protocol::launch::policy::Owner::Public,
        None,
        Vec::new(),
        true,
        "l".into(),
        "g".into(),
        None,
    );
    assert!(check(&env, &String::from_utf8(persistent.to_json()).unwrap()).contains("persistent"));
    assert!(check(&env, "{\"version\":2,\"owner\":\"workflow\"}").contains("owner"));
    std::fs::remove_file(&policy_file).unwrap();
    let run = env.run(&resume, &Value::Null);
    assert_eq!(run.code, 2, "{run}");
    assert!(
        refusal(&run).message.contains("start a new subagent"),
        "{}",
        run.json()
    );
}

#[test]
fn a_refused_resume_writes_nothing_not_even_the_child_extension_copy() {
    let mut env = Env::new();
    env.set("HERD_PI", script("fake-pi.sh"));
    let session = env.work().join("s.jsonl");
    session_header(&env, &session);
    let art = env.dir.path().join("art");
    let before = every_path(&art);
    let session = session.to_string_lossy().into_owned();
    let args = [
        "resume",
        "--session",
        &session,
        "--message",
        "go",
        "--surface",
        "process",
        "--json",
    ];
    // No launch policy beside the session: refused, exit 2.
    let run = env.run(&args, &Value::Null);
    assert_eq!(run.code, 2, "{run}");
    assert_eq!(refusal(&run).field.as_deref(), Some("policy"), "{run}");
    assert_eq!(
        every_path(&art),
        before,
        "a refused resume wrote into {}",
        art.display()
    );
}

/// Every path under `dir`, sorted.
fn every_path(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(next) = todo.pop() {
        for entry in std::fs::read_dir(&next).into_iter().flatten().flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                todo.push(path.clone());
            }
            out.push(path);
        }
    }
    out.sort();
    out
}

/// A child launched `read-only` resumes `read-only`, though the person's default is `workspace`:
/// its launch policy keeps the sandbox it first ran under. A stored sandbox that cannot be read,
/// or that was changed after the launch, refuses the resume and launches nothing.
#[test]
fn a_resumed_child_keeps_the_sandbox_it_first_ran_under() {
    let mut env = Env::new();
    let config = env.dir.path().join("home/.config/herd");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "[sandbox]\nmode = \"workspace\"\n",
    )
    .unwrap();
    let agent_dir = env.dir.path().join("agent");
    std::fs::create_dir_all(&agent_dir).unwrap();
    env.set("PI_CODING_AGENT_DIR", agent_dir.to_string_lossy());
    env.set("HERD_PI", script("probe-pi.sh"));
    let request = serde_json::json!({"name": "first", "task": "t", "sandbox": "read-only"});
    let run = env.run(
        &["spawn", "--request", "-", "--json", "--surface", "process"],
        &request,
    );
    assert_eq!(run.code, 0, "{run}");
    let launched = ack(&run);
    let session = launched.session_file;
    assert_eq!(exit_code(&env, &launched.run_id), 0);
    let probe = format!("{session}.probe");
    assert_eq!(
        read(&probe).as_deref(),
        Some("refused\n"),
        "launched read-only"
    );
    session_header(&env, session.as_ref());

    let resume = [
        "resume",
        "--session",
        session.as_str(),
        "--message",
        "carry on",
        "--surface",
        "process",
        "--json",
    ];
    let run = env.run(&resume, &Value::Null);
    assert_eq!(run.code, 0, "{run}");
    let resumed = ack(&run);
    assert_eq!(exit_code(&env, &resumed.run_id), 0);
    assert_eq!(
        read(&probe).as_deref(),
        Some("refused\nrefused\n"),
        "the resumed run cannot write its directory either"
    );
    assert!(!env.work().join("probe.txt").exists());
    let script = read(env.run_record(&resumed.run_id).extra.launch_script.unwrap()).unwrap();
    assert!(
        script.contains("HERD_SANDBOX_POLICY='read-only,on'"),
        "{script}"
    );

    // Fails closed: a sandbox this herd cannot read, one widened after the launch.
    let policy_file = herd_protocol::layout::SessionFiles::new(&session).policy();
    let kept = std::fs::read(&policy_file).unwrap();
    let runs = env.run_ids().len();
    let check = |text: &[u8], field: &str| {
        std::fs::write(&policy_file, text).unwrap();
        let run = env.run(&resume, &Value::Null);
        assert_eq!(run.code, 2, "{run}");
        assert_eq!(refusal(&run).field.as_deref(), Some(field), "{run}");
        assert_eq!(env.run_ids().len(), runs, "nothing launched: {run}");
        assert_eq!(read(&probe).as_deref(), Some("refused\nrefused\n"));
        refusal(&run).message
    };
    let unreadable = herd_protocol::launch::policy::Policy::from_slice(&kept, &policy_file)
        .unwrap()
        .with_sandbox("read-only;on".into());
    assert!(check(&unreadable.to_json(), "sandbox").contains("read-only;on"));
    let widened = String::from_utf8(kept.clone())
        .unwrap()
        .replace("\"read-only,on\"", "\"workspace,on\"");
    assert_ne!(widened.as_bytes(), kept.as_slice());
    // The launch policy as a whole no longer matches its hash.
    assert!(check(widened.as_bytes(), "policy").contains("policyHash"));
}
