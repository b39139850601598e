//! Sidecar files: atomic writes, size-bounded reads and versioned JSON (docs/sidecars.md,
//! "Versioning and reading rules").
//!
//! Every file herd writes goes through [`AtomicWrite`] ([`write_atomic`] for the common case): a
//! temporary file in the same directory, fsync, rename, fsync of the directory, so a reader sees
//! the old file or the new one and never a torn one; [`Durability::Unsynced`] skips the fsyncs
//! for files that need not outlive the machine. Every read goes through [`read_bounded`], so a hostile or runaway file cannot make
//! a reader allocate without bound.
//!
//! herd's files are private (tasks, prompts, results and child output can hold secrets): every
//! directory herd creates is 0700 ([`ensure_private_dir`]) and every file 0600 ([`private`]),
//! whatever the umask. A symlink planted where one of herd's files belongs is never followed:
//! files are opened with `O_NOFOLLOW`, and a rename or a hard link replaces or refuses a
//! symlink rather than following it. Only the paths a person gives (a request, a role, a
//! parent session) are read through symlinks, with [`read_given`].

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::ErrorCode;

/// The default bound of a sidecar read.
pub const DEFAULT_READ_LIMIT: u64 = 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot access {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{path} is larger than {limit} bytes")]
    TooLarge { path: PathBuf, limit: u64 },
    #[error("{path} is not a regular file")]
    NotAFile { path: PathBuf },
    #[error("{path} is a symbolic link; herd does not follow one where its own file belongs")]
    Symlink { path: PathBuf },
    #[error("refusing {path}: it {reason}")]
    Unsafe { path: PathBuf, reason: String },
    #[error("{path} is not valid JSON of the expected shape")]
    Malformed {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path}: field `{field}` {reason}")]
    Invalid {
        path: PathBuf,
        field: String,
        reason: String,
    },
    #[error("{path} has {field} {found}, newer than the supported {supported}")]
    NewerVersion {
        path: PathBuf,
        field: &'static str,
        found: u64,
        supported: u64,
    },
}

