//! herd-worktree's rows (issue 4): `inspect` (the handoff) against the git commands it stands
//! for, and `create` against `git worktree add`, on a generated repository.
//!
//! `inspect` runs on a repository of 20,000 files (quick: 2,000) in directories of 100, one
//! commit, and then 500 changes (quick: 50): a fifth committed on top of the base, a fifth
//! staged, three tenths modified in the working tree and three tenths untracked. `create` runs
//! on a repository of 2,000 files (quick: 500) without changes. Both sides run with the same
//! hermetic git environment. The baseline of `inspect` is the same three git commands herd runs
//! (`status`, `rev-list --count`, `diff --name-only`), one after another in one `sh -c`; herd
//! starts its own process and runs them concurrently.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_core::subprocess::{self, Command};
use serde_json::Value;

use crate::bench::{Ctx, Goal, Measured, Quantity, Row, median, progress, scratch, timed};

const COMPONENT: &str = "herd-worktree";

/// The budget of one git or herd-worktree call.
const CALL_BUDGET: Duration = Duration::from_secs(300);

pub fn rows(ctx: &Ctx) -> Vec<Row> {
    let files = ctx.size(20_000, 2_000);
    let changes = ctx.size(500, 50);
    let inspect_figure = format!("inspect, {files} files, {changes} changes");
    // The checkout dominates both sides of `create`, and on a slow disk a 20,000-file checkout
    // takes many seconds whose noise drowns herd's own work; a smaller repository keeps that
    // work (base resolution, branch check, the manifest written before and after) visible.
    let create_files = ctx.size(2_000, 500);
    let create_figure = format!("create, {create_files} files");
    let inspect_goal = Goal::RatioAtMost(1.0);
    let create_goal = Goal::RatioAtMost(1.2);
    let inspect = ctx.binary("herd-worktree").and_then(|bin| {
        let fx = Fixture::new(bin, files)?;
        fx.change(changes)?;
        fx.inspect(ctx.rounds)
    });
    let create = ctx
        .binary("herd-worktree")
        .and_then(|bin| Fixture::new(bin, create_files)?.create(ctx.rounds));
    vec![
        Row::from_result(
            "worktree.inspect",
            COMPONENT,
            inspect_figure,
            inspect_goal,
            inspect,
        ),
        Row::from_result(
            "worktree.create",
            COMPONENT,
            create_figure,
            create_goal,
            create,
        ),
    ]
}

/// The generated repository and what the rows need around it.
struct Fixture {
    _dir: tempfile::TempDir,
    bin: PathBuf,
    root: PathBuf,
    repo: PathBuf,
    base: String,
    files: usize,
}

/// The hermetic environment of every git and herd-worktree call: no system or global
/// configuration, a fixed identity and date.
const GIT_ENV: [(&str, &str); 8] = [
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_AUTHOR_NAME", "herd bench"),
    ("GIT_AUTHOR_EMAIL", "bench@example.invalid"),
    ("GIT_AUTHOR_DATE", "2025-01-01T00:00:00Z"),
    ("GIT_COMMITTER_NAME", "herd bench"),
    ("GIT_COMMITTER_EMAIL", "bench@example.invalid"),
    ("GIT_COMMITTER_DATE", "2025-01-01T00:00:00Z"),
];

impl Fixture {
    /// A repository of `files` files in one commit.
    fn new(bin: PathBuf, files: usize) -> Result<Fixture, String> {
        progress(&format!(
            "herd-worktree: generating a repository of {files} files"
        ));
        let dir = scratch("herd-bench-worktree")?;
        let root = std::fs::canonicalize(dir.path()).map_err(|e| e.to_string())?;
        let repo = root.join("repo");
        for sub in ["repo", "home", "artifacts", "managed", "plain"] {
            std::fs::create_dir_all(root.join(sub)).map_err(|e| e.to_string())?;
        }
        let fx = Fixture {
            _dir: dir,
            bin,
            root,
            repo,
            base: String::new(),
            files,
        };
        fx.git(&["init", "--quiet", "--initial-branch=main"])?;
        for i in 0..files {
            write_file(&fx.repo.join(file_name(i)), i, 0)?;
        }
        fx.git(&["add", "--all"])?;
        fx.git(&["commit", "--quiet", "--message", "base"])?;
        let base = fx.git(&["rev-parse", "HEAD"])?.trim().to_owned();
        Ok(Fixture { base, files, ..fx })
    }

