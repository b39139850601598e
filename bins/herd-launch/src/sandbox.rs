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
use herd_sandbox::net::Layout;
use herd_sandbox::policy::{CEILING_ENV, Endpoint};
use herd_sandbox::{Asked, Config, Mode, Network, Policy};

mod model;

/// What confines one child.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confinement {
    pub policy: Policy,
    pub config: Config,
    /// `bwrap`, found on `PATH`; `None` only when the policy confines nothing.
    pub program: Option<PathBuf>,
    /// How the sandbox keeps the child's signals inside, on this machine.
    pub isolation: Isolation,
    /// What the relay lets the child reach when its network is not `on`: its allowlist, and a Pi
    /// child's model.
    pub reach: Vec<Endpoint>,
    /// Caches of the person's the child reads (`bwrap::Places::read_caches`).
    pub read_caches: Vec<(String, PathBuf)>,
}

/// A Pi child's model, which it reaches whatever its network.
pub struct PiModel<'a> {
    pub agent_dir: &'a Path,
    pub models: &'a [String],
}

/// The confinement of a child asked for by `request` (its `sandbox` and `network`) with the
/// role's keys, for a Pi child (`pi`) or a command; `remote` children are confined by their
/// host's herd, which checks its own machine.
pub fn resolve(
    asked: Asked,
    role: Asked,
    pi: Option<PiModel<'_>>,
    remote: bool,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Confinement, Error> {
    confine(asked, role, pi, remote, None, env)
}

/// The confinement of a resumed or resurrected Pi child: the policy it was launched under
/// (`stored`, from its launch policy), never wider than the person's configuration allows now.
/// `None`, a launch policy written before children were confined: as the configuration says now.
pub fn restore(
    stored: Option<Policy>,
    pi: PiModel<'_>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Confinement, Error> {
    confine(
        Asked::default(),
        Asked::default(),
        Some(pi),
        false,
        stored,
        env,
    )
}

fn confine(
    asked: Asked,
    role: Asked,
    pi: Option<PiModel<'_>>,
    remote: bool,
    stored: Option<Policy>,
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
    // A restored child's default is the policy it first ran under, still within the widest.
    let limits = match stored {
        Some(stored) => herd_sandbox::Limits {
            default: stored,
            widest: config.limits.widest.clone(),
        },
        None => config.limits.clone(),
    };
    let policy = herd_sandbox::policy::resolve(&limits, role, asked, ceiling.clone())?;
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
            reach: Vec::new(),
            read_caches: Vec::new(),
        });
    }
    // Pi turns Node's compile cache on itself; a command child is left as it would run unconfined
    // (a cache it did not ask for would cost it the checks and refused writes).
    let read_caches = if pi.is_some() {
        read_caches(env)
    } else {
        Vec::new()
    };
    let mut reach = policy.network.endpoints().to_vec();
    if let (Some(pi), false) = (pi, policy.network == Network::On) {
        let model = model::endpoints(pi.agent_dir, pi.models)?;
        if model.is_empty() {
            return Err(Error::new(
                herd_core::ErrorCode::Unavailable,
                format!(
                    "cannot tell where this Pi child's model answers (no provider in {} names a baseUrl, and no built-in provider is named), so network \"{}\" would cut it from its model; nothing was launched. Name the model's host:port in `network`, or ask for network \"on\"",
                    pi.agent_dir.join("models.json").display(),
                    policy.network
                ),
            )
            .with_field("network"));
        }
        reach.extend(model);
        reach.sort();
        reach.dedup();
    }
    let path = env("PATH").map(OsString::from);
    let program = herd_sandbox::bwrap::find(path.as_deref())
        .ok_or_else(|| herd_sandbox::bwrap::unavailable(&policy))?;
    Ok(Confinement {
        policy,
        config,
        program: Some(program),
        isolation: Isolation::here(),
        reach,
        read_caches,
    })
}

/// Node's compile cache of the person's (where Node keeps it when nothing says otherwise: under
/// the temporary directory), read-only to the child: a confined child's own temporary directory
/// starts empty, and without it Pi would compile itself anew at every start. Nothing when the
/// person names one (the child inherits that) or none exists yet.
fn read_caches(env: &dyn Fn(&str) -> Option<String>) -> Vec<(String, PathBuf)> {
    const NODE: &str = "NODE_COMPILE_CACHE";
    if env(NODE).is_some() {
        return Vec::new();
    }
    let tmp = env("TMPDIR")
        .filter(|t| Path::new(t).is_absolute())
        .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
    let cache = tmp.join("node-compile-cache");
    if cache.is_dir() {
        vec![(NODE.to_owned(), cache)]
    } else {
        Vec::new()
    }
}

/// The sandbox in front of a runner: bubblewrap's argv (and the forwarder's, when the child's
/// network is an allowlist), and the relay `herd-launch exec` starts outside.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Wrapper {
    pub argv: Vec<OsString>,
    pub relay: Option<Relay>,
}

/// The relay of one child: its socket, and the addresses it connects to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relay {
    pub socket: PathBuf,
    pub allow: Vec<Endpoint>,
}

