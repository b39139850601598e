//! Verify results memoized per tracked workspace state and effective environment (docs/tools.md,
//! "Acceptance gates", memoized verification): an unchanged tree does not rerun the same command.
//!
//! The key is the SHA-256 of, each field length-prefixed:
//!
//! - the command, its timeout and whether it may fail, and the directory it runs in;
//! - the environment it gets: the host's variables minus every `PI_SUBAGENT_*` one, with the
//!   command's `env` laid over them, sorted by name;
//! - the workspace: the top of the checkout the directory is in and the raw output of
//!   `git status --porcelain=v2 -z --branch --untracked-files=all` there, which names the `HEAD`
//!   commit, each changed entry's `HEAD` and index blob ids and modes, and every untracked file
//!   that is not ignored; then, for each entry whose working-tree side differs from the index
//!   (and each untracked or unmerged file), the SHA-256 of its bytes (a symbolic link: its
//!   target; a missing file: a marker).
//!
//! Ignored files are not workspace state (a build's output is not an input). Nothing is
//! memoized when the directory is not in a git checkout, git does not answer, a path cannot be
//! named losslessly, or the changed files add up to more than [`HASH_LIMIT`] bytes: then the
//! command runs every time, as without a memo. A run that passed, failed or failed as allowed is
//! kept; one that timed out, was cancelled or could not start is not. A kept run found again
//! comes back with `reused: true`.
//!
//! Each result is one private file, herd-protocol's [`Memo`] in `<dir>/<key>.json`, written
//! atomically and read with a bound; one that cannot be read is as none.

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use herd_core::sidecar;
use herd_git::{Deadline, EntryKind, Git, Status};
use herd_protocol::accept::{
    MEMO_VERSION, Memo, VerifyCommand, VerifyRun, VerifyStatus, memo_file, read_memo,
};
use sha2::{Digest, Sha256};

use super::host::GIT_BUDGET;
use super::{Host, Staged};
use crate::check::SCRUBBED_PREFIX;

/// The most bytes of changed and untracked files hashed for one key.
pub const HASH_LIMIT: u64 = 64 * 1024 * 1024;

/// A host whose verify runs are memoized in `dir`; everything else is `inner`'s.
pub struct MemoHost<H> {
    inner: H,
    dir: PathBuf,
}

impl<H: Host> MemoHost<H> {
    pub fn new(inner: H, dir: impl Into<PathBuf>) -> MemoHost<H> {
        MemoHost {
            inner,
            dir: dir.into(),
        }
    }
}

impl<H: Host> Host for MemoHost<H> {
    fn staged(&mut self, cwd: &Path) -> Staged {
        self.inner.staged(cwd)
    }

    fn verify(&mut self, command: &VerifyCommand, cwd: &Path) -> VerifyRun {
        let Some(key) = key(command, cwd) else {
            return self.inner.verify(command, cwd);
        };
        let path = memo_file(&self.dir, &key);
        if let Some(memo) = read_memo(&path) {
            if memo.key == key && memo.run.command == command.command {
                let mut run = memo.run;
                run.id.clone_from(&command.id);
                run.reused = true;
                return run;
            }
        }
        let run = self.inner.verify(command, cwd);
        let keep = run.error.is_none()
            && matches!(
                run.status,
                VerifyStatus::Passed | VerifyStatus::Failed | VerifyStatus::AllowedFailure
            );
        if keep {
            let memo = Memo {
                format_version: MEMO_VERSION,
                key,
                run: run.clone(),
            };
            // A memo that cannot be written costs the next run its reuse, nothing more.
            let _ = sidecar::write_json(&path, &memo);
        }
        run
    }
}

