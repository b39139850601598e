//! The Pi Herd face (seed 000's `subagent`, `HERD_API=pi-herd`): a real Pi parent in RPC mode
//! with the scripted model lists, assigns, steers, replies and closes through its one tool, and
//! herd's own programs see the same runs. Every step is observed in the model server's request
//! log, Pi's RPC output and the files herd and Pi write, never by timing.

#![expect(
    clippy::unwrap_used,
    reason = "scenario steps fail loudly on a broken fixture"
)]

use std::path::{Path, PathBuf};

use herd_e2e::model::{ModelServer, Models, Script, Text, ToolCall, request};
use herd_e2e::pi::PiEnv;
use herd_e2e::rpc::{PiRpc, STEP_BUDGET, custom_messages};
use herd_e2e::session;
use herd_e2e::wait::wait_for;
use serde_json::{Value, json};

const FACE: (&str, &str) = ("HERD_API", "pi-herd");

fn call(params: Value) -> ToolCall {
    ToolCall::new("subagent", params)
}

/// A role whose child runs on the model `model` (the request of this face names no model).
fn role(env: &PiEnv, name: &str, model: &str) {
    std::fs::create_dir_all(env.agent_dir().join("agents")).unwrap();
    std::fs::write(
        env.agent_dir().join(format!("agents/{name}.md")),
        format!(
            "---\nmodel: {}\nauto-exit: true\n---\nDo the work and report.\n",
            PiEnv::model_arg(model)
        ),
    )
    .unwrap();
}

fn artifacts_of(session: &Path) -> PathBuf {
    let header = session::entries(session).into_iter().next().unwrap();
    session
        .parent()
        .unwrap()
        .join("artifacts")
        .join(header["id"].as_str().unwrap())
}

/// The run ids of the directory (records only).
fn runs(artifacts: &Path) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(artifacts.join("runs")) else {
        return Vec::new();
    };
    let mut ids: Vec<String> = dir
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            let id = name.strip_suffix(".json")?;
            (!id.contains('.')).then(|| id.to_owned())
        })
        .collect();
    ids.sort();
    ids
}

fn wait_answer(session: &Path, text: &str) {
    wait_for(&format!("the answer {text:?}"), STEP_BUDGET, || {
        session::messages(session).pop().filter(|m| {
            m["role"] == "assistant" && session::is_final(m) && session::text(m) == text
        })
    });
}

/// The tool results new in the parent's request `n`, each parsed as the face's JSON answer.
fn answers(model: &ModelServer, n: usize) -> Vec<Value> {
    let requests = model.requests_for("parent");
    // Each request carries the whole conversation: the new results follow the earlier ones.
    let earlier = request::tool_results(&requests[n - 1]).len();
    request::tool_results(&requests[n])
        .iter()
        .skip(earlier)
        .map(|t| serde_json::from_str(t).unwrap_or_else(|_| json!({ "unparsed": t })))
        .collect()
}

fn result_entries(session: &Path) -> Vec<Value> {
    session::entries(session)
        .into_iter()
        .filter(|e| e["type"] == "custom_message" && e["customType"] == "subagent_result")
        .collect()
}

/// `herd-watch status --json` of the directory, as a person would run it.
fn herd_status(artifacts: &Path) -> Value {
    let out = herd_e2e::cli::run(
        &herd_e2e::cli::command(herd_e2e::bin("herd-watch"))
            .arg("--artifacts")
            .arg(artifacts.as_os_str())
            .args(["status", "--json"]),
    );
    assert!(out.success(), "{out}");
    out.json()
}

fn envelope(label: &str, agent: &str, request: &str, status: &str) -> String {
    format!(
        "Pi Herd worker result · label: \"{label}\" · agent: \"{agent}\" · request: {request} · status: {status}"
    )
}

