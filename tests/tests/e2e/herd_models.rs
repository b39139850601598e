//! `task:<category>` and the model catalog against the real Pi's own answer to which models have
//! credentials (`pi --list-models`): a provider without an API key is skipped, a category with
//! no authenticated candidate is refused with nothing written, and `herd-launch models` shows
//! the same answer.

#![expect(
    clippy::unwrap_used,
    reason = "scenario steps fail loudly on a broken fixture"
)]

use herd_e2e::herd::{Herd, Where, json_doc};
use herd_e2e::model::{Fail, ModelServer, Models, Script, Text};
use herd_e2e::pi::PiEnv;
use serde_json::{Value, json};

/// A Pi environment whose `models.json` has, beside the scripted provider, a provider `locked`
/// without an API key, and whose configuration names both in `models.tasks`.
fn env_with_a_locked_provider(model: &ModelServer) -> PiEnv {
    let env = PiEnv::new(model);
    let file = env.agent_dir().join("models.json");
    let mut models: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    models["providers"]["locked"] = json!({
        "baseUrl": model.base_url(),
        "api": "openai-completions",
        "models": [{"id": "child", "reasoning": false, "input": ["text"], "contextWindow": 128_000, "maxTokens": 4096}],
    });
    std::fs::write(&file, models.to_string()).unwrap();
    let config = env.agent_dir().join("herdr-agents/config.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        json!({"models": {"tasks": {
            "coding": ["locked/child", Herd::model("child")],
            "review": ["locked/child"],
        }}})
        .to_string(),
    )
    .unwrap();
    env
}

#[test]
fn task_categories_use_only_candidates_pi_has_credentials_for() {
    let model = ModelServer::start_models(
        Models::new().model("child", Script::new().step(Text("REPORT: coded"))),
    );
    let env = env_with_a_locked_provider(&model);
    let herd = Herd::new(&env, Where::Process);

    // The catalog: Pi's models with credentials, and the categories over them.
    let out = herd.run("herd-launch", ["models", "--json"]);
    assert!(out.success(), "{out}");
    let catalog = json_doc(&out);
    let names: Vec<&str> = catalog["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["model"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"fake/child"), "{catalog}");
    assert!(!names.iter().any(|n| n.starts_with("locked/")), "{catalog}");
    assert_eq!(
        catalog["tasks"],
        json!([
            {"category": "coding", "candidates": ["locked/child", "fake/child"], "authenticated": ["fake/child"]},
            {"category": "review", "candidates": ["locked/child"], "authenticated": []},
        ]),
        "{catalog}"
    );
    let guideline = catalog["guideline"].as_str().unwrap();
    assert!(
        guideline.contains("task:coding (first authenticated candidate fake/child)"),
        "{guideline}"
    );
    assert!(!guideline.contains("locked/"), "{guideline}");

    // A category with no authenticated candidate is refused, and nothing is written.
    let request = env.root().join("review.json");
    std::fs::write(
        &request,
        json!({"name": "Reviewer", "task": "Review", "model": "task:review"}).to_string(),
    )
    .unwrap();
    let out = herd.run(
        "herd-launch",
        [
            "spawn".as_ref(),
            "--request".as_ref(),
            request.as_os_str(),
            "--surface".as_ref(),
            "process".as_ref(),
            "--json".as_ref(),
        ],
    );
    assert_eq!(out.code, 2, "{out}");
    let refused = json_doc(&out);
    assert_eq!(refused["error"]["field"], "model", "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("task:review has no authenticated candidate"),
        "{refused}"
    );
    assert!(herd.run_ids().is_empty(), "a refused launch writes no run");

    // The first authenticated candidate runs; the locked one is skipped, never tried.
    let ack = herd.spawn(&json!({"name": "Coder", "task": "Code it", "model": "task:coding"}));
    assert_eq!(ack["model"], "fake/child", "{ack}");
    assert!(ack.get("fallback_models").is_none(), "{ack}");
    assert!(
        ack["diagnostics"].as_array().unwrap().iter().any(|d| d
            .as_str()
            .unwrap()
            .contains("task:coding skipped locked/child")),
        "{ack}"
    );
    let events = herd.follow();
    let result = events.iter().find(|e| e["event"] == "result").unwrap();
    assert_eq!(result["outcome"], "completed", "{events:#?}");
    assert!(
        result["message"]
            .as_str()
            .unwrap()
            .contains("REPORT: coded"),
        "{result}"
    );
    assert_eq!(model.requests_for("child").len(), 1);
}

#[test]
fn a_fallback_resolves_the_category_again_and_skips_only_the_models_tried() {
    let model = ModelServer::start_models(
        Models::new()
            .model("down", Script::new().step(Fail(500, "scripted outage")))
            .model("up", Script::new().step(Text("REPORT: answered"))),
    );
    let env = PiEnv::new(&model);
    let file = env.agent_dir().join("models.json");
    let mut models: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    // `late` has no credentials at the first launch.
    models["providers"]["late"] = json!({
        "baseUrl": model.base_url(),
        "api": "openai-completions",
        "compat": { "supportsDeveloperRole": false, "supportsReasoningEffort": false },
        "models": [{"id": "up", "reasoning": false, "input": ["text"], "contextWindow": 128_000, "maxTokens": 4096}],
    });
    std::fs::write(&file, models.to_string()).unwrap();
    let config = env.agent_dir().join("herdr-agents/config.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        json!({"models": {"tasks": {"coding": ["late/up", "fake/down", "fake/up"]}}}).to_string(),
    )
    .unwrap();
    let herd = Herd::new(&env, Where::Process);
    let ack = herd.spawn(&json!({"name": "Coder", "task": "Code it", "model": "task:coding"}));
    let first = ack["run_id"].as_str().unwrap().to_owned();
    assert_eq!(ack["model"], "fake/down", "{ack}");
    assert_eq!(ack["fallback_models"], json!(["fake/up"]), "{ack}");

    // `late` gets its key before the provider error is handled: the fallback asks Pi again, and
    // of the category's candidates skips only the one already tried.
    models["providers"]["late"]["apiKey"] = "late-key".into();
    std::fs::write(&file, models.to_string()).unwrap();
    let events = herd.follow();
    let result = events.iter().find(|e| e["event"] == "result").unwrap();
    assert_eq!(result["outcome"], "completed", "{events:#?}");
    let second = result["run_id"].as_str().unwrap().to_owned();
    assert_ne!(second, first);
    let record = herd.record(&second);
    assert_eq!(record["model"], "late/up", "{record}");
    assert_eq!(record["attempted_models"], json!(["fake/down"]), "{record}");
    assert_eq!(
        model.requests_for("down").len(),
        1,
        "the failed model is not tried again"
    );
}
