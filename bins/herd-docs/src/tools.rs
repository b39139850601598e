//! The tool tables of `docs/tools.md`, rendered from the tool registry.
//!
//! The rendering is pi-herdr-agents' tools reference's
//! (`bins/herd-docs/tests/fixtures/pi-herdr-agents-tools.md` holds it): nested parameters flattened
//! (`worktree.branch`, `accept.run`, `basis.sources[].url`), requirement relative to the parent
//! object, literal enums as `` `"off"` \| `"low"` ``, unions as `object \| null`, `—` where there
//! is no description, and `<` and `|` escaped in text so a table cell can hold them.

use herd_tools::{Registry, Schema, Session, Tool};
use serde_json::Value;

/// The tool whose parameters have a block of their own (`subagent-params`).
pub const OWN_BLOCK_TOOL: &str = "subagent";

/// The `tools` block: a summary line and the parent-session tools.
pub fn tools(registry: &Registry) -> String {
    let tools = sorted(registry);
    let parent: Vec<&Tool> = tools
        .iter()
        .copied()
        .filter(|tool| tool.registered_in(Session::Parent))
        .collect();
    let child_only = tools.iter().filter(|tool| tool.child_only()).count();
    let mut out = format!(
        "**{}** — {} + {}, plus {}:\n\n",
        registry.group,
        count(parent.len(), "parent-session tool"),
        count(registry.commands.len(), "command"),
        count(child_only, "child-only tool"),
    );
    out.push_str("| Tool | Sessions | Description |\n| --- | --- | --- |\n");
    for tool in parent {
        let sessions = if tool.registered_in(Session::Child) {
            "parent, child"
        } else {
            "parent only"
        };
        out.push_str(&format!(
            "| `{}` | {sessions} | {} |\n",
            tool.name,
            escape(first_sentence(&tool.description))
        ));
    }
    out
}

/// The `child-tools` block: the tools only children register.
pub fn child_tools(registry: &Registry) -> String {
    let mut out = "| Pi child-only tool | Description |\n| --- | --- |\n".to_owned();
    for tool in sorted(registry)
        .into_iter()
        .filter(|tool| tool.child_only())
    {
        out.push_str(&format!(
            "| `{}` | {} |\n",
            tool.name,
            escape(first_sentence(&tool.description))
        ));
    }
    out
}

/// The `commands` block.
pub fn commands(registry: &Registry) -> String {
    let mut commands: Vec<_> = registry.commands.iter().collect();
    commands.sort_by(|a, b| a.name.cmp(&b.name));
    let mut out = "| Command | Usage | Description |\n| --- | --- | --- |\n".to_owned();
    for command in commands {
        let usage: Vec<String> = command
            .usage
            .iter()
            .map(|usage| format!("`{}`", usage.text.replace('|', "\\|")))
            .collect();
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            command.name,
            usage.join("<br>"),
            escape(&command.description)
        ));
    }
    out
}

/// The parameters of [`OWN_BLOCK_TOOL`] for acceptance gates and review, which pi-herdr-agents'
/// tools reference does not list: they have a block of their own, so `subagent-params` stays
/// that reference's table row for row.
pub const SEED_004_PARAMS: [&str; 3] = ["acceptance", "gate", "reviews"];

/// Whether a row is one of [`SEED_004_PARAMS`] or below one.
fn is_seed_004(row: &Row) -> bool {
    let root = row.name.split(['.', '[']).next().unwrap_or_default();
    SEED_004_PARAMS.contains(&root)
}

/// The parameters of [`OWN_BLOCK_TOOL`] for children on other machines: a block of their own
/// too, `subagent-host-params`.
pub const HOST_PARAMS: [&str; 1] = ["host"];

fn is_host(row: &Row) -> bool {
    HOST_PARAMS.contains(&row.name.split(['.', '[']).next().unwrap_or_default())
}

/// The parameters of [`OWN_BLOCK_TOOL`] that bound a child — its confinement (`docs/sandbox.md`)
/// and its budget — herd's own, not pi-herdr-agents': a block of their own,
/// `subagent-sandbox-params`.
pub const SANDBOX_PARAMS: [&str; 3] = ["sandbox", "network", "budget"];

fn is_sandbox(row: &Row) -> bool {
    SANDBOX_PARAMS.contains(&row.name.split(['.', '[']).next().unwrap_or_default())
}

/// Parameters of other tools that are herd's own, not pi-herdr-agents': the tool reference
/// leaves them out, so its tables stay that reference's row for row, and each tool's have a
/// block of their own, `<tool>-herd-params` (`worktree_remove`'s: `worktree-remove-herd-params`).
pub const HERD_PARAMS: [(&str, &str); 1] = [("worktree_remove", "host")];

