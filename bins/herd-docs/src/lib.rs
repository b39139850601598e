//! `herd-docs`: generate and check the documentation tables from the tool schemas.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use herd_cli::{Output, not_yet_implemented};
use herd_core::Error;

/// Regenerate (or check) the generated blocks of the docs from the schemas.
#[derive(Debug, Parser)]
#[command(name = "herd-docs", version, about, long_about = None)]
pub struct Cli {
    /// Change nothing; exit 1 naming each stale block.
    #[arg(long)]
    pub check: bool,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the tool registry.
    Schemas {
        #[arg(long)]
        json: bool,
    },
}

impl Cli {
    fn json(&self) -> bool {
        matches!(self.command, Some(Command::Schemas { json: true }))
    }
}

/// The entry point of the binary.
pub fn main_impl(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    herd_cli::main(args, Cli::json, run)
}

pub fn run(cli: Cli) -> Result<Output, Error> {
    match cli.command {
        None => Err(not_yet_implemented("herd-docs")),
        Some(Command::Schemas { .. }) => Err(not_yet_implemented("herd-docs schemas")),
    }
}
