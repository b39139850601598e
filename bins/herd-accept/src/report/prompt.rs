//! The acceptance section of a child's prompt: for `attested` or stricter levels, the child's
//! prompt ends with a standard acceptance section that asks for a fenced `acceptance-report`
//! JSON block (docs/tools.md, "Acceptance gates", the prompt contract).
//!
//! The section names the level, the criteria, the evidence the gate checks and the host's own
//! verification, then shows the fence the parser reads. Everything in it is the caller's or the
//! host's; nothing comes from a child.

use herd_protocol::accept::{EvidenceKind, Gate, Level};

/// The heading every acceptance section starts with.
pub const HEADING: &str = "## Acceptance";

/// The acceptance section for `gate`, `None` for level `none`.
///
/// `reviewer` is set when the child is itself the independent reviewer of another run: it is
/// asked for its findings and its blockers.
pub fn section(gate: &Gate, reviewer: bool) -> Option<String> {
    if gate.level == Level::None {
        return None;
    }
    let mut out = vec![HEADING.to_owned()];
    let how = if gate.explicit {
        "the caller asked for it"
    } else {
        "inferred for this task"
    };
    out.push(format!(
        "This run has the acceptance level `{}` ({how}). When you finish, end your final message \
         with a fenced `acceptance-report` JSON block; the host reads it, checks it, and reports the \
         result to the parent. Report only what is true: the host checks the git index and runs \
         its own verification commands, and a command you say you ran is evidence, not proof.",
        gate.level.as_str()
    ));
    if !gate.criteria.is_empty() {
        let mut lines =
            vec!["Criteria (report each one by its id in `criteriaSatisfied`):".to_owned()];
        for criterion in &gate.criteria {
            lines.push(format!(
                "- `{}` ({}): {}",
                criterion.id,
                match criterion.severity {
                    super::Severity::Required => "required",
                    super::Severity::Recommended => "recommended",
                },
                criterion.must.trim()
            ));
        }
        out.push(lines.join("\n"));
    }
    let mut evidence: Vec<EvidenceKind> = gate.evidence.clone();
    for criterion in &gate.criteria {
        for kind in &criterion.evidence {
            if !evidence.contains(kind) {
                evidence.push(*kind);
            }
        }
    }
    if reviewer && !evidence.contains(&EvidenceKind::ReviewFindings) {
        evidence.push(EvidenceKind::ReviewFindings);
    }
    if !evidence.is_empty() {
        let mut lines = vec!["Evidence the report must carry:".to_owned()];
        for kind in &evidence {
            lines.push(format!("- {}", field_hint(*kind)));
        }
        out.push(lines.join("\n"));
    }
    if !gate.verify.is_empty() {
        let mut lines = vec![
            "After you finish, the host runs these commands in your working directory:".to_owned(),
        ];
        for command in &gate.verify {
            lines.push(format!("- `{}`: `{}`", command.id, command.command));
        }
        out.push(lines.join("\n"));
    }
    if reviewer {
        out.push(
            "You are the independent reviewer of another run: list every finding in \
             `reviewFindings`, and in `blockers` each one that must be fixed before the work is \
             accepted (an empty `blockers` list accepts it)."
                .to_owned(),
        );
    } else if gate.review.as_ref().is_some_and(|r| r.required) {
        out.push("An independent reviewer will review this work before it is accepted.".to_owned());
    }
    out.push(format!(
        "The block, last in your final message:\n\n```acceptance-report\n{}\n```",
        example(gate, &evidence, reviewer)
    ));
    Some(out.join("\n\n"))
}