/// `--sandbox-ceiling`: a policy in `HERD_SANDBOX_POLICY`'s form; one that does not read is
/// refused (exit 2), never taken for none.
pub fn ceiling_arg(text: Option<&str>) -> Result<Option<Policy>, Error> {
    let Some(text) = text else {
        return Ok(None);
    };
    Policy::from_env(text).map(Some).ok_or_else(|| {
        Error::invalid(
            "--sandbox-ceiling",
            format!(
                "{text:?} is not a sandbox policy (`<mode>,<network>`, as HERD_SANDBOX_POLICY)"
            ),
        )
    })
}

/// The environment as a launch under `ceiling` reads it: `HERD_SANDBOX_POLICY` narrowed to it
/// (a malformed value stays as it is, which reads as the narrowest policy).
pub fn narrowed_env(
    key: &str,
    ceiling: Option<&Policy>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    let value = env(key);
    let Some(ceiling) = ceiling.filter(|_| key == CEILING_ENV) else {
        return value;
    };
    Some(match value {
        None => ceiling.to_env(),
        Some(text) => match Policy::from_env(&text) {
            Some(own) => own.narrowed(ceiling).to_env(),
            None => text,
        },
    })
}

impl Confinement {
    /// What to put in front of the runner's argv (nothing when unconfined): `cwd` is the child's
    /// directory, `own` the directories it writes whatever its policy (its session's and its
    /// activity's), and a `workspace` child in a managed worktree gets the git overlay of its
    /// branch in `private`; `herd_launch` forwards an allowlist's connections inside.
    pub fn wrapper(
        &self,
        cwd: &Path,
        own: Vec<PathBuf>,
        worktree: bool,
        private: &Path,
        herd_launch: &Path,
        pi_agent: Option<&Path>,
    ) -> Result<Wrapper, Error> {
        let Some(program) = &self.program else {
            return Ok(Wrapper::default());
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
        if pi_agent.is_some() {
            herd_core::sidecar::ensure_private_dir(&private.join("agent")).map_err(|e| {
                Error::new(
                    herd_core::ErrorCode::Unavailable,
                    format!("cannot make the child's view of Pi's agent directory: {e}"),
                )
            })?;
        }
        let layout = (!self.reach.is_empty()).then(|| Layout::of(&self.reach));
        let net = match &layout {
            Some(layout) => {
                let hosts = private.join("hosts");
                crate::files::write_mode(&hosts, layout.hosts.as_bytes(), 0o644)?;
                Some(herd_sandbox::bwrap::NetPlaces {
                    hosts,
                    low_ports: layout.needs_low_ports(),
                })
            }
            None => None,
        };
        let places = herd_sandbox::bwrap::Places {
            cwd: cwd.to_path_buf(),
            own,
            tmp: Some(tmp),
            git,
            net,
            read_caches: self.read_caches.clone(),
            agent: pi_agent.map(|person| herd_sandbox::bwrap::AgentPlaces {
                person: person.to_path_buf(),
                private: private.join("agent"),
            }),
        };
        let mut argv = herd_sandbox::bwrap::command(
            program,
            &self.policy,
            &self.config,
            &places,
            self.isolation,
        );
        // The child is started through `herd-launch enter`, which gives it back the terminal's
        // interrupt (`herd-launch exec --sandboxed` ignores it for the sandbox around it).
        argv.extend([herd_launch.as_os_str().to_owned(), "enter".into()]);
        let Some(layout) = layout else {
            argv.push("--".into());
            return Ok(Wrapper { argv, relay: None });
        };
        // The relay's socket is where the sandbox sees it too: the private directory is under the
        // artifacts directory, which the child reaches.
        let socket = private.join("net.sock");
        argv.extend(["--socket".into(), socket.as_os_str().to_owned()]);
        for route in &layout.routes {
            argv.extend(["--route".into(), route.to_arg().into()]);
        }
        argv.push("--".into());
        Ok(Wrapper {
            argv,
            relay: Some(Relay {
                socket,
                allow: self.reach.clone(),
            }),
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ceiling_argument_only_narrows_the_handed_down_policy() {
        let read_only = Policy::from_env("read-only,on");
        assert_eq!(ceiling_arg(Some("read-only,on")).unwrap(), read_only);
        let read_only = read_only.as_ref();
        assert_eq!(ceiling_arg(None).unwrap(), None);
        let err = ceiling_arg(Some("open")).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("--sandbox-ceiling"));
        let given = |value: Option<&'static str>| {
            move |key: &str| {
                (key == CEILING_ENV)
                    .then_some(value)
                    .flatten()
                    .map(str::to_owned)
            }
        };
        let read =
            |value, ceiling: Option<&Policy>| narrowed_env(CEILING_ENV, ceiling, &given(value));
        assert_eq!(read(None, None), None);
        assert_eq!(read(None, read_only).as_deref(), Some("read-only,on"));
        assert_eq!(
            read(Some("workspace,off"), read_only).as_deref(),
            Some("read-only,off")
        );
        // A malformed value stays malformed: the narrowest policy, never the ceiling's.
        assert_eq!(read(Some("junk"), read_only).as_deref(), Some("junk"));
        assert_eq!(narrowed_env("PATH", read_only, &given(Some("x"))), None);
    }
}
