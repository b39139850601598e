//! `HERD_PORT`: a port unique among the live managed worktrees of the user on this machine, and
//! free when it is given.
//!
//! Every artifacts directory (one per parent session) shares one registry of the ports given,
//! under the per-user state directory: `$XDG_STATE_HOME/herd/ports.json` (else
//! `~/.local/state/herd/ports.json`), read and written under the lock `ports.lock` beside it.
//! Under that lock the registry's entries whose owner is gone are dropped (the worktree's manifest
//! is missing, `removed`, or names another run or port), the ports of the live manifests of the
//! creation's own artifacts directory are added (a worktree made before the registry), and the
//! lowest port of [`FIRST`]..[`FIRST`]+[`COUNT`] held by none of them and that nothing on the
//! machine listens on ([`is_free`]) is recorded in the new run's manifest and in the registry
//! before the lock is released.
//!
//! Without a state directory (neither `XDG_STATE_HOME` nor `HOME`), the ports are unique within
//! the artifacts directory (its lock `worktree-runs/.ports.lock`) and free when given.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use herd_core::{Error, ErrorCode};
use herd_protocol::layout::Artifacts;
use herd_protocol::worktree::manifest::{Manifest, State};
use serde::{Deserialize, Serialize};

/// The first port given.
pub const FIRST: u16 = 41000;
/// How many ports there are to give.
pub const COUNT: u16 = 1000;
/// How long a creation waits for another's allocation (the lock is held for a moment only,
/// but many creations may be waiting for it at once).
pub const LOCK_WAIT: Duration = Duration::from_secs(30);
/// The bound of the registry's read.
const REGISTRY_LIMIT: u64 = 1024 * 1024;
/// The registry's format.
const REGISTRY_VERSION: u32 = 1;

/// The machine-wide registry of the ports given: `ports.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Registry {
    version: u32,
    /// The port (as text) and the worktree that holds it.
    ports: BTreeMap<String, Holder>,
}

/// The worktree a port was given to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Holder {
    /// Its ownership manifest.
    manifest: PathBuf,
    run_id: String,
}

impl Holder {
    /// Whether the worktree still holds `port`: its manifest is there, not `removed`, of the
    /// same run, and records this port.
    fn holds(&self, port: u16) -> bool {
        match Manifest::read(&self.manifest) {
            Ok(Some(m)) => {
                m.id == self.run_id
                    && m.state != State::Removed
                    && m.setup.as_ref().and_then(|s| s.port) == Some(port)
            }
            // A manifest that is gone, or cannot be read, names no live worktree herd knows.
            _ => false,
        }
    }
}

/// The per-user state directory of herd: `$XDG_STATE_HOME/herd`, else `~/.local/state/herd`.
pub fn state_dir() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    var("XDG_STATE_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|home| PathBuf::from(home).join(".local/state")))
        .map(|state| state.join("herd"))
}

/// Allocates the port of `run_id` and records it in its manifest (and in the registry of the
/// per-user state directory, when there is one).
pub fn allocate(artifacts: &Artifacts, run_id: &str) -> Result<u16, Error> {
    allocate_in(artifacts, run_id, state_dir().as_deref())
}

/// [`allocate`] with the state directory given (`None`: the artifacts directory alone).
pub fn allocate_in(
    artifacts: &Artifacts,
    run_id: &str,
    state: Option<&Path>,
) -> Result<u16, Error> {
    let lock_file = match state {
        Some(state) => state.join("ports.lock"),
        None => artifacts.worktree_runs_dir().join(".ports.lock"),
    };
    let _lock =
        herd_core::lock::exclusive(&lock_file, Instant::now() + LOCK_WAIT).map_err(Error::from)?;
    let registry_file = state.map(|s| s.join("ports.json"));
    let mut registry = match &registry_file {
        // A registry that cannot be read is rebuilt: the live manifests still hold their ports
        // within their artifacts directories, and the probe still finds the ports in use.
        Some(file) => herd_core::sidecar::read_json::<Registry>(file, REGISTRY_LIMIT)
            .ok()
            .flatten()
            .unwrap_or_default(),
        None => Registry::default(),
    };
    registry.version = REGISTRY_VERSION;
    registry.ports.retain(|port, holder| {
        port.parse::<u16>()
            .is_ok_and(|p| holder.run_id != run_id && holder.holds(p))
    });
    let mut taken: BTreeSet<u16> = registry
        .ports
        .keys()
        .filter_map(|p| p.parse().ok())
        .collect();
    taken.extend(held_in(artifacts, run_id)?);
    let port = (FIRST..FIRST + COUNT)
        .find(|p| !taken.contains(p) && is_free(*p))
        .ok_or_else(|| {
            Error::new(
                ErrorCode::Unavailable,
                format!(
                    "all {COUNT} ports from {FIRST} are held by live managed worktrees or in use; remove some with herd-cleanup"
                ),
            )
        })?;
    Manifest::update(artifacts, run_id, |m| {
        m.setup.get_or_insert_with(Default::default).port = Some(port);
    })
    .map_err(|e| Error::new(e.code(), e.to_string()))?;
    if let Some(file) = &registry_file {
        registry.ports.insert(
            port.to_string(),
            Holder {
                manifest: artifacts.worktree_manifest(run_id),
                run_id: run_id.to_owned(),
            },
        );
        herd_core::sidecar::write_json(file, &registry)?;
    }
    Ok(port)
}

