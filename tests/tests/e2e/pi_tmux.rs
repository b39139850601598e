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

/// The tools widget in a child's pane: `[<role>] — N tools · M denied`, N being the
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
    let ack = herd.launch(&serde_json::json!({
        "name": "Scout", "agent": "scout", "task": "Look around",
        "model": Herd::model("fake-model"),
    }));
    let pane = herd.run_record(&ack.run_id).pane.expect("a pane").pane_id;
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

    // docs/surfaces.md: "Each pane's border shows the child's name", also once Pi has set the
    // pane's title to its own (`π - work`).
    let title = try_wait_for(BUDGET, || {
        let title = tmux.cmd(["display-message", "-p", "-t", &pane, "#{pane_title}"]);
        title.starts_with('π').then_some(title)
    });
    assert!(title.is_some(), "Pi never titled its pane");
    let border = tmux.cmd([
        "display-message",
        "-p",
        "-t",
        &pane,
        "#{T:pane-border-format}",
    ]);
    assert!(border.contains("Scout"), "{border:?}");
    assert!(!border.contains('π'), "{border:?}");
}

/// A steer of a real Pi child on tmux is `delivered` once its Pi takes the message, seen within
/// three seconds of the keys; while its Pi cannot take it (the process is stopped), the receipt
/// says the keys were typed and nothing more, and the message is taken once Pi runs again.
#[test]
fn a_steer_is_delivered_when_the_childs_pi_takes_it_and_pending_while_it_cannot() {
    use herd_e2e::herd::{Herd, Where, read_doc};
    use herd_e2e::proc::signal_pid;
    use herd_protocol::child::{Activity, Phase};
    use herd_protocol::intents::{SteerReceipt, SteeringLedger};
    use herd_protocol::watch::{DeliveryStatus, SteerState, WatchSteer};

    let model = ModelServer::start(
        Script::new()
            .step(Text("Ready for directions."))
            .step(Text("Looking at the parser."))
            .step(Text("Looking at the lexer."))
            .step(Text("Looking at the tests.")),
    );
    let env = PiEnv::new(&model);
    std::fs::create_dir_all(env.agent_dir().join("agents")).unwrap();
    std::fs::write(
        env.agent_dir().join("agents/scout.md"),
        "---\nauto-exit: false\n---\nLook around.\n",
    )
    .unwrap();
    let herd = Herd::new(&env, Where::Tmux);
    let run = herd
        .launch(&serde_json::json!({
            "name": "Scout", "agent": "scout", "task": "Look around",
            "model": Herd::model("fake-model"),
        }))
        .run_id;
    let activity = herd
        .artifacts()
        .join("subagent-activity")
        .join(format!("{run}.json"));
    // Its first turn ended: the child waits between turns.
    let waiting = || read_doc::<Activity>(&activity).is_some_and(|a| a.phase == Phase::Waiting);
    wait_for("the first turn to end", BUDGET, || {
        (model.requests().len() == 1 && waiting()).then_some(())
    });
    let steer = |message: &str| -> WatchSteer {
        let out = herd.run(
            "herd-watch",
            ["steer", "--run", &run, "--message", message, "--json"],
        );
        assert!(out.success(), "steer:\n{out}");
        out.doc()
    };
    // A receipt's keys were typed, and its Pi took it within three seconds of them.
    let taken_in_time = |receipt: &SteerReceipt| {
        let typed = receipt.typed_at_ms.unwrap();
        let delivered = receipt.delivered_at_ms.unwrap();
        assert!(
            typed <= delivered && delivered <= typed + 3_000,
            "{receipt:?}"
        );
    };

    // 1. Its Pi takes the message: delivered, within three seconds of the keys.
    let doc = steer("Look at the parser.");
    assert_eq!(
        (doc.state, doc.delivery_status),
        (SteerState::Delivered, Some(DeliveryStatus::Delivered)),
        "{doc:?}"
    );
    let ledger_path = herd.artifacts().join(format!("runs/{run}.steering.json"));
    let ledger: SteeringLedger = read_doc(&ledger_path).unwrap();
    taken_in_time(&ledger.requests[0]);
    let inputs = read_doc::<Activity>(&activity).unwrap().input_count;
    assert!(inputs >= Some(1), "{inputs:?}");
    wait_for("the steered turn", BUDGET, || {
        (model.requests().len() == 2 && waiting()).then_some(())
    });
    assert!(
        model.requests()[1]
            .to_string()
            .contains("Look at the parser."),
        "the model was asked with the message"
    );

    // 2. Its Pi is stopped: the keys are typed, and the receipt says only that. The recorded
    //    process is Pi itself, or the sandbox that holds it: the whole tree is stopped.
    let pid = herd.child_pid(&run);
    let tree: Vec<u32> = std::iter::once(pid)
        .chain(herd_e2e::proc::descendants(pid))
        .collect();
    for &p in &tree {
        signal_pid(p, libc::SIGSTOP);
    }
    let doc = steer("Now the lexer.");
    for &p in &tree {
        signal_pid(p, libc::SIGCONT);
    }
    assert_eq!(doc.state, SteerState::Pending, "{doc:?}");
    assert!(doc.delivery_status.is_none(), "{doc:?}");
    assert!(doc.typed_at_ms.is_some(), "{doc:?}");
    assert_eq!(
        doc.note.as_deref(),
        Some("typed into its input, but its Pi did not take it within 3 s"),
        "{doc:?}"
    );
    // Running again, its Pi reads the keys it was typed.
    wait_for("the late message's turn", BUDGET, || {
        (model.requests().len() == 3).then_some(())
    });
    assert!(model.requests()[2].to_string().contains("Now the lexer."));

    // 3. A follow-up is queued, and the watcher types it between turns: delivered once its Pi
    //    takes it, as a steer is.
    wait_for("the late turn to end", BUDGET, || waiting().then_some(()));
    let out = herd.run(
        "herd-watch",
        [
            "steer",
            "--run",
            &run,
            "--message",
            "Then the tests.",
            "--mode",
            "follow-up",
            "--json",
        ],
    );
    let doc: WatchSteer = out.doc();
    assert_eq!(doc.state, SteerState::Queued, "{doc:?}");
    let queued = || {
        read_doc::<SteeringLedger>(&ledger_path)?
            .requests
            .into_iter()
            .find(|r| r.request_id == doc.request_id)
    };
    herd.follow_until("the queued follow-up's receipt", BUDGET, || {
        queued().is_some_and(|r| r.state != SteerState::Queued)
    });
    let receipt = queued().unwrap();
    assert_eq!(receipt.state, SteerState::Delivered, "{receipt:?}");
    taken_in_time(&receipt);
    assert!(model.requests().len() >= 4);
    assert!(model.requests()[3].to_string().contains("Then the tests."));
}

