//! Hermetic git for the scenarios: no user or system configuration, a fixed identity and fixed
//! dates, `main` as the default branch, and repositories in temporary directories.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use tempfile::TempDir;

use crate::proc::{self, Finished};

/// The time any one git command may take.
pub const GIT_BUDGET: Duration = Duration::from_secs(30);

/// The variables that make git hermetic and its commits reproducible. Children that run git
/// (Pi's bash tool, the herd binaries) get them too, through [`crate::pi::PiEnv::vars`].
pub const GIT_ENV: [(&str, &str); 18] = [
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_COUNT", "4"),
    ("GIT_CONFIG_KEY_0", "init.defaultBranch"),
    ("GIT_CONFIG_VALUE_0", "main"),
    ("GIT_CONFIG_KEY_1", "advice.detachedHead"),
    ("GIT_CONFIG_VALUE_1", "false"),
    // No detached auto maintenance after a commit, which would hold the checkout for a moment.
    ("GIT_CONFIG_KEY_2", "maintenance.auto"),
    ("GIT_CONFIG_VALUE_2", "false"),
    ("GIT_CONFIG_KEY_3", "gc.auto"),
    ("GIT_CONFIG_VALUE_3", "0"),
    ("GIT_AUTHOR_NAME", "Herd Test"),
    ("GIT_AUTHOR_EMAIL", "test@herd.invalid"),
    ("GIT_AUTHOR_DATE", "2001-02-03T04:05:06Z"),
    ("GIT_COMMITTER_NAME", "Herd Test"),
    ("GIT_COMMITTER_EMAIL", "test@herd.invalid"),
    ("GIT_COMMITTER_DATE", "2001-02-03T04:05:06Z"),
    ("GIT_TERMINAL_PROMPT", "0"),
];

/// Returns a `git` command in `dir` with a cleared environment: `PATH`, a `HOME` that does
/// not exist, and [`GIT_ENV`].
pub fn git_command(dir: &Path) -> Command {
    #[expect(
        clippy::disallowed_methods,
        reason = "test support spawns git through its own bounded runner"
    )]
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .env_clear()
        .envs(GIT_ENV)
        .env("HOME", "/nonexistent")
        .env("LANG", "C");
    if let Some(path) = std::env::var_os("PATH") {
        cmd.env("PATH", path);
    }
    cmd
}

/// Runs git in `dir` and returns the whole outcome, success or not.
pub fn try_git<I, S>(dir: &Path, args: I) -> Finished
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = git_command(dir);
    cmd.args(args);
    proc::run(cmd, GIT_BUDGET)
}

/// Runs git in `dir` and returns its stdout without the trailing newline.
///
/// # Panics
///
/// When git fails, with the command and its output.
pub fn git<I, S>(dir: &Path, args: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args: Vec<_> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
    let out = try_git(dir, &args);
    assert!(
        out.success(),
        "git {:?} in {} failed:\n{out}",
        args,
        dir.display()
    );
    out.stdout.trim_end_matches('\n').to_owned()
}

/// A git repository in a temporary directory, removed on drop.
pub struct GitRepo {
    dir: TempDir,
    path: PathBuf,
}

impl GitRepo {
    /// Creates a repository on branch `main` with one commit holding `README.md`.
    ///
    /// # Panics
    ///
    /// When git fails or the directory cannot be created.
    pub fn init() -> GitRepo {
        let repo = GitRepo::empty();
        repo.write("README.md", "scratch repository\n");
        repo.commit_all("initial commit");
        repo
    }

    /// Creates a repository on branch `main` with no commits.
    ///
    /// # Panics
    ///
    /// When git fails or the directory cannot be created.
    pub fn empty() -> GitRepo {
        let dir = tempfile::Builder::new()
            .prefix("herd-e2e-repo-")
            .tempdir()
            .expect("a temporary directory");
        // The canonical path, so it compares equal to what git and the binaries print.
        let path = dir
            .path()
            .canonicalize()
            .expect("the temporary directory exists");
        git(&path, ["init", "--quiet", "--initial-branch=main"]);
        GitRepo { dir, path }
    }

    /// Returns the working tree's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs git in the repository and returns its stdout without the trailing newline.
    ///
    /// # Panics
    ///
    /// When git fails.
    pub fn git<I, S>(&self, args: I) -> String
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        git(&self.path, args)
    }

    /// Writes `contents` to `rel` in the working tree, creating parent directories.
    ///
    /// # Panics
    ///
    /// When the file cannot be written.
    pub fn write(&self, rel: &str, contents: &str) {
        let path = self.path.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("parent directories can be created");
        }
        std::fs::write(&path, contents)
            .unwrap_or_else(|err| panic!("cannot write {}: {err}", path.display()));
    }

    /// Stages everything and commits it; returns the new commit's id.
    ///
    /// # Panics
    ///
    /// When git fails (for example when there is nothing to commit).
    pub fn commit_all(&self, message: &str) -> String {
        self.git(["add", "--all"]);
        self.git(["commit", "--quiet", "-m", message]);
        self.head()
    }

    /// Returns the id of `HEAD`.
    ///
    /// # Panics
    ///
    /// When git fails.
    pub fn head(&self) -> String {
        self.git(["rev-parse", "HEAD"])
    }

    /// Consumes the handle and keeps the directory on disk (for debugging a failing test).
    pub fn keep(self) -> PathBuf {
        let _ = self.dir.keep();
        self.path
    }
}
