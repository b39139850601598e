//! The command-line boundary every herd binary shares.
//!
//! A binary parses its arguments with clap, runs a command that returns
//! `Result<Output, herd_core::Error>`, and hands that to [`main`]. This crate is the only place
//! that writes to stdout and stderr and turns outcomes into exit codes, so `--json` output, error
//! documents and the exit-code table behave the same in every binary (docs/exit-codes.md).

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser};
use herd_core::{Error, ErrorCode, exit};
use herd_protocol::layout::Artifacts;
use serde::Serialize;

/// What a command produced: a JSON document, the human text, and the exit code.
///
/// Built with [`Output::ok`] or [`Output::streamed`]: a document that cannot be encoded is kept
/// as the internal error [`main`] reports instead of the output.
#[derive(Debug, Clone)]
pub struct Output {
    pub json: serde_json::Value,
    pub human: String,
    pub exit: i32,
    unencodable: Option<Error>,
}

impl Output {
    /// A successful output (exit 0) of `doc`, a protocol type or a `serde_json::Value`.
    pub fn ok(doc: impl Serialize, human: impl Into<String>) -> Output {
        let (json, unencodable) = match serde_json::to_value(doc) {
            Ok(json) => (json, None),
            Err(err) => (
                serde_json::Value::Null,
                Some(Error::internal(format!(
                    "cannot encode the JSON document: {err}"
                ))),
            ),
        };
        Output {
            json,
            human: human.into(),
            exit: exit::SUCCESS,
            unencodable,
        }
    }

    /// An output that prints nothing more (a stream that wrote its lines as it went).
    pub fn streamed(exit: i32) -> Output {
        Output {
            json: serde_json::Value::Null,
            human: String::new(),
            exit,
            unencodable: None,
        }
    }

    /// The output, or the internal error of a document that could not be encoded.
    pub fn into_result(self) -> Result<Output, Error> {
        match self.unencodable {
            Some(err) => Err(err),
            None => Ok(self),
        }
    }

    pub fn with_exit(mut self, code: i32) -> Output {
        self.exit = code;
        self
    }
}

