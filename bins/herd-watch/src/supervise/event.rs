//! What supervision reports: one [`Event`] per status change, needs-input transition and result,
//! as a JSON line of `follow --json` and as a host line.

use herd_protocol::needs_input::NeedsInput;
use herd_protocol::watch::WatchEvent;

use crate::projection::Projection;
use herd_protocol::result::RunResult;

/// What supervision reports.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Status {
        run_id: String,
        name: String,
        projection: Projection,
    },
    Stalled {
        run_id: String,
        name: String,
        line: String,
    },
    Recovered {
        run_id: String,
        name: String,
        line: String,
    },
    Notice {
        run_id: String,
        message: String,
    },
    /// The run started waiting for a person (once per transition).
    NeedsInput {
        run_id: String,
        name: String,
        input: NeedsInput,
    },
    Result(Box<RunResult>),
}

impl Event {
    pub fn run_id(&self) -> &str {
        match self {
            Event::Status { run_id, .. }
            | Event::Stalled { run_id, .. }
            | Event::Recovered { run_id, .. }
            | Event::Notice { run_id, .. }
            | Event::NeedsInput { run_id, .. } => run_id,
            Event::Result(result) => &result.run_id,
        }
    }

    /// The JSON Lines document of the event.
    pub fn to_json(&self) -> WatchEvent {
        match self {
            Event::Status {
                run_id,
                name,
                projection,
            } => WatchEvent::Status {
                run_id: run_id.clone(),
                name: name.clone(),
                label: projection.label,
                detail: projection.detail.clone(),
                since_ms: projection.since_ms,
            },
            Event::Stalled { run_id, name, line } => WatchEvent::Stalled {
                run_id: run_id.clone(),
                name: name.clone(),
                message: line.clone(),
            },
            Event::Recovered { run_id, name, line } => WatchEvent::Recovered {
                run_id: run_id.clone(),
                name: name.clone(),
                message: line.clone(),
            },
            Event::Notice { run_id, message } => WatchEvent::Notice {
                run_id: run_id.clone(),
                message: message.clone(),
            },
            Event::NeedsInput {
                run_id,
                name,
                input,
            } => WatchEvent::NeedsInput {
                run_id: run_id.clone(),
                name: name.clone(),
                reason: input.reason,
                since_ms: input.since_ms,
                kind: input.kind.clone(),
                title: input.title.clone(),
                message: needs_input_line(name, input),
            },
            Event::Result(result) => WatchEvent::result(result),
        }
    }

    /// The one-line human form (results print their whole message).
    pub fn human(&self) -> String {
        match self {
            Event::Status {
                name, projection, ..
            } => {
                let head = format!(
                    "{}: {}",
                    herd_core::escape::encode_host_value(name, 80),
                    projection.label.as_str()
                );
                match &projection.detail {
                    Some(detail) => {
                        format!("{head} · {}", crate::projection::encoded_detail(detail))
                    }
                    None => head,
                }
            }
            Event::Stalled { line, .. } | Event::Recovered { line, .. } => line.clone(),
            Event::Notice { message, .. } => message.clone(),
            Event::NeedsInput { name, input, .. } => needs_input_line(name, input),
            Event::Result(result) => herd_core::escape::for_people(&result.message),
        }
    }
}

/// The one-line notice of a run that started waiting for a person: `"Scout" is waiting for
/// input: dialog (confirm "Delete?").` The name and the title are encoded.
pub fn needs_input_line(name: &str, input: &NeedsInput) -> String {
    let mut line = format!(
        "{} is waiting for input: {}",
        quoted(name),
        input.reason.as_str()
    );
    match (&input.kind, &input.title) {
        (Some(kind), Some(title)) => line.push_str(&format!(
            " ({} \"{}\")",
            herd_core::escape::encode_host_value(kind, 20),
            herd_core::escape::encode_host_value(title, 80)
        )),
        (Some(kind), None) => line.push_str(&format!(
            " ({})",
            herd_core::escape::encode_host_value(kind, 20)
        )),
        _ => {}
    }
    line.push('.');
    line
}

pub(super) fn quoted(name: &str) -> String {
    herd_core::escape::json_string(&herd_core::escape::abbreviate_name(name))
}
