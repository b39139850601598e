//! The `herd-accept` binary end to end: real shells, real process trees, real git, real signals.

#![expect(
    clippy::unwrap_used,
    reason = "a test fails loudly on the first thing that is not as expected"
)]

mod check;
mod report;
mod signals;
mod support;
mod verdict;
