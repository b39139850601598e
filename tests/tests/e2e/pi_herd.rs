//! The Pi Herd face (Pi Herd's `subagent`, `HERD_API=pi-herd`; docs/pi-herd.md): a real Pi parent
//! in RPC mode with the scripted model lists, assigns, steers, replies and closes through its one
//! tool, and herd's own programs see the same runs. Every step is observed in the model server's
//! request log, Pi's RPC output and the files herd and Pi write, never by timing.

#![expect(
    clippy::unwrap_used,
    reason = "scenario steps fail loudly on a broken fixture"
)]

use std::path::{Path, PathBuf};

use herd_e2e::model::{ModelServer, Models, REPORTED_SESSION, Script, Text, ToolCall, request};
use herd_e2e::pi::PiEnv;
use herd_e2e::rpc::{PiRpc, STEP_BUDGET, custom_messages};
use herd_e2e::session;
use herd_e2e::tmux::Tmux;
use herd_e2e::wait::wait_for;
use herd_protocol::result::Outcome;
use herd_protocol::watch::StatusRuns;
use serde_json::{Value, json};

pub(crate) const FACE: (&str, &str) = ("HERD_API", "pi-herd");

pub(crate) fn call(params: Value) -> ToolCall {
    ToolCall::new("subagent", params)
}

