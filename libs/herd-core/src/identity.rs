//! Process identity: who a PID is, whether it is still that process, and signals that cannot
//! hit a reused PID (ARCHITECTURE.md, "Invariants", 1).
//!
//! A PID alone names whatever process holds that number right now. A [`Record`] pins it to one
//! process: the kernel start time (field 22 of `/proc/<pid>/stat`), the boot ID and the PID
//! namespace the number belongs to. The record is the `<session>.process.json` file of
//! pi-herdr-agents (`{version:1, id, sessionFile, pid, startTime, bootId, pidNamespace}`), so a
//! child that writes its own record stays compatible.
//!
//! - [`capture`] records the identity of a live PID.
//! - [`judge`] says whether the recorded process is alive, has exited, or cannot be known.
//! - [`is_descendant_of`] verifies the identity is a given shell or one of its descendants.
//! - [`terminate`] opens a pidfd, judges again, and only then signals through the pidfd.
//! - [`signal_through`] signals past a recorded process that does not pass signals on (a
//!   sandbox): the processes it runs, each verified as its child.
//! - [`wait_exited`] waits, up to a deadline, for the recorded process to exit.
//! - [`ExitWatch`] holds a pidfd proven to name the recorded process, for a poll loop to wait on
//!   with its other descriptors.
//!
//! Anything doubtful — another boot, another namespace, a start time that differs, a `/proc`
//! that cannot be read or trusted — is [`Judgement::Unknown`], never "fine": a caller that gets
//! an unknown answer does not signal.

use std::fmt;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::{ErrorCode, sidecar};

mod children;
pub(crate) mod pidfd;
mod proc;
mod session;

pub use children::signal_through;
use pidfd::Pidfd;
use proc::{Host, Stat, parse_digits, parse_stat, read_proc, stat_path, valid_pid};
pub use session::{session_count, session_pids, signal_session, terminate_session, wait_empty};

/// The version of the record format; any other version is refused.
pub const RECORD_VERSION: u64 = 1;

/// The bound of a record read; a genuine record is a few hundred bytes.
pub const RECORD_READ_LIMIT: u64 = 64 * 1024;

/// The default bound of the parent walk of [`is_descendant_of`].
pub const DEFAULT_MAX_HOPS: u32 = 64;

/// The bound of a `/proc` file read; `stat` lines are well below it.
const PROC_READ_LIMIT: u64 = 4096;

/// The step of [`wait_exited`] when no pidfd can be polled.
const POLL_STEP: Duration = Duration::from_millis(25);

const BOOT_ID_PATH: &str = "/proc/sys/kernel/random/boot_id";
const SELF_STAT_PATH: &str = "/proc/self/stat";
const SELF_PID_NS_PATH: &str = "/proc/self/ns/pid";

/// A process identity as stored in `<session>.process.json`.
///
/// Values built in code are not validated; [`Record::from_slice`] and [`Record::read`] validate
/// everything they return, and [`judge`] answers unknown for a record it cannot make sense of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The run id (`id` in the file).
    pub id: String,
    /// The child's session file (`sessionFile`).
    pub session_file: PathBuf,
    /// The PID, as seen in `pid_namespace`.
    pub pid: u32,
    /// Field 22 of `/proc/<pid>/stat`: clock ticks after boot (`startTime`, a decimal string).
    pub start_time: u64,
    /// `/proc/sys/kernel/random/boot_id`, trimmed (`bootId`).
    pub boot_id: String,
    /// The link text of `/proc/self/ns/pid` of the process that captured the record, e.g.
    /// `pid:[4026531836]` (`pidNamespace`).
    pub pid_namespace: String,
}

