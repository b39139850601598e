//! A real Pi parent in RPC mode with herd's parent extension, delegating to a real Pi child
//! through the `subagent` tool. Every step is observed in the model server's request log, Pi's
//! RPC output and the files herd and Pi write, never by timing.

#![expect(
    clippy::unwrap_used,
    reason = "scenario steps fail loudly on a broken fixture"
)]

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use herd_e2e::herd::{Where, decode, read_json};
use herd_e2e::herdr::HerdrServer;
use herd_e2e::model::{
    ModelServer, Models, REPORTED_SESSION, Said, Script, Text, ToolCall, request,
};
use herd_e2e::pi::PiEnv;
use herd_e2e::rpc::{PiRpc, STEP_BUDGET, custom_messages, watchers_of};
use herd_e2e::session::{self, custom_entries};
use herd_e2e::tmux::Tmux;
use herd_e2e::wait::wait_for;
use herd_protocol::launch::docs::{HandoffDoc, HandoffStatus};
use herd_protocol::run::{RunRecord, SurfaceKind};
use serde_json::{Value, json};

/// The nine routine tools registered deferred (docs/tools.md, "Tool loading").
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

/// How often `needle` occurs in the user messages of a request.
fn occurrences(body: &Value, needle: &str) -> usize {
    request::user_texts(body)
        .iter()
        .map(|t| t.matches(needle).count())
        .sum()
}

/// Waits until the session's last message is a final assistant text equal to `text`.
fn wait_answer(session: &Path, text: &str) {
    session::wait_for_answer(session, text, STEP_BUDGET);
}

/// Waits for herd's delivered marker of `id`: the parent acknowledged the result.
fn wait_delivered(artifacts: &Path, id: &str) {
    let marker = artifacts.join("runs").join(format!("{id}.delivered"));
    wait_for("the acknowledged delivery", STEP_BUDGET, || {
        marker.exists().then_some(())
    });
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

/// The run record `runs/<id>.json` of `artifacts`.
fn record_of(artifacts: &Path, id: &str) -> RunRecord {
    decode(&read_json(&artifacts.join("runs").join(format!("{id}.json"))).unwrap())
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
    assert!(content.contains("REPORT:"), "{content}");
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
            .model("parent", Script::delegating(scout("child")))
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
    let record = record_of(&artifacts, &id);
    assert_eq!(record.surface, SurfaceKind::Process, "{record:#?}");
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
    let entry = custom_entries(&session, "subagent_result").remove(0);
    assert!(
        entry["content"].as_str().unwrap().contains("REPORT: 42"),
        "{entry:#}"
    );
    assert_eq!(entry["details"]["runId"], id.as_str(), "{entry:#}");
    wait_delivered(&artifacts, &id);
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
        watchers_of(artifacts.as_os_str()).is_empty(),
        "a herd-watch of {} is left",
        artifacts.display()
    );
}

/// A file the child's first step waits for (bounded), so a scenario decides when it finishes.
/// Installs the package with `pi install <extension dir>`, so children load it too, and starts a
/// parent from the installed package on the process surface; returns its session and the parent.
fn installed_parent(env: &PiEnv) -> (PathBuf, PiRpc) {
    let package = herd_e2e::rpc::parent_extension()
        .parent()
        .unwrap()
        .to_path_buf();
    let mut install = env.command(herd_e2e::pi::pi_bin());
    install.arg("install").arg(&package);
    let installed = herd_e2e::proc::run(install, herd_e2e::pi::PI_BUDGET);
    assert!(installed.success(), "{installed}");
    let session = env.session_path("parent");
    let parent =
        PiRpc::start_installed(env, &session, "parent", &[], &["--herd-surface", "process"]);
    (session, parent)
}

struct Gate(PathBuf);

