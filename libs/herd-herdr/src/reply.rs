//! The reply envelope of a Herdr CLI call, read strictly.
//!
//! Herdr prints success as one JSON document `{"id":…,"result":{"type":…,…}}` on stdout
//! (exit 0), failure as `{"id":…,"error":{"code","message"}}` on stderr (exit 1), and a
//! plain-text usage message on stderr for a command line it does not accept (exit 2). Some
//! commands print nothing on success (`pane run`, `pane send-keys`) and `pane read` prints the
//! pane's text itself. An error document is honoured on either stream, and a bare
//! `pane_not_found` in plain text as well (docs/protocol.md, "Herdr"); anything else that is not the
//! expected success is an error naming the command, never a success.

use std::ffi::OsString;

use serde_json::Value;

use crate::error::{Error, PANE_MISSING_CODES};
use crate::json::{Node, Problem};

/// How many bytes of unexpected output an error message quotes.
const EXCERPT: usize = 300;

/// One Herdr CLI call: the command's name (for errors), its argv after `herdr`, and whether it
/// changes anything (a timed-out or unreadable change is uncertain).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Request {
    pub command: &'static str,
    pub args: Vec<OsString>,
    pub mutating: bool,
}

impl Request {
    pub(crate) fn read(command: &'static str) -> Request {
        Request {
            command,
            args: command.split(' ').map(OsString::from).collect(),
            mutating: false,
        }
    }

    pub(crate) fn change(command: &'static str) -> Request {
        Request {
            mutating: true,
            ..Request::read(command)
        }
    }

    pub(crate) fn arg(mut self, arg: impl Into<OsString>) -> Request {
        self.args.push(arg.into());
        self
    }

    pub(crate) fn flag(self, name: &str, value: impl Into<OsString>) -> Request {
        self.arg(name).arg(value)
    }

    pub(crate) fn flag_if(self, on: bool, name: &str) -> Request {
        if on { self.arg(name) } else { self }
    }

    pub(crate) fn protocol(&self, problem: impl Into<String>) -> Error {
        Error::Protocol {
            command: self.command,
            problem: problem.into(),
            mutating: self.mutating,
        }
    }
}

/// How the Herdr process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    Code(i32),
    Signal(i32),
}

/// What a finished Herdr process left: its exit and its (capped) output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reply {
    pub exit: Exit,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Whether either stream hit the output cap.
    pub truncated: bool,
}

/// Returns the failure a reply reports, if it reports one.
fn failure(req: &Request, reply: &Reply) -> Option<Error> {
    if reply.truncated {
        return Some(req.protocol("the output exceeds the capture limit"));
    }
    for stream in [&reply.stderr, &reply.stdout] {
        match error_document(stream) {
            Some(Ok((code, message))) => return Some(remote(req, code, message)),
            Some(Err(problem)) => return Some(req.protocol(problem)),
            None => {}
        }
        let text = String::from_utf8_lossy(stream);
        if let Some(code) = PANE_MISSING_CODES.iter().find(|code| text.trim() == **code) {
            return Some(Error::Remote {
                command: req.command,
                code: (*code).to_owned(),
                message: "the pane does not exist".to_owned(),
            });
        }
    }
    match reply.exit {
        Exit::Code(0) => None,
        Exit::Code(2) => Some(Error::Usage {
            command: req.command,
            message: excerpt(&reply.stderr),
        }),
        Exit::Code(code) => Some(req.protocol(format!(
            "exit status {code} without an error reply: {}",
            excerpt(&reply.stderr)
        ))),
        Exit::Signal(signal) => Some(Error::Unavailable {
            command: req.command,
            reason: format!("killed by signal {signal}"),
        }),
    }
}

/// Reads an `{"error":{"code","message"}}` document; `None` when the text is not one.
fn error_document(bytes: &[u8]) -> Option<Result<(String, String), Problem>> {
    let value: Value = serde_json::from_slice(bytes.trim_ascii()).ok()?;
    value.get("error")?;
    let root = Node::root(&value, "reply");
    let read = || -> Result<(String, String), Problem> {
        let error = root.req("error")?;
        let code = error.req_id("code")?;
        let message = error.opt_str("message")?.unwrap_or_default();
        Ok((code, message))
    };
    Some(read())
}