/// A [`Record`] as the file holds it, with the keys and types of pi-herdr-agents: what
/// [`Record::to_json`] writes, and what [`Record::from_slice`] accepts (it checks each field in
/// turn, to say which one is wrong).
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(
    title = "ProcessIdentity",
    description = "A process identity (pi-herdr-agents format): `<session>.process.json`, written once by the runner (`herd-launch exec`) or a child, and `runs/<run-id>.leader.json`, the launch script's shell on the process surface. The first record wins and is never replaced. A record that breaks these rules is refused: herd never signals a process it cannot identify."
)]
pub struct RecordFile<'a> {
    #[schemars(schema_with = "record_version")]
    pub version: u64,
    #[schemars(length(min = 1))]
    pub id: &'a str,
    #[schemars(length(min = 1))]
    pub session_file: &'a str,
    /// The PID, as seen in `pidNamespace`.
    #[schemars(range(min = 1, max = 2147483647))]
    pub pid: u32,
    /// Field 22 of `/proc/<pid>/stat`: clock ticks after boot, as a decimal string.
    #[schemars(pattern("^[0-9]+$"))]
    pub start_time: String,
    #[schemars(length(min = 1))]
    pub boot_id: &'a str,
    /// The link text of /proc/self/ns/pid of the capturing process, e.g. `pid:[4026531836]`.
    #[schemars(length(min = 1))]
    pub pid_namespace: &'a str,
}

fn record_version(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"const": RECORD_VERSION})
}

impl Record {
    /// Parses and validates a record; `origin` names the file in errors.
    ///
    /// Fails closed: a version other than 1, a missing or mistyped field, a PID that is not a
    /// positive integer, a start time that is not all digits or an empty id is an error naming
    /// the field. Unknown fields are tolerated.
    pub fn from_slice(bytes: &[u8], origin: &Path) -> Result<Record, Error> {
        let value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|source| Error::Malformed {
                path: origin.to_path_buf(),
                source,
            })?;
        let Some(object) = value.as_object() else {
            return Err(Error::NotAnObject {
                path: origin.to_path_buf(),
            });
        };
        let field = |name: &'static str| {
            object
                .get(name)
                .ok_or_else(|| Error::invalid(origin, name, "is missing"))
        };
        let version = field("version")?
            .as_u64()
            .ok_or_else(|| Error::invalid(origin, "version", "is not a non-negative integer"))?;
        if version != RECORD_VERSION {
            return Err(Error::UnsupportedVersion {
                path: origin.to_path_buf(),
                found: version,
            });
        }
        let text = |name: &'static str| -> Result<String, Error> {
            match field(name)?.as_str() {
                Some("") => Err(Error::invalid(origin, name, "is empty")),
                Some(s) => Ok(s.to_owned()),
                None => Err(Error::invalid(origin, name, "is not a string")),
            }
        };
        let pid = field("pid")?
            .as_u64()
            .filter(|&pid| pid > 0)
            .and_then(|pid| u32::try_from(pid).ok())
            .filter(|&pid| valid_pid(pid))
            .ok_or_else(|| Error::invalid(origin, "pid", "is not a positive integer process id"))?;
        let start_time = text("startTime")?;
        let start_time = parse_digits(&start_time).ok_or_else(|| {
            Error::invalid(
                origin,
                "startTime",
                "is not a decimal string of clock ticks",
            )
        })?;
        Ok(Record {
            id: text("id")?,
            session_file: PathBuf::from(text("sessionFile")?),
            pid,
            start_time,
            boot_id: text("bootId")?,
            pid_namespace: text("pidNamespace")?,
        })
    }

    /// Reads and validates the record at `path`; `Ok(None)` when it does not exist yet.
    pub fn read(path: &Path) -> Result<Option<Record>, Error> {
        let Some(bytes) = sidecar::read_bounded(path, RECORD_READ_LIMIT)? else {
            return Ok(None);
        };
        Record::from_slice(&bytes, path).map(Some)
    }

    /// Returns the record as the JSON document of the file, with a trailing newline.
    pub fn to_json(&self) -> Result<Vec<u8>, Error> {
        let session_file = self
            .session_file
            .to_str()
            .ok_or_else(|| Error::argument("sessionFile", "is not valid UTF-8"))?;
        let wire = RecordFile {
            version: RECORD_VERSION,
            id: &self.id,
            session_file,
            pid: self.pid,
            start_time: self.start_time.to_string(),
            boot_id: &self.boot_id,
            pid_namespace: &self.pid_namespace,
        };
        let mut bytes =
            serde_json::to_vec(&wire).map_err(|e| Error::argument("record", e.to_string()))?;
        bytes.push(b'\n');
        Ok(bytes)
    }

    /// Writes the record to `path` unless a record is already there.
    ///
    /// Returns `true` when this call wrote it and `false` when an earlier record was kept: the
    /// first record wins and is never replaced (exclusive create of a temporary file, then a hard
    /// link to the final name).
    ///
    /// Unsynced ([`sidecar::Durability::Unsynced`]): an identity only matters while the process
    /// it names can run, and no power loss leaves one running; a record a power loss took is of a
    /// run that settles as lost without it. It is written on the way to every child's start,
    /// where two fsyncs cost milliseconds on a busy disk.
    pub fn write_once(&self, path: &Path) -> Result<bool, Error> {
        Ok(sidecar::AtomicWrite::new(sidecar::Durability::Unsynced)
            .create_once(path, &self.to_json()?)?)
    }
}

