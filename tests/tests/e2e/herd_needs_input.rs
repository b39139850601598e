//! A real Pi child waiting for a person: one that asks for help (`caller_ping`), and an
//! interactive one whose run settled (Pi 1.6's `agent_settled`, written by herd's child
//! extension into `<session>.needs-input.json`). `herd-watch status` says `waiting for input`
//! and `follow --json` has one `needs_input` event per transition; the state ends when the child
//! moves on.

#![expect(
    clippy::unwrap_used,
    reason = "scenario steps shared by the tmux and Herdr tests fail loudly on a broken fixture"
)]

use std::cell::Cell;
use std::time::Duration;

use herd_e2e::herd::{Herd, Where, events as decoded, results};
use herd_e2e::model::{ModelServer, Said, Script, Text, ToolCall};
use herd_e2e::pi::PiEnv;

use herd_protocol::needs_input::InputReason;
use herd_protocol::result::Outcome;
use herd_protocol::watch::{Label, StatusRow, StatusRuns, WatchEvent};
use serde_json::{Value, json};

fn status_row(herd: &Herd<'_>, run: &str) -> StatusRow {
    let out = herd.run("herd-watch", ["status", "--run", run, "--json"]);
    let mut doc: StatusRuns = out.doc();
    assert_eq!(doc.runs.len(), 1, "{out}");
    doc.runs.remove(0)
}

/// The `needs_input` events of `run`: the reason, and a dialog's kind.
fn needs_input(events: &[Value], run: &str) -> Vec<(InputReason, Option<String>)> {
    decoded(events)
        .into_iter()
        .filter_map(|e| match e {
            WatchEvent::NeedsInput {
                run_id,
                reason,
                kind,
                ..
            } if run_id == run => Some((reason, kind)),
            _ => None,
        })
        .collect()
}

/// The labels of the `status` events of `run`, in order.
fn status_labels(events: &[Value], run: &str) -> Vec<Label> {
    decoded(events)
        .into_iter()
        .filter_map(|e| match e {
            WatchEvent::Status { run_id, label, .. } if run_id == run => Some(label),
            _ => None,
        })
        .collect()
}

/// The reason the row of a run waiting for input gives.
fn reason(row: &StatusRow) -> Option<InputReason> {
    row.needs_input.as_ref().map(|n| n.reason)
}

#[test]
fn on_tmux_a_pi_child_that_asks_for_help_waits_for_input_until_it_is_resumed() {
    let question = "Which schema should the migration use?";
    let model = ModelServer::start(
        Script::new()
            .step(ToolCall::new("caller_ping", json!({ "message": question })))
            .step(Text("REPORT: migrated with schema v2")),
    );
    let env = PiEnv::new(&model);
    let herd = Herd::new(&env, Where::Tmux);
    let ack = herd.launch(&json!({
        "name": "Migrator",
        "task": "Write the migration",
        "model": Herd::model("fake-model"),
    }));
    let (run, session_file) = (ack.run_id, ack.session_file);
    let events = herd.follow();
    let help = needs_input(&events, &run);
    assert_eq!(help.len(), 1, "{events:#?}");
    assert_eq!(help[0].0, InputReason::HelpRequest);
    let row = status_row(&herd, &run);
    assert_eq!(
        (row.label, reason(&row)),
        (Label::WaitingForInput, Some(InputReason::HelpRequest)),
        "{row:?}"
    );
    let human = herd.run("herd-watch", ["status", "--run", &run]).stdout;
    assert!(
        human.contains("waiting for input · since ") && human.contains("help request"),
        "{human}"
    );

    // The answer: the session is resumed, and the run that asked no longer waits.
    let out = herd.run(
        "herd-launch",
        [
            "resume",
            "--session",
            &session_file,
            "--message",
            "Use schema v2.",
            "--surface",
            "tmux",
            "--json",
        ],
    );
    assert!(out.success(), "resume:\n{out}");
    let row = status_row(&herd, &run);
    assert_eq!(row.label, Label::Completed, "{row:?}");
    assert!(row.needs_input.is_none(), "{row:?}");
}

