//! Stable text for snapshots: what differs from one run to the next (temporary paths, PIDs, the
//! version of a tool) replaced by a name in brackets, so a snapshot holds the whole text.
//!
//! ```
//! use herd_e2e::redact::Redactions;
//! let text = Redactions::new().text("12345", "[PID]").apply("the child (PID 12345) is alive");
//! assert_eq!(text, "the child (PID [PID]) is alive");
//! ```

use std::path::Path;

use regex_lite::Regex;

/// Replacements applied in the order they were added, each to every occurrence.
#[derive(Debug, Default, Clone)]
pub struct Redactions(Vec<(Regex, String)>);

impl Redactions {
    /// No replacements yet.
    pub fn new() -> Redactions {
        Redactions::default()
    }

    /// Replaces `path` (as displayed) with `[name]`. Add a longer path before a shorter one
    /// that contains it.
    pub fn path(self, path: &Path, name: &str) -> Redactions {
        self.text(&path.display().to_string(), &format!("[{name}]"))
    }

    /// Replaces `from` with `to`; an empty `from` is ignored.
    pub fn text(self, from: &str, to: &str) -> Redactions {
        if from.is_empty() {
            return self;
        }
        self.pattern(&regex_lite::escape(from), &to.replace('$', "$$"))
    }

    /// Replaces every match of the regular expression `pattern` with `to` (`$1` names a group;
    /// `(?m)` makes `^` and `$` match at each line).
    ///
    /// # Panics
    ///
    /// When `pattern` is not a regular expression.
    pub fn pattern(mut self, pattern: &str, to: &str) -> Redactions {
        let re = Regex::new(pattern)
            .unwrap_or_else(|err| panic!("{pattern:?} is not a regular expression: {err}"));
        self.0.push((re, to.to_owned()));
        self
    }

    /// `text` with every replacement applied.
    pub fn apply(&self, text: &str) -> String {
        self.0.iter().fold(text.to_owned(), |text, (re, to)| {
            re.replace_all(&text, to.as_str()).into_owned()
        })
    }
}
