//! A real Pi parent in RPC mode with herd's parent extension, delegating to a real Pi child
//! through the `subagent` tool. Every step is observed in the model server's request log, Pi's
//! RPC output and the files herd and Pi write, never by timing.

#![expect(
    clippy::unwrap_used,
    reason = "scenario steps fail loudly on a broken fixture"
)]

use std::path::{Path, PathBuf};

use herd_e2e::herd::read_json;
use herd_e2e::model::{ModelServer, Models, Script, Text, ToolCall, request};
use herd_e2e::pi::PiEnv;
use herd_e2e::rpc::{PiRpc, STEP_BUDGET, custom_messages, processes_mentioning};
use herd_e2e::session;
use herd_e2e::wait::wait_for;
use serde_json::{Value, json};

/// The nine routine tools seed 003 defers.
const ROUTINE: [&str; 9] = [
    "subagent",
    "subagent_cancel",
    "subagent_interrupt",
    "subagent_resume",
    "subagent_send",
    "subagent_stop",
    "subagents_list",
    "worktree_list",
    "worktree_remove",
];

const WRITER: &str = "subagents_write_task_models";

/// The parent's script: search, launch a scout on `model`, wait, then answer the report.
fn parent_script(request: Value) -> Script {
    Script::new()
        .step(ToolCall::new("tool_search", json!({"query": "subagent"})))
        .step(ToolCall::new("subagent", request))
        .step(Text("Launched; waiting."))
        .step(Text("Integrated the report."))
}

fn scout(model: &str) -> Value {
    json!({"name": "Scout", "task": "Report the answer", "model": PiEnv::model_arg(model)})
}

/// The artifacts directory of the parent session, as herd derives it.
fn artifacts_of(session: &Path) -> PathBuf {
    let header = session::entries(session).into_iter().next().unwrap();
    session
        .parent()
        .unwrap()
        .join("artifacts")
        .join(header["id"].as_str().unwrap())
}

/// The `custom_message` entries of `custom_type` in a session file.
fn custom_entries(session: &Path, custom_type: &str) -> Vec<Value> {
    session::entries(session)
        .into_iter()
        .filter(|e| e["type"] == "custom_message" && e["customType"] == custom_type)
        .collect()
}

/// How often `needle` occurs in the user messages of a request.
fn occurrences(body: &Value, needle: &str) -> usize {
    request::user_texts(body)
        .iter()
        .map(|t| t.matches(needle).count())
        .sum()
}

/// Waits until the session's last message is a final assistant text equal to `text`.
fn wait_answer(session: &Path, text: &str) {
    wait_for(
        &format!("the answer {text:?} in {}", session.display()),
        STEP_BUDGET,
        || {
            session::messages(session).pop().filter(|m| {
                m["role"] == "assistant" && session::is_final(m) && session::text(m) == text
            })
        },
    );
}

/// The run id of the one launch in the parent's artifacts directory.
fn only_run(artifacts: &Path) -> String {
    let ids: Vec<String> = std::fs::read_dir(artifacts.join("runs"))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            let id = name.strip_suffix(".json")?;
            (!id.contains('.')).then(|| id.to_owned())
        })
        .collect();
    assert_eq!(ids.len(), 1, "one run: {ids:?}");
    ids.into_iter().next().unwrap()
}

/// The report reached the parent once: one message in the RPC output and in the transcript,
/// and no request carries it twice; the last request carries it.
fn assert_one_report(model: &ModelServer, parent: &PiRpc, session: &Path, parent_model: &str) {
    let results = custom_messages(&parent.events(), "subagent_result");
    assert_eq!(
        results.len(),
        1,
        "one subagent_result message: {results:#?}"
    );
    let entries = custom_entries(session, "subagent_result");
    assert_eq!(entries.len(), 1, "one subagent_result entry: {entries:#?}");
    let content = entries[0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        content.starts_with("Sub-agent \"Scout\" completed"),
        "{content}"
    );
    assert_eq!(
        content
            .matches("<subagent_report from=\"Scout\" kind=\"result\">")
            .count(),
        1,
        "{content}"
    );
    assert!(content.contains("REPORT: 42"), "{content}");
    let requests = model.requests_for(parent_model);
    for body in &requests {
        assert!(
            occurrences(body, "<subagent_report ") <= 1,
            "at most one block per request: {body:#}"
        );
    }
    let last = requests.last().unwrap();
    assert_eq!(
        occurrences(last, "<subagent_report from=\"Scout\""),
        1,
        "{last:#}"
    );
}