/// With `role`, a role that does not exit by itself; without, a bare spawn whose request alone
/// says `interactive: true`: either way the child waits for its person after its answer.
fn an_interactive_pi_child_whose_run_settled_waits_for_its_person(
    place: Where,
    test: &str,
    role: bool,
) {
    let model = ModelServer::start(
        Script::new()
            .step(Text("Ready: tell me what to look at."))
            .step(Said(
                "REPORT: looked",
                ToolCall::new("subagent_done", json!({})),
            ))
            .step(Text("never asked: subagent_done ends the session")),
    );
    let env = PiEnv::new(&model);
    // A role that does not exit by itself: its child stays open for its person after a turn.
    let dir = env.agent_dir().join("agents");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("planner.md"), "You plan with your person.\n").unwrap();
    let Some(herd) = Herd::try_new(&env, place, test) else {
        return;
    };
    let mut request = json!({
        "name": "Planner",
        "task": "Plan with me",
        "model": Herd::model("fake-model"),
        "interactive": true,
    });
    if role {
        request["agent"] = json!("planner");
    }
    let run = herd.launch(&request).run_id;
    assert!(!herd.run_record(&run).auto_exit, "it waits for its person");
    let steered = Cell::new(false);
    let seen_waiting = Cell::new(false);
    let events = herd.follow_until("the child's result", Duration::from_secs(90), || {
        if !steered.get() {
            let row = status_row(&herd, &run);
            if row.label == Label::WaitingForInput {
                assert_eq!(reason(&row), Some(InputReason::TurnSettled), "{row:?}");
                seen_waiting.set(true);
                // Its person answers in its pane: the child moves on.
                let out = herd.run(
                    "herd-watch",
                    [
                        "steer",
                        "--run",
                        &run,
                        "--message",
                        "Look at src/.",
                        "--json",
                    ],
                );
                assert!(out.success(), "steer:\n{out}");
                steered.set(true);
            }
        }
        herd.artifacts()
            .join("runs")
            .join(format!("{run}.delivered"))
            .exists()
    });
    assert!(seen_waiting.get(), "{events:#?}");
    let waits = needs_input(&events, &run);
    assert_eq!(waits.len(), 1, "{events:#?}");
    assert_eq!(waits[0].0, InputReason::TurnSettled);
    // A status line after the steer left the state before the result came.
    let labels = status_labels(&events, &run);
    let at = labels
        .iter()
        .position(|l| *l == Label::WaitingForInput)
        .unwrap();
    assert!(
        labels[at + 1..]
            .iter()
            .any(|l| *l != Label::WaitingForInput),
        "{labels:?}"
    );
    assert_eq!(status_row(&herd, &run).label, Label::Completed);
}

#[test]
fn on_tmux_an_interactive_pi_child_whose_run_settled_waits_for_its_person() {
    an_interactive_pi_child_whose_run_settled_waits_for_its_person(Where::Tmux, "", true);
}

#[test]
fn on_tmux_a_bare_child_asked_to_be_interactive_waits_for_its_person() {
    an_interactive_pi_child_whose_run_settled_waits_for_its_person(Where::Tmux, "", false);
}

#[test]
fn on_herdr_an_interactive_pi_child_whose_run_settled_waits_for_its_person() {
    an_interactive_pi_child_whose_run_settled_waits_for_its_person(
        Where::Herdr,
        "on_herdr_an_interactive_pi_child_whose_run_settled_waits_for_its_person",
        true,
    );
}

/// What the widget's row of a run shows of its cost: `1.2k tok · $0.012`, from the `usage` Pi
/// recorded on the assistant messages of its session.
fn usage_cell(session: &std::path::Path) -> String {
    let (mut tokens, mut cost) = (0_u64, 0.0_f64);
    for message in herd_e2e::session::messages(session) {
        if message["role"] == "assistant" {
            tokens += message["usage"]["totalTokens"].as_u64().unwrap();
            cost += message["usage"]["cost"]["total"].as_f64().unwrap();
        }
    }
    assert!(tokens >= 1_000, "the scripted usage reached the session");
    #[expect(clippy::cast_precision_loss, reason = "test token counts are small")]
    let k = tokens as f64 / 1_000.0;
    format!("{k:.1}k tok · ${cost:.3}")
}

