//! Character tails of a check's output: the last 4,000 characters a child gets back and the
//! last 1,500 the parent's `Check output` line shows.
//!
//! A check prints bytes, not text. The bytes are decoded as UTF-8 lossily first (an invalid
//! sequence becomes one U+FFFD), and a "character" is then a Unicode scalar value of that text,
//! so a tail is never cut inside a multibyte character. When the bytes are themselves the tail of
//! a longer stream (the capture kept only its end), a multibyte character cut by that capture at
//! the very start is dropped rather than shown as U+FFFD: it was cut by herd, not printed broken
//! by the check.

/// The characters of output a child gets back after a failed check, and the details keep.
pub const CHILD_TAIL_CHARS: usize = 4_000;
/// The characters of output the parent's `Check output` line shows.
pub const LINE_TAIL_CHARS: usize = 1_500;
/// The bytes a capture must keep so that [`CHILD_TAIL_CHARS`] characters survive: a UTF-8
/// character is at most 4 bytes, plus up to 3 bytes of a character cut at the start.
pub const CAPTURE_BYTES: usize = CHILD_TAIL_CHARS * 4 + 3;

/// A tail of text and whether anything before it was left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tail {
    pub text: String,
    pub truncated: bool,
}

/// Returns the last `max_chars` characters of `bytes` decoded lossily.
///
/// `head_cut` says the bytes are already the end of a longer stream; the result is then marked
/// truncated and a partial character at the start is dropped.
pub fn tail_chars(bytes: &[u8], head_cut: bool, max_chars: usize) -> Tail {
    // Only the last `4 * max_chars + 3` bytes can contribute; decoding more would be waste.
    let window = max_chars.saturating_mul(4).saturating_add(3);
    let (mut slice, mut cut) = if bytes.len() > window {
        (&bytes[bytes.len() - window..], true)
    } else {
        (bytes, head_cut)
    };
    if cut {
        let skip = slice
            .iter()
            .take(3)
            .take_while(|byte| is_continuation(**byte))
            .count();
        slice = &slice[skip..];
    }
    let text = String::from_utf8_lossy(slice);
    let n_chars = text.chars().count();
    if n_chars > max_chars {
        cut = true;
        let start = text
            .char_indices()
            .nth(n_chars - max_chars)
            .map_or(text.len(), |(idx, _)| idx);
        Tail {
            text: text[start..].to_owned(),
            truncated: cut,
        }
    } else {
        Tail {
            text: text.into_owned(),
            truncated: cut,
        }
    }
}

/// Returns the last `max_chars` characters of `text`.
pub fn tail_str(text: &str, max_chars: usize) -> &str {
    let n_chars = text.chars().count();
    if n_chars <= max_chars {
        return text;
    }
    let start = text
        .char_indices()
        .nth(n_chars - max_chars)
        .map_or(text.len(), |(idx, _)| idx);
    &text[start..]
}

fn is_continuation(byte: u8) -> bool {
    byte & 0b1100_0000 == 0b1000_0000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_output_is_kept_whole() {
        let tail = tail_chars("héllo".as_bytes(), false, 10);
        assert_eq!(
            tail,
            Tail {
                text: "héllo".into(),
                truncated: false
            }
        );
    }

    #[test]
    fn tails_count_characters_not_bytes() {
        // 5,000 three-byte characters then a marker: the tail is exactly 4,000 characters.
        let mut text = "€".repeat(5_000);
        text.push('!');
        let tail = tail_chars(text.as_bytes(), false, CHILD_TAIL_CHARS);
        assert!(tail.truncated);
        assert_eq!(tail.text.chars().count(), 4_000);
        assert!(tail.text.ends_with("€!"));
        assert_eq!(tail_str(&tail.text, LINE_TAIL_CHARS).chars().count(), 1_500);
    }

    #[test]
    fn a_character_cut_by_the_capture_is_dropped() {
        // "€" is E2 82 AC; a capture that kept only "82 AC x" cut it.
        let tail = tail_chars(&[0x82, 0xAC, b'x'], true, 10);
        assert_eq!(
            tail,
            Tail {
                text: "x".into(),
                truncated: true
            }
        );
        // Without a cut, the same bytes are what the check printed: shown as replacement.
        let tail = tail_chars(&[0x82, 0xAC, b'x'], false, 10);
        assert_eq!(tail.text, "\u{FFFD}\u{FFFD}x");
    }

    #[test]
    fn invalid_utf8_is_decoded_lossily() {
        let tail = tail_chars(b"ok\xff\xfeend", false, 4);
        assert_eq!(tail.text, "\u{FFFD}end");
        assert!(tail.truncated);
    }

    #[test]
    fn the_window_cut_lands_on_a_character_boundary() {
        // Four-byte characters with a one-byte prefix so the byte window starts mid-character.
        let mut bytes = vec![b'a'];
        for _ in 0..10 {
            bytes.extend_from_slice("𝄞".as_bytes());
        }
        for max in 1..=10 {
            let tail = tail_chars(&bytes, false, max);
            assert_eq!(tail.text, "𝄞".repeat(max), "max {max}");
            assert!(tail.truncated);
        }
    }
}
