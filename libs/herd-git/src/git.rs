//! The [`Git`] handle: every git call herd makes, each bounded by a [`Deadline`].

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_core::subprocess::{self, Command, Keep};

use crate::status::{Status, is_object_id};
use crate::worktree::{WorktreeEntry, parse_list};
use crate::{Deadline, Error, OUTPUT_CAP};

/// The environment variable that names the git binary (default: `git` on `PATH`).
pub const BIN_ENV: &str = "HERD_GIT_BIN";

/// The time between SIGTERM and SIGKILL of a git call; taken out of its deadline so a call
/// that has to be killed still ends within the budget.
const GRACE: Duration = Duration::from_millis(500);

/// The variables that point git at another repository, index or object store (what
/// `git rev-parse --local-env-vars` lists). An inherited one, e.g. inside a git hook, would
/// make every call answer for the wrong repository, so they are removed.
const REPOSITORY_ENV: &[&str] = &[
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_OBJECT_DIRECTORY",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_PREFIX",
    "GIT_INTERNAL_SUPER_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR",
];

/// A git binary to run, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Git {
    bin: PathBuf,
    env: Vec<(OsString, OsString)>,
}

impl Default for Git {
    fn default() -> Git {
        Git::from_env()
    }
}

/// The facts `rev-parse` gives about the checkout a directory is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoFacts {
    /// The top of the checkout (`--show-toplevel`).
    pub toplevel: PathBuf,
    /// The checkout's own git directory (`--git-dir`), absolute.
    pub git_dir: PathBuf,
    /// The repository's shared git directory (`--git-common-dir`), absolute.
    pub common_dir: PathBuf,
}

impl RepoFacts {
    /// Whether the checkout is a linked worktree (its git dir is not the shared one).
    pub fn is_linked(&self) -> bool {
        self.git_dir != self.common_dir
    }
}

impl Git {
    /// `$HERD_GIT_BIN` when set and not empty, else `git` looked up on `PATH` once, here, so
    /// that each call starts the binary directly instead of searching `PATH` again (`git` as
    /// such when the search finds nothing, so a call fails as it would have).
    pub fn from_env() -> Git {
        let bin = std::env::var_os(BIN_ENV)
            .filter(|v| !v.is_empty())
            .map_or_else(|| on_path("git"), PathBuf::from);
        Git {
            bin,
            env: Vec::new(),
        }
    }

    /// A specific git binary.
    pub fn new(bin: impl Into<PathBuf>) -> Git {
        Git {
            bin: bin.into(),
            env: Vec::new(),
        }
    }

    /// Sets a variable for every call (after the repository variables are removed), e.g.
    /// `GIT_CONFIG_NOSYSTEM`.
    #[must_use]
    pub fn env(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> Git {
        self.env.push((name.into(), value.into()));
        self
    }

    pub fn bin(&self) -> &Path {
        &self.bin
    }

    /// Runs `git <args>` in `cwd` and returns its stdout; anything but a timely exit 0 with
    /// output under the cap is an error. `what` names the call in errors (`git status`).
    pub fn run<I, S>(&self, cwd: &Path, args: I, deadline: &Deadline) -> Result<Vec<u8>, Error>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
        let out = self.output(cwd, &args, deadline)?;
        let what = describe(&args);
        if out.code != Some(0) {
            return Err(failed(what, &out));
        }
        Ok(out.stdout.bytes)
    }

    /// [`Git::run`] with `input` on git's stdin (a `--batch` request).
    pub fn run_with_input(
        &self,
        cwd: &Path,
        args: &[OsString],
        input: Vec<u8>,
        deadline: &Deadline,
    ) -> Result<Vec<u8>, Error> {
        let what = describe(args);
        let cmd = self
            .command(self.bin.as_os_str(), cwd, &what, deadline)?
            .args(args.iter().cloned())
            .stdin_bytes(input)
            .stdout_cap(OUTPUT_CAP, Keep::Head)
            .stderr_cap(OUTPUT_CAP, Keep::Tail);
        let out = execute(&cmd, &what, deadline)?;
        if out.stdout.truncated {
            return Err(Error::TooLarge {
                what,
                cap: OUTPUT_CAP,
            });
        }
        if out.code != Some(0) {
            return Err(failed(what, &out));
        }
        Ok(out.stdout.bytes)
    }

