//! `herd-accept`: accept checks (docs/lifecycle.md, "Accept checks") and acceptance reports
//! (docs/tools.md, "Acceptance gates").
//!
//! The library is what other herd programs call in-process: [`spec::AcceptSpec`] reads and
//! writes accept specs, [`check::run_check`] runs a check once, [`verdict::verdict`] runs the
//! parent re-check and renders the `Check:` line, and [`report`] applies acceptance gates to a
//! child's output. [`run`] is the command line over them.

pub mod bench;
pub mod check;
pub mod report;
pub mod spec;
pub mod tail;
pub mod verdict;

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use herd_cli::Output;
use herd_core::{Error, ErrorCode, sidecar, subprocess};
use herd_protocol::accept::{AcceptCheck, ChildReport, RunOutcome};

pub use check::run_check;
use herd_protocol::accept::CheckOutcome;
pub use spec::AcceptSpec;
pub use verdict::{VerdictRequest, decide, verdict};

/// The largest child output `report` reads from stdin.
pub const REPORT_INPUT_LIMIT: u64 = 4 * 1024 * 1024;
/// The largest `--changed-files` list read.
pub const CHANGED_FILES_LIMIT: u64 = 4 * 1024 * 1024;
/// The largest `--acceptance` file read.
pub const ACCEPTANCE_FILE_LIMIT: u64 = 1024 * 1024;

/// Run accept checks, decide verdicts, and apply acceptance gates.
#[derive(Debug, Parser)]
#[command(name = "herd-accept", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the check once in DIR: exit 0 passed, 1 failed, 4 no answer.
    ///
    /// Runs `sh -c <run>` in its own process group without any PI_SUBAGENT_* variable. On its
    /// timeout the group gets SIGTERM, then SIGKILL 5 s later; on SIGTERM or SIGINT to
    /// herd-accept, SIGTERM then SIGKILL 1 s later. Reports the last 4,000 characters of output.
    Check {
        /// The accept spec: `{run, maxRetries?, timeoutSec?, paths?}` or the versioned file.
        #[arg(long, value_name = "FILE")]
        spec: PathBuf,
        /// Where the check runs.
        #[arg(long, value_name = "DIR")]
        cwd: PathBuf,
        /// Print one JSON document on stdout.
        #[arg(long)]
        json: bool,
    },
    /// The parent re-check: decide the verdict and print the `Check:` line.
    ///
    /// Exit 0 accepted (or none), 1 rejected, 4 error, 5 skipped.
    Verdict {
        /// The accept spec; without it the verdict is `none`.
        #[arg(long, value_name = "FILE")]
        spec: Option<PathBuf>,
        /// Where the re-check runs: the worktree of a worktree child, else its cwd.
        /// Required when a spec is given and the outcome is `completed`.
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// How the child's run ended.
        #[arg(long, value_enum)]
        outcome: RunOutcome,
        /// How many times the child ran the check.
        #[arg(long, value_name = "N")]
        tries: Option<u32>,
        /// What the child reported of its own last check.
        #[arg(long, value_enum, value_name = "pass|fail")]
        child_reported: Option<ChildReport>,
        /// The handoff's changed and untracked files, one per line.
        #[arg(long, value_name = "FILE")]
        changed_files: Option<PathBuf>,
        /// The re-check runs in an ordinary child's cwd, which others may share.
        #[arg(long)]
        shared_checkout: bool,
        /// Also write the details record to FILE (atomically).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Print one JSON document on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Apply an acceptance gate to a child's output read from stdin: exit 0 when it holds,
    /// 1 when rejected, 5 when verification was cancelled.
    Report {
        /// The level inferred for this run: none, attested, checked, verified (or auto:
        /// attested). An explicit level in the acceptance file may raise it, never lower it.
        #[arg(long, value_name = "L")]
        level: Option<String>,
        /// The acceptance configuration: the `acceptance` value, or `{"acceptance": …}` /
        /// `{"gate": "<command>"}`.
        #[arg(long, visible_alias = "criteria", value_name = "FILE")]
        acceptance: Option<PathBuf>,
        /// The run's directory: verify commands run here and its git index is read.
        #[arg(long, value_name = "DIR", default_value = ".")]
        cwd: PathBuf,
        /// Print one JSON document on stdout.
        #[arg(long)]
        json: bool,
    },
}

impl Cli {
    fn json(&self) -> bool {
        match &self.command {
            Command::Check { json, .. }
            | Command::Verdict { json, .. }
            | Command::Report { json, .. } => *json,
        }
    }
}

/// The entry point of the binary.
pub fn main_impl(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    // Every command herd-accept runs is a check of its own; adopting what they leave behind
    // lets a finished check's group be known empty without a scan of `/proc`.
    subprocess::adopt_orphans();
    herd_cli::main(args, Cli::json, run)
}

