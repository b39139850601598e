//! A real Pi child launched by herd-launch and supervised by herd-watch: it runs a tool and
//! reports; a child that asks for help is resumed with the answer.

#![expect(
    clippy::unwrap_used,
    reason = "scenario steps shared by the tmux and process tests fail loudly on a broken fixture"
)]

use herd_e2e::herd::{Herd, Where, decode, read_json};
use herd_e2e::model::{ModelServer, Said, Script, Text, ToolCall, request};
use herd_e2e::pi::PiEnv;
use herd_e2e::session;

use herd_protocol::accept::{Level, ReportSource, Status};
use herd_protocol::child::CompletionFile;
use herd_protocol::launch::LaunchAck;
use herd_protocol::result::{Acceptance, Outcome};
use herd_protocol::run::LaunchStatus;
use serde_json::json;

/// Writes the role `worker`, which does not exit by itself: it ends with `subagent_done`.
fn worker_role(env: &PiEnv) {
    let dir = env.agent_dir().join("agents");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("worker.md"), "You do what the task says.\n").unwrap();
}

/// The one `<subagent_report …>` block of a result message, and what precedes it.
fn report_block(message: &str) -> &str {
    assert_eq!(
        message.matches("<subagent_report ").count(),
        1,
        "one opening tag: {message}"
    );
    assert_eq!(
        message.matches("</subagent_report>").count(),
        1,
        "one closing tag: {message}"
    );
    let start = message.find("<subagent_report ").unwrap();
    let end = message.find("</subagent_report>").unwrap() + "</subagent_report>".len();
    &message[start..end]
}

fn the_child_runs_a_tool_and_its_report_reaches_the_parent(place: Where, test: &str) {
    // The process surface runs Pi in print mode, which needs a child that ends by itself: a
    // child that ends with `subagent_done` (one that does not exit by itself) needs a terminal,
    // and herd-launch refuses it there. So on process the report is the auto-exit child's
    // last text; on tmux it is the text that comes with the `subagent_done` call.
    let report = "REPORT: wrote out.txt";
    let script = match place {
        Where::Process => Script::new()
            .step(ToolCall::bash("echo hello > out.txt"))
            .step(Text(report)),
        Where::Tmux | Where::Herdr => Script::new()
            .step(ToolCall::bash("echo hello > out.txt"))
            .step(Said(report, ToolCall::new("subagent_done", json!({}))))
            .step(Text("never asked: subagent_done ends the session")),
    };
    let model = ModelServer::start(script);
    let env = PiEnv::new(&model);
    let Some(herd) = Herd::try_new(&env, place, test) else {
        return;
    };
    let mut request = json!({
        "name": "Writer",
        "task": "Write hello into out.txt",
        "model": Herd::model("fake-model"),
    });
    if place != Where::Process {
        worker_role(&env);
        request["agent"] = "worker".into();
    }

    let ack = herd.launch(&request);
    let run = ack.run_id.as_str();
    assert_eq!(ack.auto_exit, place == Where::Process, "{ack:?}");
    let pid = herd.child_pid(run);
    let (code, result) = herd.wait_result(run);

    assert_eq!(code, 0, "{result:#?}");
    assert_eq!(result.outcome, Outcome::Completed, "{result:#?}");
    let message = &result.message;
    assert!(
        message.starts_with("Sub-agent \"Writer\" completed"),
        "{message}"
    );
    assert_eq!(message.lines().nth(1), Some("Check: none"), "{message}");
    assert_eq!(
        report_block(message),
        format!("<subagent_report from=\"Writer\" kind=\"result\">\n{report}\n</subagent_report>")
    );
    assert!(
        message.contains("\nModel used: fake/fake-model\n"),
        "{message}"
    );
    // The tool really ran, in the child's directory.
    assert_eq!(
        std::fs::read_to_string(env.work_dir().join("out.txt")).unwrap(),
        "hello\n"
    );
    let session_file = ack.session_file.as_str();
    let exit = read_json(format!("{session_file}.exit").as_ref()).unwrap();
    assert_eq!(
        decode::<CompletionFile>(&exit),
        CompletionFile::Done,
        "{exit}"
    );
    let messages = session::messages(session_file.as_ref());
    let calls: Vec<String> = messages
        .iter()
        .flat_map(session::tool_calls)
        .map(|c| c["name"].as_str().unwrap_or_default().to_owned())
        .collect();
    let requests = model.requests();
    let offered = request::tool_names(&requests[0]);
    assert!(offered.contains(&"caller_ping".to_owned()), "{offered:?}");
    match place {
        Where::Process => {
            assert_eq!(calls, ["bash"]);
            assert!(
                !offered.contains(&"subagent_done".to_owned()),
                "{offered:?}"
            );
        }
        Where::Tmux | Where::Herdr => {
            assert_eq!(calls, ["bash", "subagent_done"]);
            assert!(offered.contains(&"subagent_done".to_owned()), "{offered:?}");
        }
    }
    assert_eq!(
        requests.len(),
        2,
        "subagent_done asks the model nothing more"
    );
    // The result can arrive while Pi is still shutting down; the child exits by itself.
    assert_eq!(herd.child_pid(run), pid);
    herd.wait_for_child_gone(run);
}

