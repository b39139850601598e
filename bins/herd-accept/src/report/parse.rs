//! Finding and reading the `acceptance-report` a child wrote at the end of its output
//! (docs/tools.md, "Acceptance gates").
//!
//! Children are models: they get the fence tag's case wrong, use snake_case, wrap the report in
//! one more object, write `"true"` for `true`. Those slips are forgiven by fixed rules; anything
//! else — an unknown key, an ambiguous wrapper, an unknown enum value — fails with a diagnostic
//! naming the field, so the child (or the parent) can see exactly what to fix.
//!
//! Where the report is looked for, in order; the first source that has one decides:
//! 1. fences tagged `acceptance-report` (any case, `_` for `-`), including an unterminated one
//!    running to the end of the output. When several are present the last that is valid wins,
//!    because a child may quote an example before its real report. When such fences exist and
//!    none is valid, that is the answer: weaker sources are not consulted.
//! 2. generic `json`/`jsonc`/`json5` fences, only when one looks like a report
//!    (`criteriaSatisfied` plus one more report key); the last such fence is the report;
//! 3. an `ACCEPTANCE_REPORT:` marker followed by a JSON object (the last marker).

use herd_protocol::accept::{
    AcceptanceReport, CommandReport, CommandResult, CriterionReport, CriterionStatus, ReportSource,
};
use serde_json::{Map, Value};

use super::{Diagnostics, normalized_token, render_value};

/// The outcome of looking for a report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    Report {
        report: Box<AcceptanceReport>,
        source: ReportSource,
    },
    /// A report was there but could not be read; the diagnostics say why.
    Invalid {
        diagnostics: Diagnostics,
        source: ReportSource,
    },
    NotFound,
}

const WRAPPERS: [&str; 4] = [
    "acceptance",
    "acceptance-report",
    "acceptance_report",
    "acceptanceReport",
];
const MARKER: &str = "ACCEPTANCE_REPORT:";

/// The report fields, each with its snake_case spelling.
const FIELDS: [(&str, &str); 12] = [
    ("criteriaSatisfied", "criteria_satisfied"),
    ("changedFiles", "changed_files"),
    ("testsAddedOrUpdated", "tests_added_or_updated"),
    ("commandsRun", "commands_run"),
    ("validationOutput", "validation_output"),
    ("residualRisks", "residual_risks"),
    ("noStagedFiles", "no_staged_files"),
    ("diffSummary", "diff_summary"),
    ("reviewFindings", "review_findings"),
    ("blockers", "blockers"),
    ("manualNotes", "manual_notes"),
    ("notes", "notes"),
];

/// Looks for the acceptance report in a child's output.
pub fn find_report(output: &str) -> Found {
    let fences = scan_fences(output);
    let tagged: Vec<&Fence<'_>> = fences.iter().filter(|f| is_report_tag(f.tag)).collect();
    if !tagged.is_empty() {
        let mut last_invalid = None;
        for fence in tagged.iter().rev() {
            let source = if fence.terminated {
                ReportSource::AcceptanceFence
            } else {
                ReportSource::UnterminatedFence
            };
            match parse_json_lenient(fence.body)
                .map_err(|message| Diagnostics::one("acceptance-report", message))
                .and_then(|v| normalise(&v))
            {
                Ok(report) => {
                    return Found::Report {
                        report: Box::new(report),
                        source,
                    };
                }
                Err(diagnostics) => {
                    last_invalid.get_or_insert((diagnostics, source));
                }
            }
        }
        if let Some((diagnostics, source)) = last_invalid {
            return Found::Invalid {
                diagnostics,
                source,
            };
        }
    }
    let generic = fences
        .iter()
        .rev()
        .filter(|f| {
            matches!(
                f.tag.to_ascii_lowercase().as_str(),
                "json" | "jsonc" | "json5"
            )
        })
        .filter_map(|f| parse_json_lenient(f.body).ok())
        .find(looks_like_report);
    if let Some(value) = generic {
        return match normalise(&value) {
            Ok(report) => Found::Report {
                report: Box::new(report),
                source: ReportSource::JsonFence,
            },
            Err(diagnostics) => Found::Invalid {
                diagnostics,
                source: ReportSource::JsonFence,
            },
        };
    }
    if let Some(pos) = output.rfind(MARKER) {
        let rest = &output[pos + MARKER.len()..];
        let trimmed = rest.trim_start();
        let parsed = if trimmed.starts_with('{') {
            balanced_object(trimmed)
                .ok_or_else(|| "the JSON object after ACCEPTANCE_REPORT: is not closed".to_owned())
                .and_then(|text| {
                    serde_json::from_str::<Value>(text)
                        .map_err(|err| format!("not valid JSON: {err}"))
                })
        } else {
            Err("ACCEPTANCE_REPORT: is not followed by a JSON object".to_owned())
        };
        return match parsed
            .map_err(|message| Diagnostics::one("acceptance-report", message))
            .and_then(|v| normalise(&v))
        {
            Ok(report) => Found::Report {
                report: Box::new(report),
                source: ReportSource::Marker,
            },
            Err(diagnostics) => Found::Invalid {
                diagnostics,
                source: ReportSource::Marker,
            },
        };
    }
    Found::NotFound
}

