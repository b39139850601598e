//! The typed client of the Herdr CLI that every herd binary uses.
//!
//! [`Herdr`] runs `herdr <command> …` once per call, under a time budget and with capped
//! output, and reads the reply strictly: a reply of an unexpected shape is an [`Error`] naming
//! the command, never a success. The calls and the fields they read are those of
//! pi-herdr-agents (docs/protocol.md, "Herdr"); every argv is one a real Herdr was recorded
//! accepting.
//!
//! With the `test-double` feature, `double` replays those recordings as a stand-in `herdr`
//! executable, and `recording` reads them.

pub mod budget;
mod client;
mod error;
mod json;
mod reply;
mod transport;
mod types;

#[cfg(any(test, feature = "test-double"))]
pub mod double;
#[cfg(any(test, feature = "test-double"))]
pub mod recording;

pub use client::{
    BIN_ENV, Direction, Herdr, PANE_BIN_ENV, ReadSource, Source, WorktreeCreate, available,
    available_with, program,
};
pub use error::{Error, PANE_MISSING_CODES};
pub use types::{
    AgentStatus, ForegroundProcess, PaneInfo, PaneLayout, PaneList, PaneRect, PaneState,
    ProcessInfo, Recovery, TabCreated, WorkspaceInfo, WorkspaceWorktree, Worktree, WorktreeCreated,
    WorktreeInfo, WorktreeList, WorktreeRemoved, WorktreeRepo,
};