    /// Adds `changes` changes on top of the base commit: a fifth committed, a fifth staged,
    /// three tenths modified, three tenths untracked.
    fn change(&self, changes: usize) -> Result<(), String> {
        let (fx, files) = (self, self.files);
        // The changes, spread over the tree by a stride.
        let committed = changes / 5;
        let staged = changes / 5;
        let unstaged = changes * 3 / 10;
        let untracked = changes - committed - staged - unstaged;
        let stride = (files / (committed + staged + unstaged).max(1)).max(1);
        let mut next = (0..files).step_by(stride);
        let mut modify = |n: usize, round: usize| -> Result<Vec<String>, String> {
            let mut paths = Vec::with_capacity(n);
            for _ in 0..n {
                let i = next
                    .next()
                    .ok_or("the repository is too small for its changes")?;
                write_file(&fx.repo.join(file_name(i)), i, round)?;
                paths.push(file_name(i));
            }
            Ok(paths)
        };
        let to_commit = modify(committed, 1)?;
        fx.git_paths(&["add", "--"], &to_commit)?;
        fx.git(&["commit", "--quiet", "--message", "work"])?;
        let to_stage = modify(staged, 2)?;
        fx.git_paths(&["add", "--"], &to_stage)?;
        modify(unstaged, 3)?;
        for k in 0..untracked {
            let i = (k * files / untracked.max(1)).min(files.saturating_sub(1));
            let name = format!("src/d{:03}/new{k:04}.txt", i / 100);
            write_file(&fx.repo.join(name), i, 4)?;
        }
        // Files changed within the second the index was written are "racily clean" and
        // re-read by every status; wait that second out, then let one status refresh the index
        // so both sides read the same, fresh index.
        std::thread::sleep(Duration::from_millis(1100));
        fx.git(&["status", "--porcelain"])?;
        Ok(())
    }

    fn command(&self, program: impl Into<OsString>) -> Command {
        let mut cmd = Command::new(program, CALL_BUDGET)
            .cwd(&self.repo)
            .env("HOME", self.root.join("home"))
            .env("HERD_WORKTREE_ROOT", self.root.join("managed"))
            .env_remove("HERDR_ENV")
            .stdin_null();
        for (k, v) in GIT_ENV {
            cmd = cmd.env(k, v);
        }
        cmd
    }

    fn git(&self, args: &[&str]) -> Result<String, String> {
        let (_, out) = timed(&self.command("git").args(args))?;
        Ok(out.stdout.text().into_owned())
    }

    fn git_paths(&self, args: &[&str], paths: &[String]) -> Result<(), String> {
        timed(&self.command("git").args(args).args(paths)).map(drop)
    }