/// Returns `output` without its trailing acceptance report (the last report fence, or an
/// `ACCEPTANCE_REPORT:` tail): what a parent shows as the child's answer.
pub fn strip_report(output: &str) -> &str {
    let fences = scan_fences(output);
    if let Some(fence) = fences.iter().rev().find(|f| is_report_tag(f.tag)) {
        if output[fence.end..].trim().is_empty() {
            return output[..fence.start].trim_end();
        }
    }
    if let Some(pos) = output.rfind(MARKER) {
        let rest = output[pos + MARKER.len()..].trim_start();
        if let Some(object) = balanced_object(rest) {
            if rest[object.len()..].trim().is_empty() {
                return output[..pos].trim_end();
            }
        }
    }
    output
}

fn is_report_tag(tag: &str) -> bool {
    tag.to_ascii_lowercase().replace('_', "-") == "acceptance-report"
}

fn looks_like_report(value: &Value) -> bool {
    let Some(object) = value.as_object() else {
        return false;
    };
    let object = match unwrap_single(object) {
        Some(Value::Object(inner)) => inner,
        _ => object,
    };
    let is_field = |key: &str| {
        FIELDS
            .iter()
            .any(|(camel, snake)| key == *camel || key == *snake)
    };
    let has_criteria =
        object.contains_key("criteriaSatisfied") || object.contains_key("criteria_satisfied");
    let others = object
        .keys()
        .filter(|key| !matches!(key.as_str(), "criteriaSatisfied" | "criteria_satisfied"))
        .filter(|key| is_field(key))
        .count();
    has_criteria && others >= 1
}

fn unwrap_single(object: &Map<String, Value>) -> Option<&Value> {
    if object.len() == 1 {
        let (key, value) = object.iter().next()?;
        if WRAPPERS.contains(&key.as_str()) {
            return Some(value);
        }
    }
    None
}

/// A fenced block of Markdown.
#[derive(Debug)]
struct Fence<'a> {
    tag: &'a str,
    body: &'a str,
    terminated: bool,
    /// Byte offsets of the opening line's start and just past the closing line.
    start: usize,
    end: usize,
}

