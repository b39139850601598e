//! Why a child could not be started or supervised, and the error kind a binary reports for it.

use std::io;
use std::path::PathBuf;

use crate::ErrorCode;

/// Why a child could not be started or supervised.
///
/// A child that starts and then fails, times out or is cancelled is not an error: that is an
/// [`Output`](super::Output).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid command: {reason}")]
    Invalid { reason: String },
    #[error("program `{program}` not found")]
    ProgramNotFound {
        program: String,
        #[source]
        source: io::Error,
    },
    #[error("working directory {} is not an existing directory", path.display())]
    Cwd {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot start `{program}`")]
    Spawn {
        program: String,
        #[source]
        source: io::Error,
    },
    #[error("cannot open {}", path.display())]
    File {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot supervise `{program}`")]
    Supervise {
        program: String,
        #[source]
        source: io::Error,
    },
    #[error("`{program}` (pid {pid}) did not exit after SIGKILL")]
    Unkillable { program: String, pid: u32 },
    #[error("cannot install handlers for SIGTERM and SIGINT")]
    Signals {
        #[source]
        source: io::Error,
    },
}

impl Error {
    /// Returns the error kind a binary reports.
    ///
    /// A missing program is `unavailable` (a tool herd needs is not installed, exit 4); a
    /// caller that ran a program the user named may report it differently. A missing working
    /// directory is `not_found`.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Invalid { .. } => ErrorCode::InvalidRequest,
            Error::Cwd { .. } => ErrorCode::NotFound,
            Error::ProgramNotFound { .. } | Error::Spawn { .. } | Error::File { .. } => {
                ErrorCode::Unavailable
            }
            Error::Unkillable { .. } => ErrorCode::Uncertain,
            Error::Supervise { .. } | Error::Signals { .. } => ErrorCode::Internal,
        }
    }
}

impl crate::error::Report for Error {
    fn code(&self) -> ErrorCode {
        Error::code(self)
    }
}
