//! `herd-worktree`: managed worktrees, their ownership manifests, and the handoff.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use herd_cli::{ArtifactsArgs, Output, not_yet_implemented};
use herd_core::Error;

/// Create managed git worktrees, track their manifests, and inspect the handoff.
#[derive(Debug, Parser)]
#[command(name = "herd-worktree", version, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    pub artifacts: ArtifactsArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WorktreeSurface {
    Herdr,
    Git,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create a managed worktree on a new branch, manifest first.
    Create {
        /// The source repository.
        #[arg(long, value_name = "SRC")]
        cwd: PathBuf,
        /// The new branch; it must not exist.
        #[arg(long)]
        branch: String,
        /// The revision to branch from [default: the committed HEAD of SRC].
        #[arg(long, value_name = "REV")]
        base: Option<String>,
        #[arg(long)]
        run_id: String,
        #[arg(long, value_enum)]
        surface: Option<WorktreeSurface>,
        #[arg(long)]
        label: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Inspect a worktree for the handoff: head, commits ahead, changed and untracked files.
    Inspect {
        #[arg(long, value_name = "WT")]
        path: PathBuf,
        #[arg(long, value_name = "SHA")]
        base: String,
        #[arg(long)]
        json: bool,
    },
    /// Show one ownership manifest.
    Show {
        #[arg(long)]
        run_id: String,
        #[arg(long)]
        json: bool,
    },
}

impl Cli {
    fn json(&self) -> bool {
        match &self.command {
            Command::Create { json, .. } | Command::Inspect { json, .. } | Command::Show { json, .. } => *json,
        }
    }
}

/// The entry point of the binary.
pub fn main_impl(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    herd_cli::main(args, Cli::json, run)
}

pub fn run(cli: Cli) -> Result<Output, Error> {
    match cli.command {
        Command::Create { .. } => Err(not_yet_implemented("herd-worktree create")),
        Command::Inspect { .. } => Err(not_yet_implemented("herd-worktree inspect")),
        Command::Show { .. } => Err(not_yet_implemented("herd-worktree show")),
    }
}