/// What [`judge`] concluded about a recorded process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    /// The recorded process is running (or stopped) under its PID.
    Alive,
    /// The recorded process is gone: no `/proc` entry, or a zombie or dead task.
    Exited,
    /// Cannot tell, with the reason: another boot or PID namespace, a reused PID, an unreadable
    /// or untrusted `/proc`.
    Unknown(String),
}

impl fmt::Display for Judgement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Judgement::Alive => f.write_str("alive"),
            Judgement::Exited => f.write_str("exited"),
            Judgement::Unknown(reason) => write!(f, "unknown: {reason}"),
        }
    }
}

/// What [`terminate`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Termination {
    /// The signal was delivered to the recorded process through a pidfd.
    Signalled,
    /// The recorded process had already exited; nothing was signalled.
    Exited,
    /// Nothing was signalled because the identity could not be confirmed, with the reason.
    Unknown(String),
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Termination::Signalled => f.write_str("signalled"),
            Termination::Exited => f.write_str("exited"),
            Termination::Unknown(reason) => write!(f, "unknown: {reason}"),
        }
    }
}

/// What [`is_descendant_of`] concluded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ancestry {
    /// The identity is the ancestor (`hops == 0`) or `hops` parent steps below it.
    Verified { hops: u32 },
    /// Not verified, with the reason: not a descendant, not alive, or not readable.
    NotVerified(String),
}

impl fmt::Display for Ancestry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ancestry::Verified { hops } => write!(f, "verified ({hops} hops)"),
            Ancestry::NotVerified(reason) => write!(f, "not verified: {reason}"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path} is not valid JSON")]
    Malformed {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path} is not a JSON object")]
    NotAnObject { path: PathBuf },
    #[error("{path}: field `{field}` {reason}")]
    Invalid {
        path: PathBuf,
        field: &'static str,
        reason: String,
    },
    #[error("{path} has version {found}; only version 1 is understood")]
    UnsupportedVersion { path: PathBuf, found: u64 },
    #[error("{field} {reason}")]
    Argument { field: &'static str, reason: String },
    #[error(transparent)]
    Sidecar(#[from] sidecar::Error),
    #[error("cannot read {path}")]
    Proc {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{path} is not in the expected format: {reason}")]
    ProcFormat { path: PathBuf, reason: String },
    #[error("/proc cannot be trusted: {reason}")]
    UntrustedProc { reason: String },
    #[error("process {pid} does not exist")]
    NoSuchProcess { pid: u32 },
}

impl Error {
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Malformed { .. }
            | Error::NotAnObject { .. }
            | Error::Invalid { .. }
            | Error::Argument { .. } => ErrorCode::InvalidRequest,
            Error::UnsupportedVersion { .. } => ErrorCode::Conflict,
            Error::Sidecar(err) => err.code(),
            Error::Proc { .. } | Error::ProcFormat { .. } | Error::UntrustedProc { .. } => {
                ErrorCode::Unavailable
            }
            Error::NoSuchProcess { .. } => ErrorCode::NotFound,
        }
    }

    /// The field the error is about, when there is one.
    pub fn field(&self) -> Option<&str> {
        match self {
            Error::Invalid { field, .. } | Error::Argument { field, .. } => Some(field),
            Error::UnsupportedVersion { .. } => Some("version"),
            Error::Sidecar(err) => err.field(),
            _ => None,
        }
    }

    fn invalid(path: &Path, field: &'static str, reason: impl Into<String>) -> Error {
        Error::Invalid {
            path: path.to_path_buf(),
            field,
            reason: reason.into(),
        }
    }

    fn argument(field: &'static str, reason: impl Into<String>) -> Error {
        Error::Argument {
            field,
            reason: reason.into(),
        }
    }
}

