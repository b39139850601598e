//! herd-worktree against real git repositories and the real binary.

mod cli;
mod create;
mod handoff;
mod herdr;
mod manifest;
mod safety;
mod setup;
mod setup_concurrency;
mod setup_files;
mod trust;

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use herd_core::error::{ErrorBody, ErrorDocument};
pub use herd_e2e::cli::Run;
use herd_e2e::git::Sandbox;
use herd_protocol::layout::Artifacts;
use herd_protocol::worktree::Manifest;

/// A sandbox with an artifacts directory and a managed root inside it.
pub struct World {
    pub sb: Sandbox,
}

impl World {
    pub fn new() -> World {
        World { sb: Sandbox::new() }
    }

    pub fn artifacts(&self) -> Artifacts {
        Artifacts::new(self.sb.path().join("artifacts"))
    }

    pub fn managed_root(&self) -> PathBuf {
        self.sb.path().join("managed")
    }

    pub fn create_env(&self) -> herd_worktree::create::CreateEnv {
        herd_worktree::create::CreateEnv {
            git: self.sb.git_handle(),
            herdr: herd_herdr::Herdr::new("herdr-not-used-here"),
            managed_root: self.managed_root(),
        }
    }

    /// The manifest of `run_id` as written, read as herd reads it (its constants and id checked).
    pub fn manifest(&self, run_id: &str) -> Manifest {
        Manifest::load(&self.artifacts(), run_id)
            .unwrap_or_else(|err| panic!("the manifest of {run_id} cannot be read: {err}"))
    }

    /// Runs the herd-worktree binary with the sandbox environment (nothing else inherited but
    /// `PATH`, which may be given instead).
    pub fn run(&self, args: &[&str], path: Option<&OsString>) -> Run {
        let extra: Vec<(OsString, OsString)> = path
            .map(|p| ("PATH".into(), p.clone()))
            .into_iter()
            .collect();
        self.run_with_env(args, &extra)
    }

    /// Runs the binary like [`World::run`] with `extra` variables set last.
    pub fn run_with_env(&self, args: &[&str], extra: &[(OsString, OsString)]) -> Run {
        self.run_within(args, extra, herd_e2e::cli::RUN_BUDGET)
    }

    /// [`World::run_with_env`] that fails the test if the run takes longer than `budget`.
    pub fn run_within(
        &self,
        args: &[&str],
        extra: &[(OsString, OsString)],
        budget: std::time::Duration,
    ) -> Run {
        self.run_at(&self.sb.path(), args, extra, budget)
    }

    /// [`World::run_within`] in the working directory `cwd`.
    pub fn run_at(
        &self,
        cwd: &Path,
        args: &[&str],
        extra: &[(OsString, OsString)],
        budget: std::time::Duration,
    ) -> Run {
        let mut cmd = herd_e2e::cli::within(env!("CARGO_BIN_EXE_herd-worktree"), budget)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HERD_WORKTREE_ROOT", self.managed_root())
            .env("HERD_ARTIFACTS", self.sb.path().join("artifacts"))
            .cwd(cwd)
            .args(args.iter().copied());
        for (k, v) in self.sb.env().into_iter().chain(extra.iter().cloned()) {
            cmd = cmd.env(k, v);
        }
        herd_e2e::cli::run(&cmd)
    }
}

impl Default for World {
    fn default() -> World {
        World::new()
    }
}

/// The error of a refused `--json` command, read as the [`ErrorDocument`] it prints.
pub fn refusal(run: &Run) -> ErrorBody {
    run.doc::<ErrorDocument>().error
}

/// What `show --json` prints, read as the [`Manifest`] it is: its constants are checked as a
/// manifest file's are.
pub fn shown(run: &Run) -> Manifest {
    Manifest::parse(Path::new("show --json"), run.stdout.as_bytes())
        .unwrap_or_else(|err| panic!("stdout is not a worktree manifest ({err}):\n{run}"))
}

/// Writes an executable `git` script into `dir` (a stand-in placed early on `PATH`).
pub fn fake_git(dir: &Path, body: &str) -> PathBuf {
    std::fs::create_dir_all(dir).expect("the fake bin directory can be created");
    let path = dir.join("git");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("the fake git can be written");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .expect("the fake git can be made executable");
    path
}

/// `dir` prepended to the current `PATH`.
pub fn path_with(dir: &Path) -> OsString {
    let mut dirs = vec![dir.to_path_buf()];
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(dirs).expect("the PATH can be joined")
}

/// The names of the entries of `dir`, sorted; empty when it does not exist.
pub fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.map(|e| {
                e.expect("a directory entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}
