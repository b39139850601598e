//! Running one Herdr process through `herd_core::subprocess`: the budget, the output cap, the
//! environment.
//!
//! Herdr's environment is the caller's (so `HERDR_SOCKET_PATH`, `HERDR_SESSION` and
//! `HERDR_PANE_ID` of the pane herd runs in reach it) plus what the client sets. Standard
//! input is empty: no Herdr command herd uses reads it.

use std::ffi::OsString;
use std::time::Duration;

use herd_core::subprocess::{self, Command, Keep};

use crate::budget::OUTPUT_CAP;
use crate::error::Error;
use crate::reply::{Exit, Reply, Request};

/// Between SIGTERM and SIGKILL of a Herdr that ran out of budget. The CLI holds no state
/// worth a long goodbye; the server side is not affected by the client's death either way.
const GRACE: Duration = Duration::from_millis(500);

pub(crate) fn run(
    program: &OsString,
    env: &[(OsString, OsString)],
    budget: Duration,
    req: &Request,
) -> Result<Reply, Error> {
    let mut cmd = Command::new(program.clone(), budget)
        .args(req.args.iter().cloned())
        .stdin_null()
        .grace(GRACE)
        .stdout_cap(OUTPUT_CAP, Keep::Head)
        .stderr_cap(OUTPUT_CAP, Keep::Head);
    for (key, value) in env {
        cmd = cmd.env(key.clone(), value.clone());
    }
    let timeout = || Error::Timeout {
        command: req.command,
        budget,
        mutating: req.mutating,
    };
    let out = match subprocess::run(&cmd) {
        Ok(out) => out,
        // Killed yet still not gone: as unknown as a timeout.
        Err(subprocess::Error::Unkillable { .. }) => return Err(timeout()),
        Err(err) => {
            return Err(Error::Unavailable {
                command: req.command,
                reason: herd_core::error::chain(&err),
            });
        }
    };
    if out.timed_out {
        return Err(timeout());
    }
    let exit = match (out.code, out.signal) {
        (Some(code), _) => Exit::Code(code),
        (None, Some(signal)) => Exit::Signal(signal),
        (None, None) => {
            return Err(Error::Unavailable {
                command: req.command,
                reason: "ended without an exit status".to_owned(),
            });
        }
    };
    Ok(Reply {
        exit,
        truncated: out.stdout.truncated || out.stderr.truncated,
        stdout: out.stdout.bytes,
        stderr: out.stderr.bytes,
    })
}
