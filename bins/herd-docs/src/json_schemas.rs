//! The JSON Schemas in `docs/schemas/`: every sidecar herd writes or reads and every `--json`
//! output, derived from the Rust types with schemars where a type exists.
//!
//! [`FILES`] is the one list. A type that is written to disk or printed with `--json` gets its
//! schema by one line there: the type derives `schemars::JsonSchema`. A document that is built
//! with `json!` (or a format whose serde is written by hand) has its schema written by hand in
//! [`sidecars`] or [`outputs`], next to the note of the code it mirrors; the tests validate real
//! output of that code against it, so a hand-written schema cannot drift silently.
//!
//! Sidecars use schemars' deserialize contract (what a reader accepts: a field with a default
//! may be absent); `--json` outputs use the serialize contract (what a binary prints: a field
//! that is always printed is required, `null` included). No schema forbids unknown properties:
//! fields are added without a version change (DESIGN §5), and readers ignore what they do not
//! know.

pub mod outputs;
pub mod sidecars;

use herd_core::Error;
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};

/// One generated schema file and where it comes from.
pub struct SchemaFile {
    /// The file name inside `docs/schemas/`.
    pub file: &'static str,
    /// The file or the command output the schema describes, as `docs/sidecars.md` shows it.
    pub describes: &'static str,
    /// The Rust type, or the function of this module that writes the schema by hand.
    pub source: &'static str,
    pub schema: fn() -> Schema,
}

/// A file from a type that is read from disk (schemars' deserialize contract).
macro_rules! read {
    ($file:literal, $describes:literal, $ty:ty) => {
        SchemaFile {
            file: $file,
            describes: $describes,
            source: concat!("the Rust type ", stringify!($ty)),
            schema: || crate::json_schemas::read_schema::<$ty>(),
        }
    };
}

/// A file from a type that is printed (schemars' serialize contract).
macro_rules! printed {
    ($file:literal, $describes:literal, $ty:ty) => {
        SchemaFile {
            file: $file,
            describes: $describes,
            source: concat!("the Rust type ", stringify!($ty)),
            schema: || crate::json_schemas::printed_schema::<$ty>(),
        }
    };
}

/// A file written (or amended) by hand in this module.
macro_rules! by_hand {
    ($file:literal, $describes:literal, $module:ident :: $f:ident) => {
        SchemaFile {
            file: $file,
            describes: $describes,
            source: concat!(
                "herd_docs::json_schemas::",
                stringify!($module),
                "::",
                stringify!($f)
            ),
            schema: $module::$f,
        }
    };
}