/// A role whose child runs on the model `model` (the request of this face names no model).
pub(crate) fn role(env: &PiEnv, name: &str, model: &str) {
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

pub(crate) fn artifacts_of(session: &Path) -> PathBuf {
    let header = session::entries(session).into_iter().next().unwrap();
    session
        .parent()
        .unwrap()
        .join("artifacts")
        .join(header["id"].as_str().unwrap())
}

/// The run ids of the directory (records only).
pub(crate) fn runs(artifacts: &Path) -> Vec<String> {
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

pub(crate) fn wait_answer(session: &Path, text: &str) {
    wait_for(&format!("the answer {text:?}"), STEP_BUDGET, || {
        session::messages(session).pop().filter(|m| {
            m["role"] == "assistant" && session::is_final(m) && session::text(m) == text
        })
    });
}

/// The tool results new in the parent's request `n`, each parsed as the face's JSON answer.
pub(crate) fn answers(model: &ModelServer, n: usize) -> Vec<Value> {
    answers_of(model, "parent", n)
}

/// The tool results new in request `n` of the session on the scripted model `who`.
fn answers_of(model: &ModelServer, who: &str, n: usize) -> Vec<Value> {
    let requests = model.requests_for(who);
    // Each request carries the whole conversation: the new results follow the earlier ones.
    let earlier = request::tool_results(&requests[n - 1]).len();
    request::tool_results(&requests[n])
        .iter()
        .skip(earlier)
        .map(|t| serde_json::from_str(t).unwrap_or_else(|_| json!({ "unparsed": t })))
        .collect()
}

pub(crate) fn result_entries(session: &Path) -> Vec<Value> {
    session::entries(session)
        .into_iter()
        .filter(|e| e["type"] == "custom_message" && e["customType"] == "subagent_result")
        .collect()
}

/// `herd-watch status --json` of the directory, as a person would run it.
fn herd_status(artifacts: &Path) -> StatusRuns {
    let out = herd_e2e::cli::run(
        &herd_e2e::cli::command(herd_e2e::bin("herd-watch"))
            .arg("--artifacts")
            .arg(artifacts.as_os_str())
            .args(["status", "--json"]),
    );
    assert!(out.success(), "{out}");
    out.doc()
}

/// The context usage the Pi Herd face's details report for the assistant message of `session` whose
/// text is `answer`, from the numbers Pi recorded on it, in the scripted model's context window.
fn usage_of(session: &Path, answer: &str) -> Value {
    let message = session::messages(session)
        .into_iter()
        .rfind(|m| m["role"] == "assistant" && session::text(m) == answer)
        .unwrap();
    let usage = &message["usage"];
    let tokens = match usage["totalTokens"].as_u64() {
        Some(total) if total > 0 => total,
        _ => ["input", "output", "cacheRead", "cacheWrite"]
            .iter()
            .map(|k| usage[*k].as_u64().unwrap())
            .sum(),
    };
    assert!(tokens > 0, "{message:#}");
    #[expect(clippy::cast_precision_loss, reason = "token counts are small")]
    let percent = tokens as f64 / 128_000.0 * 100.0;
    json!({ "tokens": tokens, "contextWindow": 128_000, "percent": percent })
}

pub(crate) fn envelope(label: &str, agent: &str, request: &str, status: &str) -> String {
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
                    .step(call(
                        json!({"action": "assign", "session": REPORTED_SESSION, "task": "Go on from there"}),
                    ))
                    .step(Text("Resumed; waiting."))
                    .step(Text("Integrated both reports.")),
            )
            .model(
                "child",
                Script::new()
                    .step(Text("REPORT: 42"))
                    .step(Text("REPORT: went on")),
            ),
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
    wait_answer(&session, "Integrated both reports.");

    let requests = model.requests_for("parent");
    // 1. The face declares Pi Herd's one `subagent` and none of herd's own tools.
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
    assert_eq!(results.len(), 2, "{results:#?}");
    let entries = result_entries(&session);
    assert_eq!(entries.len(), 2, "{entries:#?}");
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
    let child_session = PathBuf::from(assigned["session_path"].as_str().unwrap());
    assert_eq!(details["fullOutputPath"], assigned["session_path"]);
    assert_eq!(
        details["contextUsage"],
        usage_of(&child_session, "REPORT: 42"),
        "{details:#}"
    );
    let artifacts = artifacts_of(&session);
    let ids = runs(&artifacts);
    assert_eq!(
        ids.len(),
        2,
        "the valid assign's run and the resumed one: {ids:?}"
    );
    let id = assigned["run_id"].as_str().unwrap().to_owned();
    let id = &id;
    assert_eq!(
        details["resultPath"],
        artifacts
            .join("runs")
            .join(format!("{id}.result.json"))
            .to_str()
            .unwrap()
    );
    assert!(Path::new(details["resultPath"].as_str().unwrap()).exists());
    // 7. The request after the result carries it once.
    let answered = &model.requests_for("parent")[6];
    let carried: usize = request::user_texts(answered)
        .iter()
        .map(|t| t.matches("Pi Herd worker result").count())
        .sum();
    assert_eq!(carried, 1, "{answered:#}");
    // 8. The historical session is restored under its saved label, as a new assignment of the
    // same session, whose own result follows.
    let resumed = &answers(&model, 7)[0];
    assert_eq!(resumed["ok"], true, "{resumed:#}");
    assert_eq!(resumed["label"], "scout", "{resumed:#}");
    assert_eq!(
        resumed["session_path"], assigned["session_path"],
        "{resumed:#}"
    );
    let second = resumed["request_id"].as_str().unwrap();
    assert_ne!(second, request_id);
    let content = entries[1]["content"].as_str().unwrap();
    assert!(
        content.starts_with(&envelope("scout", "scout", second, "completed")),
        "{content}"
    );
    assert!(content.contains("REPORT: went on"), "{content}");
    let child = model.requests_for("child");
    assert!(
        request::user_texts(child.last().unwrap())
            .iter()
            .any(|t| t.contains("Go on from there")),
        "{child:#?}"
    );
    // 9. herd's own status shows the same run, under the worker's label, delivered.
    let status = herd_status(&artifacts);
    let row = status.runs.iter().find(|r| r.run_id == *id).unwrap();
    assert_eq!(row.name, "scout", "{status:#?}");
    assert_eq!(row.outcome, Some(Outcome::Completed), "{status:#?}");
    // herd-cleanup reads the same directory (this worker has no worktree to list).
    let cleanup = herd_e2e::cli::run(
        &herd_e2e::cli::command(herd_e2e::bin("herd-cleanup"))
            .arg("--artifacts")
            .arg(artifacts.as_os_str())
            .args(["list", "--json"]),
    );
    assert!(cleanup.success(), "{cleanup}");
    wait_for("the acknowledged delivery", STEP_BUDGET, || {
        artifacts
            .join("runs")
            .join(format!("{id}.delivered"))
            .exists()
            .then_some(())
    });
    assert!(parent.close().success());
}

/// A file the child's bash step waits for (bounded), so the scenario decides when it goes on.
struct Gate(PathBuf);

impl Gate {
    fn step(&self) -> ToolCall {
        ToolCall::bash(format!(
            "for i in $(seq 1 1200); do [ -e '{}' ] && break; sleep 0.05; done; echo gate open",
            self.0.display()
        ))
    }

    fn open(&self) {
        std::fs::write(&self.0, b"open").unwrap();
    }
}

/// The parent extension in the agent directory's settings, so every child loads it too.
fn install_for_children(env: &PiEnv) {
    let settings = env.agent_dir().join("settings.json");
    let mut value: Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    value["extensions"] = json!([herd_e2e::rpc::parent_extension()]);
    std::fs::write(&settings, value.to_string()).unwrap();
}

#[test]
fn pi_herd_close_of_a_parent_ends_its_own_worker_first() {
    let scratch = tempfile::tempdir().unwrap();
    let never = Gate(scratch.path().join("never"));
    let model = ModelServer::start_models(
        Models::new()
            .model(
                "parent",
                Script::new()
                    .step(call(
                        json!({"action": "assign", "agent": "lead", "label": "lead", "task": "Delegate, then wait"}),
                    ))
                    .step(Text("Assigned."))
                    .step(call(json!({"action": "list"})))
                    .step(call(json!({"action": "close", "label": "helper"})))
                    .step(call(json!({"action": "close", "label": "lead"})))
                    .step(call(json!({"action": "list"})))
                    .step(Text("Closed."))
                    .step(Text("Noted.")),
            )
            .model(
                "lead",
                Script::new()
                    .step(call(
                        json!({"action": "assign", "agent": "helper", "label": "helper", "task": "Wait"}),
                    ))
                    .step(never.step())
                    .step(Text("LEAD: never")),
            )
            .model(
                "helper",
                Script::new().step(never.step()).step(Text("HELPER: never")),
            ),
    );
    let env = PiEnv::new(&model);
    role(&env, "lead", "lead");
    role(&env, "helper", "helper");
    install_for_children(&env);
    let session = env.session_path("parent");
    let mut parent = PiRpc::start_installed(
        &env,
        &session,
        "parent",
        &[
            (FACE.0, FACE.1.as_ref()),
            ("HERD_SURFACE", "process".as_ref()),
        ],
        &["--herd-surface", "process"],
    );
    parent.prompt("Delegate to a lead.");
    wait_answer(&session, "Assigned.");
    // The lead assigned its helper through its own face, and both wait in a bash step.
    wait_for("the helper and the lead at work", STEP_BUDGET, || {
        (model.requests_for("helper").len() == 1 && model.requests_for("lead").len() == 2)
            .then_some(())
    });
    let artifacts = artifacts_of(&session);
    parent.prompt("Close the lead.");
    wait_answer(&session, "Closed.");

    // The root sees its worker and, below it, the lead's own.
    let listed = &answers(&model, 3)[0];
    let workers = listed["workers"].as_array().unwrap();
    let lead = workers.iter().find(|w| w["label"] == "lead").unwrap();
    assert_eq!(lead["state"], "working", "{listed:#}");
    assert_eq!(lead["direct"], true, "{listed:#}");
    let helper = workers.iter().find(|w| w["label"] == "helper").unwrap();
    assert_eq!(helper["parent_label"], "lead", "{listed:#}");
    assert_eq!(helper["direct"], false, "{listed:#}");
    assert_eq!(helper["steerable"], false, "{listed:#}");
    // The helper is the lead's, not the root's: its close is refused, fail-closed, and touches
    // nothing.
    let refused = &answers(&model, 4)[0];
    assert_eq!(refused["ok"], false, "{refused:#}");
    assert_eq!(
        refused["error"]["category"], "target_not_found",
        "{refused:#}"
    );
    // The close ended the helper first, then the lead.
    let closed = &answers(&model, 5)[0];
    assert_eq!(closed["ok"], true, "{closed:#}");
    let ended = closed["ended"].as_array().unwrap();
    let names: Vec<&str> = ended.iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["helper", "lead"], "{closed:#}");
    for e in ended {
        assert_eq!(e["via"], "cancel", "{closed:#}");
        assert!(
            ["confirmed", "requested"].contains(&e["status"].as_str().unwrap()),
            "{closed:#}"
        );
    }
    let after = &answers(&model, 6)[0];
    assert_eq!(after["workers"], json!([]), "{after:#}");
    // herd's status shows both runs cancelled.
    wait_for("both runs cancelled in herd's status", STEP_BUDGET, || {
        let rows = herd_status(&artifacts).runs;
        (rows.len() == 2 && rows.iter().all(|r| r.outcome == Some(Outcome::Cancelled)))
            .then_some(rows)
    });
    // The lead's one result is the closed assignment's.
    let entry = wait_for("the lead's result", STEP_BUDGET, || {
        result_entries(&session).into_iter().next()
    });
    let content = entry["content"].as_str().unwrap();
    let request_id = answers(&model, 1)[0]["request_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        content.starts_with(&envelope("lead", "lead", &request_id, "closed")),
        "{content}"
    );
    assert!(parent.close().success());
}