/// The memo key of `command` run from `cwd` (see the module docs), or `None` when the workspace
/// state cannot be told.
pub fn key(command: &VerifyCommand, cwd: &Path) -> Option<String> {
    let dir = match &command.cwd {
        Some(sub) => cwd.join(sub),
        None => cwd.to_path_buf(),
    };
    let mut hash = Framed(Sha256::new());
    hash.field(b"herd verify memo 1");
    hash.field(command.command.as_bytes());
    hash.field(command.timeout_ms.to_string().as_bytes());
    hash.field(if command.allow_failure { b"1" } else { b"0" });
    hash.field(dir.as_os_str().as_bytes());
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(name, _)| !name.as_bytes().starts_with(SCRUBBED_PREFIX.as_bytes()))
        .filter(|(name, _)| !command.env.contains_key(&*name.to_string_lossy()))
        .chain(
            command
                .env
                .iter()
                .map(|(name, value)| (name.into(), value.into())),
        )
        .collect();
    env.sort();
    hash.field(env.len().to_string().as_bytes());
    for (name, value) in &env {
        hash.field(name.as_bytes());
        hash.field(value.as_bytes());
    }
    workspace(&dir, &mut hash)?;
    Some(hex(&hash.0.finalize()))
}

/// Adds the workspace state of the checkout `dir` is in to `hash`.
fn workspace(dir: &Path, hash: &mut Framed) -> Option<()> {
    let git = Git::from_env().env("GIT_OPTIONAL_LOCKS", "0");
    let deadline = Deadline::after(GIT_BUDGET);
    let top = git.facts(dir, &deadline).ok()?.toplevel;
    let args = [
        "status",
        "--porcelain=v2",
        "-z",
        "--branch",
        "--untracked-files=all",
    ]
    .map(OsString::from);
    let out = git.output(&top, &args, &deadline).ok()?;
    if out.code != Some(0) {
        return None;
    }
    let status = Status::parse(&out.stdout.bytes).ok()?;
    hash.field(top.as_os_str().as_bytes());
    hash.field(&out.stdout.bytes);
    let mut budget = HASH_LIMIT;
    for entry in &status.entries {
        let worktree_side = match entry.kind {
            EntryKind::Untracked | EntryKind::Unmerged => true,
            EntryKind::Changed | EntryKind::Renamed { .. } => entry.xy[1] != b'.',
            EntryKind::Ignored => false,
        };
        if !worktree_side {
            continue;
        }
        // A path git gave in bytes that are not UTF-8 came back changed: it cannot be read.
        if entry.path.contains('\u{FFFD}') {
            return None;
        }
        hash.field(entry.path.as_bytes());
        hash.field(&file_digest(&top.join(&entry.path), &mut budget)?);
    }
    Some(())
}

/// The SHA-256 of a working-tree file's bytes (a symbolic link's target, a marker for a missing
/// path or a directory), taken from `budget`.
fn file_digest(path: &Path, budget: &mut u64) -> Option<Vec<u8>> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(b"missing".to_vec()),
        Err(_) => return None,
    };
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(path).ok()?;
        let mut out = b"link:".to_vec();
        out.extend_from_slice(target.as_os_str().as_bytes());
        return Some(out);
    }
    if meta.is_dir() {
        // An untracked nested repository or a submodule: its own status is not followed.
        return Some(b"directory".to_vec());
    }
    *budget = budget.checked_sub(meta.len())?;
    let mut file = std::fs::File::open(path).ok()?;
    let mut digest = Sha256::new();
    let mut buf = vec![0; 64 * 1024];
    let mut left = meta.len().saturating_add(1);
    loop {
        let n = file.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        // A file that grows while it is read is read to its size at the start, plus one byte:
        // enough to see that it changed.
        left = left.checked_sub(n as u64)?;
        digest.update(&buf[..n]);
    }
    Some(digest.finalize().to_vec())
}

/// A hasher fed length-prefixed fields, so that no two field lists hash alike.
struct Framed(Sha256);

