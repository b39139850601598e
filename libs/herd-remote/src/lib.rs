//! Children on other machines, over OpenSSH.
//!
//! The transport is the system `ssh` ([`ssh::Ssh`]): it honours the user's `~/.ssh/config`,
//! shares one master connection per host, never prompts (`BatchMode=yes`) and never forwards
//! the agent. Every remote command is an argv quoted by the one function [`quote::command`],
//! framed by [`frame`]: the command line is one constant that every login shell reads alike, the
//! script goes on standard input, and herd reads only what follows its marker; request data
//! goes on standard input after the script. [`host`] holds the prepared hosts' records and how a
//! herd program runs on a host, behind a guard that checks herd's version there. [`stream`] is
//! a long-lived remote command (the relay's `herd-watch follow --json --ack`).
//!
//! The host boundary sits here: the local herd never signals, judges or cleans up a remote
//! process; it asks the remote's herd, through these calls, to do so.

pub mod frame;
pub mod host;
pub mod quote;
pub mod ssh;
pub mod stream;

pub use host::{HostRecord, Hosts};
pub use ssh::{Destination, Ssh};
