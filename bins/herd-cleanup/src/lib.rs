//! `herd-cleanup`: inventory and explicit removal of managed worktrees, orphans, and a doctor for
//! hand recovery.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use herd_cli::{ArtifactsArgs, Output, not_yet_implemented};
use herd_core::Error;

/// List and explicitly remove managed worktrees; diagnose an artifacts directory.
#[derive(Debug, Parser)]
#[command(name = "herd-cleanup", version, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    pub artifacts: ArtifactsArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List managed worktrees whose source repositories lie under the session cwd.
    List {
        /// The invoking session's cwd [default: the current directory].
        #[arg(long, value_name = "DIR")]
        session_cwd: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Remove one managed worktree by exact path, branch or workspace id.
    Remove {
        target: String,
        /// Commit uncommitted work as a WIP commit first.
        #[arg(long)]
        preserve: bool,
        #[arg(long, value_name = "DIR")]
        session_cwd: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Check an artifacts directory for runs and files that need a hand.
    Doctor {
        #[arg(long)]
        json: bool,
    },
}

impl Cli {
    fn json(&self) -> bool {
        match &self.command {
            Command::List { json, .. } | Command::Remove { json, .. } | Command::Doctor { json } => *json,
        }
    }
}

/// The entry point of the binary.
pub fn main_impl(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    herd_cli::main(args, Cli::json, run)
}

pub fn run(cli: Cli) -> Result<Output, Error> {
    match cli.command {
        Command::List { .. } => Err(not_yet_implemented("herd-cleanup list")),
        Command::Remove { .. } => Err(not_yet_implemented("herd-cleanup remove")),
        Command::Doctor { .. } => Err(not_yet_implemented("herd-cleanup doctor")),
    }
}