pub fn run(cli: Cli) -> Result<Output, Error> {
    match cli.command {
        Command::Check { spec, cwd, .. } => run_check_command(&spec, &cwd),
        Command::Verdict {
            spec,
            cwd,
            outcome,
            tries,
            child_reported,
            changed_files,
            shared_checkout,
            out,
            ..
        } => {
            let spec = spec.as_deref().map(AcceptSpec::load).transpose()?;
            let changed = match &changed_files {
                Some(path) => read_changed_files(path)?,
                None => Vec::new(),
            };
            let runs_check = spec.is_some() && outcome == RunOutcome::Completed;
            if runs_check && cwd.is_none() {
                return Err(Error::invalid(
                    "cwd",
                    "is required to run the re-check of a completed run",
                ));
            }
            let cwd = cwd.unwrap_or_default();
            let req = VerdictRequest {
                spec: spec.as_ref(),
                cwd: &cwd,
                outcome,
                tries,
                child_reported,
                changed_files: &changed,
                shared_checkout,
            };
            let details = if runs_check {
                let signals = subprocess::TerminationSignals::install().map_err(Error::from)?;
                verdict::verdict(&req, &signals)
            } else {
                decide(&req, None)
            };
            if let Some(path) = &out {
                sidecar::write_json(path, &details)
                    .map_err(|err| Error::from(err).with_field("out"))?;
            }
            let json =
                serde_json::to_value(&details).map_err(|err| Error::internal(err.to_string()))?;
            Ok(Output::ok(json, details.human()).with_exit(details.exit_code()))
        }
        Command::Report {
            level,
            acceptance,
            cwd,
            ..
        } => run_report(level.as_deref(), acceptance.as_deref(), &cwd),
    }
}

fn run_check_command(spec_path: &Path, cwd: &Path) -> Result<Output, Error> {
    let spec = AcceptSpec::load(spec_path)?;
    let signals = subprocess::TerminationSignals::install().map_err(Error::from)?;
    let run = run_check(&spec, cwd, &signals);
    let mut human = run.summary(spec.timeout_sec);
    if !run.output.is_empty() && run.outcome != CheckOutcome::Passed {
        human.push('\n');
        human.push_str(&run.output);
    }
    let exit = run.outcome.exit_code();
    let doc = AcceptCheck::new(
        run,
        spec.sha256(),
        cwd.display().to_string(),
        spec.timeout_sec,
    );
    Ok(Output::ok(doc, human).with_exit(exit))
}

/// Reads the handoff's file list: one name per line, empty lines skipped.
pub fn read_changed_files(path: &Path) -> Result<Vec<String>, Error> {
    let bytes = sidecar::read_given(path, CHANGED_FILES_LIMIT)
        .map_err(|err| Error::from(err).with_field("changed-files"))?
        .ok_or_else(|| {
            Error::not_found(format!("{} does not exist", path.display()))
                .with_field("changed-files")
        })?;
    Ok(String::from_utf8_lossy(&bytes)
        .split('\n')
        .filter(|line| !line.is_empty())
        .map(str::to_owned)
        .collect())
}

fn run_report(level: Option<&str>, acceptance: Option<&Path>, cwd: &Path) -> Result<Output, Error> {
    // Everything the caller configured is validated before anything is read or run.
    let inferred = match level {
        Some(text) => {
            report::config::parse_inferred_level(text).map_err(report::Diagnostics::into_error)?
        }
        None => herd_protocol::accept::Level::Attested,
    };
    let input = match acceptance {
        Some(path) => {
            let bytes = sidecar::read_given(path, ACCEPTANCE_FILE_LIMIT)
                .map_err(|err| Error::from(err).with_field("acceptance"))?
                .ok_or_else(|| {
                    Error::not_found(format!("{} does not exist", path.display()))
                        .with_field("acceptance")
                })?;
            let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|err| {
                Error::invalid(
                    "acceptance",
                    format!("{} is not valid JSON: {err}", path.display()),
                )
            })?;
            report::config::parse_input(&value).map_err(report::Diagnostics::into_error)?
        }
        None => report::AcceptanceInput::Omitted,
    };
    let gate = report::config::resolve(&input, inferred);
    if !gate.verify.is_empty() && !cwd.is_dir() {
        return Err(Error::new(
            ErrorCode::NotFound,
            format!("{} is not an existing directory", cwd.display()),
        )
        .with_field("cwd"));
    }
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(REPORT_INPUT_LIMIT + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| {
            Error::new(
                ErrorCode::Unavailable,
                format!("cannot read the child's output from stdin: {err}"),
            )
        })?;
    if bytes.len() as u64 > REPORT_INPUT_LIMIT {
        return Err(Error::invalid(
            "stdin",
            format!("the child's output is larger than {REPORT_INPUT_LIMIT} bytes"),
        ));
    }
    let output = String::from_utf8_lossy(&bytes);
    let signals = subprocess::TerminationSignals::install().map_err(Error::from)?;
    let mut host = report::host::RealHost::new(&signals);
    let ledger = report::evaluate(&gate, &output, cwd, &mut host);
    let json = serde_json::to_value(&ledger).map_err(|err| Error::internal(err.to_string()))?;
    Ok(Output::ok(json, report::human(&ledger)).with_exit(ledger.exit_code()))
}
