//! The test double of the `herdr` executable: it replays recorded replies, nothing else.
//!
//! Given its argv and environment, the double finds the recordings of exactly that command
//! line (same argv; every `NAME=value` the recording ran with present with the same value) and
//! answers as Herdr did: the recorded output on the recorded stream, the recorded exit code.
//! When one command was recorded several times (`pane get w1:p2` before and after the pane
//! closed), the recording with the most matching environment wins, and a test chooses among
//! the rest with `HERDR_DOUBLE_PICK`. A command that was never recorded is refused with
//! [`REFUSED`], so no reply is ever made up.
//!
//! Faults a test can inject with `HERDR_DOUBLE_FAULT`, each a thing that happens to real
//! processes rather than a reply Herdr gave:
//! - `hang`: print nothing and do not exit (for [`HANG`]), as a wedged server would;
//! - `truncate:N`: the matched reply cut after N bytes, as a killed writer leaves it;
//! - `omit:a.b.c`: the matched JSON reply without the field at that path (an incomplete
//!   reply, e.g. `omit:result.root_pane`).

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::Value;

use crate::recording::{self, Recording};

/// The directory of recordings to replay (default: this package's fixtures).
pub const RECORDINGS_ENV: &str = "HERDR_DOUBLE_RECORDINGS";
/// Comma-separated recording names or numbers that win when several recordings match.
pub const PICK_ENV: &str = "HERDR_DOUBLE_PICK";
/// A fault to inject, see the module documentation.
pub const FAULT_ENV: &str = "HERDR_DOUBLE_FAULT";

/// The exit code of the double refusing to answer (no recording, bad fault). Herdr itself
/// exits 0, 1 or 2.
pub const REFUSED: i32 = 125;

/// How long `hang` hangs: far beyond any budget, yet bounded, so a forgotten double ends.
pub const HANG: Duration = Duration::from_secs(600);

/// What the double does: print `stdout` and `stderr`, hang for `hang` if set, exit with `exit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub exit: i32,
    pub hang: Option<Duration>,
}

impl Outcome {
    fn refuse(why: String) -> Outcome {
        Outcome {
            stdout: Vec::new(),
            stderr: format!("herdr-double: {why}\n").into_bytes(),
            exit: REFUSED,
            hang: None,
        }
    }
}

/// The whole `herdr-double` executable: answers this process's argv and environment on its
/// stdout, stderr and exit code.
///
/// Another package's tests get the double as a two-line `[[bin]]` of their own (binaries of a
/// dependency are not built): `fn main() -> ExitCode { herd_herdr::double::main() }`.
pub fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let env = std::env::vars_os()
        .filter_map(|(key, value)| Some((key.into_string().ok()?, value.into_string().ok()?)))
        .collect();
    let outcome = replay(&args, &env);
    if let Some(hang) = outcome.hang {
        std::thread::sleep(hang);
    }
    // A reader that went away is no reason to answer differently.
    let _ = std::io::stdout().write_all(&outcome.stdout);
    let _ = std::io::stderr().write_all(&outcome.stderr);
    ExitCode::from(u8::try_from(outcome.exit).unwrap_or(u8::MAX))
}

/// Answers the command line `args` (without the program name) under environment `env`.
pub fn replay(args: &[OsString], env: &HashMap<String, String>) -> Outcome {
    match answer(args, env) {
        Ok(outcome) => outcome,
        Err(why) => Outcome::refuse(why),
    }
}

