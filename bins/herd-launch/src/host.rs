//! `herd-launch host add/list/remove`: the machines children can run on.
//!
//! `add` asks the remote what it is (one call: `uname -s`, `uname -m`, `$HOME`, `pi --version`),
//! and when its OS and architecture are this machine's, copies herd's six binaries over the
//! master connection into `~/.herd/bin/<version>/` there (staged in a private directory and
//! moved into place last, so a failed copy leaves nothing), checks that they run, and only then
//! records the host in `<config>/herd/hosts/<name>.json`. The child extension travels inside
//! `herd-launch`. A remote of another OS or architecture is refused (exit 4) with the command
//! that builds herd there; nothing is written on either side.

use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_core::{Error, ErrorCode};
use herd_remote::host::{AddStatus, HostAdded, HostListing, HostRemoved, RemoveStatus};
use herd_remote::host::{FORMAT_VERSION, PROGRAMS, VERSION};
use herd_remote::{Destination, HostRecord, Hosts, Ssh};

/// The budget of the probe and of each small call.
const PROBE_BUDGET: Duration = Duration::from_secs(30);
/// The budget of copying one binary.
const COPY_BUDGET: Duration = Duration::from_secs(300);

/// What the probe prints, one value a line: OS, architecture, home, Pi's version (or nothing).
const PROBE: &str =
    r#"uname -s; uname -m; printf '%s\n' "$HOME"; (pi --version 2>/dev/null || true) | head -n 1"#;

/// Stages one file: `sh -c COPY herd <staging dir> <name>`, the file's bytes on stdin.
const COPY: &str = r#"umask 077
mkdir -p -m 700 -- "$1" || exit 96
cat > "$1/$2" || exit 96
chmod 700 "$1/$2""#;

/// Records the checked version in the staged directory ([`herd_remote::host::VERSION_STAMP`],
/// written after every program, so none is newer) and moves the directory into place:
/// `sh -c INSTALL herd <staging> <final> <stamp> <version line>`.
const INSTALL: &str = r#"umask 077
printf '%s\n' "$4" > "$1/$3" || exit 96
if [ -e "$2" ]; then mv -- "$2" "$1.old" || exit 96; fi
mv -- "$1" "$2" || exit 96
rm -rf -- "$1.old""#;

/// Removes a staged directory: `sh -c DISCARD herd <staging>`.
const DISCARD: &str = r#"rm -rf -- "$1""#;

/// What the remote is.
#[derive(Debug, Clone)]
struct Probe {
    os: String,
    arch: String,
    home: String,
    pi_version: Option<String>,
}

fn probe(ssh: &Ssh) -> Result<Probe, Error> {
    let out = ssh.run(&["sh", "-c", PROBE], None, PROBE_BUDGET)?;
    let text = out.stdout.text().into_owned();
    let mut lines = text.lines().map(str::trim);
    let mut next = || lines.next().filter(|l| !l.is_empty()).map(str::to_owned);
    let (Some(os), Some(arch), Some(home)) = (next(), next(), next()) else {
        return Err(Error::new(
            ErrorCode::Unavailable,
            format!(
                "{} did not say what it is (uname -s, uname -m, $HOME): {}",
                ssh.destination(),
                herd_core::escape::encode_host_value(text.trim(), 300)
            ),
        ));
    };
    if !home.starts_with('/') {
        return Err(Error::new(
            ErrorCode::Unavailable,
            format!("the home of {} is not an absolute path", ssh.destination()),
        ));
    }
    Ok(Probe {
        os,
        arch,
        home,
        pi_version: next(),
    })
}

/// This machine's `uname -s` and `uname -m`, as Rust names them.
fn local_platform() -> (&'static str, &'static str) {
    (std::env::consts::OS, std::env::consts::ARCH)
}

