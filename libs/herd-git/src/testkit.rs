//! Hermetic git fixtures for tests (feature `testkit`): real repositories in a temporary
//! directory, with no global or system configuration and fixed names and dates.
//!
//! Fixture commands run through `herd_core::subprocess` like everything else, with a generous
//! budget; a fixture step that fails panics with git's stderr, which is what a test wants.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_core::subprocess::{self, Command};

use crate::Git;

/// The budget of one fixture command.
const FIXTURE_BUDGET: Duration = Duration::from_secs(60);

/// The fixed identity and dates every fixture commit gets.
const FIXED: &[(&str, &str)] = &[
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_AUTHOR_NAME", "Herd Test"),
    ("GIT_AUTHOR_EMAIL", "herd@example.invalid"),
    ("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z"),
    ("GIT_COMMITTER_NAME", "Herd Test"),
    ("GIT_COMMITTER_EMAIL", "herd@example.invalid"),
    ("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("LC_ALL", "C"),
    // No detached `git maintenance run --auto` after a commit: it would hold the checkout (its
    // cwd) for a moment after the fixture command returned.
    ("GIT_CONFIG_COUNT", "2"),
    ("GIT_CONFIG_KEY_0", "maintenance.auto"),
    ("GIT_CONFIG_VALUE_0", "false"),
    ("GIT_CONFIG_KEY_1", "gc.auto"),
    ("GIT_CONFIG_VALUE_1", "0"),
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
        let dir = tempfile::tempdir().expect("a temporary directory can be created");
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

    /// The variables a hermetic git (or a herd binary running git) needs.
    pub fn env(&self) -> Vec<(OsString, OsString)> {
        let mut env: Vec<(OsString, OsString)> = FIXED
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect();
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

    /// Runs `git <args>` in `cwd` and returns its stdout.
    ///
    /// # Panics
    ///
    /// When git fails, with its stderr.
    pub fn git(&self, cwd: &Path, args: &[&str]) -> String {
        let mut cmd = Command::new("git", FIXTURE_BUDGET)
            .cwd(cwd)
            .args(args.iter().copied());
        for (k, v) in self.env() {
            cmd = cmd.env(k, v);
        }
        let out = subprocess::run(&cmd).expect("git can be started");
        assert!(
            out.success(),
            "git {args:?} in {} failed: {}",
            cwd.display(),
            out.stderr.text()
        );
        out.stdout.text().into_owned()
    }

    /// Runs `git <args>` in `cwd` expecting it to fail; returns stderr.
    ///
    /// # Panics
    ///
    /// When git succeeds.
    pub fn git_fails(&self, cwd: &Path, args: &[&str]) -> String {
        let mut cmd = Command::new("git", FIXTURE_BUDGET)
            .cwd(cwd)
            .args(args.iter().copied());
        for (k, v) in self.env() {
            cmd = cmd.env(k, v);
        }
        let out = subprocess::run(&cmd).expect("git can be started");
        assert!(
            !out.success(),
            "git {args:?} in {} succeeded",
            cwd.display()
        );
        out.stderr.text().into_owned()
    }

    /// A new repository `name` on branch `main` with one commit holding `README.md`.
    pub fn repo(&self, name: &str) -> PathBuf {
        let path = self.path().join(name);
        std::fs::create_dir_all(&path).expect("the repository directory can be created");
        self.git(&path, &["init", "--quiet", "--initial-branch=main"]);
        self.write(&path, "README.md", "hello\n");
        self.commit_all(&path, "initial");
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
        self.git(dir, &["add", "-A"]);
        self.git(dir, &["commit", "--quiet", "--allow-empty", "-m", message]);
        self.head(dir)
    }

    /// The commit `HEAD` names in `dir`.
    pub fn head(&self, dir: &Path) -> String {
        self.git(dir, &["rev-parse", "HEAD"]).trim().to_owned()
    }
}