/// Every schema of `docs/schemas/` but the tool registry itself.
pub const FILES: &[SchemaFile] = &[
    // Sidecars of the artifacts directory.
    read!(
        "run-record.schema.json",
        "`runs/<run-id>.json`",
        herd_core::run::RunRecord
    ),
    by_hand!(
        "run-event.schema.json",
        "a line of `runs/<run-id>.events.jsonl`",
        sidecars::run_event
    ),
    by_hand!(
        "run-result.schema.json",
        "`runs/<run-id>.result.json`",
        sidecars::run_result
    ),
    read!(
        "cancel-intent.schema.json",
        "`runs/<run-id>.cancel.json`",
        herd_watch::control::CancelIntent
    ),
    read!(
        "timeout.schema.json",
        "`runs/<run-id>.timeout.json`",
        herd_watch::timeout::Expiry
    ),
    by_hand!(
        "interrupt.schema.json",
        "`runs/<run-id>.interrupt.json`",
        sidecars::interrupt
    ),
    read!(
        "steer-queue.schema.json",
        "`runs/<run-id>.steer.json`",
        herd_watch::control::SteerQueue
    ),
    read!(
        "run-acceptance.schema.json",
        "`runs/<run-id>.acceptance.json`",
        herd_protocol::accept::RunGate
    ),
    read!(
        "review.schema.json",
        "`runs/<run-id>.review.json`",
        herd_protocol::accept::ReviewRecord
    ),
    read!(
        "verify-memo.schema.json",
        "`verify-memo/<key>.json`",
        herd_protocol::accept::Memo
    ),
    read!(
        "steering.schema.json",
        "`runs/<run-id>.steering.json`",
        herd_watch::control::SteeringLedger
    ),
    read!(
        "delivered.schema.json",
        "`runs/<run-id>.delivered`",
        herd_protocol::result::Delivered
    ),
    by_hand!(
        "ledgered.schema.json",
        "`runs/<run-id>.ledgered`",
        sidecars::ledgered
    ),
    read!(
        "runner-exit.schema.json",
        "`runs/<run-id>.runner-exit.json`",
        herd_protocol::launch::runner_exit::RunnerExit
    ),
    by_hand!(
        "outcome.schema.json",
        "a line of `outcomes.jsonl`",
        sidecars::outcome
    ),
    read!(
        "worktree-manifest.schema.json",
        "`worktree-runs/<run-id>.json`; also `herd-worktree show --json`",
        herd_protocol::worktree::Manifest
    ),
    by_hand!(
        "activity.schema.json",
        "`subagent-activity/<run-id>.json`",
        sidecars::activity
    ),
    read!(
        "accept-spec.schema.json",
        "`accept/<run-id>.json`",
        herd_protocol::accept::SpecFile
    ),
    // Sidecars beside a child's session file.
    by_hand!(
        "process-identity.schema.json",
        "`<session>.process.json`; also `runs/<run-id>.leader.json`",
        sidecars::process_identity
    ),
    by_hand!(
        "completion.schema.json",
        "`<session>.exit`",
        sidecars::completion
    ),
    read!(
        "accept-tries.schema.json",
        "`<session>.accept-tries.json`",
        herd_protocol::accept::AcceptTries
    ),
    by_hand!(
        "launch-policy.schema.json",
        "`<session>.pi-herdr-subagent-policy.json`",
        sidecars::launch_policy
    ),
    read!(
        "task-ledger.schema.json",
        "a line of `<session>.ledger`",
        herd_protocol::persistent::LedgerLine
    ),
    read!(
        "task-inbox.schema.json",
        "`<session>.task-inbox.<seq>.json`",
        herd_protocol::persistent::InboxEntry
    ),
    read!(
        "task-event.schema.json",
        "a line of `<session>.tasks`",
        herd_protocol::persistent::TaskEvent
    ),
    // `--json` outputs.
    read!(
        "error.schema.json",
        "the `--json` error document of every binary",
        herd_core::error::ErrorDocument
    ),
    printed!(
        "launch-ack.schema.json",
        "`herd-launch spawn --json`, `herd-launch resume --json`",
        herd_protocol::launch::LaunchAck
    ),
    by_hand!(
        "launch-send.schema.json",
        "`herd-launch send --json`",
        outputs::launch_send
    ),
    by_hand!(
        "watch-wait.schema.json",
        "`herd-watch wait --json`",
        outputs::watch_wait
    ),
    by_hand!(
        "watch-event.schema.json",
        "a line of `herd-watch follow --json`",
        outputs::watch_event
    ),
    by_hand!(
        "watch-status.schema.json",
        "`herd-watch status --json` (also with `--widget` or `--transcript`)",
        outputs::watch_status
    ),
    printed!(
        "watch-cancel.schema.json",
        "`herd-watch cancel --json`",
        herd_protocol::watch::WatchCancel
    ),
    printed!(
        "watch-interrupt.schema.json",
        "`herd-watch interrupt --json`",
        herd_protocol::watch::WatchInterrupt
    ),
    printed!(
        "watch-stop.schema.json",
        "`herd-watch stop --json`",
        herd_protocol::watch::WatchStop
    ),
    by_hand!(
        "watch-steer.schema.json",
        "`herd-watch steer --json`",
        outputs::watch_steer
    ),
    printed!(
        "accept-check.schema.json",
        "`herd-accept check --json`",
        herd_protocol::accept::AcceptCheck
    ),
    printed!(
        "accept-verdict.schema.json",
        "`herd-accept verdict --json` and its `--out` file",
        herd_protocol::accept::VerdictDetails
    ),
    printed!(
        "accept-report.schema.json",
        "`herd-accept report --json`",
        herd_protocol::accept::Ledger
    ),
    printed!(
        "worktree-create.schema.json",
        "`herd-worktree create --json`",
        herd_protocol::worktree::WorktreeCreate
    ),
    printed!(
        "worktree-inspect.schema.json",
        "`herd-worktree inspect --json` (the handoff)",
        herd_protocol::worktree::WorktreeInspect
    ),
    printed!(
        "worktree-list.schema.json",
        "`herd-worktree list --json`",
        herd_protocol::worktree::WorktreeList
    ),
    printed!(
        "cleanup-list.schema.json",
        "`herd-cleanup list --json`",
        herd_protocol::cleanup::CleanupList
    ),
    printed!(
        "cleanup-remove.schema.json",
        "`herd-cleanup remove --json`",
        herd_protocol::cleanup::Removal
    ),
    printed!(
        "cleanup-doctor.schema.json",
        "`herd-cleanup doctor --json`",
        herd_protocol::cleanup::DoctorReport
    ),
    by_hand!(
        "docs-report.schema.json",
        "`herd-docs --json`",
        outputs::docs_report
    ),
    // `herd-docs schemas --json`: the tool registry a host registers.
    printed!(
        "tool-registry.schema.json",
        "`herd-docs schemas --json` and `tools.json`",
        herd_tools::Registry
    ),
];