fn remote(req: &Request, code: String, message: String) -> Error {
    match code.as_str() {
        // No server, or one of another protocol: Herdr did not take the request at all.
        "server_not_running" | "protocol_mismatch" => Error::Unavailable {
            command: req.command,
            reason: format!("{code}: {message}"),
        },
        _ => Error::Remote {
            command: req.command,
            code,
            message,
        },
    }
}

/// Quotes the start of unexpected output on one line.
fn excerpt(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim();
    if text.is_empty() {
        return "no output".to_owned();
    }
    let mut out: String = text
        .chars()
        .take(EXCERPT)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.chars().count() > EXCERPT {
        out.push('…');
    }
    out
}

/// Returns the `result` object of a JSON success whose `result.type` is one of `types`.
pub(crate) fn json(req: &Request, reply: &Reply, types: &[&str]) -> Result<Value, Error> {
    if let Some(err) = failure(req, reply) {
        return Err(err);
    }
    let value: Value = serde_json::from_slice(&reply.stdout)
        .map_err(|err| req.protocol(format!("the reply is not JSON ({err})")))?;
    let Value::Object(mut envelope) = value else {
        return Err(req.protocol("the reply is not a JSON object"));
    };
    let result = envelope
        .remove("result")
        .ok_or_else(|| req.protocol("the reply has no result"))?;
    let root = Node::root(&result, "result");
    let kind = root
        .req("type")
        .and_then(|node| node.str().map(str::to_owned))
        .map_err(|problem| req.protocol(problem))?;
    if !types.contains(&kind.as_str()) {
        return Err(req.protocol(format!(
            "result.type is {kind:?}, expected {}",
            types.join(" or ")
        )));
    }
    Ok(result)
}

/// Accepts the success of a command that prints nothing.
pub(crate) fn silent(req: &Request, reply: &Reply) -> Result<(), Error> {
    if let Some(err) = failure(req, reply) {
        return Err(err);
    }
    if !reply.stdout.trim_ascii().is_empty() {
        return Err(req.protocol(format!(
            "expected no output, got: {}",
            excerpt(&reply.stdout)
        )));
    }
    Ok(())
}

/// Returns the text a command printed (`pane read`).
pub(crate) fn text(req: &Request, reply: &Reply) -> Result<String, Error> {
    if let Some(err) = failure(req, reply) {
        return Err(err);
    }
    Ok(String::from_utf8_lossy(&reply.stdout).into_owned())
}

