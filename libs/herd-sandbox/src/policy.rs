//! What a child may do, and who may widen it.
//!
//! The user's configuration sets the default policy and the widest one a request may ask for; a
//! role narrows only; a request may ask for anything up to the widest; a child's own spawns never
//! go wider than the child itself (its policy is handed down in [`CEILING_ENV`]). Nothing a
//! repository holds is read here.

use std::fmt;

use herd_core::Error;
use serde::{Deserialize, Serialize};

/// The variable herd sets in a confined child: its own policy, the widest its own children get.
pub const CEILING_ENV: &str = "HERD_SANDBOX_POLICY";

/// What the child's files may be: ordered from the narrowest to the widest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Everything read-only but its own session and herd files; secrets hidden.
    ReadOnly,
    /// Its working directory (its worktree), its session and herd files, a private `/tmp` and
    /// the build caches writable; secrets hidden; other branches out of reach.
    Workspace,
    /// Unconfined: the person's whole authority.
    Off,
}

impl Mode {
    pub const ALL: [Mode; 3] = [Mode::ReadOnly, Mode::Workspace, Mode::Off];

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::ReadOnly => "read-only",
            Mode::Workspace => "workspace",
            Mode::Off => "off",
        }
    }

    pub fn parse(text: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.as_str() == text)
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where the child may connect: ordered from the narrowest to the widest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Network {
    /// A private loopback and nothing else.
    Off,
    /// Any address.
    On,
}

impl Network {
    pub fn as_str(self) -> &'static str {
        match self {
            Network::Off => "off",
            Network::On => "on",
        }
    }

    pub fn parse(text: &str) -> Option<Network> {
        [Network::Off, Network::On]
            .into_iter()
            .find(|n| n.as_str() == text)
    }
}

impl fmt::Display for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A child's confinement: its files and its network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Policy {
    pub mode: Mode,
    pub network: Network,
}

impl Policy {
    /// No confinement at all.
    pub const OFF: Policy = Policy {
        mode: Mode::Off,
        network: Network::On,
    };

    /// Whether this policy asks for a sandbox at all.
    pub fn confines(&self) -> bool {
        self.mode != Mode::Off || self.network != Network::On
    }

    /// Whether `self` allows nothing that `other` does not.
    pub fn within(&self, other: &Policy) -> bool {
        self.mode <= other.mode && self.network <= other.network
    }

    /// The narrower of the two on each axis.
    pub fn narrowed(self, other: Policy) -> Policy {
        Policy {
            mode: self.mode.min(other.mode),
            network: self.network.min(other.network),
        }
    }

    /// The policy in one line, as a person reads it (the doctor, the record, the result).
    pub fn describe(&self) -> String {
        let files = match self.mode {
            Mode::ReadOnly => "reads the machine but writes only its session; secrets hidden",
            Mode::Workspace => {
                "writes its working directory, its session, a private temporary directory and the build caches; secrets hidden; its own branch only"
            }
            Mode::Off => "unconfined: the person's whole authority",
        };
        let network = match self.network {
            Network::On => "network on",
            Network::Off => "network off (a private loopback only)",
        };
        format!("sandbox {}: {files}; {network}", self.mode)
    }

    /// The policy as [`CEILING_ENV`] carries it: `<mode>,<network>`.
    pub fn to_env(&self) -> String {
        format!("{},{}", self.mode, self.network)
    }

    /// Reads [`CEILING_ENV`]'s value; anything else is `None`, which a caller treats as the
    /// narrowest policy (fail closed), never as none.
    pub fn from_env(text: &str) -> Option<Policy> {
        let (mode, network) = text.split_once(',')?;
        Some(Policy {
            mode: Mode::parse(mode)?,
            network: Network::parse(network)?,
        })
    }
}

/// What a request asks for, each part optional.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Asked {
    pub mode: Option<Mode>,
    pub network: Option<Network>,
}

/// The limits the user's configuration sets: the default and the widest allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub default: Policy,
    pub widest: Policy,
}

