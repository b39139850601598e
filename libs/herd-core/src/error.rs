//! Error kinds shared by every binary and the one mapping from kind to exit code.
//!
//! Module errors stay typed (`identity::Error`, `sidecar::Error`, …); each says which
//! [`ErrorCode`] it is by implementing [`Report`], and the binaries render
//! `{"error":{"code","message","field"}}` from the [`Error`] it converts into.

use std::fmt;

use crate::exit;

/// The machine-readable error codes (docs/exit-codes.md, "Error codes").
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    InvalidRequest,
    NotFound,
    Ambiguous,
    Unavailable,
    Timeout,
    Uncertain,
    Conflict,
    Internal,
}

impl ErrorCode {
    /// Every code, in the order the docs list them.
    pub const ALL: [ErrorCode; 8] = [
        ErrorCode::InvalidRequest,
        ErrorCode::NotFound,
        ErrorCode::Ambiguous,
        ErrorCode::Unavailable,
        ErrorCode::Timeout,
        ErrorCode::Uncertain,
        ErrorCode::Conflict,
        ErrorCode::Internal,
    ];

    /// Returns the code as it appears in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidRequest => "invalid_request",
            ErrorCode::NotFound => "not_found",
            ErrorCode::Ambiguous => "ambiguous",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::Timeout => "timeout",
            ErrorCode::Uncertain => "uncertain",
            ErrorCode::Conflict => "conflict",
            ErrorCode::Internal => "internal",
        }
    }

    /// Returns the exit code a binary ends with when it fails with this code.
    ///
    /// This is the only mapping from error kinds to exit codes.
    pub fn exit_code(self) -> i32 {
        match self {
            ErrorCode::InvalidRequest | ErrorCode::NotFound | ErrorCode::Ambiguous => exit::USAGE,
            ErrorCode::Unavailable | ErrorCode::Timeout => exit::NO_ANSWER,
            ErrorCode::Uncertain => exit::UNCERTAIN,
            ErrorCode::Conflict => exit::BUSY,
            ErrorCode::Internal => exit::INTERNAL,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error as a binary reports it: a code, a lowercase message, and the field it concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub code: ErrorCode,
    pub message: String,
    pub field: Option<String>,
}

impl Error {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Error {
        Error {
            code,
            message: message.into(),
            field: None,
        }
    }

    /// An `invalid_request` naming the offending field.
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Error {
        Error {
            code: ErrorCode::InvalidRequest,
            message: message.into(),
            field: Some(field.into()),
        }
    }

    pub fn not_found(message: impl Into<String>) -> Error {
        Error::new(ErrorCode::NotFound, message)
    }

    pub fn internal(message: impl Into<String>) -> Error {
        Error::new(ErrorCode::Internal, message)
    }

    pub fn with_field(mut self, field: impl Into<String>) -> Error {
        self.field = Some(field.into());
        self
    }

    pub fn exit_code(&self) -> i32 {
        self.code.exit_code()
    }

    /// Renders the `{"error":{"code","message","field"?}}` document a failed `--json` command
    /// prints.
    pub fn to_json(&self) -> serde_json::Value {
        let mut inner = serde_json::Map::new();
        inner.insert("code".into(), self.code.as_str().into());
        inner.insert("message".into(), self.message.clone().into());
        if let Some(field) = &self.field {
            inner.insert("field".into(), field.clone().into());
        }
        serde_json::json!({ "error": inner })
    }
}

/// The document a binary prints with `--json` when it fails: `{"error":{code,message,field}}`.
// herd-docs generates its JSON Schema into docs/schemas/error.schema.json.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct ErrorDocument {
    pub error: ErrorBody,
}

/// The body of an [`ErrorDocument`].
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct ErrorBody {
    pub code: ErrorCode,
    /// Lowercase, without a trailing period.
    pub message: String,
    /// The request field or file the error is about, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

impl From<&Error> for ErrorDocument {
    fn from(err: &Error) -> ErrorDocument {
        ErrorDocument {
            error: ErrorBody {
                code: err.code,
                message: err.message.clone(),
                field: err.field.clone(),
            },
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(f, "{} ({}: {})", self.message, self.code, field),
            None => write!(f, "{} ({})", self.message, self.code),
        }
    }
}

impl std::error::Error for Error {}

/// A typed module error that says how a binary reports it: every such error converts into an
/// [`Error`] through the one `From` below, so no module writes its own conversion.
pub trait Report: std::error::Error + Sized {
    /// The error kind, and with it the exit code.
    fn code(&self) -> ErrorCode;

    /// The request field or file the error is about, when there is one.
    fn field(&self) -> Option<&str> {
        None
    }

    /// The reported message: by default the error's own followed by its sources' ([`chain`]).
    fn message(&self) -> String {
        chain(self)
    }
}

impl<E: Report> From<E> for Error {
    fn from(err: E) -> Error {
        Error {
            code: err.code(),
            message: err.message(),
            field: err.field().map(str::to_owned),
        }
    }
}

/// Converts a module error into the reported form, keeping its source chain in the message.
pub fn report(code: ErrorCode, err: &dyn std::error::Error) -> Error {
    Error::new(code, chain(err))
}

/// Returns the message of `err` followed by those of its sources, each after `: `.
pub fn chain(err: &dyn std::error::Error) -> String {
    let mut message = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_maps_to_a_documented_exit_code() {
        for code in ErrorCode::ALL {
            let exit = code.exit_code();
            assert!(
                exit::TABLE.iter().any(|row| row.code == exit),
                "{code} → {exit}"
            );
            let json = serde_json::to_value(code).unwrap();
            assert_eq!(json, code.as_str());
        }
    }

    #[test]
    fn json_document_names_the_field() {
        let err = Error::invalid("accept.timeoutSec", "must be at most 3600");
        assert_eq!(
            err.to_json(),
            serde_json::json!({"error": {"code": "invalid_request", "message": "must be at most 3600", "field": "accept.timeoutSec"}})
        );
        assert_eq!(err.exit_code(), 2);
    }

    #[test]
    fn document_type_matches_the_printed_document() {
        for err in [Error::invalid("name", "bad name"), Error::internal("boom")] {
            let typed = serde_json::to_value(ErrorDocument::from(&err)).unwrap();
            assert_eq!(typed, err.to_json());
            let back: ErrorDocument = serde_json::from_value(err.to_json()).unwrap();
            assert_eq!(back, ErrorDocument::from(&err));
        }
    }
}
