//! herd's protocol: the files herd and a Pi child write, and the `--json` documents herd
//! prints, as typed Rust values that producers and consumers share.
//!
//! Every type here is `Serialize + Deserialize + JsonSchema`; `docs/schemas/` is generated from
//! them (`cargo xtask docs`), and the tests validate real output against those schemas. Each
//! format carries its version as a named constant: a file writes it (the worktree manifest's
//! `version`); a `--json` document's `FORMAT_VERSION` is not printed, because fields are added
//! without a version change (docs/sidecars.md, "Versioning and reading rules") and a breaking change gets a new document. The only dependency on the rest of herd is
//! `herd-core`, for bounded and atomic file I/O, the artifacts layout and the error kinds.
//!
//! - [`layout`]: where every file of an artifacts directory lives, and the managed root;
//! - [`run`]: the run record `runs/<run-id>.json`, and the superseded marker;
//! - [`run_file`]: the files beside a run's record, each a type with its suffix, version, read
//!   bound and durability, read and written through one [`run_file::Run`] handle;
//! - [`open_runs`]: the index of the runs not yet settled;
//! - [`intents`]: what the parent asked of a run (cancel, interrupt, steering) and a time limit's
//!   expiry;
//! - [`child`]: what a Pi child writes for its host: the `.exit` sidecar and the activity
//!   snapshot, with their tolerant readers;
//! - [`child_env`]: the child's environment, the variables herd hands a child, as one type;
//! - [`accept`]: the accept spec's file form, `herd-accept check` and `verdict`, the child's
//!   accept tries, and the acceptance gate: the run's gate, the child's acceptance report, the ledger
//!   of `herd-accept report`, the review and the verify memo;
//! - [`launch`]: the acknowledgement of `herd-launch spawn` and `resume`;
//! - [`worktree`]: the worktree ownership manifest, and `herd-worktree create/inspect/list`;
//! - [`docs`]: `herd-docs --json`;
//! - [`cleanup`]: `herd-cleanup list/remove/doctor`;
//! - [`needs_input`]: the child's `<session>.needs-input.json` and why a run waits for input;
//! - [`persistent`]: a persistent specialist's ledger, task inbox and task events;
//! - [`result`]: the delivered result `runs/<run-id>.result.json`, its delivery marker, and
//!   how a run ended: [`result::Outcome`] and, with a failed provider told apart,
//!   [`result::RunOutcome`];
//! - [`session`]: Pi's session files, read tolerantly into the few fields herd uses;
//! - [`usage`]: what a run cost, from its session's `usage`, and the reader's cursor;
//! - [`watch`]: `herd-watch wait/follow/status/cancel/interrupt/stop/steer`.

pub mod accept;
pub mod artifacts_index;
pub mod child;
pub mod child_env;
pub mod cleanup;
pub mod docs;
pub mod intents;
pub mod launch;
pub mod layout;
pub mod needs_input;
pub mod open_runs;
pub mod persistent;
pub mod relay;
pub mod result;
pub mod run;
pub mod run_file;
pub mod session;
pub mod session_file;
pub mod usage;
pub mod watch;
pub mod worktree;

/// The schema of a version field whose only version is `V`, the format's named constant
/// (`#[schemars(schema_with = "crate::version_is::<{ NAME }>")]`): a reader refuses any other.
/// A file beside a session takes its table's version instead
/// ([`session_file::version_of`]).
pub(crate) fn version_is<const V: u64>(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "const": V })
}

/// The schema of a `format_version` a reader checks against the newest it knows: at least 1.
pub(crate) fn format_version(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "integer",
        "minimum": 1,
        "description": "The format version; a reader refuses a newer major version than it knows."
    })
}
