//! Fuzzes the message builder: one start tag and one end tag, in order, host lines that stay
//! single, the session reference and the continuation line kept, and the 16,000-character
//! bound whenever the host parts fit.

#![no_main]

#[path = "../../libs/herd-core/tests/core/escape_invariants.rs"]
mod escape_invariants;

use escape_invariants::check_message;
use herd_core::escape::{
    Evidence, MESSAGE_MAX_CHARS, Message, Noun, ReportKind, encode_host_value, encode_list,
};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    name: String,
    kind: u8,
    body: String,
    /// Repeats the body so that bounding has work to do.
    body_repeat: u8,
    status: String,
    check: Option<String>,
    evidence: Vec<(bool, String, u16)>,
    session: Option<String>,
    /// Whether host values are encoded, as herd does, or passed raw by mistake.
    encode: bool,
    /// A limit other than the default.
    limit: Option<u16>,
    has_report: bool,
}

fuzz_target!(|input: Input| {
    let value = |raw: &str, max: usize| {
        if input.encode {
            encode_host_value(raw, max)
        } else {
            raw.to_owned()
        }
    };
    let mut message = Message::new(format!(
        "Sub-agent \"{}\" completed.",
        value(&input.status, 500)
    ));
    if let Some(check) = &input.check {
        message = message.with_check(format!("Check: {}", value(check, 1_000)));
    }
    if input.has_report {
        let kind = ReportKind::ALL[usize::from(input.kind) % ReportKind::ALL.len()];
        let repeat = usize::from(input.body_repeat)
            .min(40_000 / input.body.len().max(1))
            .max(1);
        message = message.with_report(input.name.clone(), kind, input.body.repeat(repeat));
    }
    for (is_file_list, raw, max) in &input.evidence {
        let max = usize::from(*max);
        message = message.with_evidence(if *is_file_list {
            let files: Vec<&str> = raw.split(' ').collect();
            let list = if input.encode {
                encode_list(&files, max, Noun::FILES)
            } else {
                raw.clone()
            };
            Evidence::file_list(format!("Changed: {list}"))
        } else {
            Evidence::detail(format!("Error: {}", value(raw, max)))
        });
    }
    if let Some(session) = &input.session {
        message = message.with_session(format!("Session: {}", value(session, 4_000)));
    }

    let limit = input.limit.map_or(MESSAGE_MAX_CHARS, usize::from);
    let rendered = message.render_within(limit);
    if let Err(why) = check_message(&message, &rendered, limit) {
        panic!("{why}\n{message:?}\n{}", rendered.text);
    }
});
