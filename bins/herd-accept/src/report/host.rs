//! What the host itself runs for an acceptance gate: the git index read for `no-staged-files`
//! and the verify commands. Child-reported success never counts; these do.
//!
//! A verify command runs as `sh -c <command>` in its own process group, in the run's directory
//! (or its `cwd` resolved from there), with the host's environment minus every `PI_SUBAGENT_*`
//! variable (as for accept checks) plus the command's `env`. On its timeout, or when herd-accept
//! is told to stop, the group gets SIGTERM and SIGKILL one second later. Its stdout and stderr
//! keep their first 12,000 characters each, and the value of every variable whose name looks
//! secret is replaced by `[REDACTED]` in them.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_core::subprocess::{self, Cancel, Command, Keep};
use herd_git::{Deadline, Git};
use herd_protocol::accept::{VerifyCommand, VerifyRun, VerifyStatus};

use super::{Host, Staged};
use crate::check::SCRUBBED_PREFIX;

/// How long `git status` may take.
pub const GIT_BUDGET: Duration = Duration::from_secs(30);
/// The grace between SIGTERM and SIGKILL of a verify command.
pub const VERIFY_GRACE: Duration = Duration::from_secs(1);
/// The characters of each verify stream kept.
pub const VERIFY_OUTPUT_CHARS: usize = 12_000;
/// The marker appended to a verify stream that was cut.
pub const TRUNCATED_MARKER: &str = "...[truncated]";

const SECRET_WORDS: [&str; 11] = [
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASS",
    "AUTH",
    "CREDENTIAL",
    "COOKIE",
    "SESSION",
    "PRIVATE",
    "API_KEY",
    "ACCESS_KEY",
];

/// The host: real git, real shells, stopped through `cancel`.
pub struct RealHost<'a> {
    cancel: &'a dyn Cancel,
}

impl<'a> RealHost<'a> {
    pub fn new(cancel: &'a dyn Cancel) -> RealHost<'a> {
        RealHost { cancel }
    }
}

impl Host for RealHost<'_> {
    fn staged(&mut self, cwd: &Path) -> Staged {
        staged_in(cwd)
    }

    fn verify(&mut self, command: &VerifyCommand, cwd: &Path) -> VerifyRun {
        run_verify(command, cwd, self.cancel)
    }
}

/// Reads which paths the git index of `cwd`'s repository has staged.
///
/// The call goes through herd-git, which bounds it, honours `HERD_GIT_BIN` and drops inherited
/// repository variables: a `GIT_DIR` inherited from a git hook would otherwise make git answer
/// for another repository's index.
pub fn staged_in(cwd: &Path) -> Staged {
    let args = ["status", "--porcelain=v1", "-z", "--untracked-files=no"].map(OsString::from);
    let git = Git::from_env().env("GIT_OPTIONAL_LOCKS", "0");
    let out = match git.output(cwd, &args, &Deadline::after(GIT_BUDGET)) {
        Ok(out) => out,
        Err(err) => return Staged::Unavailable(err.to_string()),
    };
    if out.code != Some(0) {
        let stderr = out.stderr.text();
        let first = stderr.lines().next().unwrap_or("git status failed").trim();
        return Staged::Unavailable(first.to_owned());
    }
    Staged::Paths(parse_porcelain_z(&out.stdout.bytes))
}

/// Parses `git status --porcelain=v1 -z`: the paths whose index column shows a change.
///
/// Each entry is `XY path`; a rename or copy staged in the index (`X` of `R` or `C`) is followed
/// by one more entry, the original path.
pub fn parse_porcelain_z(bytes: &[u8]) -> Vec<String> {
    let mut staged = Vec::new();
    let mut entries = bytes.split(|b| *b == 0).filter(|e| !e.is_empty());
    while let Some(entry) = entries.next() {
        if entry.len() < 4 {
            continue;
        }
        let index = entry[0];
        let path = String::from_utf8_lossy(&entry[3..]).into_owned();
        if matches!(index, b'R' | b'C') {
            entries.next();
        }
        if !matches!(index, b' ' | b'?' | b'!') {
            staged.push(path);
        }
    }
    staged
}

