//! The one place that starts child processes: a time budget, a process group, TERM → grace →
//! KILL, and capped output.
//!
//! Every external call herd makes (git, tmux, herdr, the accept command) goes through [`run`] or
//! [`run_with_cancel`]; clippy's `disallowed-methods` keeps `std::process::Command` out of every
//! other module. The guarantees:
//!
//! - **Nothing waits without a deadline.** A [`Command`] cannot be built without a budget. When
//!   it runs out, the child's process group gets SIGTERM, then SIGKILL after the grace period
//!   (default [`DEFAULT_GRACE`]), and [`Output::timed_out`] says so.
//! - **The whole group goes.** The child leads a process group of its own. When the child
//!   exits on its own, whatever else is left in its group gets the same SIGTERM, grace period
//!   and SIGKILL, and [`run`] returns only once no member of the group is running. The child
//!   itself is not reaped until the group has been dealt with, so the group ID cannot be reused
//!   by an unrelated process while herd still signals it.
//! - **Nothing reads without a bound.** stdout and stderr are drained concurrently, each into a
//!   buffer that never holds more than its cap (default [`DEFAULT_CAP`]), keeping the head or the
//!   tail as asked; the total byte count and a `truncated` flag say what was dropped.
//! - **Filtered environments.** Variables can be removed by name, by prefix (every
//!   `PI_SUBAGENT_*`), or all at once, and set, in the order the builder calls say.
//!
//! # Limits
//!
//! A process that leaves the group (`setsid`, `setpgid`) is out of reach: it is neither signalled
//! nor waited for. If it still holds the child's stdout or stderr, [`run`] stops reading once the
//! group is gone and returns what it has; later output is lost. Without cgroups there is no
//! reliable way to follow such a process, and herd does not try.
//!
//! Members of the group other than the child are reparented when the child exits and are reaped
//! by whichever process adopts them, not by herd: init, or herd itself after [`adopt_orphans`],
//! which leaves them zombies until it exits. A member that is dead but not yet reaped (a zombie)
//! counts as gone.
//!
//! # Other entry points
//!
//! - [`spawn_detached`] starts a child in a session of its own, with output appended to log
//!   files, and returns its PID without waiting: the caller supervises it through
//!   [`crate::identity`].
//! - [`TerminationSignals`] turns SIGTERM and SIGINT of the current process into a [`Cancel`]
//!   that [`run_with_cancel`] polls with the child's pipes; [`termination_signals`] turns them
//!   into messages on a channel, for code that selects over channels.
//! - [`sibling_binary`] is how one herd binary finds another.
//!
//! # Code map
//!
//! `spec` and `command` say what to run; `foreground` runs it on the caller's thread, `watch`
//! looping over one `poll` of the pipes and the leader's pidfd to the deadlines, `pump` moving
//! the bytes into `capture`'s bounded buffers and `group` dealing with the process group;
//! `detached`, `signals` and `exec` are the other entry points.

mod capture;
mod command;
mod detached;
mod error;
mod exec;
mod foreground;
mod group;
mod pump;
mod signals;
mod spec;
mod watch;

use std::time::Duration;

pub use capture::{Captured, Keep};
pub use command::{Command, Output};
pub use detached::{Detached, spawn_detached};
pub use error::Error;
pub use exec::{exec_replace, sibling_binary};
pub use foreground::{run, run_with_cancel};
pub use group::adopt_orphans;
pub use signals::{Cancel, Taken, TerminationSignals, termination_signals};

/// The grace period between SIGTERM and SIGKILL unless the command says otherwise.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(5);

/// The cap of each captured stream unless the command says otherwise: 1 MiB.
pub const DEFAULT_CAP: usize = 1024 * 1024;

/// The longest budget or grace period a command accepts; anything longer is a mistake.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// The environment variable that overrides where [`sibling_binary`] looks.
pub const BIN_DIR_ENV: &str = "HERD_BIN_DIR";
