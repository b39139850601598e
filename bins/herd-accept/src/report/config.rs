//! The acceptance configuration (docs/tools.md, "Acceptance gates"):
//! strict validation of what a caller asked for, and its resolution into one effective gate.
//!
//! Validation runs before anything else, so a mistake is explained without a check or a child
//! ever running. Every problem is reported, each with the path of the field it concerns.

use std::collections::{BTreeMap, BTreeSet};

use herd_protocol::accept::{
    Criterion, EvidenceKind, Gate, Level, Review, Severity, VerifyCommand,
};
use serde_json::{Map, Value};

use super::{Diagnostics, normalized_token, render_value};
use crate::spec::kind;

/// The evidence a level asks for by default.
pub fn default_evidence(level: Level) -> &'static [EvidenceKind] {
    use EvidenceKind::*;
    match level {
        Level::None => &[],
        Level::Attested => &[ManualNotes, ResidualRisks],
        Level::Checked => &[
            ChangedFiles,
            TestsAdded,
            CommandsRun,
            ResidualRisks,
            NoStagedFiles,
        ],
        Level::Verified => &[
            ChangedFiles,
            TestsAdded,
            CommandsRun,
            ValidationOutput,
            ResidualRisks,
            NoStagedFiles,
        ],
    }
}

/// The default budget of a verify command.
pub const VERIFY_TIMEOUT_MS_DEFAULT: u64 = 120_000;
/// The longest budget a verify command may ask for (one day): nothing waits without a deadline.
pub const VERIFY_TIMEOUT_MS_LIMIT: u64 = 86_400_000;

/// A level as requested: `auto` means "infer".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LevelRequest {
    Auto,
    Level(Level),
}

/// A validated `acceptance` object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcceptanceConfig {
    pub level: LevelRequest,
    pub criteria: Vec<Criterion>,
    pub evidence: Vec<EvidenceKind>,
    pub verify: Vec<VerifyCommand>,
    pub review: Option<Review>,
    pub stop_rules: Vec<String>,
    pub reason: Option<String>,
    /// Anything beyond a bare `auto` was asked for.
    pub requests_policy: bool,
}

/// What the caller gave, after validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AcceptanceInput {
    /// No acceptance at all: the inferred gate applies.
    Omitted,
    /// `acceptance: false`, the deprecated way to turn gates off.
    Disabled,
    Config(AcceptanceConfig),
}

const CONFIG_KEYS: [&str; 7] = [
    "level",
    "criteria",
    "evidence",
    "verify",
    "review",
    "stopRules",
    "reason",
];
const CRITERION_KEYS: [&str; 4] = ["id", "must", "evidence", "severity"];
const VERIFY_KEYS: [&str; 6] = ["id", "command", "timeoutMs", "cwd", "env", "allowFailure"];
const REVIEW_KEYS: [&str; 3] = ["agent", "focus", "required"];

const REVIEWED_IS_NOT_A_LEVEL: &str = "\"reviewed\" is a status a run reaches, not a level that can be requested; \
     for a read-only reviewer call omit acceptance, and to require review of a writer result use \
     {\"level\": \"checked\", \"review\": {\"required\": true, \"agent\": \"reviewer\"}} and run the reviewer separately";
const NONE_NEEDS_A_REASON: &str =
    "level \"none\" requires a reason; use {\"level\": \"none\", \"reason\": \"...\"}";
const VERIFIED_NEEDS_COMMANDS: &str = "level \"verified\" needs at least one host verify command; \
     use {\"level\": \"verified\", \"verify\": [{\"id\": \"...\", \"command\": \"...\"}]} or level \"checked\"";

/// Parses the `--level` flag: the level the caller inferred for this run.
pub fn parse_inferred_level(text: &str) -> Result<Level, Diagnostics> {
    match text {
        "auto" => Ok(Level::Attested),
        "reviewed" => Err(Diagnostics::one("level", REVIEWED_IS_NOT_A_LEVEL)),
        other => Level::parse(other).ok_or_else(|| {
            Diagnostics::one(
                "level",
                format!(
                    "must be one of auto, none, attested, checked, verified; got {}",
                    render_value(&Value::String(other.to_owned()))
                ),
            )
        }),
    }
}