impl crate::error::Report for Error {
    fn code(&self) -> ErrorCode {
        Error::code(self)
    }

    fn field(&self) -> Option<&str> {
        Error::field(self)
    }
}

/// Captures the identity of the live process `pid` for the run `run_id`.
///
/// The record names the PID namespace of the calling process, because that is where the number
/// `pid` means this process. Fails when `/proc` cannot be trusted (it must show this process
/// under its own PID), when `pid` does not exist, or when `/proc` cannot be read. A zombie is
/// captured as it is; [`judge`] then says it has exited.
pub fn capture(pid: u32, run_id: &str, session_file: &Path) -> Result<Record, Error> {
    if !valid_pid(pid) {
        return Err(Error::argument(
            "pid",
            format!("{pid} is not a positive process id"),
        ));
    }
    if run_id.is_empty() {
        return Err(Error::argument("id", "is empty"));
    }
    match session_file.to_str() {
        None => return Err(Error::argument("sessionFile", "is not valid UTF-8")),
        Some("") => return Err(Error::argument("sessionFile", "is empty")),
        Some(_) => {}
    }
    let host = Host::read()?;
    let path = stat_path(pid);
    let bytes = read_proc(&path).map_err(|source| Error::Proc {
        path: path.clone(),
        source,
    })?;
    let Some(bytes) = bytes else {
        return Err(Error::NoSuchProcess { pid });
    };
    let stat = parse_stat(&bytes).map_err(|reason| Error::ProcFormat {
        path: path.clone(),
        reason,
    })?;
    if stat.pid != pid {
        return Err(Error::ProcFormat {
            path,
            reason: format!("it names pid {}", stat.pid),
        });
    }
    Ok(Record {
        id: run_id.to_owned(),
        session_file: session_file.to_path_buf(),
        pid,
        start_time: stat.start_time,
        boot_id: host.boot_id,
        pid_namespace: host.pid_namespace,
    })
}

/// Judges whether the recorded process is alive, has exited, or cannot be known.
///
/// Another boot or PID namespace, an untrusted or unreadable `/proc` and a start time that
/// differs (the PID now names another process) are unknown; no `/proc/<pid>` entry and a zombie
/// or dead task are exited.
pub fn judge(record: &Record) -> Judgement {
    if let Err(reason) = check_context(record) {
        return Judgement::Unknown(reason);
    }
    match read_current_stat(record) {
        Ok(None) => Judgement::Exited,
        Ok(Some(stat)) => judge_stat(record, &stat),
        Err(reason) => Judgement::Unknown(reason),
    }
}

/// Whether the recorded process is proven gone, with the reason: no `/proc` entry or a zombie,
/// a record of another boot (nothing of an earlier boot runs now), or, in this boot and PID
/// namespace, its PID naming a process with another start time. `None` while it may still run,
/// including a record of another PID namespace, which this process cannot see into.
pub fn proven_gone(record: &Record) -> Option<String> {
    match judge(record) {
        Judgement::Alive => None,
        Judgement::Exited => Some(format!("process {} has exited", record.pid)),
        Judgement::Unknown(reason) => {
            let host = Host::read().ok()?;
            if host.boot_id != record.boot_id {
                return Some(reason);
            }
            if host.pid_namespace != record.pid_namespace {
                return None;
            }
            match read_current_stat(record) {
                Ok(Some(stat)) if stat.start_time != record.start_time => Some(reason),
                _ => None,
            }
        }
    }
}