/// Whether `row` of `tool`'s parameters is one of [`HERD_PARAMS`] or below one.
fn is_herd_param(tool: &str, row: &Row) -> bool {
    let root = row.name.split(['.', '[']).next().unwrap_or_default();
    HERD_PARAMS.contains(&(tool, root))
}

/// The `<tool>-herd-params` block of `tool`: its parameters that are herd's own
/// ([`HERD_PARAMS`]).
pub fn herd_block_params(registry: &Registry, tool: &str) -> Option<String> {
    registry.tool(tool).map(|t| {
        table_of(
            rows(&t.parameters)
                .into_iter()
                .filter(|r| is_herd_param(tool, r)),
        )
    })
}

/// The `subagent-sandbox-params` block: the parameters of [`OWN_BLOCK_TOOL`] that confine a
/// child.
pub fn sandbox_block_params(registry: &Registry) -> Option<String> {
    registry
        .tool(OWN_BLOCK_TOOL)
        .map(|tool| table_of(rows(&tool.parameters).into_iter().filter(is_sandbox)))
}

/// The `subagent-params` block: the parameters of [`OWN_BLOCK_TOOL`] that pi-herdr-agents'
/// tools reference lists.
pub fn own_block_params(registry: &Registry) -> Option<String> {
    registry.tool(OWN_BLOCK_TOOL).map(|tool| {
        table_of(
            rows(&tool.parameters)
                .into_iter()
                .filter(|r| !is_seed_004(r) && !is_host(r) && !is_sandbox(r)),
        )
    })
}

/// The `subagent-host-params` block: the parameters of [`OWN_BLOCK_TOOL`] for children on
/// other machines.
pub fn host_block_params(registry: &Registry) -> Option<String> {
    registry
        .tool(OWN_BLOCK_TOOL)
        .map(|tool| table_of(rows(&tool.parameters).into_iter().filter(is_host)))
}

/// The `subagent-acceptance-params` block: the acceptance parameters of [`OWN_BLOCK_TOOL`].
pub fn acceptance_block_params(registry: &Registry) -> Option<String> {
    registry
        .tool(OWN_BLOCK_TOOL)
        .map(|tool| table_of(rows(&tool.parameters).into_iter().filter(is_seed_004)))
}

/// The `tool-reference` block: every tool, alphabetically, with its sessions and parameters.
pub fn tool_reference(registry: &Registry) -> String {
    let sections: Vec<String> = sorted(registry)
        .into_iter()
        .map(|tool| {
            let sessions: Vec<&str> = tool.sessions.iter().map(|s| s.as_str()).collect();
            let body = if tool.name == OWN_BLOCK_TOOL {
                "See [Parameters](#parameters).\n".to_owned()
            } else if tool.parameters.properties.is_empty() {
                "No parameters.\n".to_owned()
            } else {
                let name = tool.name.as_str();
                table_of(
                    rows(&tool.parameters)
                        .into_iter()
                        .filter(|r| !is_herd_param(name, r)),
                )
            };
            format!(
                "### `{}`\n\nRegistered in: {} sessions.\n\n{body}",
                tool.name,
                sessions.join(", ")
            )
        })
        .collect();
    sections.join("\n")
}

/// One row of a parameter table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub name: String,
    pub ty: String,
    pub required: bool,
    pub description: Option<String>,
}

/// A parameter table: `| Parameter | Type | Required | Description |` and one row per
/// flattened parameter.
pub fn params_table(schema: &Schema) -> String {
    table_of(rows(schema))
}

/// A parameter table of `rows`.
fn table_of(rows: impl IntoIterator<Item = Row>) -> String {
    let mut out =
        "| Parameter | Type | Required | Description |\n| --- | --- | --- | --- |\n".to_owned();
    for row in rows {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            row.name,
            row.ty,
            if row.required { "yes" } else { "no" },
            row.description
                .as_deref()
                .map_or_else(|| "—".to_owned(), escape)
        ));
    }
    out
}

/// The flattened parameters of an object schema, parents before their children.
pub fn rows(schema: &Schema) -> Vec<Row> {
    let mut out = Vec::new();
    flatten(&object_members(schema), "", &mut out);
    out
}

/// The object schemas a value of `schema` may be: itself, or the objects among its alternatives.
fn object_members(schema: &Schema) -> Vec<&Schema> {
    if !schema.properties.is_empty() {
        return vec![schema];
    }
    schema
        .alternatives()
        .iter()
        .filter(|member| !member.properties.is_empty())
        .collect()
}

