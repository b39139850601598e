//! Bounded git operations for herd: repository facts, worktrees, status, and the handoff reads.
//!
//! Every call runs the `git` CLI through `herd_core::subprocess`, so it has a time budget, a
//! 1 MiB cap per output stream and its own process group. A call that fails, times out,
//! overflows its cap or prints something this crate cannot parse is an [`Error`], never a
//! guess: callers turn errors into "unknown", not into "clean".
//!
//! The git CLI is used rather than a library reader (gix): the operations here are few, the
//! CLI is the reference behaviour for worktrees, and one `status --porcelain=v2` call already
//! answers most of the handoff. Parsing is done on `-z` output so paths arrive verbatim. The
//! one exception is [`index`]: which gitlinks the index records, which the CLI answers only
//! through `git submodule status`, a shell script of a dozen processes; a form of the index
//! that reader does not cover is left to that script.
//!
//! - [`Git`]: the calls, each under a [`Deadline`] (`HERD_GIT_BIN` names the binary).
//! - [`status`]: `git status --porcelain=v2 -z --branch` parsing.
//! - [`worktree`]: `git worktree list --porcelain -z` parsing.
//! - [`refname`]: branch-name validation without a process.
//! - [`index`]: the gitlinks of a checkout's index, read without a process.
//! - [`objects`]: what paths of a commit name, through the symlinks of its tree.

mod git;
pub mod index;
pub mod objects;
pub mod refname;
pub mod status;
#[cfg(feature = "testkit")]
pub mod testkit;
pub mod worktree;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use herd_core::ErrorCode;

pub use git::{BIN_ENV, Git, RepoFacts};
pub use status::{Entry, EntryKind, Head, Status};
pub use worktree::WorktreeEntry;

/// The budgets of the git calls herd makes (docs/lifecycle.md, "Budgets").
pub mod budget {
    use std::time::Duration;

    /// Resolving the base revision to an exact commit.
    pub const BASE: Duration = Duration::from_secs(10);
    /// Finding the principal checkout of a linked one.
    pub const PRINCIPAL: Duration = Duration::from_secs(15);
    /// The complete handoff inspection (all its calls together).
    pub const HANDOFF: Duration = Duration::from_secs(15);
    /// Worktree acquisition (creating the checkout).
    pub const ACQUISITION: Duration = Duration::from_secs(120);
    /// Each cleanup git call.
    pub const CLEANUP: Duration = Duration::from_secs(30);
}

/// The cap on each output stream of a git call.
pub const OUTPUT_CAP: usize = 1024 * 1024;

/// An instant by which a group of calls must be done; each call gets what is left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    at: Instant,
    budget: Duration,
}

impl Deadline {
    /// A deadline `budget` from now.
    pub fn after(budget: Duration) -> Deadline {
        Deadline {
            at: Instant::now() + budget,
            budget,
        }
    }

    /// The time left, zero once passed.
    pub fn remaining(&self) -> Duration {
        self.at.saturating_duration_since(Instant::now())
    }

    /// The whole budget the deadline was made with (for messages).
    pub fn budget(&self) -> Duration {
        self.budget
    }
}

/// Why a git call gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot run {bin}: {reason}")]
    Spawn { bin: PathBuf, reason: String },
    #[error("{what} timed out after {}s", budget.as_secs_f64())]
    Timeout { what: String, budget: Duration },
    #[error("{what} printed more than {cap} bytes")]
    TooLarge { what: String, cap: usize },
    #[error("{what} failed ({status}): {stderr}")]
    Failed {
        what: String,
        status: String,
        stderr: String,
    },
    #[error("{what}: {detail}")]
    Malformed { what: String, detail: String },
}

impl Error {
    /// The reported error kind: a timeout is `timeout`, everything else `unavailable` (git
    /// gave no usable answer).
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Timeout { .. } => ErrorCode::Timeout,
            _ => ErrorCode::Unavailable,
        }
    }
}

impl herd_core::error::Report for Error {
    fn code(&self) -> ErrorCode {
        Error::code(self)
    }

    /// The error's own message: it already says everything its sources would.
    fn message(&self) -> String {
        self.to_string()
    }
}
