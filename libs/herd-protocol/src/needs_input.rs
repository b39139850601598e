//! Whether a child waits for a person: the child's own sidecar `<session>.needs-input.json`,
//! and what herd-watch makes of it (and of a help request) in `status` and `follow`.
//!
//! The child extension writes the sidecar when Pi opens a dialog (Pi 1.6's `ui_prompt_start`),
//! closes it (`ui_prompt_end`), when the child's run settled (`agent_settled`), and when new work
//! begins (`input`, `agent_start`). herd never guesses this from a pane's screen: a child that is
//! merely slow writes nothing here and is not waiting.

use std::path::Path;

use herd_core::sidecar;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::child::{ONE_LINE_PATTERN, SHORT_TEXT_MAX};
use crate::session_file::SessionFile;

/// What the child is doing, as far as a person is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChildState {
    /// A run is in progress, or nothing has settled yet: nobody is asked anything.
    Working,
    /// The child's run settled (`agent_settled`): an interactive child waits for its person.
    Settled,
    /// A dialog is open inside the child (`ui_prompt_start` without its `ui_prompt_end`).
    Dialog,
}

/// `<session>.needs-input.json`: whether the child waits for a person, written atomically by the
/// child extension each time that changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(
    title = "NeedsInputFile",
    description = "`<session>.needs-input.json`: whether the child waits for a person (a dialog open, its run settled), written atomically by the child extension each time that changes. A file that breaks these rules is read as unknown: not waiting."
)]
pub struct NeedsInputFile {
    #[schemars(schema_with = "crate::session_file::version_of::<NeedsInputFile>")]
    pub version: u64,
    /// Must equal the run id.
    #[schemars(length(max = SHORT_TEXT_MAX), pattern(ONE_LINE_PATTERN))]
    pub running_child_id: String,
    /// +1 per write.
    pub sequence: u64,
    pub state: ChildState,
    /// Since when (ms since the epoch) the state holds.
    pub since: u64,
    /// The dialog's kind (`select`, `confirm`, `input`, `editor`, `custom`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = SHORT_TEXT_MAX), pattern(ONE_LINE_PATTERN))]
    pub kind: Option<String>,
    /// The dialog's title, as the child's Pi gave it (child text: shown encoded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = SHORT_TEXT_MAX), pattern(ONE_LINE_PATTERN))]
    pub title: Option<String>,
}

impl NeedsInputFile {
    /// The file as the child writes it, its version stamped.
    pub(crate) fn encode(&self) -> Result<Vec<u8>, sidecar::Error> {
        crate::session_file::compact(&NeedsInputFile {
            version: <NeedsInputFile as SessionFile>::VERSION,
            ..self.clone()
        })
    }

    /// Parses the sidecar and checks what serde cannot: the version, one-line short texts. Its
    /// readers take a refused file as unknown (not waiting), and one of another run too
    /// ([`NeedsInputFile::of_run`]).
    pub(crate) fn decode(bytes: &[u8], path: &Path) -> Result<NeedsInputFile, sidecar::Error> {
        let file: NeedsInputFile =
            serde_json::from_slice(bytes).map_err(|source| sidecar::Error::Malformed {
                path: path.to_path_buf(),
                source,
            })?;
        if file.version != <NeedsInputFile as SessionFile>::VERSION {
            return Err(sidecar::Error::invalid(
                path,
                "version",
                format!(
                    "is {}, not {}",
                    file.version,
                    <NeedsInputFile as SessionFile>::VERSION
                ),
            ));
        }
        for (key, text) in [("kind", &file.kind), ("title", &file.title)] {
            if text
                .as_ref()
                .is_some_and(|t| t.chars().count() > SHORT_TEXT_MAX || t.contains(['\r', '\n']))
            {
                return Err(sidecar::Error::invalid(path, key, "is not a short line"));
            }
        }
        Ok(file)
    }

    /// The file, when it is of run `run_id`.
    pub fn of_run(self, run_id: &str) -> Option<NeedsInputFile> {
        (self.running_child_id == run_id).then_some(self)
    }
}

/// Why a run waits for input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InputReason {
    /// The child asked for help (`caller_ping`) and waits for the answer.
    HelpRequest,
    /// A dialog is open inside the child (a question, a confirmation, a permission).
    Dialog,
    /// An interactive child's run settled: it waits for its person.
    TurnSettled,
}

impl InputReason {
    /// The words of the reason in a status line and a notice.
    pub fn as_str(self) -> &'static str {
        match self {
            InputReason::HelpRequest => "help request",
            InputReason::Dialog => "dialog",
            InputReason::TurnSettled => "turn settled",
        }
    }
}

/// What a run waiting for input waits on: the reason, since when, and (for a dialog) its kind
/// and title as the child gave them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NeedsInput {
    pub reason: InputReason,
    pub since_ms: u64,
    /// A dialog's kind (`confirm`, `select`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// A dialog's title, raw (child text); host lines show it encoded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::SessionFiles;

    #[test]
    fn the_reader_takes_only_this_runs_well_formed_file() {
        let dir = tempfile::tempdir().unwrap();
        let files = SessionFiles::new(dir.path().join("s.jsonl"));
        let read = |text: &str| {
            std::fs::write(files.needs_input(), text).unwrap();
            files
                .read::<NeedsInputFile>()
                .ok()
                .flatten()
                .and_then(|f| f.of_run("r1"))
        };
        let file = read(r#"{"version":1,"runningChildId":"r1","sequence":3,"state":"dialog","since":7,"kind":"confirm","title":"Delete?"}"#).unwrap();
        assert_eq!(
            (file.state, file.kind.as_deref(), file.title.as_deref()),
            (ChildState::Dialog, Some("confirm"), Some("Delete?"))
        );
        assert!(
            read(r#"{"version":1,"runningChildId":"r2","sequence":3,"state":"dialog","since":7}"#)
                .is_none()
        );
        assert!(
            read(r#"{"version":2,"runningChildId":"r1","sequence":3,"state":"dialog","since":7}"#)
                .is_none()
        );
        assert!(
            read(r#"{"version":0,"runningChildId":"r1","sequence":3,"state":"dialog","since":7}"#)
                .is_none()
        );
        assert!(
            read(r#"{"version":1,"runningChildId":"r1","sequence":3,"state":"asleep","since":7}"#)
                .is_none()
        );
        assert!(read(r#"{"version":1,"runningChildId":"r1","sequence":3,"state":"dialog","since":7,"title":"a\nb"}"#).is_none());
        assert!(read(&format!(r#"{{"version":1,"runningChildId":"r1","sequence":3,"state":"dialog","since":7,"kind":"{}"}}"#, "k".repeat(SHORT_TEXT_MAX + 1))).is_none());
        assert!(read("{").is_none());
        std::fs::write(files.needs_input(), vec![b' '; 16 * 1024 + 1]).unwrap();
        assert!(files.read::<NeedsInputFile>().is_err(), "beyond its bound");
    }
}