impl Framed {
    fn field(&mut self, bytes: &[u8]) {
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use herd_e2e::git::Sandbox;

    use super::*;

    /// A host that counts its verify runs and passes each.
    struct Counting(usize);

    impl Host for Counting {
        fn staged(&mut self, _: &Path) -> Staged {
            Staged::Paths(Vec::new())
        }

        fn verify(&mut self, command: &VerifyCommand, cwd: &Path) -> VerifyRun {
            self.0 += 1;
            VerifyRun {
                id: command.id.clone(),
                command: command.command.clone(),
                cwd: cwd.display().to_string(),
                status: VerifyStatus::Passed,
                exit_code: Some(0),
                signal: None,
                duration_ms: 1,
                stdout: format!("run {}", self.0),
                stderr: String::new(),
                truncated: false,
                error: None,
                reused: false,
            }
        }
    }

    fn command(text: &str) -> VerifyCommand {
        VerifyCommand {
            id: "gate".into(),
            command: text.into(),
            timeout_ms: 1_000,
            cwd: None,
            env: BTreeMap::new(),
            allow_failure: false,
        }
    }

    #[test]
    fn an_unchanged_workspace_reuses_the_run_and_each_change_reruns_it() {
        let sandbox = Sandbox::new();
        let repo = sandbox.repo("r");
        sandbox.write(&repo, ".gitignore", "build/\n");
        sandbox.write(&repo, "a.txt", "one\n");
        sandbox.commit_all(&repo, "init");
        let memo = sandbox.path().join("memo");
        let mut host = MemoHost::new(Counting(0), &memo);
        let gate = command("make test");
        let first = host.verify(&gate, &repo);
        assert!(!first.reused);
        let again = host.verify(&gate, &repo);
        assert!(again.reused, "{again:?}");
        assert_eq!((host.inner.0, again.stdout.as_str()), (1, "run 1"));
        // Ignored files are not workspace state.
        sandbox.write(&repo, "build/out.o", "x");
        assert!(host.verify(&gate, &repo).reused);
        // A tracked file's contents, twice with the same status line (` M a.txt`).
        sandbox.write(&repo, "a.txt", "two\n");
        assert!(!host.verify(&gate, &repo).reused);
        sandbox.write(&repo, "a.txt", "three\n");
        assert!(!host.verify(&gate, &repo).reused);
        assert!(host.verify(&gate, &repo).reused);
        // An untracked file, and a change of it.
        sandbox.write(&repo, "new.txt", "n\n");
        assert!(!host.verify(&gate, &repo).reused);
        sandbox.write(&repo, "new.txt", "m\n");
        assert!(!host.verify(&gate, &repo).reused);
        // The index: the same contents staged.
        sandbox.git(&repo, ["add", "a.txt"]);
        assert!(!host.verify(&gate, &repo).reused);
        // A commit.
        sandbox.commit_all(&repo, "more");
        assert!(!host.verify(&gate, &repo).reused);
        assert!(host.verify(&gate, &repo).reused);
        // Another command, another environment.
        assert!(!host.verify(&command("make lint"), &repo).reused);
        let mut with_env = gate.clone();
        with_env.env.insert("MODE".into(), "strict".into());
        assert!(!host.verify(&with_env, &repo).reused);
        assert!(host.verify(&with_env, &repo).reused);
        assert_eq!(host.inner.0, 9);
        // The memo files are private.
        use std::os::unix::fs::PermissionsExt;
        for entry in std::fs::read_dir(&memo).unwrap() {
            let mode = entry.unwrap().metadata().unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn outside_a_checkout_nothing_is_memoized() {
        let sandbox = Sandbox::new();
        let dir = sandbox.path().join("plain");
        std::fs::create_dir(&dir).unwrap();
        let mut host = MemoHost::new(Counting(0), sandbox.path().join("memo"));
        assert_eq!(key(&command("true"), &dir), None);
        assert!(!host.verify(&command("true"), &dir).reused);
        assert!(!host.verify(&command("true"), &dir).reused);
        assert_eq!(host.inner.0, 2);
    }
}