impl Error {
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Io { .. } => ErrorCode::Unavailable,
            Error::TooLarge { .. }
            | Error::NotAFile { .. }
            | Error::Symlink { .. }
            | Error::Unsafe { .. }
            | Error::Malformed { .. }
            | Error::Invalid { .. } => ErrorCode::InvalidRequest,
            Error::NewerVersion { .. } => ErrorCode::Conflict,
        }
    }

    /// The field the error is about, when there is one.
    pub fn field(&self) -> Option<&str> {
        match self {
            Error::Invalid { field, .. } => Some(field),
            Error::NewerVersion { field, .. } => Some(field),
            _ => None,
        }
    }

    pub fn io(path: &Path, source: io::Error) -> Error {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub fn invalid(path: &Path, field: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::Invalid {
            path: path.to_path_buf(),
            field: field.into(),
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

/// The mode of every directory herd creates.
pub const PRIVATE_DIR_MODE: u32 = 0o700;
/// The mode of every file herd writes.
pub const PRIVATE_FILE_MODE: u32 = 0o600;

/// Options that create a file 0600 and never follow a symlink in its place (`O_NOFOLLOW`).
pub fn private() -> OpenOptions {
    let mut options = OpenOptions::new();
    options
        .mode(PRIVATE_FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
    options
}

/// Creates `dir` and every missing parent with mode 0700, whatever the umask; a directory
/// already there is left as it is.
pub fn ensure_private_dir(dir: &Path) -> Result<(), Error> {
    if dir.is_dir() {
        return Ok(());
    }
    // Each missing component, outermost first, so each is made 0700 as it is created.
    let mut missing = Vec::new();
    let mut at = Some(dir);
    while let Some(path) = at.filter(|p| !p.as_os_str().is_empty()) {
        match fs::symlink_metadata(path) {
            Ok(_) => break,
            Err(e) if e.kind() == io::ErrorKind::NotFound => missing.push(path),
            Err(e) => return Err(Error::io(path, e)),
        }
        at = path.parent();
    }
    for path in missing.into_iter().rev() {
        match fs::DirBuilder::new().mode(PRIVATE_DIR_MODE).create(path) {
            Ok(()) => {
                // The umask can only take bits away; this puts back any it took from 0700.
                fs::set_permissions(path, fs::Permissions::from_mode(PRIVATE_DIR_MODE))
                    .map_err(|e| Error::io(path, e))?;
            }
            // Another process created it first.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    if dir.is_dir() {
        Ok(())
    } else {
        Err(Error::io(
            dir,
            io::Error::new(io::ErrorKind::NotADirectory, "not a directory"),
        ))
    }
}

/// A new directory under `parent` named `prefix` and a random tail, 0700 whatever the umask;
/// removed when the guard drops unless it was kept (or renamed away and then kept).
pub fn private_temp_dir(parent: &Path, prefix: &str) -> io::Result<tempfile::TempDir> {
    let dir = tempfile::Builder::new().prefix(prefix).tempdir_in(parent)?;
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(PRIVATE_DIR_MODE))?;
    Ok(dir)
}

/// Renames `from` to `to` unless `to` exists (`renameat2(RENAME_NOREPLACE)`): the first of
/// several builders wins, and no one's file or directory is replaced.
pub fn rename_no_replace(from: &Path, to: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
    };
    let (from, to) = (c(from)?, c(to)?);
    // SAFETY: two NUL-terminated paths; AT_FDCWD resolves them as given.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Refuses `dir` as the root of herd's private files when another user owns it or its group or
/// others may write to it (as ssh's `StrictModes` refuses such a home): whoever can write there
/// can replace herd's records, scripts and results. A directory that does not exist yet is
/// fine: herd creates it 0700. A symlink to a directory is judged by the directory.
pub fn check_private_root(dir: &Path) -> Result<(), Error> {
    let meta = match fs::metadata(dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(dir, e)),
    };
    if !meta.is_dir() {
        return Err(Error::Unsafe {
            path: dir.to_path_buf(),
            reason: "is not a directory".into(),
        });
    }
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(Error::Unsafe {
            path: dir.to_path_buf(),
            reason: format!(
                "is owned by uid {}, not by this user (uid {me})",
                meta.uid()
            ),
        });
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(Error::Unsafe {
            path: dir.to_path_buf(),
            reason: format!(
                "is writable by its group or by others (mode {mode:04o}); `chmod go-w` it first"
            ),
        });
    }
    Ok(())
}

/// Writes `bytes` to `path` atomically: temp file beside it, fsync, rename, fsync of the directory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    AtomicWrite::new(Durability::Synced).replace(path, bytes)
}

/// Whether an atomic write also survives a crash of the machine, or only one of its writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// The file is fsynced before it takes its name and the directory after: the new content
    /// survives a power loss once the write returns.
    Synced,
    /// No fsync: readers still see the whole file or none of it, and a writer killed at any
    /// instant leaves the old file or the new one, but a crash of the machine may lose the
    /// write. For files that only matter while a process they describe can run, which no power
    /// loss leaves running, where an fsync would cost milliseconds on a busy disk.
    Unsynced,
}

/// The one atomic file writer: content goes to a temporary file of a name no other writer uses,
/// beside the final name (its directory is created 0700 if missing), then takes the final name
/// by a rename ([`AtomicWrite::replace`]) or a hard link ([`AtomicWrite::create_once`]).
///
/// The temporary file is created exclusively (`O_EXCL`), so nothing left at its name is written
/// through, and both the rename and the link replace or refuse a symlink at the final name
/// rather than follow it. The temporary file never outlives the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AtomicWrite {
    durability: Durability,
    mode: u32,
}

impl AtomicWrite {
    /// A writer of private files (mode [`PRIVATE_FILE_MODE`]) with the given durability.
    pub const fn new(durability: Durability) -> AtomicWrite {
        AtomicWrite {
            durability,
            mode: PRIVATE_FILE_MODE,
        }
    }

    /// Creates the file with `mode` instead (e.g. 0700 for a script); the umask still applies.
    #[must_use]
    pub const fn mode(self, mode: u32) -> AtomicWrite {
        AtomicWrite { mode, ..self }
    }

    /// Replaces `path` with `bytes`: readers see the old file or the new one, never a torn one.
    pub fn replace(&self, path: &Path, bytes: &[u8]) -> Result<(), Error> {
        let tmp = self.written_beside(path, bytes)?;
        tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
        self.sync_dir(path)
    }