/// What one kind of evidence asks for, with its report field.
fn field_hint(kind: EvidenceKind) -> &'static str {
    match kind {
        EvidenceKind::ChangedFiles => {
            "`changedFiles`: the files you changed (an empty list when you changed none)"
        }
        EvidenceKind::TestsAdded => {
            "`testsAddedOrUpdated`: the tests you added or updated (an empty list when none)"
        }
        EvidenceKind::CommandsRun => {
            "`commandsRun`: each command you ran to check the work, with `result` passed, failed or not-run"
        }
        EvidenceKind::ValidationOutput => {
            "`validationOutput`: the output lines that show the work holds"
        }
        EvidenceKind::ResidualRisks => {
            "`residualRisks`: what could still be wrong (at least one entry)"
        }
        EvidenceKind::NoStagedFiles => {
            "`noStagedFiles`: true when you left nothing staged in the git index"
        }
        EvidenceKind::DiffSummary => "`diffSummary`: a summary of your changes",
        EvidenceKind::ReviewFindings => "`reviewFindings`: what you found",
        EvidenceKind::ManualNotes => "`manualNotes`: what you did and how you know it holds",
    }
}

/// The JSON shown inside the example fence: one placeholder per field the gate reads.
fn example(gate: &Gate, evidence: &[EvidenceKind], reviewer: bool) -> String {
    let mut object = serde_json::Map::new();
    if !gate.criteria.is_empty() {
        let criteria: Vec<serde_json::Value> = gate
            .criteria
            .iter()
            .map(|c| serde_json::json!({"id": c.id, "status": "satisfied", "evidence": "..."}))
            .collect();
        object.insert("criteriaSatisfied".into(), criteria.into());
    }
    for kind in evidence {
        let (key, value) = match kind {
            EvidenceKind::ChangedFiles => ("changedFiles", serde_json::json!(["..."])),
            EvidenceKind::TestsAdded => ("testsAddedOrUpdated", serde_json::json!(["..."])),
            EvidenceKind::CommandsRun => (
                "commandsRun",
                serde_json::json!([{"command": "...", "result": "passed", "summary": "..."}]),
            ),
            EvidenceKind::ValidationOutput => ("validationOutput", serde_json::json!(["..."])),
            EvidenceKind::ResidualRisks => ("residualRisks", serde_json::json!(["..."])),
            EvidenceKind::NoStagedFiles => ("noStagedFiles", serde_json::json!(true)),
            EvidenceKind::DiffSummary => ("diffSummary", serde_json::json!("...")),
            EvidenceKind::ReviewFindings => ("reviewFindings", serde_json::json!(["..."])),
            EvidenceKind::ManualNotes => ("manualNotes", serde_json::json!("...")),
        };
        object.insert(key.into(), value);
    }
    if reviewer {
        object.insert("blockers".into(), serde_json::json!([]));
    }
    serde_json::to_string_pretty(&serde_json::Value::Object(object)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::config::{AcceptanceInput, parse_acceptance, resolve};
    use crate::report::{Found, find_report};
    use serde_json::json;

    fn gate(value: serde_json::Value) -> Gate {
        let input = parse_acceptance(&value, "acceptance").unwrap();
        resolve(&input, Level::Attested)
    }

    #[test]
    fn level_none_has_no_section() {
        let none = resolve(&AcceptanceInput::Disabled, Level::Checked);
        assert_eq!(section(&none, false), None);
    }

    #[test]
    fn the_section_names_the_level_criteria_commands_and_asks_for_the_fence() {
        let gate = gate(json!({
            "level": "verified",
            "criteria": ["Keep the scope"],
            "verify": [{"id": "unit", "command": "cargo test"}]
        }));
        let text = section(&gate, false).unwrap();
        assert!(text.starts_with("## Acceptance\n\nThis run has the acceptance level `verified` (the caller asked for it)."), "{text}");
        assert!(
            text.contains("- `criterion-1` (required): Keep the scope"),
            "{text}"
        );
        assert!(text.contains("- `unit`: `cargo test`"), "{text}");
        assert!(text.contains("`noStagedFiles`"), "{text}");
        assert!(text.trim_end().ends_with("```"), "{text}");
    }

    #[test]
    fn the_example_block_is_one_the_parser_reads() {
        let gate = gate(json!({"level": "checked", "criteria": ["a"]}));
        let text = section(&gate, true).unwrap();
        match find_report(&text) {
            Found::Report { report, .. } => {
                assert_eq!(report.blockers.as_deref(), Some(&[][..]));
                assert!(report.review_findings.is_some());
            }
            other => panic!("the example does not parse: {other:?}"),
        }
    }
}