#[test]
fn on_process_the_child_runs_a_tool_and_its_report_reaches_the_parent() {
    the_child_runs_a_tool_and_its_report_reaches_the_parent(Where::Process, "");
}

#[test]
fn on_tmux_the_child_runs_a_tool_calls_subagent_done_and_its_report_reaches_the_parent() {
    the_child_runs_a_tool_and_its_report_reaches_the_parent(Where::Tmux, "");
}

#[test]
fn on_herdr_the_child_runs_a_tool_calls_subagent_done_and_its_report_reaches_the_parent() {
    the_child_runs_a_tool_and_its_report_reaches_the_parent(
        Where::Herdr,
        "on_herdr_the_child_runs_a_tool_calls_subagent_done_and_its_report_reaches_the_parent",
    );
}

fn a_help_request_is_answered_by_a_resume(place: Where) {
    let question = "Which schema should the migration use?";
    let model = ModelServer::start(
        Script::new()
            .step(ToolCall::bash("echo draft > draft.txt"))
            .step(ToolCall::new("caller_ping", json!({ "message": question })))
            .step(Text("REPORT: migrated with schema v2")),
    );
    let env = PiEnv::new(&model);
    let herd = Herd::new(&env, place);
    let ack = herd.launch(&json!({
        "name": "Migrator",
        "task": "Write the migration",
        "model": Herd::model("fake-model"),
    }));
    let run = ack.run_id.as_str();
    let session_file = ack.session_file.clone();

    let (code, help) = herd.wait_result(run);
    assert_eq!(code, 6, "{help:#?}");
    assert_eq!(help.outcome, Outcome::Help, "{help:#?}");
    let message = &help.message;
    // Seed: "Parent receives a steer notification: *"Sub-agent Worker needs help"*".
    assert!(
        message.starts_with("Sub-agent Migrator needs help ("),
        "{message}"
    );
    assert_eq!(
        report_block(message),
        format!(
            "<subagent_report from=\"Migrator\" kind=\"help-request\">\n{question}\n</subagent_report>"
        )
    );
    assert!(message.contains(&session_file), "{message}");
    assert_eq!(model.requests().len(), 2, "caller_ping ends the turn");

    let out = herd.run(
        "herd-launch",
        [
            "resume",
            "--session",
            &session_file,
            "--message",
            "Use schema v2.",
            "--surface",
            place.surface(),
            "--json",
        ],
    );
    assert!(out.success(), "resume:\n{out}");
    let resumed: LaunchAck = out.doc();
    assert_eq!(resumed.status, LaunchStatus::Launched, "resume:\n{out}");
    let second = resumed.run_id.as_str();
    assert_ne!(second, run, "a resume is a run of its own");
    assert_eq!(resumed.session_file, session_file);

    let (code, result) = herd.wait_result(second);
    assert_eq!(code, 0, "{result:#?}");
    assert_eq!(result.outcome, Outcome::Completed);
    assert_eq!(
        report_block(&result.message),
        "<subagent_report from=\"Resume\" kind=\"result\">\nREPORT: migrated with schema v2\n</subagent_report>"
    );
    // The answer reached the model as the next user message of the same conversation.
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    let users = request::user_texts(&requests[2]);
    assert!(
        users.last().is_some_and(|t| t.contains("Use schema v2.")),
        "{users:?}"
    );
    assert_eq!(request::assistant_count(&requests[2]), 2);
    // The first run's result is unchanged: it was delivered once, as a help request.
    let (code, again) = herd.wait_result(run);
    assert_eq!((code, &again.message), (6, &help.message));
}

/// Seed: "Names are abbreviated to 80 characters in the framing sentence and the `from`
/// attribute": a longer name is launched under its abbreviation, not refused, and the long name
/// still finds its run.
#[test]
fn on_process_a_name_over_80_characters_is_abbreviated_not_refused() {
    let model = ModelServer::start(Script::new().step(Text("REPORT: done")));
    let env = PiEnv::new(&model);
    let herd = Herd::new(&env, Where::Process);
    let long = format!("Reviewer-{}", "x".repeat(91));
    assert_eq!(long.chars().count(), 100);
    let short = format!("{}…", &long[..79]);
    let ack = herd.launch(&json!({
        "name": long,
        "task": "Say done",
        "model": Herd::model("fake-model"),
    }));
    assert_eq!(ack.name, short, "{ack:?}");
    let out = herd.run("herd-watch", ["wait", "--name", &long, "--json"]);
    assert_eq!(out.code, 0, "{out}");
    let result: herd_protocol::watch::WatchWait = decode(&herd_e2e::herd::json_doc(&out));
    assert_eq!(result.run_id, ack.run_id);
    assert!(
        result.message.contains(&format!(
            "The following is a report from subagent \"{short}\";"
        )),
        "{}",
        result.message
    );
    assert_eq!(
        report_block(&result.message),
        format!(
            "<subagent_report from=\"{short}\" kind=\"result\">\nREPORT: done\n</subagent_report>"
        )
    );
}

