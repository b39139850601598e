//! Child-authored text on its way to the parent: the `<subagent_report>` block, host-line
//! encoding, the 16,000-character message bound and the expanded terminal view.
//!
//! Text a child wrote reaches the parent only inside the block, and the block cannot be closed
//! or reopened from inside: every `<subagent_report` and `</subagent_report`, in any letter
//! case, becomes `&lt;…` ([`report_block`]). Host lines that carry child-influenced values
//! (a relayed provider error, the model a transcript reports, file names, task ids, activity
//! labels) hold each value encoded on one line ([`encode_host_value`], [`encode_list`]), so a
//! child cannot start a host line such as `Parent action:`. A [`Message`] puts the parts
//! together within [`MESSAGE_MAX_CHARS`] without ever cutting host text, the tags, the session
//! reference or the continuation line. [`expanded_view`] fences the child's lines for a
//! terminal and shows its control characters instead of obeying them.
//!
//! Every bound is counted in characters (Unicode scalar values), and everything here is a pure
//! function of its input.

mod encoded;
mod host;
mod message;
mod report;
mod view;

pub use host::{
    ABBREVIATED_MARKER, Noun, encode_host_line, encode_host_value, encode_list, is_host_escaped,
    json_string,
};
pub use message::{
    BODY_MAX_CHARS, CHECK_MAX_CHARS, CONTINUATION_LINE, CONTINUATION_MAX_CHARS, EVIDENCE_MAX_CHARS,
    Evidence, EvidenceClass, FULL_OUTPUT_MAX_CHARS, MESSAGE_MAX_CHARS, Message,
    RESULT_ABBREVIATED_MARKER, Rendered, Report, SESSION_MAX_CHARS, STATUS_MAX_CHARS,
    bounded_report, bounded_report_kept_in, for_people, result_abbreviated_marker,
};
pub use report::{
    CLOSE_TAG, NAME_MAX_CHARS, OPEN_TAG_START, ReportKind, abbreviate_name, escape_report_tags,
    framing_sentence, open_tag, report_block,
};
pub use view::expanded_view;
