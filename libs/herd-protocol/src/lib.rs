//! herd's protocol: the files herd and a Pi child write, and the `--json` documents herd
//! prints, as typed Rust values that producers and consumers share.
//!
//! Every type here is `Serialize + Deserialize + JsonSchema`; `docs/schemas/` is generated from
//! them (`cargo xtask docs`), and the tests validate real output against those schemas. Each
//! format carries its version as a named constant: a file writes it (the worktree manifest's
//! `version`); a `--json` document's `FORMAT_VERSION` is not printed, because fields are added
//! without a version change (DESIGN §5) and a breaking change gets a new document. The only dependency on the rest of herd is
//! `herd-core`, for bounded and atomic file I/O, the artifacts layout and the error kinds.
//!
//! - [`accept`]: the accept spec's file form, `herd-accept check` and `verdict`, the child's
//!   accept tries, and seed 004's gate: the run's gate, the child's acceptance report, the ledger
//!   of `herd-accept report`, the review and the verify memo;
//! - [`launch`]: the acknowledgement of `herd-launch spawn` and `resume`;
//! - [`worktree`]: the worktree ownership manifest, and `herd-worktree create/inspect/list`;
//! - [`cleanup`]: `herd-cleanup list/remove/doctor`;
//! - [`persistent`]: a persistent specialist's ledger, task inbox and task events;
//! - [`result`]: the delivered result `runs/<run-id>.result.json`, its delivery marker, and
//!   how a run ended: [`result::Outcome`] and, with a failed provider told apart,
//!   [`result::RunOutcome`];
//! - [`watch`]: `herd-watch wait/follow/status/cancel/interrupt/stop/steer`.

pub mod accept;
pub mod cleanup;
pub mod launch;
pub mod persistent;
pub mod result;
pub mod watch;
pub mod worktree;

use serde::Serialize;

/// `doc` as a JSON value, for a binary's `--json` output.
///
/// The documents here hold only strings, numbers, booleans, lists and string-keyed maps, which
/// always serialize; `null` would stand for the impossible failure.
pub fn to_value<T: Serialize>(doc: &T) -> serde_json::Value {
    serde_json::to_value(doc).unwrap_or(serde_json::Value::Null)
}
