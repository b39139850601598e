//! The one place a child is confined: the bubblewrap command line that herd puts in front of the
//! whole child (Pi or any command, with everything it starts), on every surface.
//!
//! The child sees the machine read-only (`--ro-bind / /`), the host's devices, a private temporary
//! directory as `TMPDIR`, the person's secrets replaced by empty files and directories, and,
//! writable, only what its policy names. `/tmp` itself stays visible and read-only: programs and
//! checkouts live there too (a clone under `/tmp` is an ordinary place to try a project), and
//! bubblewrap 0.8 (Debian 12) has no overlay to make it private and still show them. `--die-with-parent` ties the sandbox to the process herd recorded: when that process
//! ends, the kernel ends everything in the sandbox.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use herd_core::{Error, ErrorCode};

use crate::config::Config;
use crate::git::Overlay;
use crate::policy::{Mode, Network, Policy};

/// The sandbox program.
pub const PROGRAM: &str = "bwrap";

/// What to tell a person whose machine cannot confine a child.
pub const FIX: &str = "install bubblewrap (Debian and Ubuntu: `apt-get install bubblewrap`), or choose to run children unconfined with `[sandbox] mode = \"off\"` in ~/.config/herd/config.toml";

/// Finds `bwrap` on `path` (a `PATH` value); `None` when it is not there.
pub fn find(path: Option<&OsStr>) -> Option<PathBuf> {
    let path = path?;
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(PROGRAM))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether this process runs inside a sandbox of this module: its PID namespace's first process
/// is bubblewrap's (which a process outside a PID namespace of bubblewrap cannot arrange).
pub fn inside() -> bool {
    std::fs::read_to_string("/proc/1/comm").is_ok_and(|comm| comm.trim() == PROGRAM)
}

/// The refusal of a policy this machine cannot enforce (exit 4): nothing is launched.
pub fn unavailable(policy: &Policy) -> Error {
    Error::new(
        ErrorCode::Unavailable,
        format!(
            "this child's {} needs bubblewrap (`{PROGRAM}`), which is not on PATH; nothing was launched. To fix: {FIX}",
            policy.describe()
        ),
    )
    .with_field("sandbox")
}

/// How a sandbox keeps the child's signals inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// Landlock's signal scoping, applied to the process that becomes the sandbox: the child
    /// keeps the machine's PIDs, so herd verifies and signals it and its own children as any.
    Scoped,
    /// A PID namespace of the sandbox's own (`--unshare-pid`, a fresh `/proc`), on a kernel
    /// without the scoping: the child's own children cannot be verified from outside, so a
    /// confined child may not start any.
    PidNamespace,
}

impl Isolation {
    /// What this kernel offers.
    pub fn here() -> Isolation {
        if crate::landlock::can_scope_signals() {
            Isolation::Scoped
        } else {
            Isolation::PidNamespace
        }
    }
}

/// Where one child works: what its policy makes writable, besides the configured caches.
#[derive(Debug, Clone, Default)]
pub struct Places {
    /// Its working directory (writable under `workspace`).
    pub cwd: PathBuf,
    /// Directories it writes under every policy: its session's directory and its artifacts
    /// directory (its herd files).
    pub own: Vec<PathBuf>,
    /// Its private temporary directory, writable and its `TMPDIR`.
    pub tmp: Option<PathBuf>,
    /// Its worktree's git overlay, under `workspace` in a managed worktree.
    pub git: Option<Overlay>,
    /// What an allowlist needs inside (`crate::net`).
    pub net: Option<NetPlaces>,
    /// Variables naming caches of the person's that the child reads but never writes, each set
    /// in the sandbox (`NODE_COMPILE_CACHE`: Node's compiled code of Pi, which a private
    /// temporary directory would otherwise start empty every time).
    pub read_caches: Vec<(String, PathBuf)>,
    /// A Pi child's agent directory, covered by a private one (`AgentPlaces`).
    pub agent: Option<AgentPlaces>,
}

/// A Pi child's view of the person's Pi agent directory, at its own path (settings name packages
/// relative to it): a private directory of the run mounted there, in which each entry of the
/// person's is mounted again read-only (their sessions, extensions, skills and settings, which
/// the person's next Pi loads unconfined), but for the files Pi itself updates in place while it
/// runs ([`AgentPlaces::UPDATED`]); what Pi creates there (its locks) stays private.
#[derive(Debug, Clone)]
pub struct AgentPlaces {
    pub person: PathBuf,
    pub private: PathBuf,
}

