//! Hermetic git fixtures for tests (feature `testkit`): real repositories in a temporary
//! directory with a `HOME` of its own, no global or system configuration, `main` as the default
//! branch, and fixed names and dates. The test kit (`herd-e2e`) offers it as `herd_e2e::git`.
//!
//! Fixture commands run through `herd_core::subprocess` like everything else, with a generous
//! budget; a fixture step that fails panics with git's stderr, which is what a test wants.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_core::subprocess::{self, Command, Output};

use crate::Git;

/// The budget of one fixture command.
pub const FIXTURE_BUDGET: Duration = Duration::from_secs(60);

/// The variables that make git hermetic and its commits reproducible. Children that run git
/// (a Pi child's bash tool, the herd binaries) get them too, with a `HOME` of their own. The
/// locale is not among them (a terminal's child keeps its own); [`Sandbox::env`] adds `LC_ALL=C`
/// so git's messages are the same everywhere.
pub const ENV: [(&str, &str); 18] = [
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_AUTHOR_NAME", "Herd Test"),
    ("GIT_AUTHOR_EMAIL", "herd@example.invalid"),
    ("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z"),
    ("GIT_COMMITTER_NAME", "Herd Test"),
    ("GIT_COMMITTER_EMAIL", "herd@example.invalid"),
    ("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_CONFIG_COUNT", "4"),
    ("GIT_CONFIG_KEY_0", "init.defaultBranch"),
    ("GIT_CONFIG_VALUE_0", "main"),
    ("GIT_CONFIG_KEY_1", "advice.detachedHead"),
    ("GIT_CONFIG_VALUE_1", "false"),
    // No detached `git maintenance run --auto` after a commit: it would hold the checkout (its
    // cwd) for a moment after the fixture command returned.
    ("GIT_CONFIG_KEY_2", "maintenance.auto"),
    ("GIT_CONFIG_VALUE_2", "false"),
    ("GIT_CONFIG_KEY_3", "gc.auto"),
    ("GIT_CONFIG_VALUE_3", "0"),
];

/// A temporary directory with its own `HOME` and a hermetic git environment.
#[derive(Debug)]
pub struct Sandbox {
    dir: tempfile::TempDir,
}

impl Default for Sandbox {
    fn default() -> Sandbox {
        Sandbox::new()
    }
}

impl Sandbox {
    /// # Panics
    ///
    /// When no temporary directory can be made.
    pub fn new() -> Sandbox {
        let dir = tempfile::Builder::new()
            .prefix("herd-test-")
            .tempdir()
            .expect("a temporary directory can be created");
        std::fs::create_dir_all(dir.path().join("home")).expect("the sandbox home can be created");
        Sandbox { dir }
    }

    /// The sandbox directory (canonical, so paths compare equal to what git prints).
    pub fn path(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).unwrap_or_else(|_| self.dir.path().to_path_buf())
    }

    /// The sandbox's `HOME`.
    pub fn home(&self) -> PathBuf {
        self.path().join("home")
    }

    /// The variables a hermetic git (or a herd binary running git) needs: [`ENV`], `LC_ALL=C`
    /// and the sandbox's `HOME`.
    pub fn env(&self) -> Vec<(OsString, OsString)> {
        let mut env: Vec<(OsString, OsString)> = ENV
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect();
        env.push(("LC_ALL".into(), "C".into()));
        env.push(("HOME".into(), self.home().into_os_string()));
        env.push((
            "XDG_CONFIG_HOME".into(),
            self.home().join(".config").into_os_string(),
        ));
        env
    }

    /// A [`Git`] handle that runs with [`Sandbox::env`].
    pub fn git_handle(&self) -> Git {
        self.env()
            .into_iter()
            .fold(Git::from_env(), |git, (k, v)| git.env(k, v))
    }

    /// Runs `git <args>` in `cwd` with nothing of the caller's environment but `PATH`, and
    /// returns the whole outcome, success or not.
    ///
    /// # Panics
    ///
    /// When git cannot be started.
    pub fn try_git<I, S>(&self, cwd: &Path, args: I) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new("git", FIXTURE_BUDGET)
            .cwd(cwd)
            .args(args.into_iter().map(|a| a.as_ref().to_owned()))
            .env_clear();
        if let Some(path) = std::env::var_os("PATH") {
            cmd = cmd.env("PATH", path);
        }
        for (k, v) in self.env() {
            cmd = cmd.env(k, v);
        }
        subprocess::run(&cmd).expect("git can be started")
    }

    /// Runs `git <args>` in `cwd` and returns its stdout without the trailing newline.
    ///
    /// # Panics
    ///
    /// When git fails, with its stderr.
    pub fn git<I, S>(&self, cwd: &Path, args: I) -> String
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let out = self.git_ending(cwd, args, true);
        out.stdout.text().trim_end_matches('\n').to_owned()
    }

    /// Runs `git <args>` in `cwd` expecting it to fail; returns stderr.
    ///
    /// # Panics
    ///
    /// When git succeeds.
    pub fn git_fails<I, S>(&self, cwd: &Path, args: I) -> String
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.git_ending(cwd, args, false).stderr.text().into_owned()
    }

    /// Runs `git <args>` in `cwd`; panics unless its success is `success`.
    fn git_ending<I, S>(&self, cwd: &Path, args: I, success: bool) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
        let out = self.try_git(cwd, &args);
        assert!(
            out.success() == success,
            "git {args:?} in {} {}: {}",
            cwd.display(),
            if success { "failed" } else { "succeeded" },
            out.stderr.text()
        );
        out
    }

    /// A new repository `name` on branch `main` with one commit holding `README.md`.
    pub fn repo(&self, name: &str) -> PathBuf {
        let path = self.empty_repo(name);
        self.write(&path, "README.md", "hello\n");
        self.commit_all(&path, "initial");
        path
    }

    /// A new repository `name` on branch `main` with no commits.
    pub fn empty_repo(&self, name: &str) -> PathBuf {
        let path = self.path().join(name);
        std::fs::create_dir_all(&path).expect("the repository directory can be created");
        self.git(&path, ["init", "--quiet", "--initial-branch=main"]);
        path
    }

    /// Writes `contents` to `rel` under `dir`, creating parent directories.
    pub fn write(&self, dir: &Path, rel: &str, contents: &str) {
        let file = dir.join(rel);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).expect("parent directories can be created");
        }
        std::fs::write(&file, contents).expect("the file can be written");
    }

    /// Stages everything and commits; returns the new `HEAD`.
    pub fn commit_all(&self, dir: &Path, message: &str) -> String {
        self.git(dir, ["add", "-A"]);
        self.git(dir, ["commit", "--quiet", "--allow-empty", "-m", message]);
        self.head(dir)
    }

    /// The commit `HEAD` names in `dir`.
    pub fn head(&self, dir: &Path) -> String {
        self.git(dir, ["rev-parse", "HEAD"])
    }
}