/// The ports the live manifests of `artifacts` (other than `run_id`'s) hold.
fn held_in(artifacts: &Artifacts, run_id: &str) -> Result<BTreeSet<u16>, Error> {
    let dir = artifacts.worktree_runs_dir();
    let mut taken = BTreeSet::new();
    let entries = std::fs::read_dir(&dir).map_err(|e| {
        Error::new(
            ErrorCode::Unavailable,
            format!("cannot read {}: {e}", dir.display()),
        )
    })?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        // A manifest that cannot be read keeps no port: it names no live worktree herd knows.
        if let Ok(Some(m)) = Manifest::read(&path) {
            if m.id != run_id && m.state != State::Removed {
                if let Some(port) = m.setup.as_ref().and_then(|s| s.port) {
                    taken.insert(port);
                }
            }
        }
    }
    Ok(taken)
}

/// Whether nothing listens on `port`: a TCP socket can be bound to it on every address, in
/// IPv4 and (where the machine has it) IPv6. The probe never listens, so two creations probing
/// at once do not see each other; the lock keeps them apart.
pub fn is_free(port: u16) -> bool {
    probe::bindable(libc::AF_INET, port) && probe::bindable(libc::AF_INET6, port)
}

mod probe {
    use std::os::fd::{FromRawFd, OwnedFd};

    /// Whether a TCP socket of `family` binds to the wildcard address at `port`, with
    /// `SO_REUSEADDR` (so a connection lingering in `TIME_WAIT` does not count as in use). Only
    /// `EADDRINUSE` says no: a family the machine lacks says nothing.
    pub fn bindable(family: libc::c_int, port: u16) -> bool {
        // SAFETY: socket(2) with constant arguments; the descriptor is owned below.
        let fd = unsafe { libc::socket(family, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return true;
        }
        // SAFETY: `fd` was just opened and nothing else owns it; dropping it closes it.
        let _owned = unsafe { OwnedFd::from_raw_fd(fd) };
        let one: libc::c_int = 1;
        // SAFETY: a valid descriptor and a pointer to an int of the given size.
        unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_REUSEADDR,
                (&raw const one).cast(),
                size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
        let rc = if family == libc::AF_INET {
            // SAFETY: an all-zero sockaddr_in is valid; the fields are set below.
            let mut addr: libc::sockaddr_in = unsafe { std::mem::zeroed() };
            addr.sin_family = libc::AF_INET as libc::sa_family_t;
            addr.sin_port = port.to_be();
            addr.sin_addr.s_addr = libc::INADDR_ANY;
            // SAFETY: a valid descriptor and a sockaddr_in of the size given.
            unsafe {
                libc::bind(
                    fd,
                    (&raw const addr).cast(),
                    size_of::<libc::sockaddr_in>() as libc::socklen_t,
                )
            }
        } else {
            // SAFETY: an all-zero sockaddr_in6 is the wildcard address; the rest is set below.
            let mut addr: libc::sockaddr_in6 = unsafe { std::mem::zeroed() };
            addr.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            addr.sin6_port = port.to_be();
            // SAFETY: a valid descriptor and a sockaddr_in6 of the size given.
            unsafe {
                libc::bind(
                    fd,
                    (&raw const addr).cast(),
                    size_of::<libc::sockaddr_in6>() as libc::socklen_t,
                )
            }
        };
        rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EADDRINUSE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_something_listens_on_is_not_free() {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        assert!(!is_free(port));
    }
}