#[test]
fn pi_herd_steers_a_working_worker_answers_its_ask_and_attaches_files() {
    let scratch = tempfile::tempdir().unwrap();
    let gate = Gate(scratch.path().join("gate"));
    let model = ModelServer::start_models(
        Models::new()
            .model(
                "parent",
                Script::new()
                    .step(call(json!({
                        "action": "assign", "agent": "impl", "label": "impl", "task": "Implement the change",
                        "files": ["notes.md", "blob.bin", "./notes.md"],
                    })))
                    .step(Text("Assigned."))
                    .step(call(json!({
                        "action": "steer", "label": "impl", "message": "Also update the tests.",
                    })))
                    .step(Text("Steered."))
                    .step(call(json!({"action": "list"})))
                    .step(call(json!({
                        "action": "reply", "label": "impl", "message": "Use option B.", "files": ["decision.md"],
                    })))
                    .step(Text("Replied."))
                    .step(Text("Integrated the report.")),
            )
            .model(
                "impl",
                Script::new()
                    .step(gate.step())
                    .step(ToolCall::new(
                        "caller_ping",
                        json!({"message": "Option A or B?"}),
                    ))
                    .step(Text("REPORT: used option B")),
            ),
    );
    let env = PiEnv::new(&model);
    role(&env, "impl", "impl");
    std::fs::write(env.work_dir().join("notes.md"), "# Notes\nKeep it small.\n").unwrap();
    std::fs::write(
        env.work_dir().join("blob.bin"),
        [0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0xfe],
    )
    .unwrap();
    std::fs::write(env.work_dir().join("decision.md"), "Decision: B.\n").unwrap();
    let tmux = Tmux::start(env.vars());
    let socket = tmux.socket_path();
    let session = env.session_path("parent");
    let mut parent = PiRpc::start_with(
        &env,
        &session,
        "parent",
        &[
            (FACE.0, FACE.1.as_ref()),
            ("HERD_TMUX_SOCKET", socket.as_os_str()),
        ],
        &["--herd-surface", "tmux"],
    );
    parent.prompt("Delegate the change.");
    wait_answer(&session, "Assigned.");
    let assigned = &answers(&model, 1)[0];
    assert_eq!(assigned["ok"], true, "{assigned:#}");
    let request_id = assigned["request_id"].as_str().unwrap().to_owned();
    wait_for("the worker's first request", STEP_BUDGET, || {
        (!model.requests_for("impl").is_empty()).then_some(())
    });
    // The text file is embedded once, the binary one referenced.
    let task = request::user_texts(&model.requests_for("impl")[0]).join("\n");
    let work = std::fs::canonicalize(env.work_dir()).unwrap();
    let notes = work.join("notes.md");
    assert_eq!(
        task.matches(&format!(
            "<file path=\"{}\" bytes=\"23\">\n# Notes\nKeep it small.\n</file>",
            notes.display()
        ))
        .count(),
        1,
        "{task}"
    );
    let blob = work.join("blob.bin");
    assert!(
        task.contains(&format!(
            "<file path=\"{}\" bytes=\"7\" reference=\"not strict UTF-8 text\" />",
            blob.display()
        )),
        "{task}"
    );

    // The worker is in its bash step: steerable, and the steer is typed into its input.
    parent.prompt("Steer it.");
    wait_answer(&session, "Steered.");
    let steered = &answers(&model, 3)[0];
    assert_eq!(steered["ok"], true, "{steered:#}");
    assert_eq!(steered["action"], "steer");
    assert_eq!(steered["assignment_request_id"], request_id.as_str());
    gate.open();

    // The worker asks; the owner hears it as blocked, lists it, and replies.
    wait_answer(&session, "Integrated the report.");
    let impl_requests = model.requests_for("impl");
    assert!(
        request::user_texts(&impl_requests[1])
            .iter()
            .any(|t| t.contains("Also update the tests.")),
        "{:#}",
        impl_requests[1]
    );
    let entries = result_entries(&session);
    assert_eq!(entries.len(), 2, "the ask, then the result: {entries:#?}");
    let ask = entries[0]["content"].as_str().unwrap();
    assert!(
        ask.starts_with(&envelope("impl", "impl", &request_id, "blocked")),
        "{ask}"
    );
    assert!(ask.contains("Option A or B?"), "{ask}");
    let listed = &answers(&model, 5)[0];
    let worker = &listed["workers"][0];
    assert_eq!(worker["state"], "blocked", "{listed:#}");
    let ask_id = worker["pending_ask_id"].as_str().unwrap().to_owned();
    let replied = &answers(&model, 6)[0];
    assert_eq!(replied["ok"], true, "{replied:#}");
    assert_eq!(replied["ask_id"], ask_id.as_str(), "{replied:#}");
    assert_eq!(replied["assignment_request_id"], request_id.as_str());
    // The reply (with its file) resumed the same session; the result closes the same assignment.
    let last = impl_requests.last().unwrap();
    let texts = request::user_texts(last).join("\n");
    assert!(texts.contains("Use option B."), "{texts}");
    assert!(texts.contains("Decision: B."), "{texts}");
    let result = entries[1]["content"].as_str().unwrap();
    assert!(
        result.starts_with(&envelope("impl", "impl", &request_id, "completed")),
        "{result}"
    );
    assert!(result.contains("REPORT: used option B"), "{result}");
    assert_eq!(
        entries[1]["details"]["piHerd"]["requestId"],
        request_id.as_str()
    );
    // herd's status has both runs of the assignment under the label.
    let artifacts = artifacts_of(&session);
    let status = herd_status(&artifacts);
    assert_eq!(status.runs.len(), 2, "{status:#?}");
    assert!(status.runs.iter().all(|r| r.name == "impl"), "{status:#?}");
    assert!(parent.close().success());
}