/// Finds the fenced blocks of `text`: an opening line of three or more backticks or tildes
/// (indented or not) with an info string, closed by a line of at least as many of the same
/// character. A fence left open runs to the end of the text.
fn scan_fences(text: &str) -> Vec<Fence<'_>> {
    let mut fences = Vec::new();
    let mut open: Option<(char, usize, &str, usize, usize)> = None; // (char, len, tag, start, body_start)
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let line_start = offset;
        offset += line.len();
        let trimmed = line.trim();
        match open {
            None => {
                let Some(ch) = trimmed.chars().next().filter(|c| *c == '`' || *c == '~') else {
                    continue;
                };
                let run = trimmed.chars().take_while(|c| *c == ch).count();
                if run < 3 {
                    continue;
                }
                let info = trimmed[run..].trim();
                if ch == '`' && info.contains('`') {
                    continue;
                }
                let tag = info.split_whitespace().next().unwrap_or("");
                open = Some((ch, run, tag, line_start, offset));
            }
            Some((ch, run, tag, start, body_start)) => {
                let closes = trimmed.len() >= run && trimmed.chars().all(|c| c == ch);
                if closes {
                    fences.push(Fence {
                        tag,
                        body: &text[body_start..line_start],
                        terminated: true,
                        start,
                        end: offset,
                    });
                    open = None;
                }
            }
        }
    }
    if let Some((_, _, tag, start, body_start)) = open {
        fences.push(Fence {
            tag,
            body: &text[body_start..],
            terminated: false,
            start,
            end: text.len(),
        });
    }
    fences
}

/// Parses a fence body as JSON, or else the balanced object starting at its first brace.
fn parse_json_lenient(body: &str) -> Result<Value, String> {
    let trimmed = body.trim();
    match serde_json::from_str::<Value>(trimmed) {
        Ok(value) => Ok(value),
        Err(err) => {
            let Some(brace) = trimmed.find('{') else {
                return Err(format!("not valid JSON: {err}"));
            };
            let object = balanced_object(&trimmed[brace..])
                .ok_or_else(|| format!("not valid JSON: {err}"))?;
            serde_json::from_str::<Value>(object).map_err(|err| format!("not valid JSON: {err}"))
        }
    }
}

/// Returns the `{…}` at the start of `text`, braces inside strings not counted.
fn balanced_object(text: &str) -> Option<&str> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (idx, ch) in text.char_indices() {
        if in_string {
            match (escaped, ch) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match ch {
            '"' => in_string = true,
            '{' => depth += 1,
            '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(&text[..=idx]);
                }
            }
            _ => {}
        }
    }
    None
}

/// Normalises and validates a parsed report.
pub fn normalise(value: &Value) -> Result<AcceptanceReport, Diagnostics> {
    let mut diags = Diagnostics::default();
    let Value::Object(object) = value else {
        return Err(Diagnostics::one(
            "acceptance-report",
            format!("expected object; got {}", render_value(value)),
        ));
    };
    let wrappers: Vec<&String> = object
        .keys()
        .filter(|k| WRAPPERS.contains(&k.as_str()))
        .collect();
    let (object, prefix) = match wrappers.as_slice() {
        [] => (object, String::new()),
        [wrapper] => {
            for key in object.keys().filter(|k| k != wrapper) {
                diags.push(
                    key.clone(),
                    format!("unsupported alongside acceptance report wrapper '{wrapper}'"),
                );
            }
            match &object[wrapper.as_str()] {
                Value::Object(inner) => (inner, format!("{wrapper}.")),
                other => {
                    diags.push(
                        wrapper.to_string(),
                        format!("expected object; got {}", render_value(other)),
                    );
                    return Err(diags);
                }
            }
        }
        _ => {
            diags.push(
                "acceptance-report",
                "multiple acceptance report wrappers are ambiguous",
            );
            return Err(diags);
        }
    };
    if !diags.is_empty() {
        return Err(diags);
    }
    if object.is_empty() {
        return Err(Diagnostics::one("acceptance-report", "the report is empty"));
    }
    // Map every key to its canonical name first, so duplicates are seen before any value is.
    let mut fields: Vec<(&str, String, &Value)> = Vec::new(); // (canonical, path, value)
    for (key, value) in object {
        let path = format!("{prefix}{key}");
        match FIELDS
            .iter()
            .find(|(camel, snake)| key == camel || key == snake)
        {
            Some((camel, _)) => {
                if let Some((_, first, _)) = fields.iter().find(|(c, _, _)| c == camel) {
                    diags.push(path, format!("duplicates {first} after snake_case mapping"));
                } else {
                    fields.push((camel, path, value));
                }
            }
            None => diags.push(path, "unsupported acceptance report field"),
        }
    }
    let mut report = AcceptanceReport::default();
    for (canonical, path, value) in fields {
        match canonical {
            "criteriaSatisfied" => report.criteria_satisfied = criteria(value, &path, &mut diags),
            "changedFiles" => report.changed_files = strings(value, &path, &mut diags),
            "testsAddedOrUpdated" => {
                report.tests_added_or_updated = strings(value, &path, &mut diags)
            }
            "commandsRun" => report.commands_run = commands(value, &path, &mut diags),
            "validationOutput" => report.validation_output = strings(value, &path, &mut diags),
            "residualRisks" => report.residual_risks = strings(value, &path, &mut diags),
            "noStagedFiles" => report.no_staged_files = boolean(value, &path, &mut diags),
            "diffSummary" => report.diff_summary = string(value, &path, &mut diags),
            "reviewFindings" => report.review_findings = strings(value, &path, &mut diags),
            "blockers" => report.blockers = strings(value, &path, &mut diags),
            "manualNotes" => report.manual_notes = string(value, &path, &mut diags),
            _ => report.notes = string(value, &path, &mut diags),
        }
    }
    if diags.is_empty() {
        Ok(report)
    } else {
        Err(diags)
    }
}

