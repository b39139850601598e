//! `herd-worktree`: managed worktrees, their ownership manifests, and the handoff.
//!
//! The library is what the other binaries use:
//! - [`manifest`]: the ownership manifest `worktree-runs/<run-id>.json`, its states and the
//!   ownership question cleanup asks;
//! - [`create`]: a managed worktree on a new branch, manifest first;
//! - [`handoff`]: inspecting a worktree when its child is done, and the host lines reporting it;
//! - [`list`]: the repository-local listing a child sees.
//!
//! [`run`] is the command line over them.

mod approve;
pub mod create;
pub mod handoff;
pub mod list;
pub mod setup;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use herd_cli::{ArtifactsArgs, Output};
use herd_core::escape::encode_host_value;
use herd_core::{Error, exit};
use herd_git::{Deadline, Git, budget};

use crate::create::{CreateEnv, CreateRequest};
use herd_protocol::worktree::Surface;
use herd_protocol::worktree::manifest::Manifest;

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
    ///
    /// The checkout goes to `<canonical managed root>/<repo>/<branch dir>`, never through a
    /// symlink below the root. Of concurrent creations of one branch exactly one succeeds; every
    /// other that meets it while it runs answers `conflict` (exit 7) and leaves no manifest. A
    /// branch or checkout that already exists otherwise (a finished creation's included) is an
    /// invalid request (exit 2, field `branch`): retrying will not help.
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
        /// What creates the checkout [default: herdr when HERDR_ENV=1 and herdr is on PATH,
        /// else git under the managed root].
        #[arg(long, value_enum)]
        surface: Option<WorktreeSurface>,
        /// The workspace label and the manifest's name [default: the branch].
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
    /// Approve the repository's committed setup file `.herd/worktree.toml` as it is now.
    ///
    /// Shows the file as it is, what changed since your last approval (its lines removed and
    /// added) and the files of the repository its commands name as they are at the checkout's
    /// `HEAD`, then asks on the terminal. A yes records the SHA-256 of its exact content, with
    /// those files, under the user's configuration (`$XDG_CONFIG_HOME/herd/trust/`). Its `setup`,
    /// `background`, `install` and `[[link]]` then run in new worktrees whose commit has those
    /// files as approved: from a command line on this approval alone, under a Pi parent when it
    /// also trusts the project (`HERD_PROJECT_TRUST=trusted`). A changed file, or a changed file
    /// it names, needs a new approval. Without a terminal, nothing is approved unless --yes says
    /// so (exit 2); a no at the question exits 5 and records nothing.
    Trust {
        /// A directory inside the repository [default: the current directory].
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// Approve without asking (for scripts: review the file first, with --show).
        #[arg(long)]
        yes: bool,
        /// Show the file and what changed since your last approval; approve nothing.
        #[arg(long)]
        show: bool,
        #[arg(long)]
        json: bool,
    },
    /// List the checkouts of the repository at C: named branches, detached ones as
    /// `(detached HEAD)`.
    List {
        /// A directory inside the repository [default: the current directory].
        #[arg(long, value_name = "C")]
        cwd: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Append standard input to a background command's log, keeping the log bounded (started
    /// by create with each background command, its output piped in).
    #[command(hide = true)]
    BackgroundLog {
        #[arg(long, value_name = "LOG")]
        path: PathBuf,
    },
}

impl Cli {
    fn json(&self) -> bool {
        match &self.command {
            Command::Create { json, .. }
            | Command::Inspect { json, .. }
            | Command::Show { json, .. }
            | Command::List { json, .. }
            | Command::Trust { json, .. } => *json,
            Command::BackgroundLog { .. } => false,
        }
    }
}

/// The entry point of the binary.
pub fn main_impl(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    herd_cli::main(args, Cli::json, run)
}

