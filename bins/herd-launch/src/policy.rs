//! The launch-policy sidecar `<session>.pi-herdr-subagent-policy.json` (docs/protocol.md): its
//! type, reader and writer are [`herd_protocol::launch::policy`]'s.

pub(crate) use herd_protocol::launch::policy::hex;
pub use herd_protocol::launch::policy::{Owner, Policy, READ_LIMIT, VERSION, WorktreeBinding};