#[test]
fn pi_herd_a_reusable_worker_takes_a_second_assignment_once_its_first_result_is_delivered() {
    let model = ModelServer::start_models(
        Models::new()
            .model(
                "parent",
                Script::new()
                    .step(call(json!({
                        "action": "assign", "agent": "keeper", "task": "First task", "reusable": true,
                    })))
                    .step(Text("Assigned."))
                    .step(call(json!({"action": "list"})))
                    .step(call(
                        json!({"action": "assign", "label": "keeper", "task": "Second task"}),
                    ))
                    .step(Text("Assigned again."))
                    .step(Text("Both done.")),
            )
            .model(
                "keeper",
                Script::new()
                    .step(Text("FIRST: done"))
                    .step(Text("SECOND: done")),
            ),
    );
    let env = PiEnv::new(&model);
    role(&env, "keeper", "keeper");
    let tmux = Tmux::start(env.vars());
    let socket = tmux.socket_path();
    let session = env.session_path("parent");
    let mut parent = PiRpc::start_with(
        &env,
        &session,
        "parent",
        &[
            (FACE.0, FACE.1.as_ref()),
            ("HERD_TMUX_SOCKET", socket.as_os_str()),
        ],
        &["--herd-surface", "tmux"],
    );
    parent.prompt("Keep a worker.");
    wait_answer(&session, "Both done.");
    let first = &answers(&model, 1)[0];
    assert_eq!(first["ok"], true, "{first:#}");
    let listed = &answers(&model, 3)[0];
    assert_eq!(listed["workers"][0]["state"], "ready", "{listed:#}");
    assert_eq!(listed["workers"][0]["active_request_id"], Value::Null);
    let second = &answers(&model, 4)[0];
    assert_eq!(second["ok"], true, "{second:#}");
    assert_eq!(
        second["run_id"], first["run_id"],
        "the same worker: {second:#}"
    );
    let entries = result_entries(&session);
    assert_eq!(entries.len(), 2, "{entries:#?}");
    for (entry, answer, report) in [
        (&entries[0], first, "FIRST: done"),
        (&entries[1], second, "SECOND: done"),
    ] {
        let content = entry["content"].as_str().unwrap();
        let request_id = answer["request_id"].as_str().unwrap();
        assert!(
            content.starts_with(&envelope("keeper", "keeper", request_id, "completed")),
            "{content}"
        );
        assert!(content.contains(report), "{content}");
    }
    assert!(parent.close().success());
}