fn same_platform(probe: &Probe) -> bool {
    let (os, arch) = local_platform();
    let arch_matches = probe.arch == arch
        || (arch == "aarch64" && probe.arch == "arm64")
        || (arch == "x86_64" && probe.arch == "amd64");
    probe.os.eq_ignore_ascii_case(os) && arch_matches
}

/// The command that builds and installs this herd on a remote of another platform.
fn build_command(dest: &Destination, bin_dir: &str) -> String {
    format!(
        "ssh {dest}, then in a checkout of herd {VERSION}: cargo build --release --bins && \
         mkdir -p {bin_dir} && cp target/release/herd-{{launch,watch,accept,worktree,cleanup,docs}} \
         {bin_dir}/ ; then run `herd-launch host add {dest}` again"
    )
}

/// The directory this herd's binaries are in.
fn local_bin_dir(env: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, Error> {
    let launch = crate::herd_launch_path(env)?;
    let dir = launch
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| Error::internal("herd-launch has no directory"))?;
    for program in PROGRAMS {
        if !dir.join(program).is_file() {
            return Err(Error::new(
                ErrorCode::Unavailable,
                format!(
                    "{program} is not beside herd-launch in {}: install all six programs \
                     (`cargo xtask install`) before adding a host",
                    dir.display()
                ),
            ));
        }
    }
    Ok(dir)
}

