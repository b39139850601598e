//! What the scripted model answers: per model, a list of steps chosen by how many assistant
//! messages the request already holds.
//!
//! Choosing by that count keeps the server stateless: a retried request gets the same answer,
//! and any number of children can share one server.

use std::fmt;
use std::time::Duration;

use serde_json::{Value, json};

/// The model id used when a test scripts a single model.
pub const DEFAULT_MODEL: &str = "fake-model";

/// One answer of the model.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Calls these tools (finish reason `tool_calls`); Pi runs them and asks again.
    ToolCalls(Vec<ToolCall>),
    /// Says this text and calls these tools in the same message: a child's report followed by
    /// `subagent_done`, whose session then ends on the tool call, not on a text answer.
    TextAndCalls(String, Vec<ToolCall>),
    /// Answers with this text (finish reason `stop`); the agent's turn ends.
    Text(String),
    /// Fails the request with this HTTP status and an OpenAI-style error body.
    Error {
        /// The HTTP status, e.g. 500 (retried when retries are on) or 400 (never retried).
        status: u16,
        /// The error message; Pi reports it as `<status> <message>`.
        message: String,
    },
    /// Starts a text answer and then sends nothing more for this long (or until the server
    /// stops), then drops the connection: a turn that is still running when a test acts on it.
    Stall(Duration),
}

/// One tool call of a [`Step::ToolCalls`] step.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The tool name, e.g. `bash` or `subagent_done`.
    pub name: String,
    /// The arguments object; sent to Pi as a JSON string, split across two stream chunks.
    pub arguments: Value,
}

impl ToolCall {
    /// Returns a call of the tool `name` with `arguments`.
    pub fn new(name: impl Into<String>, arguments: Value) -> ToolCall {
        ToolCall {
            name: name.into(),
            arguments,
        }
    }

    /// Returns a call of Pi's built-in `bash` tool running `command`.
    pub fn bash(command: impl Into<String>) -> ToolCall {
        ToolCall::new("bash", json!({ "command": command.into() }))
    }

    /// Returns this call with every argument that is exactly [`REPORTED_SESSION`] replaced by
    /// the session path the request's last user message reports on a `Session: <path>` host
    /// line (what a parent answering a help request resumes). Without such a line the
    /// placeholder stays, and the tool call fails as it would for a model that guessed.
    pub fn resolved(&self, request: &Value) -> ToolCall {
        let Some(session) = reported_session(request) else {
            return self.clone();
        };
        let mut arguments = self.arguments.clone();
        if let Some(map) = arguments.as_object_mut() {
            for value in map.values_mut() {
                if value.as_str() == Some(REPORTED_SESSION) {
                    *value = Value::String(session.clone());
                }
            }
        }
        ToolCall {
            name: self.name.clone(),
            arguments,
        }
    }
}

/// The argument placeholder [`ToolCall::resolved`] fills in with a reported session path.
pub const REPORTED_SESSION: &str = "{{reported session}}";

fn reported_session(request: &Value) -> Option<String> {
    let last = crate::model::request::user_texts(request).pop()?;
    let line = last
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("Session: "))?;
    let path = line.split(" · ").next()?.trim();
    (!path.is_empty()).then(|| path.to_owned())
}

impl From<ToolCall> for Step {
    fn from(call: ToolCall) -> Step {
        Step::ToolCalls(vec![call])
    }
}

/// A text answer, for [`Script::step`]: `Text("DONE")`.
#[derive(Clone, Debug)]
pub struct Text<S>(pub S);

impl<S: Into<String>> From<Text<S>> for Step {
    fn from(Text(text): Text<S>) -> Step {
        Step::Text(text.into())
    }
}

/// A failed request, for [`Script::step`]: `Fail(500, "scripted failure")`.
#[derive(Clone, Debug)]
pub struct Fail<S>(pub u16, pub S);

impl<S: Into<String>> From<Fail<S>> for Step {
    fn from(Fail(status, message): Fail<S>) -> Step {
        Step::Error {
            status,
            message: message.into(),
        }
    }
}

/// A text answer that also calls a tool, for [`Script::step`]:
/// `Said("report", ToolCall::new("subagent_done", json!({})))`.
#[derive(Clone, Debug)]
pub struct Said<S>(pub S, pub ToolCall);

impl<S: Into<String>> From<Said<S>> for Step {
    fn from(Said(text, call): Said<S>) -> Step {
        Step::TextAndCalls(text.into(), vec![call])
    }
}

/// A stalled answer, for [`Script::step`]: `Stall(Duration::from_secs(60))`.
#[derive(Clone, Copy, Debug)]
pub struct Stall(pub Duration);

