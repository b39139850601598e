//! The person's own word on confinement: the `[sandbox]` table of `~/.config/herd/config.toml`
//! (`$XDG_CONFIG_HOME/herd/config.toml`). Only this file widens a sandbox; a repository's files
//! are never read for it.
//!
//! ```toml
//! [sandbox]
//! mode = "workspace"     # every child's default: "read-only", "workspace" or "off"
//! widest = "workspace"   # the widest a request may ask for (default: mode)
//! network = "on"         # "on", "off" or ["host:port", …]
//! widest-network = "on"  # (default: network)
//! writable = ["~/.cargo/registry", "~/.cargo/git", "~/.npm", "~/.cache"]
//! hidden = ["~/.ssh", "~/.gnupg", …]
//! ```

use std::path::{Path, PathBuf};

use herd_core::{Error, ErrorCode, sidecar};
use serde::Deserialize;

use crate::policy::{Limits, Mode, Network, Policy};

/// The bound of the configuration file.
pub const READ_LIMIT: u64 = 256 * 1024;

/// The build caches a `workspace` child may write, under the home directory.
pub const DEFAULT_WRITABLE: &[&str] = &[
    ".cargo/registry",
    ".cargo/git",
    ".rustup/tmp",
    ".npm",
    ".cache",
];

/// What a child never sees, under the home directory: keys, tokens and other runs' worktrees.
pub const DEFAULT_HIDDEN: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".netrc",
    ".docker",
    ".kube",
    ".local/share/keyrings",
    ".password-store",
    ".git-credentials",
    ".herdr/worktrees",
];

/// The user's sandbox configuration, with the defaults filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub limits: Limits,
    /// Directories a `workspace` child may write besides its own (absolute).
    pub writable: Vec<PathBuf>,
    /// Paths a confined child never sees (absolute).
    pub hidden: Vec<PathBuf>,
    /// The file it was read from, when there was one.
    pub file: Option<PathBuf>,
}