/// Quotes `argv` for a POSIX shell.
fn shell_line(argv: &[std::ffi::OsString]) -> String {
    argv.iter()
        .map(|a| format!("'{}'", a.to_str().unwrap().replace('\'', r"'\''")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A real parent Pi with herd's extension in a pane (of a private tmux server, or of a real
/// Herdr server with Herdr's own notifications on), a person's client attached to it in a
/// terminal of its own (a pane of another tmux server), and an interactive child whose run
/// settles: the widget shows the child waiting for input with what it cost so far (checked
/// against its session), the person is told once (by tmux's message on that client, in
/// `show-messages` and on the client's screen; by Herdr's notification on the Herdr client's
/// screen) and in the parent Pi, and the child's cancel after it tells nothing more.
fn the_person_at_the_parent_is_told_once_that_a_child_waits_for_input(place: Where, test: &str) {
    use herd_e2e::herdr::HerdrServer;
    use herd_e2e::model::{Models, Usage};
    use herd_e2e::pi::pi_bin;
    use herd_e2e::rpc::parent_extension;
    use herd_e2e::tmux::Tmux;
    use herd_e2e::wait::wait_for;
    use std::ffi::OsString;

    const BUDGET: Duration = Duration::from_secs(90);
    let model = ModelServer::start_models(
        Models::new()
            .model(
                "parent",
                Script::new()
                    .step(ToolCall::new("tool_search", json!({"query": "subagent"})))
                    .step(ToolCall::new(
                        "subagent",
                        json!({
                            "name": "Planner", "agent": "planner", "task": "Wait for me",
                            "model": PiEnv::model_arg("child"),
                        }),
                    ))
                    .step(Text("Launched; waiting."))
                    .step(Text("Noted the cancel.")),
            )
            .model("child", Script::new().step(Text("Ready when you are.")))
            .priced(
                "child",
                json!({"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}),
            )
            .reporting(
                "child",
                Usage {
                    prompt: 4_000,
                    completion: 200,
                    cached: 1_000,
                },
            ),
    );
    let env = PiEnv::new(&model);
    std::fs::create_dir_all(env.agent_dir().join("agents")).unwrap();
    std::fs::write(
        env.agent_dir().join("agents/planner.md"),
        "---\nauto-exit: false\n---\nPlan with the user.\n",
    )
    .unwrap();
    let session = env.session_path("parent");
    let mut vars: Vec<(OsString, OsString)> = env.vars().to_vec();
    vars.push(("HERD_BIN_DIR".into(), herd_e2e::herd::bin_dir().into()));
    vars.push(("HERD_PI".into(), pi_bin().into()));
    vars.push(("HERD_HANG_WARNING_SECS".into(), "0".into()));
    let pi = env
        .pi()
        .model("parent")
        .session(&session)
        .arg("--no-skills")
        .arg("--no-context-files")
        .extension(&parent_extension())
        .arg("--herd-surface")
        .arg(place.surface());
    // The parent's surface, its Pi in a pane of it, and the person's client of it in a pane of
    // the person's own terminal.
    let person = Tmux::start(&vars);
    let (tmux, herdr, pane) = match place {
        Where::Tmux => {
            let tmux = Tmux::start(&vars);
            tmux.cmd(["set", "-g", "display-time", "60000"]);
            let mut argv: Vec<OsString> = vec!["env".into()];
            let mut socket = OsString::from("HERD_TMUX_SOCKET=");
            socket.push(tmux.socket_path());
            argv.push(socket);
            argv.extend(pi.argv());
            let pane = tmux.new_session("parent", pi.dir(), &argv);
            let client = [
                "tmux".into(),
                "-S".into(),
                tmux.socket_path().into(),
                "attach".into(),
                "-t".into(),
                "parent".into(),
            ];
            person.new_session("person", pi.dir(), &client);
            wait_for("the person's client", Duration::from_secs(10), || {
                (!tmux
                    .cmd(["list-clients", "-F", "#{client_name}"])
                    .is_empty())
                .then_some(())
            });
            (Some(tmux), None, pane)
        }
        Where::Herdr => {
            let Some(herdr) =
                HerdrServer::start_configured(test, &vars, "[ui.toast]\ndelivery = \"herdr\"\n")
            else {
                return;
            };
            let (_, pane) = herdr.workspace(pi.dir());
            herdr.ok([
                "pane",
                "run",
                &pane,
                &format!("exec {}", shell_line(&pi.argv())),
            ]);
            person.new_session("person", pi.dir(), &herdr.client_argv());
            (None, Some(herdr), pane)
        }
        Where::Process => unreachable!("a parent Pi in a pane"),
    };
    let screen = || match (&tmux, &herdr) {
        (Some(tmux), _) => tmux.capture(&pane),
        (_, Some(herdr)) => herdr.read(&pane),
        _ => unreachable!(),
    };
    let wait_screen = |what: &str, needle: &str| {
        wait_for(what, BUDGET, || screen().contains(needle).then_some(()));
    };
    wait_screen("the parent Pi", "parent");
    match (&tmux, &herdr) {
        (Some(tmux), _) => {
            tmux.send_text(&pane, "Start a planner.");
            tmux.send_keys(&pane, &["Enter"]);
        }
        (_, Some(herdr)) => {
            herdr.ok(["pane", "send-text", &pane, "Start a planner."]);
            herdr.wait_for_text(&pane, "Start a planner.", BUDGET);
            // An Enter that reaches Pi while it still starts up is lost; one on an empty editor
            // does nothing. So Enter until the parent's model is asked.
            let mut last: Option<std::time::Instant> = None;
            wait_for("the parent's prompt taken", BUDGET, || {
                if !model.requests_for("parent").is_empty() {
                    return Some(());
                }
                if last.is_none_or(|at| at.elapsed() > Duration::from_secs(3)) {
                    herdr.ok(["pane", "send-keys", &pane, "Enter"]);
                    last = Some(std::time::Instant::now());
                }
                None
            });
        }
        _ => unreachable!(),
    }
    let line = r#""Planner" is waiting for input: turn settled"#;
    let told = |log: &str| {
        log.lines()
            .filter(|l| l.ends_with(&format!("message: herd: {line}")))
            .count()
    };
    if let Some(tmux) = &tmux {
        wait_for("tmux's message to the person", BUDGET, || {
            (told(&tmux.cmd(["show-messages"])) > 0).then_some(())
        });
        person.wait_for_text("person", &format!("herd: {line}"), BUDGET);
    } else {
        // Herdr's notification, on the person's Herdr client: its title and its text.
        let shown = person.wait_for_text("person", line, BUDGET);
        assert!(shown.contains("● herd"), "{shown}");
    }
    // In the parent Pi too.
    wait_screen(
        "the notice in the parent Pi",
        r#""Planner" is waiting for input"#,
    );

    // The parent's one artifacts directory, `<its session's dir>/artifacts/<its id>/`.
    let art = std::fs::read_dir(session.parent().unwrap().join("artifacts"))
        .unwrap()
        .find_map(|e| Some(e.ok()?.path()))
        .unwrap();
    let run = std::fs::read_dir(art.join("runs"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .find_map(|n| {
            n.strip_suffix(".json")
                .filter(|id| !id.contains('.'))
                .map(str::to_owned)
        })
        .unwrap();
    // The widget: the child waits for input, and shows what its session cost so far.
    let record: herd_protocol::run::RunRecord = herd_e2e::herd::decode(
        &herd_e2e::herd::read_json(&art.join("runs").join(format!("{run}.json"))).unwrap(),
    );
    let cell = usage_cell(std::path::Path::new(&record.session_file));
    let row = format!("Planner (planner) · {cell}");
    let widget = wait_for("the widget's waiting row", BUDGET, || {
        let text = screen();
        text.lines()
            .any(|l| l.contains(&row) && l.contains("waiting for input · since"))
            .then_some(text)
    });
    assert!(
        widget.contains("─ Subagents ") && widget.contains("1 open"),
        "{widget}"
    );

    // The child is cancelled: its result is delivered as a message, and nothing more is told.
    // By the person, from a shell of the parent's surface.
    let mut cancel = herd_e2e::cli::within(herd_e2e::bin("herd-watch"), BUDGET);
    if let Some(herdr) = &herdr {
        for (key, value) in herdr.pane_vars(&pane) {
            cancel = cancel.env(key, value);
        }
    }
    let cancel = herd_e2e::cli::try_run(
        &cancel
            .arg("--artifacts")
            .arg(&art)
            .args(["cancel", "--run", &run, "--json"]),
    );
    assert!(cancel.success(), "{cancel}");
    wait_for("the cancel delivered to the parent", BUDGET, || {
        art.join("runs")
            .join(format!("{run}.delivered"))
            .exists()
            .then_some(())
    });
    wait_screen("the parent's answer to the cancel", "Noted the cancel.");
    if let Some(tmux) = &tmux {
        let log = tmux.cmd(["show-messages"]);
        assert_eq!(told(&log), 1, "{log}");
        assert_eq!(
            log.lines()
                .filter(|l| l.contains(" message: herd:"))
                .count(),
            1,
            "{log}"
        );
    }
}

#[test]
fn on_tmux_the_person_at_the_parent_is_told_once_that_a_child_waits_for_input() {
    the_person_at_the_parent_is_told_once_that_a_child_waits_for_input(
        Where::Tmux,
        "on_tmux_the_person_at_the_parent_is_told_once_that_a_child_waits_for_input",
    );
}

#[test]
fn on_herdr_the_person_at_the_parent_is_told_once_that_a_child_waits_for_input() {
    the_person_at_the_parent_is_told_once_that_a_child_waits_for_input(
        Where::Herdr,
        "on_herdr_the_person_at_the_parent_is_told_once_that_a_child_waits_for_input",
    );
}

/// An extension of the child's own (Pi finds it in its agent directory) whose tool asks the
/// person a question with a dialog.
const ASKING_EXTENSION: &str = r#"
import { Type } from "typebox";
export default function (pi) {
	pi.registerTool({
		name: "ask_person",
		label: "Ask",
		description: "Ask the person a yes/no question.",
		parameters: Type.Object({}),
		async execute(_id, _params, _signal, _update, ctx) {
			const yes = await ctx.ui.confirm("Delete the old branch?", "It has no commits of its own.");
			return { content: [{ type: "text", text: yes ? "answered yes" : "answered no" }], details: {} };
		},
	});
}
"#;

fn a_pi_child_with_a_dialog_open_waits_for_input_until_it_is_answered(place: Where, test: &str) {
    let model = ModelServer::start(
        Script::new()
            .step(ToolCall::new("ask_person", json!({})))
            .step(Said(
                "REPORT: asked",
                ToolCall::new("subagent_done", json!({})),
            ))
            .step(Text("never asked: subagent_done ends the session")),
    );
    let env = PiEnv::new(&model);
    let dir = env.agent_dir().join("extensions");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("ask.ts"), ASKING_EXTENSION).unwrap();
    let agents = env.agent_dir().join("agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(agents.join("worker.md"), "You do what the task says.\n").unwrap();
    let Some(herd) = Herd::try_new(&env, place, test) else {
        return;
    };
    let run = herd
        .launch(&json!({
            "name": "Cleaner",
            "agent": "worker",
            "task": "Ask before deleting",
            "model": Herd::model("fake-model"),
        }))
        .run_id;
    let answered = Cell::new(false);
    let events = herd.follow_until("the child's result", Duration::from_secs(90), || {
        if !answered.get() {
            let row = status_row(&herd, &run);
            if row.label == Label::WaitingForInput {
                let waiting = row.needs_input.as_ref().unwrap();
                assert_eq!(waiting.reason, InputReason::Dialog, "{row:?}");
                assert_eq!(waiting.kind.as_deref(), Some("confirm"), "{row:?}");
                assert_eq!(
                    waiting.title.as_deref(),
                    Some("Delete the old branch?"),
                    "{row:?}"
                );
                // The person answers in the child's pane.
                let pane = herd.run_record(&run).pane.unwrap().pane_id;
                match herd.herdr() {
                    Some(herdr) => herdr.ok(["pane", "send-keys", &pane, "Enter"]),
                    None => herd.tmux().unwrap().send_keys(&pane, &["Enter"]),
                }
                answered.set(true);
            }
        }
        herd.artifacts()
            .join("runs")
            .join(format!("{run}.delivered"))
            .exists()
    });
    assert!(answered.get(), "{events:#?}");
    let waits = needs_input(&events, &run);
    assert_eq!(waits.len(), 1, "{events:#?}");
    assert_eq!(
        waits[0],
        (InputReason::Dialog, Some("confirm".to_owned())),
        "{events:#?}"
    );
    let results = results(&events, &run);
    assert_eq!(results.len(), 1, "{events:#?}");
    assert_eq!(results[0].outcome, Outcome::Completed, "{:#?}", results[0]);
}

#[test]
fn on_tmux_a_pi_child_with_a_dialog_open_waits_for_input_until_it_is_answered() {
    a_pi_child_with_a_dialog_open_waits_for_input_until_it_is_answered(Where::Tmux, "");
}

#[test]
fn on_herdr_a_pi_child_with_a_dialog_open_waits_for_input_until_it_is_answered() {
    a_pi_child_with_a_dialog_open_waits_for_input_until_it_is_answered(
        Where::Herdr,
        "on_herdr_a_pi_child_with_a_dialog_open_waits_for_input_until_it_is_answered",
    );
}
