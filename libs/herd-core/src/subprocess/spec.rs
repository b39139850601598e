//! What every child has, started in the foreground or detached: a program, its arguments, a
//! working directory and an environment, and the builder methods that set them.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use super::Error;

/// One change to the inherited environment, applied in the order the builder calls came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum EnvOp {
    Set(OsString, OsString),
    Remove(OsString),
    RemovePrefix(OsString),
    Clear,
}

/// What every child has: a program, its arguments, a working directory and an environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Spec {
    pub(super) program: OsString,
    pub(super) args: Vec<OsString>,
    pub(super) cwd: Option<PathBuf>,
    pub(super) env: Vec<EnvOp>,
}

impl Spec {
    pub(super) fn new(program: OsString) -> Spec {
        Spec {
            program,
            args: Vec::new(),
            cwd: None,
            env: Vec::new(),
        }
    }

    pub(super) fn program_name(&self) -> String {
        self.program.to_string_lossy().into_owned()
    }

    /// Rejects what the kernel would reject, with a message that names the culprit.
    pub(super) fn validate(&self) -> Result<(), Error> {
        let invalid = |reason: String| Err(Error::Invalid { reason });
        if self.program.is_empty() {
            return invalid("the program name is empty".into());
        }
        if has_nul(&self.program) {
            return invalid("the program name contains a NUL byte".into());
        }
        if let Some(idx) = self.args.iter().position(|arg| has_nul(arg)) {
            return invalid(format!("argument {} contains a NUL byte", idx + 1));
        }
        if let Some(cwd) = &self.cwd {
            if has_nul(cwd.as_os_str()) {
                return invalid("the working directory contains a NUL byte".into());
            }
        }
        for op in &self.env {
            let (name, value) = match op {
                EnvOp::Set(name, value) => (name, Some(value)),
                EnvOp::Remove(name) => (name, None),
                EnvOp::RemovePrefix(_) | EnvOp::Clear => continue,
            };
            if name.is_empty() || has_nul(name) || name.as_bytes().contains(&b'=') {
                return invalid(format!(
                    "environment variable name {:?} is empty or contains `=` or NUL",
                    name
                ));
            }
            if value.is_some_and(|value| has_nul(value)) {
                return invalid(format!(
                    "the value of environment variable {} contains a NUL byte",
                    name.to_string_lossy()
                ));
            }
        }
        Ok(())
    }

    /// Fails with [`Error::Cwd`] unless the working directory, if any, is a directory.
    pub(super) fn check_cwd(&self) -> Result<(), Error> {
        let Some(cwd) = &self.cwd else {
            return Ok(());
        };
        match std::fs::metadata(cwd) {
            Ok(meta) if meta.is_dir() => Ok(()),
            Ok(_) => Err(Error::Cwd {
                path: cwd.clone(),
                source: io::Error::from(io::ErrorKind::NotADirectory),
            }),
            Err(source) => Err(Error::Cwd {
                path: cwd.clone(),
                source,
            }),
        }
    }

    /// Builds the `std` command: program, arguments, working directory and environment.
    #[expect(
        clippy::disallowed_methods,
        reason = "this module is the one place allowed to build a std::process::Command"
    )]
    pub(super) fn to_std(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(&self.program);
        cmd.args(&self.args);
        if let Some(cwd) = &self.cwd {
            cmd.current_dir(cwd);
        }
        if !self.env.is_empty() {
            // The whole environment is handed over explicitly, so a prefix can be matched
            // against the inherited names and the result does not depend on how `std` merges.
            cmd.env_clear();
            cmd.envs(resolve_env(&self.env, std::env::vars_os()));
        }
        cmd
    }

    /// Turns a failed spawn into a typed error, telling a missing program from a missing cwd.
    pub(super) fn spawn_error(&self, source: io::Error) -> Error {
        if source.kind() == io::ErrorKind::NotFound {
            // chdir and exec both fail with ENOENT; the directory was checked before the spawn,
            // so look again in case it vanished since.
            if let Err(err) = self.check_cwd() {
                return err;
            }
            return Error::ProgramNotFound {
                program: self.program_name(),
                source,
            };
        }
        if source.kind() == io::ErrorKind::NotADirectory && self.cwd.is_some() {
            if let Err(err) = self.check_cwd() {
                return err;
            }
        }
        Error::Spawn {
            program: self.program_name(),
            source,
        }
    }
}

fn has_nul(value: &OsStr) -> bool {
    value.as_bytes().contains(&0)
}

/// Applies `ops` in order to `base` and returns the environment the child gets.
pub(super) fn resolve_env(
    ops: &[EnvOp],
    base: impl IntoIterator<Item = (OsString, OsString)>,
) -> BTreeMap<OsString, OsString> {
    let mut env: BTreeMap<OsString, OsString> = base.into_iter().collect();
    for op in ops {
        match op {
            EnvOp::Set(name, value) => {
                env.insert(name.clone(), value.clone());
            }
            EnvOp::Remove(name) => {
                env.remove(name);
            }
            EnvOp::RemovePrefix(prefix) => {
                env.retain(|name, _| !name.as_bytes().starts_with(prefix.as_bytes()));
            }
            EnvOp::Clear => env.clear(),
        }
    }
    env
}

/// Generates the builder methods shared by [`Command`](super::Command) and
/// [`Detached`](super::Detached).
macro_rules! spec_methods {
    () => {
        /// Adds one argument.
        #[must_use]
        pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
            self.spec.args.push(arg.into());
            self
        }

        /// Adds arguments in order.
        #[must_use]
        pub fn args<I>(mut self, args: I) -> Self
        where
            I: IntoIterator,
            I::Item: Into<OsString>,
        {
            self.spec.args.extend(args.into_iter().map(Into::into));
            self
        }

        /// Sets the working directory; it must exist when the child is started.
        #[must_use]
        pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
            self.spec.cwd = Some(dir.into());
            self
        }

        /// Sets a variable in the child's environment.
        ///
        /// Environment changes apply in the order they are made, starting from the environment
        /// of the current process.
        #[must_use]
        pub fn env(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> Self {
            self.spec.env.push(EnvOp::Set(name.into(), value.into()));
            self
        }

        /// Removes a variable from the child's environment.
        #[must_use]
        pub fn env_remove(mut self, name: impl Into<OsString>) -> Self {
            self.spec.env.push(EnvOp::Remove(name.into()));
            self
        }

        /// Removes every variable whose name starts with `prefix`, such as `PI_SUBAGENT_`.
        #[must_use]
        pub fn env_remove_prefix(mut self, prefix: impl Into<OsString>) -> Self {
            self.spec.env.push(EnvOp::RemovePrefix(prefix.into()));
            self
        }

        /// Removes every variable; only those set afterwards reach the child.
        #[must_use]
        pub fn env_clear(mut self) -> Self {
            self.spec.env.push(EnvOp::Clear);
            self
        }

        /// Returns the program as given.
        pub fn program(&self) -> &OsStr {
            &self.spec.program
        }
    };
}

pub(super) use spec_methods;