/// Runs one verify command (see the module docs).
pub fn run_verify(command: &VerifyCommand, cwd: &Path, cancel: &dyn Cancel) -> VerifyRun {
    let dir: PathBuf = match &command.cwd {
        Some(sub) => cwd.join(sub),
        None => cwd.to_path_buf(),
    };
    let mut cmd = Command::new("/bin/sh", Duration::from_millis(command.timeout_ms))
        .args(["-c", command.command.as_str()])
        .cwd(&dir)
        .env_remove_prefix(SCRUBBED_PREFIX)
        .grace(VERIFY_GRACE)
        // Four bytes per character at most: enough for the head that is kept.
        .stdout_cap(VERIFY_OUTPUT_CHARS * 4, Keep::Head)
        .stderr_cap(VERIFY_OUTPUT_CHARS * 4, Keep::Head);
    for (name, value) in &command.env {
        cmd = cmd.env(name, value);
    }
    let mut run = VerifyRun {
        id: command.id.clone(),
        command: command.command.clone(),
        cwd: dir.display().to_string(),
        status: VerifyStatus::Failed,
        exit_code: None,
        signal: None,
        duration_ms: 0,
        stdout: String::new(),
        stderr: String::new(),
        truncated: false,
        error: None,
        reused: false,
    };
    let out = match subprocess::run_with_cancel(&cmd, cancel, VERIFY_GRACE) {
        Ok(out) => out,
        Err(err) => {
            run.error = Some(err.to_string());
            run.status = if command.allow_failure {
                VerifyStatus::AllowedFailure
            } else {
                VerifyStatus::Failed
            };
            return run;
        }
    };
    let secrets = secret_values(&command.env);
    let (stdout, cut_out) = head_chars(&out.stdout.text(), out.stdout.truncated);
    let (stderr, cut_err) = head_chars(&out.stderr.text(), out.stderr.truncated);
    run.stdout = redact(&stdout, &secrets);
    run.stderr = redact(&stderr, &secrets);
    run.truncated = cut_out || cut_err;
    run.exit_code = out.code;
    run.signal = out.signal;
    run.duration_ms = u64::try_from(out.elapsed.as_millis()).unwrap_or(u64::MAX);
    run.status = if out.cancelled {
        VerifyStatus::Cancelled
    } else if out.timed_out {
        VerifyStatus::TimedOut
    } else if out.code == Some(0) {
        VerifyStatus::Passed
    } else if command.allow_failure {
        VerifyStatus::AllowedFailure
    } else {
        VerifyStatus::Failed
    };
    run
}

/// The first [`VERIFY_OUTPUT_CHARS`] characters, with [`TRUNCATED_MARKER`] when cut.
fn head_chars(text: &str, already_cut: bool) -> (String, bool) {
    let mut out: String = text.chars().take(VERIFY_OUTPUT_CHARS).collect();
    let cut = already_cut || out.len() < text.len();
    if cut {
        out.push_str(TRUNCATED_MARKER);
    }
    (out, cut)
}

/// The values (4 characters or longer) of the variables whose names look secret, in the
/// environment the command gets; longest first so a value containing another is replaced whole.
fn secret_values(overlay: &BTreeMap<String, String>) -> Vec<String> {
    let mut env: BTreeMap<OsString, OsString> = std::env::vars_os().collect();
    for (name, value) in overlay {
        env.insert(name.into(), value.into());
    }
    let mut values: Vec<String> = env
        .iter()
        .filter(|(name, _)| {
            let upper = name.to_string_lossy().to_ascii_uppercase();
            SECRET_WORDS.iter().any(|word| upper.contains(word))
        })
        .filter_map(|(_, value)| value.to_str().map(str::to_owned))
        .filter(|value| value.chars().count() >= 4)
        .collect();
    values.sort_by_key(|value| std::cmp::Reverse(value.len()));
    values.dedup();
    values
}

fn redact(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_owned();
    for secret in secrets {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), "[REDACTED]");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porcelain_index_column_decides() {
        let bytes = b"M  staged.rs\0 M worktree-only.rs\0A  new.rs\0R  new-name.rs\0old-name.rs\0MM both.rs\0?? untracked\0D  gone.rs\0";
        assert_eq!(
            parse_porcelain_z(bytes),
            ["staged.rs", "new.rs", "new-name.rs", "both.rs", "gone.rs"]
        );
        assert!(parse_porcelain_z(b"").is_empty());
        assert_eq!(
            parse_porcelain_z(b"A  sp ace\nline.rs\0"),
            ["sp ace\nline.rs"]
        );
    }

    #[test]
    fn heads_are_cut_on_characters() {
        let (text, cut) = head_chars(&"é".repeat(VERIFY_OUTPUT_CHARS + 1), false);
        assert!(cut);
        assert_eq!(
            text.chars().count(),
            VERIFY_OUTPUT_CHARS + TRUNCATED_MARKER.len()
        );
        assert_eq!(head_chars("short", false), ("short".to_owned(), false));
    }

    #[test]
    fn secrets_are_redacted_longest_first() {
        let secrets = vec!["abcdefgh".to_owned(), "abcd".to_owned()];
        assert_eq!(
            redact("x abcdefgh y abcd z", &secrets),
            "x [REDACTED] y [REDACTED] z"
        );
        let overlay = BTreeMap::from([
            ("MY_API_TOKEN".to_owned(), "s3cr3t-value".to_owned()),
            ("SHORT_TOKEN".to_owned(), "abc".to_owned()),
            ("PLAIN".to_owned(), "visible".to_owned()),
        ]);
        let values = secret_values(&overlay);
        assert!(values.contains(&"s3cr3t-value".to_owned()));
        assert!(!values.contains(&"abc".to_owned()));
        assert!(!values.contains(&"visible".to_owned()));
    }
}