/// Seed 003 (Persistent): herd "then closes an ordinary pane it created". Two real Pi children
/// in the herd window: once a run's result is delivered its dead pane is closed and the window
/// tiled again for the one left; `HERD_TMUX_KEEP_PANES=1` keeps the panes of finished children.
#[test]
fn a_finished_childs_pane_is_closed_once_its_result_is_delivered_unless_kept() {
    use herd_e2e::herd::{Herd, Where};

    for keep in [false, true] {
        let model = ModelServer::start(Script::new().step(Text("REPORT: done")));
        let env = PiEnv::new(&model);
        std::fs::create_dir_all(env.agent_dir().join("agents")).unwrap();
        std::fs::write(
            env.agent_dir().join("agents/idler.md"),
            "---\nauto-exit: false\n---\nWait for directions.\n",
        )
        .unwrap();
        let mut herd = Herd::new(&env, Where::Tmux);
        if keep {
            herd.set_var("HERD_TMUX_KEEP_PANES", "1");
        }
        let live = herd.launch(&serde_json::json!({
            "name": "Idler", "agent": "idler", "task": "Wait",
            "model": Herd::model("fake-model"),
        }));
        let done = herd.launch(&serde_json::json!({
            "name": "Quick", "task": "Report", "model": Herd::model("fake-model"),
        }));
        let tmux = herd.tmux().unwrap();
        let pane = herd.run_record(&done.run_id).pane.expect("a pane").pane_id;
        let (code, result) = herd.wait_result(&done.run_id);
        assert_eq!(code, 0, "{result:#?}");
        let panes = || {
            tmux.try_cmd(["list-panes", "-a", "-F", "#{pane_id}"])
                .stdout
        };
        if keep {
            assert!(panes().lines().any(|p| p == pane), "kept: {}", panes());
        } else {
            let gone = try_wait_for(BUDGET, || {
                (!panes().lines().any(|p| p == pane)).then_some(())
            });
            assert!(gone.is_some(), "still there: {}", panes());
        }
        let idler = herd.run_record(&live.run_id).pane.expect("a pane").pane_id;
        assert!(panes().lines().any(|p| p == idler), "{}", panes());
        let out = herd.run("herd-watch", ["cancel", "--run", &live.run_id, "--json"]);
        assert!(out.success(), "{out}");
    }
}