/// Parses the `result` with `read`, turning a problem into an error naming the command.
pub(crate) fn parse<T>(
    req: &Request,
    result: &Value,
    read: impl FnOnce(&Node<'_>) -> Result<T, Problem>,
) -> Result<T, Error> {
    read(&Node::root(result, "result")).map_err(|problem| req.protocol(problem))
}

#[cfg(test)]
mod tests {
    use herd_core::ErrorCode;

    use super::*;
    use crate::recording::{self, Stream};

    /// What every recorded failure means to herd: the error kind, Herdr's code where it gave
    /// one, and the herd code.
    const FAILURES: &[(&str, &str, Option<&str>, ErrorCode)] = &[
        ("001", "unavailable", None, ErrorCode::Unavailable),
        (
            "024",
            "remote",
            Some("invalid_key"),
            ErrorCode::InvalidRequest,
        ),
        (
            "034",
            "remote",
            Some("invalid_request"),
            ErrorCode::InvalidRequest,
        ),
        (
            "035",
            "remote",
            Some("invalid_request"),
            ErrorCode::InvalidRequest,
        ),
        ("039", "remote", Some("pane_not_found"), ErrorCode::NotFound),
        (
            "043",
            "remote",
            Some("agent_not_found"),
            ErrorCode::NotFound,
        ),
        (
            "044",
            "remote",
            Some("agent_not_found"),
            ErrorCode::NotFound,
        ),
        ("047", "remote", Some("pane_not_found"), ErrorCode::NotFound),
        ("048", "remote", Some("pane_not_found"), ErrorCode::NotFound),
        ("049", "usage", None, ErrorCode::Unavailable),
        ("050", "usage", None, ErrorCode::Unavailable),
        (
            "059",
            "remote",
            Some("dirty_worktree_requires_force"),
            ErrorCode::Conflict,
        ),
        (
            "061",
            "remote",
            Some("not_linked_worktree"),
            ErrorCode::InvalidRequest,
        ),
        (
            "064",
            "remote",
            Some("not_git_worktree"),
            ErrorCode::InvalidRequest,
        ),
        (
            "065",
            "remote",
            Some("worktree_create_failed"),
            ErrorCode::Conflict,
        ),
        (
            "071",
            "remote",
            Some("unsupported_event_wait_match"),
            ErrorCode::Unavailable,
        ),
        ("080", "remote", Some("timeout"), ErrorCode::Timeout),
        (
            "094",
            "remote",
            Some("workspace_not_found"),
            ErrorCode::NotFound,
        ),
        ("096", "remote", Some("timeout"), ErrorCode::Timeout),
        ("097", "remote", Some("pane_not_found"), ErrorCode::NotFound),
        ("102", "unavailable", None, ErrorCode::Unavailable),
        ("108", "remote", Some("pane_not_found"), ErrorCode::NotFound),
    ];

    #[test]
    fn every_recorded_failure_maps_to_its_kind() {
        let all = recording::load(&recording::fixture_dir()).unwrap();
        let mut seen = Vec::new();
        for rec in all.iter().filter(|rec| rec.stream != Stream::File) {
            let reply = Reply {
                exit: Exit::Code(rec.exit),
                stdout: rec.stdout().to_vec(),
                stderr: rec.stderr().to_vec(),
                truncated: false,
            };
            let Some(err) = failure(&Request::read("pane get"), &reply) else {
                continue;
            };
            let number = rec.name.split('-').next().unwrap();
            let Some((_, kind, code, herd)) = FAILURES.iter().find(|row| row.0 == number) else {
                panic!("{} failed unexpectedly: {err:?}", rec.name);
            };
            let found_kind = match &err {
                Error::Unavailable { .. } => "unavailable",
                Error::Remote { .. } => "remote",
                Error::Usage { .. } => "usage",
                Error::Protocol { .. } => "protocol",
                Error::Timeout { .. } => "timeout",
            };
            assert_eq!(
                (found_kind, err.remote_code(), err.code()),
                (*kind, *code, *herd),
                "{}",
                rec.name
            );
            seen.push(number);
        }
        let expected: Vec<&str> = FAILURES.iter().map(|row| row.0).collect();
        assert_eq!(seen, expected, "every listed failure was recorded and seen");
    }

    #[test]
    fn every_recorded_success_is_not_a_failure() {
        // The complement: no recorded success is read as a failure by the envelope alone.
        let all = recording::load(&recording::fixture_dir()).unwrap();
        let successes = all.iter().filter(|rec| {
            rec.exit == 0
                && rec.stream != Stream::File
                && !rec.body.windows(8).any(|w| w == b"\"error\":")
        });
        for rec in successes {
            let reply = Reply {
                exit: Exit::Code(0),
                stdout: rec.stdout().to_vec(),
                stderr: rec.stderr().to_vec(),
                truncated: false,
            };
            assert_eq!(
                failure(&Request::read("pane get"), &reply),
                None,
                "{}",
                rec.name
            );
        }
    }

    #[test]
    fn excerpts_are_one_bounded_line() {
        assert_eq!(excerpt(b"  \n"), "no output");
        assert_eq!(excerpt(b"a\nb\tc\n"), "a b c");
        let long = excerpt("é".repeat(400).as_bytes());
        assert_eq!(long.chars().count(), EXCERPT + 1);
        assert!(long.ends_with('…'));
    }
}