/// Verifies that the recorded process is `ancestor_pid` or a descendant of it.
///
/// The identity must be alive with its recorded start time; then its parents are walked, at most
/// `max_hops` steps ([`DEFAULT_MAX_HOPS`] is the usual bound). Every step checks that the parent
/// started no later than its child, so a parent PID reused during the walk is not followed into
/// another tree. Anything unreadable is not verified, with the reason.
pub fn is_descendant_of(record: &Record, ancestor_pid: u32, max_hops: u32) -> Ancestry {
    if !valid_pid(ancestor_pid) {
        return Ancestry::NotVerified(format!("{ancestor_pid} is not a valid ancestor pid"));
    }
    if let Err(reason) = check_context(record) {
        return Ancestry::NotVerified(reason);
    }
    let mut stat = match read_current_stat(record) {
        Ok(Some(stat)) => stat,
        Ok(None) => return Ancestry::NotVerified(format!("process {} has exited", record.pid)),
        Err(reason) => return Ancestry::NotVerified(reason),
    };
    match judge_stat(record, &stat) {
        Judgement::Alive => {}
        other => {
            return Ancestry::NotVerified(format!("process {} is not alive: {other}", record.pid));
        }
    }
    let mut hops = 0;
    loop {
        if stat.pid == ancestor_pid {
            return Ancestry::Verified { hops };
        }
        if hops >= max_hops {
            return Ancestry::NotVerified(format!(
                "process {} is not within {max_hops} parent steps of process {ancestor_pid}",
                record.pid
            ));
        }
        let Some(parent) = u32::try_from(stat.ppid).ok().filter(|&p| valid_pid(p)) else {
            return Ancestry::NotVerified(format!(
                "process {} is not a descendant of process {ancestor_pid} (the walk reached process {})",
                record.pid, stat.pid
            ));
        };
        let path = stat_path(parent);
        let parent_stat = match read_proc(&path) {
            Ok(Some(bytes)) => match parse_stat(&bytes) {
                Ok(parent_stat) => parent_stat,
                Err(reason) => {
                    return Ancestry::NotVerified(format!("{}: {reason}", path.display()));
                }
            },
            Ok(None) => {
                return Ancestry::NotVerified(format!(
                    "parent process {parent} exited during the walk"
                ));
            }
            Err(err) => {
                return Ancestry::NotVerified(format!("cannot read {}: {err}", path.display()));
            }
        };
        // A parent always starts before its child; a later start means the PID was reused.
        if parent_stat.start_time > stat.start_time {
            return Ancestry::NotVerified(format!(
                "parent pid {parent} of process {} was reused",
                stat.pid
            ));
        }
        stat = parent_stat;
        hops += 1;
    }
}

/// Sends `signal` to the recorded process, only after verifying it is that process.
///
/// A pidfd is opened first and the identity judged while it is held: the pidfd names the process
/// that had the PID when it was opened, and a matching start time read afterwards proves that
/// this was the recorded process, so the signal cannot reach a process that reused the PID. Only
/// an alive identity is signalled; any doubt means no signal and [`Termination::Unknown`]. This
/// never escalates to another signal; the caller decides what follows.
pub fn terminate(record: &Record, signal: i32) -> Termination {
    if let Err(reason) = check_context(record) {
        return Termination::Unknown(reason);
    }
    let pidfd = match Pidfd::open(record.pid) {
        Ok(pidfd) => pidfd,
        Err(err) if err.raw_os_error() == Some(libc::ESRCH) => return after_esrch(record),
        Err(err) => {
            return Termination::Unknown(format!(
                "cannot open a pidfd for process {}: {err}",
                record.pid
            ));
        }
    };
    match judge(record) {
        Judgement::Alive => {}
        Judgement::Exited => return Termination::Exited,
        Judgement::Unknown(reason) => return Termination::Unknown(reason),
    }
    match pidfd.send_signal(signal) {
        Ok(()) => Termination::Signalled,
        Err(err) if err.raw_os_error() == Some(libc::ESRCH) => Termination::Exited,
        Err(err) => Termination::Unknown(format!("cannot signal process {}: {err}", record.pid)),
    }
}