impl From<Stall> for Step {
    fn from(Stall(duration): Stall) -> Step {
        Step::Stall(duration)
    }
}

/// The answers of one model, in order: step `n` answers a request that already holds `n`
/// assistant messages.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Script {
    steps: Vec<Step>,
}

impl Script {
    /// Returns an empty script.
    pub fn new() -> Script {
        Script::default()
    }

    /// Returns the script with `step` appended.
    #[must_use]
    pub fn step(mut self, step: impl Into<Step>) -> Script {
        self.steps.push(step.into());
        self
    }

    /// A parent that delegates: it searches for herd's tools, calls `subagent` with `request`,
    /// says it waits, and answers the child's report with `Integrated the report.`
    pub fn delegating(request: Value) -> Script {
        Script::new()
            .step(ToolCall::new(
                "tool_search",
                serde_json::json!({"query": "subagent"}),
            ))
            .step(ToolCall::new("subagent", request))
            .step(Text("Launched; waiting."))
            .step(Text("Integrated the report."))
    }

    /// Returns the steps in order.
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// Parses a script from its JSON form, an array of steps:
    /// `{"tool_calls":[{"name":..,"arguments":{..}}]}`, `{"text":..}`, both together,
    /// `{"error":500,"message":..}` or `{"stall_ms":N}`.
    ///
    /// # Errors
    ///
    /// When the value is not an array of such steps, naming the step and the field.
    pub fn from_json(value: &Value) -> Result<Script, ScriptError> {
        let items = value
            .as_array()
            .ok_or_else(|| ScriptError::new("script", "expected an array of steps"))?;
        let steps = items
            .iter()
            .enumerate()
            .map(|(idx, item)| parse_step(idx, item))
            .collect::<Result<_, _>>()?;
        Ok(Script { steps })
    }

    /// Returns the JSON form that [`Script::from_json`] reads.
    pub fn to_json(&self) -> Value {
        Value::Array(self.steps.iter().map(step_to_json).collect())
    }
}

/// The scripts of every model the server serves, in order; the first is the default model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Models {
    models: Vec<(String, Script)>,
    /// The price Pi's models.json gives a model (its `cost`), for those that have one.
    prices: Vec<(String, Value)>,
    /// The usage a model reports for every answer, for those that report their own.
    usages: Vec<(String, Usage)>,
}

/// The token counts a scripted model reports in the usage record of an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Usage {
    /// `prompt_tokens`, the cached ones included.
    pub prompt: u64,
    pub completion: u64,
    /// `prompt_tokens_details.cached_tokens`.
    pub cached: u64,
}

impl Usage {
    /// What every answer reports unless its model has a usage of its own.
    pub const DEFAULT: Usage = Usage {
        prompt: 10,
        completion: 5,
        cached: 0,
    };

    /// The usage record of a streamed answer.
    pub fn to_json(self) -> Value {
        let mut usage = json!({
            "prompt_tokens": self.prompt,
            "completion_tokens": self.completion,
            "total_tokens": self.prompt + self.completion,
        });
        if self.cached > 0 {
            usage["prompt_tokens_details"] = json!({ "cached_tokens": self.cached });
        }
        usage
    }
}

impl Models {
    /// Returns a set with no models.
    pub fn new() -> Models {
        Models::default()
    }

    /// Returns the set with model `id` answering with `script` (replacing an earlier script).
    #[must_use]
    pub fn model(mut self, id: impl Into<String>, script: Script) -> Models {
        let id = id.into();
        match self.models.iter_mut().find(|(known, _)| *known == id) {
            Some(entry) => entry.1 = script,
            None => self.models.push((id, script)),
        }
        self
    }

    /// Returns the set with model `id` priced as `cost` in Pi's models.json: dollars per
    /// million tokens, `{"input", "output", "cacheRead", "cacheWrite"}`. A model without a price
    /// is one Pi records a zero cost for.
    #[must_use]
    pub fn priced(mut self, id: impl Into<String>, cost: Value) -> Models {
        let id = id.into();
        self.prices.retain(|(known, _)| *known != id);
        self.prices.push((id, cost));
        self
    }

    /// Returns the price of model `id`, when it has one.
    pub fn price(&self, id: &str) -> Option<&Value> {
        self.prices
            .iter()
            .find(|(known, _)| known == id)
            .map(|(_, cost)| cost)
    }

    /// Returns the set with model `id` reporting `usage` for every answer.
    #[must_use]
    pub fn reporting(mut self, id: impl Into<String>, usage: Usage) -> Models {
        let id = id.into();
        self.usages.retain(|(known, _)| *known != id);
        self.usages.push((id, usage));
        self
    }