fn expected(diags: &mut Diagnostics, path: &str, what: &str, value: &Value) {
    diags.push(
        path,
        format!("expected {what}; got {}", render_value(value)),
    );
}

fn string(value: &Value, path: &str, diags: &mut Diagnostics) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => {
            expected(diags, path, "string", other);
            None
        }
    }
}

/// A string array; a single string counts as one item and empty strings are dropped.
fn strings(value: &Value, path: &str, diags: &mut Diagnostics) -> Option<Vec<String>> {
    match value {
        Value::Null => None,
        Value::String(s) => Some(if s.trim().is_empty() {
            Vec::new()
        } else {
            vec![s.clone()]
        }),
        Value::Array(items) => {
            let mut out = Vec::new();
            for (idx, item) in items.iter().enumerate() {
                match item {
                    Value::String(s) if s.trim().is_empty() => {}
                    Value::String(s) => out.push(s.clone()),
                    other => expected(diags, &format!("{path}[{idx}]"), "string", other),
                }
            }
            Some(out)
        }
        other => {
            expected(diags, path, "string array", other);
            None
        }
    }
}

fn boolean(value: &Value, path: &str, diags: &mut Diagnostics) -> Option<bool> {
    match value {
        Value::Null => None,
        Value::Bool(b) => Some(*b),
        Value::String(s) => match normalized_token(s).as_str() {
            "true" | "yes" => Some(true),
            "false" | "no" => Some(false),
            _ => {
                expected(diags, path, "boolean", value);
                None
            }
        },
        other => {
            expected(diags, path, "boolean", other);
            None
        }
    }
}

/// An object array; a single object counts as one item.
fn objects<'v>(
    value: &'v Value,
    path: &str,
    diags: &mut Diagnostics,
) -> Option<Vec<(String, &'v Map<String, Value>)>> {
    match value {
        Value::Null => None,
        Value::Object(object) => Some(vec![(path.to_owned(), object)]),
        Value::Array(items) => {
            let mut out = Vec::new();
            for (idx, item) in items.iter().enumerate() {
                let here = format!("{path}[{idx}]");
                match item {
                    Value::Object(object) => out.push((here, object)),
                    other => expected(diags, &here, "object", other),
                }
            }
            Some(out)
        }
        other => {
            expected(diags, path, "object array", other);
            None
        }
    }
}

