//! `task:<category>` and the model catalog against the real Pi's own answer to which models have
//! credentials (`pi --list-models`): a provider without an API key is skipped, a category with
//! no authenticated candidate is refused with nothing written, and `herd-launch models` shows
//! the same answer.

#![expect(
    clippy::unwrap_used,
    reason = "scenario steps fail loudly on a broken fixture"
)]

use herd_core::error::ErrorDocument;
use herd_e2e::herd::{Herd, Where, results};
use herd_e2e::model::{Fail, ModelServer, Models, Script, Text};
use herd_e2e::pi::PiEnv;
use herd_protocol::launch::docs::{CatalogTask, ModelCatalog};
use herd_protocol::result::Outcome;
use herd_protocol::watch::WatchWait;
use serde_json::{Value, json};

/// The one result of `events`, whichever run delivered it.
fn only_result(herd: &Herd<'_>, events: &[Value]) -> WatchWait {
    let mut all: Vec<WatchWait> = herd
        .run_ids()
        .iter()
        .flat_map(|id| results(events, id))
        .collect();
    assert_eq!(all.len(), 1, "{events:#?}");
    all.remove(0)
}

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
    let catalog: ModelCatalog = out.doc();
    let names: Vec<&str> = catalog.models.iter().map(|m| m.model.as_str()).collect();
    assert!(names.contains(&"fake/child"), "{catalog:#?}");
    assert!(
        !names.iter().any(|n| n.starts_with("locked/")),
        "{catalog:#?}"
    );
    let task = |category: &str, candidates: &[&str], authenticated: &[&str]| CatalogTask {
        category: category.to_owned(),
        candidates: candidates.iter().map(|&c| c.to_owned()).collect(),
        authenticated: authenticated.iter().map(|&c| c.to_owned()).collect(),
    };
    assert_eq!(
        catalog.tasks,
        [
            task("coding", &["locked/child", "fake/child"], &["fake/child"]),
            task("review", &["locked/child"], &[]),
        ],
        "{catalog:#?}"
    );
    let guideline = &catalog.guideline;
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
    let refused = out.doc::<ErrorDocument>().error;
    assert_eq!(refused.field.as_deref(), Some("model"), "{refused:?}");
    assert!(
        refused
            .message
            .contains("task:review has no authenticated candidate"),
        "{refused:?}"
    );
    assert!(herd.run_ids().is_empty(), "a refused launch writes no run");

    // The first authenticated candidate runs; the locked one is skipped, never tried.
    let ack = herd.launch(&json!({"name": "Coder", "task": "Code it", "model": "task:coding"}));
    assert_eq!(ack.model.as_deref(), Some("fake/child"), "{ack:?}");
    assert!(ack.fallback_models.is_empty(), "{ack:?}");
    assert!(
        ack.diagnostics
            .iter()
            .any(|d| d.contains("task:coding skipped locked/child")),
        "{ack:?}"
    );
    let events = herd.follow();
    let result = only_result(&herd, &events);
    assert_eq!(result.outcome, Outcome::Completed, "{events:#?}");
    assert!(result.message.contains("REPORT: coded"), "{result:?}");
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
    let ack = herd.launch(&json!({"name": "Coder", "task": "Code it", "model": "task:coding"}));
    let first = ack.run_id.clone();
    assert_eq!(ack.model.as_deref(), Some("fake/down"), "{ack:?}");
    assert_eq!(ack.fallback_models, ["fake/up"], "{ack:?}");

    // `late` gets its key before the provider error is handled: the fallback asks Pi again, and
    // of the category's candidates skips only the one already tried.
    models["providers"]["late"]["apiKey"] = "late-key".into();
    std::fs::write(&file, models.to_string()).unwrap();
    let events = herd.follow();
    let result = only_result(&herd, &events);
    assert_eq!(result.outcome, Outcome::Completed, "{events:#?}");
    let second = result.run_id;
    assert_ne!(second, first);
    let record = herd.run_record(&second);
    assert_eq!(record.model.as_deref(), Some("late/up"), "{record:?}");
    assert_eq!(record.attempted_models, ["fake/down"], "{record:?}");
    assert_eq!(
        model.requests_for("down").len(),
        1,
        "the failed model is not tried again"
    );
}

#[test]
fn a_model_pi_has_no_credentials_for_is_refused_with_the_close_matches() {
    let model = ModelServer::start_models(
        Models::new().model(
            "helper",
            Script::new()
                .step(Text("REPORT: helped"))
                .step(Text("REPORT: helped"))
                .step(Text("REPORT: helped")),
        ),
    );
    let env = env_with_a_locked_provider(&model);
    let herd = Herd::new(&env, Where::Process);
    let spawn = |model: &str, json: bool| {
        let request = env.root().join("request.json");
        let name = format!("Helper{}", herd.run_ids().len());
        std::fs::write(
            &request,
            json!({"name": name, "task": "Help", "model": model}).to_string(),
        )
        .unwrap();
        let mut args: Vec<&std::ffi::OsStr> = vec![
            "spawn".as_ref(),
            "--request".as_ref(),
            request.as_os_str(),
            "--surface".as_ref(),
            "process".as_ref(),
        ];
        if json {
            args.push("--json".as_ref());
        }
        herd.run("herd-launch", args)
    };

    // A typo, as the person reads it: the close match from the catalog, exit 2.
    let out = spawn("fake/helpr", false);
    assert_eq!(out.code, 2, "{out}");
    assert!(
        out.stderr.contains(
            "`fake/helpr` is not a model Pi has credentials for (`pi --list-models`): did you mean fake/helper?"
        ),
        "{out}"
    );
    // A bare id too, and the entry of a fallback list that is not in the catalog.
    for (named, said) in [
        ("helpr", "did you mean fake/helper?"),
        ("fake/helper,fake/gone", "`fake/gone` is not a model"),
        // A provider without credentials: its models are not offered.
        ("locked/child", "; it has credentials for fake/helper"),
    ] {
        let out = spawn(named, true);
        assert_eq!(out.code, 2, "{named}: {out}");
        let refused = out.doc::<ErrorDocument>().error;
        assert_eq!(refused.field.as_deref(), Some("model"), "{refused:?}");
        assert!(refused.message.contains(said), "{named}: {refused:?}");
    }
    assert!(herd.run_ids().is_empty(), "a refused launch writes no run");
    assert!(model.requests_for("helper").is_empty());

    // The catalog's own names launch: exactly, a bare id, or with a thinking suffix.
    for named in ["fake/helper", "helper", "fake/helper:low"] {
        let out = spawn(named, true);
        assert_eq!(out.code, 0, "{named}: {out}");
    }
    let events = herd.follow();
    for id in herd.run_ids() {
        let result = results(&events, &id);
        assert_eq!(result.len(), 1, "{events:#?}");
        assert_eq!(result[0].outcome, Outcome::Completed, "{events:#?}");
    }
}
