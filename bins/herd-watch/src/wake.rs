//! File-event wake-ups (inotify) so supervision reacts to a child's sidecars at once instead of
//! polling them, with a plain timed sleep when inotify is unavailable.

use std::collections::HashSet;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The most reads one wait spends draining queued events.
const MAX_DRAIN_READS: usize = 64;

/// Wakes the supervision loop when a watched directory changes, or when a timeout passes.
pub struct Waker {
    fd: Option<i32>,
    watched: HashSet<PathBuf>,
}

impl Waker {
    pub fn new() -> Waker {
        // SAFETY: plain syscall; a negative result means no inotify and we fall back to sleeping.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        Waker {
            fd: (fd >= 0).then_some(fd),
            watched: HashSet::new(),
        }
    }

    /// Whether file events wake the loop (inotify is available).
    pub fn is_active(&self) -> bool {
        self.fd.is_some()
    }

    /// Watches `dir` for files written, moved in or created; directories that do not exist yet
    /// are skipped and tried again on the next call.
    pub fn watch(&mut self, dir: &Path) {
        let Some(fd) = self.fd else { return };
        if self.watched.contains(dir) {
            return;
        }
        let Ok(c_path) = CString::new(dir.as_os_str().as_bytes()) else {
            return;
        };
        let mask = libc::IN_CLOSE_WRITE | libc::IN_MOVED_TO | libc::IN_CREATE | libc::IN_DELETE;
        // SAFETY: a valid descriptor and a NUL-terminated path.
        let wd = unsafe { libc::inotify_add_watch(fd, c_path.as_ptr(), mask) };
        if wd >= 0 {
            self.watched.insert(dir.to_path_buf());
        }
    }

    /// Waits until a watched directory changes or `timeout` passes; returns whether an event
    /// arrived. Pending events are drained.
    pub fn wait(&mut self, timeout: Duration) -> bool {
        let Some(fd) = self.fd else {
            std::thread::sleep(timeout);
            return false;
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
            return false;
        }
        let mut buf = [0u8; 8192];
        // A child writing without pause could keep the queue from ever running dry: the drain is
        // bounded, and what is left only makes the next wait return at once.
        for _ in 0..MAX_DRAIN_READS {
            // SAFETY: reading into a buffer we own; the descriptor is non-blocking.
            let read = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            if read <= 0 {
                break;
            }
        }
        true
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
        assert!(!waker.wait(Duration::from_millis(10)));
        std::fs::write(dir.path().join("x.exit"), "{}").unwrap();
        assert!(waker.wait(Duration::from_secs(5)));
        assert!(
            !waker.wait(Duration::from_millis(10)),
            "events were drained"
        );
    }
}
