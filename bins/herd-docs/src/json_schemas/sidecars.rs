//! Amended schemas of sidecar files: each function names the type it derives from and says what
//! it adds that serde cannot say.

use schemars::Schema;
use serde_json::{Value, json};

use super::read_schema;

/// `herd_protocol::result::RunResult`, amended where its details hold a flag that is only ever
/// `true`.
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
