//! Confined children: every child runs in a sandbox that lets it change its own work and nothing
//! else, on every surface, failing closed.
//!
//! - [`policy`]: the modes (`read-only`, `workspace`, `off`) and the network (`on`, `off`, a list), and
//!   who may widen them: only the person's own configuration.
//! - [`config`]: that configuration, `[sandbox]` of `~/.config/herd/config.toml`.
//! - [`bwrap`]: the one place a child is confined, the bubblewrap command line in front of it.
//! - [`git`]: a confined worktree child's private refs and objects, and its branch brought home.
//! - [`landlock`]: the child's signals kept inside its sandbox.
//! - [`net`]: a network allowlist, enforced by a relay outside the sandbox.

pub mod bwrap;
pub mod config;
pub mod git;
pub mod landlock;
pub mod net;
pub mod policy;

pub use config::Config;
pub use policy::{Asked, Limits, Mode, Network, Policy};
