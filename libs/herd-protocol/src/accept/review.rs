//! `runs/<reviewed-run>.review.json`: the latest review of a run whose gate required one, which
//! herd-watch writes when a reviewer's run settles (herd-accept decides it).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Status;

/// The version of `runs/<id>.review.json`.
pub const REVIEW_VERSION: u64 = 1;

/// `runs/<reviewed-run>.review.json`: the latest review of a run whose gate required one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReviewRecord {
    pub format_version: u64,
    /// The run that was reviewed.
    pub run_id: String,
    /// The reviewer's run.
    pub reviewer_run_id: String,
    pub reviewer_name: String,
    /// `reviewed`, `rejected`, or `review-required` when the reviewer supplied no review.
    pub status: Status,
    /// The reviewer's blockers (its text, each on one line, encoded as host text is).
    pub blockers: Vec<String>,
    pub findings: Vec<String>,
    /// Why the status is what it is (host text).
    pub reason: String,
    pub at_ms: u64,
}

impl ReviewRecord {
    /// The version herd-watch writes.
    pub const FORMAT_VERSION: u64 = REVIEW_VERSION;
}