/// Validates the contents of an `--acceptance` file.
///
/// The file holds either the `acceptance` value itself (a level string, `false`, or an object),
/// or a task item's acceptance parameters `{"acceptance": …}` / `{"gate": "<command>"}`, which is
/// the form in which `gate` combined with `acceptance` can be refused.
pub fn parse_input(value: &Value) -> Result<AcceptanceInput, Diagnostics> {
    if let Value::Object(object) = value {
        if object.contains_key("gate") || object.contains_key("acceptance") {
            return parse_task_item(object);
        }
    }
    parse_acceptance(value, "acceptance")
}

fn parse_task_item(object: &Map<String, Value>) -> Result<AcceptanceInput, Diagnostics> {
    let mut diags = Diagnostics::default();
    for key in object.keys() {
        if key != "gate" && key != "acceptance" {
            diags.push(key, "is not supported beside \"acceptance\" and \"gate\"");
        }
    }
    let acceptance = object.get("acceptance");
    let result = match object.get("gate") {
        Some(gate) => {
            let command = match gate {
                Value::String(command) if !command.trim().is_empty() => {
                    Some(command.trim().to_owned())
                }
                _ => {
                    diags.push("gate", "must be a non-empty command string");
                    None
                }
            };
            if matches!(acceptance, Some(value) if *value != Value::Bool(false)) {
                diags.push(
                    "gate",
                    "cannot be combined with acceptance; use one gate command or acceptance.verify",
                );
            }
            command.map(|command| {
                AcceptanceInput::Config(AcceptanceConfig {
                    level: LevelRequest::Level(Level::Verified),
                    criteria: Vec::new(),
                    evidence: Vec::new(),
                    verify: vec![VerifyCommand {
                        id: "gate".to_owned(),
                        command,
                        timeout_ms: VERIFY_TIMEOUT_MS_DEFAULT,
                        cwd: None,
                        env: BTreeMap::new(),
                        allow_failure: false,
                    }],
                    review: None,
                    stop_rules: Vec::new(),
                    reason: None,
                    requests_policy: true,
                })
            })
        }
        None => match acceptance {
            Some(value) => match parse_acceptance(value, "acceptance") {
                Ok(input) => Some(input),
                Err(more) => {
                    diags.extend(more);
                    None
                }
            },
            None => Some(AcceptanceInput::Omitted),
        },
    };
    match result {
        Some(input) if diags.is_empty() => Ok(input),
        _ => Err(diags),
    }
}

/// Validates an `acceptance` value found at `path`.
pub fn parse_acceptance(value: &Value, path: &str) -> Result<AcceptanceInput, Diagnostics> {
    match value {
        Value::Null => Ok(AcceptanceInput::Omitted),
        Value::Bool(false) => Ok(AcceptanceInput::Disabled),
        Value::String(text) => {
            let trimmed = text.trim();
            // A JSON object passed as a string is what some tool-call clients produce.
            if trimmed.starts_with('{') {
                return match serde_json::from_str::<Value>(trimmed) {
                    Ok(inner @ Value::Object(_)) => parse_acceptance(&inner, path),
                    Ok(other) => Err(Diagnostics::one(
                        path,
                        format!("a JSON string must encode an object; got {}", kind(&other)),
                    )),
                    Err(err) => Err(Diagnostics::one(
                        path,
                        format!("a JSON string must encode a valid acceptance object: {err}"),
                    )),
                };
            }
            match text.as_str() {
                "auto" => Ok(AcceptanceInput::Config(AcceptanceConfig::auto())),
                "reviewed" => Err(Diagnostics::one(path, REVIEWED_IS_NOT_A_LEVEL)),
                "none" => Err(Diagnostics::one(path, NONE_NEEDS_A_REASON)),
                "verified" => Err(Diagnostics::one(path, VERIFIED_NEEDS_COMMANDS)),
                other => match Level::parse(other) {
                    Some(level) => Ok(AcceptanceInput::Config(AcceptanceConfig {
                        level: LevelRequest::Level(level),
                        requests_policy: true,
                        ..AcceptanceConfig::auto()
                    })),
                    None => Err(Diagnostics::one(
                        path,
                        format!(
                            "has invalid level {}; use one of auto, attested, checked, or an object",
                            render_value(value)
                        ),
                    )),
                },
            }
        }
        Value::Object(object) => parse_object(object, path).map(AcceptanceInput::Config),
        other => Err(Diagnostics::one(
            path,
            format!(
                "must be a level string, false, or an object; got {}. Example: {{\"level\": \"checked\", \"evidence\": [\"commands-run\", \"changed-files\"]}}",
                kind(other)
            ),
        )),
    }
}

