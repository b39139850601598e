//! The shared library of the herd binaries.
//!
//! Everything here returns typed errors and never prints: only the binaries know about argv,
//! stdout, stderr and exit codes. The modules are the mechanisms the invariants of
//! ARCHITECTURE.md ("Invariants") rest on:
//!
//! - [`identity`]: who a PID is (start time, boot ID, PID namespace), judged again before every
//!   signal, and signals delivered through a pidfd.
//! - [`subprocess`]: the one place that spawns a child process, with a process group, a time
//!   budget, TERM → grace → KILL, and capped output.
//! - [`escape`]: the `<subagent_report>` block, host-line encoding and the message bound.
//! - [`sidecar`]: atomic writes and size-bounded, versioned reads of JSON files.
//! - [`exit`] and [`error`]: the one exit-code table and the error kinds that map onto it.

pub mod error;
pub mod escape;
pub mod exit;
pub mod identity;
pub mod lock;
pub mod sidecar;
pub mod subprocess;
pub mod suggest;
pub mod time;

pub use error::{Error, ErrorCode};
