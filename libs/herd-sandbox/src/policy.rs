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

/// Where the child may connect: ordered from the narrowest to the widest (an allowlist lies
/// between the two, and one list is within another when it names no more).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Network {
    /// A private loopback and nothing else.
    Off,
    /// A private loopback, and through herd's relay outside the sandbox these `host:port`s only
    /// (sorted, without repeats, never empty).
    Only(Vec<Endpoint>),
    /// Any address.
    On,
}

impl Network {
    /// `on`, `off`, or a list of `host:port` separated by commas; `None` for anything else.
    pub fn parse(text: &str) -> Option<Network> {
        match text {
            "off" => Some(Network::Off),
            "on" => Some(Network::On),
            _ => Network::list(text.split(',')).ok(),
        }
    }

    /// An allowlist from its entries (an empty one is `off`), or the first entry that is not a
    /// `host:port` with why.
    pub fn list<'a>(entries: impl IntoIterator<Item = &'a str>) -> Result<Network, String> {
        let mut list = entries
            .into_iter()
            .map(Endpoint::parse)
            .collect::<Result<Vec<_>, _>>()?;
        list.sort();
        list.dedup();
        if list.len() > MAX_ENDPOINTS {
            return Err(format!(
                "names {} addresses; at most {MAX_ENDPOINTS}",
                list.len()
            ));
        }
        Ok(Network::only(list))
    }

    fn only(list: Vec<Endpoint>) -> Network {
        if list.is_empty() {
            Network::Off
        } else {
            Network::Only(list)
        }
    }

    /// The addresses an allowlist names; none for `on` and `off`.
    pub fn endpoints(&self) -> &[Endpoint] {
        match self {
            Network::Only(list) => list,
            Network::Off | Network::On => &[],
        }
    }

    /// Whether `self` reaches nothing that `other` does not.
    pub fn within(&self, other: &Network) -> bool {
        match (self, other) {
            (Network::Off, _) | (_, Network::On) => true,
            (Network::Only(mine), Network::Only(theirs)) => mine.iter().all(|e| theirs.contains(e)),
            (Network::Only(_) | Network::On, Network::Off) | (Network::On, Network::Only(_)) => {
                false
            }
        }
    }

    /// What both allow.
    pub fn narrowed(self, other: &Network) -> Network {
        match (self, other) {
            (Network::Off, _) | (_, Network::Off) => Network::Off,
            (mine, Network::On) => mine,
            (Network::On, theirs) => theirs.clone(),
            (Network::Only(mine), Network::Only(theirs)) => {
                Network::only(mine.into_iter().filter(|e| theirs.contains(e)).collect())
            }
        }
    }

    /// What either allows.
    pub fn widened(self, other: &Network) -> Network {
        match (self, other) {
            (Network::On, _) | (_, Network::On) => Network::On,
            (mine, Network::Off) => mine,
            (Network::Off, theirs) => theirs.clone(),
            (Network::Only(mut mine), Network::Only(theirs)) => {
                mine.extend(theirs.iter().cloned());
                mine.sort();
                mine.dedup();
                Network::Only(mine)
            }
        }
    }
}

impl fmt::Display for Network {
    /// As [`Network::parse`] reads it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Network::Off => f.write_str("off"),
            Network::On => f.write_str("on"),
            Network::Only(list) => {
                for (i, endpoint) in list.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{endpoint}")?;
                }
                Ok(())
            }
        }
    }
}

/// As a request and the configuration write it: `"on"`, `"off"`, or `["host:port", …]`.
impl Serialize for Network {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Network::Only(list) => serializer.collect_seq(list.iter().map(ToString::to_string)),
            other => serializer.serialize_str(&other.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for Network {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        WrittenNetwork::deserialize(deserializer)?
            .read()
            .map_err(D::Error::custom)
    }
}

/// A network as written, before its entries are checked: what a request holds until its checks
/// name the field that is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum WrittenNetwork {
    Word(String),
    List(Vec<String>),
}

impl WrittenNetwork {
    /// The network it says, or why it says none.
    pub fn read(&self) -> Result<Network, String> {
        match self {
            WrittenNetwork::Word(word) if word == "on" => Ok(Network::On),
            WrittenNetwork::Word(word) if word == "off" => Ok(Network::Off),
            WrittenNetwork::Word(word) => Err(format!(
                "\"{word}\" is not \"on\", \"off\" or a list of \"host:port\""
            )),
            WrittenNetwork::List(list) => Network::list(list.iter().map(String::as_str)),
        }
    }
}

/// The most addresses one allowlist names.
pub const MAX_ENDPOINTS: usize = 64;

/// One `host:port` a child may connect to: a host name (`api.example.com`, `localhost`) or a
/// loopback address (`127.0.0.1`), and a port.
///
/// Other literal addresses are refused: inside the sandbox a name is given a loopback address of
/// its own that herd's relay answers on, which a literal address elsewhere cannot be.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
}

impl Endpoint {
    /// Reads `host:port`, or says why it is not one.
    pub fn parse(text: &str) -> Result<Endpoint, String> {
        let (host, port) = text
            .rsplit_once(':')
            .ok_or_else(|| format!("\"{}\" is not host:port", text.escape_debug()))?;
        let port: u16 = port.parse().ok().filter(|&p| p > 0).ok_or_else(|| {
            format!(
                "\"{}\" has no port between 1 and 65535",
                text.escape_debug()
            )
        })?;
        let host = host.to_ascii_lowercase();
        if let Ok(ip) = host.parse::<std::net::Ipv4Addr>() {
            if !ip.is_loopback() {
                return Err(format!(
                    "\"{text}\": name the host rather than its address (a literal address is allowed on loopback only)"
                ));
            }
        } else if !is_host_name(&host) {
            return Err(format!(
                "\"{}\" is not a host name (letters, digits, - and . only)",
                text.escape_debug()
            ));
        }
        Ok(Endpoint { host, port })
    }