    /// Runs `git <args>` and returns how it ended, whatever its exit code; a spawn failure,
    /// a timeout and an oversized stdout are errors.
    pub fn output(
        &self,
        cwd: &Path,
        args: &[OsString],
        deadline: &Deadline,
    ) -> Result<subprocess::Output, Error> {
        let what = describe(args);
        let cmd = self
            .command(self.bin.as_os_str(), cwd, &what, deadline)?
            .args(args.iter().cloned())
            .stdout_cap(OUTPUT_CAP, Keep::Head)
            .stderr_cap(OUTPUT_CAP, Keep::Tail);
        let out = execute(&cmd, &what, deadline)?;
        if out.stdout.truncated {
            return Err(Error::TooLarge {
                what,
                cap: OUTPUT_CAP,
            });
        }
        Ok(out)
    }

    /// A command running `program` in `cwd` for what is left of `deadline`, with git's
    /// environment: the repository variables removed, then this handle's variables set.
    fn command(
        &self,
        program: &OsStr,
        cwd: &Path,
        what: &str,
        deadline: &Deadline,
    ) -> Result<Command, Error> {
        let timeout = deadline.remaining().saturating_sub(GRACE);
        if timeout.is_zero() {
            return Err(Error::Timeout {
                what: what.to_owned(),
                budget: deadline.budget(),
            });
        }
        let mut cmd = Command::new(program, timeout)
            .cwd(cwd)
            .grace(GRACE)
            // Never ask a question on a terminal nobody is watching.
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("LC_ALL", "C");
        for name in REPOSITORY_ENV {
            cmd = cmd.env_remove(*name);
        }
        for (name, value) in &self.env {
            cmd = cmd.env(name.clone(), value.clone());
        }
        Ok(cmd)
    }

    /// `git rev-parse --verify --quiet --end-of-options <rev>`: its output when `rev` resolves,
    /// `None` when it does not.
    fn verify(
        &self,
        cwd: &Path,
        rev: String,
        deadline: &Deadline,
    ) -> Result<Option<Vec<u8>>, Error> {
        let args: Vec<OsString> = vec![
            "rev-parse".into(),
            "--verify".into(),
            "--quiet".into(),
            "--end-of-options".into(),
            rev.into(),
        ];
        let out = self.output(cwd, &args, deadline)?;
        match out.code {
            Some(0) => Ok(Some(out.stdout.bytes)),
            // `--verify --quiet` exits 1 without a message when the revision does not resolve.
            Some(1) => Ok(None),
            _ => Err(failed(describe(&args), &out)),
        }
    }

    /// The top, git dir and common dir of the checkout `cwd` is in.
    pub fn facts(&self, cwd: &Path, deadline: &Deadline) -> Result<RepoFacts, Error> {
        let out = self.run(
            cwd,
            [
                "rev-parse",
                "--path-format=absolute",
                "--show-toplevel",
                "--git-dir",
                "--git-common-dir",
            ],
            deadline,
        )?;
        let lines = lines(&out);
        parse_facts(&lines)
    }

    /// [`Git::facts`] and `rev` resolved to a commit, in one call; `None` when `rev` names no
    /// commit.
    pub fn facts_and_commit(
        &self,
        cwd: &Path,
        rev: &str,
        deadline: &Deadline,
    ) -> Result<(RepoFacts, Option<String>), Error> {
        let args: Vec<OsString> = [
            "rev-parse",
            "--path-format=absolute",
            "--show-toplevel",
            "--git-dir",
            "--git-common-dir",
            "--verify",
            "--quiet",
            "--end-of-options",
        ]
        .iter()
        .map(OsString::from)
        .chain([OsString::from(format!("{rev}^{{commit}}"))])
        .collect();
        let out = self.output(cwd, &args, deadline)?;
        let what = describe(&args);
        let lines = lines(&out.stdout.bytes);
        match out.code {
            Some(0) if lines.len() == 4 => {
                let facts = parse_facts(&lines[..3])?;
                let sha = object_id(&lines[3], &what)?;
                Ok((facts, Some(sha)))
            }
            // `--verify --quiet` exits 1 when the revision does not resolve, after printing
            // the facts; any other failure (not a repository: 128) is an error.
            Some(1) if lines.len() == 3 => Ok((parse_facts(&lines)?, None)),
            Some(0) | Some(1) => Err(Error::Malformed {
                what,
                detail: format!("expected 3 or 4 lines, got {}", lines.len()),
            }),
            _ => Err(failed(what, &out)),
        }
    }