impl AcceptanceConfig {
    fn auto() -> AcceptanceConfig {
        AcceptanceConfig {
            level: LevelRequest::Auto,
            criteria: Vec::new(),
            evidence: Vec::new(),
            verify: Vec::new(),
            review: None,
            stop_rules: Vec::new(),
            reason: None,
            requests_policy: false,
        }
    }
}

/// Validates an `acceptance` object, field by field in a fixed order (so its diagnostics come
/// in that order), then the rules that tie fields together.
fn parse_object(object: &Map<String, Value>, path: &str) -> Result<AcceptanceConfig, Diagnostics> {
    let mut diags = Diagnostics::default();
    let at = |key: &str| format!("{path}.{key}");
    refuse_unknown_keys(object, &CONFIG_KEYS, path, &mut diags);
    let level = parse_level(object.get("level"), &at("level"), &mut diags);
    let reason = optional_string(object.get("reason"), &at("reason"), &mut diags);
    if level == LevelRequest::Level(Level::None)
        && reason.as_deref().is_none_or(|r| r.trim().is_empty())
    {
        diags.push(at("reason"), "is required when level is none");
    }
    let evidence = match object.get("evidence") {
        None | Some(Value::Null) => Vec::new(),
        Some(value) => parse_evidence_list(value, &at("evidence"), &mut diags),
    };
    let criteria = optional_array(
        object.get("criteria"),
        &at("criteria"),
        &mut diags,
        parse_criteria,
    );
    let verify = optional_array(
        object.get("verify"),
        &at("verify"),
        &mut diags,
        parse_verify,
    );
    if level == LevelRequest::Level(Level::Verified)
        && verify.is_empty()
        && !diags.has_path_prefix(&at("verify"))
    {
        diags.push(at("verify"), VERIFIED_NEEDS_COMMANDS);
    }
    let review = match object.get("review") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => None,
        Some(Value::Object(review)) => parse_review(review, &at("review"), &mut diags),
        Some(other) => {
            diags.push(
                at("review"),
                format!("must be false or an object; got {}", kind(other)),
            );
            None
        }
    };
    let stop_rules = optional_array(
        object.get("stopRules"),
        &at("stopRules"),
        &mut diags,
        parse_stop_rules,
    );
    let requests_policy = level != LevelRequest::Auto || object.keys().any(|key| key != "level");
    if !diags.is_empty() {
        return Err(diags);
    }
    Ok(AcceptanceConfig {
        level,
        criteria,
        evidence,
        verify,
        review,
        stop_rules,
        reason,
        requests_policy,
    })
}

/// The `level` field: `auto` (or none) means "infer"; `reviewed` is refused with its own
/// explanation.
fn parse_level(value: Option<&Value>, path: &str, diags: &mut Diagnostics) -> LevelRequest {
    match value {
        None | Some(Value::Null) => LevelRequest::Auto,
        Some(Value::String(text)) if text == "auto" => LevelRequest::Auto,
        Some(Value::String(text)) if text == "reviewed" => {
            diags.push(path, REVIEWED_IS_NOT_A_LEVEL);
            LevelRequest::Auto
        }
        Some(value) => match value.as_str().and_then(Level::parse) {
            Some(level) => LevelRequest::Level(level),
            None => {
                diags.push(
                    path,
                    format!(
                        "must be one of auto, none, attested, checked, verified; got {}",
                        render_value(value)
                    ),
                );
                LevelRequest::Auto
            }
        },
    }
}

