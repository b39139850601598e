//! `herd-launch resurrect`: the runs that were lost (a reboot, a killed tmux server, a Herdr
//! restart) brought back in their exact session files, and the durable marker that keeps each of
//! them from being resumed twice.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::layout::{Artifacts, RUN_ID_PATTERN};
use crate::run::LaunchStatus;

/// `runs/<run-id>.resurrected.json`: a resurrect took up this lost run. Written (as a claim, with
/// no successor yet) before its resume is launched, and again with the successor's run id once
/// the launch answered; a run with a successor is never resumed again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Resurrected {
    #[schemars(schema_with = "crate::format_version")]
    pub format_version: u64,
    pub at_ms: u64,
    /// The run that resumed this one's session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", pattern(RUN_ID_PATTERN))]
    pub successor: Option<String>,
    /// Why the resume did not launch, when it failed (the run may be taken up again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub failure: Option<String>,
}

impl Resurrected {
    /// Reads the marker of `run_id`; `None` when there is none or it cannot be read.
    pub fn read(artifacts: &Artifacts, run_id: &str) -> Option<Resurrected> {
        artifacts.run(run_id).read().ok().flatten()
    }
}

/// What `herd-launch resurrect` did with one lost run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResurrectStatus {
    /// Resumed in its session file: `successor` is the new run.
    Resumed,
    /// `--dry-run`: it would be resumed.
    WouldResume,
    /// The resume's launch is uncertain: it stays supervised as `successor`, and is not tried
    /// again.
    Uncertain,
    /// Its session was resumed already (by an earlier resurrect or by hand): `successor`.
    AlreadyResumed,
    /// It cannot be resumed: `why` and `message` say why.
    Skipped,
    /// The resume was tried and failed before anything ran: `message`; a later resurrect tries
    /// again.
    Failed,
}

/// Why a lost run is not resumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// A persistent specialist's session is not resumed: spawn a new specialist.
    Persistent,
    /// It has no Pi session file (an exec child, or the file is gone).
    NoSession,
    /// Its launch policy is missing, so the tools it may have cannot be restored.
    NoPolicy,
    /// Its launch policy (or session) cannot be restored as it is: malformed, unknown, or its
    /// directory is gone.
    Refused,
    /// Its managed worktree is no longer retained.
    WorktreeGone,
    /// A child's own child: the child that launched it resumes it, not the parent.
    LaunchedByChild,
    /// It ran on another machine, whose herd owns it.
    Remote,
}

/// One lost run of `herd-launch resurrect --json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ResurrectRun {
    /// The lost run.
    #[schemars(pattern(RUN_ID_PATTERN))]
    pub run_id: String,
    pub name: String,
    pub status: ResurrectStatus,
    /// Set when `status` is `skipped`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "SkipReason")]
    pub why: Option<SkipReason>,
    /// What happened or why not, in a sentence (host text).
    pub message: String,
    /// The session file the run had, which a resume continues; absent when it had none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub session_file: Option<String>,
    /// The directory it resumes (or resumed) in: a worktree child's retained worktree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub cwd: Option<String>,
    /// A worktree child's retained worktree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub worktree: Option<String>,
    /// The run that resumed it (`resumed`, `uncertain`, `already_resumed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", pattern(RUN_ID_PATTERN))]
    pub successor: Option<String>,
    /// The successor's launch status, for a resume this command launched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "LaunchStatus")]
    pub launch_status: Option<LaunchStatus>,
}

/// `herd-launch resurrect --json`: every lost run of the artifacts directory, oldest first, with
/// what was done with it. Exit 0 when every resumable run was resumed (or there was none), 3 when a
/// resume's launch is uncertain, 4 when one failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ResurrectDoc {
    /// Whether this was `--dry-run` (nothing changed).
    pub dry_run: bool,
    /// The artifacts directory.
    pub artifacts: String,
    /// How many runs this command resumed (`resumed` and `uncertain`).
    pub resumed: u64,
    pub runs: Vec<ResurrectRun>,
}

impl ResurrectDoc {
    /// The version of this document's shape (not printed; see the crate docs).
    pub const FORMAT_VERSION: u64 = 1;
}