#[test]
fn a_parent_searches_delegates_on_the_process_surface_and_hears_the_report_once() {
    let model = ModelServer::start_models(
        Models::new()
            .model("parent", parent_script(scout("child")))
            .model("child", Script::new().step(Text("REPORT: 42"))),
    );
    let env = PiEnv::new(&model);
    let session = env.session_path("parent");
    let mut parent = PiRpc::start_with(
        &env,
        &session,
        "parent",
        &[],
        &["--herd-surface", "process"],
    );

    parent.prompt("Delegate to a scout.");
    wait_answer(&session, "Integrated the report.");

    let requests = model.requests_for("parent");
    // 1. The routine tools are deferred: the first request declares the search, not them.
    let first = request::tool_names(&requests[0]);
    assert!(first.contains(&"tool_search".to_owned()), "{first:?}");
    for tool in ROUTINE.iter().chain([&WRITER]) {
        assert!(
            !first.contains(&(*tool).to_owned()),
            "{tool} is not declared at first: {first:?}"
        );
    }
    // 2. After the search, the tools it matched are declared; the writer still is not.
    let searched = request::tool_names(&requests[1]);
    for tool in ROUTINE.iter().filter(|t| t.starts_with("subagent")) {
        assert!(
            searched.contains(&(*tool).to_owned()),
            "{tool} after tool_search: {searched:?}"
        );
    }
    assert!(!searched.contains(&WRITER.to_owned()), "{searched:?}");
    // 3. herd launched the child, which ran on the child's model.
    let artifacts = artifacts_of(&session);
    let id = only_run(&artifacts);
    let record = read_json(&artifacts.join("runs").join(format!("{id}.json"))).unwrap();
    assert_eq!(record["surface"], "process", "{record:#}");
    assert!(
        request::tool_results(&requests[2])
            .iter()
            .any(|t| t.contains(&id)),
        "{:#}",
        requests[2]
    );
    let child = model.requests_for("child");
    assert_eq!(child.len(), 1);
    assert!(
        request::user_texts(&child[0])
            .iter()
            .any(|t| t.contains("Report the answer"))
    );
    // 4. The report came once, started a turn, and the model saw one block.
    assert_one_report(&model, &parent, &session, "parent");
    assert!(
        artifacts
            .join("runs")
            .join(format!("{id}.delivered"))
            .exists()
    );
    // 5. The widget showed the run and was cleared.
    let widgets: Vec<Value> = parent
        .events()
        .into_iter()
        .filter(|e| {
            e["type"] == "extension_ui_request"
                && e["method"] == "setWidget"
                && e["widgetKey"] == "herd-subagents"
        })
        .collect();
    assert!(
        widgets
            .iter()
            .any(|w| w["widgetLines"].as_array().is_some_and(|l| l
                .iter()
                .any(|l| l.as_str().is_some_and(|l| l.contains("Scout"))))),
        "{widgets:#?}"
    );
    let cleared = || {
        parent
            .events()
            .into_iter()
            .rev()
            .find(|e| {
                e["type"] == "extension_ui_request"
                    && e["method"] == "setWidget"
                    && e["widgetKey"] == "herd-subagents"
            })
            .filter(|w| w["widgetLines"].is_null())
    };
    wait_for("the widget to be cleared", STEP_BUDGET, cleared);
    // 6. Nothing outlives the parent.
    assert!(parent.close().success());
    assert!(
        processes_mentioning(artifacts.as_os_str()).is_empty(),
        "a herd-watch of {} is left",
        artifacts.display()
    );
}