    /// Creates `path` with `bytes` once: if the file already exists it is kept and `false`
    /// returned.
    ///
    /// The final file appears complete or not at all, and the first writer wins. The temporary
    /// name is unique per call: creators in one process (or one millisecond) never share it, so
    /// none can fail on, or delete, another's.
    pub fn create_once(&self, path: &Path, bytes: &[u8]) -> Result<bool, Error> {
        let tmp = self.written_beside(path, bytes)?;
        match fs::hard_link(tmp.path(), path) {
            Ok(()) => {
                self.sync_dir(path)?;
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(Error::io(path, e)),
        }
    }

    /// A temporary file in the directory of `path` (created if missing) holding `bytes`, synced
    /// to disk when the write is durable. Dropping it removes it.
    fn written_beside(&self, path: &Path, bytes: &[u8]) -> Result<tempfile::NamedTempFile, Error> {
        let dir = parent_dir(path);
        ensure_private_dir(dir)?;
        // tempfile creates the file with O_EXCL, which never follows a symlink.
        let mut tmp = tempfile::Builder::new()
            .prefix(&format!(".{}.", file_name(path)))
            .suffix(".tmp")
            .permissions(fs::Permissions::from_mode(self.mode))
            .tempfile_in(dir)
            .map_err(|e| Error::io(dir, e))?;
        tmp.write_all(bytes).map_err(|e| Error::io(tmp.path(), e))?;
        if self.durability == Durability::Synced {
            tmp.as_file()
                .sync_all()
                .map_err(|e| Error::io(tmp.path(), e))?;
        }
        Ok(tmp)
    }

    fn sync_dir(&self, path: &Path) -> Result<(), Error> {
        match self.durability {
            Durability::Synced => sync_dir(parent_dir(path)),
            Durability::Unsynced => Ok(()),
        }
    }
}

/// Writes `value` as pretty JSON plus a newline, atomically.
pub fn write_json<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<(), Error> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| Error::Malformed {
        path: path.to_path_buf(),
        source: e,
    })?;
    bytes.push(b'\n');
    write_atomic(path, &bytes)
}

/// Creates `path` with `bytes` once, durably: if the file already exists it is kept and `false`
/// returned (see [`AtomicWrite::create_once`]).
pub fn create_once(path: &Path, bytes: &[u8]) -> Result<bool, Error> {
    AtomicWrite::new(Durability::Synced).create_once(path, bytes)
}

/// Appends one line (a newline is added) with a single `write` on an `O_APPEND` descriptor.
///
/// Lines written this way by several processes never interleave as long as each stays below the
/// pipe-buffer size, which the callers ensure by bounding what they write.
pub fn append_line(path: &Path, line: &str) -> Result<(), Error> {
    let dir = parent_dir(path);
    ensure_private_dir(dir)?;
    let mut buf = Vec::with_capacity(line.len() + 1);
    buf.extend_from_slice(line.as_bytes());
    buf.push(b'\n');
    let mut file = private()
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| open_error(path, e))?;
    file.write_all(&buf).map_err(|e| Error::io(path, e))?;
    file.sync_data().map_err(|e| Error::io(path, e))
}

/// Opens one of herd's own files for reading without ever waiting and without following a
/// symlink in its place; `Ok(None)` when it does not exist.
///
/// A plain open of a FIFO waits for a writer, forever if none comes, and a child can leave one
/// where a sidecar belongs. So the open does not wait, and anything but a regular file (or a
/// directory, whose read then fails) is refused. The descriptor stays non-blocking, which
/// changes nothing for a regular file.
pub fn open_file(path: &Path) -> Result<Option<File>, Error> {
    open_read(path, libc::O_NOFOLLOW)
}

/// [`open_file`] for a path a person gave (a request, a role file, a parent session), which may
/// be a symlink.
pub fn open_given(path: &Path) -> Result<Option<File>, Error> {
    open_read(path, 0)
}