/// The `stopRules` items: strings.
fn parse_stop_rules(items: &[Value], path: &str, diags: &mut Diagnostics) -> Vec<String> {
    items
        .iter()
        .enumerate()
        .filter_map(|(idx, item)| match item {
            Value::String(rule) => Some(rule.clone()),
            other => {
                diags.push(
                    format!("{path}[{idx}]"),
                    format!("must be a string; got {}", kind(other)),
                );
                None
            }
        })
        .collect()
}

fn parse_evidence_list(value: &Value, path: &str, diags: &mut Diagnostics) -> Vec<EvidenceKind> {
    let supported = || {
        EvidenceKind::ALL
            .iter()
            .map(|kind| kind.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Value::Array(items) = value else {
        diags.push(
            path,
            format!(
                "must be an array; got {}. Supported evidence kinds: {}",
                kind(value),
                supported()
            ),
        );
        return Vec::new();
    };
    let mut kinds = Vec::new();
    for (idx, item) in items.iter().enumerate() {
        match item.as_str().and_then(EvidenceKind::parse) {
            Some(kind) if !kinds.contains(&kind) => kinds.push(kind),
            Some(_) => {}
            None => diags.push(
                format!("{path}[{idx}]"),
                format!(
                    "{} is not a supported evidence kind. Supported evidence kinds: {}",
                    render_value(item),
                    supported()
                ),
            ),
        }
    }
    kinds
}

fn parse_criteria(items: &[Value], path: &str, diags: &mut Diagnostics) -> Vec<Criterion> {
    let mut criteria = Vec::new();
    let mut ids = BTreeSet::new();
    for (idx, item) in items.iter().enumerate() {
        let here = format!("{path}[{idx}]");
        match item {
            Value::String(must) => {
                if must.trim().is_empty() {
                    continue;
                }
                let id = format!("criterion-{}", idx + 1);
                if !ids.insert(id.clone()) {
                    diags.push(
                        here,
                        format!("duplicates the normalised criterion id {id:?}"),
                    );
                    continue;
                }
                criteria.push(Criterion {
                    id,
                    must: must.clone(),
                    evidence: Vec::new(),
                    severity: Severity::Required,
                });
            }
            Value::Object(object) => {
                refuse_unknown_keys(object, &CRITERION_KEYS, &here, diags);
                let id = match object.get("id") {
                    Some(Value::String(id)) if !id.trim().is_empty() => {
                        let id = normalized_token(id);
                        if !ids.insert(id.clone()) {
                            diags.push(
                                format!("{here}.id"),
                                format!("duplicates the normalised criterion id {id:?}"),
                            );
                        }
                        Some(id)
                    }
                    _ => {
                        diags.push(
                            format!("{here}.id"),
                            "is required and must be a non-empty string",
                        );
                        None
                    }
                };
                let must = match object.get("must") {
                    Some(Value::String(must)) if !must.trim().is_empty() => Some(must.clone()),
                    _ => {
                        diags.push(
                            format!("{here}.must"),
                            "is required and must be a non-empty string",
                        );
                        None
                    }
                };
                let evidence = match object.get("evidence") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(value) => parse_evidence_list(value, &format!("{here}.evidence"), diags),
                };
                let severity = match object.get("severity") {
                    None | Some(Value::Null) => Severity::Required,
                    Some(Value::String(s)) if s == "required" => Severity::Required,
                    Some(Value::String(s)) if s == "recommended" => Severity::Recommended,
                    Some(other) => {
                        diags.push(
                            format!("{here}.severity"),
                            format!(
                                "must be required or recommended; got {}",
                                render_value(other)
                            ),
                        );
                        Severity::Required
                    }
                };
                if let (Some(id), Some(must)) = (id, must) {
                    criteria.push(Criterion {
                        id,
                        must,
                        evidence,
                        severity,
                    });
                }
            }
            other => diags.push(
                here,
                format!("must be a string or an object; got {}", kind(other)),
            ),
        }
    }
    criteria
}

fn parse_verify(items: &[Value], path: &str, diags: &mut Diagnostics) -> Vec<VerifyCommand> {
    let mut commands = Vec::new();
    for (idx, item) in items.iter().enumerate() {
        let here = format!("{path}[{idx}]");
        let Value::Object(object) = item else {
            diags.push(here, format!("must be an object; got {}", kind(item)));
            continue;
        };
        commands.extend(parse_verify_command(object, &here, diags));
    }
    commands
}

/// One verify command at `here`; `None` when any of its fields is refused.
fn parse_verify_command(
    object: &Map<String, Value>,
    here: &str,
    diags: &mut Diagnostics,
) -> Option<VerifyCommand> {
    let before = diags.len();
    refuse_unknown_keys(object, &VERIFY_KEYS, here, diags);
    let id = non_empty_string(object.get("id"), &format!("{here}.id"), diags);
    let command = non_empty_string(object.get("command"), &format!("{here}.command"), diags);
    let timeout_ms = parse_timeout(object.get("timeoutMs"), &format!("{here}.timeoutMs"), diags);
    let cwd = optional_string(object.get("cwd"), &format!("{here}.cwd"), diags);
    let env = parse_env(object.get("env"), &format!("{here}.env"), diags);
    let allow_failure = optional_bool(
        object.get("allowFailure"),
        false,
        &format!("{here}.allowFailure"),
        diags,
    );
    if diags.len() != before {
        return None;
    }
    Some(VerifyCommand {
        id: id?,
        command: command?,
        timeout_ms,
        cwd,
        env,
        allow_failure,
    })
}

/// A verify command's `timeoutMs`: from 1 ms to a day, the default when absent.
fn parse_timeout(value: Option<&Value>, path: &str, diags: &mut Diagnostics) -> u64 {
    match value {
        None | Some(Value::Null) => VERIFY_TIMEOUT_MS_DEFAULT,
        Some(value) => match value.as_u64() {
            Some(ms) if (1..=VERIFY_TIMEOUT_MS_LIMIT).contains(&ms) => ms,
            _ => {
                diags.push(
                    path,
                    format!(
                        "must be an integer from 1 to {VERIFY_TIMEOUT_MS_LIMIT}; got {}",
                        render_value(value)
                    ),
                );
                VERIFY_TIMEOUT_MS_DEFAULT
            }
        },
    }
}

/// A verify command's `env`: an object of variables a process environment can hold.
fn parse_env(
    value: Option<&Value>,
    path: &str,
    diags: &mut Diagnostics,
) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    match value {
        None | Some(Value::Null) => {}
        Some(Value::Object(vars)) => {
            for (name, value) in vars {
                match value {
                    Value::String(value)
                        if !name.is_empty()
                            && !name.contains(['=', '\0'])
                            && !value.contains('\0') =>
                    {
                        env.insert(name.clone(), value.clone());
                    }
                    Value::String(_) => diags.push(
                        format!("{path}.{name}"),
                        "is not a valid environment variable",
                    ),
                    other => diags.push(
                        format!("{path}.{name}"),
                        format!("must be a string; got {}", kind(other)),
                    ),
                }
            }
        }
        Some(other) => diags.push(path, format!("must be an object; got {}", kind(other))),
    }
    env
}