    /// `rev` resolved to a full commit id; `None` when it names no commit.
    pub fn resolve_commit(
        &self,
        cwd: &Path,
        rev: &str,
        deadline: &Deadline,
    ) -> Result<Option<String>, Error> {
        let Some(out) = self.verify(cwd, format!("{rev}^{{commit}}"), deadline)? else {
            return Ok(None);
        };
        match lines(&out).as_slice() {
            [sha] => object_id(sha, "git rev-parse").map(Some),
            _ => Err(Error::Malformed {
                what: "git rev-parse".into(),
                detail: "expected one line".into(),
            }),
        }
    }

    /// The principal checkout of the repository `facts` describe: the top itself for a
    /// principal checkout, else the first entry of `git worktree list`.
    pub fn principal_checkout(
        &self,
        cwd: &Path,
        facts: &RepoFacts,
        deadline: &Deadline,
    ) -> Result<PathBuf, Error> {
        if !facts.is_linked() {
            return Ok(facts.toplevel.clone());
        }
        let list = self.worktree_list(cwd, deadline)?;
        let first = list.into_iter().next().ok_or_else(|| Error::Malformed {
            what: "git worktree list".into(),
            detail: "no principal checkout listed".into(),
        })?;
        if first.bare {
            return Err(Error::Malformed {
                what: "git worktree list".into(),
                detail: "the repository is bare; it has no principal checkout".into(),
            });
        }
        Ok(first.path)
    }

    /// Whether the local branch `branch` exists (`refs/heads/<branch>`).
    pub fn branch_exists(
        &self,
        cwd: &Path,
        branch: &str,
        deadline: &Deadline,
    ) -> Result<bool, Error> {
        let found = self.verify(cwd, format!("refs/heads/{branch}"), deadline)?;
        Ok(found.is_some())
    }

    /// The branch `HEAD` of the checkout at `cwd` is on (short name); `None` when detached.
    pub fn head_branch(&self, cwd: &Path, deadline: &Deadline) -> Result<Option<String>, Error> {
        let args: Vec<OsString> = ["symbolic-ref", "--quiet", "--short", "HEAD"]
            .iter()
            .map(OsString::from)
            .collect();
        let out = self.output(cwd, &args, deadline)?;
        match out.code {
            Some(0) => {
                let text = String::from_utf8_lossy(&out.stdout.bytes);
                let name = text.trim_end_matches('\n');
                if name.is_empty() || name.contains('\n') {
                    return Err(Error::Malformed {
                        what: describe(&args),
                        detail: "expected one branch name".into(),
                    });
                }
                Ok(Some(name.to_owned()))
            }
            // `--quiet` exits 1 without a message when HEAD is detached.
            Some(1) if out.stderr.bytes.is_empty() => Ok(None),
            _ => Err(failed(describe(&args), &out)),
        }
    }

    /// The value of `key` in the configuration git reads at `cwd` (includes followed);
    /// `None` when it is not set. `git_dir` reads a repository's own configuration from its
    /// git directory (e.g. `core.worktree` of a submodule's common dir).
    pub fn config_get(
        &self,
        cwd: &Path,
        git_dir: Option<&Path>,
        key: &str,
        deadline: &Deadline,
    ) -> Result<Option<String>, Error> {
        let mut args: Vec<OsString> = Vec::new();
        if let Some(dir) = git_dir {
            let mut flag = OsString::from("--git-dir=");
            flag.push(dir);
            args.push(flag);
        }
        args.extend(["config", "--includes", "--get", "--end-of-options", key].map(OsString::from));
        let out = self.output(cwd, &args, deadline)?;
        match out.code {
            Some(0) => Ok(Some(
                String::from_utf8_lossy(&out.stdout.bytes)
                    .trim_end_matches('\n')
                    .to_owned(),
            )),
            // Exit 1: the key is not set.
            Some(1) => Ok(None),
            _ => Err(failed(describe(&args), &out)),
        }
    }

