//! What `/proc` says of a process and of the host: its stat line, the boot and PID namespace
//! of the calling process, and bounded reads that tell a missing file from an unreadable one.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::{Error, PROC_READ_LIMIT, SELF_PID_NS_PATH, SELF_STAT_PATH, boot_id};

/// The boot and PID namespace of the calling process, read from a `/proc` it has verified.
#[derive(Clone)]
pub(super) struct Host {
    pub(super) boot_id: String,
    pub(super) pid_namespace: String,
}

/// The host as this process first read it: neither its boot nor its own PID namespace changes
/// while it runs, so a supervisor judging many identities a second reads them once. (A forked
/// child of herd runs only async-signal-safe code before its exec, never this.)
static HOST: std::sync::Mutex<Option<Host>> = std::sync::Mutex::new(None);

impl Host {
    pub(super) fn read() -> Result<Host, Error> {
        let mut cached = HOST
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(host) = cached.as_ref() {
            return Ok(host.clone());
        }
        let host = Host::read_proc()?;
        *cached = Some(host.clone());
        Ok(host)
    }

    pub(super) fn read_proc() -> Result<Host, Error> {
        // A `/proc` mounted from another PID namespace would show other processes under the
        // same numbers; it is trusted only when it shows this process under its own PID.
        let self_stat = Path::new(SELF_STAT_PATH);
        let bytes = read_proc(self_stat)
            .map_err(|source| Error::Proc {
                path: self_stat.to_path_buf(),
                source,
            })?
            .ok_or_else(|| Error::UntrustedProc {
                reason: format!("{SELF_STAT_PATH} does not exist"),
            })?;
        let own = std::process::id();
        let shown = parse_stat(&bytes)
            .map_err(|reason| Error::ProcFormat {
                path: self_stat.to_path_buf(),
                reason,
            })?
            .pid;
        if shown != own {
            return Err(Error::UntrustedProc {
                reason: format!("{SELF_STAT_PATH} names pid {shown} but this process is {own}"),
            });
        }
        let boot_id = boot_id()?;
        let ns_path = Path::new(SELF_PID_NS_PATH);
        let link = std::fs::read_link(ns_path).map_err(|source| Error::Proc {
            path: ns_path.to_path_buf(),
            source,
        })?;
        let pid_namespace = link
            .into_os_string()
            .into_string()
            .ok()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| Error::ProcFormat {
                path: ns_path.to_path_buf(),
                reason: "is empty or not text".into(),
            })?;
        Ok(Host {
            boot_id,
            pid_namespace,
        })
    }
}

/// The fields of `/proc/<pid>/stat` that identity needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Stat {
    pub(super) pid: u32,
    /// The command name (field 2, without its parentheses), as text.
    pub(super) comm: String,
    pub(super) state: u8,
    pub(super) ppid: i64,
    /// The session id (field 6).
    pub(super) session: i64,
    pub(super) start_time: u64,
}

/// Parses a `stat` line: `pid (comm) state ppid … starttime …`.
///
/// `comm` may contain spaces and parentheses, so the fields are split after the last `)`: there
/// the state is index 0, the parent PID index 1 and the start time (field 22) index 19.
pub(super) fn parse_stat(bytes: &[u8]) -> Result<Stat, String> {
    let open = bytes
        .iter()
        .position(|&b| b == b'(')
        .ok_or("has no `(` before the command name")?;
    let close = bytes
        .iter()
        .rposition(|&b| b == b')')
        .ok_or("has no `)` after the command name")?;
    if close < open {
        return Err("has `)` before `(`".into());
    }
    let pid = std::str::from_utf8(&bytes[..open])
        .ok()
        .and_then(|s| parse_digits(s.trim()))
        .and_then(|pid| u32::try_from(pid).ok())
        .ok_or("does not start with a pid")?;
    let rest = std::str::from_utf8(&bytes[close + 1..])
        .map_err(|_| "has non-text fields after the command name")?;
    let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
    let state = match fields.first().map(|s| s.as_bytes()) {
        Some([state]) => *state,
        _ => return Err("has no one-letter state".into()),
    };
    let ppid = fields
        .get(1)
        .and_then(|s| s.parse::<i64>().ok())
        .ok_or("has no parent pid")?;
    let session = fields
        .get(3)
        .and_then(|s| s.parse::<i64>().ok())
        .ok_or("has no session id")?;
    let start_time = fields
        .get(19)
        .and_then(|s| parse_digits(s))
        .ok_or("has no start time (field 22)")?;
    Ok(Stat {
        pid,
        comm: String::from_utf8_lossy(&bytes[open + 1..close]).into_owned(),
        state,
        ppid,
        session,
        start_time,
    })
}

/// Parses a non-empty string of ASCII digits (no sign, no spaces).
pub(super) fn parse_digits(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// A PID the kernel can hand out: positive and within `pid_t`.
pub(super) fn valid_pid(pid: u32) -> bool {
    pid > 0 && i32::try_from(pid).is_ok()
}

/// The most processes one scan of `/proc` looks at, a bound on a `/proc` of any size.
const SCAN_LIMIT: usize = 1 << 20;

/// The processes of `/proc` whose `stat` reads and parses and that `keep` keeps, each as its
/// `stat` said at the scan.
pub(super) fn scan(mut keep: impl FnMut(&Stat) -> bool) -> Result<Vec<Stat>, String> {
    let entries = std::fs::read_dir("/proc").map_err(|e| format!("cannot list /proc: {e}"))?;
    let mut found = Vec::new();
    for entry in entries.take(SCAN_LIMIT) {
        let Ok(entry) = entry else { continue };
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(Some(bytes)) = read_proc(&stat_path(pid)) else {
            continue;
        };
        let Ok(stat) = parse_stat(&bytes) else {
            continue;
        };
        if stat.pid == pid && keep(&stat) {
            found.push(stat);
        }
    }
    Ok(found)
}

pub(super) fn stat_path(pid: u32) -> PathBuf {
    PathBuf::from(format!("/proc/{pid}/stat"))
}

/// Reads a small `/proc` file; `Ok(None)` when the process or file does not exist.
pub(super) fn read_proc(path: &Path) -> io::Result<Option<Vec<u8>>> {
    let gone = |err: &io::Error| {
        err.kind() == io::ErrorKind::NotFound || err.raw_os_error() == Some(libc::ESRCH)
    };
    let file = match File::open(path) {
        Ok(file) => file,
        Err(err) if gone(&err) => return Ok(None),
        Err(err) => return Err(err),
    };
    // Room for a whole `stat` line, so it comes in one read (plus the one that sees its end)
    // rather than in the growing reads of an empty buffer: a supervisor reads one a second per
    // child.
    let mut buf = Vec::with_capacity(1024);
    match file.take(PROC_READ_LIMIT).read_to_end(&mut buf) {
        // A process reaped between open and read leaves an empty file behind.
        Ok(0) => Ok(None),
        Ok(_) => Ok(Some(buf)),
        Err(err) if gone(&err) => Ok(None),
        Err(err) => Err(err),
    }
}
