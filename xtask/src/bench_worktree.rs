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
    let deps = ctx.size(30_000, 3_000);
    let setup_rows = setup_rows(ctx, create_files, deps);
    let mut rows = vec![
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
    ];
    rows.extend(setup_rows);
    rows
}

/// The setup rows (issue 25) on a repository of `files` files with an ignored `node_modules`
/// of `deps` files: a new worktree whose setup hard-links it against `git worktree add` alone;
/// one whose setup copies it against `git worktree add` then `cp -a` of the tree; and
/// `herd-cleanup remove` of the hard-linked worktree against `git worktree remove --force` of
/// a `git worktree add` plus `cp -al` one. The source's `node_modules` is digested before and
/// after, and must not have changed.
fn setup_rows(ctx: &Ctx, files: usize, deps: usize) -> Vec<Row> {
    let wants = |id| ctx.wants(id);
    let (hardlink, copy, remove) = if wants("worktree.setup_hardlink")
        || wants("worktree.setup_copy")
        || wants("worktree.setup_remove")
    {
        let made = ctx.binary("herd-worktree").and_then(|bin| {
            let cleanup = ctx.binary("herd-cleanup")?;
            let fx = Fixture::new(bin, files)?;
            fx.dependencies(deps)?;
            Ok((fx, cleanup))
        });
        match made {
            Ok((fx, cleanup)) => {
                let before = fx.digest_dependencies();
                let skipped = || Err("not measured".to_owned());
                let hardlink = if wants("worktree.setup_hardlink") {
                    fx.setup(ctx.rounds, "hardlink", None)
                } else {
                    skipped()
                };
                let copy = if wants("worktree.setup_copy") {
                    fx.setup(ctx.rounds, "copy", None)
                } else {
                    skipped()
                };
                let remove = if wants("worktree.setup_remove") {
                    fx.setup(ctx.rounds, "hardlink", Some(&cleanup))
                } else {
                    skipped()
                };
                let after = fx.digest_dependencies();
                let unchanged = |m: Result<Measured, String>| {
                    m.and_then(|m| match (&before, &after) {
                        (Ok(b), Ok(a)) if b == a => Ok(m.note(format!(
                            "{deps} dependency files; the source's tree unchanged"
                        ))),
                        (Ok(_), Ok(_)) => Err("the source's node_modules changed".to_owned()),
                        (Err(e), _) | (_, Err(e)) => Err(e.clone()),
                    })
                };
                (unchanged(hardlink), unchanged(copy), unchanged(remove))
            }
            Err(e) => (Err(e.clone()), Err(e.clone()), Err(e)),
        }
    } else {
        let skipped = || Err("not measured".to_owned());
        (skipped(), skipped(), skipped())
    };
    vec![
        Row::from_result(
            "worktree.setup_hardlink",
            COMPONENT,
            format!("create + hardlink of a {deps}-file node_modules"),
            Goal::RatioAtMost(1.5),
            hardlink,
        ),
        Row::from_result(
            "worktree.setup_copy",
            COMPONENT,
            format!("create + copy of a {deps}-file node_modules"),
            Goal::RatioAtMost(1.1),
            copy,
        ),
        Row::from_result(
            "worktree.setup_remove",
            COMPONENT,
            format!("herd-cleanup remove, {deps}-file hard-linked node_modules"),
            Goal::RatioAtMost(1.5),
            remove,
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
        let (took, path) =
            self.timed_create(self.command(&self.bin), &branch, &format!("bench-{round}"))?;
        self.remove(&path, &branch)?;
        Ok(took)
    }

    /// Times `herd-worktree create` of `branch` for run `run_id` by `base` (a command of this
    /// bench's environment); returns the time and the new checkout's path.
    fn timed_create(
        &self,
        base: Command,
        branch: &str,
        run_id: &str,
    ) -> Result<(Duration, PathBuf), String> {
        let create = base
            .arg("--artifacts")
            .arg(self.root.join("artifacts"))
            .args(["create", "--surface", "git", "--json", "--branch", branch])
            .args(["--run-id", run_id, "--cwd"])
            .arg(&self.repo);
        let (took, out) = timed(&create)?;
        let doc: Value = serde_json::from_slice(&out.stdout.bytes)
            .map_err(|e| format!("herd-worktree create printed no JSON: {e}"))?;
        let path = doc["path"]
            .as_str()
            .map(PathBuf::from)
            .ok_or("herd-worktree create named no path")?;
        Ok((took, path))
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

impl Fixture {
    /// An ignored `node_modules` of `deps` small files in packages of 100, and the project
    /// file's `.gitignore` committed.
    fn dependencies(&self, deps: usize) -> Result<(), String> {
        progress(&format!(
            "herd-worktree: generating a node_modules of {deps} files"
        ));
        std::fs::write(self.repo.join(".gitignore"), "node_modules/\n")
            .map_err(|e| e.to_string())?;
        self.git(&["add", ".gitignore"])?;
        self.git(&["commit", "--quiet", "--message", "ignore node_modules"])?;
        for i in 0..deps {
            let path = self
                .repo
                .join(format!("node_modules/pkg{:04}/f{:02}.js", i / 100, i % 100));
            write_file(&path, i, 0)?;
        }
        Ok(())
    }

    /// A digest of every path and content below the source's `node_modules`.
    fn digest_dependencies(&self) -> Result<u64, String> {
        use std::hash::{Hash, Hasher};
        fn walk(
            dir: &Path,
            h: &mut std::collections::hash_map::DefaultHasher,
        ) -> Result<(), String> {
            let mut entries: Vec<_> = std::fs::read_dir(dir)
                .map_err(|e| format!("{}: {e}", dir.display()))?
                .filter_map(Result::ok)
                .collect();
            entries.sort_by_key(std::fs::DirEntry::file_name);
            for e in entries {
                let path = e.path();
                path.hash(h);
                if path.is_dir() {
                    walk(&path, h)?;
                } else {
                    std::fs::read(&path)
                        .map_err(|e| format!("{}: {e}", path.display()))?
                        .hash(h);
                }
            }
            Ok(())
        }
        let mut h = std::collections::hash_map::DefaultHasher::new();
        walk(&self.repo.join("node_modules"), &mut h)?;
        Ok(h.finish())
    }

    /// The setup environment of herd's side: the user's configuration (where the approval is)
    /// and the parent's trust.
    fn setup_command(&self, program: impl Into<OsString>) -> Command {
        self.command(program)
            .env("XDG_CONFIG_HOME", self.root.join("home/.config"))
            .env("HERD_PROJECT_TRUST", "trusted")
    }

    /// Writes and approves the project file linking `node_modules` by `strategy`.
    fn project_file(&self, strategy: &str) -> Result<(), String> {
        let dir = self.repo.join(".herd");
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let toml = format!("[[link]]\npath = \"node_modules\"\nstrategy = \"{strategy}\"\n");
        std::fs::write(dir.join("worktree.toml"), toml).map_err(|e| e.to_string())?;
        let trust = self
            .setup_command(&self.bin)
            .args(["trust", "--yes", "--cwd"])
            .arg(&self.repo);
        timed(&trust).map(drop)
    }

    /// With `cleanup`: `herd-cleanup remove` of a hard-linked worktree against `git worktree
    /// remove --force` of a `git worktree add` + `cp -al` one (creation untimed). Without: herd's
    /// creation with setup by `strategy` against `git worktree add` (+ `cp -a` for `copy`).
    fn setup(
        &self,
        rounds: usize,
        strategy: &str,
        cleanup: Option<&Path>,
    ) -> Result<Measured, String> {
        self.project_file(strategy)?;
        let mut herd_times = Vec::with_capacity(rounds);
        let mut base_times = Vec::with_capacity(rounds);
        let tag = match cleanup {
            Some(_) => "remove".to_owned(),
            None => strategy.to_owned(),
        };
        for round in 0..=rounds {
            let branch = format!("bench/setup-{tag}-{round}");
            let (created_in, path) = self.timed_create(
                self.setup_command(&self.bin),
                &branch,
                &format!("setup-{tag}-{round}"),
            )?;
            if !path.join("node_modules").is_dir() {
                return Err(format!(
                    "setup brought no node_modules into {}",
                    path.display()
                ));
            }
            let herd_took = match cleanup {
                None => {
                    self.remove(&path, &branch)?;
                    created_in
                }
                Some(cleanup) => {
                    let remove = self
                        .setup_command(cleanup)
                        .arg("--artifacts")
                        .arg(self.root.join("artifacts"))
                        .args(["remove", "--json", "--session-cwd"])
                        .arg(&self.root)
                        .arg(&path);
                    let (took, out) = timed(&remove)?;
                    let doc: Value = serde_json::from_slice(&out.stdout.bytes)
                        .map_err(|e| format!("herd-cleanup remove printed no JSON: {e}"))?;
                    if doc["outcome"] != "removed" || path.exists() {
                        return Err(format!(
                            "herd-cleanup remove did not remove: {}",
                            out.stdout.text()
                        ));
                    }
                    self.git(&["branch", "--quiet", "-D", &branch])?;
                    took
                }
            };
            let plain_branch = format!("bench/plain-{tag}-{round}");
            let plain = self.root.join("plain").join(format!("{tag}-{round}"));
            let cp = match (cleanup, strategy) {
                (Some(_), _) => " && cp -al node_modules \"$1/node_modules\"",
                (None, "copy") => " && cp -a node_modules \"$1/node_modules\"",
                _ => "",
            };
            let script = format!("git worktree add --quiet -b \"$2\" \"$1\"{cp}");
            let add = self
                .command("sh")
                .args(["-c", &script, "sh"])
                .arg(&plain)
                .arg(&plain_branch);
            let (added_in, _) = timed(&add)?;
            let base_took = match cleanup {
                None => {
                    self.remove(&plain, &plain_branch)?;
                    added_in
                }
                Some(_) => {
                    let remove = self
                        .command("git")
                        .args(["worktree", "remove", "--force"])
                        .arg(&plain);
                    let (took, _) = timed(&remove)?;
                    self.git(&["branch", "--quiet", "-D", &plain_branch])?;
                    let _ = subprocess::run(&Command::new("sync", CALL_BUDGET));
                    took
                }
            };
            // Round 0 warms the caches.
            if round > 0 {
                herd_times.push(herd_took);
                base_times.push(base_took);
            }
        }
        let baseline = match (cleanup, strategy) {
            (Some(_), _) => "git worktree remove --force",
            (None, "copy") => "git worktree add; cp -a",
            _ => "git worktree add",
        };
        Ok(Measured::new(Quantity::ms(median(&herd_times)), rounds)
            .against(baseline, Quantity::ms(median(&base_times))))
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