    /// `git worktree add -b <branch> <path> <base>`: a new checkout on a new branch.
    pub fn worktree_add(
        &self,
        cwd: &Path,
        path: &Path,
        branch: &str,
        base: &str,
        deadline: &Deadline,
    ) -> Result<(), Error> {
        let args: Vec<OsString> = vec![
            "worktree".into(),
            "add".into(),
            "--quiet".into(),
            "-b".into(),
            branch.into(),
            "--".into(),
            path.as_os_str().to_owned(),
            base.into(),
        ];
        self.run(cwd, &args, deadline).map(drop)
    }

    /// The registered checkouts of the repository `cwd` is in; the principal one first.
    pub fn worktree_list(
        &self,
        cwd: &Path,
        deadline: &Deadline,
    ) -> Result<Vec<WorktreeEntry>, Error> {
        let out = self.run(cwd, ["worktree", "list", "--porcelain", "-z"], deadline)?;
        parse_list(&out)
    }

    /// `git worktree remove -- <path>`, never forced: git refuses a dirty checkout.
    pub fn worktree_remove(
        &self,
        cwd: &Path,
        path: &Path,
        deadline: &Deadline,
    ) -> Result<(), Error> {
        let args: Vec<OsString> = vec![
            "worktree".into(),
            "remove".into(),
            "--".into(),
            path.as_os_str().to_owned(),
        ];
        self.run(cwd, &args, deadline).map(drop)
    }

    /// `git worktree prune`: drops registrations whose checkout is gone.
    pub fn worktree_prune(&self, cwd: &Path, deadline: &Deadline) -> Result<(), Error> {
        self.run(cwd, ["worktree", "prune"], deadline).map(drop)
    }

    /// The status of the checkout at `cwd`: branch headers, all untracked files, no rename
    /// detection (a rename shows as a deletion and an addition), and no optional locks so the
    /// read never competes with a writer for the index lock.
    pub fn status(&self, cwd: &Path, deadline: &Deadline) -> Result<Status, Error> {
        let out = self.run(
            cwd,
            [
                "--no-optional-locks",
                "status",
                "--porcelain=v2",
                "-z",
                "--branch",
                "--untracked-files=all",
                "--no-renames",
            ],
            deadline,
        )?;
        Status::parse(&out)
    }

    /// `git rev-list --count <base>..HEAD`: how many commits `HEAD` has that `base` lacks.
    pub fn commits_ahead(&self, cwd: &Path, base: &str, deadline: &Deadline) -> Result<u64, Error> {
        let args: Vec<OsString> = vec![
            "rev-list".into(),
            "--count".into(),
            "--end-of-options".into(),
            format!("{base}..HEAD").into(),
        ];
        let out = self.run(cwd, &args, deadline)?;
        let text = String::from_utf8_lossy(&out);
        text.trim_end_matches('\n')
            .parse()
            .map_err(|_| Error::Malformed {
                what: describe(&args),
                detail: "the count is not a number".into(),
            })
    }

    /// The files the commits since the merge base of `base` and `HEAD` changed
    /// (`git diff --name-only --no-renames <base>...HEAD`), both sides of a rename included.
    pub fn changed_since_merge_base(
        &self,
        cwd: &Path,
        base: &str,
        deadline: &Deadline,
    ) -> Result<Vec<String>, Error> {
        let args: Vec<OsString> = vec![
            "--no-optional-locks".into(),
            "diff".into(),
            "--name-only".into(),
            "-z".into(),
            "--no-renames".into(),
            "--no-ext-diff".into(),
            "--no-textconv".into(),
            // A base is a revision, never an option (`--output=<file>` would write a file).
            "--end-of-options".into(),
            format!("{base}...HEAD").into(),
            "--".into(),
        ];
        let out = self.run(cwd, &args, deadline)?;
        Ok(nul_separated(&out))
    }

