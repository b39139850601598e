//! The JSON Schemas in `docs/schemas/`: every sidecar herd writes or reads and every `--json`
//! output, each derived from its Rust type with schemars (the types are herd-protocol's, the
//! process identity's file form is herd-core's, and the hosts' records herd-remote's).
//!
//! [`FILES`] is the one list. A type that is written to disk or printed with `--json` gets its
//! schema by one line there: the type derives `schemars::JsonSchema`. Where JSON Schema can say
//! what serde cannot (a bound the binary puts on a list, a flag only ever written as `true`, a
//! document held as a JSON value), [`sidecars`] and [`outputs`] amend the derived schema, each
//! amendment with its reason. The tests validate real output against every schema, so neither
//! the derive nor an amendment can drift silently.
//!
//! Sidecars use schemars' deserialize contract (what a reader accepts: a field with a default
//! may be absent); `--json` outputs use the serialize contract (what a binary prints: a field
//! that is always printed is required, `null` included). No schema forbids unknown properties but
//! the launch policy's, whose reader fails closed: fields are added without a version change
//! (docs/sidecars.md, "Versioning and reading rules"), and readers ignore what they do not know.

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
    /// The Rust type, or the function of this module that amends its derived schema.
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

/// A file derived from a type and amended in this module.
macro_rules! amended {
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
        herd_protocol::run::RunRecord
    ),
    read!(
        "run-event.schema.json",
        "a line of `runs/<run-id>.events.jsonl`",
        herd_protocol::watch::RunEvent
    ),
    read!(
        "superseded.schema.json",
        "`runs/<run-id>.superseded.json`",
        herd_protocol::run::Superseded
    ),
    read!(
        "resurrected.schema.json",
        "`runs/<run-id>.resurrected.json`",
        herd_protocol::launch::resurrect::Resurrected
    ),
    read!(
        "predecessor.schema.json",
        "`runs/<run-id>.predecessor.json`",
        herd_protocol::run::Predecessor
    ),
    amended!(
        "run-result.schema.json",
        "`runs/<run-id>.result.json`",
        sidecars::run_result
    ),
    read!(
        "cancel-intent.schema.json",
        "`runs/<run-id>.cancel.json`",
        herd_protocol::intents::CancelIntent
    ),
    read!(
        "timeout.schema.json",
        "`runs/<run-id>.timeout.json`",
        herd_protocol::intents::Expiry
    ),
    read!(
        "budget-stop.schema.json",
        "`runs/<run-id>.budget.json`",
        herd_protocol::intents::BudgetStop
    ),
    read!(
        "interrupt.schema.json",
        "`runs/<run-id>.interrupt.json`",
        herd_protocol::intents::Interrupt
    ),
    read!(
        "steer-queue.schema.json",
        "`runs/<run-id>.steer.json`",
        herd_protocol::intents::SteerQueue
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
        herd_protocol::intents::SteeringLedger
    ),
    read!(
        "delivered.schema.json",
        "`runs/<run-id>.delivered`",
        herd_protocol::result::Delivered
    ),
    read!(
        "ledgered.schema.json",
        "`runs/<run-id>.ledgered`",
        herd_protocol::result::Ledgered
    ),
    read!(
        "runner-exit.schema.json",
        "`runs/<run-id>.runner-exit.json`",
        herd_protocol::launch::runner_exit::RunnerExit
    ),
    read!(
        "usage-cursor.schema.json",
        "`runs/<run-id>.usage.json`",
        herd_protocol::usage::UsageCursor
    ),
    read!(
        "outcome.schema.json",
        "a line of `outcomes.jsonl`",
        herd_protocol::result::LedgerLine
    ),
    read!(
        "worktree-manifest.schema.json",
        "`worktree-runs/<run-id>.json`; also `herd-worktree show --json`",
        herd_protocol::worktree::Manifest
    ),
    read!(
        "activity.schema.json",
        "`subagent-activity/<run-id>.json`",
        herd_protocol::child::Activity
    ),
    read!(
        "accept-spec.schema.json",
        "`accept/<run-id>.json`",
        herd_protocol::accept::SpecFile
    ),
    read!(
        "relay-state.schema.json",
        "`relays/<host>.json`",
        herd_protocol::relay::RelayState
    ),
    // The user's configuration.
    read!(
        "host-record.schema.json",
        "`$XDG_CONFIG_HOME/herd/hosts/<name>.json` (else `~/.config/herd/hosts/`)",
        herd_remote::HostRecord
    ),
    // Sidecars beside a child's session file.
    read!(
        "process-identity.schema.json",
        "`<session>.process.json`; also `runs/<run-id>.leader.json`",
        herd_core::identity::RecordFile<'static>
    ),
    read!(
        "completion.schema.json",
        "`<session>.exit`",
        herd_protocol::child::CompletionFile
    ),
    read!(
        "accept-tries.schema.json",
        "`<session>.accept-tries.json`",
        herd_protocol::accept::AcceptTries
    ),
    read!(
        "needs-input.schema.json",
        "`<session>.needs-input.json`",
        herd_protocol::needs_input::NeedsInputFile
    ),
    read!(
        "steering-queued.schema.json",
        "`<session>.steering-queued.json`",
        herd_protocol::intents::SteeringQueued
    ),
    read!(
        "launch-policy.schema.json",
        "`<session>.pi-herdr-subagent-policy.json`",
        herd_protocol::launch::policy::PolicyFile<'static>
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
    printed!(
        "launch-resurrect.schema.json",
        "`herd-launch resurrect --json`",
        herd_protocol::launch::resurrect::ResurrectDoc
    ),
    printed!(
        "watch-notify.schema.json",
        "`herd-watch notify --json`",
        herd_protocol::watch::WatchNotify
    ),
    printed!(
        "launch-send.schema.json",
        "`herd-launch send --json`",
        herd_protocol::launch::LaunchSend
    ),
    printed!(
        "launch-models.schema.json",
        "`herd-launch models --json`",
        herd_protocol::launch::docs::ModelCatalog
    ),
    printed!(
        "launch-roles.schema.json",
        "`herd-launch roles --json`",
        herd_protocol::launch::docs::RolesListing
    ),
    printed!(
        "launch-write-task-models.schema.json",
        "`herd-launch write-task-models --json`",
        herd_protocol::launch::docs::ModelsWritten
    ),
    printed!(
        "launch-handoff.schema.json",
        "`herd-launch handoff --json` and `handoffs/<id>.json`",
        herd_protocol::launch::docs::HandoffDoc
    ),
    printed!(
        "launch-host-add.schema.json",
        "`herd-launch host add --json`",
        herd_remote::host::HostAdded
    ),
    printed!(
        "launch-host-list.schema.json",
        "`herd-launch host list --json`",
        herd_remote::host::HostListing
    ),
    printed!(
        "launch-host-remove.schema.json",
        "`herd-launch host remove --json`",
        herd_remote::host::HostRemoved
    ),
    amended!(
        "watch-wait.schema.json",
        "`herd-watch wait --json`",
        outputs::watch_wait
    ),
    amended!(
        "watch-event.schema.json",
        "a line of `herd-watch follow --json`",
        outputs::watch_event
    ),
    amended!(
        "watch-status.schema.json",
        "`herd-watch status --json` (also with `--widget` or `--transcript`)",
        outputs::watch_status
    ),
    read!(
        "watch-ack.schema.json",
        "a line of `herd-watch follow --ack`'s stdin",
        herd_protocol::watch::WatchAck
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
    printed!(
        "watch-usage.schema.json",
        "`herd-watch usage --json`",
        herd_protocol::usage::UsageReport
    ),
    printed!(
        "watch-steer.schema.json",
        "`herd-watch steer --json`",
        herd_protocol::watch::WatchSteer
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
        "worktree-trust.schema.json",
        "`herd-worktree trust --json`",
        herd_protocol::worktree::TrustApproved
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
    printed!(
        "docs-report.schema.json",
        "`herd-docs --json`",
        herd_protocol::docs::DocsReport
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