/// Reads at most `limit` bytes of a path a person gave, following a symlink; `Ok(None)` when it
/// does not exist.
pub fn read_given(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, Error> {
    let Some(file) = open_given(path)? else {
        return Ok(None);
    };
    read_limited(path, file, limit)
}

/// The error of an open of herd's own file: `ELOOP` under `O_NOFOLLOW` is a planted symlink.
fn open_error(path: &Path, err: io::Error) -> Error {
    if err.raw_os_error() == Some(libc::ELOOP) {
        Error::Symlink {
            path: path.to_path_buf(),
        }
    } else {
        Error::io(path, err)
    }
}

fn open_read(path: &Path, flags: i32) -> Result<Option<File>, Error> {
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | flags)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(open_error(path, e)),
    };
    let kind = file.metadata().map_err(|e| Error::io(path, e))?.file_type();
    if !kind.is_file() && !kind.is_dir() {
        return Err(Error::NotAFile {
            path: path.to_path_buf(),
        });
    }
    Ok(Some(file))
}

/// Reads at most `limit` bytes of `path`; `Ok(None)` when it does not exist.
pub fn read_bounded(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, Error> {
    let Some(file) = open_file(path)? else {
        return Ok(None);
    };
    read_limited(path, file, limit)
}

fn read_limited(path: &Path, file: File, limit: u64) -> Result<Option<Vec<u8>>, Error> {
    let mut buf = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Error::io(path, e))?;
    if buf.len() as u64 > limit {
        return Err(Error::TooLarge {
            path: path.to_path_buf(),
            limit,
        });
    }
    Ok(Some(buf))
}

/// Reads the whole lines among the last `limit` bytes of `path` (a log, a transcript, JSON
/// Lines), invalid UTF-8 replaced; `Ok(None)` when it does not exist.
///
/// A read that starts inside the file starts inside a line: that torn first line is dropped.
/// The last line is returned as it is, ended or not. Opened like [`read_bounded`], so a FIFO
/// is refused rather than waited on.
pub fn read_tail_lines(path: &Path, limit: u64) -> Result<Option<String>, Error> {
    let Some(mut file) = open_file(path)? else {
        return Ok(None);
    };
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    let start = len.saturating_sub(limit);
    // One byte more, before the start: when it is a newline, the first line is whole.
    let from = start.saturating_sub(1);
    file.seek(SeekFrom::Start(from))
        .map_err(|e| Error::io(path, e))?;
    let mut buf = Vec::new();
    file.take(len - from)
        .read_to_end(&mut buf)
        .map_err(|e| Error::io(path, e))?;
    let text = String::from_utf8_lossy(&buf);
    if start == 0 {
        return Ok(Some(text.into_owned()));
    }
    Ok(Some(
        text.split_once('\n')
            .map_or_else(String::new, |(_, rest)| rest.to_owned()),
    ))
}

/// Reads and parses a JSON file of at most `limit` bytes; `Ok(None)` when it does not exist.
pub fn read_json<T: DeserializeOwned>(path: &Path, limit: u64) -> Result<Option<T>, Error> {
    let Some(bytes) = read_bounded(path, limit)? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| Error::Malformed {
            path: path.to_path_buf(),
            source: e,
        })
}

