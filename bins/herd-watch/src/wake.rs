//! File-event wake-ups (inotify) so supervision reacts to a child's sidecars at once instead of
//! polling them, with a plain timed sleep when inotify is unavailable.

use std::collections::{HashMap, HashSet};
use std::ffi::CString;
use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The most reads one wait spends draining queued events.
const MAX_DRAIN_READS: usize = 64;

/// What one wait saw.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// Whether an event arrived.
    pub woke: bool,
    /// Whether some events are not in `files` (the kernel's queue overflowed, or more were
    /// queued than one wait drains): anything may have changed.
    pub lost: bool,
    /// The files named by the events: (watched directory, file name).
    pub files: Vec<(PathBuf, OsString)>,
}

/// Wakes the supervision loop when a watched directory changes, or when a timeout passes.
pub struct Waker {
    fd: Option<i32>,
    /// Watch descriptor -> directory.
    watched: HashMap<i32, PathBuf>,
    dirs: HashSet<PathBuf>,
}

impl Waker {
    pub fn new() -> Waker {
        // SAFETY: plain syscall; a negative result means no inotify and we fall back to sleeping.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        Waker {
            fd: (fd >= 0).then_some(fd),
            watched: HashMap::new(),
            dirs: HashSet::new(),
        }
    }

    /// Whether file events wake the loop (inotify is available).
    pub fn is_active(&self) -> bool {
        self.fd.is_some()
    }

    /// Watches `dir` for files written, moved in or created; directories that do not exist yet
    /// are skipped and tried again on the next call.
    /// Returns whether the directory is watched from this call on (it was not before).
    pub fn watch(&mut self, dir: &Path) -> bool {
        let Some(fd) = self.fd else { return false };
        if self.is_watched(dir) {
            return false;
        }
        let Ok(c_path) = CString::new(dir.as_os_str().as_bytes()) else {
            return false;
        };
        let mask = libc::IN_CLOSE_WRITE | libc::IN_MOVED_TO | libc::IN_CREATE | libc::IN_DELETE;
        // SAFETY: a valid descriptor and a NUL-terminated path.
        let wd = unsafe { libc::inotify_add_watch(fd, c_path.as_ptr(), mask) };
        if wd < 0 {
            return false;
        }
        self.watched.insert(wd, dir.to_path_buf());
        self.dirs.insert(dir.to_path_buf())
    }

    /// Whether events of `dir` wake the loop.
    pub fn is_watched(&self, dir: &Path) -> bool {
        self.dirs.contains(dir)
    }

    /// Waits until a watched directory changes or `timeout` passes; returns what changed.
    pub fn wait_changes(&mut self, timeout: Duration) -> Changes {
        let mut changes = Changes::default();
        let Some(fd) = self.fd else {
            std::thread::sleep(timeout);
            return changes;
        };
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut pfd, 1, ms) };
        if n <= 0 {
            return changes;
        }
        changes.woke = true;
        let mut buf = [0u8; 8192];
        // A child writing without pause could keep the queue from ever running dry: the drain is
        // bounded, and what is left only makes the next wait return at once (as lost events).
        let mut drained = false;
        for _ in 0..MAX_DRAIN_READS {
            // SAFETY: reading into a buffer we own; the descriptor is non-blocking.
            let read = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            if read <= 0 {
                drained = true;
                break;
            }
            self.parse(&buf[..read as usize], &mut changes);
        }
        changes.lost |= !drained;
        changes
    }

    /// Adds the events in `bytes` (whole `inotify_event` records, as one read returns them).
    fn parse(&self, bytes: &[u8], changes: &mut Changes) {
        const HEADER: usize = std::mem::size_of::<libc::inotify_event>();
        let mut at = 0;
        while at + HEADER <= bytes.len() {
            let field = |offset: usize| {
                let mut word = [0u8; 4];
                word.copy_from_slice(&bytes[at + offset..at + offset + 4]);
                word
            };
            let wd = i32::from_ne_bytes(field(0));
            let mask = u32::from_ne_bytes(field(4));
            let len = u32::from_ne_bytes(field(12)) as usize;
            let end = (at + HEADER + len).min(bytes.len());
            let name: Vec<u8> = bytes[at + HEADER..end]
                .iter()
                .copied()
                .take_while(|b| *b != 0)
                .collect();
            at = at + HEADER + len;
            if mask & libc::IN_Q_OVERFLOW != 0 {
                changes.lost = true;
                continue;
            }
            match self.watched.get(&wd) {
                Some(dir) if !name.is_empty() => {
                    changes.files.push((dir.clone(), OsString::from_vec(name)));
                }
                // An event of the directory itself (or of one no longer known).
                _ => changes.lost = true,
            }
        }
    }
}

impl Default for Waker {
    fn default() -> Waker {
        Waker::new()
    }
}

impl Drop for Waker {
    fn drop(&mut self) {
        if let Some(fd) = self.fd {
            // SAFETY: closing our own descriptor once.
            unsafe {
                libc::close(fd);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_in_a_watched_directory_wakes() {
        let dir = tempfile::tempdir().unwrap();
        let mut waker = Waker::new();
        waker.watch(dir.path());
        assert!(!waker.wait_changes(Duration::from_millis(10)).woke);
        std::fs::write(dir.path().join("x.exit"), "{}").unwrap();
        assert!(waker.wait_changes(Duration::from_secs(5)).woke);
        assert!(
            !waker.wait_changes(Duration::from_millis(10)).woke,
            "events were drained"
        );
    }

    #[test]
    fn a_wait_names_the_files_that_changed() {
        let dir = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let mut waker = Waker::new();
        waker.watch(dir.path());
        waker.watch(other.path());
        std::fs::write(dir.path().join("a1.exit"), "{}").unwrap();
        std::fs::write(other.path().join("b2.json"), "{}").unwrap();
        let mut seen = Vec::new();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while seen.len() < 2 && std::time::Instant::now() < deadline {
            let changes = waker.wait_changes(Duration::from_millis(100));
            assert!(!changes.lost, "{changes:?}");
            for file in changes.files {
                if !seen.contains(&file) {
                    seen.push(file);
                }
            }
        }
        seen.sort();
        let mut expected = vec![
            (dir.path().to_path_buf(), OsString::from("a1.exit")),
            (other.path().to_path_buf(), OsString::from("b2.json")),
        ];
        expected.sort();
        assert_eq!(seen, expected);
    }
}