pub fn run(cli: Cli) -> Result<Output, Error> {
    match cli.command {
        Command::Create {
            cwd,
            branch,
            base,
            run_id,
            surface,
            label,
            json: _,
        } => {
            let artifacts = cli.artifacts.resolve()?;
            let surface = match surface {
                Some(WorktreeSurface::Herdr) => Surface::Herdr,
                Some(WorktreeSurface::Git) => Surface::Git,
                None => create::default_surface(),
            };
            let req = CreateRequest {
                source_cwd: cwd,
                branch,
                base,
                run_id,
                surface,
                label,
            };
            let created = create::create(&artifacts, &req, &CreateEnv::from_env()?)?;
            Ok(Output::ok(created.document(), created.human()))
        }
        Command::Inspect {
            path,
            base,
            json: _,
        } => {
            check_base_sha(&base)?;
            let handoff = handoff::inspect(
                &Git::from_env(),
                &path,
                &base,
                Deadline::after(budget::HANDOFF),
            );
            let human = handoff::render_lines(&handoff, None)
                .into_iter()
                .map(|e| e.line)
                .collect::<Vec<_>>()
                .join("\n");
            let code = if handoff.is_known() {
                exit::SUCCESS
            } else {
                exit::NO_ANSWER
            };
            Ok(Output::ok(handoff.document(), human).with_exit(code))
        }
        Command::Show { run_id, json: _ } => {
            let artifacts = cli.artifacts.resolve()?;
            let manifest = Manifest::load(&artifacts, &run_id)?;
            Ok(Output::ok(manifest.to_json(), show_human(&manifest)))
        }
        Command::Trust {
            cwd,
            yes,
            show,
            json,
        } => approve::trust(&approve::Asked {
            cwd,
            yes,
            show,
            json,
        }),
        Command::BackgroundLog { path } => {
            let mut input = std::io::stdin().lock();
            let written = setup::log::append_bounded(
                &mut input,
                &path,
                setup::log::BACKGROUND_LOG_CAP,
                setup::log::BACKGROUND_LOG_KEEP,
            );
            if let Err(e) = written {
                // The command goes on without its log rather than die of a closed pipe.
                let _ = std::io::copy(&mut input, &mut std::io::sink());
                return Err(Error::new(
                    herd_core::ErrorCode::Unavailable,
                    format!("cannot write {}: {e}", path.display()),
                ));
            }
            Ok(Output::streamed(exit::SUCCESS))
        }
        Command::List { cwd, json: _ } => {
            let cwd = match cwd {
                Some(cwd) => cwd,
                None => std::env::current_dir().map_err(|e| {
                    Error::invalid("cwd", format!("cannot tell the current directory: {e}"))
                })?,
            };
            let listing = list::list(&Git::from_env(), &cwd)?;
            Ok(Output::ok(listing.document(), listing.human()))
        }
    }
}

/// `--base` of `inspect` is a commit id (full or abbreviated hex), never a revision expression.
fn check_base_sha(base: &str) -> Result<(), Error> {
    let ok = (4..=64).contains(&base.len()) && base.bytes().all(|b| b.is_ascii_hexdigit());
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(
            "base",
            "the base is a commit id: 4 to 64 hex digits",
        ))
    }
}

/// The human form of `show`: one `Key: value` line per known field, values encoded.
fn show_human(m: &Manifest) -> String {
    let value = |s: &str| encode_host_value(s, handoff::VALUE_MAX_CHARS);
    let path = |p: &Option<PathBuf>| p.as_ref().map(|p| value(&p.to_string_lossy()));
    let mut lines = vec![
        format!("Run: {}", value(&m.id)),
        format!("State: {}", m.state),
    ];
    let fields: [(&str, Option<String>); 10] = [
        ("Name", m.name.as_deref().map(value)),
        ("Branch", m.branch.as_deref().map(value)),
        ("Base", m.base_sha.as_deref().map(value)),
        ("Source", path(&m.source_cwd)),
        ("Path", path(&m.path)),
        ("Workspace", m.workspace_id.as_deref().map(value)),
        ("Pane", m.pane_id.as_deref().map(value)),
        ("Surface", m.surface.as_deref().map(value)),
        ("Error", m.error.as_deref().map(value)),
        ("Git inspection warning", m.git_error.as_deref().map(value)),
    ];
    lines.extend(
        fields
            .into_iter()
            .filter_map(|(key, v)| v.map(|v| format!("{key}: {v}"))),
    );
    lines.join("\n")
}
