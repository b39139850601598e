//! A child's confinement, decided at planning and put in front of its runner in the launch
//! script (`herd_sandbox::bwrap`, the one place a child is confined).
//!
//! The person's own configuration (`~/.config/herd/config.toml`) gives the default and the widest
//! policy; the role narrows; the request narrows or widens up to the widest; a confined child's
//! own spawns get no more than it has (`HERD_SANDBOX_POLICY`). A policy this machine cannot
//! enforce refuses the spawn before anything is written (exit 4).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use herd_core::Error;
use herd_sandbox::bwrap::Isolation;
use herd_sandbox::policy::CEILING_ENV;
use herd_sandbox::{Asked, Config, Mode, Network, Policy};

/// What confines one child.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confinement {
    pub policy: Policy,
    pub config: Config,
    /// `bwrap`, found on `PATH`; `None` only when the policy confines nothing.
    pub program: Option<PathBuf>,
    /// How the sandbox keeps the child's signals inside, on this machine.
    pub isolation: Isolation,
}

/// The confinement of a child asked for by `request` (its `sandbox` and `network`) with the
/// role's keys, for a Pi child (`pi`) or a command; `remote` children are confined by their
/// host's herd, which checks its own machine.
pub fn resolve(
    asked: Asked,
    role: Asked,
    pi: bool,
    remote: bool,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Confinement, Error> {
    let home = env("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"));
    let config_dir = match env("XDG_CONFIG_HOME").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("herd"),
        None => home.join(".config/herd"),
    };
    let config = Config::load(&config_dir, &home)?;
    // A malformed ceiling is the narrowest policy: what a child handed down is never widened.
    let ceiling = env(CEILING_ENV).map(|text| {
        Policy::from_env(&text).unwrap_or(Policy {
            mode: Mode::ReadOnly,
            network: Network::Off,
        })
    });
    let policy = herd_sandbox::policy::resolve(&config.limits, role, asked, ceiling)?;
    // A confined child cannot start children of its own: bubblewrap does not nest (the sandbox
    // holds no capability to make another), and a child started inside its PID namespace would
    // have an identity no herd outside can verify, so it could never be cancelled.
    if ceiling.is_some_and(|c| c.confines()) && herd_sandbox::bwrap::inside() && !remote {
        return Err(Error::new(
            herd_core::ErrorCode::Unavailable,
            "a confined child cannot start children of its own yet; nothing was launched. Do the work in this child, or ask the parent to start the helper",
        )
        .with_field("sandbox"));
    }
    if remote || !policy.confines() {
        return Ok(Confinement {
            policy,
            config,
            program: None,
            isolation: Isolation::PidNamespace,
        });
    }
    if pi && policy.network == Network::Off {
        return Err(Error::new(
            herd_core::ErrorCode::Unavailable,
            "network \"off\" for a Pi child would cut it from its model too, and this herd has no model proxy to let only that through; nothing was launched. Ask for network \"on\" (a command child can have \"off\")",
        )
        .with_field("network"));
    }
    let path = env("PATH").map(OsString::from);
    let program = herd_sandbox::bwrap::find(path.as_deref())
        .ok_or_else(|| herd_sandbox::bwrap::unavailable(&policy))?;
    Ok(Confinement {
        policy,
        config,
        program: Some(program),
        isolation: Isolation::here(),
    })
}

impl Confinement {
    /// The argv to put in front of the runner's (empty when unconfined): `cwd` is the child's
    /// directory, `own` the directories it writes whatever its policy (its session's and its
    /// activity's), and a `workspace` child in a managed worktree gets the git overlay of its
    /// branch in `private`.
    pub fn wrapper(
        &self,
        cwd: &Path,
        own: Vec<PathBuf>,
        worktree: bool,
        private: &Path,
    ) -> Result<Vec<OsString>, Error> {
        let Some(program) = &self.program else {
            return Ok(Vec::new());
        };
        let git = if worktree && self.policy.mode == Mode::Workspace {
            let deadline = herd_git::Deadline::after(herd_git::budget::BASE);
            herd_sandbox::git::Overlay::prepare(
                cwd,
                private,
                &herd_git::Git::from_env(),
                &deadline,
            )?
        } else {
            None
        };
        // What it writes whatever its policy exists before the sandbox mounts it.
        for dir in &own {
            herd_core::sidecar::ensure_private_dir(dir).map_err(|e| {
                Error::new(
                    herd_core::ErrorCode::Unavailable,
                    format!("cannot make {}: {e}", dir.display()),
                )
            })?;
        }
        let tmp = private.join("tmp");
        herd_core::sidecar::ensure_private_dir(&tmp).map_err(|e| {
            Error::new(
                herd_core::ErrorCode::Unavailable,
                format!("cannot make the child's temporary directory: {e}"),
            )
        })?;
        let places = herd_sandbox::bwrap::Places {
            cwd: cwd.to_path_buf(),
            own,
            tmp: Some(tmp),
            git,
        };
        Ok(herd_sandbox::bwrap::command(
            program,
            &self.policy,
            &self.config,
            &places,
            self.isolation,
        ))
    }

    /// Whether `herd-launch exec` keeps the child's signals inside before it becomes the sandbox.
    pub fn scopes_signals(&self) -> bool {
        self.program.is_some() && self.isolation == Isolation::Scoped
    }

    /// The variable that hands this policy down to the child's own spawns.
    pub fn ceiling_var(&self) -> (String, OsString) {
        (
            CEILING_ENV.to_owned(),
            OsStr::new(&self.policy.to_env()).to_owned(),
        )
    }
}