#[test]
fn on_process_a_help_request_is_answered_by_a_resume() {
    a_help_request_is_answered_by_a_resume(Where::Process);
}

#[test]
fn on_tmux_a_help_request_is_answered_by_a_resume() {
    a_help_request_is_answered_by_a_resume(Where::Tmux);
}

/// A final answer that ends with the acceptance report the gate's prompt asks for.
const GATED_REPORT: &str = "Wrote out.txt.\n\n```acceptance-report\n{\"criteriaSatisfied\": [{\"id\": \"criterion-1\", \"status\": \"satisfied\", \"evidence\": \"cat out.txt\"}], \"changedFiles\": [\"out.txt\"], \"testsAddedOrUpdated\": [], \"commandsRun\": [{\"command\": \"echo hello > out.txt\", \"result\": \"passed\"}], \"residualRisks\": [\"none known\"], \"noStagedFiles\": true}\n```";

#[test]
fn on_process_a_pi_child_is_asked_for_its_acceptance_report_and_the_gate_decides() {
    let script = Script::new()
        .step(ToolCall::bash("echo hello > out.txt"))
        .step(Text(GATED_REPORT));
    let model = ModelServer::start(script);
    let env = PiEnv::new(&model);
    let Some(herd) = Herd::try_new(
        &env,
        Where::Process,
        "on_process_a_pi_child_is_asked_for_its_acceptance_report_and_the_gate_decides",
    ) else {
        return;
    };
    let ack = herd.launch(&json!({
        "name": "Gated",
        "task": "Write hello into out.txt",
        "model": Herd::model("fake-model"),
        "acceptance": {"level": "checked", "criteria": ["Write hello into out.txt"]},
    }));
    assert_eq!(
        ack.acceptance.as_ref().map(|a| a.level.as_str()),
        Some("checked"),
        "{ack:?}"
    );
    let (code, result) = herd.wait_result(&ack.run_id);
    assert_eq!(code, 0, "{result:#?}");

    // The model saw the contract in the child's first message.
    let requests = model.requests();
    let first = request::user_texts(&requests[0]).join("\n");
    assert!(first.contains("## Acceptance"), "{first}");
    assert!(
        first.contains("- `criterion-1` (required): Write hello into out.txt"),
        "{first}"
    );
    assert!(first.contains("```acceptance-report"), "{first}");

    // The verdict is a host line outside the block; the fence is out of the block.
    let message = &result.message;
    assert_eq!(
        report_block(message),
        "<subagent_report from=\"Gated\" kind=\"result\">\nWrote out.txt.\n</subagent_report>"
    );
    let after = &message[message.find("</subagent_report>").unwrap()..];
    assert!(
        after.contains("\nAcceptance: checked (level checked, explicit, evidence checked)\n"),
        "{message}"
    );
    let Some(Acceptance::Applied(ledger)) = &result.details.acceptance else {
        panic!("the gate was applied: {result:#?}");
    };
    assert_eq!(ledger.status, Status::Checked, "{ledger:#?}");
    assert_eq!(ledger.gate.level, Level::Checked, "{ledger:#?}");
    assert_eq!(
        ledger.report_source,
        Some(ReportSource::AcceptanceFence),
        "{ledger:#?}"
    );
    assert_eq!(
        ledger
            .child_report
            .as_ref()
            .and_then(|r| r.changed_files.as_deref()),
        Some(&["out.txt".to_owned()][..]),
        "{ledger:#?}"
    );
    // The raw transcript keeps the fence.
    let session_file = ack.session_file.as_str();
    let texts: Vec<String> = session::messages(session_file.as_ref())
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        texts.iter().any(|t| t.contains("acceptance-report")),
        "the session keeps the report"
    );
}

/// A child whose Pi never started (it dies before its first line) ran no model and used
/// nothing: its failure says so, without a `Model used:` or a `Usage: 0 in …` line as if it ran.
#[test]
fn on_process_a_child_that_never_started_reports_no_model_used_and_no_usage() {
    let model = ModelServer::start(Script::new().step(Text("never asked")));
    let env = PiEnv::new(&model);
    let broken = env.root().join("broken-pi");
    std::fs::write(
        &broken,
        "#!/bin/sh\necho 'pi: cannot start here' >&2\nexit 1\n",
    )
    .unwrap();
    let mut perms = std::fs::metadata(&broken).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&broken, perms).unwrap();
    let mut herd = Herd::new(&env, Where::Process);
    herd.set_var("HERD_PI", &broken);
    let ack = herd.launch(&json!({
        "name": "Stillborn",
        "task": "Say done",
        "model": Herd::model("fake-model"),
    }));
    let (code, result) = herd.wait_result(&ack.run_id);
    let message = &result.message;
    assert_ne!(code, 0, "{message}");
    assert_eq!(result.outcome, Outcome::Failed, "{result:#?}");
    assert!(model.requests().is_empty(), "no model was asked");
    assert!(!message.contains("Model used:"), "{message}");
    assert!(!message.contains("Usage:"), "{message}");
    assert_eq!(result.details.model, None, "{result:#?}");
}
