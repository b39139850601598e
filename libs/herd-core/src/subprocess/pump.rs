//! The pipes of a run: stdin fed and stdout and stderr drained into their buffers, from the one
//! `poll` of the run's loop, so no pipe can deadlock another.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::process::Child;

use super::capture::{Buffer, Captured};
use super::command::{Command, Input};

/// The size of one read from a child's pipe.
const CHUNK: usize = 64 * 1024;

/// How much the final drain reads from a stream after the group is gone.
///
/// Everything a dead process wrote is already in the pipe (at most the pipe's capacity, 1 MiB by
/// default); the bound only stops a process that escaped the group from keeping us reading.
const FINAL_DRAIN_LIMIT: usize = 4 * 1024 * 1024;

/// Moves bytes between the child's pipes and the buffers.
///
/// All pipes are non-blocking. The run's loop polls them together with the leader's exit
/// ([`Pump::pollfds`]) and hands back what is ready ([`Pump::service`]), so stdin is fed while
/// stdout and stderr are drained (a child that fills one pipe while we wait on another cannot
/// deadlock us). Once the group is gone, [`Pump::finish`] reads what is left, bounded, so the
/// run decides when reading stops, not the child.
pub(super) struct Pump {
    stdin: Option<(File, Vec<u8>, usize)>,
    streams: [(Option<File>, Buffer); 2],
    chunk: Vec<u8>,
}

impl Pump {
    pub(super) fn new(child: &mut Child, cmd: &Command) -> io::Result<Pump> {
        let stdin = match (&cmd.stdin, child.stdin.take()) {
            (Input::Bytes(bytes), Some(pipe)) => Some((nonblocking(pipe)?, bytes.clone(), 0)),
            _ => None,
        };
        let stdout = child.stdout.take().map(nonblocking).transpose()?;
        let stderr = child.stderr.take().map(nonblocking).transpose()?;
        Ok(Pump {
            stdin,
            streams: [
                (stdout, Buffer::new(cmd.stdout)),
                (stderr, Buffer::new(cmd.stderr)),
            ],
            chunk: vec![0u8; CHUNK],
        })
    }

    /// Whether stdin is still to be fed: writing to it may raise SIGPIPE.
    pub(super) fn feeds_stdin(&self) -> bool {
        self.stdin.is_some()
    }

    /// What to poll: stdout, stderr, stdin; a closed one gets fd -1, which poll ignores.
    pub(super) fn pollfds(&self) -> [libc::pollfd; 3] {
        [
            pollfd(raw(&self.streams[0].0), libc::POLLIN),
            pollfd(raw(&self.streams[1].0), libc::POLLIN),
            pollfd(
                self.stdin.as_ref().map_or(-1, |(f, _, _)| f.as_raw_fd()),
                libc::POLLOUT,
            ),
        ]
    }

    /// Reads and writes what `poll` said is ready, given the polled `fds` of [`Pump::pollfds`].
    pub(super) fn service(&mut self, fds: &[libc::pollfd]) {
        for (idx, fd) in fds[..2].iter().enumerate() {
            if fd.revents != 0 {
                let (file, buffer) = &mut self.streams[idx];
                read_some(file, buffer, &mut self.chunk);
            }
        }
        if fds[2].revents != 0 {
            self.feed();
        }
    }

    /// Takes what is left in the pipes, bounded, and returns what was captured.
    pub(super) fn finish(mut self) -> (Captured, Captured) {
        self.stdin = None;
        for (file, buffer) in &mut self.streams {
            let mut read = 0;
            while file.is_some() && read < FINAL_DRAIN_LIMIT {
                match read_some(file, buffer, &mut self.chunk) {
                    Some(n) => read += n,
                    None => break,
                }
            }
        }
        let [(_, out), (_, err)] = self.streams;
        (out.finish(), err.finish())
    }

    /// Writes the next part of stdin; closes it when everything is written or the child
    /// closed its end.
    fn feed(&mut self) {
        let Some((file, bytes, written)) = &mut self.stdin else {
            return;
        };
        match file.write(&bytes[*written..]) {
            Ok(n) => *written += n,
            Err(err)
                if matches!(
                    err.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                ) => {}
            Err(_) => *written = bytes.len(),
        }
        if *written >= bytes.len() {
            self.stdin = None;
        }
    }
}

/// Reads once from `file` into `buffer`; returns the bytes read, or `None` when nothing more
/// is there for now. Closes `file` at EOF or on an error.
fn read_some(file: &mut Option<File>, buffer: &mut Buffer, chunk: &mut [u8]) -> Option<usize> {
    let f = file.as_mut()?;
    match f.read(chunk) {
        Ok(0) => {
            *file = None;
            None
        }
        Ok(n) => {
            buffer.push(&chunk[..n]);
            Some(n)
        }
        Err(err) if err.kind() == io::ErrorKind::Interrupted => Some(0),
        Err(err) if err.kind() == io::ErrorKind::WouldBlock => None,
        Err(_) => {
            *file = None;
            None
        }
    }
}

pub(super) fn pollfd(fd: RawFd, events: libc::c_short) -> libc::pollfd {
    libc::pollfd {
        fd,
        events,
        revents: 0,
    }
}

fn raw(file: &Option<File>) -> RawFd {
    file.as_ref().map_or(-1, AsRawFd::as_raw_fd)
}

/// Turns a child pipe into a non-blocking file.
pub(super) fn nonblocking<P: Into<OwnedFd>>(pipe: P) -> io::Result<File> {
    let fd: OwnedFd = pipe.into();
    set_nonblocking(fd.as_raw_fd())?;
    Ok(File::from(fd))
}

fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor we own, with integer arguments only.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Returns a close-on-exec pipe as (read end, write end).
pub(super) fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Blocks SIGPIPE on the calling thread while it lives, so a write to a closed stdin fails with
/// EPIPE instead of killing a process that left SIGPIPE at its default. On drop, a SIGPIPE that
/// such a write left pending is taken, and the thread's mask is restored.
pub(super) struct SigpipeBlocked {
    was_blocked: bool,
}

impl SigpipeBlocked {
    pub(super) fn new() -> SigpipeBlocked {
        // SAFETY: the sets are initialised by sigemptyset before use; pthread_sigmask only
        // changes this thread's mask and writes the old one into `old`.
        let was_blocked = unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGPIPE);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
            libc::sigismember(&old, libc::SIGPIPE) == 1
        };
        SigpipeBlocked { was_blocked }
    }
}

impl Drop for SigpipeBlocked {
    fn drop(&mut self) {
        if self.was_blocked {
            return;
        }
        // SAFETY: as in `new`; sigtimedwait with a zero timeout only takes a pending signal of
        // the set, without waiting.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGPIPE);
            let mut pending: libc::sigset_t = std::mem::zeroed();
            if libc::sigpending(&mut pending) == 0
                && libc::sigismember(&pending, libc::SIGPIPE) == 1
            {
                let zero = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                };
                libc::sigtimedwait(&set, std::ptr::null_mut(), &zero);
            }
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
    }
}