impl Gate {
    /// The child's bash step: wait for the gate, at most a minute.
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

/// A child held at `gate` that then reports 42.
fn gated_child(gate: &Gate) -> Script {
    Script::new().step(gate.step()).step(Text("REPORT: 42"))
}

/// Waits until a session file holds a `subagent_result` followed by a final assistant text.
fn wait_answered_result(session: &Path) -> Value {
    wait_for(
        &format!("an answered subagent_result in {}", session.display()),
        STEP_BUDGET,
        || {
            let entries = session::entries(session);
            let at = entries.iter().position(|e| {
                e["type"] == "custom_message" && e["customType"] == "subagent_result"
            })?;
            entries[at..]
                .iter()
                .rev()
                .find(|e| e["type"] == "message")
                .filter(|e| e["message"]["role"] == "assistant" && session::is_final(&e["message"]))
                .cloned()
        },
    )
}

#[test]
fn a_reload_while_the_child_runs_still_delivers_the_report_once() {
    let scratch = tempfile::tempdir().unwrap();
    let gate = Gate(scratch.path().join("gate"));
    let model = ModelServer::start_models(
        Models::new()
            .model("parent", Script::delegating(scout("child")))
            .model("child", gated_child(&gate)),
    );
    let env = PiEnv::new(&model);
    let session = env.session_path("parent");
    let reload = herd_e2e::rpc::reload_extension();
    let mut parent = PiRpc::start_with(
        &env,
        &session,
        "parent",
        &[],
        &["--herd-surface", "process", "-e", reload.to_str().unwrap()],
    );
    parent.prompt("Delegate to a scout.");
    wait_answer(&session, "Launched; waiting.");
    parent.prompt("/test-reload");
    // The reloaded instance is the one that delivers.
    gate.open();
    wait_answer(&session, "Integrated the report.");
    assert_one_report(&model, &parent, &session, "parent");
    assert!(parent.close().success());
}

#[test]
fn a_new_session_while_the_child_runs_receives_the_report() {
    let scratch = tempfile::tempdir().unwrap();
    let gate = Gate(scratch.path().join("gate"));
    let model = ModelServer::start_models(
        Models::new()
            .model("parent", Script::delegating(scout("child")))
            .model("parent-b", Script::new().step(Text("Got it here.")))
            .model("child", gated_child(&gate)),
    );
    let env = PiEnv::new(&model);
    let first = env.session_path("parent");
    let mut parent = PiRpc::start_with(&env, &first, "parent", &[], &["--herd-surface", "process"]);
    parent.prompt("Delegate to a scout.");
    wait_answer(&first, "Launched; waiting.");
    let replaced = parent.request(json!({"type": "new_session"}));
    assert_eq!(replaced["success"], true, "{replaced}");
    // A new session starts on the command line's model; this one answers the report.
    let set =
        parent.request(json!({"type": "set_model", "provider": "fake", "modelId": "parent-b"}));
    assert_eq!(set["success"], true, "{set}");
    let state = parent.request(json!({"type": "get_state"}));
    let second = PathBuf::from(state["data"]["sessionFile"].as_str().unwrap());
    assert_ne!(second, first);
    gate.open();
    let answer = wait_answered_result(&second);
    assert_eq!(session::text(&answer["message"]), "Got it here.");
    let b = model.requests_for("parent-b");
    assert_eq!(b.len(), 1);
    let users = request::user_texts(&b[0]);
    assert_eq!(
        users.len(),
        1,
        "the report is the new session's only user message: {users:#?}"
    );
    assert!(
        users[0].contains("<subagent_report from=\"Scout\" kind=\"result\">"),
        "{users:#?}"
    );
    assert_eq!(custom_entries(&second, "subagent_result").len(), 1);
    assert!(custom_entries(&first, "subagent_result").is_empty());
    assert_eq!(
        custom_messages(&parent.events(), "subagent_result").len(),
        1
    );
    assert!(parent.close().success());
}

#[test]
fn a_parent_that_quits_leaves_no_follower_and_hears_the_report_when_started_again() {
    let scratch = tempfile::tempdir().unwrap();
    let gate = Gate(scratch.path().join("gate"));
    let model = ModelServer::start_models(
        Models::new()
            .model("parent", Script::delegating(scout("child")))
            .model("child", gated_child(&gate)),
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
    wait_answer(&session, "Launched; waiting.");
    let artifacts = artifacts_of(&session);
    let id = only_run(&artifacts);
    assert!(parent.close().success());
    // Quitting stops delivery: no follower is left while the child still runs.
    wait_for(
        "no herd-watch of the parent's directory",
        STEP_BUDGET,
        || watchers_of(artifacts.as_os_str()).is_empty().then_some(()),
    );
    gate.open();
    let exit = PathBuf::from(record_of(&artifacts, &id).session_file + ".exit");
    wait_for("the child's completion sidecar", STEP_BUDGET, || {
        exit.exists().then_some(())
    });
    assert!(
        !artifacts
            .join("runs")
            .join(format!("{id}.delivered"))
            .exists(),
        "the result waits on disk"
    );

    let mut again = PiRpc::start_with(
        &env,
        &session,
        "parent",
        &[],
        &["--herd-surface", "process"],
    );
    wait_answer(&session, "Integrated the report.");
    assert_one_report(&model, &again, &session, "parent");
    wait_delivered(&artifacts, &id);
    assert!(again.close().success());
}

#[test]
fn a_parent_killed_mid_run_hears_the_report_once_after_a_restart() {
    let scratch = tempfile::tempdir().unwrap();
    let gate = Gate(scratch.path().join("gate"));
    let model = ModelServer::start_models(
        Models::new()
            .model("parent", Script::delegating(scout("child")))
            .model("child", gated_child(&gate)),
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
    wait_answer(&session, "Launched; waiting.");
    let artifacts = artifacts_of(&session);
    parent.kill();
    // The follower's stdin ends with Pi: it goes too.
    wait_for("no herd-watch of a killed parent", STEP_BUDGET, || {
        watchers_of(artifacts.as_os_str()).is_empty().then_some(())
    });
    gate.open();
    let mut again = PiRpc::start_with(
        &env,
        &session,
        "parent",
        &[],
        &["--herd-surface", "process"],
    );
    wait_answer(&session, "Integrated the report.");
    assert_one_report(&model, &again, &session, "parent");
    assert!(again.close().success());
}

#[test]
fn a_cancelled_child_arrives_once_as_a_cancelled_result() {
    let scratch = tempfile::tempdir().unwrap();
    let gate = Gate(scratch.path().join("gate"));
    let model = ModelServer::start_models(
        Models::new()
            .model(
                "parent",
                Script::new()
                    .step(ToolCall::new("tool_search", json!({"query": "subagent"})))
                    .step(ToolCall::new("subagent", scout("child")))
                    .step(Text("Launched; waiting."))
                    .step(ToolCall::new("subagent_cancel", json!({"name": "Scout"})))
                    .step(Text("Cancel requested."))
                    .step(Text("Noted the cancellation.")),
            )
            .model("child", gated_child(&gate)),
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
    wait_answer(&session, "Launched; waiting.");
    // The child is running: its first request came.
    wait_for("the child's first request", STEP_BUDGET, || {
        (!model.requests_for("child").is_empty()).then_some(())
    });
    parent.prompt("Cancel the scout.");
    let cancelled = wait_answered_result(&session);
    assert!(session::is_final(&cancelled["message"]));
    let results = custom_entries(&session, "subagent_result");
    assert_eq!(results.len(), 1, "{results:#?}");
    assert_eq!(
        results[0]["details"]["error"], "cancelled",
        "{:#}",
        results[0]
    );
    assert!(
        results[0]["content"]
            .as_str()
            .unwrap()
            .contains("was cancelled"),
        "{:#}",
        results[0]
    );
    let cancel_answer = model
        .requests_for("parent")
        .into_iter()
        .find(|b| request::assistant_count(b) == 4)
        .unwrap();
    assert!(
        request::tool_results(&cancel_answer)
            .iter()
            .any(|t| t.contains("confirmed")),
        "{cancel_answer:#}"
    );
    assert!(parent.close().success());
}

#[test]
fn the_model_catalog_reaches_the_guidelines_only_once_tool_search_loads_subagent() {
    const CATALOG: &str = "Model catalog for `subagent`";
    let model = ModelServer::start_models(
        Models::new().model(
            "parent",
            Script::new()
                .step(Text("Nothing to delegate yet."))
                .step(ToolCall::new("tool_search", json!({"query": "subagent"})))
                .step(Text("Loaded.")),
        ),
    );
    let env = PiEnv::new(&model);
    let config = env.agent_dir().join("herdr-agents/config.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        json!({"models": {"tasks": {"coding": ["locked/x", PiEnv::model_arg("parent")]}}})
            .to_string(),
    )
    .unwrap();
    let session = env.session_path("parent");
    let mut parent = PiRpc::start_with(
        &env,
        &session,
        "parent",
        &[],
        &["--herd-surface", "process"],
    );
    parent.prompt("Hello.");
    wait_answer(&session, "Nothing to delegate yet.");
    parent.prompt("Load the subagent tools.");
    wait_answer(&session, "Loaded.");

    let requests = model.requests_for("parent");
    assert_eq!(requests.len(), 3, "one request per step");
    // Before the search, neither the tool nor its guidelines: the catalog is deferred with it.
    for (i, body) in requests[..2].iter().enumerate() {
        assert!(
            !request::tool_names(body).contains(&"subagent".to_owned()),
            "request {i}: {body:#}"
        );
        assert!(!body.to_string().contains(CATALOG), "request {i}: {body:#}");
    }
    // After it, the catalog is in the prompt once, with Pi's models and the task categories.
    let loaded = &requests[2];
    assert!(request::tool_names(loaded).contains(&"subagent".to_owned()));
    let text = loaded.to_string();
    assert_eq!(text.matches(CATALOG).count(), 1, "{loaded:#}");
    let catalog = &text[text.find(CATALOG).unwrap()..];
    let catalog = &catalog[..catalog.find("Task categories").unwrap()];
    assert!(catalog.contains("fake/parent"), "{catalog}");
    assert!(!catalog.contains("locked/"), "{catalog}");
    assert!(
        text.contains("task:coding (first authenticated candidate fake/parent)"),
        "{loaded:#}"
    );
    assert_naming_and_roster(&text);
    assert!(parent.close().success());
}

/// The naming guidance and launch roster (docs/tools.md, "Tool loading"), as the `subagent`
/// guidelines word them.
const NAMING: &str = "Before launching a new group, choose a short task slug and label each new child \
    `<task>-<role>[-n]`, such as `login-api` or `login-test2`. Roles are `plan`, `research`, `ui`, \
    `api`, `build`, `test`, `review`, `browser`, `security`, `perf`, and `merge`. Leave existing \
    labels unchanged.";
const ROSTER: &str = "After the final launch, print a markdown table with the header row \
    `| name | agent kind | role | model | worktree |`, a separator row, and one row per child \
    (worktree `none` when there is none), and use each name in prompts, handoffs, and results.";

/// The loaded request `text` carries the naming guidance and the roster once each.
fn assert_naming_and_roster(text: &str) {
    assert_eq!(text.matches(NAMING).count(), 1, "{text}");
    assert_eq!(text.matches(ROSTER).count(), 1, "{text}");
}

#[test]
fn the_naming_guidance_and_roster_reach_the_guidelines_when_the_catalog_fails() {
    let model = ModelServer::start_models(
        Models::new().model(
            "parent",
            Script::new()
                .step(Text("Nothing to delegate yet."))
                .step(ToolCall::new("tool_search", json!({"query": "subagent"})))
                .step(Text("Loaded.")),
        ),
    );
    let env = PiEnv::new(&model);
    // The Pi herd-launch asks for its models fails: `pi --list-models` has no answer.
    let broken = env.agent_dir().join("broken-pi");
    std::fs::write(
        &broken,
        "#!/bin/sh\necho 'no model listing here' >&2\nexit 1\n",
    )
    .unwrap();
    let mut perms = std::fs::metadata(&broken).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&broken, perms).unwrap();
    let session = env.session_path("parent");
    let mut parent = PiRpc::start_with(
        &env,
        &session,
        "parent",
        &[("HERD_PI", broken.as_os_str())],
        &["--herd-surface", "process"],
    );
    parent.prompt("Hello.");
    wait_answer(&session, "Nothing to delegate yet.");
    parent.prompt("Load the subagent tools.");
    wait_answer(&session, "Loaded.");

    let requests = model.requests_for("parent");
    let loaded = requests.last().unwrap();
    assert!(request::tool_names(loaded).contains(&"subagent".to_owned()));
    let text = loaded.to_string();
    assert!(
        text.contains("Model catalog for `subagent`: unavailable ("),
        "{loaded:#}"
    );
    assert!(text.contains("no model listing here"), "{loaded:#}");
    assert_naming_and_roster(&text);
    assert!(parent.close().success());
}

#[test]
fn subagents_list_shows_the_roles_and_the_supervision_mode() {
    let model = ModelServer::start_models(
        Models::new().model(
            "parent",
            Script::new()
                .step(ToolCall::new(
                    "tool_search",
                    json!({"query": "subagents_list role definitions"}),
                ))
                .step(ToolCall::new("subagents_list", json!({})))
                .step(Text("Listed.")),
        ),
    );
    let env = PiEnv::new(&model);
    std::fs::create_dir_all(env.agent_dir().join("agents")).unwrap();
    std::fs::write(
        env.agent_dir().join("agents/worker.md"),
        "---\nauto-exit: false\nthinking: low\n---\nDo the work, then call subagent_done.\n",
    )
    .unwrap();
    let session = env.session_path("parent");
    let mut parent = PiRpc::start_with(
        &env,
        &session,
        "parent",
        &[],
        &["--herd-surface", "process"],
    );
    parent.prompt("Which roles are there?");
    wait_answer(&session, "Listed.");
    let requests = model.requests_for("parent");
    let listed = request::tool_results(&requests[2]).join("\n");
    assert!(
        listed.contains("Roles:\n- worker (user): thinking low · auto-exit false"),
        "{listed}"
    );
    assert!(listed.contains("Persistent specialists: none"), "{listed}");
    assert!(listed.contains("Supervision: wake+batch"), "{listed}");
    assert!(parent.close().success());
}

#[test]
fn on_tmux_a_worker_ends_with_subagent_done_and_the_parent_hears_it_once() {
    let model = ModelServer::start_models(
        Models::new()
            .model(
                "parent",
                Script::delegating(json!({
                    "name": "Scout", "agent": "worker", "task": "Report the answer",
                    "model": PiEnv::model_arg("child"),
                })),
            )
            .model(
                "child",
                Script::new()
                    .step(Said(
                        "REPORT: 42",
                        ToolCall::new("subagent_done", json!({})),
                    ))
                    .step(Text("never asked")),
            ),
    );
    let env = PiEnv::new(&model);
    std::fs::create_dir_all(env.agent_dir().join("agents")).unwrap();
    std::fs::write(
        env.agent_dir().join("agents/worker.md"),
        "---\nauto-exit: false\n---\nDo the work, then call subagent_done.\n",
    )
    .unwrap();
    let tmux = Tmux::start(env.vars());
    let socket = tmux.socket_path();
    let session = env.session_path("parent");
    let mut parent = PiRpc::start_with(
        &env,
        &session,
        "parent",
        &[("HERD_TMUX_SOCKET", socket.as_os_str())],
        &["--herd-surface", "tmux"],
    );
    parent.prompt("Delegate to a worker.");
    wait_answer(&session, "Integrated the report.");
    let artifacts = artifacts_of(&session);
    let id = only_run(&artifacts);
    let record = record_of(&artifacts, &id);
    assert_eq!(record.surface, SurfaceKind::Tmux, "{record:#?}");
    assert!(!record.auto_exit, "{record:#?}");
    let child = model.requests_for("child");
    assert_eq!(child.len(), 1, "the child ended on subagent_done");
    assert!(request::tool_names(&child[0]).contains(&"subagent_done".to_owned()));
    assert_one_report(&model, &parent, &session, "parent");
    wait_delivered(&artifacts, &id);
    assert!(parent.close().success());
    wait_for(
        "no herd-watch of the parent's directory",
        STEP_BUDGET,
        || watchers_of(artifacts.as_os_str()).is_empty().then_some(()),
    );
}

#[test]
fn a_child_delegates_to_a_grandchild_through_the_subagent_tool() {
    let model = ModelServer::start_models(
        Models::new()
            .model("parent", Script::delegating(scout("child")))
            .model(
                "child",
                Script::new()
                    .step(ToolCall::new("tool_search", json!({"query": "subagent"})))
                    .step(ToolCall::new(
                        "subagent",
                        json!({"name": "Helper", "task": "Find the answer", "model": PiEnv::model_arg("helper")}),
                    ))
                    .step(Text("CHILD: waiting for the helper"))
                    .step(Text("REPORT: the helper found 42")),
            )
            .model("helper", Script::new().step(Text("HELPER REPORT: 42"))),
    );
    let env = PiEnv::new(&model);
    // Installed with `pi install <extension dir>`: the children load the package too.
    let (session, mut parent) = installed_parent(&env);
    parent.prompt("Delegate to a scout.");
    wait_answer(&session, "Integrated the report.");

    let child = model.requests_for("child");
    assert!(
        request::tool_names(&child[1]).contains(&"subagent".to_owned()),
        "the child found subagent through its search: {:?}",
        request::tool_names(&child[1])
    );
    let helper = model.requests_for("helper");
    assert_eq!(helper.len(), 1);
    // The child heard its helper before it reported.
    let last = child.last().unwrap();
    assert_eq!(
        occurrences(last, "<subagent_report from=\"Helper\""),
        1,
        "{last:#}"
    );
    // The parent heard the child only, once, with what the helper found.
    let entries = custom_entries(&session, "subagent_result");
    assert_eq!(entries.len(), 1, "{entries:#?}");
    let content = entries[0]["content"].as_str().unwrap();
    assert!(content.contains("REPORT: the helper found 42"), "{content}");
    assert!(!content.contains("HELPER REPORT"), "{content}");
    assert_one_report(&model, &parent, &session, "parent");
    assert!(parent.close().success());
}

#[test]
fn a_persistent_grandchild_never_holds_an_auto_exit_child_open() {
    let model = ModelServer::start_models(
        Models::new()
            .model("parent", Script::delegating(scout("child")))
            .model(
                "child",
                Script::new()
                    .step(ToolCall::new("tool_search", json!({"query": "subagent"})))
                    .step(ToolCall::new(
                        "subagent",
                        json!({"name": "Keeper", "task": "Stay ready", "persistent": true, "model": PiEnv::model_arg("keeper")}),
                    ))
                    .step(Text("REPORT: launched a keeper")),
            )
            .model(
                "keeper",
                Script::new()
                    .step(Said("KEEPER: ready", ToolCall::new("subagent_done", json!({}))))
                    .step(Text("KEEPER: idle")),
            ),
    );
    let env = PiEnv::new(&model);
    let settings = env.agent_dir().join("settings.json");
    let mut value: Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    value["extensions"] = json!([herd_e2e::rpc::parent_extension()]);
    std::fs::write(&settings, value.to_string()).unwrap();
    let tmux = Tmux::start(env.vars());
    let socket = tmux.socket_path();
    let session = env.session_path("parent");
    let mut parent = PiRpc::start_installed(
        &env,
        &session,
        "parent",
        &[("HERD_TMUX_SOCKET", socket.as_os_str())],
        &["--herd-surface", "tmux"],
    );
    parent.prompt("Delegate to a scout.");
    // The scout ends at its first settlement although its keeper lives on.
    wait_answer(&session, "Integrated the report.");
    let entries = custom_entries(&session, "subagent_result");
    assert_eq!(entries.len(), 1, "{entries:#?}");
    assert!(
        entries[0]["content"]
            .as_str()
            .unwrap()
            .contains("REPORT: launched a keeper"),
        "{:#}",
        entries[0]
    );
    assert_eq!(
        model.requests_for("child").len(),
        3,
        "the scout was not held for a fourth turn"
    );
    wait_for("the keeper's first request", STEP_BUDGET, || {
        (!model.requests_for("keeper").is_empty()).then_some(())
    });
    assert!(parent.close().success());
}

#[test]
fn subagents_init_activates_the_writer_and_a_stale_revision_writes_nothing() {
    let stale = format!("sha256:{}", "0".repeat(64));
    let proposal = |revision: &str| {
        json!({
            "tasks": {"coding": ["fake/parent"], "review": ["fake/parent"]},
            "tasksMeta": {"generatedAt": "2026-12-01T00:00:00Z", "method": "registry-only"},
            "basis": {"kind": "registry-only"},
            "expectedConfigRevision": revision,
        })
    };
    let model = ModelServer::start_models(
        Models::new().model(
            "parent",
            Script::new()
                .step(ToolCall::new(
                    "subagents_write_task_models",
                    proposal(&stale),
                ))
                .step(Text("The configuration changed; I will re-read it.")),
        ),
    );
    let env = PiEnv::new(&model);
    let config = env.agent_dir().join("herdr-agents/config.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let before = br#"{"models":{"default":"fake/parent"},"persistent":{"maxAgents":2}}"#;
    std::fs::write(&config, before).unwrap();
    let session = env.session_path("parent");
    let mut parent = PiRpc::start_with(
        &env,
        &session,
        "parent",
        &[],
        &["--herd-surface", "process"],
    );
    parent.prompt("/subagents-init prefer cheap models");
    wait_answer(&session, "The configuration changed; I will re-read it.");
    let requests = model.requests_for("parent");
    assert!(
        request::tool_names(&requests[0]).contains(&WRITER.to_owned()),
        "/subagents-init activated the writer: {:?}",
        request::tool_names(&requests[0])
    );
    let draft = request::user_texts(&requests[0]).join("\n");
    assert!(
        draft.contains("fake/parent") && draft.contains("prefer cheap models"),
        "{draft}"
    );
    let refused = request::tool_results(&requests[1]).join("\n");
    assert!(
        refused.contains("the configuration changed since the proposal read it"),
        "{refused}"
    );
    assert_eq!(
        std::fs::read(&config).unwrap(),
        before,
        "nothing was written"
    );
    assert!(parent.close().success());
}

#[test]
fn a_child_whose_role_forbids_spawning_cannot_load_the_subagent_tools() {
    let model = ModelServer::start_models(
        Models::new()
            .model(
                "parent",
                Script::delegating(json!({
                    "name": "Scout", "agent": "scout", "task": "Report the answer",
                    "model": PiEnv::model_arg("child"),
                })),
            )
            .model(
                "child",
                Script::new()
                    .step(ToolCall::new("tool_search", json!({"query": "subagent"})))
                    .step(Text("REPORT: 42, alone")),
            ),
    );
    let env = PiEnv::new(&model);
    std::fs::create_dir_all(env.agent_dir().join("agents")).unwrap();
    std::fs::write(
        env.agent_dir().join("agents/scout.md"),
        "---\nauto-exit: true\nspawning: false\n---\nLook, do not delegate.\n",
    )
    .unwrap();
    let (session, mut parent) = installed_parent(&env);
    parent.prompt("Delegate to a scout.");
    wait_answer(&session, "Integrated the report.");
    let child = model.requests_for("child");
    assert_eq!(child.len(), 2);
    let searched = request::tool_names(&child[1]);
    for tool in [
        "subagent",
        "subagent_resume",
        "subagent_cancel",
        "subagent_interrupt",
        "subagent_send",
        "subagent_stop",
    ] {
        assert!(
            !searched.contains(&tool.to_owned()),
            "{tool} is removed: {searched:?}"
        );
    }
    // What the role did not deny is still there to find.
    assert!(
        searched.contains(&"subagents_list".to_owned()),
        "{searched:?}"
    );
    assert!(parent.close().success());
}

#[test]
fn a_help_request_is_answered_with_subagent_resume() {
    // The gate holds the child until the parent has said it waits, so the help request comes after.
    let scratch = tempfile::tempdir().unwrap();
    let asked = Gate(scratch.path().join("asked"));
    let model = ModelServer::start_models(
        Models::new()
            .model(
                "parent",
                Script::new()
                    .step(ToolCall::new("tool_search", json!({"query": "subagent"})))
                    .step(ToolCall::new("subagent", scout("child")))
                    .step(Text("Launched; waiting."))
                    .step(ToolCall::new(
                        "subagent_resume",
                        json!({"sessionPath": REPORTED_SESSION, "message": "Use v2.", "name": "Scout"}),
                    ))
                    .step(Text("Resumed; waiting."))
                    .step(Text("Integrated the report.")),
            )
            .model(
                "child",
                Script::new()
                    .step(asked.step())
                    .step(ToolCall::new("caller_ping", json!({"message": "Which schema, v1 or v2?"})))
                    .step(Text("REPORT: used v2")),
            ),
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
    wait_answer(&session, "Launched; waiting.");
    asked.open();
    wait_answer(&session, "Integrated the report.");
    let entries = custom_entries(&session, "subagent_result");
    assert_eq!(
        entries.len(),
        2,
        "the help request, then the resumed run's result: {entries:#?}"
    );
    let help = entries[0]["content"].as_str().unwrap();
    assert!(
        help.contains("<subagent_report from=\"Scout\" kind=\"help-request\">"),
        "{help}"
    );
    assert!(help.contains("Which schema, v1 or v2?"), "{help}");
    let result = entries[1]["content"].as_str().unwrap();
    assert!(result.contains("kind=\"result\">"), "{result}");
    assert!(result.contains("REPORT: used v2"), "{result}");
    let child = model.requests_for("child");
    assert_eq!(child.len(), 3);
    assert!(
        request::user_texts(&child[2])
            .iter()
            .any(|t| t.contains("Use v2.")),
        "{:#}",
        child[1]
    );
    assert!(parent.close().success());
}

#[test]
fn a_stalled_child_steers_the_parent_and_its_failure_arrives_once() {
    let scratch = tempfile::tempdir().unwrap();
    let gate = Gate(scratch.path().join("gate"));
    let model = ModelServer::start_models(
        Models::new()
            .model(
                "parent",
                Script::new()
                    .step(ToolCall::new("tool_search", json!({"query": "subagent"})))
                    .step(ToolCall::new("subagent", scout("child")))
                    .step(Text("Launched; waiting."))
                    .step(Text("Noted."))
                    .step(Text("Noted again.")),
            )
            .model("child", gated_child(&gate)),
    );
    let env = PiEnv::new(&model);
    let tmux = Tmux::start(env.vars());
    let socket = tmux.socket_path();
    let session = env.session_path("parent");
    let mut parent = PiRpc::start_with(
        &env,
        &session,
        "parent",
        &[("HERD_TMUX_SOCKET", socket.as_os_str())],
        &["--herd-surface", "tmux"],
    );
    parent.prompt("Delegate to a scout.");
    wait_answer(&session, "Launched; waiting.");
    wait_for("the child's first request", STEP_BUDGET, || {
        (!model.requests_for("child").is_empty()).then_some(())
    });
    let artifacts = artifacts_of(&session);
    let id = only_run(&artifacts);
    let pane = record_of(&artifacts, &id).pane.expect("a pane").pane_id;
    // The pane goes without any completion evidence: herd-watch reports the stall, then the failure.
    tmux.cmd(["kill-pane", "-t", &pane]);
    wait_answered_result(&session);
    let stalls = custom_entries(&session, "subagent_status");
    assert_eq!(stalls.len(), 1, "{stalls:#?}");
    let line = stalls[0]["content"].as_str().unwrap();
    assert!(
        line.starts_with("\"Scout\" running ") && line.ends_with(", stalled."),
        "{line}"
    );
    // The stall reached the model: it steered (a non-interactive child) a request of its own.
    assert!(
        model
            .requests_for("parent")
            .iter()
            .any(|b| request::user_texts(b).iter().any(|t| t == line)),
        "no request carried the stall"
    );
    let results = custom_entries(&session, "subagent_result");
    assert_eq!(results.len(), 1, "{results:#?}");
    assert_eq!(
        results[0]["details"]["outcome"], "failed",
        "{:#}",
        results[0]
    );
    assert!(parent.close().success());
}

#[test]
fn a_queued_result_dropped_by_escape_arrives_once_after_the_abort() {
    let scratch = tempfile::tempdir().unwrap();
    let busy = Gate(scratch.path().join("busy"));
    let release = Gate(scratch.path().join("release"));
    let model = ModelServer::start_models(
        Models::new()
            .model(
                "parent",
                Script::new()
                    .step(ToolCall::new("tool_search", json!({"query": "subagent"})))
                    .step(ToolCall::new("subagent", scout("child")))
                    // The parent keeps working (a long tool call) while the report comes.
                    .step(busy.step())
                    .step(Text("Integrated the report.")),
            )
            // The child reports only once the parent's long tool call runs.
            .model("child", gated_child(&release)),
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
    parent.send(json!({"type": "prompt", "message": "Delegate to a scout."}));
    // The report settles while the parent's tool call runs, and the parent redraws its widget
    // after that: by then the follower has emitted it and it is queued as a steer (Pi reports no
    // queue event for a custom message). Dropped or not, it must arrive exactly once.
    wait_for("the child's first request", STEP_BUDGET, || {
        (!model.requests_for("child").is_empty()).then_some(())
    });
    wait_for("the parent's long tool call", STEP_BUDGET, || {
        parent
            .events()
            .iter()
            .any(|e| e["type"] == "tool_execution_start" && e["toolName"] == "bash")
            .then_some(())
    });
    // Every redraw from here on comes after the report could settle; one that came before the
    // settlement was looked for would be missed if counting started later.
    let seen = parent.events().len();
    release.open();
    let artifacts = artifacts_of(&session);
    let id = only_run(&artifacts);
    let settled = artifacts.join("runs").join(format!("{id}.result.json"));
    wait_for("the settled result", STEP_BUDGET, || {
        settled.exists().then_some(())
    });
    wait_for("a widget redraw after the release", STEP_BUDGET, || {
        parent.events()[seen..]
            .iter()
            .any(|e| e["type"] == "extension_ui_request" && e["widgetKey"] == "herd-subagents")
            .then_some(())
    });
    // What Escape does: clear the queue, then abort.
    parent.request(json!({"type": "clear_queue"}));
    parent.request(json!({"type": "abort"}));
    // Either the report was still queued: Escape dropped it and it comes again, starting a turn
    // of its own, which answers. Or it reached the transcript just before the abort, steering
    // the turn Escape then ended: it is there once, and the next prompt's request carries it.
    let steered_the_aborted_turn = wait_for(
        "the answer, or the aborted turn the report steered",
        STEP_BUDGET,
        || {
            let entries = session::entries(&session);
            let last = entries.last()?.clone();
            if last["type"] == "message" && last["message"]["role"] == "assistant" {
                if session::is_final(&last["message"])
                    && session::text(&last["message"]) == "Integrated the report."
                {
                    return Some(false);
                }
                let after_the_report = entries.iter().any(|e| e["customType"] == "subagent_result");
                if last["message"]["stopReason"] == "aborted" && after_the_report {
                    return Some(true);
                }
            }
            None
        },
    );
    if steered_the_aborted_turn {
        parent.prompt("Go on.");
        wait_answer(&session, "Integrated the report.");
    }
    assert_one_report(&model, &parent, &session, "parent");
    wait_delivered(&artifacts, &id);
    assert!(parent.close().success());
}

/// `/worktree <name> [task]`: a new interactive Pi in a fresh managed worktree continues this
/// conversation; its pane is focused only once its start is confirmed.
fn worktree_hands_the_conversation_to_a_new_pi_in_a_fresh_worktree(place: Where, test: &str) {
    let model = ModelServer::start_models(
        Models::new().model(
            "parent",
            Script::new()
                .step(Text("Noted: the word is PAPAYA."))
                .step(Text("Continuing in the worktree.")),
        ),
    );
    let env = PiEnv::new(&model);
    let work = env.work_dir();
    let sb = herd_e2e::git::Sandbox::new();
    sb.git(&work, ["init", "-q", "-b", "main"]);
    std::fs::write(work.join("README.md"), "handoff\n").unwrap();
    sb.git(&work, ["add", "README.md"]);
    sb.git(&work, ["commit", "-q", "-m", "initial"]);
    let root = env.root().join("worktrees");
    let mut vars: Vec<(OsString, OsString)> =
        vec![("HERD_WORKTREE_ROOT".into(), root.clone().into())];
    let (tmux, herdr) = match place {
        Where::Tmux => {
            let tmux = Tmux::start(env.vars());
            vars.push(("HERD_TMUX_SOCKET".into(), tmux.socket_path().into()));
            (Some(tmux), None)
        }
        Where::Herdr => {
            let Some(herdr) = HerdrServer::start(test, env.vars()) else {
                return;
            };
            let (_, pane) = herdr.workspace(&work);
            vars.extend(herdr.pane_vars(&pane));
            (None, Some(herdr))
        }
        Where::Process => unreachable!("a handoff needs a terminal"),
    };
    let extra: Vec<(&str, &OsStr)> = vars
        .iter()
        .map(|(k, v)| (k.to_str().unwrap(), v.as_os_str()))
        .collect();
    let session = env.session_path("parent");
    let mut parent = PiRpc::start_with(
        &env,
        &session,
        "parent",
        &extra,
        &["--herd-surface", place.surface()],
    );
    parent.prompt("Remember the word PAPAYA.");
    wait_answer(&session, "Noted: the word is PAPAYA.");

    parent.prompt("/worktree feat-handoff carry on from here");
    let notice = parent.wait_event("the handoff notice", |e| {
        e["method"] == "notify"
            && e["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("Worktree handoff:"))
    });
    let text = notice["message"].as_str().unwrap();
    assert!(text.contains("confirmed through /proc"), "{text}");
    assert!(text.contains("its pane is focused"), "{text}");

    // The record says where and which process; the worktree is a managed one on the branch.
    let artifacts = artifacts_of(&session);
    let records: Vec<PathBuf> = std::fs::read_dir(artifacts.join("handoffs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    assert_eq!(records.len(), 1, "{records:?}");
    let record: HandoffDoc = decode(&read_json(&records[0]).unwrap());
    assert_eq!(record.status, HandoffStatus::Started, "{record:#?}");
    assert!(record.focused, "{record:#?}");
    let worktree = PathBuf::from(&record.worktree.path);
    assert!(worktree.starts_with(&root), "{}", worktree.display());
    assert_eq!(
        sb.git(&worktree, ["rev-parse", "--abbrev-ref", "HEAD"]),
        "feat-handoff"
    );

    // The new Pi asked the model with this conversation and the task, from the worktree.
    let requests = model.wait_for_requests(2, STEP_BUDGET);
    let handed = &requests[1];
    let said = request::user_texts(handed).join("\n");
    assert!(said.contains("Remember the word PAPAYA."), "{said}");
    assert!(said.contains("carry on from here"), "{said}");
    assert!(
        request::system_prompt(handed).contains(&worktree.to_string_lossy().into_owned()),
        "the new Pi works in the worktree"
    );

    // It is an ordinary session: no child protocol in its environment; its pane is in front.
    let pid = record.pid.expect("the new Pi's PID");
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let protocol: Vec<String> = environ
        .split(|b| *b == 0)
        .filter(|v| v.starts_with(b"PI_SUBAGENT_"))
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect();
    assert!(
        protocol.is_empty(),
        "no child protocol in the handoff's environment: {protocol:?}"
    );
    if let Some(tmux) = &tmux {
        let pane = &record.pane.as_ref().expect("a pane").pane_id;
        assert_eq!(
            tmux.cmd([
                "display-message",
                "-p",
                "-t",
                pane,
                "#{window_active}#{pane_active}"
            ]),
            "11",
            "the handoff's pane is the active one"
        );
    }
    if let Some(herdr) = &herdr {
        let workspace = record.worktree.workspace_id.as_deref().unwrap();
        let got = herdr.json(["workspace", "get", workspace]);
        assert_eq!(
            got["workspace"]["focused"], true,
            "the handoff's workspace is focused: {got:#}"
        );
    }

    // herd-cleanup finds what the handoff created.
    let mut cleanup = env.command(herd_e2e::herd::bin_dir().join("herd-cleanup"));
    cleanup
        .env("HERD_WORKTREE_ROOT", &root)
        .arg("--artifacts")
        .arg(&artifacts)
        .args(["list", "--json", "--session-cwd"])
        .arg(&work);
    let listed = herd_e2e::proc::run(cleanup, STEP_BUDGET);
    assert!(
        listed.stdout.contains(&*worktree.to_string_lossy()),
        "{listed}"
    );
    assert!(parent.close().success());
}

#[test]
fn on_tmux_worktree_hands_the_conversation_to_a_new_pi_in_a_fresh_worktree() {
    worktree_hands_the_conversation_to_a_new_pi_in_a_fresh_worktree(
        Where::Tmux,
        "on_tmux_worktree_hands_the_conversation_to_a_new_pi_in_a_fresh_worktree",
    );
}

#[test]
fn on_herdr_worktree_hands_the_conversation_to_a_new_pi_in_a_fresh_worktree() {
    worktree_hands_the_conversation_to_a_new_pi_in_a_fresh_worktree(
        Where::Herdr,
        "on_herdr_worktree_hands_the_conversation_to_a_new_pi_in_a_fresh_worktree",
    );
}