/// `host add NAME`.
pub fn add(name: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<(HostAdded, String), Error> {
    let dest = Destination::new(name)?;
    let hosts = Hosts::from_env(env)?;
    let ssh = Ssh::new(dest.clone(), env)?;
    let found = probe(&ssh)?;
    let bin_dir = format!("{}/.herd/bin/{VERSION}", found.home);
    if !same_platform(&found) {
        let (os, arch) = local_platform();
        return Err(Error::new(
            ErrorCode::Unavailable,
            format!(
                "{dest} is {} {}, this herd is built for {os} {arch}, so its binaries cannot be \
                 copied; build herd there: {}",
                herd_core::escape::encode_host_value(&found.os, 40),
                herd_core::escape::encode_host_value(&found.arch, 40),
                build_command(&dest, &bin_dir)
            ),
        )
        .with_field("host"));
    }
    let local = local_bin_dir(env)?;
    let staging = format!(
        "{}/.herd/bin/.{VERSION}.{}",
        found.home,
        crate::names::random_hex(8)?
    );
    let copied = copy_programs(&ssh, &local, &staging, &bin_dir);
    if let Err(err) = copied {
        let _ = ssh.run(&["sh", "-c", DISCARD, "herd", &staging], None, PROBE_BUDGET);
        return Err(err);
    }
    let record = HostRecord {
        format_version: FORMAT_VERSION,
        name: dest.to_string(),
        added_at_ms: herd_core::time::now_ms(),
        os: found.os.clone(),
        arch: found.arch.clone(),
        home: found.home.clone(),
        bin_dir: bin_dir.clone(),
        herd_version: VERSION.into(),
        pi_version: found.pi_version.clone(),
    };
    hosts.put(&record)?;
    let pi = match &found.pi_version {
        Some(v) => format!("Pi {v}"),
        None => "no Pi on its PATH (exec children only until Pi is installed there)".into(),
    };
    let human = format!(
        "added {dest}: {} {}, herd {VERSION} in {bin_dir}, {pi}",
        found.os, found.arch
    );
    Ok((
        HostAdded {
            status: AddStatus::Added,
            host: record,
            copied: PROGRAMS.map(str::to_owned).to_vec(),
        },
        human,
    ))
}

/// Stages the six programs, checks the staged `herd-launch` runs and is this version, and moves
/// the directory into place.
fn copy_programs(ssh: &Ssh, local: &Path, staging: &str, bin_dir: &str) -> Result<(), Error> {
    let dest = ssh.destination().clone();
    let failed = |what: &str, out: &herd_core::subprocess::Output| {
        Error::new(
            ErrorCode::Unavailable,
            format!(
                "cannot {what} on {dest} ({}; exit {:?}): is its disk full? check with \
                 `ssh {dest} df -h ~`",
                herd_core::escape::encode_host_value(out.stderr.text().trim(), 300),
                out.code
            ),
        )
    };
    for program in PROGRAMS {
        let path = local.join(program);
        let bytes = std::fs::read(&path).map_err(|e| {
            Error::new(
                ErrorCode::Unavailable,
                format!("cannot read {}: {e}", path.display()),
            )
        })?;
        let out = ssh.run(
            &["sh", "-c", COPY, "herd", staging, program],
            Some(&bytes),
            COPY_BUDGET,
        )?;
        if !out.success() {
            return Err(failed(&format!("copy {program}"), &out));
        }
    }
    let launch = format!("{staging}/herd-launch");
    let out = ssh.run(&[launch.as_str(), "--version"], None, PROBE_BUDGET)?;
    let version = out.stdout.text().trim().to_owned();
    if !out.success() || version != format!("herd-launch {VERSION}") {
        return Err(failed("run the copied herd-launch", &out));
    }
    let out = ssh.run(
        &[
            "sh",
            "-c",
            INSTALL,
            "herd",
            staging,
            bin_dir,
            herd_remote::host::VERSION_STAMP,
            &version,
        ],
        None,
        PROBE_BUDGET,
    )?;
    if !out.success() {
        return Err(failed("move herd into place", &out));
    }
    Ok(())
}

/// `host list`.
pub fn list(env: &dyn Fn(&str) -> Option<String>) -> Result<(HostListing, String), Error> {
    let hosts = Hosts::from_env(env)?.list()?;
    let human = if hosts.is_empty() {
        "no hosts: add one with `herd-launch host add <ssh destination>`".to_owned()
    } else {
        hosts
            .iter()
            .map(|h| {
                format!(
                    "{}  {} {}  herd {}  {}",
                    h.name,
                    h.os,
                    h.arch,
                    h.herd_version,
                    h.pi_version
                        .as_deref()
                        .map_or_else(|| "no Pi".to_owned(), |v| format!("Pi {v}"))
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    Ok((HostListing { hosts }, human))
}

/// `host remove NAME`: forgets the host and closes its master connection. Refused (exit 7)
/// while an open run of any of `dirs` (every artifacts directory of the user's index) runs there.
pub fn remove(
    name: &str,
    dirs: &[herd_protocol::layout::Artifacts],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(HostRemoved, String), Error> {
    let dest = Destination::new(name)?;
    let hosts = Hosts::from_env(env)?;
    if hosts.get(&dest)?.is_none() {
        return Err(Error::not_found(hosts.not_prepared(&dest)).with_field("host"));
    }
    let mut open = Vec::new();
    for artifacts in dirs {
        for id in herd_protocol::open_runs::list(artifacts).unwrap_or_default() {
            let there = herd_protocol::run::RunRecord::load(artifacts, &id).is_ok_and(|r| {
                r.extra
                    .remote
                    .as_ref()
                    .is_some_and(|m| m.host == dest.as_str())
            });
            if there {
                open.push(format!("{id} in {}", artifacts.root().display()));
            }
        }
    }
    if !open.is_empty() {
        return Err(Error::new(
            ErrorCode::Conflict,
            format!(
                "runs are open on {dest} ({}): wait for them or cancel them \
                 (`herd-watch --artifacts <dir> cancel --run <id>`) before removing the host",
                open.join(", ")
            ),
        )
        .with_field("host"));
    }
    hosts.remove(&dest)?;
    if let Ok(ssh) = Ssh::new(dest.clone(), env) {
        ssh.close_master();
    }
    Ok((
        HostRemoved {
            status: RemoveStatus::Removed,
            host: dest.to_string(),
        },
        format!(
            "removed {dest} (its herd stays in ~/.herd on {dest}; `ssh {dest} rm -rf ~/.herd/bin` \
             removes the binaries)"
        ),
    ))
}