fn answer(args: &[OsString], env: &HashMap<String, String>) -> Result<Outcome, String> {
    let fault = env.get(FAULT_ENV).map(String::as_str).unwrap_or_default();
    if fault == "hang" {
        return Ok(Outcome {
            stdout: Vec::new(),
            stderr: Vec::new(),
            exit: 0,
            hang: Some(HANG),
        });
    }
    let args: Vec<&str> = args
        .iter()
        .map(|arg| arg.to_str().ok_or("an argument is not UTF-8"))
        .collect::<Result<_, _>>()?;
    let dir = env
        .get(RECORDINGS_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(recording::fixture_dir);
    let all = recording::load(&dir)?;
    let picks: Vec<&str> = env
        .get(PICK_ENV)
        .map(|list| list.split(',').map(str::trim).collect())
        .unwrap_or_default();
    let found = choose(&all, &args, env, &picks)?;
    let mut stdout = found.stdout().to_vec();
    let mut stderr = found.stderr().to_vec();
    match fault.split_once(':') {
        None if fault.is_empty() => {}
        Some(("truncate", count)) => {
            let count: usize = count
                .parse()
                .map_err(|_| format!("bad fault {fault:?}: not a byte count"))?;
            stdout.truncate(count);
            stderr.truncate(count);
        }
        Some(("omit", path)) => stdout = omit(&found.name, &stdout, path)?,
        _ => return Err(format!("unknown fault {fault:?}")),
    }
    Ok(Outcome {
        stdout,
        stderr,
        exit: found.exit,
        hang: None,
    })
}

/// Picks the recording of this command line: the most specific environment match, then the
/// picked one among equals.
fn choose<'a>(
    all: &'a [Recording],
    args: &[&str],
    env: &HashMap<String, String>,
    picks: &[&str],
) -> Result<&'a Recording, String> {
    let mut matching: Vec<&Recording> = all
        .iter()
        .filter(|rec| {
            rec.invocation.as_ref().is_some_and(|call| {
                call.args == args
                    && call
                        .env
                        .iter()
                        .all(|(key, value)| env.get(key) == Some(value))
            })
        })
        .collect();
    if matching.is_empty() {
        return Err(format!("no recording of `herdr {}`", args.join(" ")));
    }
    let picked: Vec<&Recording> = matching
        .iter()
        .copied()
        .filter(|rec| picks.iter().any(|pick| rec.is_named(pick)))
        .collect();
    if !picked.is_empty() {
        matching = picked;
    }
    let env_len = |rec: &Recording| rec.invocation.as_ref().map_or(0, |call| call.env.len());
    let most = matching.iter().map(|rec| env_len(rec)).max().unwrap_or(0);
    matching.retain(|rec| env_len(rec) == most);
    match matching.as_slice() {
        [one] => Ok(one),
        several => Err(format!(
            "`herdr {}` was recorded as {}; choose one with {PICK_ENV}",
            args.join(" "),
            several
                .iter()
                .map(|rec| rec.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Removes the field at a dotted path from a recorded JSON reply.
fn omit(name: &str, stdout: &[u8], path: &str) -> Result<Vec<u8>, String> {
    let mut value: Value = serde_json::from_slice(stdout)
        .map_err(|_| format!("{name} has no JSON reply on stdout to omit {path} from"))?;
    let (parents, last) = match path.rsplit_once('.') {
        Some((parents, last)) => (parents.split('.').collect::<Vec<_>>(), last),
        None => (Vec::new(), path),
    };
    let mut node = &mut value;
    for key in parents {
        node = node
            .get_mut(key)
            .ok_or_else(|| format!("{name} has no field {path}"))?;
    }
    node.as_object_mut()
        .and_then(|object| object.remove(last))
        .ok_or_else(|| format!("{name} has no field {path}"))?;
    let mut out = serde_json::to_vec(&value).map_err(|err| err.to_string())?;
    out.push(b'\n');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(line: &[&str], env: &[(&str, &str)]) -> Outcome {
        let args: Vec<OsString> = line.iter().map(OsString::from).collect();
        let env = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        replay(&args, &env)
    }

    fn fixture(name: &str) -> Vec<u8> {
        let all = recording::load(&recording::fixture_dir()).unwrap();
        all.into_iter().find(|r| r.name == name).unwrap().body
    }

    #[test]
    fn replays_the_recorded_reply_byte_for_byte() {
        let out = run(&["workspace", "get", "w1"], &[]);
        assert_eq!(out.exit, 0);
        assert_eq!(out.stdout, fixture("006-workspace-get"));
        assert!(out.stderr.is_empty());

        let out = run(&["pane", "close"], &[]);
        assert_eq!(out.exit, 2);
        assert_eq!(out.stderr, b"usage: herdr pane close <pane_id>\n");
    }

    #[test]
    fn the_environment_and_picks_choose_among_recordings() {
        let out = run(
            &["pane", "list"],
            &[("HERDR_SOCKET_PATH", "/home/dev/src/absent.sock")],
        );
        assert_eq!(out.exit, 1);
        assert_eq!(out.stderr, fixture("001-pane-list-server-not-running"));

        let out = run(&["pane", "list"], &[]);
        assert_eq!(out.exit, REFUSED);
        let text = String::from_utf8(out.stderr).unwrap();
        assert!(
            text.contains("012-pane-list, 102-pane-list-after-stop"),
            "{text}"
        );

        let out = run(&["pane", "get", "w1:p2"], &[(PICK_ENV, "011,023")]);
        assert_eq!(out.stdout, fixture("011-pane-get"));
        let out = run(&["pane", "get", "w1:p2"], &[(PICK_ENV, "047")]);
        assert_eq!(
            (out.exit, out.stderr),
            (1, fixture("047-pane-get-after-close"))
        );
    }

    #[test]
    fn refuses_what_was_never_recorded() {
        let out = run(&["pane", "rename", "w1:p2", "worker"], &[]);
        assert_eq!(out.exit, REFUSED);
        assert_eq!(
            String::from_utf8(out.stderr).unwrap(),
            "herdr-double: no recording of `herdr pane rename w1:p2 worker`\n"
        );
        let out = run(&["workspace", "get", "w1"], &[(FAULT_ENV, "explode")]);
        assert_eq!(out.exit, REFUSED);
    }

    #[test]
    fn injects_faults() {
        let out = run(&["pane", "get", "w1:p2"], &[(FAULT_ENV, "hang")]);
        assert_eq!(out.hang, Some(HANG));
        assert!(out.stdout.is_empty());

        let out = run(&["workspace", "get", "w1"], &[(FAULT_ENV, "truncate:20")]);
        assert_eq!(out.stdout, fixture("006-workspace-get")[..20]);

        let line = [
            "worktree",
            "create",
            "--workspace",
            "w2",
            "--branch",
            "feat/x",
            "--no-focus",
        ];
        let out = run(
            &line,
            &[(PICK_ENV, "054"), (FAULT_ENV, "omit:result.root_pane")],
        );
        assert_eq!(out.exit, 0);
        let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(reply["result"].get("root_pane").is_none());
        assert_eq!(reply["result"]["workspace"]["workspace_id"], "w3");

        let out = run(&line, &[(PICK_ENV, "054"), (FAULT_ENV, "omit:result.nope")]);
        assert_eq!(out.exit, REFUSED);
    }
}