/// Waits until the recorded process has exited or `deadline` passes, and returns the judgement.
///
/// The wait polls a pidfd, which becomes readable when the process exits; where no pidfd can be
/// opened it judges again every few milliseconds. At the deadline it returns the judgement of
/// that moment ([`Judgement::Alive`] when the process still runs).
pub fn wait_exited(record: &Record, deadline: Instant) -> Judgement {
    if let Err(reason) = check_context(record) {
        return Judgement::Unknown(reason);
    }
    let pidfd = match Pidfd::open(record.pid) {
        Ok(pidfd) => pidfd,
        Err(err) if err.raw_os_error() == Some(libc::ESRCH) => return judge(record),
        Err(_) => return poll_judge(record, deadline),
    };
    // The pidfd is only proven to name the recorded process once the start time matches.
    let first = judge(record);
    if first != Judgement::Alive {
        return first;
    }
    loop {
        let remaining = deadline.saturating_duration_since(Instant::now());
        match pidfd.wait_readable(remaining) {
            Ok(true) => return Judgement::Exited,
            Ok(false) if remaining.is_zero() => return judge(record),
            Ok(false) => {}
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return poll_judge(record, deadline),
        }
    }
}

/// A pidfd of a recorded process that was alive, with its start time matching, after the pidfd
/// was opened: so it names that process and no other. It becomes readable (`POLLIN`) once the
/// process has exited, which lets a supervisor wait for many children in one `poll` instead of
/// judging each child's `/proc` entry on a timer.
#[derive(Debug)]
pub struct ExitWatch(Pidfd);

impl ExitWatch {
    /// Opens the watch of `record`'s process if it is alive now; `None` when it is not, or when
    /// it cannot be judged or no pidfd can be opened (the caller then judges it as before).
    pub fn open(record: &Record) -> Option<ExitWatch> {
        check_context(record).ok()?;
        let pidfd = Pidfd::open(record.pid).ok()?;
        (judge(record) == Judgement::Alive).then_some(ExitWatch(pidfd))
    }

    /// Whether the process has exited (the pidfd is readable), without waiting.
    pub fn has_exited(&self) -> bool {
        self.0.wait_readable(Duration::ZERO).unwrap_or(true)
    }
}