impl AgentPlaces {
    /// What Pi writes in place, under a lock beside it: its logins' refreshed tokens and the
    /// folders the person trusts.
    pub const UPDATED: [&str; 2] = ["auth.json", "trust.json"];
    /// The most entries of the person's directory mounted.
    const MAX_ENTRIES: usize = 256;

    fn bind(&self, args: &mut Args) {
        let Ok(entries) = std::fs::read_dir(&self.person) else {
            return;
        };
        // Each source is the machine's (bubblewrap reads sources outside the new root), so the
        // entries are still there to mount once the private directory covers their place.
        args.pair("--bind", &self.private, &self.person);
        for entry in entries.flatten().take(Self::MAX_ENTRIES) {
            let name = entry.file_name();
            let flag = if Self::UPDATED.iter().any(|u| name == *u) {
                "--bind"
            } else {
                "--ro-bind"
            };
            let path = entry.path();
            args.pair(flag, &path, &path);
        }
    }
}

/// What a child whose network is an allowlist sees of it.
#[derive(Debug, Clone)]
pub struct NetPlaces {
    /// Its `/etc/hosts`, naming the loopback address of each allowed host.
    pub hosts: PathBuf,
    /// Whether the forwarder listens on a port below 1024, which needs the one capability that
    /// allows it (inside the sandbox's own network namespace only).
    pub low_ports: bool,
}

/// The argv to put in front of the child's own: `bwrap …options… --`.
pub fn command(
    program: &Path,
    policy: &Policy,
    config: &Config,
    places: &Places,
    isolation: Isolation,
) -> Vec<OsString> {
    let mut args = Args::default();
    args.push(program.as_os_str());
    args.flags(&["--die-with-parent", "--unshare-ipc"]);
    if isolation == Isolation::PidNamespace {
        args.flags(&["--unshare-pid"]);
    }
    if policy.network != Network::On {
        args.flags(&["--unshare-net"]);
    }
    if places.net.as_ref().is_some_and(|net| net.low_ports) {
        args.flags(&["--cap-add", "CAP_NET_BIND_SERVICE"]);
    }
    args.pair("--ro-bind", Path::new("/"), Path::new("/"));
    args.pair("--dev-bind", Path::new("/dev"), Path::new("/dev"));
    if isolation == Isolation::PidNamespace {
        args.one("--proc", Path::new("/proc"));
    }
    for hidden in &config.hidden {
        match std::fs::symlink_metadata(hidden) {
            Ok(meta) if meta.is_dir() => args.one("--tmpfs", hidden),
            Ok(_) => args.pair("--ro-bind", Path::new("/dev/null"), hidden),
            // Nothing there: nothing to hide, and the child cannot create it (read-only).
            Err(_) => {}
        }
    }
    if let Some(net) = &places.net {
        args.pair("--ro-bind", &net.hosts, Path::new("/etc/hosts"));
    }
    for (name, dir) in &places.read_caches {
        args.0
            .extend(["--setenv".into(), name.into(), dir.as_os_str().to_owned()]);
    }
    // Before the writable directories: one of them may lie inside Pi's agent directory (a Pi
    // parent's artifacts directory does, under its sessions), and must stay writable there.
    if let Some(agent) = &places.agent {
        agent.bind(&mut args);
    }
    let mut writable: Vec<&Path> = places.own.iter().map(PathBuf::as_path).collect();
    if let Some(tmp) = &places.tmp {
        writable.push(tmp);
        args.0.extend([
            "--setenv".into(),
            "TMPDIR".into(),
            tmp.as_os_str().to_owned(),
        ]);
    }
    if policy.mode == Mode::Workspace {
        writable.push(&places.cwd);
        writable.extend(config.writable.iter().map(PathBuf::as_path));
    }
    for dir in writable {
        // A cache that does not exist is not made: the child's build makes it in its /tmp.
        if dir.is_dir() {
            args.pair("--bind", dir, dir);
        }
    }
    // Last, so that no writable directory that holds the repository covers its read-only git.
    if let Some(git) = &places.git {
        git.bind(&mut args);
    }
    args.one("--chdir", &places.cwd);
    args.flags(&["--"]);
    args.0
}

