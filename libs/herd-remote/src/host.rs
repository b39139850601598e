//! Prepared hosts: the record `herd-launch host add` writes, where herd lives on the remote, and
//! how a herd program is run there.
//!
//! A host's record is `<config>/herd/hosts/<destination>.json` (`$XDG_CONFIG_HOME`, else
//! `~/.config`), private. On the remote, herd's binaries of this version are in
//! `~/.herd/bin/<version>/` and the artifacts of one local artifacts directory in
//! `~/.herd/artifacts/<16 hex digits of a hash of this machine and that directory>/`, 0700.
//!
//! Every remote herd program runs behind [`GUARD`], a constant shell script that receives the
//! binary directory, the expected version and the artifacts directory as quoted arguments: it
//! refuses with a known exit code when herd is missing there or is another version, creates the
//! artifacts directory private, and then `exec`s the program's argv as given.

use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_core::subprocess::Output;
use herd_core::{Error, ErrorCode, sidecar};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::ssh::{Destination, Ssh};

/// The version a remote's herd must have: this build's.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The format of a host record.
pub const FORMAT_VERSION: u64 = 1;

/// The six programs copied to a host.
pub const PROGRAMS: [&str; 6] = [
    "herd-launch",
    "herd-watch",
    "herd-accept",
    "herd-worktree",
    "herd-cleanup",
    "herd-docs",
];

/// The guard every remote herd call runs behind (`sh -c GUARD herd <bin> <version> <art> argv…`):
/// it refuses a missing herd (97) or one of another version (98), creates the private artifacts
/// directory (96 when it cannot), and runs the program with `HERD_BIN_DIR` naming `<bin>`.
///
/// The version is what `herd-launch --version` said when `host add` installed the directory
/// ([`VERSION_STAMP`]), read without starting a process while neither `herd-launch` nor the
/// program run is newer than that record; else `herd-launch --version` is asked again. In the
/// common case the guard is only shell builtins before the `exec`.
pub const GUARD: &str = r#"umask 077
b=$1 want=$2 art=$3
shift 3
v=
if [ -x "$b/herd-launch" ] && [ -x "$1" ] && [ -f "$b/.version" ] \
  && ! [ "$b/herd-launch" -nt "$b/.version" ] && ! [ "$1" -nt "$b/.version" ]; then
  read -r v < "$b/.version" || v=
fi
if [ -z "$v" ]; then
  v=$("$b/herd-launch" --version 2>/dev/null) || { echo "herd is not installed in $b" >&2; exit 97; }
fi
[ "$v" = "herd-launch $want" ] || { echo "$b has $v, not herd-launch $want" >&2; exit 98; }
if [ -n "$art" ] && ! [ -d "$art" ]; then mkdir -p -m 700 -- "$art" || exit 96; fi
HERD_BIN_DIR=$b
export HERD_BIN_DIR
exec "$@""#;

/// The file in a host's binaries directory holding what its `herd-launch --version` said when
/// `host add` checked it; [`GUARD`] trusts it while no program there is newer.
pub const VERSION_STAMP: &str = ".version";

/// The guard's exit codes.
const GUARD_MISSING: i32 = 97;
const GUARD_MISMATCH: i32 = 98;
const GUARD_NO_DIR: i32 = 96;

/// `<config>/herd/hosts/<name>.json`: a host `herd-launch host add` prepared, written private
/// (0600) when herd was copied there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostRecord {
    #[schemars(schema_with = "format_version_schema")]
    pub format_version: u64,
    /// The ssh destination or `~/.ssh/config` alias.
    pub name: String,
    pub added_at_ms: u64,
    /// `uname -s` and `uname -m` of the remote.
    pub os: String,
    pub arch: String,
    /// The remote's `$HOME`.
    pub home: String,
    /// Where herd's binaries of `herd_version` are on the remote.
    pub bin_dir: String,
    pub herd_version: String,
    /// `pi --version` on the remote, when Pi is there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pi_version: Option<String>,
}

/// What `herd-launch host add --json` prints: the record of the host and the programs copied
/// there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HostAdded {
    pub status: AddStatus,
    pub host: HostRecord,
    pub copied: Vec<String>,
}

/// The status of a [`HostAdded`]: the host is ready (a refusal is an error document).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AddStatus {
    Added,
}

/// What `herd-launch host list --json` prints: every host's record, by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HostListing {
    pub hosts: Vec<HostRecord>,
}

/// What `herd-launch host remove --json` prints: the host forgotten.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HostRemoved {
    pub status: RemoveStatus,
    /// Its name, as `host add` recorded it.
    pub host: String,
}