    /// Returns the usage model `id` reports for an answer.
    pub fn usage(&self, id: &str) -> Usage {
        self.usages
            .iter()
            .find(|(known, _)| known == id)
            .map_or(Usage::DEFAULT, |(_, usage)| *usage)
    }

    /// Returns the model ids in order.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.models.iter().map(|(id, _)| id.as_str())
    }

    /// Returns the script of model `id`.
    pub fn script(&self, id: &str) -> Option<&Script> {
        self.models
            .iter()
            .find(|(known, _)| known == id)
            .map(|(_, script)| script)
    }

    /// Parses the JSON form: either an array of steps (one model, [`DEFAULT_MODEL`]) or
    /// `{"models": {"<id>": [steps], ...}}`.
    ///
    /// # Errors
    ///
    /// When the value has neither form, or a script is invalid.
    pub fn from_json(value: &Value) -> Result<Models, ScriptError> {
        if value.is_array() {
            return Ok(Models::new().model(DEFAULT_MODEL, Script::from_json(value)?));
        }
        let map = value
            .get("models")
            .and_then(Value::as_object)
            .ok_or_else(|| {
                ScriptError::new(
                    "models",
                    "expected an array of steps or {\"models\": {id: [steps]}}",
                )
            })?;
        let mut models = Models::new();
        for (id, script) in map {
            let script =
                Script::from_json(script).map_err(|err| err.within(&format!("models.{id}")))?;
            models = models.model(id.clone(), script);
        }
        if models.models.is_empty() {
            return Err(ScriptError::new("models", "no model is scripted"));
        }
        Ok(models)
    }

    /// Returns the JSON form that [`Models::from_json`] reads.
    pub fn to_json(&self) -> Value {
        let map = self
            .models
            .iter()
            .map(|(id, script)| (id.clone(), script.to_json()))
            .collect();
        json!({ "models": Value::Object(map) })
    }
}

impl From<Script> for Models {
    fn from(script: Script) -> Models {
        Models::new().model(DEFAULT_MODEL, script)
    }
}

/// A script that cannot be read: where, and what was wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptError {
    /// The place in the script, e.g. `models.a[2].tool_calls[0].name`.
    pub field: String,
    /// What was wrong there.
    pub message: String,
}

impl ScriptError {
    fn new(field: &str, message: &str) -> ScriptError {
        ScriptError {
            field: field.to_owned(),
            message: message.to_owned(),
        }
    }

    fn within(mut self, prefix: &str) -> ScriptError {
        self.field = match self.field.strip_prefix("script") {
            Some(rest) => format!("{prefix}{rest}"),
            None => format!("{prefix}.{}", self.field),
        };
        self
    }
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid script at {}: {}", self.field, self.message)
    }
}

impl std::error::Error for ScriptError {}

fn parse_step(idx: usize, item: &Value) -> Result<Step, ScriptError> {
    let at = |field: &str| {
        if field.is_empty() {
            format!("script[{idx}]")
        } else {
            format!("script[{idx}].{field}")
        }
    };
    let fail = |field: &str, message: &str| ScriptError {
        field: at(field),
        message: message.to_owned(),
    };
    let obj = item
        .as_object()
        .ok_or_else(|| fail("", "expected an object"))?;
    let kinds = ["tool_calls", "text", "error", "stall_ms"];
    let present: Vec<&str> = kinds.into_iter().filter(|k| obj.contains_key(*k)).collect();
    let kind = match present.as_slice() {
        [kind] => *kind,
        // Text that also calls tools: one message with both.
        ["tool_calls", "text"] => "text+tool_calls",
        _ => {
            return Err(fail(
                "",
                "expected exactly one of tool_calls, text, error, stall_ms (or text with tool_calls)",
            ));
        }
    };
    match kind {
        "tool_calls" | "text+tool_calls" => {
            let calls = obj["tool_calls"]
                .as_array()
                .ok_or_else(|| fail("tool_calls", "expected an array"))?;
            if calls.is_empty() {
                return Err(fail("tool_calls", "expected at least one call"));
            }
            let calls = calls
                .iter()
                .enumerate()
                .map(|(n, call)| {
                    let name = call
                        .get("name")
                        .and_then(Value::as_str)
                        .filter(|name| !name.is_empty())
                        .ok_or_else(|| {
                            fail(
                                &format!("tool_calls[{n}].name"),
                                "expected a non-empty string",
                            )
                        })?;
                    let arguments = match call.get("arguments") {
                        None => json!({}),
                        Some(Value::String(text)) => serde_json::from_str(text).map_err(|_| {
                            fail(
                                &format!("tool_calls[{n}].arguments"),
                                "expected JSON text or an object",
                            )
                        })?,
                        Some(other) => other.clone(),
                    };
                    Ok(ToolCall::new(name, arguments))
                })
                .collect::<Result<_, _>>()?;
            if kind == "tool_calls" {
                return Ok(Step::ToolCalls(calls));
            }
            let text = obj["text"]
                .as_str()
                .ok_or_else(|| fail("text", "expected a string"))?;
            Ok(Step::TextAndCalls(text.to_owned(), calls))
        }
        "text" => {
            let text = obj["text"]
                .as_str()
                .ok_or_else(|| fail("text", "expected a string"))?;
            Ok(Step::Text(text.to_owned()))
        }
        "error" => {
            let status = obj["error"]
                .as_u64()
                .and_then(|s| u16::try_from(s).ok())
                .filter(|s| (400..600).contains(s))
                .ok_or_else(|| fail("error", "expected an HTTP status from 400 to 599"))?;
            let message = match obj.get("message") {
                None => "scripted failure".to_owned(),
                Some(m) => m
                    .as_str()
                    .ok_or_else(|| fail("message", "expected a string"))?
                    .to_owned(),
            };
            Ok(Step::Error { status, message })
        }
        _ => {
            let ms = obj["stall_ms"]
                .as_u64()
                .ok_or_else(|| fail("stall_ms", "expected milliseconds"))?;
            Ok(Step::Stall(Duration::from_millis(ms)))
        }
    }
}

