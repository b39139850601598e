//! Sidecar files: atomic writes, size-bounded reads and versioned JSON (DESIGN §5).
//!
//! Every file herd writes goes through [`write_atomic`]: a temporary file in the same directory,
//! fsync, rename, fsync of the directory, so a reader sees the old file or the new one and never
//! a torn one. Every read goes through [`read_bounded`], so a hostile or runaway file cannot make
//! a reader allocate without bound.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
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

impl From<Error> for crate::Error {
    fn from(err: Error) -> crate::Error {
        let mut out = crate::error::report(err.code(), &err);
        out.field = err.field().map(str::to_owned);
        out
    }
}

/// Writes `bytes` to `path` atomically: temp file beside it, fsync, rename, fsync of the directory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let tmp = written_beside(path, bytes)?;
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    sync_dir(parent_dir(path))
}

/// A temporary file of a name no other writer uses, in the directory of `path` (created if
/// missing), holding `bytes` synced to disk. Dropping it removes it.
fn written_beside(path: &Path, bytes: &[u8]) -> Result<tempfile::NamedTempFile, Error> {
    let dir = parent_dir(path);
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{}.", file_name(path)))
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| Error::io(dir, e))?;
    tmp.write_all(bytes).map_err(|e| Error::io(tmp.path(), e))?;
    tmp.as_file()
        .sync_all()
        .map_err(|e| Error::io(tmp.path(), e))?;
    Ok(tmp)
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

/// Creates `path` with `bytes` once: if the file already exists it is kept and `false` returned.
///
/// The content is written to a temporary file of its own first and then hard-linked to its name,
/// so the final file appears complete or not at all, and the first writer wins. The temporary
/// name is unique per call: creators in one process (or one millisecond) never share it, so
/// none can fail on, or delete, another's.
pub fn create_once(path: &Path, bytes: &[u8]) -> Result<bool, Error> {
    let tmp = written_beside(path, bytes)?;
    match fs::hard_link(tmp.path(), path) {
        Ok(()) => {
            sync_dir(parent_dir(path))?;
            Ok(true)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// Appends one line (a newline is added) with a single `write` on an `O_APPEND` descriptor.
///
/// Lines written this way by several processes never interleave as long as each stays below the
/// pipe-buffer size, which the callers ensure by bounding what they write.
pub fn append_line(path: &Path, line: &str) -> Result<(), Error> {
    let dir = parent_dir(path);
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut buf = Vec::with_capacity(line.len() + 1);
    buf.extend_from_slice(line.as_bytes());
    buf.push(b'\n');
    let mut file = OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    file.write_all(&buf).map_err(|e| Error::io(path, e))?;
    file.sync_data().map_err(|e| Error::io(path, e))
}

/// Opens `path` for reading without ever waiting; `Ok(None)` when it does not exist.
///
/// A plain open of a FIFO waits for a writer, forever if none comes, and a child can leave one
/// where a sidecar belongs. So the open does not wait, and anything but a regular file (or a
/// directory, whose read then fails) is refused. The descriptor stays non-blocking, which
/// changes nothing for a regular file.
pub fn open_file(path: &Path) -> Result<Option<File>, Error> {
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(path, e)),
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

    #[test]
    fn appended_lines_accumulate() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.jsonl");
        append_line(&path, "{\"a\":1}").unwrap();
        append_line(&path, "{\"a\":2}").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "{\"a\":1}\n{\"a\":2}\n");
    }
}