impl AsFd for ExitWatch {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

fn poll_judge(record: &Record, deadline: Instant) -> Judgement {
    loop {
        let judgement = judge(record);
        let remaining = deadline.saturating_duration_since(Instant::now());
        if judgement != Judgement::Alive || remaining.is_zero() {
            return judgement;
        }
        std::thread::sleep(remaining.min(POLL_STEP));
    }
}

/// `pidfd_open` found no process with the PID: exited, unless the PID now means something else.
fn after_esrch(record: &Record) -> Termination {
    match judge(record) {
        Judgement::Exited => Termination::Exited,
        Judgement::Unknown(reason) => Termination::Unknown(reason),
        Judgement::Alive => Termination::Unknown(format!(
            "process {} was reported gone and then found alive",
            record.pid
        )),
    }
}

fn judge_stat(record: &Record, stat: &Stat) -> Judgement {
    if stat.start_time != record.start_time {
        return Judgement::Unknown(format!(
            "pid {} now names another process (start time {} instead of {})",
            record.pid, stat.start_time, record.start_time
        ));
    }
    match stat.state {
        b'Z' | b'X' | b'x' => Judgement::Exited,
        _ => Judgement::Alive,
    }
}

/// Reads `/proc/<pid>/stat` of the record; `Ok(None)` when there is no such entry.
fn read_current_stat(record: &Record) -> Result<Option<Stat>, String> {
    let path = stat_path(record.pid);
    let Some(bytes) =
        read_proc(&path).map_err(|err| format!("cannot read {}: {err}", path.display()))?
    else {
        return Ok(None);
    };
    let stat = parse_stat(&bytes).map_err(|reason| format!("{}: {reason}", path.display()))?;
    if stat.pid != record.pid {
        return Err(format!("{} names pid {}", path.display(), stat.pid));
    }
    Ok(Some(stat))
}

/// Checks that the record can be judged here: a valid PID, a trusted `/proc`, the same boot and
/// the same PID namespace.
fn check_context(record: &Record) -> Result<(), String> {
    if !valid_pid(record.pid) {
        return Err(format!("{} is not a valid pid", record.pid));
    }
    let host = Host::read().map_err(|err| err.to_string())?;
    if host.boot_id != record.boot_id {
        return Err(format!(
            "recorded in another boot ({}, this is {})",
            record.boot_id, host.boot_id
        ));
    }
    if host.pid_namespace != record.pid_namespace {
        return Err(format!(
            "recorded in another pid namespace ({}, this is {})",
            record.pid_namespace, host.pid_namespace
        ));
    }
    Ok(())
}

/// Returns the ID of the running boot, as [`capture`] records it: a record with another one
/// names a process of an earlier boot, which cannot be running now.
pub fn boot_id() -> Result<String, Error> {
    let boot_path = Path::new(BOOT_ID_PATH);
    let boot = read_proc(boot_path)
        .map_err(|source| Error::Proc {
            path: boot_path.to_path_buf(),
            source,
        })?
        .ok_or_else(|| Error::ProcFormat {
            path: boot_path.to_path_buf(),
            reason: "does not exist".into(),
        })?;
    String::from_utf8(boot)
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| Error::ProcFormat {
            path: boot_path.to_path_buf(),
            reason: "is empty or not text".into(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat_line(comm: &str, state: char, ppid: i64, start: u64) -> Vec<u8> {
        // Fields 4..21 are filler; field 22 is the start time.
        let filler: Vec<String> = (4..22).map(|n| n.to_string()).collect();
        format!(
            "42 ({comm}) {state} {ppid} {} {start} 9 9\n",
            filler[1..].join(" ")
        )
        .into_bytes()
    }

    fn check(comm: &str) {
        let stat = parse_stat(&stat_line(comm, 'S', 7, 123456)).unwrap();
        assert_eq!(
            stat,
            Stat {
                pid: 42,
                comm: comm.to_owned(),
                state: b'S',
                ppid: 7,
                session: 6,
                start_time: 123456
            },
            "comm {comm:?}"
        );
    }

    #[test]
    fn comm_with_spaces_and_parentheses_parses() {
        check("sleep");
        check("a b");
        check("a) b");
        check(") ) (");
        check("x) S 1 2 3 (");
        check("");
    }

    #[test]
    fn malformed_stat_lines_are_errors() {
        for bad in [
            &b""[..],
            b"42 sleep S 1",
            b"x (a) S 1",
            b"42 (a) S",
            b"42 (a) SS 1 2",
            b"42 (a) S 1 2 3",
        ] {
            assert!(
                parse_stat(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn own_stat_names_this_process() {
        let bytes = read_proc(Path::new(SELF_STAT_PATH)).unwrap().unwrap();
        let stat = parse_stat(&bytes).unwrap();
        assert_eq!(stat.pid, std::process::id());
        assert!(stat.start_time > 0);
    }

    #[test]
    fn the_boot_id_is_the_one_records_carry() {
        let me = capture(std::process::id(), "r", Path::new("/s.jsonl")).unwrap();
        assert_eq!(boot_id().unwrap(), me.boot_id);
    }

    #[test]
    fn digits_only() {
        assert_eq!(parse_digits("0123"), Some(123));
        for bad in [
            "",
            "+1",
            "-1",
            " 1",
            "1 ",
            "1.0",
            "1e3",
            "99999999999999999999999",
        ] {
            assert_eq!(parse_digits(bad), None, "{bad:?}");
        }
    }
}