/// The status of a [`HostRemoved`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RemoveStatus {
    Removed,
}

/// The schema of a record's version: at least 1, and a reader refuses a newer one than
/// [`FORMAT_VERSION`].
fn format_version_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "integer",
        "minimum": 1,
        "description": "The format version; a reader refuses a newer one than it knows."
    })
}

impl HostRecord {
    pub fn destination(&self) -> Result<Destination, Error> {
        Destination::new(&self.name)
    }

    /// The remote artifacts directory of the local artifacts directory `local`.
    pub fn artifacts_for(&self, local: &Path) -> String {
        let machine = std::fs::read_to_string("/etc/machine-id")
            .or_else(|_| std::fs::read_to_string("/proc/sys/kernel/hostname"))
            .unwrap_or_default();
        let mut hash = Sha256::new();
        hash.update(machine.trim().as_bytes());
        hash.update([0]);
        hash.update(local.as_os_str().as_encoded_bytes());
        let digest = hash.finalize();
        let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
        format!("{}/.herd/artifacts/{hex}", self.home)
    }

    /// The path of `program` on the remote.
    pub fn program(&self, program: &str) -> String {
        format!("{}/{program}", self.bin_dir)
    }

    /// The argv that runs herd's `program` on the remote over `artifacts` (created private when
    /// missing) with `args`, behind [`GUARD`].
    pub fn herd_argv(&self, program: &str, artifacts: &str, args: &[&str]) -> Vec<String> {
        let mut argv: Vec<String> = vec![
            "sh".into(),
            "-c".into(),
            GUARD.into(),
            "herd".into(),
            self.bin_dir.clone(),
            VERSION.into(),
            artifacts.into(),
            self.program(program),
            "--artifacts".into(),
            artifacts.into(),
        ];
        argv.extend(args.iter().map(|a| (*a).to_owned()));
        argv
    }

    /// Runs herd's `program` on the remote (see [`HostRecord::herd_argv`]) through `ssh`.
    ///
    /// # Errors
    ///
    /// `ssh`'s errors, and `unavailable` naming `herd-launch host add` when herd is missing on
    /// the remote or is another version.
    pub fn run_herd(
        &self,
        ssh: &Ssh,
        program: &str,
        artifacts: &str,
        args: &[&str],
        stdin: Option<&[u8]>,
        budget: Duration,
    ) -> Result<Output, Error> {
        let out = ssh.run(&self.herd_argv(program, artifacts, args), stdin, budget)?;
        guard_error(&self.name, &out).map_or(Ok(out), Err)
    }
}

/// The refusal of [`GUARD`], when it refused.
pub fn guard_error(host: &str, out: &Output) -> Option<Error> {
    let said = herd_core::escape::encode_host_value(out.stderr.text().trim(), 300);
    let fix = format!("run `herd-launch host add {host}` to install this herd ({VERSION}) there");
    let message = match out.code? {
        GUARD_MISSING => format!("herd is not installed on {host} ({said}): {fix}"),
        GUARD_MISMATCH => format!(
            "{host} has another herd than this one ({said}), and the two must be the same \
             version: {fix}"
        ),
        GUARD_NO_DIR => format!(
            "cannot create herd's artifacts directory on {host} ({said}): is its disk full? \
             check with `ssh {host} df -h ~`"
        ),
        _ => return None,
    };
    Some(Error::new(ErrorCode::Unavailable, message).with_field("host"))
}

