//! A confined Pi worktree child (`docs/sandbox.md`), on every surface: it commits on its own
//! branch and the branch comes home, while moving another branch, rewriting the repository's
//! configuration, writing into the home directory and reading a key all fail.

use std::path::Path;

use herd_e2e::git::Sandbox;
use herd_e2e::herd::{Herd, Where};
use herd_e2e::model::{ModelServer, Script, Text, ToolCall};
use herd_e2e::pi::PiEnv;
use herd_protocol::result::Outcome;
use serde_json::json;

fn a_confined_worktree_child_moves_only_its_own_branch(place: Where, test: &str) {
    let model = ModelServer::start(
        Script::new()
            .step(ToolCall::bash(
                "echo hi > greeting.txt && git add greeting.txt && git commit -q -m 'add greeting'",
            ))
            .step(ToolCall::bash(
                "git update-ref refs/heads/main HEAD; git config core.hooksPath /tmp/hooks; \
                 echo x > \"$HOME/pwned\"; cat \"$HOME/.ssh/id_ed25519\"; \
                 mkdir -p \"$PI_CODING_AGENT_DIR/extensions\"; \
                 echo 'export default () => {}' > \"$PI_CODING_AGENT_DIR/extensions/planted.ts\"; true",
            ))
            .step(Text("REPORT: committed greeting.txt")),
    );
    let env = PiEnv::new(&model);
    let home = env.root().join("home");
    std::fs::create_dir_all(home.join(".ssh")).expect("a home");
    std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE KEY").expect("a key");
    let config = env.root().join("config");
    std::fs::create_dir_all(config.join("herd")).expect("a configuration directory");
    std::fs::write(
        config.join("herd/config.toml"),
        "[sandbox]\nmode = \"workspace\"\n",
    )
    .expect("the person's choice");
    let sb = Sandbox::new();
    let repo = sb.repo("repo");
    let base = sb.head(&repo);
    let Some(mut herd) = Herd::try_new(&env, place, test) else {
        return;
    };
    herd.set_var("HERD_WORKTREE_ROOT", env.root().join("worktrees"));
    herd.set_var("XDG_CONFIG_HOME", &config);

    let ack = herd.launch_in(
        &repo,
        &json!({
            "name": "Greeter",
            "task": "Add a greeting and commit it",
            "model": Herd::model("fake-model"),
            "worktree": {"branch": "feature/greeting"},
        }),
    );
    let run = ack.run_id.as_str();
    let (code, result) = herd.wait_result(run);
    assert_eq!(code, 0, "{result:#?}");
    assert_eq!(result.outcome, Outcome::Completed, "{result:#?}");
    let message = &result.message;
    assert!(
        message.contains("State: clean · 1 commit ahead"),
        "the branch came home before the handoff: {message}"
    );
    assert_eq!(
        sb.git(&repo, ["log", "-1", "--format=%s", "feature/greeting"]),
        "add greeting",
        "the child's commit is on its branch in the repository"
    );
    assert_eq!(
        sb.git(&repo, ["rev-parse", "main"]),
        base,
        "main did not move"
    );
    assert_eq!(
        sb.git(&repo, ["config", "--default", "unset", "core.hooksPath"]),
        "unset",
        "the repository's configuration is untouched"
    );
    assert!(
        !home.join("pwned").exists(),
        "nothing written into the home"
    );
    assert!(
        !env.agent_dir().join("extensions/planted.ts").exists(),
        "no extension planted for the person's next Pi"
    );
    assert!(
        !Path::new(&ack.session_file).starts_with(env.agent_dir()),
        "the child's session is not among the person's"
    );
    assert!(
        !Path::new(&ack.worktree.expect("a worktree").path)
            .join("leaked")
            .exists()
    );
    // The key was never visible: its text is nowhere in the child's session.
    let session = std::fs::read_to_string(&ack.session_file).expect("the child's session");
    assert!(!session.contains("PRIVATE KEY"), "the key was read");
}

#[test]
fn on_process_a_confined_worktree_child_moves_only_its_own_branch() {
    a_confined_worktree_child_moves_only_its_own_branch(Where::Process, "");
}

#[test]
fn on_tmux_a_confined_worktree_child_moves_only_its_own_branch() {
    a_confined_worktree_child_moves_only_its_own_branch(Where::Tmux, "");
}

#[test]
fn on_herdr_a_confined_worktree_child_moves_only_its_own_branch() {
    a_confined_worktree_child_moves_only_its_own_branch(
        Where::Herdr,
        "on_herdr_a_confined_worktree_child_moves_only_its_own_branch",
    );
}

/// `network: "off"` for a Pi child: "the model and nothing else". Its scripted model on
/// 127.0.0.1 answers every turn through herd's relay, while another port on 127.0.0.1 is refused.
#[test]
fn a_pi_child_with_network_off_reaches_its_model_and_nothing_else() {
    let other = std::net::TcpListener::bind("127.0.0.1:0").expect("a port on loopback");
    let port = other.local_addr().expect("its address").port();
    other.set_nonblocking(true).expect("non-blocking");
    let model = ModelServer::start(
        Script::new()
            .step(ToolCall::bash(format!(
                "if bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}' 2>/dev/null; then echo CONNECTED-{port}; else echo REFUSED-{port}; fi"
            )))
            .step(Text("REPORT: tried the port")),
    );
    let env = PiEnv::new(&model);
    let config = env.root().join("config");
    std::fs::create_dir_all(config.join("herd")).expect("a configuration directory");
    std::fs::write(
        config.join("herd/config.toml"),
        "[sandbox]\nmode = \"workspace\"\n",
    )
    .expect("the person's choice");
    let Some(mut herd) = Herd::try_new(&env, Where::Process, "") else {
        return;
    };
    herd.set_var("XDG_CONFIG_HOME", &config);
    let ack = herd.launch(&json!({
        "name": "Offline",
        "task": "Try the port",
        "model": Herd::model("fake-model"),
        "network": "off",
    }));
    let (code, result) = herd.wait_result(&ack.run_id);
    assert_eq!(code, 0, "{result:#?}");
    assert_eq!(
        result.outcome,
        Outcome::Completed,
        "the model answered: {result:#?}"
    );
    let session = std::fs::read_to_string(&ack.session_file).expect("the child's session");
    assert!(session.contains(&format!("REFUSED-{port}")), "{session}");
    assert!(
        other.accept().is_err(),
        "nothing reached the port that is not the model's"
    );
}
