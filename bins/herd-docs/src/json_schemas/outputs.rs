//! Amended schemas of `--json` outputs: each function names the type it derives from and says
//! what it adds that serde cannot say; the tests run the binaries and validate what they print
//! against the schema.

use schemars::Schema;
use serde_json::{Value, json};

use super::printed_schema;

/// `herd_protocol::watch::WatchWait`, its details amended as the result's are.
pub fn watch_wait() -> Schema {
    let mut schema = printed_schema::<herd_protocol::watch::WatchWait>();
    super::sidecars::amend_details(&mut schema);
    schema
}

/// `herd_protocol::watch::WatchEvent`, the details of its `result` amended as the result's are.
pub fn watch_event() -> Schema {
    let mut schema = printed_schema::<herd_protocol::watch::WatchEvent>();
    super::sidecars::amend_details(&mut schema);
    schema
}

/// `herd_protocol::watch::WatchStatus`, amended with what tells its shapes apart.
pub fn watch_status() -> Schema {
    let mut schema = printed_schema::<herd_protocol::watch::WatchStatus>();
    // serde reads an untagged document as the first shape that fits, a widget before plain runs;
    // JSON Schema has no order, so plain runs say they are not a widget.
    if let Some(runs) = schema
        .pointer_mut("/$defs/StatusRuns")
        .and_then(Value::as_object_mut)
    {
        runs.insert("not".into(), json!({"required": ["widget"]}));
    }
    schema
}
