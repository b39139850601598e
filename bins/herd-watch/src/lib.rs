//! `herd-watch`: supervise children — status, widget, stall watchdog, result delivery exactly
//! once, and control (cancel, interrupt, stop, steer).

pub mod delivery;
pub mod evidence;
pub mod projection;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use herd_cli::{ArtifactsArgs, Output, not_yet_implemented};
use herd_core::Error;

/// Supervise herd children and deliver their results exactly once.
#[derive(Debug, Parser)]
#[command(name = "herd-watch", version, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    pub artifacts: ArtifactsArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// One run, by id or by exact unambiguous name.
#[derive(Debug, Clone, clap::Args)]
#[command(group = clap::ArgGroup::new("target").required(true))]
pub struct Target {
    /// The run id.
    #[arg(long, group = "target")]
    pub run: Option<String>,
    /// The exact, unambiguous display name.
    #[arg(long, group = "target")]
    pub name: Option<String>,
}

#[derive(Debug, Clone, clap::Args)]
pub struct Control {
    #[command(flatten)]
    pub target: Target,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Supervise one run until it is terminal, deliver its result and print it.
    Wait {
        #[command(flatten)]
        target: Target,
        #[arg(long)]
        json: bool,
    },
    /// Supervise every run of the artifacts directory, printing events as JSON Lines.
    Follow {
        /// Keep running when no run is left.
        #[arg(long)]
        forever: bool,
        #[arg(long)]
        json: bool,
    },
    /// Show the status projection of one run or all runs.
    Status {
        #[arg(long, conflicts_with = "name")]
        run: Option<String>,
        #[arg(long)]
        name: Option<String>,
        /// Draw the widget as Pi shows it.
        #[arg(long)]
        widget: bool,
        /// Show the run's transcript.
        #[arg(long)]
        transcript: bool,
        /// Lines of transcript to show (at most 500).
        #[arg(long, default_value_t = 50)]
        lines: usize,
        #[arg(long)]
        json: bool,
    },
    /// Cancel a running non-persistent child.
    Cancel(Control),
    /// Send Escape to a running child's active turn.
    Interrupt(Control),
    /// Stop a persistent specialist after its active task finishes.
    Stop(Control),
    /// Steer a running child with a message.
    Steer {
        #[command(flatten)]
        target: Target,
        #[arg(long)]
        message: String,
        #[arg(long, value_enum, default_value_t = SteerMode::Auto)]
        mode: SteerMode,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SteerMode {
    Steer,
    FollowUp,
    Auto,
}

impl Cli {
    fn json(&self) -> bool {
        match &self.command {
            Command::Wait { json, .. }
            | Command::Follow { json, .. }
            | Command::Status { json, .. } => *json,
            Command::Steer { json, .. } => *json,
            Command::Cancel(c) | Command::Interrupt(c) | Command::Stop(c) => c.json,
        }
    }
}

/// The entry point of the binary.
pub fn main_impl(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    herd_cli::main(args, Cli::json, run)
}

pub fn run(cli: Cli) -> Result<Output, Error> {
    let name = match cli.command {
        Command::Wait { .. } => "wait",
        Command::Follow { .. } => "follow",
        Command::Status { .. } => "status",
        Command::Cancel(_) => "cancel",
        Command::Interrupt(_) => "interrupt",
        Command::Stop(_) => "stop",
        Command::Steer { .. } => "steer",
    };
    Err(not_yet_implemented(&format!("herd-watch {name}")))
}

/// The environment variable naming a point at which herd-watch kills itself, for crash tests.
pub const CRASH_AT_ENV: &str = "HERD_WATCH_CRASH_AT";

/// Kills this process with SIGKILL when `HERD_WATCH_CRASH_AT` names `point`.
///
/// The crash tests use it to stop herd-watch at exact points of a lifecycle; it costs one
/// environment lookup otherwise.
pub(crate) fn crash_point(point: &str) {
    if std::env::var_os(CRASH_AT_ENV).is_some_and(|v| v == point) {
        // SAFETY: raising a signal on our own process.
        unsafe {
            libc::raise(libc::SIGKILL);
        }
    }
}