fn parse_review(
    object: &Map<String, Value>,
    path: &str,
    diags: &mut Diagnostics,
) -> Option<Review> {
    refuse_unknown_keys(object, &REVIEW_KEYS, path, diags);
    let agent = optional_string(object.get("agent"), &format!("{path}.agent"), diags);
    let focus = optional_string(object.get("focus"), &format!("{path}.focus"), diags);
    let required = optional_bool(
        object.get("required"),
        true,
        &format!("{path}.required"),
        diags,
    );
    Some(Review {
        agent,
        focus,
        required,
    })
}

/// Refuses every key of the object at `path` that is not among `allowed`.
fn refuse_unknown_keys(
    object: &Map<String, Value>,
    allowed: &[&str],
    path: &str,
    diags: &mut Diagnostics,
) {
    for key in object.keys() {
        if !allowed.contains(&key.as_str()) {
            diags.push(
                format!("{path}.{key}"),
                format!("is not supported (allowed: {})", allowed.join(", ")),
            );
        }
    }
}

/// An optional array field: its items parsed by `items`, nothing when absent or null.
fn optional_array<T>(
    value: Option<&Value>,
    path: &str,
    diags: &mut Diagnostics,
    items: impl FnOnce(&[Value], &str, &mut Diagnostics) -> Vec<T>,
) -> Vec<T> {
    match value {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(values)) => items(values, path, diags),
        Some(other) => {
            diags.push(path, format!("must be an array; got {}", kind(other)));
            Vec::new()
        }
    }
}

