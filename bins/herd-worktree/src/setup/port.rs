//! `HERD_PORT`: a port unique among the live managed worktrees.
//!
//! Under the lock `worktree-runs/.ports.lock` the manifests are read, the ports of those not
//! `removed` collected, and the lowest free port of [`FIRST`]..[`FIRST`]+[`COUNT`] recorded in the
//! new run's manifest before the lock is released. A removed manifest's port is free again.

use std::time::{Duration, Instant};

use herd_core::{Error, ErrorCode};
use herd_protocol::layout::Artifacts;
use herd_protocol::worktree::manifest::{Manifest, State};

/// The first port given.
pub const FIRST: u16 = 41000;
/// How many ports there are to give.
pub const COUNT: u16 = 1000;
/// How long a creation waits for another's allocation.
pub const LOCK_WAIT: Duration = Duration::from_secs(10);

/// Allocates the port of `run_id` and records it in its manifest.
pub fn allocate(artifacts: &Artifacts, run_id: &str) -> Result<u16, Error> {
    let dir = artifacts.worktree_runs_dir();
    let _lock = herd_core::lock::exclusive(&dir.join(".ports.lock"), Instant::now() + LOCK_WAIT)
        .map_err(Error::from)?;
    let mut taken = std::collections::BTreeSet::new();
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
    let port = (FIRST..FIRST + COUNT)
        .find(|p| !taken.contains(p))
        .ok_or_else(|| {
            Error::new(
                ErrorCode::Unavailable,
                format!(
                    "all {COUNT} ports from {FIRST} are held by live managed worktrees; remove some with herd-cleanup"
                ),
            )
        })?;
    Manifest::update(artifacts, run_id, |m| {
        m.setup.get_or_insert_with(Default::default).port = Some(port);
    })
    .map_err(|e| Error::new(e.code(), e.to_string()))?;
    Ok(port)
}