/// Resolves the policy of one child: the user's default, narrowed by its role, then what the
/// request asked for, refused (field `sandbox` or `network`) when it is wider than the user's
/// widest or than the spawning child's own policy (`ceiling`).
pub fn resolve(
    limits: &Limits,
    role: Asked,
    request: Asked,
    ceiling: Option<Policy>,
) -> Result<Policy, Error> {
    let mut policy = limits.default;
    // A role narrows only: a project's role file never widens.
    if let Some(mode) = role.mode {
        policy.mode = policy.mode.min(mode);
    }
    if let Some(network) = role.network {
        policy.network = policy.network.min(network);
    }
    let widest = match ceiling {
        Some(ceiling) => limits.widest.narrowed(ceiling),
        None => limits.widest,
    };
    let whose = |field: &str| match ceiling {
        Some(c) if c.within(&limits.widest) && !limits.widest.within(&c) => {
            format!("the spawning child's own {field}")
        }
        _ => "your herd configuration (sandbox.widest)".to_owned(),
    };
    if let Some(mode) = request.mode {
        if mode > widest.mode {
            return Err(Error::invalid(
                "sandbox",
                format!(
                    "sandbox \"{mode}\" is wider than {} allows (\"{}\"); ask for \"{}\" or narrower, or widen it in ~/.config/herd/config.toml",
                    whose("sandbox"),
                    widest.mode,
                    widest.mode
                ),
            ));
        }
        policy.mode = mode;
    }
    if let Some(network) = request.network {
        if network > widest.network {
            return Err(Error::invalid(
                "network",
                format!(
                    "network \"{network}\" is wider than {} allows (\"{}\")",
                    whose("network"),
                    widest.network
                ),
            ));
        }
        policy.network = network;
    }
    // What nobody asked for still stays within the ceiling.
    Ok(policy.narrowed(widest))
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORKSPACE: Policy = Policy {
        mode: Mode::Workspace,
        network: Network::On,
    };

    fn limits(default: Policy, widest: Policy) -> Limits {
        Limits { default, widest }
    }

    #[test]
    fn the_default_holds_when_nothing_is_asked() {
        let l = limits(WORKSPACE, WORKSPACE);
        assert_eq!(
            resolve(&l, Asked::default(), Asked::default(), None),
            Ok(WORKSPACE)
        );
    }

    #[test]
    fn a_request_narrows_and_widens_only_up_to_the_widest() {
        let l = limits(WORKSPACE, WORKSPACE);
        let asked = |mode| Asked {
            mode: Some(mode),
            network: None,
        };
        assert_eq!(
            resolve(&l, Asked::default(), asked(Mode::ReadOnly), None)
                .unwrap()
                .mode,
            Mode::ReadOnly
        );
        let err = resolve(&l, Asked::default(), asked(Mode::Off), None).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("sandbox"));
        assert!(err.message.contains("sandbox.widest"), "{}", err.message);
        // The user allowed off: the request may ask for it.
        let open = limits(WORKSPACE, Policy::OFF);
        assert_eq!(
            resolve(&open, Asked::default(), asked(Mode::Off), None)
                .unwrap()
                .mode,
            Mode::Off
        );
    }

    #[test]
    fn a_role_never_widens() {
        let l = limits(WORKSPACE, Policy::OFF);
        let role = Asked {
            mode: Some(Mode::Off),
            network: Some(Network::On),
        };
        assert_eq!(resolve(&l, role, Asked::default(), None), Ok(WORKSPACE));
        let narrow = Asked {
            mode: Some(Mode::ReadOnly),
            network: Some(Network::Off),
        };
        assert_eq!(
            resolve(&l, narrow, Asked::default(), None),
            Ok(Policy {
                mode: Mode::ReadOnly,
                network: Network::Off
            })
        );
    }

    #[test]
    fn a_child_never_widens_for_its_own_children() {
        let l = limits(Policy::OFF, Policy::OFF);
        let narrow = Policy {
            mode: Mode::ReadOnly,
            network: Network::Off,
        };
        let ceiling = Some(narrow);
        // Nothing asked: the ceiling.
        assert_eq!(
            resolve(&l, Asked::default(), Asked::default(), ceiling),
            Ok(narrow)
        );
        let err = resolve(
            &l,
            Asked::default(),
            Asked {
                mode: Some(Mode::Workspace),
                network: None,
            },
            ceiling,
        )
        .unwrap_err();
        assert!(err.message.contains("spawning child"), "{}", err.message);
    }

    #[test]
    fn the_ceiling_travels_as_text_and_anything_else_is_unknown() {
        for mode in Mode::ALL {
            for network in [Network::Off, Network::On] {
                let p = Policy { mode, network };
                assert_eq!(Policy::from_env(&p.to_env()), Some(p));
            }
        }
        for bad in ["", "off", "workspace,", "open,on", "off,maybe"] {
            assert_eq!(Policy::from_env(bad), None, "{bad:?}");
        }
    }
}
