//! The errors of a Herdr call and the herd error codes they map onto.
//!
//! The kinds keep apart what a caller must treat differently: a timeout or an unreadable reply
//! of a mutating call leaves the effect unknown (`uncertain`), an unavailable Herdr did nothing,
//! and a Herdr error reply (`Remote`) is a definite answer carrying Herdr's own code.

use std::time::Duration;

use herd_core::ErrorCode;

/// Herdr's error codes that mean "no such pane" when `pane get` answers them.
pub const PANE_MISSING_CODES: [&str; 2] = ["pane_not_found", "not_found"];

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The call did not answer within its budget and was killed. The server may still have
    /// carried out the request.
    #[error("herdr `{command}` did not answer within {budget:?}")]
    Timeout {
        command: &'static str,
        budget: Duration,
        mutating: bool,
    },
    /// Herdr could not be asked: the executable is missing or failed to start, no server is
    /// running, or it speaks another protocol. Nothing was done.
    #[error("herdr `{command}` is unavailable: {reason}")]
    Unavailable {
        command: &'static str,
        reason: String,
    },
    /// Herdr answered, but not with a reply of the expected shape.
    #[error("herdr `{command}` gave a malformed reply: {problem}")]
    Protocol {
        command: &'static str,
        problem: String,
        mutating: bool,
    },
    /// Herdr refused the command line itself (exit 2, plain-text usage message): this Herdr
    /// does not accept the syntax herd uses. Nothing was done.
    #[error("herdr `{command}` rejected its command line: {message}")]
    Usage {
        command: &'static str,
        message: String,
    },
    /// Herdr answered with an error reply `{"error":{"code","message"}}`.
    #[error("herdr `{command}` failed with {code}: {message}")]
    Remote {
        command: &'static str,
        code: String,
        message: String,
    },
}

impl Error {
    /// Returns the herd error code: a timeout or unreadable reply of a mutating call is
    /// `uncertain`, since the server may have acted.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Timeout { mutating: true, .. } | Error::Protocol { mutating: true, .. } => {
                ErrorCode::Uncertain
            }
            Error::Timeout { .. } => ErrorCode::Timeout,
            Error::Protocol { .. } | Error::Unavailable { .. } | Error::Usage { .. } => {
                ErrorCode::Unavailable
            }
            Error::Remote { code, .. } => remote_code(code),
        }
    }

    /// Returns whether the request may have taken effect although the call failed.
    pub fn effect_possible(&self) -> bool {
        self.code() == ErrorCode::Uncertain
    }

    /// Returns the command the error concerns, e.g. `pane get`.
    pub fn command(&self) -> &'static str {
        match self {
            Error::Timeout { command, .. }
            | Error::Unavailable { command, .. }
            | Error::Protocol { command, .. }
            | Error::Usage { command, .. }
            | Error::Remote { command, .. } => command,
        }
    }

    /// Returns Herdr's own error code of an error reply.
    pub fn remote_code(&self) -> Option<&str> {
        match self {
            Error::Remote { code, .. } => Some(code),
            _ => None,
        }
    }

    /// Returns whether Herdr said the pane does not exist.
    pub fn is_pane_missing(&self) -> bool {
        self.remote_code()
            .is_some_and(|code| PANE_MISSING_CODES.contains(&code))
    }
}

/// Maps a Herdr error code onto a herd error code (docs/protocol.md, "Herdr": error codes).
fn remote_code(code: &str) -> ErrorCode {
    match code {
        "pane_not_found"
        | "not_found"
        | "workspace_not_found"
        | "tab_not_found"
        | "agent_not_found"
        | "worktree_not_found" => ErrorCode::NotFound,
        "timeout" => ErrorCode::Timeout,
        "invalid_request"
        | "invalid_params"
        | "invalid_key"
        | "invalid_env"
        | "invalid_regex"
        | "not_git_worktree"
        | "linked_worktree_source"
        | "not_linked_worktree" => ErrorCode::InvalidRequest,
        "ambiguous_worktree_branch" => ErrorCode::Ambiguous,
        "dirty_worktree_requires_force"
        | "confirmation_required"
        | "worktree_create_failed"
        | "agent_not_idle" => ErrorCode::Conflict,
        // Everything else (`internal_error`, `pane_split_failed`, codes of newer Herdr
        // versions) is a refusal without a more precise meaning for herd.
        _ => ErrorCode::Unavailable,
    }
}

impl herd_core::error::Report for Error {
    fn code(&self) -> ErrorCode {
        Error::code(self)
    }

    /// The error's own message: it already says everything its sources would.
    fn message(&self) -> String {
        self.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remote(code: &str) -> Error {
        Error::Remote {
            command: "pane get",
            code: code.into(),
            message: "pane w1:p2 not found".into(),
        }
    }

    #[test]
    fn codes_follow_the_kind_and_the_mutation() {
        let timeout = |mutating| Error::Timeout {
            command: "pane run",
            budget: Duration::from_secs(10),
            mutating,
        };
        assert_eq!(timeout(true).code(), ErrorCode::Uncertain);
        assert!(timeout(true).effect_possible());
        assert_eq!(timeout(false).code(), ErrorCode::Timeout);
        let protocol = |mutating| Error::Protocol {
            command: "pane split",
            problem: "result.pane is missing".into(),
            mutating,
        };
        assert_eq!(protocol(true).code(), ErrorCode::Uncertain);
        assert_eq!(protocol(false).code(), ErrorCode::Unavailable);
        assert_eq!(remote("pane_not_found").code(), ErrorCode::NotFound);
        assert_eq!(
            remote("dirty_worktree_requires_force").code(),
            ErrorCode::Conflict
        );
        assert_eq!(remote("invalid_key").code(), ErrorCode::InvalidRequest);
        assert_eq!(remote("something_new").code(), ErrorCode::Unavailable);
        assert!(remote("not_found").is_pane_missing());
        assert!(!remote("workspace_not_found").is_pane_missing());
    }

    #[test]
    fn converts_into_the_reported_error() {
        let err: herd_core::Error = remote("pane_not_found").into();
        assert_eq!(err.code, ErrorCode::NotFound);
        assert_eq!(
            err.message,
            "herdr `pane get` failed with pane_not_found: pane w1:p2 not found"
        );
    }
}
