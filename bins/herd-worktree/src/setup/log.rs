//! The bounded log of background commands.
//!
//! A background command runs as long as it likes, after the creation has returned, so nothing
//! of herd's is left to capture its output the way a setup command's is captured. Its output
//! goes instead through a pipe into `herd-worktree background-log`, which appends it to
//! `logs/<id>.background.log` and keeps that file within [`BACKGROUND_LOG_CAP`]: before a write
//! would take the file past the cap, the oldest output is dropped, keeping at most the last
//! [`BACKGROUND_LOG_KEEP`] bytes (from the start of a line) after a line that says so. The
//! writers of one log (one per background command) take turns through an `flock` of the log
//! itself, so their trims and appends never interleave.

use std::io::{self, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::{Duration, Instant};

use super::apply::LOG_STREAM_CAP;

/// The most bytes a background log ever holds.
pub const BACKGROUND_LOG_CAP: u64 = 2 * LOG_STREAM_CAP as u64;
/// The most bytes of earlier output kept when the log is trimmed: as much as a setup command
/// keeps of each of its streams.
pub const BACKGROUND_LOG_KEEP: u64 = LOG_STREAM_CAP as u64;
/// The most bytes appended at once.
const CHUNK: usize = 64 * 1024;
/// How long a writer waits for another writer of the same log.
const LOCK_WAIT: Duration = Duration::from_secs(10);

/// Appends everything read from `input` to the log at `path` until end of input, keeping the
/// log at most `cap` bytes long: before a write would take it past `cap`, the log is cut to at
/// most its last `keep` bytes, from the start of a line, after a line saying how much went.
///
/// `keep` plus one write (64 KiB) plus that line must fit in `cap`; the log is created 0600 if
/// missing and never opened through a symlink.
pub fn append_bounded(input: &mut impl Read, path: &Path, cap: u64, keep: u64) -> io::Result<()> {
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        append_chunk(&buf[..n], path, cap, keep)?;
    }
}

/// One write under the log's lock, trimming the log first if the write would overflow it.
fn append_chunk(bytes: &[u8], path: &Path, cap: u64, keep: u64) -> io::Result<()> {
    // The lock is the log itself: opened (created) and flocked, released when dropped. A writer
    // that cannot get it in time writes anyway; the trim still bounds the file.
    let _lock = herd_core::lock::exclusive(path, Instant::now() + LOCK_WAIT).ok();
    let mut file = herd_core::sidecar::private()
        .create(true)
        .read(true)
        .write(true)
        .open(path)?;
    let len = file.metadata()?.len();
    let len = if len + bytes.len() as u64 > cap {
        trim(&file, len, keep)?
    } else {
        len
    };
    file.write_all_at(bytes, len)?;
    file.flush()
}

/// Cuts the log of `len` bytes to its last `keep` bytes at most, starting at a line, after a
/// line that says how much was dropped; returns the new length.
fn trim(file: &std::fs::File, len: u64, keep: u64) -> io::Result<u64> {
    let from = len.saturating_sub(keep);
    let mut kept = vec![0u8; usize::try_from(len - from).unwrap_or(0)];
    file.read_exact_at(&mut kept, from)?;
    let start = if from == 0 {
        0
    } else {
        // A partial first line goes too, unless the whole kept part is one line.
        kept.iter().position(|b| *b == b'\n').map_or(0, |at| at + 1)
    };
    let dropped = from + start as u64;
    let mut out = format!(
        "[herd: {dropped} bytes of earlier output dropped; this log keeps its last {keep} bytes at most]\n"
    )
    .into_bytes();
    out.extend_from_slice(&kept[start..]);
    file.write_all_at(&out, 0)?;
    file.set_len(out.len() as u64)?;
    Ok(out.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_never_takes_the_log_past_its_cap_and_the_end_is_kept() {
        let sb = herd_e2e::git::Sandbox::new();
        let log = sb.path().join("bg.log");
        std::fs::write(&log, "before\n").unwrap();
        let mut flood = Vec::new();
        for i in 0..200_000 {
            flood.extend_from_slice(format!("line {i}\n").as_bytes());
        }
        // Fed in small reads, checking the bound as it goes.
        struct Slow<'a>(&'a [u8], &'a Path, u64);
        impl Read for Slow<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let len = std::fs::metadata(self.1).map(|m| m.len()).unwrap_or(0);
                self.2 = self.2.max(len);
                let n = self.0.len().min(buf.len()).min(7_777);
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut input = Slow(&flood, &log, 0);
        append_bounded(&mut input, &log, 100_000, 40_000).unwrap();
        let most = input.2;
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(most <= 100_000, "{most}");
        assert!(text.len() <= 100_000, "{}", text.len());
        assert!(text.ends_with("line 199999\n"), "the end is kept");
        assert!(text.starts_with("[herd: "), "{}", &text[..80]);
        // What is kept after the notice starts at a whole line.
        let second = text.lines().nth(1).unwrap();
        assert!(second.starts_with("line "), "{second}");
        assert!(!text.contains("before\n"));
    }

    #[test]
    fn a_quiet_command_appends_as_it_is() {
        let sb = herd_e2e::git::Sandbox::new();
        let log = sb.path().join("bg.log");
        std::fs::write(&log, "one\n").unwrap();
        append_bounded(&mut &b"two\n"[..], &log, 100_000, 40_000).unwrap();
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "one\ntwo\n");
    }
}
