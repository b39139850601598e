//! The test kit: the end-to-end scenarios' support, and what every package's tests share.
//!
//! The scenarios run the real binaries. `cargo test --workspace` builds every binary of the
//! workspace into the target directory before any test runs; [`bin`] finds them there.
//!
//! What every package's tests share: [`git`] makes hermetic repositories, [`cli`] runs one herd
//! binary with a deadline and captures what it printed, [`redact`] makes that text stable for a
//! snapshot, and [`wait::wait_for`] is every wait, with its deadline.
//!
//! The real Pi CLI is the child: [`model`] is a scripted model server on 127.0.0.1, [`pi`]
//! finds the pinned Pi and builds its isolated environment, [`session`] reads its session
//! files, [`tmux`] is a private tmux server, [`herdr`] a private headless Herdr server, [`herd`]
//! runs the herd binaries over one artifacts directory on the process or tmux surface, [`ssh`]
//! is another machine (a real OpenSSH server in a namespace of its own), and the other children
//! (Pi, tmux, Herdr) run through [`proc::run`] with a deadline.

pub mod cli;
pub mod herd;
pub mod herdr;
pub mod model;
pub mod pi;
pub mod proc;
pub mod redact;
pub mod rpc;
pub mod session;
pub mod ssh;
pub mod tmux;
pub mod wait;

/// Hermetic git repositories: herd-git's fixture, the one every package's tests use.
pub use herd_git::testkit as git;

use std::path::PathBuf;

/// The six binaries, by name.
pub const BINARIES: [&str; 6] = [
    "herd-launch",
    "herd-watch",
    "herd-accept",
    "herd-worktree",
    "herd-cleanup",
    "herd-docs",
];

/// Returns the path of a herd binary of this build.
///
/// # Panics
///
/// When the binary was not built, with the command that builds it.
pub fn bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary knows its own path");
    // target/<profile>/deps/e2e-… → target/<profile>/<name>
    let dir = exe
        .parent()
        .and_then(|p| p.parent())
        .expect("test binaries live in target/<profile>/deps");
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is missing: run the tests with `cargo test --workspace`",
        path.display()
    );
    path
}