fn criteria(value: &Value, path: &str, diags: &mut Diagnostics) -> Option<Vec<CriterionReport>> {
    let items = objects(value, path, diags)?;
    let mut out = Vec::new();
    for (here, object) in items {
        for key in object.keys() {
            if !matches!(key.as_str(), "id" | "status" | "evidence") {
                diags.push(
                    format!("{here}.{key}"),
                    "unsupported acceptance criterion field",
                );
            }
        }
        let id = match object.get("id") {
            Some(Value::String(id)) if !id.trim().is_empty() => Some(normalized_token(id)),
            Some(other) => {
                expected(diags, &format!("{here}.id"), "non-empty string", other);
                None
            }
            None => {
                diags.push(format!("{here}.id"), "is required");
                None
            }
        };
        let status = match object.get("status") {
            Some(Value::String(s)) => match criterion_status(s) {
                Some(status) => Some(status),
                None => {
                    expected(
                        diags,
                        &format!("{here}.status"),
                        "one of satisfied, not-satisfied, not-applicable",
                        &object["status"],
                    );
                    None
                }
            },
            Some(other) => {
                expected(
                    diags,
                    &format!("{here}.status"),
                    "one of satisfied, not-satisfied, not-applicable",
                    other,
                );
                None
            }
            None => {
                diags.push(format!("{here}.status"), "is required");
                None
            }
        };
        let evidence = match object.get("evidence") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            // A list of proofs is unambiguous: keep every item.
            Some(Value::Array(items)) if items.iter().all(Value::is_string) => Some(
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|s| !s.trim().is_empty())
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
            Some(other) => {
                expected(diags, &format!("{here}.evidence"), "string", other);
                None
            }
        };
        if let (Some(id), Some(status)) = (id, status) {
            out.push(CriterionReport {
                id,
                status,
                evidence,
            });
        }
    }
    Some(out)
}

fn commands(value: &Value, path: &str, diags: &mut Diagnostics) -> Option<Vec<CommandReport>> {
    let items = objects(value, path, diags)?;
    let mut out = Vec::new();
    for (here, object) in items {
        for key in object.keys() {
            if !matches!(key.as_str(), "command" | "result" | "summary") {
                diags.push(
                    format!("{here}.{key}"),
                    "unsupported acceptance command field",
                );
            }
        }
        let command = match object.get("command") {
            Some(Value::String(c)) if !c.trim().is_empty() => Some(c.clone()),
            Some(other) => {
                expected(diags, &format!("{here}.command"), "non-empty string", other);
                None
            }
            None => {
                diags.push(format!("{here}.command"), "is required");
                None
            }
        };
        let result = match object.get("result") {
            Some(Value::String(s)) => match command_result(s) {
                Some(result) => Some(result),
                None => {
                    expected(
                        diags,
                        &format!("{here}.result"),
                        "one of passed, failed, not-run",
                        &object["result"],
                    );
                    None
                }
            },
            Some(other) => {
                expected(
                    diags,
                    &format!("{here}.result"),
                    "one of passed, failed, not-run",
                    other,
                );
                None
            }
            None => {
                diags.push(format!("{here}.result"), "is required");
                None
            }
        };
        let summary = match object.get("summary") {
            None => None,
            Some(value) => string(value, &format!("{here}.summary"), diags),
        };
        if let (Some(command), Some(result)) = (command, result) {
            out.push(CommandReport {
                command,
                result,
                summary,
            });
        }
    }
    Some(out)
}

fn criterion_status(text: &str) -> Option<CriterionStatus> {
    match normalized_token(text).as_str() {
        "satisfied" | "met" | "complete" | "completed" | "done" | "pass" | "passed" | "success"
        | "succeeded" | "yes" => Some(CriterionStatus::Satisfied),
        "not-satisfied" | "unsatisfied" | "not-met" | "unmet" | "incomplete" | "fail"
        | "failed" | "no" => Some(CriterionStatus::NotSatisfied),
        "not-applicable" | "n/a" | "n-a" | "na" | "skip" | "skipped" => {
            Some(CriterionStatus::NotApplicable)
        }
        _ => None,
    }
}

