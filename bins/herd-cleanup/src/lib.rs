//! `herd-cleanup`: inventory and explicit removal of managed worktrees, orphans, and a doctor for
//! hand recovery.
//!
//! - [`paths`]: canonicalisation with `lstat`/`readlink` only, and discovery under the managed
//!   root that never lists a directory before its containment is proven.
//! - [`holders`]: the `/proc` scan for processes whose cwd is inside a checkout.
//! - [`inspect`]: everything eligibility rests on, read fresh, with every blocker named.
//! - [`remove`]: target resolution, preservation, removal and the manifest update.
//! - [`doctor`]: what herd needs and sees.
//! - [`report`]: the human and JSON forms.
//! - `bench` (feature `bench`): the measurements `cargo xtask bench` runs.

#[cfg(feature = "bench")]
pub mod bench;
pub mod doctor;
pub mod holders;
pub mod inspect;
pub mod paths;
pub mod remote;
pub mod remove;
pub mod report;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use herd_cli::{ArtifactsArgs, Output};
use herd_core::{Error, ErrorCode, exit};
use herd_git::Git;
use herd_herdr::Herdr;

use crate::inspect::{Context, Depth, Entry};

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
        /// The invoking session's cwd [default: the current directory; with --host, herd's
        /// directory on the host, which holds the clones its worktree children are made from].
        #[arg(long, value_name = "DIR")]
        session_cwd: Option<PathBuf>,
        /// List on this prepared host, by the host's own herd-cleanup (`herd-launch host add`).
        #[arg(long, value_name = "HOST")]
        host: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Remove one managed worktree by exact path, branch or workspace id.
    Remove {
        target: String,
        /// Commit uncommitted work as a WIP commit first.
        #[arg(long)]
        preserve: bool,
        /// The invoking session's cwd [default: as for list].
        #[arg(long, value_name = "DIR")]
        session_cwd: Option<PathBuf>,
        /// Remove on this prepared host, by the host's own herd-cleanup, under the same rules.
        #[arg(long, value_name = "HOST")]
        host: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Check what herd needs (git, tmux, Herdr, a Pi that starts, /proc, the artifacts directory)
    /// and list runs that need a hand. The other artifacts directories this user launched from
    /// (the index under the per-user state directory) are counted too: `other directories`
    /// says how many of their runs need a hand, and where (not fatal: each has its own doctor).
    ///
    /// Exits 0 when everything herd needs here is fine and no run needs a hand, else 1, with what
    /// is wrong on its own line.
    Doctor {
        #[arg(long)]
        json: bool,
    },
}

impl Cli {
    fn json(&self) -> bool {
        match &self.command {
            Command::List { json, .. }
            | Command::Remove { json, .. }
            | Command::Doctor { json } => *json,
        }
    }
}

/// The entry point of the binary.
pub fn main_impl(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    herd_cli::main(args, Cli::json, run)
}

pub fn run(cli: Cli) -> Result<Output, Error> {
    let json = cli.json();
    match cli.command {
        Command::List {
            session_cwd,
            host: Some(host),
            ..
        } => {
            let artifacts = cli.artifacts.resolve()?;
            let cwd = host_path(session_cwd.as_deref())?;
            remote::run(&host, artifacts.root(), &["list"], cwd.as_deref(), json)
        }
        Command::Remove {
            target,
            preserve,
            session_cwd,
            host: Some(host),
            ..
        } => {
            let artifacts = cli.artifacts.resolve()?;
            let cwd = host_path(session_cwd.as_deref())?;
            let mut args = vec!["remove"];
            if preserve {
                args.push("--preserve");
            }
            // The target is the host's (a path there, a branch, a workspace id), after `--`.
            args.extend(["--", target.as_str()]);
            remote::run(&host, artifacts.root(), &args, cwd.as_deref(), json)
        }
        Command::List { session_cwd, .. } => {
            let mut ctx = context(&cli.artifacts, session_cwd)?;
            let (entries, warnings) = list(&mut ctx)?;
            Ok(Output::ok(
                report::list_document(&ctx.root, &ctx.session_cwd, &entries, &warnings),
                report::list_human(&ctx.root, &ctx.session_cwd, &entries, &warnings),
            ))
        }
        Command::Remove {
            target,
            preserve,
            session_cwd,
            ..
        } => {
            let mut ctx = context(&cli.artifacts, session_cwd)?;
            let discovery = discover(&ctx)?;
            let removal = remove::remove(&mut ctx, &discovery, &target, preserve)?;
            Ok(Output::ok(&removal, report::removal_human(&removal))
                .with_exit(removal.outcome.exit_code()))
        }
        Command::Doctor { .. } => {
            let setup = doctor::Setup::from_env(cli.artifacts.resolve());
            let report = doctor::doctor(&setup);
            // Something is wrong here: a valid negative answer (see the doctor's module docs).
            let exit = if report.ok {
                exit::SUCCESS
            } else {
                exit::NEGATIVE
            };
            Ok(Output::ok(&report, doctor::human(&report)).with_exit(exit))
        }
    }
}

