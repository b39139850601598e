//! The Pi runner's command line: session, model, tools, extension and task artifact.

use std::path::Path;

use herd_e2e::wait::wait_for;
use herd_protocol::launch::policy::{Owner, Policy};
use herd_protocol::layout::SessionFiles;
use herd_protocol::run::ProjectTrust;

use crate::support::{Env, WAIT, ack, read, script};

#[test]
fn the_pi_runner_gets_its_session_model_tools_extension_and_task_artifact() {
    let mut env = Env::new();
    let agent_dir = env.dir.path().join("agent");
    let skill = agent_dir.join("skills/search");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: search\n---\nSearch well.\n",
    )
    .unwrap();
    env.set("PI_CODING_AGENT_DIR", agent_dir.to_string_lossy());
    env.set("HERD_PI", script("fake-pi.sh"));
    let request = serde_json::json!({
        "name": "Scout",
        "task": "Find the parser.",
        "systemPrompt": "You are a careful scout.",
        "model": "fake/fast,fake/slow",
        "thinking": "max",
        "tools": "read,bash",
        "skills": "search",
    });
    let run = env.run(
        &["spawn", "--request", "-", "--json", "--surface", "process"],
        &request,
    );
    assert_eq!(run.code, 0, "{run}");
    let launched = ack(&run);
    assert_eq!(launched.model.as_deref(), Some("fake/fast"));
    assert_eq!(launched.fallback_models, ["fake/slow"]);
    let run_id = launched.run_id.as_str();
    let session = launched.session_file.clone();
    // The child's session sits in a directory of its own under the artifacts directory, never
    // among the person's sessions, which `pi -c` and `/resume` pick from.
    assert!(
        session.starts_with(env.art().join("sessions").join(run_id).to_str().unwrap()),
        "{session}"
    );
    assert!(
        !agent_dir.join("sessions").exists(),
        "nothing was written among Pi's own sessions"
    );
    assert!(
        Path::new(&session)
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .contains(&format!("_{run_id}-"))
    );
    let argv = wait_for("pi's argv", WAIT, || read(env.work().join("pi.argv")));
    let argv: Vec<&str> = argv.lines().collect();
    let record = env.run_record(run_id);
    let artifact = record.extra.task_artifact.as_deref().unwrap();
    let extension = argv[argv.iter().position(|a| *a == "-e").unwrap() + 1];
    assert_eq!(
        argv,
        [
            "-p",
            "--session",
            session.as_str(),
            "--model",
            "fake/fast",
            "--thinking",
            "xhigh",
            "--tools",
            "read,bash,caller_ping",
            "-e",
            extension,
            "--skill",
            skill.to_str().unwrap(),
            &format!("@{artifact}"),
        ]
    );
    assert!(
        read(extension).unwrap().contains("subagent_done"),
        "the shipped child extension"
    );
    let text = read(artifact).unwrap();
    assert!(text.starts_with("You are a careful scout.\n\n"), "{text}");
    // The skill arrives with the task, not as a prompt typed after it.
    assert!(
        text.contains("\n\nSkills for this task: `search`."),
        "{text}"
    );
    assert!(text.contains("\n\nFind the parser.\n\n"), "{text}");
    // The launch policy restores exactly these tools.
    // Decoded as every reader decodes it: its hash checked over its canonical keys.
    let policy = SessionFiles::new(&session)
        .read::<Policy>()
        .unwrap()
        .expect("the launch wrote its policy");
    assert_eq!(policy.version, 2);
    assert_eq!(policy.owner, Owner::Public);
    assert_eq!(
        policy.tools,
        Some(vec!["read".to_owned(), "bash".to_owned()])
    );
    let pi_env = wait_for("pi's environment", WAIT, || read(env.work().join("pi.env")));
    assert!(
        pi_env
            .lines()
            .any(|l| l == format!("PI_CODING_AGENT_DIR={}", agent_dir.display())),
        "{pi_env}"
    );
    // No parent decision: the child is untrusted, and never asks.
    assert!(
        pi_env.lines().any(|l| l == "HERD_PROJECT_TRUST=untrusted"),
        "{pi_env}"
    );
    // The extension finds herd-accept and herd-watch where the caller said, or beside herd-launch.
    assert!(
        pi_env.lines().any(|l| l.starts_with("HERD_BIN_DIR=/")),
        "{pi_env}"
    );
    assert_eq!(
        env.run_record(run_id).extra.project_trust,
        Some(ProjectTrust::Untrusted),
        "a model fallback repeats the decision"
    );
}
