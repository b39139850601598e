//! `herd-launch` as its users run it: real processes on the process and tmux surfaces, with the
//! exec runner and a test child that follows the on-disk protocol (`scripts/child.sh`), and a
//! stand-in Pi (`scripts/fake-pi.sh`) for the Pi runner's command line.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test on any error"
)]

mod acknowledgement;
mod budget;
mod fallback;
mod fork;
mod pi_runner;
mod process;
mod refusal;
mod resume;
mod sandbox;
mod sandbox_net;
mod specialist;
mod support;
mod tmux;
mod worktree;
