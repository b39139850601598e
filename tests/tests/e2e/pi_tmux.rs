//! Interactive Pi in a pane of a private tmux server: it takes a typed prompt, runs the turn,
//! writes its session, and quits on `/quit`.

use std::time::Duration;

use herd_e2e::model::{ModelServer, Script, Text, ToolCall};
use herd_e2e::pi::PiEnv;
use herd_e2e::session;
use herd_e2e::tmux::Tmux;
use herd_e2e::wait::{try_wait_for, wait_for};

const BUDGET: Duration = Duration::from_secs(60);

#[test]
fn interactive_pi_in_a_tmux_pane_answers_a_typed_prompt() {
    let model = ModelServer::start(
        Script::new()
            .step(ToolCall::bash("echo hello > out.txt"))
            .step(Text("DONE: wrote out.txt")),
    );
    let env = PiEnv::new(&model);
    let session_path = env.session_path("interactive");
    let tmux = Tmux::start(env.vars());
    tmux.cmd(["set-option", "-g", "remain-on-exit", "on"]);
    let pi = env.pi().session(&session_path);

    let pane = tmux.new_session("pi", pi.dir(), &pi.argv());
    // The footer names the model once the editor is ready for input.
    tmux.wait_for_text(&pane, "fake-model", BUDGET);
    assert!(
        !session_path.exists(),
        "no session file before the first answer"
    );

    tmux.send_text(&pane, "Write hello into out.txt");
    tmux.send_keys(&pane, &["Enter"]);
    let last = session::wait_for_final_assistant(&session_path, BUDGET);
    assert_eq!(session::text(&last), "DONE: wrote out.txt");
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("out.txt")).unwrap(),
        "hello\n"
    );
    tmux.wait_for_text(&pane, "DONE: wrote out.txt", BUDGET);

    tmux.send_text(&pane, "/quit");
    tmux.send_keys(&pane, &["Enter"]);
    let status = try_wait_for(BUDGET, || tmux.pane_exit_status(&pane)).unwrap_or_else(|| {
        panic!(
            "pi did not quit; the pane shows:\n{}\nsession: {:#?}\nrequests: {}",
            tmux.capture(&pane),
            session::messages(&session_path),
            model.requests().len()
        )
    });
    assert_eq!(status, 0, "pane:\n{}", tmux.capture(&pane));
    assert_eq!(model.requests().len(), 2);
}

#[test]
fn dropping_the_tmux_handle_kills_its_server_and_panes() {
    let model = ModelServer::start(Script::new().step(Text("unused")));
    let env = PiEnv::new(&model);
    let tmux = Tmux::start(env.vars());
    let pane = tmux.new_session("idle", &env.work_dir(), &["sleep".into(), "300".into()]);
    let (server, sleeper) = (tmux.pid(), tmux.pane_pid(&pane));
    assert!(herd_e2e::proc::process_alive(sleeper));
    drop(tmux);
    wait_for(
        "the tmux server and its pane to be gone",
        Duration::from_secs(20),
        || {
            (!herd_e2e::proc::process_alive(server) && !herd_e2e::proc::process_alive(sleeper))
                .then_some(())
        },
    );
}

/// Seed 003's tools widget in a child's pane: `[<role>] — N tools · M denied`, N being the
/// tools the child's model request declares.
#[test]
fn a_child_on_tmux_shows_its_tools_widget() {
    use herd_e2e::herd::{Herd, Where};
    use herd_e2e::model::request;

    let model = ModelServer::start(Script::new().step(Text("Waiting for the next task.")));
    let env = PiEnv::new(&model);
    std::fs::create_dir_all(env.agent_dir().join("agents")).unwrap();
    std::fs::write(
        env.agent_dir().join("agents/scout.md"),
        "---\nauto-exit: false\ndeny-tools: write, edit\n---\nLook around; change nothing.\n",
    )
    .unwrap();
    let herd = Herd::new(&env, Where::Tmux);
    let ack = herd.spawn(&serde_json::json!({
        "name": "Scout", "agent": "scout", "task": "Look around",
        "model": Herd::model("fake-model"),
    }));
    let run = ack["run_id"].as_str().unwrap();
    let pane = herd.record(run)["pane"]["pane_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let tmux = herd.tmux().unwrap();
    if try_wait_for(BUDGET, || (!model.requests().is_empty()).then_some(())).is_none() {
        panic!("no request; the pane shows:\n{}", tmux.capture(&pane));
    }
    let requests = model.requests();
    let declared = request::tool_names(&requests[0]);
    assert!(
        !declared.iter().any(|t| t == "write" || t == "edit"),
        "{declared:?}"
    );
    let line = format!("[scout] — {} tools · 2 denied", declared.len());
    tmux.wait_for_text(&pane, &line, BUDGET);
}