/// Whether human output may be coloured: stdout is a terminal and `NO_COLOR` is not set
/// (<https://no-color.org>).
pub fn colour_stdout() -> bool {
    use std::io::IsTerminal;
    io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// One line of a JSON Lines stream (`doc` with its keys in byte order, as every `--json`
/// document), or its human form; used by streaming commands.
pub fn emit_line(json: bool, doc: &impl Serialize, human: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    if json {
        let value = serde_json::to_value(doc).map_err(io::Error::other)?;
        serde_json::to_writer(&mut out, &value)?;
        out.write_all(b"\n")?;
    } else {
        writeln!(out, "{human}")?;
    }
    out.flush()
}

/// Writes a diagnostic line to stderr.
pub fn diagnostic(line: &str) {
    let _ = writeln!(io::stderr().lock(), "{line}");
}

/// Whether standard input is a terminal: a person there can be asked a question.
pub fn stdin_is_terminal() -> bool {
    use std::io::IsTerminal;
    io::stdin().is_terminal()
}

/// Shows `text` on stdout now, as [`main`] shows a command's human output, for a command that
/// asks a question about it before it ends.
pub fn show(text: &str) {
    print_text(text);
}

/// Asks `question` (`… [y/N] `) on stderr and reads the answer, one line of stdin: `y` or `yes`,
/// in any case, is a yes; anything else, and the end of the input, a no.
pub fn confirm(question: &str) -> io::Result<bool> {
    {
        let mut err = io::stderr().lock();
        write!(err, "{question} [y/N] ")?;
        err.flush()?;
    }
    let mut answer = String::new();
    io::stdin().read_line(&mut answer)?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// The error of a subcommand a later change fills in: exit 70, never a fake success.
pub fn not_yet_implemented(command: &str) -> Error {
    Error::new(
        ErrorCode::Internal,
        format!("`{command}` is not yet implemented"),
    )
}

/// Where to find the runs: `--artifacts DIR` or `--parent-session FILE`.
#[derive(Debug, Clone, Default, Args)]
pub struct ArtifactsArgs {
    /// The artifacts directory [default: $HERD_ARTIFACTS, else the per-user state directory].
    #[arg(long, value_name = "DIR", global = true)]
    pub artifacts: Option<PathBuf>,
    /// The parent's Pi session file; artifacts live in `<its dir>/artifacts/<its id>/` unless
    /// --artifacts names the directory (then this only names the session a fork copies).
    #[arg(long, value_name = "FILE", global = true)]
    pub parent_session: Option<PathBuf>,
}

impl ArtifactsArgs {
    pub fn resolve(&self) -> Result<Artifacts, Error> {
        Artifacts::resolve(self.artifacts.as_deref(), self.parent_session.as_deref())
    }
}

/// Parses `args` as `P`, runs `run`, prints the result and returns the exit code.
///
/// `json` tells from the parsed arguments whether `--json` was given. Usage errors print as
/// clap formats them (or as a JSON error document when `--json` is among the arguments) and exit
/// 2; `--help` and `--version` exit 0.
pub fn main<P, I>(
    args: I,
    json: impl FnOnce(&P) -> bool,
    run: impl FnOnce(P) -> Result<Output, Error>,
) -> ExitCode
where
    P: Parser,
    I: IntoIterator<Item = OsString>,
{
    let args: Vec<OsString> = args.into_iter().collect();
    let wants_json = wants_json(&args);
    let parsed = match P::try_parse_from(&args) {
        Ok(parsed) => parsed,
        Err(err) => {
            let code = err.exit_code();
            if wants_json && code != 0 {
                let message = err.render().to_string();
                let first = message
                    .lines()
                    .next()
                    .unwrap_or("usage error")
                    .trim_start_matches("error: ")
                    .to_owned();
                let mut doc = Error::new(ErrorCode::InvalidRequest, first);
                if let Some(clap::error::ContextValue::String(arg)) =
                    err.get(clap::error::ContextKind::InvalidArg)
                {
                    doc = doc.with_field(arg.clone());
                }
                print_json(&doc.to_json());
            } else {
                let _ = err.print();
            }
            return exit_code(if code == 0 {
                exit::SUCCESS
            } else {
                exit::USAGE
            });
        }
    };
    let json = json(&parsed);
    match run(parsed).and_then(Output::into_result) {
        Ok(output) => {
            if json {
                // A stream (JSON Lines) has printed its documents already.
                if !output.json.is_null() {
                    print_json(&output.json);
                }
            } else if !output.human.is_empty() {
                print_text(&output.human);
            }
            exit_code(output.exit)
        }
        Err(err) => {
            if json {
                print_json(&err.to_json());
            } else {
                diagnostic(&format!("error: {}", err.message));
                if let Some(field) = &err.field {
                    diagnostic(&format!("  field: {field}"));
                }
            }
            exit_code(err.exit_code())
        }
    }
}

/// Whether `--json` is among the options of `args` (a command line with the program name):
/// what follows `--` is a child's argv, whose `--json` is not ours.
fn wants_json(args: &[OsString]) -> bool {
    args.iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .any(|a| a == "--json")
}

fn print_json(value: &serde_json::Value) {
    let mut out = io::stdout().lock();
    // A closed pipe on stdout is not an error worth reporting (as ripgrep does).
    if serde_json::to_writer(&mut out, value).is_ok() {
        let _ = out.write_all(b"\n");
    }
    let _ = out.flush();
}

fn print_text(text: &str) {
    let mut out = io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = out.write_all(b"\n");
    }
    let _ = out.flush();
}

fn exit_code(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(exit::INTERNAL as u8))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_that_cannot_be_encoded_is_an_internal_error() {
        let ok = Output::ok(serde_json::json!({"a": 1}), "a")
            .into_result()
            .unwrap();
        assert_eq!(
            (ok.json, ok.exit),
            (serde_json::json!({"a": 1}), exit::SUCCESS)
        );
        // A map whose keys are not strings has no JSON form.
        let doc: std::collections::BTreeMap<(u8, u8), u8> = [((1, 2), 3)].into();
        let err = Output::ok(doc, "a").into_result().unwrap_err();
        assert_eq!(err.code, ErrorCode::Internal);
    }

    fn check(args: &[&str], expect: bool) {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        assert_eq!(wants_json(&args), expect, "{args:?}");
    }

    #[test]
    fn json_is_asked_for_before_the_child_argv_only() {
        check(&["herd-launch", "spawn", "--json"], true);
        check(&["herd-launch", "--json", "spawn", "--", "sh"], true);
        check(&["herd-launch", "spawn", "--", "sh", "--json"], false);
        check(&["--json"], false);
        check(&["herd-watch", "status"], false);
    }
}
