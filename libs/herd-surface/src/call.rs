//! One bounded call of a multiplexer client, through `herd_core::subprocess`.

use std::ffi::OsString;
use std::path::Path;
use std::time::{Duration, Instant};

use herd_core::subprocess::{self, Command, Keep};

use crate::{Error, OUTPUT_CAP};

/// The grace period between SIGTERM and SIGKILL of a client that overran its budget: clients
/// are short-lived, and a hung one is killed quickly so the caller can answer within its budget.
const CLIENT_GRACE: Duration = Duration::from_millis(200);

/// What a client printed and how it exited.
#[derive(Debug)]
pub(crate) struct Reply {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Reply {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// The client's own words about a failure: stderr, else stdout, trimmed.
    pub fn message(&self) -> String {
        let text = if self.stderr.trim().is_empty() {
            &self.stdout
        } else {
            &self.stderr
        };
        let text = text.trim();
        if text.is_empty() {
            format!(
                "exit status {}",
                self.code
                    .map_or_else(|| "unknown".to_owned(), |c| c.to_string())
            )
        } else {
            text.chars().take(2000).collect()
        }
    }
}

/// Runs `program args…` with the time left until `deadline` (less the kill grace), capturing at
/// most [`OUTPUT_CAP`] per stream.
///
/// `label` names the command in errors (e.g. `tmux split-window`). A missing program is
/// [`Error::Unavailable`]; an overrun is [`Error::Timeout`], which may have had its effect.
pub(crate) fn call(
    surface: &'static str,
    label: &str,
    program: &Path,
    args: &[OsString],
    env: &[(&str, &str)],
    deadline: Instant,
) -> Result<Reply, Error> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left <= CLIENT_GRACE {
        return Err(Error::Timeout {
            command: label.to_owned(),
            budget_ms: 0,
        });
    }
    let budget = left - CLIENT_GRACE;
    let mut cmd = Command::new(program.as_os_str(), budget)
        .args(args.iter().cloned())
        .grace(CLIENT_GRACE)
        .stdout_cap(OUTPUT_CAP, Keep::Head)
        .stderr_cap(OUTPUT_CAP, Keep::Tail);
    for (key, value) in env {
        cmd = cmd.env(*key, *value);
    }
    let out = subprocess::run(&cmd).map_err(|err| match err {
        subprocess::Error::ProgramNotFound { .. } => Error::Unavailable {
            surface,
            reason: format!("`{}` is not installed", program.display()),
        },
        other => Error::Unavailable {
            surface,
            reason: format!("cannot run `{label}`: {other}"),
        },
    })?;
    if out.timed_out {
        return Err(Error::Timeout {
            command: label.to_owned(),
            budget_ms: budget.as_millis() as u64,
        });
    }
    if out.stdout.truncated {
        return Err(Error::Malformed {
            command: label.to_owned(),
            detail: format!("more than {OUTPUT_CAP} bytes of output"),
        });
    }
    Ok(Reply {
        code: out.code,
        stdout: out.stdout.text().into_owned(),
        stderr: out.stderr.text().into_owned(),
    })
}