/// Reads a versioned JSON file: refuses a version field newer than `supported`, then parses.
///
/// `field` is the name of the version key (`format_version` for herd's own files, `version` for
/// the pi-herdr-agents formats).
pub fn read_versioned<T: DeserializeOwned>(
    path: &Path,
    limit: u64,
    field: &'static str,
    supported: u64,
) -> Result<Option<T>, Error> {
    let Some(bytes) = read_bounded(path, limit)? else {
        return Ok(None);
    };
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| Error::Malformed {
            path: path.to_path_buf(),
            source: e,
        })?;
    let found = value
        .get(field)
        .and_then(serde_json::Value::as_u64)
        .ok_or_else(|| Error::invalid(path, field, "is missing or not a non-negative integer"))?;
    if found > supported {
        return Err(Error::NewerVersion {
            path: path.to_path_buf(),
            field,
            found,
            supported,
        });
    }
    serde_json::from_value(value)
        .map(Some)
        .map_err(|e| Error::Malformed {
            path: path.to_path_buf(),
            source: e,
        })
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || "sidecar".to_owned(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn sync_dir(dir: &Path) -> Result<(), Error> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unsynced_writer_keeps_the_mode_and_never_writes_through_a_symlink() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let writer = AtomicWrite::new(Durability::Unsynced);
        let script = dir.path().join("new").join("run.sh");
        writer.mode(0o700).replace(&script, b"#!/bin/sh\n").unwrap();
        let mode = fs::metadata(&script).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        let target = dir.path().join("target");
        fs::write(&target, "kept").unwrap();
        let planted = dir.path().join("planted.json");
        symlink(&target, &planted).unwrap();
        assert!(!writer.create_once(&planted, b"new").unwrap());
        writer.replace(&planted, b"new").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"kept");
        assert_eq!(fs::read(&planted).unwrap(), b"new");
        assert!(!fs::symlink_metadata(&planted).unwrap().is_symlink());
        let mut names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names, ["new", "planted.json", "target"]);
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs").join("a.json");
        write_json(&path, &serde_json::json!({"format_version": 1, "x": 1})).unwrap();
        write_json(&path, &serde_json::json!({"format_version": 1, "x": 2})).unwrap();
        let value: serde_json::Value = read_json(&path, DEFAULT_READ_LIMIT).unwrap().unwrap();
        assert_eq!(value["x"], 2);
        let names: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [std::ffi::OsString::from("a.json")]);
    }

    #[test]
    fn create_once_keeps_the_first_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.process.json");
        assert!(create_once(&path, b"first").unwrap());
        assert!(!create_once(&path, b"second").unwrap());
        assert_eq!(fs::read(&path).unwrap(), b"first");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn concurrent_creators_of_one_process_get_one_winner() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.process.json");
        let n = 16;
        let barrier = std::sync::Barrier::new(n);
        let results: Vec<Result<bool, Error>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..n)
                .map(|i| {
                    let (path, barrier) = (&path, &barrier);
                    scope.spawn(move || {
                        barrier.wait();
                        create_once(path, format!("writer {i}").as_bytes())
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let won = results.iter().filter(|r| matches!(r, Ok(true))).count();
        assert_eq!(won, 1, "{results:?}");
        assert!(results.iter().all(Result::is_ok), "{results:?}");
        assert!(fs::read(&path).unwrap().starts_with(b"writer "));
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn reads_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.json");
        fs::write(&path, vec![b' '; 2048]).unwrap();
        assert!(matches!(
            read_bounded(&path, 1024),
            Err(Error::TooLarge { limit: 1024, .. })
        ));
        assert_eq!(read_bounded(&path, 2048).unwrap().unwrap().len(), 2048);
        assert!(
            read_bounded(&dir.path().join("missing"), 10)
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.exit");
        let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path and a mode.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let (tx, rx) = crossbeam_channel::bounded(1);
        let reader_path = path.clone();
        std::thread::spawn(move || {
            let _ = tx.send(read_bounded(&reader_path, 1024));
        });
        let answer = rx.recv_timeout(std::time::Duration::from_secs(60));
        // A reader stuck in `open` is released by a writer, so the test process can end.
        let _ = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&path);
        let answer = answer.expect("the read waited for a writer");
        assert!(matches!(answer, Err(Error::NotAFile { .. })), "{answer:?}");
    }

    #[test]
    fn tails_are_whole_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        assert_eq!(read_tail_lines(&path, 10).unwrap(), None);
        fs::write(&path, "first\nsecond\nthird\n").unwrap();
        let tail = |limit| read_tail_lines(&path, limit).unwrap().unwrap();
        assert_eq!(tail(100), "first\nsecond\nthird\n");
        assert_eq!(tail(19), "first\nsecond\nthird\n");
        // A start inside a line drops that line; one at a line's start keeps it.
        assert_eq!(tail(18), "second\nthird\n");
        assert_eq!(tail(13), "second\nthird\n");
        assert_eq!(tail(12), "third\n");
        assert_eq!(tail(6), "third\n");
        assert_eq!(tail(5), "");
        fs::write(&path, "a\nunended").unwrap();
        assert_eq!(tail(8), "unended");
    }

    #[test]
    fn newer_versions_are_refused_and_name_the_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.json");
        fs::write(&path, br#"{"format_version": 9}"#).unwrap();
        let err =
            read_versioned::<serde_json::Value>(&path, 1024, "format_version", 1).unwrap_err();
        assert!(matches!(
            err,
            Error::NewerVersion {
                found: 9,
                supported: 1,
                ..
            }
        ));
        assert_eq!(err.field(), Some("format_version"));
        fs::write(&path, br#"{"x": 1}"#).unwrap();
        let err =
            read_versioned::<serde_json::Value>(&path, 1024, "format_version", 1).unwrap_err();
        assert_eq!(err.field(), Some("format_version"));
        assert!(err.to_string().contains("v.json"), "{err}");
    }

    fn mode(path: &Path) -> u32 {
        fs::symlink_metadata(path).unwrap().mode() & 0o7777
    }

    #[test]
    fn directories_and_files_are_private() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("a/b/c");
        ensure_private_dir(&nested).unwrap();
        for d in ["a", "a/b", "a/b/c"] {
            assert_eq!(mode(&dir.path().join(d)), 0o700, "{d}");
        }
        // A directory already there is not changed.
        let shared = dir.path().join("shared");
        fs::create_dir(&shared).unwrap();
        fs::set_permissions(&shared, fs::Permissions::from_mode(0o755)).unwrap();
        ensure_private_dir(&shared).unwrap();
        assert_eq!(mode(&shared), 0o755);
        let atomic = dir.path().join("w/x.json");
        write_atomic(&atomic, b"{}").unwrap();
        let once = dir.path().join("o/y.json");
        assert!(create_once(&once, b"{}").unwrap());
        let appended = dir.path().join("l/z.jsonl");
        append_line(&appended, "{}").unwrap();
        for file in [&atomic, &once, &appended] {
            assert_eq!(mode(file), 0o600, "{}", file.display());
            assert_eq!(mode(file.parent().unwrap()), 0o700, "{}", file.display());
        }
    }

    #[test]
    fn a_root_others_may_write_or_another_user_owns_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("art");
        // Missing: herd creates it private.
        check_private_root(&root).unwrap();
        fs::create_dir(&root).unwrap();
        for ok in [0o700, 0o755, 0o750] {
            fs::set_permissions(&root, fs::Permissions::from_mode(ok)).unwrap();
            check_private_root(&root).unwrap();
        }
        for bad in [0o770, 0o757, 0o777, 0o1777] {
            fs::set_permissions(&root, fs::Permissions::from_mode(bad)).unwrap();
            let err = check_private_root(&root).unwrap_err();
            assert!(matches!(err, Error::Unsafe { .. }), "{bad:o}: {err}");
            assert!(err.to_string().contains("writable"), "{err}");
        }
        fs::set_permissions(&root, fs::Permissions::from_mode(0o700)).unwrap();
        // A symlink to a private directory is judged by the directory.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&root, &link).unwrap();
        check_private_root(&link).unwrap();
        // Only root can give a directory away, so the ownership rule is tested when run as root.
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            std::os::unix::fs::chown(&root, Some(65534), None).unwrap();
            let err = check_private_root(&root).unwrap_err();
            assert!(err.to_string().contains("owned by uid 65534"), "{err}");
        }
    }

    #[test]
    fn a_planted_symlink_is_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("victim");
        fs::write(&target, "precious\n").unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(0o644)).unwrap();
        let plant = |name: &str| {
            let path = dir.path().join(name);
            std::os::unix::fs::symlink(&target, &path).unwrap();
            path
        };
        let err = append_line(&plant("e.jsonl"), "appended").unwrap_err();
        assert!(matches!(err, Error::Symlink { .. }), "{err}");
        let err = read_bounded(&plant("r.json"), 1024).unwrap_err();
        assert!(matches!(err, Error::Symlink { .. }), "{err}");
        assert!(read_tail_lines(&plant("t.log"), 1024).is_err());
        // A path a person gave is followed.
        assert_eq!(
            read_given(&plant("given.json"), 1024).unwrap().unwrap(),
            b"precious\n"
        );
        // A link in place of a created-once file is there already: nothing is written.
        assert!(!create_once(&plant("c.json"), b"new").unwrap());
        // An atomic write replaces the link itself.
        let replaced = plant("w.json");
        write_atomic(&replaced, b"new").unwrap();
        assert!(!fs::symlink_metadata(&replaced).unwrap().is_symlink());
        let lock = crate::lock::exclusive(&plant("x.lock"), std::time::Instant::now());
        assert!(lock.is_err());
        assert_eq!(fs::read(&target).unwrap(), b"precious\n");
        assert_eq!(mode(&target), 0o644);
    }

    #[test]
    fn appended_lines_accumulate() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.jsonl");
        append_line(&path, "{\"a\":1}").unwrap();
        append_line(&path, "{\"a\":2}").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "{\"a\":1}\n{\"a\":2}\n");
    }
}