/// A `--session-cwd` given with `--host`: a path on the host, as text.
fn host_path(dir: Option<&std::path::Path>) -> Result<Option<String>, Error> {
    dir.map(|d| {
        d.to_str().map(str::to_owned).ok_or_else(|| {
            Error::invalid("--session-cwd", "a directory on a host must be valid UTF-8")
        })
    })
    .transpose()
}

/// The tools and scope of a `list` or `remove`.
fn context(artifacts: &ArtifactsArgs, session_cwd: Option<PathBuf>) -> Result<Context, Error> {
    let artifacts = artifacts.resolve()?;
    let cwd = match session_cwd {
        Some(dir) => dir,
        None => std::env::current_dir().map_err(|e| {
            Error::new(
                ErrorCode::Unavailable,
                format!("cannot read the current directory: {e}"),
            )
        })?,
    };
    let session_cwd = paths::resolve(&cwd).map_err(|e| {
        Error::invalid(
            "--session-cwd",
            format!(
                "cannot resolve the session cwd {}: {e}",
                inspect::shown_path(&cwd)
            ),
        )
    })?;
    if !session_cwd.is_dir() {
        return Err(Error::invalid(
            "--session-cwd",
            format!(
                "the session cwd {} is not a directory",
                inspect::shown_path(&session_cwd)
            ),
        ));
    }
    let root = herd_protocol::layout::managed_root()?;
    // Reads never take git's optional locks (an index refresh), so inspecting a checkout does
    // not change it, and a concurrent writer is never made to fail.
    let git = Git::from_env().env("GIT_OPTIONAL_LOCKS", "0");
    let herdr_env = std::env::var_os("HERDR_ENV");
    let mut notes = Vec::new();
    let herdr = if herdr_env.as_deref() == Some(std::ffi::OsStr::new("1")) {
        if herd_herdr::available() {
            Some(Herdr::from_env().with_budget(herd_herdr::budget::CLEANUP))
        } else {
            notes.push(
                "HERDR_ENV=1 but herdr was not found: \
                 open Herdr workspaces cannot be seen or closed"
                    .to_owned(),
            );
            None
        }
    } else {
        None
    };
    let mut ctx = Context::new(git, herdr, artifacts, session_cwd, root);
    ctx.notes = notes;
    Ok(ctx)
}

fn discover(ctx: &Context) -> Result<paths::Discovery, Error> {
    paths::discover(&ctx.root).map_err(|e| Error::new(ErrorCode::Unavailable, e.to_string()))
}

/// The inventory: every entry of the managed root, inspected in full (out-of-scope entries only
/// as far as their source). One process scan serves every entry. Returns the entries and the
/// warnings that concern all of them (shown once).
fn list(ctx: &mut Context) -> Result<(Vec<Entry>, Vec<String>), Error> {
    let discovery = discover(ctx)?;
    let targets: Vec<PathBuf> = discovery
        .found
        .iter()
        .filter_map(|f| match f {
            paths::Found::Checkout { canonical, .. } => Some(canonical.clone()),
            _ => None,
        })
        .collect();
    let scan = if targets.is_empty() {
        None
    } else {
        Some(holders::scan(&targets))
    };
    ctx.prefetch(&targets);
    let entries: Vec<Entry> = discovery
        .found
        .iter()
        .map(|found| inspect::inspect(ctx, found, Depth::Full, scan.as_ref()))
        .collect();
    // What the scan cannot see, and what every entry shares, is said once for the listing.
    let mut shared = ctx.notes.clone();
    if let Some(scan) = &scan {
        shared.extend(inspect::scan_warnings(scan));
    }
    Ok((entries, shared))
}