/// Rows for the properties of `members` (one object, or a union of objects whose properties
/// merge: a property is required only when every member requires it).
fn flatten(members: &[&Schema], prefix: &str, out: &mut Vec<Row>) {
    let mut names: Vec<&str> = Vec::new();
    for member in members {
        for (name, _) in &member.properties {
            if !names.contains(&name.as_str()) {
                names.push(name);
            }
        }
    }
    for name in names {
        let variants: Vec<&Schema> = members.iter().filter_map(|m| m.property(name)).collect();
        let required = members.iter().all(|member| member.requires(name));
        let full = format!("{prefix}{name}");
        out.push(Row {
            name: full.clone(),
            ty: merged_type(&variants),
            required,
            description: variants.iter().find_map(|v| v.description.clone()),
        });

        let children: Vec<&Schema> = variants.iter().flat_map(|v| object_members(v)).collect();
        if !children.is_empty() {
            flatten(&children, &format!("{full}."), out);
        }
        let items: Vec<&Schema> = variants
            .iter()
            .filter_map(|v| v.items.as_deref())
            .flat_map(object_members)
            .collect();
        if !items.is_empty() {
            flatten(&items, &format!("{full}[]."), out);
        }
    }
}

/// The type of a property that several union members declare: their literals merged into one
/// enum when all are literals, else the distinct rendered types.
fn merged_type(variants: &[&Schema]) -> String {
    if variants.iter().all(|v| v.literals().is_some()) {
        let mut literals: Vec<&Value> = Vec::new();
        for value in variants.iter().filter_map(|v| v.literals()).flatten() {
            if !literals.contains(&value) {
                literals.push(value);
            }
        }
        return render_literals(&literals);
    }
    let mut types: Vec<String> = Vec::new();
    for ty in variants.iter().map(|v| render_type(v)) {
        if !types.contains(&ty) {
            types.push(ty);
        }
    }
    types.join(" \\| ")
}

/// The Type cell of one schema.
pub fn render_type(schema: &Schema) -> String {
    if let Some(literals) = schema.literals() {
        return render_literals(&literals);
    }
    let alternatives = schema.alternatives();
    if !alternatives.is_empty() {
        let parts: Vec<String> = alternatives.iter().map(render_type).collect();
        return parts.join(" \\| ");
    }
    let parts: Vec<String> = schema
        .types
        .iter()
        .map(|ty| match (ty, &schema.items) {
            (herd_tools::JsonType::Array, Some(items)) => {
                let item = render_type(items);
                if item.contains(' ') {
                    format!("({item})[]")
                } else {
                    format!("{item}[]")
                }
            }
            _ => ty.as_str().to_owned(),
        })
        .collect();
    if parts.is_empty() {
        "any".to_owned()
    } else {
        parts.join(" \\| ")
    }
}

fn render_literals(values: &[&Value]) -> String {
    let parts: Vec<String> = values
        .iter()
        .map(|value| format!("`{}`", value.to_string().replace('|', "\\|")))
        .collect();
    parts.join(" \\| ")
}

/// Escapes text for a table cell: `<` and `|`, and line breaks become spaces.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\<"),
            '|' => out.push_str("\\|"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// The first sentence of a description: up to the first `. ` (or all of it).
fn first_sentence(text: &str) -> &str {
    match text.find(". ") {
        Some(idx) => &text[..=idx],
        None => text,
    }
}

fn sorted(registry: &Registry) -> Vec<&Tool> {
    let mut tools: Vec<&Tool> = registry.tools.iter().collect();
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    tools
}

fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(text: &str) -> Schema {
        herd_tools::schema::parse(text).unwrap()
    }

    #[test]
    fn unions_of_objects_merge_their_properties() {
        let s = schema(
            r#"{"type":"object","properties":{"basis":{"anyOf":[
                {"type":"object","properties":{"kind":{"const":"a"}},"required":["kind"],"additionalProperties":false},
                {"type":"object","properties":{"kind":{"const":"b"},"list":{"type":"array","items":{"type":"object","properties":{"url":{"type":"string"}},"required":["url"],"additionalProperties":false}}},"required":["kind","list"],"additionalProperties":false}
            ]}},"additionalProperties":false}"#,
        );
        let got: Vec<(String, String, bool)> = rows(&s)
            .into_iter()
            .map(|row| (row.name, row.ty, row.required))
            .collect();
        let want = [
            ("basis", "object \\| object", false),
            ("basis.kind", "`\"a\"` \\| `\"b\"`", true),
            ("basis.list", "object[]", false),
            ("basis.list[].url", "string", true),
        ];
        let want: Vec<(String, String, bool)> = want
            .iter()
            .map(|(n, t, r)| ((*n).to_owned(), (*t).to_owned(), *r))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn escapes_cells() {
        assert_eq!(
            escape("task:<category> | x\ny"),
            "task:\\<category> \\| x y"
        );
        assert_eq!(first_sentence("One. Two."), "One.");
        assert_eq!(first_sentence("models.tasks and x."), "models.tasks and x.");
    }
}