/// An optional string field, kept as given.
fn optional_string(value: Option<&Value>, path: &str, diags: &mut Diagnostics) -> Option<String> {
    match value {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            diags.push(path, format!("must be a string; got {}", kind(other)));
            None
        }
    }
}

/// An optional boolean field, `default` when absent, null or refused.
fn optional_bool(
    value: Option<&Value>,
    default: bool,
    path: &str,
    diags: &mut Diagnostics,
) -> bool {
    match value {
        None | Some(Value::Null) => default,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            diags.push(path, format!("must be a boolean; got {}", kind(other)));
            default
        }
    }
}
fn non_empty_string(value: Option<&Value>, path: &str, diags: &mut Diagnostics) -> Option<String> {
    match value {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        _ => {
            diags.push(path, "is required and must be a non-empty string");
            None
        }
    }
}

/// What a run is, for acceptance inference (docs/tools.md, "Acceptance gates", the level).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// A task that does not change files (a reviewer, a scout, a read-only tool set).
    ReadOnly,
    /// An ordinary writer task.
    Writer,
    /// A writer whose work is handed off unseen: herd's risky context, a managed worktree.
    RiskyWriter,
}

/// The level and review a context infers: read-only tasks lightweight attestation, writers
/// checked evidence, risky writers checked evidence plus a required review by `reviewer`.
pub fn infer(context: Context) -> (Level, Option<Review>) {
    match context {
        Context::ReadOnly => (Level::Attested, None),
        Context::Writer => (Level::Checked, None),
        Context::RiskyWriter => (
            Level::Checked,
            Some(Review {
                agent: Some("reviewer".to_owned()),
                focus: None,
                required: true,
            }),
        ),
    }
}

/// [`resolve`] with the inferred review: a gate the caller left to inference (omitted, or `auto`
/// without a review of its own) takes the review `context` infers.
pub fn resolve_inferred(input: &AcceptanceInput, context: Context) -> Gate {
    let (level, review) = infer(context);
    let mut gate = resolve(input, level);
    let inferred = match input {
        AcceptanceInput::Omitted => true,
        AcceptanceInput::Disabled => false,
        AcceptanceInput::Config(config) => {
            config.level == LevelRequest::Auto && config.review.is_none()
        }
    };
    if inferred && gate.level != Level::None {
        gate.review = review;
    }
    gate
}

