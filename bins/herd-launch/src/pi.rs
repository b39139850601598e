//! How a child's Pi is started: the program, and the JavaScript runtime that runs it when the
//! parent's Pi is a script on a Node.js of its own.
//!
//! A parent started through a launcher (nvm, volta, a keg-only Homebrew node, `npx`, or a
//! wrapper such as `exec node22 cli.js`) runs Pi's `cli.js` on a Node that need not be the first
//! `node` on `PATH`. Running that `cli.js` directly would let its `#!/usr/bin/env node` pick
//! whatever comes first, which may be too old to start Pi at all. So the parent extension names
//! both, `$HERD_PI` (the CLI) and `$HERD_PI_NODE` (the runtime it runs on), and every Pi herd
//! starts is `<runtime> <cli> …`.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

use herd_core::{Error, ErrorCode};

/// The variable naming the Pi executable (default: `pi` on `PATH`).
pub const PI_ENV: &str = "HERD_PI";
/// The variable naming the runtime `$HERD_PI` runs on, when it is a script (a Node.js for Pi's
/// `cli.js`); the parent extension sets it to its own `process.execPath`.
pub const PI_NODE_ENV: &str = "HERD_PI_NODE";

/// The command line that starts Pi, before Pi's own arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PiCommand {
    /// The runtime that runs `program`, or `None` when `program` is started directly.
    pub runtime: Option<PathBuf>,
    /// Pi's executable, or its script when `runtime` is set.
    pub program: PathBuf,
}

impl PiCommand {
    /// Pi started directly, as `program`.
    pub fn direct(program: impl Into<PathBuf>) -> PiCommand {
        PiCommand {
            runtime: None,
            program: program.into(),
        }
    }

    /// The argv that starts Pi: `[runtime] program`.
    pub fn argv(&self) -> Vec<OsString> {
        let mut argv = Vec::with_capacity(2);
        argv.extend(self.runtime.iter().map(|r| r.as_os_str().to_owned()));
        argv.push(self.program.as_os_str().to_owned());
        argv
    }

    /// The program to execute (the runtime when there is one).
    pub fn executable(&self) -> &Path {
        self.runtime.as_deref().unwrap_or(&self.program)
    }

    /// The arguments before Pi's own (the script when a runtime runs it).
    pub fn leading_args(&self) -> &[PathBuf] {
        match self.runtime {
            Some(_) => std::slice::from_ref(&self.program),
            None => &[],
        }
    }
}

impl fmt::Display for PiCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(runtime) = &self.runtime {
            write!(f, "{} ", runtime.display())?;
        }
        write!(f, "{}", self.program.display())
    }
}

/// Finds Pi: `$HERD_PI` (run by `$HERD_PI_NODE` when that is set), else `pi` on `PATH`.
pub fn find_pi(env: &dyn Fn(&str) -> Option<String>) -> Result<PiCommand, Error> {
    let path = env("PATH").unwrap_or_default();
    let unavailable = |message: String| Error::new(ErrorCode::Unavailable, message);
    let runtime = match env(PI_NODE_ENV).filter(|p| !p.is_empty()) {
        Some(node) => Some(
            crate::plan::resolve_program(&OsString::from(&node), &path)
                .ok_or_else(|| unavailable(format!("${PI_NODE_ENV} ({node}) is not executable")))?,
        ),
        None => None,
    };
    let program = match (env(PI_ENV).filter(|p| !p.is_empty()), &runtime) {
        // A script its runtime reads: it need only be a file.
        (Some(pi), Some(_)) => {
            let script = Path::new(&pi);
            if !script.is_file() {
                return Err(unavailable(format!(
                    "${PI_ENV} ({pi}) is not a file ${PI_NODE_ENV} can run"
                )));
            }
            std::path::absolute(script).unwrap_or_else(|_| script.to_path_buf())
        }
        (Some(pi), None) => crate::plan::resolve_program(&OsString::from(&pi), &path)
            .ok_or_else(|| unavailable(format!("${PI_ENV} ({pi}) is not executable")))?,
        (None, Some(_)) => {
            return Err(unavailable(format!(
                "${PI_NODE_ENV} is set without ${PI_ENV}: name Pi's CLI script too"
            )));
        }
        (None, None) => herd_surface::find_on_path("pi", &path).ok_or_else(|| {
            unavailable(format!("`pi` is not on PATH; install Pi or set ${PI_ENV}"))
        })?,
    };
    Ok(PiCommand { runtime, program })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::os::unix::fs::PermissionsExt;

    fn lookup<'a>(vars: &'a HashMap<&'a str, String>) -> impl Fn(&str) -> Option<String> + 'a {
        |key| vars.get(key).cloned()
    }

    fn executable(dir: &Path, name: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn a_script_is_run_by_the_named_runtime_whatever_path_finds_first() {
        let dir = tempfile::tempdir().unwrap();
        let node = executable(dir.path(), "node22");
        // Not executable: the runtime reads it.
        let cli = dir.path().join("cli.js");
        std::fs::write(&cli, "console.log(1)").unwrap();
        let vars = HashMap::from([
            ("PATH", dir.path().display().to_string()),
            (PI_ENV, cli.display().to_string()),
            (PI_NODE_ENV, node.display().to_string()),
        ]);
        let pi = find_pi(&lookup(&vars)).unwrap();
        assert_eq!(
            pi.argv(),
            vec![node.clone().into_os_string(), cli.clone().into_os_string()]
        );
        assert_eq!(pi.executable(), node);
        assert_eq!(pi.leading_args(), [cli]);
    }

    #[test]
    fn without_a_runtime_pi_is_started_directly() {
        let dir = tempfile::tempdir().unwrap();
        let pi = executable(dir.path(), "pi");
        let vars = HashMap::from([("PATH", dir.path().display().to_string())]);
        let found = find_pi(&lookup(&vars)).unwrap();
        assert_eq!(found, PiCommand::direct(&pi));
        assert_eq!(found.argv(), vec![pi.into_os_string()]);
        assert!(found.leading_args().is_empty());
    }

    #[test]
    fn a_runtime_without_its_script_or_a_missing_one_is_unavailable() {
        let dir = tempfile::tempdir().unwrap();
        let node = executable(dir.path(), "node");
        let only_node = HashMap::from([(PI_NODE_ENV, node.display().to_string())]);
        let err = find_pi(&lookup(&only_node)).unwrap_err();
        assert_eq!(err.code, ErrorCode::Unavailable);
        let missing = HashMap::from([
            (PI_NODE_ENV, node.display().to_string()),
            (PI_ENV, dir.path().join("absent.js").display().to_string()),
        ]);
        let err = find_pi(&lookup(&missing)).unwrap_err();
        assert!(err.message.contains("not a file"), "{}", err.message);
        let bad_node = HashMap::from([
            (
                PI_NODE_ENV,
                dir.path().join("no-node").display().to_string(),
            ),
            (PI_ENV, node.display().to_string()),
        ]);
        assert!(
            find_pi(&lookup(&bad_node))
                .unwrap_err()
                .message
                .contains("not executable")
        );
    }
}
