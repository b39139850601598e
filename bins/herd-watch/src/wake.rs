//! Wake-ups of the supervision loop, so it reacts at once instead of polling: file events
//! (inotify) for a child's sidecars, process exits (the pidfds of [`ExitWatch`]es) for children
//! whose presence is a process, and an [`Alarm`] another thread rings. Without inotify the wait
//! still ends on the others, or when its timeout passes.

use std::collections::{HashMap, HashSet};
use std::ffi::CString;
use std::ffi::OsString;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
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
    /// The keys of the exit watches that turned readable: their processes have exited.
    pub exited: Vec<String>,
}

/// Ends a [`Waker::wait_changes`] from another thread (an eventfd): a reader of acknowledgements
/// rings it so that they are taken in at once, not at the end of a long sleep.
#[derive(Debug, Clone)]
pub struct Alarm(Arc<OwnedFd>);

impl Alarm {
    fn new() -> Option<Alarm> {
        // SAFETY: plain syscall; a negative result means no eventfd and no alarm.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        // SAFETY: the kernel just returned this descriptor and nothing else owns it.
        (fd >= 0).then(|| Alarm(Arc::new(unsafe { OwnedFd::from_raw_fd(fd) })))
    }

    /// Wakes the waiting loop (or the next wait, if none is waiting now).
    pub fn ring(&self) {
        let one = 1u64.to_ne_bytes();
        // SAFETY: writing 8 bytes we own to our eventfd; a full counter (EAGAIN) still wakes.
        unsafe {
            libc::write(self.0.as_raw_fd(), one.as_ptr().cast(), one.len());
        }
    }

    /// Resets the counter after a wake-up.
    fn clear(&self) {
        let mut buf = [0u8; 8];
        // SAFETY: reading 8 bytes into a buffer we own; the descriptor is non-blocking.
        unsafe {
            libc::read(self.0.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len());
        }
    }
}

/// Wakes the supervision loop when a watched directory changes, or when a timeout passes.
pub struct Waker {
    fd: Option<i32>,
    /// Watch descriptor -> directory.
    watched: HashMap<i32, PathBuf>,
    dirs: HashSet<PathBuf>,
    alarm: Option<Alarm>,
}

impl Waker {
    pub fn new() -> Waker {
        // SAFETY: plain syscall; a negative result means no inotify and we fall back to sleeping.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        Waker {
            fd: (fd >= 0).then_some(fd),
            watched: HashMap::new(),
            dirs: HashSet::new(),
            alarm: None,
        }
    }

    /// The alarm that ends this waker's waits, made on first use; `None` without eventfd.
    pub fn alarm(&mut self) -> Option<Alarm> {
        if self.alarm.is_none() {
            self.alarm = Alarm::new();
        }
        self.alarm.clone()
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

    /// Waits until a watched directory changes, a process of `exits` exits, the alarm rings, or
    /// `timeout` passes; returns what happened. Each of `exits` is a key and the descriptor of an
    /// [`ExitWatch`](herd_core::identity::ExitWatch); a readable one is named in
    /// [`Changes::exited`] (it stays readable, so the caller stops passing it).
    pub fn wait_changes(&mut self, timeout: Duration, exits: &[(&str, BorrowedFd<'_>)]) -> Changes {
        let mut changes = Changes::default();
        let pollfd = |fd: i32| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let mut fds: Vec<libc::pollfd> = Vec::with_capacity(exits.len() + 2);
        fds.extend(self.fd.map(pollfd));
        fds.extend(self.alarm.as_ref().map(|a| pollfd(a.0.as_raw_fd())));
        let first_exit = fds.len();
        fds.extend(exits.iter().map(|(_, fd)| pollfd(fd.as_raw_fd())));
        if fds.is_empty() {
            std::thread::sleep(timeout);
            return changes;
        }
        // Round up so a sub-millisecond remainder still waits instead of spinning.
        let ms = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int;
        // SAFETY: `fds` is a valid array of pollfds for the duration of the call.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if n <= 0 {
            return changes;
        }
        changes.woke = true;
        for (pfd, (key, _)) in fds[first_exit..].iter().zip(exits) {
            if pfd.revents != 0 {
                changes.exited.push((*key).to_owned());
            }
        }
        let inotify_ready = self.fd.is_some() && fds[0].revents != 0;
        if let Some(alarm) = &self.alarm {
            if fds[first_exit - 1].revents != 0 {
                alarm.clear();
            }
        }
        if let Some(fd) = self.fd.filter(|_| inotify_ready) {
            self.drain(fd, &mut changes);
        }
        changes
    }

    /// Reads the queued inotify events into `changes`.
    fn drain(&self, fd: i32, changes: &mut Changes) {
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
            self.parse(&buf[..read as usize], changes);
        }
        changes.lost |= !drained;
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
        assert!(!waker.wait_changes(Duration::from_millis(10), &[]).woke);
        std::fs::write(dir.path().join("x.exit"), "{}").unwrap();
        assert!(waker.wait_changes(Duration::from_secs(5), &[]).woke);
        assert!(
            !waker.wait_changes(Duration::from_millis(10), &[]).woke,
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
            let changes = waker.wait_changes(Duration::from_millis(100), &[]);
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
