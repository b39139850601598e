//! `cargo xtask demo --pi`, its second part: a real Pi parent with herd's parent extension hands
//! a task to a real Pi child through the `subagent` tool, and hears the report as a message.
//!
//! Both talk to one scripted model on 127.0.0.1: the parent's script searches for herd's tools,
//! calls `subagent`, and answers the report when it arrives; the child's reports.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use herd_core::{Error, ErrorCode};
use herd_e2e::model::{ModelServer, Models, Script, Text, ToolCall};
use herd_e2e::pi::PiEnv;
use herd_e2e::rpc::{PiRpc, custom_messages, parent_extension};
use herd_e2e::session;
use herd_e2e::wait::try_wait_for;
use serde_json::{Value, json};

use crate::demo::Stop;

/// The parent's whole exchange: its two turns and the child's run.
const BUDGET: Duration = Duration::from_secs(120);
/// What the parent says when the report has come.
const ANSWER: &str = "The scout counted 3 files in src/; nothing else is needed.";

/// Runs the parent part with the binaries in `bins`; writes what a person sees to `out`.
pub fn run(bins: &Path, out: &mut dyn Write) -> Result<(), Stop> {
    let model = ModelServer::start_models(
        Models::new()
            .model(
                "parent",
                Script::new()
                    .step(ToolCall::new("tool_search", json!({"query": "subagent"})))
                    .step(ToolCall::new(
                        "subagent",
                        json!({"name": "Scout", "task": "Count the files in src/", "model": PiEnv::model_arg("child")}),
                    ))
                    .step(Text("Launched Scout; its report arrives as a message."))
                    .step(Text(ANSWER)),
            )
            .model("child", Script::new().step(Text("REPORT: src/ holds 3 files."))),
    );
    let env = PiEnv::new(&model);
    let session = env.session_path("parent");
    let args = [
        "-e".into(),
        parent_extension().into_os_string(),
        "--herd-surface".into(),
        "process".into(),
    ];
    let mut parent = PiRpc::spawn_with(&env, bins, &session, "parent", &[], &args);
    writeln!(
        out,
        "· pi --mode rpc -e extension/herd-parent.ts: the parent, prompted \"Have a scout count the files in src/\""
    )?;
    parent.send(json!({"type": "prompt", "message": "Have a scout count the files in src/"}));

    let mut shown = 0;
    let mut widget_seen = false;
    let done = try_wait_for(BUDGET, || {
        let events = parent.events();
        for event in &events[shown..] {
            if event["type"] == "tool_execution_end" {
                let name = event["toolName"].as_str().unwrap_or_default();
                let _ = writeln!(out, "· the parent's model called {name}");
            }
            if event["type"] == "extension_ui_request" && event["widgetKey"] == "herd-subagents" {
                if let Some(lines) = event["widgetLines"].as_array().filter(|_| !widget_seen) {
                    widget_seen = true;
                    let _ = writeln!(out, "· the widget above the parent's editor:");
                    for line in lines.iter().filter_map(Value::as_str) {
                        let _ = writeln!(out, "    {line}");
                    }
                }
            }
        }
        shown = events.len();
        session::messages(&session).pop().filter(|m| {
            m["role"] == "assistant" && session::is_final(m) && session::text(m) == ANSWER
        })
    });
    let events = parent.events();
    let results = custom_messages(&events, "subagent_result");
    let Some(answer) = done else {
        return Err(Error::new(
            ErrorCode::Timeout,
            format!(
                "the parent did not answer the report within {} s",
                BUDGET.as_secs()
            ),
        )
        .into());
    };
    let [result] = results.as_slice() else {
        return Err(Error::internal(format!(
            "the parent received {} subagent_result messages, not one",
            results.len()
        ))
        .into());
    };
    writeln!(
        out,
        "\n── the report, as one subagent_result message that started the parent's turn ──"
    )?;
    // Shown as a person reads it: the lines written for the parent's model are left out.
    writeln!(
        out,
        "{}",
        herd_core::escape::for_people(result["content"].as_str().unwrap_or_default())
    )?;
    writeln!(
        out,
        "\n── the parent's answer ──\n{}",
        session::text(&answer)
    )?;
    let closed = parent.close();
    if !closed.success() {
        return Err(Error::internal(format!("the parent Pi exited with {closed}")).into());
    }
    Ok(())
}