fn command_result(text: &str) -> Option<CommandResult> {
    match normalized_token(text).as_str() {
        "passed" | "pass" | "ok" | "success" | "successful" | "succeeded" => {
            Some(CommandResult::Passed)
        }
        "failed" | "fail" | "failure" | "error" => Some(CommandResult::Failed),
        "not-run" | "not-executed" | "skip" | "skipped" => Some(CommandResult::NotRun),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const FULL: &str = r#"{"criteriaSatisfied": [{"id": "fix", "status": "satisfied", "evidence": "test passes"}],
        "changedFiles": ["src/a.rs"], "testsAddedOrUpdated": [], "commandsRun": [{"command": "cargo test", "result": "passed"}],
        "validationOutput": ["ok"], "residualRisks": ["none"], "noStagedFiles": true, "diffSummary": "one line",
        "reviewFindings": ["no blockers"], "manualNotes": "n"}"#;

    fn report(output: &str) -> (AcceptanceReport, ReportSource) {
        match find_report(output) {
            Found::Report { report, source } => (*report, source),
            other => panic!("no report in {output:?}: {other:?}"),
        }
    }

    fn diagnostics(output: &str) -> Vec<String> {
        match find_report(output) {
            Found::Invalid { diagnostics, .. } => {
                diagnostics.0.iter().map(ToString::to_string).collect()
            }
            other => panic!("expected diagnostics for {output:?}: {other:?}"),
        }
    }

    #[test]
    fn a_fenced_report_is_read() {
        let (r, source) = report(&format!("Done.\n\n```acceptance-report\n{FULL}\n```\n"));
        assert_eq!(source, ReportSource::AcceptanceFence);
        assert_eq!(
            r.changed_files.as_deref(),
            Some(&["src/a.rs".to_owned()][..])
        );
        assert_eq!(r.no_staged_files, Some(true));
        assert_eq!(
            r.criteria_satisfied.unwrap()[0].status,
            CriterionStatus::Satisfied
        );
    }

    type Check = Box<dyn Fn(&AcceptanceReport) -> bool>;

    #[test]
    fn tolerant_rules_each_apply() {
        let cases: Vec<(String, ReportSource, Check)> = vec![
            // Tag case and underscore.
            (format!("```Acceptance_Report\n{FULL}\n```"), ReportSource::AcceptanceFence, Box::new(|r| r.manual_notes.is_some())),
            // Unterminated fence runs to the end.
            (format!("text\n```acceptance-report\n{FULL}\n"), ReportSource::UnterminatedFence, Box::new(|r| r.diff_summary.is_some())),
            // Prose around the JSON inside the fence: the balanced object is taken.
            ("```acceptance-report\nHere: {\"residualRisks\": [\"a }\"]} thanks\n```".into(), ReportSource::AcceptanceFence,
                Box::new(|r| r.residual_risks.as_deref() == Some(&["a }".to_owned()][..]))),
            // A generic json fence that looks like a report.
            ("```json\n{\"criteria_satisfied\": [], \"changed_files\": []}\n```".into(), ReportSource::JsonFence,
                Box::new(|r| r.changed_files.as_deref() == Some(&[][..]))),
            // The marker.
            ("all good\nACCEPTANCE_REPORT: {\"manualNotes\": \"m\"}\n".into(), ReportSource::Marker, Box::new(|r| r.manual_notes.as_deref() == Some("m"))),
            // One wrapper key.
            ("```acceptance-report\n{\"acceptanceReport\": {\"notes\": \"x\"}}\n```".into(), ReportSource::AcceptanceFence, Box::new(|r| r.notes.as_deref() == Some("x"))),
            // snake_case keys, a single object for an array, string booleans, enum synonyms, id separators.
            ("```acceptance-report\n{\"criteria_satisfied\": {\"id\": \"Keep Scope_now\", \"status\": \"Done\"}, \"commands_run\": {\"command\": \"t\", \"result\": \"OK\"}, \"no_staged_files\": \"true\"}\n```".into(),
                ReportSource::AcceptanceFence,
                Box::new(|r| {
                    let c = &r.criteria_satisfied.as_ref().unwrap()[0];
                    c.id == "keep-scope-now" && c.status == CriterionStatus::Satisfied
                        && r.commands_run.as_ref().unwrap()[0].result == CommandResult::Passed
                        && r.no_staged_files == Some(true)
                })),
            // A single string for a string array; empty strings dropped.
            ("```acceptance-report\n{\"residualRisks\": \"flaky net\", \"changedFiles\": [\"\", \"a\"], \"testsAddedOrUpdated\": \"\"}\n```".into(),
                ReportSource::AcceptanceFence,
                Box::new(|r| r.residual_risks.as_deref() == Some(&["flaky net".to_owned()][..])
                    && r.changed_files.as_deref() == Some(&["a".to_owned()][..])
                    && r.tests_added_or_updated.as_deref() == Some(&[][..]))),
            // Other synonyms.
            ("```acceptance-report\n{\"criteriaSatisfied\": [{\"id\": \"a\", \"status\": \"n/a\"}, {\"id\": \"b\", \"status\": \"unmet\"}], \"commandsRun\": [{\"command\": \"t\", \"result\": \"not executed\"}, {\"command\": \"u\", \"result\": \"error\"}], \"noStagedFiles\": \"no\"}\n```".into(),
                ReportSource::AcceptanceFence,
                Box::new(|r| {
                    let c = r.criteria_satisfied.as_ref().unwrap();
                    let k = r.commands_run.as_ref().unwrap();
                    c[0].status == CriterionStatus::NotApplicable && c[1].status == CriterionStatus::NotSatisfied
                        && k[0].result == CommandResult::NotRun && k[1].result == CommandResult::Failed
                        && r.no_staged_files == Some(false)
                })),
            // Last valid fence wins over an earlier example.
            ("Example:\n```acceptance-report\n{\"notes\": \"example\"}\n```\nReal:\n```acceptance-report\n{\"notes\": \"real\"}\n```".into(),
                ReportSource::AcceptanceFence, Box::new(|r| r.notes.as_deref() == Some("real"))),
            // Tilde fences and indentation.
            ("  ~~~~ acceptance-report\n  {\"notes\": \"t\"}\n  ~~~~\n".into(), ReportSource::AcceptanceFence, Box::new(|r| r.notes.as_deref() == Some("t"))),
        ];
        for (output, want_source, check) in cases {
            let (r, source) = report(&output);
            assert_eq!(source, want_source, "{output}");
            assert!(check(&r), "{output}: {r:?}");
        }
    }

    #[test]
    fn error_paths_name_the_field() {
        let cases: [(&str, &str); 16] = [
            (
                "```acceptance-report\n{\"changedFiles\": [], \"colour\": 1}\n```",
                "colour: unsupported acceptance report field",
            ),
            (
                "```acceptance-report\n{\"changedFiles\": [], \"changed_files\": []}\n```",
                "changed_files: duplicates changedFiles after snake_case mapping",
            ),
            (
                "```acceptance-report\n{\"acceptance\": {}, \"acceptanceReport\": {}}\n```",
                "acceptance-report: multiple acceptance report wrappers are ambiguous",
            ),
            (
                "```acceptance-report\n{\"acceptance\": {\"notes\": \"x\"}, \"notes\": \"y\"}\n```",
                "notes: unsupported alongside acceptance report wrapper 'acceptance'",
            ),
            (
                "```acceptance-report\n{}\n```",
                "acceptance-report: the report is empty",
            ),
            (
                "```acceptance-report\n[1]\n```",
                "acceptance-report: expected object; got [1]",
            ),
            (
                "```acceptance-report\nnot json at all\n```",
                "acceptance-report: not valid JSON",
            ),
            (
                "```acceptance-report\n{\"criteriaSatisfied\": [{\"id\": \"a\", \"status\": \"maybe\"}]}\n```",
                "criteriaSatisfied[0].status: expected one of satisfied, not-satisfied, not-applicable; got \"maybe\"",
            ),
            (
                "```acceptance-report\n{\"criteriaSatisfied\": [{\"id\": \"a\", \"status\": \"met\", \"why\": 1}]}\n```",
                "criteriaSatisfied[0].why: unsupported acceptance criterion field",
            ),
            (
                "```acceptance-report\n{\"commandsRun\": [{\"command\": \"t\", \"result\": \"green\"}]}\n```",
                "commandsRun[0].result: expected one of passed, failed, not-run; got \"green\"",
            ),
            (
                "```acceptance-report\n{\"commandsRun\": [\"cargo test\"]}\n```",
                "commandsRun[0]: expected object; got \"cargo test\"",
            ),
            (
                "```acceptance-report\n{\"commandsRun\": [{\"command\": \"t\", \"result\": \"ok\", \"exit\": 0}]}\n```",
                "commandsRun[0].exit: unsupported acceptance command field",
            ),
            (
                "```acceptance-report\n{\"noStagedFiles\": \"maybe\"}\n```",
                "noStagedFiles: expected boolean; got \"maybe\"",
            ),
            (
                "```acceptance-report\n{\"changedFiles\": [1]}\n```",
                "changedFiles[0]: expected string; got 1",
            ),
            (
                "```acceptance-report\n{\"diffSummary\": {\"a\": 1}}\n```",
                "diffSummary: expected string; got {\"a\":1}",
            ),
            (
                "ACCEPTANCE_REPORT: nothing here",
                "acceptance-report: ACCEPTANCE_REPORT: is not followed by a JSON object",
            ),
        ];
        for (output, want) in cases {
            let got = diagnostics(output);
            assert!(
                got.iter().any(|d| d == want || d.starts_with(want)),
                "{output}: {got:?}"
            );
        }
    }

    #[test]
    fn long_values_are_shortened_in_diagnostics() {
        let long = "x".repeat(200);
        let got = diagnostics(&format!(
            "```acceptance-report\n{{\"noStagedFiles\": \"{long}\"}}\n```"
        ));
        assert!(got[0].chars().count() < 140, "{got:?}");
    }

    #[test]
    fn an_invalid_report_fence_is_not_masked_by_weaker_sources() {
        let output =
            "```acceptance-report\n{\"bogus\": 1}\n```\nACCEPTANCE_REPORT: {\"notes\": \"x\"}";
        assert!(matches!(find_report(output), Found::Invalid { .. }));
    }

    #[test]
    fn json_fences_that_do_not_look_like_reports_are_ignored() {
        assert_eq!(
            find_report("```json\n{\"criteriaSatisfied\": []}\n```"),
            Found::NotFound
        );
        assert_eq!(
            find_report("```json\n{\"changedFiles\": [], \"notes\": \"x\"}\n```"),
            Found::NotFound
        );
        assert_eq!(find_report("no report here"), Found::NotFound);
        assert_eq!(find_report(""), Found::NotFound);
        // One that looks like a report but is invalid is reported, not skipped.
        let output =
            "```json\n{\"criteriaSatisfied\": [], \"changedFiles\": [], \"extra\": 1}\n```";
        assert!(matches!(
            find_report(output),
            Found::Invalid {
                source: ReportSource::JsonFence,
                ..
            }
        ));
    }

    #[test]
    fn strip_removes_a_trailing_report_only() {
        let body = "The fix is in.";
        assert_eq!(
            strip_report(&format!("{body}\n\n```acceptance-report\n{{}}\n```\n")),
            body
        );
        assert_eq!(
            strip_report(&format!(
                "{body}\nACCEPTANCE_REPORT: {{\"notes\": \"}}\"}}\n"
            )),
            body
        );
        let middle = format!("```acceptance-report\n{{}}\n```\n{body}");
        assert_eq!(strip_report(&middle), middle);
    }

    #[test]
    fn normalise_accepts_the_canonical_form_unchanged() {
        let value: Value = serde_json::from_str(FULL).unwrap();
        let r = normalise(&value).unwrap();
        assert_eq!(
            r.commands_run.unwrap()[0],
            CommandReport {
                command: "cargo test".into(),
                result: CommandResult::Passed,
                summary: None
            }
        );
        assert!(normalise(&json!({"notes": null})).is_ok());
    }
}
