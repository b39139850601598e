//! Encoded text that remembers where its escape sequences are, so abbreviation never cuts one.
//!
//! Every encoder of this module turns one input character into one *atom*: the character
//! itself, or an escape sequence such as `\u001b` or `&lt;`. Bounds are counted in characters
//! (Unicode scalar values) and abbreviation only cuts between atoms, so an abbreviated value
//! never ends in half an escape that a reader would take for something else.

/// Text built from atoms, with the position of every atom longer than one character.
#[derive(Debug, Default)]
pub(crate) struct Encoded {
    text: String,
    n_chars: usize,
    /// `(char offset, char length)` of each multi-character atom, in increasing offset.
    escapes: Vec<(usize, usize)>,
}

impl Encoded {
    pub(crate) fn with_capacity(n_bytes: usize) -> Encoded {
        Encoded {
            text: String::with_capacity(n_bytes),
            n_chars: 0,
            escapes: Vec::new(),
        }
    }

    /// Appends a character that stands for itself.
    pub(crate) fn push_char(&mut self, c: char) {
        self.text.push(c);
        self.n_chars += 1;
    }

    /// Appends an escape sequence, an atom that must stay whole.
    pub(crate) fn push_escape(&mut self, escape: &str) {
        let len = escape.chars().count();
        if len > 1 {
            self.escapes.push((self.n_chars, len));
        }
        self.text.push_str(escape);
        self.n_chars += len;
    }

    /// Appends `\uXXXX` for a character of the Basic Multilingual Plane.
    pub(crate) fn push_unicode_escape(&mut self, c: char) {
        self.push_escape(&format!("\\u{:04x}", u32::from(c)));
    }

    pub(crate) fn n_chars(&self) -> usize {
        self.n_chars
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    pub(crate) fn into_string(self) -> String {
        self.text
    }

    /// Returns the text when it has at most `max_chars` characters; otherwise its head and tail
    /// around `marker`, the head keeping `ceil(n/2)` and the tail `floor(n/2)` of the
    /// `n = max_chars - len(marker)` characters left, each rounded inward to a whole atom.
    ///
    /// The result has at most `max(max_chars, len(marker))` characters: a bound smaller than
    /// the marker leaves the marker alone.
    pub(crate) fn abbreviate(&self, max_chars: usize, marker: &str) -> String {
        if self.n_chars <= max_chars {
            return self.text.clone();
        }
        let n = max_chars.saturating_sub(marker.chars().count());
        let head_end = self.align_down(n.div_ceil(2));
        let tail_start = self.align_up(self.n_chars - n / 2);
        let head = &self.text[..byte_offset(&self.text, head_end)];
        let tail = &self.text[byte_offset(&self.text, tail_start)..];
        let mut out = String::with_capacity(head.len() + marker.len() + tail.len());
        out.push_str(head);
        out.push_str(marker);
        out.push_str(tail);
        out
    }

    /// Moves a cut at char offset `at` back to the start of the atom it falls inside.
    fn align_down(&self, at: usize) -> usize {
        match self.escape_around(at) {
            Some((start, _)) => start,
            None => at,
        }
    }

    /// Moves a cut at char offset `at` forward to the end of the atom it falls inside.
    fn align_up(&self, at: usize) -> usize {
        match self.escape_around(at) {
            Some((start, len)) => start + len,
            None => at,
        }
    }

    /// Returns the escape that a cut at `at` would split, if any.
    fn escape_around(&self, at: usize) -> Option<(usize, usize)> {
        let idx = self.escapes.partition_point(|&(start, _)| start < at);
        let &(start, len) = self.escapes.get(idx.checked_sub(1)?)?;
        (start + len > at).then_some((start, len))
    }
}

/// Returns the byte offset of the character at char offset `at` (the length when past the end).
fn byte_offset(text: &str, at: usize) -> usize {
    text.char_indices().nth(at).map_or(text.len(), |(i, _)| i)
}

/// Returns the number of characters in `text`, the unit of every bound in this module.
pub(crate) fn n_chars(text: &str) -> usize {
    text.chars().count()
}

/// Formats `n` with a comma between groups of three digits, as the messages write counts.
pub(crate) fn group_thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(d);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds an `Encoded` where `#` stands for a three-character escape `<#>`.
    fn encoded(pattern: &str) -> Encoded {
        let mut enc = Encoded::default();
        for c in pattern.chars() {
            if c == '#' {
                enc.push_escape("<#>")
            } else {
                enc.push_char(c)
            }
        }
        enc
    }

    fn check(pattern: &str, max_chars: usize, expect: &str) {
        let actual = encoded(pattern).abbreviate(max_chars, "~");
        assert_eq!(actual, expect, "abbreviate({pattern:?}, {max_chars})");
        assert!(
            n_chars(&actual) <= max_chars.max(1),
            "{actual:?} exceeds {max_chars}"
        );
    }

    #[test]
    fn abbreviation_keeps_head_and_tail_and_whole_escapes() {
        check("abcdef", 6, "abcdef");
        check("abcdefg", 6, "abc~fg");
        check("abcdefg", 5, "ab~fg");
        check("abcdefg", 1, "~");
        check("abcdefg", 0, "~");
        // The head would end inside `<#>`; the cut moves back to before it.
        check("ab#cdefgh", 7, "ab~fgh");
        // The tail would start inside `<#>`; the cut moves forward past it.
        check("abcdefg#h", 6, "abc~h");
        check("###", 8, "<#>~<#>");
        check("###", 7, "<#>~<#>");
        check("###", 6, "<#>~");
    }

    #[test]
    fn counts_are_grouped_by_thousands() {
        assert_eq!(group_thousands(0), "0");
        assert_eq!(group_thousands(999), "999");
        assert_eq!(group_thousands(1_000), "1,000");
        assert_eq!(group_thousands(16_000), "16,000");
        assert_eq!(group_thousands(1_234_567), "1,234,567");
    }
}