#[test]
fn pi_herd_a_nested_worker_result_reaches_its_managed_parent_with_the_envelope_and_details() {
    let model = ModelServer::start_models(
        Models::new()
            .model(
                "parent",
                Script::new()
                    .step(call(
                        json!({"action": "assign", "agent": "lead", "label": "lead", "task": "Delegate, then report"}),
                    ))
                    .step(Text("Assigned."))
                    .step(Text("Integrated the lead's report.")),
            )
            .model(
                "lead",
                Script::new()
                    .step(call(
                        json!({"action": "assign", "agent": "helper", "label": "helper", "task": "Find the number"}),
                    ))
                    .step(Text("Waiting for the helper."))
                    .step(Text("LEAD: the helper found 7")),
            )
            .model("helper", Script::new().step(Text("HELPER: 7"))),
    );
    let env = PiEnv::new(&model);
    role(&env, "lead", "lead");
    role(&env, "helper", "helper");
    install_for_children(&env);
    let session = env.session_path("parent");
    let mut parent = PiRpc::start_installed(
        &env,
        &session,
        "parent",
        &[
            (FACE.0, FACE.1.as_ref()),
            ("HERD_SURFACE", "process".as_ref()),
        ],
        &["--herd-surface", "process"],
    );
    parent.prompt("Delegate to a lead.");
    wait_answer(&session, "Integrated the lead's report.");

    // The lead assigned its helper through its own face.
    let helper = &answers_of(&model, "lead", 1)[0];
    assert_eq!(helper["ok"], true, "{helper:#}");
    assert_eq!(helper["label"], "helper", "{helper:#}");
    let helper_request = helper["request_id"].as_str().unwrap();
    let helper_run = helper["run_id"].as_str().unwrap();
    let helper_session = PathBuf::from(helper["session_path"].as_str().unwrap());
    // The helper's result reached the lead once, beginning with Pi Herd's envelope, as it
    // reaches a top-level owner.
    let lead_requests = model.requests_for("lead");
    assert_eq!(lead_requests.len(), 3, "{lead_requests:#?}");
    let texts = request::user_texts(&lead_requests[2]);
    let carried: Vec<&String> = texts
        .iter()
        .filter(|t| t.contains("Pi Herd worker result"))
        .collect();
    assert_eq!(carried.len(), 1, "{texts:#?}");
    let mut lines = carried[0].lines();
    assert_eq!(
        lines.next().unwrap(),
        envelope("helper", "helper", helper_request, "completed")
    );
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("Sub-agent \"helper\" completed"),
        "{}",
        carried[0]
    );
    assert!(carried[0].contains("HELPER: 7"), "{}", carried[0]);
    // The lead's transcript holds it with the completion details, as the root's does.
    let lead = &answers(&model, 1)[0];
    let lead_session = PathBuf::from(lead["session_path"].as_str().unwrap());
    let entries = result_entries(&lead_session);
    assert_eq!(entries.len(), 1, "{entries:#?}");
    let details = &entries[0]["details"]["piHerd"];
    let artifacts = artifacts_of(&session);
    let result_path = artifacts
        .join("runs")
        .join(format!("{helper_run}.result.json"));
    assert_eq!(details["requestId"], helper_request, "{details:#}");
    assert_eq!(details["workerLabel"], "helper", "{details:#}");
    assert_eq!(details["agentDefinition"], "helper", "{details:#}");
    assert_eq!(details["status"], "completed", "{details:#}");
    assert_eq!(details["final"], true, "{details:#}");
    assert_eq!(details["truncated"], false, "{details:#}");
    assert_eq!(details["workerError"], Value::Null, "{details:#}");
    assert!(details["elapsedMs"].is_u64(), "{details:#}");
    assert_eq!(details["resultPath"], result_path.to_str().unwrap());
    assert!(result_path.exists());
    assert_eq!(details["fullOutputPath"], helper["session_path"]);
    assert_eq!(
        details["contextUsage"],
        usage_of(&helper_session, "HELPER: 7"),
        "{details:#}"
    );
    // The lead's own result reaches the root the same way, with the lead's context usage.
    let root = result_entries(&session);
    assert_eq!(root.len(), 1, "{root:#?}");
    let content = root[0]["content"].as_str().unwrap();
    assert!(
        content.starts_with(&envelope(
            "lead",
            "lead",
            lead["request_id"].as_str().unwrap(),
            "completed"
        )),
        "{content}"
    );
    assert!(content.contains("LEAD: the helper found 7"), "{content}");
    assert_eq!(
        root[0]["details"]["piHerd"]["contextUsage"],
        usage_of(&lead_session, "LEAD: the helper found 7")
    );
    assert!(parent.close().success());
}