#[test]
fn pi_herd_lists_refuses_invalid_requests_assigns_and_delivers_one_enveloped_result() {
    let invalid = vec![
        call(json!({"action": "list", "task": "x"})),
        call(json!({"action": "assign", "agent": "scout", "session": "/s/a.jsonl", "task": "t"})),
        call(json!({"action": "assign", "label": "Scout", "task": "t"})),
        call(json!({"action": "assign", "agent": "scout", "task": "t", "timeoutMs": 5000})),
        call(json!({"action": "assign", "agent": "scout", "task": "  "})),
        call(json!({"action": "assign", "label": "scout", "task": "t", "reusable": true})),
        call(json!({"action": "steer", "label": "scout", "message": "m", "timeoutMs": 6000})),
        call(json!({"action": "reply", "label": "scout", "message": "m", "agent": "scout"})),
        call(json!({"action": "close", "label": "scout", "files": ["notes.md"]})),
        call(json!({"action": "assign", "agent": "scout", "task": "t", "files": ["missing.md"]})),
        call(json!({"action": "assign", "agent": "scout", "task": "t", "colour": "red"})),
    ];
    let n_invalid = invalid.len();
    let model = ModelServer::start_models(
        Models::new()
            .model(
                "parent",
                Script::new()
                    .step(call(json!({"action": "list"})))
                    .step(herd_e2e::model::Step::ToolCalls(invalid))
                    .step(call(json!({"action": "list"})))
                    .step(call(
                        json!({"action": "assign", "agent": "scout", "task": "Report the answer", "timeoutMs": 60000}),
                    ))
                    .step(call(json!({"action": "list"})))
                    .step(Text("Assigned; waiting."))
                    .step(Text("Integrated the report.")),
            )
            .model("child", Script::new().step(Text("REPORT: 42"))),
    );
    let env = PiEnv::new(&model);
    role(&env, "scout", "child");
    let session = env.session_path("parent");
    let mut parent = PiRpc::start_with(
        &env,
        &session,
        "parent",
        &[(FACE.0, FACE.1.as_ref())],
        &["--herd-surface", "process"],
    );
    parent.prompt("Delegate to a scout.");
    wait_answer(&session, "Integrated the report.");

    let requests = model.requests_for("parent");
    // 1. The face declares seed 000's one `subagent` and none of seed 003's tools.
    let tools = request::tool_names(&requests[0]);
    assert!(tools.contains(&"subagent".to_owned()), "{tools:?}");
    for other in [
        "subagent_cancel",
        "subagent_resume",
        "subagents_list",
        "worktree_list",
    ] {
        assert!(!tools.contains(&other.to_owned()), "{other}: {tools:?}");
    }
    // 2. The first list is empty, with the definitions.
    let first = &answers(&model, 1)[0];
    assert_eq!(first["ok"], true, "{first:#}");
    assert_eq!(first["workers"], json!([]), "{first:#}");
    assert!(
        first["agent_definitions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["name"] == "scout"),
        "{first:#}"
    );
    // 3. Every invalid request is refused as invalid_request, and nothing launched.
    let refused = answers(&model, 2);
    assert_eq!(refused.len(), n_invalid, "{refused:#?}");
    for answer in &refused {
        assert_eq!(answer["ok"], false, "{answer:#}");
        assert_eq!(answer["error"]["category"], "invalid_request", "{answer:#}");
    }
    let after_refusals = &answers(&model, 3)[0];
    assert_eq!(after_refusals["workers"], json!([]), "{after_refusals:#}");
    // 4. The fresh assign answers with the label (from the definition) and a request id.
    let assigned = &answers(&model, 4)[0];
    assert_eq!(assigned["ok"], true, "{assigned:#}");
    assert_eq!(assigned["action"], "assign");
    assert_eq!(assigned["label"], "scout");
    let request_id = assigned["request_id"].as_str().unwrap().to_owned();
    // 5. The list after shows the worker.
    let listed = &answers(&model, 5)[0];
    let worker = &listed["workers"][0];
    assert_eq!(worker["label"], "scout", "{listed:#}");
    assert_eq!(worker["agent_definition"], "scout", "{listed:#}");
    assert_eq!(
        worker["active_request_id"],
        request_id.as_str(),
        "{listed:#}"
    );
    assert!(
        ["working", "settling"].contains(&worker["state"].as_str().unwrap()),
        "{listed:#}"
    );
    // 6. One result, beginning with the envelope, with the completion details once.
    let results = custom_messages(&parent.events(), "subagent_result");
    assert_eq!(results.len(), 1, "{results:#?}");
    let entries = result_entries(&session);
    assert_eq!(entries.len(), 1, "{entries:#?}");
    let content = entries[0]["content"].as_str().unwrap();
    let mut lines = content.lines();
    assert_eq!(
        lines.next().unwrap(),
        envelope("scout", "scout", &request_id, "completed")
    );
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("Sub-agent \"scout\" completed"),
        "{content}"
    );
    assert_eq!(content.matches("<subagent_report ").count(), 1, "{content}");
    assert!(content.contains("REPORT: 42"), "{content}");
    let details = &entries[0]["details"]["piHerd"];
    assert_eq!(details["requestId"], request_id.as_str(), "{details:#}");
    assert_eq!(details["workerLabel"], "scout");
    assert_eq!(details["agentDefinition"], "scout");
    assert_eq!(details["status"], "completed");
    assert_eq!(details["truncated"], false);
    let artifacts = artifacts_of(&session);
    let ids = runs(&artifacts);
    assert_eq!(ids.len(), 1, "one run, the valid assign's: {ids:?}");
    let id = &ids[0];
    assert_eq!(
        details["resultPath"],
        artifacts
            .join("runs")
            .join(format!("{id}.result.json"))
            .to_str()
            .unwrap()
    );
    assert!(Path::new(details["resultPath"].as_str().unwrap()).exists());
    // 7. The last request carries the result once.
    let last = model.requests_for("parent").pop().unwrap();
    let carried: usize = request::user_texts(&last)
        .iter()
        .map(|t| t.matches("Pi Herd worker result").count())
        .sum();
    assert_eq!(carried, 1, "{last:#}");
    // 8. herd's own status shows the same run, under the worker's label, delivered.
    let status = herd_status(&artifacts);
    let row = status["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["run_id"] == id.as_str())
        .unwrap();
    assert_eq!(row["name"], "scout", "{status:#}");
    assert_eq!(row["outcome"], "completed", "{status:#}");
    wait_for("the acknowledged delivery", STEP_BUDGET, || {
        artifacts
            .join("runs")
            .join(format!("{id}.delivered"))
            .exists()
            .then_some(())
    });
    assert!(parent.close().success());
}