/// bubblewrap's arguments, built up in order (later mounts cover earlier ones).
#[derive(Debug, Default)]
pub(crate) struct Args(pub(crate) Vec<OsString>);

impl Args {
    fn push(&mut self, arg: &OsStr) {
        self.0.push(arg.to_owned());
    }

    fn flags(&mut self, flags: &[&str]) {
        self.0.extend(flags.iter().map(OsString::from));
    }

    pub(crate) fn one(&mut self, flag: &str, path: &Path) {
        self.0.push(flag.into());
        self.0.push(path.as_os_str().to_owned());
    }

    pub(crate) fn pair(&mut self, flag: &str, source: &Path, dest: &Path) {
        self.0.push(flag.into());
        self.0.push(source.as_os_str().to_owned());
        self.0.push(dest.as_os_str().to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Limits;

    fn config(home: &Path) -> Config {
        Config {
            limits: Limits {
                default: crate::config::CONFINED,
                widest: crate::config::CONFINED,
            },
            writable: vec![home.join(".cache")],
            hidden: vec![home.join(".ssh"), home.join(".netrc"), home.join(".aws")],
            file: None,
        }
    }

    fn text(args: &[OsString]) -> String {
        args.iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn workspace_writes_its_directory_and_caches_and_hides_what_exists() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join(".ssh")).unwrap();
        std::fs::write(home.path().join(".netrc"), "x").unwrap();
        std::fs::create_dir(home.path().join(".cache")).unwrap();
        let work = tempfile::tempdir().unwrap();
        let places = Places {
            cwd: work.path().to_path_buf(),
            own: vec![],
            tmp: None,
            git: None,
            net: None,
            read_caches: Vec::new(),
            agent: None,
        };
        let policy = crate::config::CONFINED;
        let line = text(&command(
            Path::new("/usr/bin/bwrap"),
            &policy,
            &config(home.path()),
            &places,
            Isolation::PidNamespace,
        ));
        let h = home.path().display();
        let w = work.path().display();
        assert!(
            line.starts_with("/usr/bin/bwrap --die-with-parent --unshare-ipc --unshare-pid"),
            "{line}"
        );
        assert!(line.contains("--proc /proc"), "{line}");
        assert!(!line.contains("--unshare-net"), "{line}");
        assert!(line.contains(&format!("--tmpfs {h}/.ssh")), "{line}");
        assert!(
            line.contains(&format!("--ro-bind /dev/null {h}/.netrc")),
            "{line}"
        );
        assert!(
            !line.contains(".aws"),
            "a missing secret needs no cover: {line}"
        );
        assert!(line.contains(&format!("--bind {w} {w}")), "{line}");
        assert!(
            line.contains(&format!("--bind {h}/.cache {h}/.cache")),
            "{line}"
        );
        assert!(line.ends_with(&format!("--chdir {w} --")), "{line}");
    }

    #[test]
    fn read_only_writes_only_its_own_files_and_network_off_unshares_it() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join(".cache")).unwrap();
        let work = tempfile::tempdir().unwrap();
        let own = tempfile::tempdir().unwrap();
        let places = Places {
            cwd: work.path().to_path_buf(),
            own: vec![own.path().to_path_buf()],
            tmp: None,
            git: None,
            net: None,
            read_caches: Vec::new(),
            agent: None,
        };
        let policy = Policy {
            mode: Mode::ReadOnly,
            network: Network::Off,
        };
        let line = text(&command(
            Path::new("bwrap"),
            &policy,
            &config(home.path()),
            &places,
            Isolation::Scoped,
        ));
        // Scoped signals: the machine's PIDs and its /proc.
        assert!(!line.contains("--unshare-pid"), "{line}");
        assert!(!line.contains("--proc"), "{line}");
        let o = own.path().display();
        assert!(line.contains("--unshare-net"), "{line}");
        assert!(line.contains(&format!("--bind {o} {o}")), "{line}");
        assert!(
            !line.contains(&format!("--bind {}", work.path().display())),
            "{line}"
        );
        assert!(!line.contains(".cache"), "{line}");
    }
}