    /// `herd-worktree inspect` against `git status`, `git rev-list --count` and
    /// `git diff --name-only`, interleaved after one untimed run of each.
    fn inspect(&self, rounds: usize) -> Result<Measured, String> {
        let herd = self
            .command(&self.bin)
            .args(["inspect", "--json", "--base", &self.base, "--path"])
            .arg(&self.repo);
        let script = "git --no-optional-locks status --porcelain=v2 -z --branch --untracked-files=all --no-renames \
             && git rev-list --count --end-of-options \"$1..HEAD\" \
             && git --no-optional-locks diff --name-only -z --no-renames --no-ext-diff --no-textconv \"$1...HEAD\" --";
        let baseline = self.command("sh").args(["-c", script, "sh", &self.base]);
        let (_, out) = timed(&herd)?;
        let doc: Value = serde_json::from_slice(&out.stdout.bytes)
            .map_err(|e| format!("herd-worktree inspect printed no JSON: {e}"))?;
        if doc["commits_ahead"] != 1 || doc["state"] != "dirty" {
            return Err(format!(
                "herd-worktree inspect saw {} commits ahead and state {}, expected 1 and dirty",
                doc["commits_ahead"], doc["state"]
            ));
        }
        let changed = doc["changed_files"].as_array().map_or(0, Vec::len);
        timed(&baseline)?;
        let mut herd_times = Vec::with_capacity(rounds);
        let mut base_times = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            herd_times.push(timed(&herd)?.0);
            base_times.push(timed(&baseline)?.0);
        }
        Ok(Measured::new(Quantity::ms(median(&herd_times)), rounds)
            .against(
                "git status; rev-list; diff",
                Quantity::ms(median(&base_times)),
            )
            .note(format!("the handoff listed {changed} changed files")))
    }

    /// `herd-worktree create --surface git` against `git worktree add -b`, interleaved after
    /// one untimed run of each; every checkout is removed before the next round, untimed.
    fn create(&self, rounds: usize) -> Result<Measured, String> {
        let mut herd_times = Vec::with_capacity(rounds);
        let mut base_times = Vec::with_capacity(rounds);
        for round in 0..=rounds {
            // Alternate which side goes first, so neither always follows the other's removal.
            let (took, plain_took) = if round % 2 == 0 {
                let took = self.create_with_herd(round)?;
                (took, self.create_with_git(round)?)
            } else {
                let plain_took = self.create_with_git(round)?;
                (self.create_with_herd(round)?, plain_took)
            };
            // Round 0 warms the caches.
            if round > 0 {
                herd_times.push(took);
                base_times.push(plain_took);
            }
        }
        Ok(Measured::new(Quantity::ms(median(&herd_times)), rounds)
            .against("git worktree add -b", Quantity::ms(median(&base_times))))
    }

    /// Times one `herd-worktree create`, then removes its checkout and branch, untimed.
    fn create_with_herd(&self, round: usize) -> Result<Duration, String> {
        let branch = format!("bench/herd-{round}");
        let herd = self
            .command(&self.bin)
            .arg("--artifacts")
            .arg(self.root.join("artifacts"))
            .args(["create", "--surface", "git", "--json", "--branch", &branch])
            .args(["--run-id", &format!("bench-{round}"), "--cwd"])
            .arg(&self.repo);
        let (took, out) = timed(&herd)?;
        let doc: Value = serde_json::from_slice(&out.stdout.bytes)
            .map_err(|e| format!("herd-worktree create printed no JSON: {e}"))?;
        let path = doc["path"]
            .as_str()
            .map(PathBuf::from)
            .ok_or("herd-worktree create named no path")?;
        self.remove(&path, &branch)?;
        Ok(took)
    }

    /// Times one `git worktree add -b`, then removes its checkout and branch, untimed.
    fn create_with_git(&self, round: usize) -> Result<Duration, String> {
        let branch = format!("bench/git-{round}");
        let path = self.root.join("plain").join(format!("git-{round}"));
        let plain = self
            .command("git")
            .args(["worktree", "add", "--quiet", "-b", &branch])
            .arg(&path);
        let (took, _) = timed(&plain)?;
        self.remove(&path, &branch)?;
        Ok(took)
    }

    fn remove(&self, path: &Path, branch: &str) -> Result<(), String> {
        let remove = self
            .command("git")
            .args(["worktree", "remove", "--force"])
            .arg(path);
        subprocess::run(&remove).map_err(|e| e.to_string())?;
        self.git(&["branch", "--quiet", "-D", branch])?;
        // Write the removal's dirty metadata back now, so the next create, herd's or git's,
        // does not pay for it.
        let _ = subprocess::run(&Command::new("sync", CALL_BUDGET));
        Ok(())
    }
}

fn file_name(i: usize) -> String {
    format!("src/d{:03}/f{:02}.txt", i / 100, i % 100)
}

/// A small text file whose content depends on its index and the round that last changed it.
fn write_file(path: &Path, i: usize, round: usize) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let mut text = String::with_capacity(256);
    for line in 0..8 {
        text.push_str(&format!("file {i} line {line} round {round}\n"));
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}