/// The file that holds the tool registry itself, as `herd-docs schemas --json` prints it.
pub const REGISTRY_FILE: &str = "tools.json";

/// Returns the schema file named `file`.
pub fn file(file: &str) -> Option<&'static SchemaFile> {
    FILES.iter().find(|f| f.file == file)
}

/// The schema of a type as readers accept it.
pub fn read_schema<T: JsonSchema>() -> Schema {
    SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<T>()
}

/// The schema of a type as the binaries print it.
pub fn printed_schema<T: JsonSchema>() -> Schema {
    SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>()
}

/// A schema written by hand: `$schema`, `title` and `description`, then `body`'s keywords.
pub(crate) fn hand(title: &str, description: &str, body: serde_json::Value) -> Schema {
    let mut schema = schemars::json_schema!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": title,
        "description": description,
    });
    if let serde_json::Value::Object(body) = body {
        for (key, value) in body {
            schema.insert(key, value);
        }
    }
    schema
}

/// Amends a derived schema with what the code adds around the type: `properties` (an object of
/// property schemas) are inserted or replaced, `required` names are added, and `description`,
/// when given, replaces the type's doc comment.
pub(crate) fn amend(
    schema: &mut Schema,
    description: Option<&str>,
    properties: serde_json::Value,
    required: &[&str],
) {
    if let Some(description) = description {
        schema.insert("description".into(), description.into());
    }
    let object = schema.ensure_object();
    if let serde_json::Value::Object(properties) = properties {
        let entry = object
            .entry("properties")
            .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
        if let serde_json::Value::Object(existing) = entry {
            existing.extend(properties);
        }
    }
    if !required.is_empty() {
        let entry = object
            .entry("required")
            .or_insert_with(|| serde_json::Value::Array(Vec::new()));
        if let serde_json::Value::Array(names) = entry {
            for name in required {
                if !names.iter().any(|n| n == name) {
                    names.push((*name).into());
                }
            }
        }
    }
}

/// The text of one schema file: pretty JSON with a comment saying where it comes from.
pub fn render(file: &SchemaFile) -> Result<String, Error> {
    let mut schema = (file.schema)();
    schema.insert(
        "$comment".to_owned(),
        format!(
            "Generated by cargo xtask docs from {}; do not edit.",
            file.source
        )
        .into(),
    );
    let mut text = serde_json::to_string_pretty(&schema).map_err(|err| {
        Error::internal(format!(
            "cannot serialize the schema of {}: {err}",
            file.file
        ))
    })?;
    text.push('\n');
    Ok(text)
}

/// The rows of the `schemas` block of `docs/sidecars.md`: every schema file and what it
/// describes.
pub fn table() -> String {
    let mut out = String::from("| schema | describes |\n| --- | --- |\n");
    for file in FILES {
        out.push_str(&format!(
            "| [`{name}`](schemas/{name}) | {} |\n",
            file.describes,
            name = file.file
        ));
    }
    out.push_str(&format!(
        "| [`{name}`](schemas/{name}) | the tool registry itself (`herd-docs schemas --json`) |\n",
        name = REGISTRY_FILE
    ));
    out
}
