//! Request validation against the real schema files: one refused request per rule, the typed
//! parse of valid ones, and load errors that name the broken file.

use std::path::{Path, PathBuf};

use herd_core::ErrorCode;
use herd_tools::{
    AcceptRequest, CallerPingRequest, EmptyRequest, ModelSpec, Registry, ResumeRequest,
    SendRequest, SubagentRequest, Target, TargetRequest, TaskMethod, Thinking,
    WorktreeRemoveRequest, WorktreeRequest, WriteTaskModelsRequest,
};
use serde_json::{Value, json};

/// Builds a valid `subagent` request and applies `edit` to it.
fn subagent(edit: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Value {
    let mut request = json!({"name": "login-api", "task": "implement the login endpoint"});
    if let Value::Object(map) = &mut request {
        edit(map);
    }
    request
}

fn set(key: &str, value: Value) -> impl FnOnce(&mut serde_json::Map<String, Value>) {
    let key = key.to_owned();
    move |map| {
        map.insert(key, value);
    }
}

/// One refused request: the tool, the request, the field the error must name (`None`: the
/// request as a whole), and a piece of the message.
struct Case {
    tool: &'static str,
    request: Value,
    field: Option<&'static str>,
    message: &'static str,
}

fn case(
    tool: &'static str,
    request: Value,
    field: Option<&'static str>,
    message: &'static str,
) -> Case {
    Case {
        tool,
        request,
        field,
        message,
    }
}

#[test]
fn each_rule_refuses_with_invalid_request_naming_the_field() {
    let accept = |extra: Value| {
        let mut accept = json!({"run": "cargo test"});
        if let (Value::Object(a), Value::Object(b)) = (&mut accept, extra) {
            a.extend(b);
        }
        subagent(set("accept", accept))
    };
    let cases = [
        // Shape of the request itself.
        case("subagent", json!([]), None, "the request must be an object"),
        case(
            "subagent",
            json!("x"),
            None,
            "the request must be an object",
        ),
        // Unknown fields, at any depth.
        case(
            "subagent",
            subagent(set("bogus", json!(1))),
            Some("bogus"),
            "bogus is not a known field",
        ),
        case(
            "subagent",
            accept(json!({"retries": 2})),
            Some("accept.retries"),
            "is not a known field",
        ),
        case(
            "subagent",
            subagent(set("worktree", json!({"branch": "b", "force": true}))),
            Some("worktree.force"),
            "is not a known field",
        ),
        case(
            "subagents_list",
            json!({"verbose": true}),
            Some("verbose"),
            "is not a known field",
        ),
        // Required fields.
        case(
            "subagent",
            json!({"name": "scout"}),
            Some("task"),
            "task is required",
        ),
        case(
            "subagent",
            json!({"task": "x"}),
            Some("name"),
            "name is required",
        ),
        case(
            "subagent",
            subagent(set("accept", json!({"maxRetries": 1}))),
            Some("accept.run"),
            "accept.run is required",
        ),
        case(
            "subagent",
            subagent(set("worktree", json!({"base": "main"}))),
            Some("worktree.branch"),
            "worktree.branch is required",
        ),
        case(
            "subagent_resume",
            json!({}),
            Some("sessionPath"),
            "sessionPath is required",
        ),
        case(
            "subagent_send",
            json!({"id": "abcd"}),
            Some("message"),
            "message is required",
        ),
        case(
            "caller_ping",
            json!({}),
            Some("message"),
            "message is required",
        ),
        case(
            "subagents_write_task_models",
            json!({"tasks": {}}),
            Some("tasksMeta"),
            "tasksMeta is required",
        ),
        // Wrong types.
        case(
            "subagent",
            subagent(set("task", json!(5))),
            Some("task"),
            "task must be a string",
        ),
        case(
            "subagent",
            subagent(set("fork", json!("yes"))),
            Some("fork"),
            "fork must be a boolean",
        ),
        case(
            "subagent",
            subagent(set("persistent", json!(null))),
            Some("persistent"),
            "must be a boolean",
        ),
        case(
            "subagent",
            subagent(set("agent", json!(null))),
            Some("agent"),
            "agent must be a string",
        ),
        case(
            "subagent",
            subagent(set("worktree", json!("main"))),
            Some("worktree"),
            "worktree must be an object or null",
        ),
        case(
            "subagent",
            subagent(set("accept", json!(true))),
            Some("accept"),
            "accept must be an object",
        ),
        case(
            "subagent",
            accept(json!({"maxRetries": 1.5})),
            Some("accept.maxRetries"),
            "must be an integer",
        ),
        case(
            "subagent",
            accept(json!({"timeoutSec": "600"})),
            Some("accept.timeoutSec"),
            "must be an integer",
        ),
        case(
            "subagent",
            accept(json!({"paths": "tests"})),
            Some("accept.paths"),
            "must be an array",
        ),
        case(
            "subagent",
            accept(json!({"paths": ["tests", 3]})),
            Some("accept.paths[1]"),
            "accept.paths[1] must be a string",
        ),
        case(
            "subagent_resume",
            json!({"sessionPath": "s.jsonl", "autoExit": "no"}),
            Some("autoExit"),
            "must be a boolean",
        ),
        // Ranges.
        case(
            "subagent",
            accept(json!({"maxRetries": -1})),
            Some("accept.maxRetries"),
            "must be at least 0 (got -1)",
        ),
        case(
            "subagent",
            accept(json!({"maxRetries": 6})),
            Some("accept.maxRetries"),
            "must be at most 5 (got 6)",
        ),
        case(
            "subagent",
            accept(json!({"timeoutSec": 0})),
            Some("accept.timeoutSec"),
            "must be at least 1 (got 0)",
        ),
        case(
            "subagent",
            accept(json!({"timeoutSec": 3601})),
            Some("accept.timeoutSec"),
            "accept.timeoutSec must be at most 3600 (got 3601)",
        ),
        case(
            "subagent",
            accept(json!({"timeoutSec": 18446744073709551615u64})),
            Some("accept.timeoutSec"),
            "must be at most 3600",
        ),
        // Enums and literals.
        case(
            "subagent",
            subagent(set("thinking", json!("extreme"))),
            Some("thinking"),
            "thinking must be one of \"off\", \"minimal\", \"low\", \"medium\", \"high\", \"xhigh\", \"max\"",
        ),
        case(
            "subagent",
            subagent(set("thinking", json!("HIGH"))),
            Some("thinking"),
            "must be one of",
        ),
        case(
            "subagents_write_task_models",
            json!({"tasks": {}, "tasksMeta": {"generatedAt": "2025-01-01", "method": "guess"}}),
            Some("tasksMeta.method"),
            "must be one of \"research\", \"registry-only\"",
        ),
        case(
            "subagents_write_task_models",
            json!({"tasks": {"coding": ["a/b"], "testing": []}, "tasksMeta": {"generatedAt": "t", "method": "research"}}),
            Some("tasks.testing"),
            "is not a known field",
        ),
        case(
            "subagents_write_task_models",
            json!({"tasks": {}, "tasksMeta": {"generatedAt": "t", "method": "research"}, "expectedConfigRevision": "sha256:abc"}),
            Some("expectedConfigRevision"),
            "must be \"sha256:\" followed by 64 lowercase hex digits",
        ),
        case(
            "subagents_write_task_models",
            json!({"tasks": {}, "tasksMeta": {"generatedAt": "t", "method": "research"}, "expectedConfigRevision": 7}),
            Some("expectedConfigRevision"),
            "must be \"missing\" or a string",
        ),
        // Unions of objects are judged by their constant property.
        case(
            "subagents_write_task_models",
            json!({"tasks": {}, "tasksMeta": {"generatedAt": "t", "method": "research"}, "basis": {"kind": "vibes"}}),
            Some("basis.kind"),
            "basis.kind must be one of \"registry-only\", \"research\"",
        ),
        case(
            "subagents_write_task_models",
            json!({"tasks": {}, "tasksMeta": {"generatedAt": "t", "method": "research"}, "basis": {}}),
            Some("basis.kind"),
            "basis.kind is required",
        ),
        case(
            "subagents_write_task_models",
            json!({"tasks": {}, "tasksMeta": {"generatedAt": "t", "method": "research"}, "basis": {"kind": "research", "uncertainty": "some"}}),
            Some("basis.sources"),
            "basis.sources is required",
        ),
        case(
            "subagents_write_task_models",
            json!({"tasks": {}, "tasksMeta": {"generatedAt": "t", "method": "research"},
                   "basis": {"kind": "research", "uncertainty": "u", "sources": [{"url": "ftp://x", "influence": "i"}]}}),
            Some("basis.sources[0].url"),
            "must be an http(s) URL",
        ),
        case(
            "subagents_write_task_models",
            json!({"tasks": {}, "tasksMeta": {"generatedAt": "t", "method": "registry-only"},
                   "basis": {"kind": "registry-only", "sources": []}}),
            Some("basis.sources"),
            "is not a known field",
        ),
        // Text that must say something.
        case(
            "subagent",
            subagent(set("task", json!(""))),
            Some("task"),
            "task must not be empty",
        ),
        case(
            "subagent",
            subagent(set("task", json!(" \n\t\u{3000}"))),
            Some("task"),
            "task must contain non-whitespace text",
        ),
        case(
            "subagent",
            accept(json!({"run": "   "})),
            Some("accept.run"),
            "must contain non-whitespace text",
        ),
        case(
            "subagent",
            accept(json!({"paths": [""]})),
            Some("accept.paths[0]"),
            "must not be empty",
        ),
        case(
            "subagent_send",
            json!({"id": " ", "message": "next"}),
            Some("id"),
            "must contain non-whitespace text",
        ),
        case(
            "worktree_remove",
            json!({"target": ""}),
            Some("target"),
            "target must not be empty",
        ),
        case(
            "worktree_remove",
            json!({"target": "fix/x", "host": "-oProxyCommand=x"}),
            Some("host"),
            "must be an ssh destination",
        ),
        // Labels.
        case(
            "subagent",
            subagent(set("name", json!(""))),
            Some("name"),
            "name must not be empty",
        ),
        case(
            "subagent",
            subagent(set("name", json!(" scout"))),
            Some("name"),
            "must be a usable label",
        ),
        case(
            "subagent",
            subagent(set("name", json!("scout "))),
            Some("name"),
            "must be a usable label",
        ),
        case(
            "subagent",
            subagent(set("name", json!("two\nlines"))),
            Some("name"),
            "must be a usable label",
        ),
        case(
            "subagent",
            subagent(set("name", json!("esc\u{1b}[31m"))),
            Some("name"),
            "must be a usable label",
        ),
        case(
            "subagent",
            subagent(set("name", json!("rtl\u{202e}kcatta"))),
            Some("name"),
            "must be a usable label",
        ),
        case(
            "subagent",
            subagent(set("name", json!("sep\u{2028}x"))),
            Some("name"),
            "must be a usable label",
        ),
        case(
            "subagent",
            subagent(set("name", json!("zero\u{200b}width"))),
            Some("name"),
            "must be a usable label",
        ),
        case(
            "subagent_resume",
            json!({"sessionPath": "s.jsonl", "name": "\t"}),
            Some("name"),
            "must be a usable label",
        ),
        // Branch and revision names that would reach git's argv.
        case(
            "subagent",
            subagent(set("worktree", json!({"branch": "-D"}))),
            Some("worktree.branch"),
            "must not start with `-`",
        ),
        case(
            "subagent",
            subagent(set("worktree", json!({"branch": "my branch"}))),
            Some("worktree.branch"),
            "must not start with `-`",
        ),
        case(
            "subagent",
            subagent(set("worktree", json!({"branch": "b", "base": "--all"}))),
            Some("worktree.base"),
            "must not start with `-`",
        ),
        // Rules across fields.
        case(
            "subagent",
            accept(json!({})).with("persistent", json!(true)),
            Some("accept"),
            "refused for a persistent child",
        ),
        case(
            "subagent",
            subagent(set("model", json!("a/x,b/y"))).with("worktree", json!({"branch": "b"})),
            Some("model"),
            "fallback lists are refused for worktree launches",
        ),
        case(
            "subagent",
            subagent(set("model", json!("task:coding,a/x"))),
            Some("model"),
            "must be the whole value",
        ),
        case(
            "subagent",
            subagent(set("model", json!("task:"))),
            Some("model"),
            "must be the whole value",
        ),
        case(
            "subagent",
            subagent(set("model", json!("a/x,,b/y"))),
            Some("model"),
            "empty entry",
        ),
        case(
            "subagent_cancel",
            json!({}),
            Some("id"),
            "one of id or name is required",
        ),
        case(
            "subagent_interrupt",
            json!({}),
            Some("id"),
            "one of id or name is required",
        ),
        case(
            "subagent_stop",
            json!({}),
            Some("id"),
            "one of id or name is required",
        ),
        case(
            "subagent_send",
            json!({"message": "next"}),
            Some("id"),
            "one of id or name is required",
        ),
        case(
            "subagents_write_task_models",
            json!({"tasks": {}, "tasksMeta": {"generatedAt": "t", "method": "research"}, "basis": {"kind": "registry-only"}}),
            Some("basis.kind"),
            "basis.kind must equal tasksMeta.method",
        ),
        // Unknown tools.
        case(
            "subagent_spawn",
            json!({}),
            None,
            "there is no tool called \"subagent_spawn\"",
        ),
    ];

    let mut failures = Vec::new();
    for (idx, case) in cases.iter().enumerate() {
        let outcome = parse_any(case.tool, &case.request);
        match outcome {
            Ok(()) => failures.push(format!(
                "case {idx} ({}): accepted {}",
                case.tool, case.request
            )),
            Err(err) => {
                let ok = err.code == ErrorCode::InvalidRequest
                    && err.field.as_deref() == case.field
                    && err.message.contains(case.message);
                if !ok {
                    failures.push(format!(
                        "case {idx} ({}): {} gave {:?} field {:?}: {:?}",
                        case.tool, case.request, err.code, err.field, err.message
                    ));
                }
                assert_eq!(err.exit_code(), 2);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Parses `request` with the request type of `tool`, as the binaries do.
fn parse_any(tool: &str, request: &Value) -> Result<(), herd_core::Error> {
    match tool {
        "subagent" => herd_tools::parse::<SubagentRequest>(tool, request).map(drop),
        "subagent_cancel" | "subagent_interrupt" | "subagent_stop" => {
            herd_tools::parse::<TargetRequest>(tool, request).map(drop)
        }
        "subagent_resume" => herd_tools::parse::<ResumeRequest>(tool, request).map(drop),
        "subagent_send" => herd_tools::parse::<SendRequest>(tool, request).map(drop),
        "caller_ping" => herd_tools::parse::<CallerPingRequest>(tool, request).map(drop),
        "worktree_remove" => herd_tools::parse::<WorktreeRemoveRequest>(tool, request).map(drop),
        "subagents_write_task_models" => {
            herd_tools::parse::<WriteTaskModelsRequest>(tool, request).map(drop)
        }
        _ => herd_tools::validate(tool, request),
    }
}

trait RequestExt {
    fn with(self, key: &str, value: Value) -> Value;
}

impl RequestExt for Value {
    fn with(mut self, key: &str, value: Value) -> Value {
        if let Value::Object(map) = &mut self {
            map.insert(key.to_owned(), value);
        }
        self
    }
}

#[test]
fn a_full_subagent_request_parses_with_defaults_filled() {
    let request = json!({
        "name": "Ticket 123",
        "task": "Implement ticket 123, test it, and commit the result",
        "agent": "worker",
        "systemPrompt": "",
        "model": "task:coding",
        "thinking": "medium",
        "skills": "",
        "tools": "read,bash",
        "cwd": "repo",
        "worktree": {"branch": "ticket/123", "base": "main"},
        "fork": false,
        "accept": {"run": "npm test", "paths": ["test"]},
        "interactive": false
    });
    let parsed: SubagentRequest = herd_tools::parse("subagent", &request).unwrap();
    assert_eq!(
        parsed.accept,
        Some(AcceptRequest {
            run: "npm test".to_owned(),
            max_retries: 1,
            timeout_sec: 600,
            paths: vec!["test".to_owned()],
        })
    );
    assert_eq!(
        parsed.worktree,
        Some(WorktreeRequest {
            branch: "ticket/123".to_owned(),
            base: Some("main".to_owned()),
        })
    );
    assert!(!parsed.persistent);
    assert_eq!(parsed.thinking, Some(Thinking::Medium));
    assert_eq!(parsed.cwd.as_deref(), Some(Path::new("repo")));
    assert_eq!(
        parsed.model_spec(),
        Some(ModelSpec::Task("coding".to_owned()))
    );

    // Serializing the typed request gives back a request the schema accepts.
    let again = serde_json::to_value(&parsed).unwrap();
    herd_tools::validate("subagent", &again).unwrap();
}

#[test]
fn minimal_requests_parse_and_null_worktree_means_none() {
    let parsed: SubagentRequest =
        herd_tools::parse("subagent", &subagent(set("worktree", Value::Null))).unwrap();
    assert_eq!(parsed.worktree, None);
    assert_eq!(parsed.accept, None);
    assert!(!parsed.persistent);
    assert_eq!(parsed.model_spec(), None);

    let models: SubagentRequest =
        herd_tools::parse("subagent", &subagent(set("model", json!("a/x, b/y")))).unwrap();
    assert_eq!(
        models.model_spec(),
        Some(ModelSpec::Models(vec!["a/x".to_owned(), "b/y".to_owned()]))
    );

    let resume: ResumeRequest =
        herd_tools::parse("subagent_resume", &json!({"sessionPath": "s.jsonl"})).unwrap();
    assert_eq!(resume.name, "Resume");
    assert!(resume.auto_exit);
    assert_eq!(resume.session_path, PathBuf::from("s.jsonl"));

    let both: TargetRequest = herd_tools::parse(
        "subagent_cancel",
        &json!({"id": "abcd1234", "name": "Scout"}),
    )
    .unwrap();
    assert_eq!(both.target().unwrap(), Target::Id("abcd1234".to_owned()));
    let by_name: SendRequest = herd_tools::parse(
        "subagent_send",
        &json!({"name": "Scout", "message": "next"}),
    )
    .unwrap();
    assert_eq!(by_name.target().unwrap(), Target::Name("Scout".to_owned()));

    let remove: WorktreeRemoveRequest =
        herd_tools::parse("worktree_remove", &json!({"target": "ticket/123"})).unwrap();
    assert!(!remove.preserve);
    assert_eq!(remove.host, None);
    let remote: WorktreeRemoveRequest = herd_tools::parse(
        "worktree_remove",
        &json!({"target": "fix/x", "host": "devbox"}),
    )
    .unwrap();
    assert_eq!(remote.host.as_deref(), Some("devbox"));

    for tool in ["subagents_list", "worktree_list", "subagent_done"] {
        herd_tools::parse::<EmptyRequest>(tool, &json!({})).unwrap();
    }

    let write: WriteTaskModelsRequest = herd_tools::parse(
        "subagents_write_task_models",
        &json!({
            "tasks": {"coding": ["p/m"], "review": []},
            "tasksMeta": {"generatedAt": "2025-06-01T00:00:00Z", "method": "research"},
            "expectedConfigRevision": format!("sha256:{}", "0a".repeat(32)),
            "basis": {"kind": "research", "uncertainty": "small sample",
                      "sources": [{"url": "https://example.org/bench", "influence": "ranked coding"}]}
        }),
    )
    .unwrap();
    assert_eq!(write.tasks_meta.method, TaskMethod::Research);
    assert_eq!(write.basis.unwrap().sources.unwrap().len(), 1);
    herd_tools::parse::<WriteTaskModelsRequest>(
        "subagents_write_task_models",
        &json!({"tasks": {}, "tasksMeta": {"generatedAt": "t", "method": "registry-only"},
                "expectedConfigRevision": "missing", "basis": {"kind": "registry-only"}}),
    )
    .unwrap();
}

#[test]
fn labels_allow_what_the_seed_uses() {
    for name in [
        "Scout",
        "Ticket 123",
        "fix-parser",
        "login-test2",
        "Scout: Auth",
        "été",
    ] {
        herd_tools::validate("subagent", &subagent(set("name", json!(name))))
            .unwrap_or_else(|err| panic!("{name:?}: {err}"));
    }
    // "Names are abbreviated to 80 characters": a longer one is taken, and the launch keeps
    // its abbreviation.
    for len in [80, 81, 500] {
        herd_tools::validate("subagent", &subagent(set("name", json!("x".repeat(len))))).unwrap();
    }
}

#[test]
fn json_text_that_is_not_json_is_invalid_request() {
    let err = herd_tools::parse_slice::<SubagentRequest>("subagent", b"{\"name\": ").unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidRequest);
    assert!(
        err.message.starts_with("the request is not valid JSON"),
        "{}",
        err.message
    );
}

/// Copies the real schema directory to a temporary one, for breaking a file on purpose.
fn schema_copy() -> tempfile::TempDir {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
    let dir = tempfile::tempdir().expect("a temporary directory");
    for entry in std::fs::read_dir(&src).expect("the schema directory") {
        let entry = entry.expect("a schema directory entry");
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).expect("a copied schema");
    }
    dir
}

#[test]
fn a_broken_schema_file_is_an_error_naming_the_file() {
    let check = |file: &str, text: &str, message: &str| {
        let dir = schema_copy();
        std::fs::write(dir.path().join(file), text).unwrap();
        let err = Registry::load_dir(dir.path()).unwrap_err();
        let shown = err.to_string();
        assert!(err.file().ends_with(file), "{file}: {shown}");
        assert!(shown.contains(file), "{shown}");
        assert!(shown.contains(message), "{file}: {shown}");
    };
    check(
        "subagent.json",
        "{\"type\": \"object\",",
        "EOF while parsing",
    );
    check(
        "subagent_stop.json",
        "{\"type\":\"object\",\"description\":\"d\",\"properties\":{},\"additionalProperties\":false,\"format\":\"x\"}",
        "unknown field `format`",
    );
    check(
        "caller_ping.json",
        "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
        "the root `description` (the tool's description) is missing",
    );
    check(
        "worktree_list.json",
        "{\"type\":\"object\",\"description\":\"d\",\"properties\":{\"a\":{\"type\":\"string\",\"pattern\":\"[\"}},\"additionalProperties\":false}",
        "properties.a: `pattern` does not compile",
    );
    check(
        "registry.json",
        "{\"format_version\": 2, \"group\": \"g\", \"tools\": [], \"commands\": []}",
        "format_version 2 is not the supported 1",
    );
    check(
        "registry.json",
        "{\"format_version\": 1, \"group\": \"g\", \"tools\": [{\"name\": \"x\", \"sessions\": [\"sibling\"], \"exposure\": \"direct\"}], \"commands\": []}",
        "unknown variant `sibling`",
    );

    let dir = schema_copy();
    std::fs::remove_file(dir.path().join("subagent_send.json")).unwrap();
    let err = Registry::load_dir(dir.path()).unwrap_err();
    assert!(
        err.to_string().ends_with("subagent_send.json is missing"),
        "{err}"
    );

    let dir = schema_copy();
    std::fs::write(dir.path().join("subagent_spawn.json"), "{}").unwrap();
    let err = Registry::load_dir(dir.path()).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("subagent_spawn.json is not listed in registry.json"),
        "{err}"
    );
}

#[test]
fn a_budget_is_positive_and_finite_and_its_refusals_name_the_field_budget() {
    let parsed: SubagentRequest = herd_tools::parse(
        "subagent",
        &subagent(set("budget", json!({"tokens": 1_000_000, "usd": 3.0}))),
    )
    .unwrap();
    assert_eq!(
        parsed.budget().unwrap(),
        Some(herd_tools::BudgetLimits {
            tokens: Some(1_000_000),
            usd: Some(3.0)
        })
    );
    let parsed: SubagentRequest =
        herd_tools::parse("subagent", &subagent(set("budget", json!({"usd": 0.5})))).unwrap();
    assert_eq!(parsed.budget().unwrap().unwrap().tokens, None);
    for bad in [
        json!({}),
        json!({"tokens": 0}),
        json!({"tokens": -5}),
        json!({"usd": 0}),
        json!({"usd": -1.0}),
        json!({"tokens": 10, "usd": 0.0}),
    ] {
        let err =
            herd_tools::parse::<SubagentRequest>("subagent", &subagent(set("budget", bad.clone())))
                .unwrap_err();
        assert_eq!(
            err.code,
            ErrorCode::InvalidRequest,
            "{bad}: {}",
            err.message
        );
        assert_eq!(
            err.field.as_deref(),
            Some("budget"),
            "{bad}: {}",
            err.message
        );
    }
}
