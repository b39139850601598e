//! Amended schemas of sidecar files: each function names the type it derives from and says what
//! it adds that serde cannot say.

use schemars::Schema;
use serde_json::{Value, json};

use super::read_schema;

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