/// Resolves the effective gate from what the caller gave and the level it inferred.
///
/// An explicit level can raise the inferred one but never lower it; only `{level: "none",
/// reason}` (or the deprecated `false`) turns gates off; an inferred `none` becomes `attested`
/// as soon as the caller asks for any policy.
pub fn resolve(input: &AcceptanceInput, inferred: Level) -> Gate {
    let off = |reason: &str, explicit: bool| Gate {
        level: Level::None,
        explicit,
        inferred_level: inferred,
        criteria: Vec::new(),
        evidence: Vec::new(),
        verify: Vec::new(),
        review: None,
        stop_rules: Vec::new(),
        reason: Some(reason.to_owned()),
    };
    let config = match input {
        AcceptanceInput::Omitted => {
            return Gate {
                level: inferred,
                explicit: false,
                inferred_level: inferred,
                criteria: Vec::new(),
                evidence: default_evidence(inferred).to_vec(),
                verify: Vec::new(),
                review: None,
                stop_rules: Vec::new(),
                reason: None,
            };
        }
        AcceptanceInput::Disabled => {
            return off("disabled by the deprecated `false` shorthand", true);
        }
        AcceptanceInput::Config(config) => config,
    };
    if config.level == LevelRequest::Level(Level::None) {
        return off(config.reason.as_deref().unwrap_or_default(), true);
    }
    let floor = if inferred == Level::None && config.requests_policy {
        Level::Attested
    } else {
        inferred
    };
    let level = match config.level {
        LevelRequest::Auto => floor,
        LevelRequest::Level(level) => level.max(floor),
    };
    let mut evidence = default_evidence(level).to_vec();
    for kind in &config.evidence {
        if !evidence.contains(kind) {
            evidence.push(*kind);
        }
    }
    Gate {
        level,
        explicit: config.requests_policy,
        inferred_level: inferred,
        criteria: config.criteria.clone(),
        evidence: if level == Level::None {
            Vec::new()
        } else {
            evidence
        },
        verify: config.verify.clone(),
        review: config.review.clone(),
        stop_rules: config.stop_rules.clone(),
        reason: config.reason.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors(value: Value) -> Vec<String> {
        parse_input(&value)
            .unwrap_err()
            .0
            .into_iter()
            .map(|d| d.to_string())
            .collect()
    }

    fn gate(value: Value, inferred: Level) -> Gate {
        resolve(&parse_input(&value).unwrap(), inferred)
    }

    #[test]
    fn the_seeds_invalid_forms_are_refused_with_an_explanation() {
        let cases: [(Value, &str); 10] = [
            (
                json!("none"),
                "acceptance: level \"none\" requires a reason",
            ),
            (json!("reviewed"), "acceptance: \"reviewed\" is a status"),
            (
                json!({"level": "reviewed"}),
                "acceptance.level: \"reviewed\" is a status",
            ),
            (
                json!("verified"),
                "acceptance: level \"verified\" needs at least one host verify command",
            ),
            (
                json!({"level": "verified"}),
                "acceptance.verify: level \"verified\" needs",
            ),
            (
                json!({"gate": "npm test", "acceptance": {"level": "checked"}}),
                "gate: cannot be combined with acceptance",
            ),
            (
                json!({"level": "checked", "color": "red"}),
                "acceptance.color: is not supported",
            ),
            (
                json!({"level": "none"}),
                "acceptance.reason: is required when level is none",
            ),
            (
                json!({"level": "none", "reason": "  "}),
                "acceptance.reason: is required when level is none",
            ),
            (
                json!(true),
                "acceptance: must be a level string, false, or an object",
            ),
        ];
        for (value, want) in cases {
            let got = errors(value.clone());
            assert!(got.iter().any(|e| e.starts_with(want)), "{value}: {got:?}");
        }
    }

    #[test]
    fn nested_fields_are_checked_with_paths() {
        let got = errors(json!({
            "level": "checked",
            "criteria": ["ok", {"id": "A b", "must": "x", "weight": 1}, {"id": "a_b", "must": "y"}, {"must": ""}, 3],
            "evidence": ["changed-files", "screenshots"],
            "verify": [{"id": "t", "command": "true", "timeoutMs": 0, "env": {"A": 1}, "allowFailure": "no", "shell": "bash"}],
            "review": {"agent": 1, "extra": true},
            "stopRules": ["a", 2],
        }));
        let want = [
            "acceptance.criteria[1].weight: is not supported",
            "acceptance.criteria[2].id: duplicates the normalised criterion id \"a-b\"",
            "acceptance.criteria[3].id: is required",
            "acceptance.criteria[3].must: is required",
            "acceptance.criteria[4]: must be a string or an object",
            "acceptance.evidence[1]: \"screenshots\" is not a supported evidence kind",
            "acceptance.verify[0].shell: is not supported",
            "acceptance.verify[0].timeoutMs: must be an integer from 1",
            "acceptance.verify[0].env.A: must be a string",
            "acceptance.verify[0].allowFailure: must be a boolean",
            "acceptance.review.extra: is not supported",
            "acceptance.review.agent: must be a string",
            "acceptance.stopRules[1]: must be a string",
        ];
        for want in want {
            assert!(
                got.iter().any(|e| e.starts_with(want)),
                "missing {want:?} in {got:#?}"
            );
        }
        assert_eq!(got.len(), want.len(), "{got:#?}");
    }

    #[test]
    fn task_item_keys_beside_gate_are_refused() {
        let got = errors(json!({"gate": "npm test", "level": "checked"}));
        assert_eq!(
            got,
            ["level: is not supported beside \"acceptance\" and \"gate\""]
        );
        let got = errors(json!({"gate": "  "}));
        assert_eq!(got, ["gate: must be a non-empty command string"]);
        // `gate` with `acceptance: false` is allowed: false only says "no explicit policy".
        let g = gate(
            json!({"gate": "npm test", "acceptance": false}),
            Level::Attested,
        );
        assert_eq!(g.level, Level::Verified);
    }

    #[test]
    fn gate_normalises_to_verified_with_one_command() {
        let g = gate(json!({"gate": " npm test "}), Level::Attested);
        assert_eq!(g.level, Level::Verified);
        assert!(g.explicit);
        assert_eq!(g.verify.len(), 1);
        assert_eq!(
            (
                g.verify[0].id.as_str(),
                g.verify[0].command.as_str(),
                g.verify[0].timeout_ms
            ),
            ("gate", "npm test", 120_000)
        );
        assert_eq!(g.evidence, default_evidence(Level::Verified));
    }

    #[test]
    fn explicit_levels_raise_but_never_lower() {
        assert_eq!(
            gate(json!("attested"), Level::Checked).level,
            Level::Checked
        );
        assert_eq!(
            gate(json!({"level": "checked"}), Level::Attested).level,
            Level::Checked
        );
        assert_eq!(gate(json!("auto"), Level::Checked).level, Level::Checked);
        // An inferred none becomes attested once any policy is asked for.
        assert_eq!(
            gate(json!({"criteria": ["x"]}), Level::None).level,
            Level::Attested
        );
        assert_eq!(gate(json!("auto"), Level::None).level, Level::None);
        let off = gate(
            json!({"level": "none", "reason": "docs only"}),
            Level::Checked,
        );
        assert_eq!(
            (off.level, off.reason.as_deref()),
            (Level::None, Some("docs only"))
        );
        assert!(off.evidence.is_empty());
        assert_eq!(gate(json!(false), Level::Checked).level, Level::None);
        assert_eq!(
            resolve(&AcceptanceInput::Omitted, Level::Checked).evidence,
            default_evidence(Level::Checked)
        );
    }

    #[test]
    fn evidence_is_the_levels_default_plus_the_callers() {
        let g = gate(
            json!({"level": "attested", "evidence": ["diff-summary", "residual-risks"]}),
            Level::None,
        );
        assert_eq!(
            g.evidence,
            [
                EvidenceKind::ManualNotes,
                EvidenceKind::ResidualRisks,
                EvidenceKind::DiffSummary
            ]
        );
    }

    #[test]
    fn a_json_string_is_parsed_as_an_object() {
        let g = gate(json!("{\"level\": \"checked\"}"), Level::Attested);
        assert_eq!(g.level, Level::Checked);
        let got = errors(json!("{\"level\": "));
        assert!(
            got[0].starts_with("acceptance: a JSON string must encode a valid acceptance object"),
            "{got:?}"
        );
    }

    #[test]
    fn string_criteria_get_positional_ids() {
        let g = gate(
            json!({"criteria": ["first", "", {"id": "Keep Scope", "must": "no extras", "severity": "recommended"}]}),
            Level::Attested,
        );
        let ids: Vec<_> = g
            .criteria
            .iter()
            .map(|c| (c.id.as_str(), c.severity))
            .collect();
        assert_eq!(
            ids,
            [
                ("criterion-1", Severity::Required),
                ("keep-scope", Severity::Recommended)
            ]
        );
    }

    #[test]
    fn the_inferred_level_flag_explains_reviewed() {
        assert_eq!(parse_inferred_level("auto").unwrap(), Level::Attested);
        assert_eq!(parse_inferred_level("checked").unwrap(), Level::Checked);
        let err = parse_inferred_level("reviewed").unwrap_err();
        assert!(err.0[0].message.contains("is a status a run reaches"));
        assert!(parse_inferred_level("strict").is_err());
    }
}