fn step_to_json(step: &Step) -> Value {
    match step {
        Step::ToolCalls(calls) => json!({
            "tool_calls": calls.iter().map(|c| json!({"name": c.name, "arguments": c.arguments})).collect::<Vec<_>>()
        }),
        Step::TextAndCalls(text, calls) => json!({
            "text": text,
            "tool_calls": calls.iter().map(|c| json!({"name": c.name, "arguments": c.arguments})).collect::<Vec<_>>()
        }),
        Step::Text(text) => json!({ "text": text }),
        Step::Error { status, message } => json!({ "error": status, "message": message }),
        Step::Stall(duration) => {
            json!({ "stall_ms": u64::try_from(duration.as_millis()).unwrap_or(u64::MAX) })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_json_form_round_trips() {
        let models = Models::new()
            .model(
                "a",
                Script::new()
                    .step(ToolCall::bash("echo hi > out.txt"))
                    .step(Fail(500, "down"))
                    .step(Stall(Duration::from_millis(1500)))
                    .step(Said("report", ToolCall::new("subagent_done", json!({})))),
            )
            .model("b", Script::new().step(Text("DONE")));
        assert_eq!(Models::from_json(&models.to_json()), Ok(models));
    }

    #[test]
    fn a_bare_array_scripts_the_default_model() {
        let models = Models::from_json(&json!([{"text": "hi"}])).unwrap();
        assert_eq!(models.ids().collect::<Vec<_>>(), [DEFAULT_MODEL]);
        assert_eq!(
            models.script(DEFAULT_MODEL).unwrap().steps(),
            [Step::Text("hi".into())]
        );
    }

    #[test]
    fn arguments_may_be_json_text() {
        let script = Script::from_json(
            &json!([{"tool_calls": [{"name": "bash", "arguments": "{\"command\":\"ls\"}"}]}]),
        );
        assert_eq!(script, Ok(Script::new().step(ToolCall::bash("ls"))));
    }

    #[test]
    fn bad_steps_name_the_field() {
        let check = |value: Value, field: &str| {
            let err = Models::from_json(&value).unwrap_err();
            assert_eq!(err.field, field, "{err}");
        };
        check(
            json!({"models": {"a": [{"text": "x"}, {"tool_calls": [{"arguments": {}}]}]}}),
            "models.a[1].tool_calls[0].name",
        );
        check(json!([{"text": 1}]), "script[0].text");
        check(json!([{"text": "a", "error": 500}]), "script[0]");
        check(json!([{"error": 200}]), "script[0].error");
        check(json!({"models": {}}), "models");
        check(json!("steps"), "models");
    }

    #[test]
    fn a_reported_session_fills_the_placeholder_and_nothing_else() {
        let call = ToolCall::new(
            "subagent_resume",
            json!({"sessionPath": REPORTED_SESSION, "message": REPORTED_SESSION.to_owned() + "!"}),
        );
        let request = json!({"messages": [
            {"role": "user", "content": "Sub-agent asks.\nSession: /s/child.jsonl · Resume: subagent_resume\nParent action: x"},
        ]});
        let resolved = call.resolved(&request);
        assert_eq!(resolved.arguments["sessionPath"], "/s/child.jsonl");
        assert_eq!(
            resolved.arguments["message"],
            format!("{REPORTED_SESSION}!")
        );
        assert_eq!(call.resolved(&json!({"messages": []})), call);
    }
}