    /// How many ignored files the checkout at `cwd` holds, counted as the listing streams by:
    /// the listing itself is never held, whatever its size.
    ///
    /// One `git ls-files --others --ignored --exclude-standard -z`, whose stdout is only counted
    /// (its NUL terminators, [`Keep::Count`]), bounded by `deadline`.
    pub fn count_ignored(&self, cwd: &Path, deadline: &Deadline) -> Result<u64, Error> {
        let what = "git ls-files --others --ignored".to_owned();
        let cmd = self
            .command(self.bin.as_os_str(), cwd, &what, deadline)?
            .args([
                "ls-files",
                "--others",
                "--ignored",
                "--exclude-standard",
                "-z",
            ])
            .stdout_cap(0, Keep::Count(0))
            .stderr_cap(64 * 1024, Keep::Tail);
        let out = execute(&cmd, &what, deadline)?;
        if out.code != Some(0) {
            return Err(failed(what, &out));
        }
        Ok(out.stdout.counted)
    }
}

/// The first executable file named `name` in a directory of `PATH`, as `execvp` would find it;
/// `name` itself when there is none.
fn on_path(name: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .filter(|dir| dir.is_absolute())
            .map(|dir| dir.join(name))
            .find(|candidate| {
                std::fs::metadata(candidate)
                    .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            })
    });
    found.unwrap_or_else(|| PathBuf::from(name))
}

/// Runs `cmd`; a failure to start it and a timeout are errors.
fn execute(cmd: &Command, what: &str, deadline: &Deadline) -> Result<subprocess::Output, Error> {
    let out = subprocess::run(cmd).map_err(|e| Error::Spawn {
        bin: PathBuf::from(cmd.program()),
        reason: herd_core::error::chain(&e),
    })?;
    if out.timed_out {
        return Err(Error::Timeout {
            what: what.to_owned(),
            budget: deadline.budget(),
        });
    }
    Ok(out)
}

/// Parses the three path lines of `rev-parse --show-toplevel --git-dir --git-common-dir`.
fn parse_facts(lines: &[Vec<u8>]) -> Result<RepoFacts, Error> {
    let [top, git_dir, common] = lines else {
        return Err(Error::Malformed {
            what: "git rev-parse".into(),
            detail: format!("expected 3 lines, got {}", lines.len()),
        });
    };
    let path = |bytes: &Vec<u8>| -> Result<PathBuf, Error> {
        let p = PathBuf::from(OsString::from_vec(bytes.clone()));
        if p.is_absolute() {
            Ok(p)
        } else {
            Err(Error::Malformed {
                what: "git rev-parse".into(),
                detail: format!("{} is not an absolute path", p.display()),
            })
        }
    };
    Ok(RepoFacts {
        toplevel: path(top)?,
        git_dir: path(git_dir)?,
        common_dir: path(common)?,
    })
}

fn object_id(line: &[u8], what: &str) -> Result<String, Error> {
    let text = String::from_utf8_lossy(line);
    if is_object_id(&text) {
        Ok(text.into_owned())
    } else {
        Err(Error::Malformed {
            what: what.to_owned(),
            detail: "the answer is not an object id".into(),
        })
    }
}

/// Splits output into lines without their `\n` (paths may hold any other byte).
fn lines(bytes: &[u8]) -> Vec<Vec<u8>> {
    let trimmed = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    if trimmed.is_empty() {
        return Vec::new();
    }
    trimmed.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect()
}

fn nul_separated(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|&b| b == 0)
        .filter(|f| !f.is_empty())
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect()
}

/// `git <subcommand>`, skipping global options and the values of those that take one
/// (`-c maintenance.auto=false commit` is `git commit`), for messages.
fn describe(args: &[OsString]) -> String {
    let mut args = args.iter().map(|a| a.to_string_lossy());
    while let Some(arg) = args.next() {
        match arg.as_ref() {
            "-c" | "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env" => {
                args.next();
            }
            option if option.starts_with('-') => {}
            sub => return format!("git {sub}"),
        }
    }
    "git".to_owned()
}

fn exit_status(out: &subprocess::Output) -> String {
    match (out.code, out.signal) {
        (Some(code), _) => format!("exit {code}"),
        (None, Some(sig)) => format!("signal {sig}"),
        (None, None) => "no exit status".into(),
    }
}

fn failed(what: String, out: &subprocess::Output) -> Error {
    Error::Failed {
        what,
        status: exit_status(out),
        stderr: last_chars(out.stderr.text().trim(), 2000),
    }
}

/// The last `max` characters of `s` (the end of git's stderr says what went wrong).
fn last_chars(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_owned();
    }
    let skip = n - max;
    let mut out = String::from("…");
    out.extend(s.chars().skip(skip));
    out
}
