//! `relays/<host>.json`: the connection of a host's relay (herd-watch's `relay`), written each
//! time it connects or loses the host, read by the relay's own status and by the tests.

use herd_core::sidecar;
use serde::{Deserialize, Serialize};

use crate::layout::Artifacts;

/// The version a relay stamps on its state, and the newest a read accepts.
pub const RELAY_STATE_VERSION: u64 = 1;

/// The most a read of a relay's state takes in.
pub const RELAY_STATE_READ_LIMIT: u64 = 64 * 1024;

/// `relays/<host>.json`: the relay's connection to its host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RelayState {
    #[schemars(schema_with = "crate::format_version")]
    pub format_version: u64,
    /// The ssh destination or `~/.ssh/config` alias, as `host add` recorded it.
    pub host: String,
    pub connected: bool,
    /// Since when the state holds.
    pub since_ms: u64,
    /// The last time a line came from the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_seen_ms: Option<u64>,
    /// Why the last connection ended, while disconnected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl RelayState {
    /// The state of `host`'s relay: `Ok(None)` when no relay wrote one, or when a newer herd
    /// did (its fields are not this one's to judge).
    ///
    /// # Errors
    ///
    /// When the file cannot be read, is larger than [`RELAY_STATE_READ_LIMIT`] or is not a state.
    pub fn read(artifacts: &Artifacts, host: &str) -> Result<Option<RelayState>, sidecar::Error> {
        let state: Option<RelayState> =
            sidecar::read_json(&artifacts.relay_state(host), RELAY_STATE_READ_LIMIT)?;
        Ok(state.filter(|s| s.format_version <= RELAY_STATE_VERSION))
    }

    /// Replaces the state of its host's relay, stamped with [`RELAY_STATE_VERSION`], creating
    /// `relays/` private when it is missing.
    ///
    /// # Errors
    ///
    /// When the directory or the file cannot be written.
    pub fn write(mut self, artifacts: &Artifacts) -> Result<(), sidecar::Error> {
        self.format_version = RELAY_STATE_VERSION;
        sidecar::ensure_private_dir(&artifacts.relay_dir())?;
        sidecar::write_json(&artifacts.relay_state(&self.host), &self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(host: &str) -> RelayState {
        RelayState {
            format_version: 0,
            host: host.into(),
            connected: false,
            since_ms: 5,
            last_seen_ms: Some(4),
            error: Some("connection closed".into()),
        }
    }

    #[test]
    fn a_state_is_written_stamped_and_read_back_and_a_newer_one_is_not_judged() {
        let dir = tempfile::tempdir().unwrap();
        let artifacts = Artifacts::new(dir.path());
        assert_eq!(RelayState::read(&artifacts, "devbox").unwrap(), None);
        state("devbox").write(&artifacts).unwrap();
        let read = RelayState::read(&artifacts, "devbox").unwrap().unwrap();
        assert_eq!(read.format_version, RELAY_STATE_VERSION);
        assert_eq!(read.error.as_deref(), Some("connection closed"));
        assert!(
            artifacts
                .relay_state("devbox")
                .ends_with("relays/devbox.json")
        );

        let mut newer = serde_json::to_value(read).unwrap();
        newer["format_version"] = (RELAY_STATE_VERSION + 1).into();
        std::fs::write(artifacts.relay_state("devbox"), newer.to_string()).unwrap();
        assert_eq!(RelayState::read(&artifacts, "devbox").unwrap(), None);
    }
}
