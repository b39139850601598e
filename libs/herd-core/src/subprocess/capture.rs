//! Output capping: a stream is kept up to its cap, its head or its tail, while its total is
//! counted.

use std::borrow::Cow;
use std::collections::VecDeque;

/// Which part of a stream to keep when it is longer than its cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Keep {
    /// The first bytes: right for answers parsed from the start (git, herdr replies).
    #[default]
    Head,
    /// The last bytes: right for logs and failing checks, where the end says what went wrong.
    Tail,
    /// No bytes: only how many of them equal the given byte ([`Captured::counted`]), for a
    /// listing that is counted as it streams and never held (the cap is not used).
    Count(u8),
}

/// What a child printed on one stream, bounded by its cap.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Captured {
    /// The kept bytes: at most the cap, the head or the tail of the stream.
    pub bytes: Vec<u8>,
    /// How many bytes the child wrote in total (as far as they were read).
    pub total: u64,
    /// Whether bytes were dropped because the stream was longer than its cap (never for
    /// [`Keep::Count`], which keeps none by design).
    pub truncated: bool,
    /// With [`Keep::Count`], how many bytes of the stream equal the counted one; else 0.
    pub counted: u64,
}

impl Captured {
    /// Returns the kept bytes as text, with invalid UTF-8 replaced (a tail may start mid-char).
    pub fn text(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.bytes)
    }
}

/// A buffer that holds at most `cap` bytes of a stream, its head or its tail.
pub(super) struct Buffer {
    cap: usize,
    keep: Keep,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
    counted: u64,
}

impl Buffer {
    pub(super) fn new((cap, keep): (usize, Keep)) -> Buffer {
        Buffer {
            cap,
            keep,
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
            counted: 0,
        }
    }

    pub(super) fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        match self.keep {
            Keep::Head => {
                let room = self.cap - self.head.len();
                let take = &bytes[..bytes.len().min(room)];
                if !take.is_empty() {
                    // Exact reservations keep the allocation at the cap, not the next power of 2.
                    self.head.reserve_exact(take.len());
                    self.head.extend_from_slice(take);
                }
            }
            Keep::Tail => {
                let take = &bytes[bytes.len().saturating_sub(self.cap)..];
                let overflow = (self.tail.len() + take.len()).saturating_sub(self.cap);
                self.tail.drain(..overflow);
                self.tail.extend(take);
            }
            Keep::Count(byte) => {
                self.counted += bytes.iter().filter(|&&b| b == byte).count() as u64;
            }
        }
    }

    pub(super) fn finish(self) -> Captured {
        let (bytes, truncated) = match self.keep {
            Keep::Head => {
                let truncated = self.total > self.head.len() as u64;
                (self.head, truncated)
            }
            Keep::Tail => {
                let truncated = self.total > self.tail.len() as u64;
                (Vec::from(self.tail), truncated)
            }
            Keep::Count(_) => (Vec::new(), false),
        };
        Captured {
            truncated,
            total: self.total,
            bytes,
            counted: self.counted,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counted_stream_keeps_only_its_count() {
        let mut buffer = Buffer::new((0, Keep::Count(0)));
        buffer.push(b"a\0b\0");
        buffer.push(b"");
        buffer.push(b"\0c");
        let c = buffer.finish();
        assert_eq!(
            (c.bytes.len(), c.total, c.counted, c.truncated),
            (0, 6, 3, false)
        );
    }

    fn check_buffer(chunks: &[&[u8]], cap: usize, keep: Keep, expect: &[u8], truncated: bool) {
        let mut buffer = Buffer::new((cap, keep));
        for chunk in chunks {
            buffer.push(chunk);
        }
        let total: usize = chunks.iter().map(|c| c.len()).sum();
        let captured = buffer.finish();
        assert_eq!(captured.bytes, expect);
        assert_eq!(captured.total, total as u64);
        assert_eq!(captured.truncated, truncated);
    }

    #[test]
    fn buffers_keep_the_head_or_the_tail() {
        check_buffer(&[b"abc", b"def"], 4, Keep::Head, b"abcd", true);
        check_buffer(&[b"abc", b"def"], 4, Keep::Tail, b"cdef", true);
        check_buffer(&[b"abcdefgh"], 3, Keep::Tail, b"fgh", true);
        check_buffer(&[b"ab", b"", b"c"], 3, Keep::Head, b"abc", false);
        check_buffer(&[b"ab", b"c"], 3, Keep::Tail, b"abc", false);
        check_buffer(&[b"abc"], 0, Keep::Tail, b"", true);
        check_buffer(&[], 8, Keep::Head, b"", false);
    }

    proptest::proptest! {
        #[test]
        fn buffers_match_slicing_the_whole_stream(
            chunks in proptest::collection::vec(proptest::collection::vec(0u8..4, 0..40), 0..20),
            cap in 0usize..64,
        ) {
            let whole: Vec<u8> = chunks.concat();
            for keep in [Keep::Head, Keep::Tail] {
                let mut buffer = Buffer::new((cap, keep));
                for chunk in &chunks {
                    buffer.push(chunk);
                }
                let captured = buffer.finish();
                let kept = whole.len().min(cap);
                let expect = match keep {
                    Keep::Head => &whole[..kept],
                    Keep::Tail => &whole[whole.len() - kept..],
                    Keep::Count(_) => unreachable!("only Head and Tail are iterated"),
                };
                proptest::prop_assert_eq!(&captured.bytes[..], expect);
                proptest::prop_assert_eq!(captured.total, whole.len() as u64);
                proptest::prop_assert_eq!(captured.truncated, whole.len() > cap);
            }
        }
    }
}