/// The file: other tables belong to other parts of herd and are not read here.
#[derive(Deserialize, Default)]
struct File {
    #[serde(default)]
    sandbox: Option<Table>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Table {
    mode: Option<String>,
    widest: Option<String>,
    network: Option<Network>,
    widest_network: Option<Network>,
    writable: Option<Vec<String>>,
    hidden: Option<Vec<String>>,
}

/// The policy of a child whose person has chosen nothing: confined to its work, network on.
pub const CONFINED: Policy = Policy {
    mode: Mode::Workspace,
    network: Network::On,
};

/// The built-in default, and the widest a request may ask for without a configuration: confined.
/// Only the person's own `mode = "off"` runs children unconfined.
pub const BUILT_IN: Policy = CONFINED;

impl Config {
    /// The configuration of `config_dir/config.toml` for a user whose home is `home`; a missing
    /// file is the built-in default. A file that cannot be read or parsed is an error (exit 2,
    /// field `sandbox`): a broken configuration never means "unconfined".
    pub fn load(config_dir: &Path, home: &Path) -> Result<Config, Error> {
        let file = config_dir.join("config.toml");
        let text = match sidecar::read_bounded(&file, READ_LIMIT) {
            Ok(Some(bytes)) => Some(String::from_utf8(bytes).map_err(|_| {
                Error::invalid("sandbox", format!("{} is not UTF-8", file.display()))
            })?),
            Ok(None) => None,
            Err(e) => {
                return Err(Error::new(
                    ErrorCode::Unavailable,
                    format!("cannot read {}: {e}", file.display()),
                ));
            }
        };
        let parsed: File = match &text {
            Some(text) => toml::from_str(text).map_err(|e| {
                Error::invalid(
                    "sandbox",
                    format!("{}: {}", file.display(), e.message().trim()),
                )
            })?,
            None => File::default(),
        };
        let table = parsed.sandbox.unwrap_or_default();
        let bad = |key: &str, value: &str| {
            Error::invalid(
                "sandbox",
                format!(
                    "{}: sandbox.{key} = \"{value}\" is not one of the choices",
                    file.display()
                ),
            )
        };
        let mode = match &table.mode {
            Some(m) => Mode::parse(m).ok_or_else(|| bad("mode", m))?,
            None => BUILT_IN.mode,
        };
        let network = table.network.unwrap_or(BUILT_IN.network);
        let widest_mode = match &table.widest {
            Some(m) => Mode::parse(m).ok_or_else(|| bad("widest", m))?.max(mode),
            None => mode,
        };
        let widest_network = match table.widest_network {
            Some(n) => n.widened(&network),
            None => network.clone(),
        };
        let under_home = |list: Option<Vec<String>>, default: &[&str]| -> Vec<PathBuf> {
            match list {
                Some(list) => list.iter().map(|p| expand(p, home)).collect(),
                None => default.iter().map(|p| home.join(p)).collect(),
            }
        };
        Ok(Config {
            limits: Limits {
                default: Policy { mode, network },
                widest: Policy {
                    mode: widest_mode,
                    network: widest_network,
                },
            },
            writable: under_home(table.writable, DEFAULT_WRITABLE),
            hidden: under_home(table.hidden, DEFAULT_HIDDEN),
            file: text.is_some().then_some(file),
        })
    }
}

/// `~/x` under `home`; other paths as written (a relative one is taken under `home`).
fn expand(path: &str, home: &Path) -> PathBuf {
    match path.strip_prefix("~/") {
        Some(rest) => home.join(rest),
        None if path == "~" => home.to_path_buf(),
        None => home.join(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: Option<&str>) -> Result<Config, Error> {
        let dir = tempfile::tempdir().unwrap();
        if let Some(text) = text {
            std::fs::write(dir.path().join("config.toml"), text).unwrap();
        }
        Config::load(dir.path(), Path::new("/home/u"))
    }

    #[test]
    fn no_file_is_the_built_in_default() {
        let config = load(None).unwrap();
        assert_eq!(config.limits.default, BUILT_IN);
        assert_eq!(config.limits.widest, BUILT_IN);
        assert!(config.hidden.contains(&PathBuf::from("/home/u/.ssh")));
        assert!(
            config
                .writable
                .contains(&PathBuf::from("/home/u/.cargo/registry"))
        );
        assert_eq!(config.file, None);
    }

    #[test]
    fn the_table_sets_the_default_and_the_widest() {
        let config = load(Some(
            "[sandbox]\nmode = \"read-only\"\nwidest = \"off\"\nnetwork = \"off\"\nwritable = [\"~/.m2\", \"/opt/cache\"]\n[other]\nx = 1\n",
        ))
        .unwrap();
        assert_eq!(config.limits.default.mode, Mode::ReadOnly);
        assert_eq!(config.limits.widest.mode, Mode::Off);
        assert_eq!(config.limits.default.network, Network::Off);
        // The widest is never narrower than the default.
        assert_eq!(config.limits.widest.network, Network::Off);
        let listed = load(Some(
            "[sandbox]\nnetwork = [\"localhost:9\"]\nwidest-network = [\"example.com:443\"]\n",
        ))
        .unwrap();
        assert_eq!(
            listed.limits.widest.network,
            Network::parse("example.com:443,localhost:9").unwrap(),
            "the widest holds the default"
        );
        assert_eq!(
            config.writable,
            [PathBuf::from("/home/u/.m2"), PathBuf::from("/opt/cache")]
        );
    }

    #[test]
    fn a_broken_file_is_refused_never_unconfined() {
        for text in [
            "[sandbox]\nmode = \"open\"\n",
            "[sandbox]\nmood = \"off\"\n",
            "[sandbox\n",
            "[sandbox]\nnetwork = [\"10.0.0.1:80\"]\n",
            "[sandbox]\nnetwork = \"maybe\"\n",
        ] {
            let err = load(Some(text)).unwrap_err();
            assert_eq!(err.field.as_deref(), Some("sandbox"), "{text:?}");
        }
    }
}