    /// Whether the host is a loopback address the sandbox's own loopback answers for.
    pub fn loopback_address(&self) -> Option<std::net::Ipv4Addr> {
        self.host.parse::<std::net::Ipv4Addr>().ok()
    }
}

fn is_host_name(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
        // A name made of digits only would be read as an address.
        && !host.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.host, self.port)
    }
}

/// A child's confinement: its files and its network.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
        self.mode <= other.mode && self.network.within(&other.network)
    }

    /// The narrower of the two on each axis.
    pub fn narrowed(self, other: &Policy) -> Policy {
        Policy {
            mode: self.mode.min(other.mode),
            network: self.network.narrowed(&other.network),
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
        let network = match &self.network {
            Network::On => "network on".to_owned(),
            Network::Off => "network off (a private loopback only)".to_owned(),
            Network::Only(_) => format!("network to {} only", self.network),
        };
        format!("sandbox {}: {files}; {network}", self.mode)
    }

    /// The policy as [`CEILING_ENV`] carries it: `<mode>,<network>` (an allowlist's entries
    /// separated by commas).
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
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Asked {
    pub mode: Option<Mode>,
    pub network: Option<Network>,
}

/// The limits the user's configuration sets: the default and the widest allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    let mut policy = limits.default.clone();
    // A role narrows only: a project's role file never widens.
    if let Some(mode) = role.mode {
        policy.mode = policy.mode.min(mode);
    }
    if let Some(network) = role.network {
        policy.network = policy.network.narrowed(&network);
    }
    let widest = match &ceiling {
        Some(ceiling) => limits.widest.clone().narrowed(ceiling),
        None => limits.widest.clone(),
    };
    let whose = |field: &str| match &ceiling {
        Some(c) if c.within(&limits.widest) && !limits.widest.within(c) => {
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
        if !network.within(&widest.network) {
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
    Ok(policy.narrowed(&widest))
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
        let ceiling = Some(narrow.clone());
        // Nothing asked: the ceiling.
        assert_eq!(
            resolve(&l, Asked::default(), Asked::default(), ceiling.clone()),
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
        let list = Network::parse("127.0.0.1:8080,api.example.com:443").unwrap();
        for mode in Mode::ALL {
            for network in [Network::Off, list.clone(), Network::On] {
                let p = Policy { mode, network };
                assert_eq!(Policy::from_env(&p.to_env()), Some(p));
            }
        }
        for bad in [
            "",
            "off",
            "workspace,",
            "open,on",
            "off,maybe",
            "off,10.0.0.1:80",
            "off,a:0",
        ] {
            assert_eq!(Policy::from_env(bad), None, "{bad:?}");
        }
    }

    fn list(text: &str) -> Network {
        Network::parse(text).unwrap()
    }

    #[test]
    fn an_allowlist_lies_between_off_and_on_and_narrows_to_what_both_name() {
        let a = list("127.0.0.1:8080,api.example.com:443");
        let b = list("api.example.com:443");
        assert!(Network::Off.within(&b) && b.within(&a) && a.within(&Network::On));
        assert!(!a.within(&b) && !b.within(&Network::Off) && !Network::On.within(&a));
        assert_eq!(a.clone().narrowed(&b), b);
        assert_eq!(
            b.clone().narrowed(&list("localhost:1")),
            Network::Off,
            "nothing in common is off"
        );
        assert_eq!(
            b.clone().widened(&list("localhost:1")),
            list("api.example.com:443,localhost:1")
        );
        assert_eq!(a.to_string(), "127.0.0.1:8080,api.example.com:443");
        assert_eq!(list("B.example.com:1,b.example.com:1").endpoints().len(), 1);
    }

    #[test]
    fn an_allowlist_entry_is_a_host_name_or_loopback_and_a_port() {
        for good in ["localhost:80", "127.0.0.1:11434", "api.example.com:443"] {
            assert!(Endpoint::parse(good).is_ok(), "{good}");
        }
        for (bad, why) in [
            ("example.com", "host:port"),
            ("example.com:0", "port"),
            ("example.com:70000", "port"),
            ("10.1.2.3:80", "name the host"),
            ("exa mple.com:80", "host name"),
            ("-x.com:80", "host name"),
            ("[::1]:80", "host name"),
        ] {
            let err = Endpoint::parse(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn a_request_for_an_allowlist_is_within_on_and_wider_than_off() {
        let asked = |network| Asked {
            mode: None,
            network: Some(network),
        };
        let on = limits(WORKSPACE, WORKSPACE);
        let picked = resolve(&on, Asked::default(), asked(list("localhost:9")), None).unwrap();
        assert_eq!(picked.network, list("localhost:9"));
        let off = Policy {
            mode: Mode::Workspace,
            network: Network::Off,
        };
        let err = resolve(
            &limits(off.clone(), off),
            Asked::default(),
            asked(list("localhost:9")),
            None,
        )
        .unwrap_err();
        assert_eq!(err.field.as_deref(), Some("network"));
        // The JSON a request writes.
        let read: Network = serde_json::from_str(r#"["localhost:9", "LOCALHOST:9"]"#).unwrap();
        assert_eq!(read, list("localhost:9"));
        assert_eq!(serde_json::to_string(&read).unwrap(), r#"["localhost:9"]"#);
        assert!(serde_json::from_str::<Network>(r#""maybe""#).is_err());
        assert!(serde_json::from_str::<Network>(r#"["10.0.0.1:80"]"#).is_err());
    }
}
