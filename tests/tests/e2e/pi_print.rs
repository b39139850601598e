//! The real Pi CLI in print mode against the scripted model: tools run, the session file is
//! written, errors fail fast, and several models share one server.

use std::time::Duration;

use herd_e2e::model::{Fail, ModelServer, Models, Script, Text, ToolCall, request};
use herd_e2e::pi::PiEnv;
use herd_e2e::session;

#[test]
fn print_mode_runs_a_bash_tool_and_records_the_session() {
    let model = ModelServer::start(
        Script::new()
            .step(ToolCall::bash("echo hello > out.txt"))
            .step(Text("DONE: wrote out.txt")),
    );
    let env = PiEnv::new(&model);
    let session_path = env.session_path("print");

    let out = env
        .pi()
        .print("Write hello into out.txt")
        .session(&session_path)
        .run();

    assert!(out.success(), "{out}");
    assert_eq!(out.stdout.trim(), "DONE: wrote out.txt", "{out}");
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("out.txt")).unwrap(),
        "hello\n"
    );

    let entries = session::entries(&session_path);
    assert_eq!(entries[0]["type"], "session", "the header comes first");
    assert_eq!(entries[0]["cwd"], env.work_dir().to_str().unwrap());
    let messages = session::messages(&session_path);
    let roles: Vec<&str> = messages.iter().filter_map(|m| m["role"].as_str()).collect();
    // Pi 1.6 records the prompt and the declared tools as a `system` message before the first
    // user message; readers of the conversation skip it.
    assert_eq!(
        roles,
        ["system", "user", "assistant", "toolResult", "assistant"]
    );
    let declared: Vec<&str> = messages[0]["toolsAdded"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(declared.contains(&"bash"), "{}", messages[0]);
    let calls = session::tool_calls(&messages[2]);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["name"], "bash");
    assert_eq!(calls[0]["arguments"]["command"], "echo hello > out.txt");
    assert_eq!(messages[2]["stopReason"], "toolUse");
    let last = session::last_assistant(&session_path).unwrap();
    assert!(session::is_final(&last));
    assert_eq!(last["stopReason"], "stop");
    assert_eq!(session::text(&last), "DONE: wrote out.txt");
    assert_eq!(last["provider"], "fake");
    assert_eq!(last["model"], "fake-model");

    let requests = model.requests();
    assert_eq!(requests.len(), 2, "one request per step");
    assert_eq!(
        request::user_texts(&requests[0]),
        ["Write hello into out.txt"]
    );
    assert!(request::tool_names(&requests[0]).contains(&"bash".to_owned()));
    assert_eq!(requests[0]["stream"], true);
    assert_eq!(request::assistant_count(&requests[1]), 1);
    assert_eq!(
        requests[1]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .count(),
        1
    );
}

#[test]
fn a_provider_error_fails_print_mode_after_one_request() {
    let model = ModelServer::start(Script::new().step(Fail(500, "scripted failure")));
    let env = PiEnv::new(&model);
    let session_path = env.session_path("error");

    let out = env.pi().print("Say something").session(&session_path).run();

    assert_eq!(out.code(), Some(1), "{out}");
    assert!(out.stderr.contains("scripted failure"), "{out}");
    assert_eq!(model.requests().len(), 1, "retries are off: {out}");
    let last = session::last_assistant(&session_path).expect("an error still writes the session");
    assert_eq!(last["stopReason"], "error");
    assert!(
        last["errorMessage"]
            .as_str()
            .unwrap_or_default()
            .contains("scripted failure"),
        "{last}"
    );
}

#[test]
fn two_models_on_one_server_answer_concurrent_children_with_their_own_scripts() {
    let model = ModelServer::start_models(
        Models::new()
            .model(
                "model-a",
                Script::new().step(Fail(503, "model a is overloaded")),
            )
            .model(
                "model-b",
                Script::new()
                    .step(ToolCall::bash("echo b > b.txt"))
                    .step(Text("B answered")),
            ),
    );
    let env = PiEnv::new(&model);
    let (a, b) = std::thread::scope(|scope| {
        let a = scope.spawn(|| {
            env.pi()
                .model("model-a")
                .print("task")
                .session(&env.session_path("a"))
                .run()
        });
        let b = scope.spawn(|| {
            env.pi()
                .model("model-b")
                .print("task")
                .session(&env.session_path("b"))
                .run()
        });
        (
            a.join().expect("child a ran"),
            b.join().expect("child b ran"),
        )
    });

    assert_eq!(a.code(), Some(1), "{a}");
    assert!(a.stderr.contains("model a is overloaded"), "{a}");
    assert!(b.success(), "{b}");
    assert_eq!(b.stdout.trim(), "B answered");
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("b.txt")).unwrap(),
        "b\n"
    );
    assert_eq!(model.requests_for("model-a").len(), 1);
    assert_eq!(model.requests_for("model-b").len(), 2);
    assert_eq!(
        session::last_assistant(&env.session_path("a")).unwrap()["model"],
        "model-a"
    );
    assert_eq!(
        session::last_assistant(&env.session_path("b")).unwrap()["model"],
        "model-b"
    );
}

#[test]
fn children_get_only_the_isolated_environment() {
    let model = ModelServer::start(
        Script::new().step(ToolCall::bash("env | sort > env.txt; git init -q repo && git -C repo commit -q --allow-empty -m first")).step(Text("ok")),
    );
    let env = PiEnv::new(&model);
    let out = env
        .pi()
        .print("dump the environment")
        .budget(Duration::from_secs(60))
        .run();
    assert!(out.success(), "{out}");

    let dumped = std::fs::read_to_string(env.work_dir().join("env.txt")).unwrap();
    let home = format!("HOME={}", env.root().join("home").display());
    let agent = format!("PI_CODING_AGENT_DIR={}", env.agent_dir().display());
    for line in [
        home.as_str(),
        agent.as_str(),
        "PI_OFFLINE=1",
        "GIT_CONFIG_GLOBAL=/dev/null",
    ] {
        assert!(
            dumped.lines().any(|l| l == line),
            "{line} missing from:\n{dumped}"
        );
    }
    assert!(
        !dumped.contains("CARGO_MANIFEST_DIR="),
        "the test's own environment leaked:\n{dumped}"
    );
    let repo = env.work_dir().join("repo");
    let sb = herd_e2e::git::Sandbox::new();
    assert_eq!(sb.git(&repo, ["branch", "--show-current"]), "main");
    assert_eq!(
        sb.git(&repo, ["log", "-1", "--format=%an <%ae> %at %ct"]),
        "Herd Test <herd@example.invalid> 1767225600 1767225600"
    );
}
