//! herd-cleanup against real git repositories, real processes and the real binary.
//!
//! Every test builds its own sandbox: a `HOME`, a hermetic git (no global or system
//! configuration, fixed names and dates), a session directory holding the source repositories,
//! a managed root and an artifacts directory. Managed worktrees are made the way herd makes
//! them (`herd_worktree::create` on the git surface), so each has its ownership manifest.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test on any error"
)]

mod doctor;
mod herdr;
mod matrix;
mod remove;
mod setup;

use std::path::{Path, PathBuf};

use herd_core::identity;
pub use herd_e2e::cli::Run;
use herd_e2e::git::Sandbox;
use herd_e2e::redact::Redactions;
use herd_protocol::cleanup::{Blocker, BlockerCode, CleanupList, ListedEntry};
use herd_protocol::layout::{Artifacts, SessionFiles};
use herd_protocol::worktree::Surface;
use herd_worktree::create::{CreateEnv, CreateRequest};

/// A sandbox with a session directory, a managed root and an artifacts directory.
pub struct World {
    pub sb: Sandbox,
}

impl Default for World {
    fn default() -> World {
        World::new()
    }
}

impl World {
    pub fn new() -> World {
        let w = World { sb: Sandbox::new() };
        std::fs::create_dir_all(w.session()).unwrap();
        w
    }

    /// The session cwd: source repositories under it are in scope.
    pub fn session(&self) -> PathBuf {
        self.sb.path().join("session")
    }

    pub fn root(&self) -> PathBuf {
        self.sb.path().join("managed")
    }

    pub fn artifacts(&self) -> Artifacts {
        Artifacts::new(self.sb.path().join("artifacts"))
    }

    /// A repository `name` inside the session directory.
    pub fn repo(&self, name: &str) -> PathBuf {
        self.sb.repo(&format!("session/{name}"))
    }

    /// A managed worktree of `repo` on the new branch `branch`, with its manifest (run `run_id`).
    pub fn worktree(&self, repo: &Path, branch: &str, run_id: &str) -> PathBuf {
        let created = herd_worktree::create::create(
            &self.artifacts(),
            &CreateRequest {
                source_cwd: repo.to_path_buf(),
                branch: branch.to_owned(),
                base: None,
                run_id: run_id.to_owned(),
                surface: Surface::Git,
                label: None,
            },
            &CreateEnv {
                git: self.sb.git_handle(),
                herdr: herd_herdr::Herdr::new("herdr"),
                managed_root: self.root(),
            },
        )
        .expect("the managed worktree is created");
        created.path
    }

    /// Runs the herd-cleanup binary in the sandbox environment (nothing else inherited but
    /// `PATH`), with `--artifacts` and the session cwd given.
    pub fn cleanup(&self, args: &[&str]) -> Run {
        self.cleanup_with(args, &[])
    }

    pub fn cleanup_with(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let artifacts = self.artifacts().root().to_path_buf();
        let mut cmd = herd_e2e::cli::command(env!("CARGO_BIN_EXE_herd-cleanup"))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HERD_WORKTREE_ROOT", self.root())
            .cwd(self.session())
            .arg("--artifacts")
            .arg(artifacts)
            .args(args.iter().copied());
        for (k, v) in self.sb.env() {
            cmd = cmd.env(k, v);
        }
        for (k, v) in env {
            cmd = cmd.env(*k, *v);
        }
        herd_e2e::cli::run(&cmd)
    }

    /// `text` without what differs between runs and machines, for a snapshot: the sandbox's
    /// path, PIDs, git's version, and what the doctor found of the tools and processes here
    /// (which the JSON tests check).
    pub fn redact(&self, text: &str) -> String {
        Redactions::new()
            .path(&self.sb.path(), "SANDBOX")
            .pattern(r"PID \d+", "PID [PID]")
            .pattern(r"process \d+ \(", "process [PID] (")
            .pattern(r"git version \S+", "git version [VERSION]")
            .pattern(r"(?m)^(tmux|pi|proc): .*$", "$1: [HERE]")
            // Said only where Herdr is installed (its own test reads it).
            .pattern(r"(?m)^herdr notifications: .*\n", "")
            .pattern(r"(?m)^ *warning: not proven unrelated: .*\n", "")
            .apply(text)
    }

    /// `remove TARGET --json [extra…]` with the session cwd.
    pub fn remove(&self, target: &Path, extra: &[&str]) -> Run {
        let session = self.session();
        let mut args = vec![
            "remove",
            target.to_str().unwrap(),
            "--json",
            "--session-cwd",
            session.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        self.cleanup(&args)
    }

    /// `list --json` with the session cwd, read as the listing it is.
    pub fn list(&self) -> CleanupList {
        self.list_with(&[])
    }

    /// `list --json` with the session cwd and more environment, read as the listing it is.
    pub fn list_with(&self, env: &[(&str, &str)]) -> CleanupList {
        let session = self.session();
        let run = self.cleanup_with(
            &["list", "--json", "--session-cwd", session.to_str().unwrap()],
            env,
        );
        assert_eq!(run.code, 0, "{run:?}");
        run.doc()
    }

    /// Writes a run record of run `run_id` working in `worktree`, with a process identity
    /// captured from `pid`.
    pub fn run_record(&self, run_id: &str, worktree: &Path, pid: u32, persistent: bool) {
        let session = self.sb.path().join(format!("sessions/{run_id}.jsonl"));
        std::fs::create_dir_all(session.parent().unwrap()).unwrap();
        std::fs::write(&session, "").unwrap();
        let record = serde_json::json!({
            "format_version": 1,
            "run_id": run_id,
            "name": format!("worker {run_id}"),
            "created_at_ms": 1,
            "runner": "exec",
            "surface": "process",
            "status": "launched",
            "cwd": worktree.to_str().unwrap(),
            "session_file": session.to_str().unwrap(),
            "worktree": {
                "path": worktree.to_str().unwrap(),
                "branch": "x",
                "base_sha": "0000000000000000000000000000000000000000",
                "manifest": "",
            },
            "persistent": persistent,
        });
        let file = self.artifacts().run_record(run_id);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, serde_json::to_vec_pretty(&record).unwrap()).unwrap();
        let identity = identity::capture(pid, run_id, &session)
            .expect("the identity of a live process is captured");
        identity
            .write_once(&SessionFiles::new(&session).process())
            .unwrap();
    }
}

/// A real process (`sleep`) with its cwd in `dir`; killed when dropped.
pub struct Sleeper(std::process::Child);

impl Sleeper {
    pub fn in_dir(dir: &Path) -> Sleeper {
        #[expect(
            clippy::disallowed_methods,
            reason = "a real long-lived process the test owns and kills"
        )]
        let child = std::process::Command::new("sleep")
            .arg("300")
            .current_dir(dir)
            .spawn()
            .unwrap();
        Sleeper(child)
    }

    pub fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The codes of an entry's or a removal's blockers, in order.
pub fn codes(blockers: &[Blocker]) -> Vec<BlockerCode> {
    blockers.iter().map(|b| b.code).collect()
}

/// The row of `list` for the entry at `path`; the test fails, showing the listing, when there
/// is none.
pub fn row<'l>(list: &'l CleanupList, path: &Path) -> &'l ListedEntry {
    list.worktrees
        .iter()
        .find(|r| Some(r.entry.path.as_str()) == path.to_str())
        .unwrap_or_else(|| panic!("{} is listed: {list:#?}", path.display()))
}
