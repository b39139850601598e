//! `herd-accept`: accept checks (seed 003) and acceptance reports (seed 004).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use herd_cli::{Output, not_yet_implemented};
use herd_core::Error;

/// Run accept checks, decide verdicts, and parse acceptance reports.
#[derive(Debug, Parser)]
#[command(name = "herd-accept", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// How a child's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RunOutcome {
    Completed,
    Failed,
    Cancelled,
    Help,
    ProviderError,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the check once in DIR.
    Check {
        /// The accept spec `{run, maxRetries, timeoutSec, paths}`.
        #[arg(long, value_name = "FILE")]
        spec: PathBuf,
        /// Where the check runs.
        #[arg(long, value_name = "DIR")]
        cwd: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// The parent re-check: decide the verdict and print the `Check:` line.
    Verdict {
        #[arg(long, value_name = "FILE")]
        spec: PathBuf,
        #[arg(long, value_name = "DIR")]
        cwd: PathBuf,
        /// How the child's run ended.
        #[arg(long, value_enum)]
        outcome: RunOutcome,
        /// How many times the child ran the check.
        #[arg(long)]
        tries: Option<u32>,
        /// What the child reported of its own last check.
        #[arg(long, value_name = "pass|fail")]
        child_reported: Option<String>,
        /// The handoff's changed and untracked files, one per line.
        #[arg(long, value_name = "FILE")]
        changed_files: Option<PathBuf>,
        /// The re-check ran in an ordinary child's cwd.
        #[arg(long)]
        shared_checkout: bool,
        #[arg(long)]
        json: bool,
    },
    /// Parse an acceptance report from a child's output on stdin and apply the gates.
    Report {
        #[arg(long)]
        level: Option<String>,
        #[arg(long, value_name = "FILE")]
        criteria: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

impl Cli {
    fn json(&self) -> bool {
        match &self.command {
            Command::Check { json, .. } | Command::Verdict { json, .. } | Command::Report { json, .. } => *json,
        }
    }
}

/// The entry point of the binary.
pub fn main_impl(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    herd_cli::main(args, Cli::json, run)
}

pub fn run(cli: Cli) -> Result<Output, Error> {
    match cli.command {
        Command::Check { .. } => Err(not_yet_implemented("herd-accept check")),
        Command::Verdict { .. } => Err(not_yet_implemented("herd-accept verdict")),
        Command::Report { .. } => Err(not_yet_implemented("herd-accept report")),
    }
}
