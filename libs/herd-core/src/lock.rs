//! Exclusive advisory locks on files, taken with a deadline.
//!
//! A lock is an `flock` of a lock file: the kernel releases it when the holder closes the file or
//! dies, so a crashed holder never leaves a lock behind. Waiting polls a non-blocking `flock`
//! until the deadline, because nothing in herd waits without one.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::ErrorCode;

/// How often a waiting lock is tried again.
const STEP: Duration = Duration::from_millis(10);

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot open the lock {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{path} is still held by another process")]
    Held { path: PathBuf },
}

impl Error {
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Io { .. } => ErrorCode::Unavailable,
            Error::Held { .. } => ErrorCode::Conflict,
        }
    }
}

impl crate::error::Report for Error {
    fn code(&self) -> ErrorCode {
        Error::code(self)
    }
}

/// A held lock; dropping it releases the lock.
#[derive(Debug)]
pub struct FileLock {
    _file: File,
}

/// Takes the exclusive lock of `path` (created if missing), waiting until `deadline` at most.
pub fn exclusive(path: &Path, deadline: Instant) -> Result<FileLock, Error> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::sidecar::ensure_private_dir(dir).map_err(|e| match e {
            crate::sidecar::Error::Io { source, .. } => io(source),
            other => io(io::Error::other(other.to_string())),
        })?;
    }
    let file = crate::sidecar::private()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io)?;
    loop {
        // SAFETY: flock on a descriptor this function owns has no memory-safety conditions.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(FileLock { _file: file });
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::WouldBlock {
            return Err(io(err));
        }
        if Instant::now() + STEP >= deadline {
            return Err(Error::Held {
                path: path.to_path_buf(),
            });
        }
        std::thread::sleep(STEP);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_is_refused_at_the_deadline_and_free_once_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("locks").join("x.lock");
        let first = exclusive(&path, Instant::now() + Duration::from_secs(5)).unwrap();
        let err = exclusive(&path, Instant::now() + Duration::from_millis(50)).unwrap_err();
        assert_eq!(err.code(), ErrorCode::Conflict);
        drop(first);
        exclusive(&path, Instant::now() + Duration::from_secs(5)).unwrap();
    }
}
