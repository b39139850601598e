//! Schemas of sidecar files whose format has no derived Rust type: lines built with `json!`,
//! formats whose serde is written by hand, and the child-written formats of pi-herdr-agents
//! (protocol.md §1). Each function names the code it mirrors.

use schemars::Schema;
use serde_json::{Value, json};

use super::{hand, read_schema};

/// `herd_protocol::result::RunResult`, amended where its details hold a document whose type
/// lives outside the protocol, or a flag that is only ever `true`.
pub fn run_result() -> Schema {
    let mut schema = read_schema::<herd_protocol::result::RunResult>();
    amend_details(&mut schema);
    schema
}

/// Amends the `Details` of a schema that holds a result's details.
pub(crate) fn amend_details(schema: &mut Schema) {
    let details = schema
        .pointer_mut("/$defs/Details/properties")
        .and_then(Value::as_object_mut);
    if let Some(details) = details {
        // herd-accept's verdict document, a JSON value in the protocol: its schema is
        // `accept-verdict.schema.json`; what every reader relies on is the verdict.
        details.insert(
            "accept".into(),
            json!({
                "type": "object",
                "description": "The parent re-check: the document of `accept-verdict.schema.json`, or `{verdict: \"error\", error}` when the accept spec cannot be read.",
                "properties": {"verdict": {"enum": ["accepted", "rejected", "error", "skipped", "none"]}},
                "required": ["verdict"]
            }),
        );
        // serde says `Option<bool>`; the watcher writes the flag only as `true`.
        for (key, description) in [
            (
                "timedOut",
                "The run outlived its time limit (`herd-launch spawn --timeout-ms`) and was terminated.",
            ),
            (
                "stopped",
                "A persistent specialist that ended on its stop directive.",
            ),
        ] {
            details.insert(
                key.into(),
                json!({"const": true, "description": description}),
            );
        }
    }
}

/// `herd_protocol::launch::policy::Policy::to_json` and `read` (serde written by hand: two
/// versions and a hash over a canonical key order), protocol.md §1.4.
pub fn launch_policy() -> Schema {
    let name = json!({"type": "string", "pattern": "^[^,\\s]+$"});
    let names = json!({"type": "array", "items": name, "uniqueItems": true});
    let text = json!({"type": "string", "minLength": 1});
    let owner = json!({"enum": ["public", "managed-worktree"]});
    let tools = json!({
        "description": "`null`: deliberately unrestricted (no `--tools` flag); else a non-empty list.",
        "anyOf": [{"type": "null"}, {"allOf": [names.clone()], "minItems": 1}]
    });
    hand(
        "LaunchPolicy",
        "`<session>.pi-herdr-subagent-policy.json`, the launch policy herd-launch writes once at spawn (pi-herdr-agents format) and resume and send read. Anything else, an unknown key included, fails closed; `policyHash` must be the SHA-256 of the canonical JSON of the other keys in this order.",
        json!({
            "oneOf": [
                {
                    "type": "object",
                    "properties": {
                        "version": {"const": 1},
                        "owner": owner.clone(),
                        "tools": tools.clone(),
                        "deniedTools": names.clone()
                    },
                    "required": ["version", "owner", "tools", "deniedTools"],
                    "additionalProperties": false
                },
                {
                    "type": "object",
                    "properties": {
                        "version": {"const": 2},
                        "owner": owner,
                        "tools": tools,
                        "deniedTools": names,
                        "persistent": {"type": "boolean"},
                        "logicalId": text.clone(),
                        "generationId": text.clone(),
                        "policyHash": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                        "worktree": {
                            "type": "object",
                            "properties": {
                                "path": text.clone(),
                                "workspaceId": text.clone(),
                                "branch": text.clone(),
                                "baseSha": text
                            },
                            "required": ["path", "workspaceId", "branch", "baseSha"],
                            "additionalProperties": false
                        }
                    },
                    "required": [
                        "version", "owner", "tools", "deniedTools", "persistent", "logicalId",
                        "generationId", "policyHash"
                    ],
                    "additionalProperties": false
                }
            ]
        }),
    )
}