#[test]
fn pi_herd_a_close_that_cannot_prove_its_end_fails_closed_and_lists_the_cleanup_error() {
    let scratch = tempfile::tempdir().unwrap();
    let gate = Gate(scratch.path().join("gate"));
    let model = ModelServer::start_models(
        Models::new()
            .model(
                "parent",
                Script::new()
                    .step(call(
                        json!({"action": "assign", "agent": "impl", "label": "impl", "task": "Wait"}),
                    ))
                    .step(Text("Assigned."))
                    .step(call(json!({"action": "close", "label": "impl"})))
                    .step(call(json!({"action": "list"})))
                    .step(Text("Close refused."))
                    .step(call(json!({"action": "close", "label": "impl"})))
                    .step(call(json!({"action": "list"})))
                    .step(Text("Closed."))
                    .step(Text("Noted.")),
            )
            .model(
                "impl",
                Script::new().step(gate.step()).step(Text("IMPL: never")),
            ),
    );
    let env = PiEnv::new(&model);
    role(&env, "impl", "impl");
    let session = env.session_path("parent");
    let mut parent = PiRpc::start_with(
        &env,
        &session,
        "parent",
        &[(FACE.0, FACE.1.as_ref())],
        &["--herd-surface", "process"],
    );
    parent.prompt("Delegate.");
    wait_answer(&session, "Assigned.");
    wait_for("the worker at work", STEP_BUDGET, || {
        (!model.requests_for("impl").is_empty()).then_some(())
    });
    let assigned = &answers(&model, 1)[0];
    let id = assigned["run_id"].as_str().unwrap();
    // herd's record of the worker's run cannot be read: nothing proves which run to end.
    let record = artifacts_of(&session)
        .join("runs")
        .join(format!("{id}.json"));
    let saved = std::fs::read(&record).unwrap();
    std::fs::write(&record, b"{").unwrap();
    parent.prompt("Close it.");
    wait_answer(&session, "Close refused.");
    let refused = &answers(&model, 3)[0];
    assert_eq!(refused["ok"], false, "{refused:#}");
    let evidence = refused["error"]["cleanup_error"].clone();
    assert_eq!(evidence, json!([format!("{id}: none unreadable record")]));
    // It stays open, and its list record carries the evidence.
    let listed = &answers(&model, 4)[0];
    let worker = &listed["workers"][0];
    assert_eq!(worker["label"], "impl", "{listed:#}");
    assert_eq!(worker["cleanup_error"], evidence, "{listed:#}");
    // Once the record reads again, the close ends the run and the evidence is gone.
    std::fs::write(&record, saved).unwrap();
    parent.prompt("Close it again.");
    wait_answer(&session, "Closed.");
    let closed = &answers(&model, 6)[0];
    assert_eq!(closed["ok"], true, "{closed:#}");
    assert_eq!(closed["ended"][0]["via"], "cancel", "{closed:#}");
    assert_eq!(answers(&model, 7)[0]["workers"], json!([]));
    gate.open();
    assert!(parent.close().success());
}