/// The directory of host records: `$XDG_CONFIG_HOME/herd/hosts`, else `~/.config/herd/hosts`.
///
/// # Errors
///
/// `unavailable` when neither variable is set.
pub fn hosts_dir(env: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, Error> {
    let set = |k: &str| env(k).filter(|v| !v.is_empty());
    if let Some(dir) = set("XDG_CONFIG_HOME") {
        return Ok(PathBuf::from(dir).join("herd/hosts"));
    }
    if let Some(home) = set("HOME") {
        return Ok(PathBuf::from(home).join(".config/herd/hosts"));
    }
    Err(Error::new(
        ErrorCode::Unavailable,
        "no configuration directory for herd's hosts: set XDG_CONFIG_HOME or HOME",
    ))
}

/// The hosts' records in `dir`.
#[derive(Debug, Clone)]
pub struct Hosts {
    dir: PathBuf,
}

/// The largest host record read.
const RECORD_LIMIT: u64 = 64 * 1024;

/// A host's record is `<destination><RECORD_SUFFIX>` in [`Hosts::dir`].
const RECORD_SUFFIX: &str = ".json";

impl Hosts {
    pub fn new(dir: PathBuf) -> Hosts {
        Hosts { dir }
    }

    /// # Errors
    ///
    /// As [`hosts_dir`].
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<Hosts, Error> {
        Ok(Hosts::new(hosts_dir(env)?))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, dest: &Destination) -> PathBuf {
        self.dir.join(format!("{dest}{RECORD_SUFFIX}"))
    }

    /// The record of `dest`; `None` when the host was never added.
    ///
    /// # Errors
    ///
    /// A record that cannot be read or is of a newer format.
    pub fn get(&self, dest: &Destination) -> Result<Option<HostRecord>, Error> {
        Ok(sidecar::read_versioned(
            &self.path(dest),
            RECORD_LIMIT,
            "format_version",
            FORMAT_VERSION,
        )?)
    }

    /// The record of `name`, or the refusal that says to add it first.
    ///
    /// # Errors
    ///
    /// `invalid_request` (field `host`) for a host never added.
    pub fn require(&self, name: &str) -> Result<HostRecord, Error> {
        let dest = Destination::new(name)?;
        match self.get(&dest)? {
            Some(record) => Ok(record),
            None => Err(Error::invalid("host", self.not_prepared(&dest))),
        }
    }

    /// Why `dest` is refused: the prepared hosts it may have meant, then all of them, and how to
    /// add it when it is a new one.
    pub fn not_prepared(&self, dest: &Destination) -> String {
        let prepared: Vec<String> = self
            .list()
            .unwrap_or_default()
            .into_iter()
            .map(|r| r.name)
            .collect();
        let wanted = dest.to_string();
        let close = herd_core::suggest::close_matches(&wanted, prepared.iter().map(String::as_str));
        let mut message = format!("{dest} is not a prepared host");
        if let Some(guess) = herd_core::suggest::did_you_mean(&close) {
            message.push_str(&format!(": {guess}"));
        }
        match prepared.as_slice() {
            [] => message.push_str(" (no host is prepared yet)"),
            hosts => message.push_str(&format!(" (prepared: {})", hosts.join(", "))),
        }
        message.push_str(&format!(
            "; a new host is added with `herd-launch host add {dest}`"
        ));
        message
    }

    /// Writes `record` (atomically, private).
    ///
    /// # Errors
    ///
    /// When the directory or the file cannot be written.
    pub fn put(&self, record: &HostRecord) -> Result<(), Error> {
        sidecar::ensure_private_dir(&self.dir)?;
        sidecar::write_json(&self.path(&record.destination()?), record)?;
        Ok(())
    }

    /// Removes the record of `dest`; whether there was one.
    ///
    /// # Errors
    ///
    /// When it exists and cannot be removed.
    pub fn remove(&self, dest: &Destination) -> Result<bool, Error> {
        match std::fs::remove_file(self.path(dest)) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(Error::new(
                ErrorCode::Unavailable,
                format!("cannot remove {}: {e}", self.path(dest).display()),
            )),
        }
    }

    /// Every record, by name.
    ///
    /// # Errors
    ///
    /// When the directory cannot be read.
    pub fn list(&self) -> Result<Vec<HostRecord>, Error> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(Error::new(
                    ErrorCode::Unavailable,
                    format!("cannot read {}: {e}", self.dir.display()),
                ));
            }
        };
        let mut records: Vec<HostRecord> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let dest = Destination::new(name.strip_suffix(RECORD_SUFFIX)?).ok()?;
                self.get(&dest).ok().flatten()
            })
            .collect();
        records.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(records)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> HostRecord {
        HostRecord {
            format_version: FORMAT_VERSION,
            name: "devbox".into(),
            added_at_ms: 1,
            os: "Linux".into(),
            arch: "x86_64".into(),
            home: "/home/me".into(),
            bin_dir: format!("/home/me/.herd/bin/{VERSION}"),
            herd_version: VERSION.into(),
            pi_version: None,
        }
    }

    #[test]
    fn records_round_trip_and_an_unknown_host_says_to_add_it() {
        let dir = tempfile::tempdir().unwrap();
        let hosts = Hosts::new(dir.path().join("hosts"));
        assert!(hosts.list().unwrap().is_empty());
        let err = hosts.require("devbox").unwrap_err();
        assert_eq!(
            err.message,
            "devbox is not a prepared host (no host is prepared yet); a new host is added with \
             `herd-launch host add devbox`"
        );
        hosts.put(&record()).unwrap();
        assert_eq!(hosts.require("devbox").unwrap(), record());
        assert_eq!(hosts.list().unwrap(), vec![record()]);
        assert!(hosts.remove(&Destination::new("devbox").unwrap()).unwrap());
        assert!(hosts.list().unwrap().is_empty());
    }

    #[test]
    fn the_artifacts_of_a_local_directory_are_one_private_directory_under_the_remote_home() {
        let r = record();
        let a = r.artifacts_for(Path::new("/home/u/project-a"));
        assert!(a.starts_with("/home/me/.herd/artifacts/"), "{a}");
        assert_eq!(a, r.artifacts_for(Path::new("/home/u/project-a")));
        assert_ne!(a, r.artifacts_for(Path::new("/home/u/project-b")));
    }

    #[test]
    fn the_guard_refuses_a_missing_or_other_herd_and_runs_the_argv_verbatim() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let art = dir.path().join("art/x");
        let run = |bin: &Path| {
            let argv = [
                "herd",
                bin.to_str().unwrap(),
                VERSION,
                art.to_str().unwrap(),
                "printf",
                "%s|",
                "$(x)",
                "a'b",
            ];
            let cmd = herd_core::subprocess::Command::new("sh", Duration::from_secs(10))
                .args(["-c", GUARD])
                .args(argv);
            herd_core::subprocess::run(&cmd).unwrap()
        };
        let out = run(&bin);
        assert_eq!(out.code, Some(GUARD_MISSING));
        assert!(
            guard_error("devbox", &out)
                .unwrap()
                .message
                .contains("host add devbox")
        );
        let fake = bin.join("herd-launch");
        std::fs::write(&fake, "#!/bin/sh\necho herd-launch 0.0.0-other\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o700)).unwrap();
        let out = run(&bin);
        assert_eq!(out.code, Some(GUARD_MISMATCH));
        assert!(!art.exists());
        std::fs::write(&fake, format!("#!/bin/sh\necho herd-launch {VERSION}\n")).unwrap();
        let out = run(&bin);
        assert!(out.success(), "{out:?}");
        assert_eq!(out.stdout.text(), "$(x)|a'b|");
        let mode = std::fs::metadata(&art).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }

    #[test]
    fn the_guard_trusts_the_install_stamp_only_while_no_program_is_newer() {
        use std::os::unix::fs::PermissionsExt;
        use std::time::SystemTime;
        assert!(GUARD.contains(&format!("\"$b/{VERSION_STAMP}\"")));
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        // A herd-launch that says another version, and a program that prints its argv.
        let launch = bin.join("herd-launch");
        std::fs::write(&launch, "#!/bin/sh\necho herd-launch 0.0.0-other\n").unwrap();
        let program = bin.join("herd-watch");
        std::fs::write(
            &program,
            "#!/bin/sh\nprintf '%s|' \"$HERD_BIN_DIR\" \"$@\"\n",
        )
        .unwrap();
        for path in [&launch, &program] {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700)).unwrap();
        }
        let stamp = bin.join(VERSION_STAMP);
        std::fs::write(&stamp, format!("herd-launch {VERSION}\n")).unwrap();
        let set_age = |path: &Path, secs_ago: u64| {
            let at = SystemTime::now() - Duration::from_secs(secs_ago);
            std::fs::File::options()
                .write(true)
                .open(path)
                .unwrap()
                .set_modified(at)
                .unwrap();
        };
        set_age(&launch, 20);
        set_age(&program, 20);
        set_age(&stamp, 10);
        let run = || {
            let cmd = herd_core::subprocess::Command::new("sh", Duration::from_secs(10))
                .args(["-c", GUARD, "herd"])
                .arg(&bin)
                .args([VERSION, ""])
                .arg(&program)
                .arg("$(x)");
            herd_core::subprocess::run(&cmd).unwrap()
        };
        // The stamp is newer than every program: herd-launch is not asked.
        let out = run();
        assert!(out.success(), "{out:?}");
        assert_eq!(out.stdout.text(), format!("{}|$(x)|", bin.display()));
        // A program changed after the install: herd-launch is asked again, and refuses.
        set_age(&program, 0);
        assert_eq!(run().code, Some(GUARD_MISMATCH));
        set_age(&program, 20);
        set_age(&launch, 0);
        assert_eq!(run().code, Some(GUARD_MISMATCH));
        // Without the stamp, herd-launch is asked.
        set_age(&launch, 20);
        std::fs::remove_file(&stamp).unwrap();
        assert_eq!(run().code, Some(GUARD_MISMATCH));
    }
}
