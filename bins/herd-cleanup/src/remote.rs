//! `list --host` and `remove --host`: the host's own `herd-cleanup`, run through herd-remote's
//! guarded call (the binaries `herd-launch host add` copied there), so every rule of a local
//! cleanup holds on the host, judged there by the host's herd.
//!
//! Nothing is decided here: the host's document is passed through (`--json` adds `host`), and
//! its exit code is this command's. An unknown host is refused before any connection; an
//! unreachable host, or a host whose herd is missing or another version, fails with what to run,
//! and nothing is changed on either side.

use std::path::Path;
use std::time::Duration;

use herd_cli::Output;
use herd_core::{Error, ErrorCode, escape};
use herd_remote::{Hosts, Ssh};
use serde_json::Value;

/// How long the host's cleanup may take (a removal inspects the checkout twice).
const BUDGET: Duration = Duration::from_secs(120);

/// Runs `herd-cleanup <args>` on `host` for the local artifacts directory `artifacts`; the
/// session cwd is a directory on the host (default: herd's own directory there, which holds the
/// clones worktree children are made from).
pub fn run(
    host: &str,
    artifacts: &Path,
    args: &[&str],
    session_cwd: Option<&str>,
    json: bool,
) -> Result<Output, Error> {
    let env = |k: &str| std::env::var(k).ok();
    let record = Hosts::from_env(&env)?.require(host)?;
    let ssh = Ssh::new(record.destination()?, &env)?;
    let remote_artifacts = record.artifacts_for(artifacts);
    let default_cwd = format!("{}/.herd", record.home);
    // `<subcommand> --session-cwd DIR [--json] <the rest>` (the rest may end in `-- TARGET`).
    let mut words: Vec<&str> = args.iter().take(1).copied().collect();
    words.extend(["--session-cwd", session_cwd.unwrap_or(&default_cwd)]);
    if json {
        words.push("--json");
    }
    words.extend(args.iter().skip(1).copied());
    let out = record
        .run_herd(
            &ssh,
            "herd-cleanup",
            &remote_artifacts,
            &words,
            None,
            BUDGET,
        )
        .map_err(|e| {
            Error::new(
                e.code,
                format!("{} (nothing was changed on {host})", e.message),
            )
            .with_field("host")
        })?;
    let code = out.code.unwrap_or(herd_core::exit::NO_ANSWER);
    let stdout = out.stdout.text().into_owned();
    let stderr = out.stderr.text().into_owned();
    if json {
        let mut doc: Value = serde_json::from_str(stdout.trim()).map_err(|_| {
            Error::new(
                ErrorCode::Unavailable,
                format!(
                    "{host} answered herd-cleanup {} with no JSON document (exit {code}): {}",
                    args.first().copied().unwrap_or(""),
                    escape::encode_host_value(stderr.trim(), 300)
                ),
            )
        })?;
        if let Some(obj) = doc.as_object_mut()
            && !obj.contains_key("error")
        {
            obj.insert("host".into(), host.into());
            // Each suggested call removes on the host.
            let entries = obj.get_mut("worktrees").and_then(Value::as_array_mut);
            for entry in entries.into_iter().flatten() {
                if let Some(call) = entry.get_mut("remove_command")
                    && let Some(text) = call.as_str()
                {
                    *call = crate::report::remove_command_on(text, host).into();
                }
            }
        }
        return Ok(Output::ok(doc, String::new()).with_exit(code));
    }
    if stdout.trim().is_empty() && code != herd_core::exit::SUCCESS {
        // The host's herd refused or failed: its error line, as its own.
        let said = stderr
            .lines()
            .find_map(|l| l.strip_prefix("error: "))
            .unwrap_or(stderr.trim());
        let kind = ErrorCode::ALL
            .into_iter()
            .find(|k| k.exit_code() == code)
            .unwrap_or(ErrorCode::Unavailable);
        return Err(Error::new(
            kind,
            format!("on {host}: {}", escape::encode_host_value(said.trim(), 600)),
        ));
    }
    // The host's report as it printed it; its removal suggestions name the host.
    let text = crate::report::on_host(&stdout, host);
    Ok(Output::ok(Value::Null, format!("on {host}:\n{}", text.trim_end())).with_exit(code))
}
