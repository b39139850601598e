//! The time budgets and output cap of Herdr calls (docs/lifecycle.md, "Budgets"). A budget
//! bounds one call; the caller picks the one its operation has.

use std::time::Duration;

/// An ordinary Herdr request: the default of every [`crate::Herdr`].
pub const ORDINARY: Duration = Duration::from_secs(10);

/// A cosmetic pane, tab or workspace rename, whose failure is ignored.
pub const RENAME: Duration = Duration::from_secs(1);

/// Each primary-workspace snapshot (`worktree list`, `pane list`, `workspace get`).
pub const SNAPSHOT: Duration = Duration::from_secs(3);

/// The whole recovery inspection after an uncertain worktree creation.
pub const RECOVERY: Duration = Duration::from_secs(6);

/// Each Herdr call of cleanup (`worktree remove`, `workspace close`).
pub const CLEANUP: Duration = Duration::from_secs(30);

/// The bytes captured per output stream; a reply beyond it is malformed.
pub const OUTPUT_CAP: usize = 1024 * 1024;
