//! `herd-launch`: start a child — validate the request, place it on a surface, write its
//! sidecars, dispatch it, and capture its identity.

pub mod names;
pub mod policy;
pub mod script;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use herd_cli::{ArtifactsArgs, Output, not_yet_implemented};
use herd_core::Error;

/// Start Pi children (or any command) on a surface, with all state on disk.
#[derive(Debug, Parser)]
#[command(name = "herd-launch", version, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    pub artifacts: ArtifactsArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Launch a child from the `subagent` tool's parameters.
    Spawn(SpawnArgs),
    /// Resume a saved child session in a new pane, under its saved launch policy.
    Resume(ResumeArgs),
    /// Send the next task to an idle persistent specialist.
    Send(SendArgs),
    /// Record this process's identity beside the session, then exec the runner (used by launch
    /// scripts).
    Exec(ExecArgs),
}

/// Where a child runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SurfaceChoice {
    /// Herdr when inside Herdr, tmux when inside tmux, else a detached process.
    Auto,
    Herdr,
    Tmux,
    Process,
}

/// What the child is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RunnerChoice {
    /// The Pi CLI with the child extension.
    Pi,
    /// Any command given after `--`, without a shell; the task goes to its stdin.
    Exec,
}

#[derive(Debug, clap::Args)]
pub struct SpawnArgs {
    /// The `subagent` tool's parameters as JSON, from a file or `-` for stdin.
    #[arg(long, value_name = "FILE|-")]
    pub request: String,
    #[arg(long, value_enum, default_value_t = SurfaceChoice::Auto)]
    pub surface: SurfaceChoice,
    #[arg(long, value_enum, default_value_t = RunnerChoice::Pi)]
    pub runner: RunnerChoice,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
    /// The command of the `exec` runner.
    #[arg(last = true, value_name = "ARGV")]
    pub argv: Vec<OsString>,
}

#[derive(Debug, clap::Args)]
pub struct ResumeArgs {
    /// The child session `.jsonl` file to resume.
    #[arg(long, value_name = "FILE")]
    pub session: PathBuf,
    /// A message to send after resuming.
    #[arg(long)]
    pub message: Option<String>,
    /// Exit after the next response settles.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    pub auto_exit: bool,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("target").required(true))]
pub struct SendArgs {
    /// The run id of the specialist.
    #[arg(long, group = "target")]
    pub run: Option<String>,
    /// The exact, unambiguous name of the specialist.
    #[arg(long, group = "target")]
    pub name: Option<String>,
    /// The next task.
    #[arg(long)]
    pub message: String,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct ExecArgs {
    /// The identity record to write (`<session>.process.json`).
    #[arg(long, value_name = "FILE")]
    pub identity: PathBuf,
    /// The run id recorded in the identity.
    #[arg(long)]
    pub run_id: String,
    /// The session file recorded in the identity.
    #[arg(long, value_name = "FILE")]
    pub session: PathBuf,
    /// The runner's argv.
    #[arg(last = true, required = true, value_name = "ARGV")]
    pub argv: Vec<OsString>,
}

impl Cli {
    fn json(&self) -> bool {
        match &self.command {
            Command::Spawn(a) => a.json,
            Command::Resume(a) => a.json,
            Command::Send(a) => a.json,
            Command::Exec(_) => false,
        }
    }
}

/// The entry point of the binary.
pub fn main_impl(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    herd_cli::main(args, Cli::json, run)
}

pub fn run(cli: Cli) -> Result<Output, Error> {
    match cli.command {
        Command::Spawn(_) => Err(not_yet_implemented("herd-launch spawn")),
        Command::Resume(_) => Err(not_yet_implemented("herd-launch resume")),
        Command::Send(_) => Err(not_yet_implemented("herd-launch send")),
        Command::Exec(_) => Err(not_yet_implemented("herd-launch exec")),
    }
}
