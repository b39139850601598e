//! The I/O thread of a run: feeds stdin and drains stdout and stderr into their buffers with one
//! `poll`, so no pipe can deadlock another.

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

/// Moves bytes between the child's pipes and the buffers, on a thread of its own.
///
/// All pipes are non-blocking and watched with one `poll`, so stdin is fed while stdout and
/// stderr are drained (a child that fills one pipe while we wait on another cannot deadlock
/// us). The pump ends when the wake pipe closes: it then reads what is left and returns, so
/// `run` decides when reading stops, not the child.
pub(super) struct Pump {
    stdin: Option<(File, Vec<u8>, usize)>,
    streams: [(Option<File>, Buffer); 2],
    wake: OwnedFd,
}

impl Pump {
    pub(super) fn new(child: &mut Child, cmd: &Command, wake: OwnedFd) -> io::Result<Pump> {
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
            wake,
        })
    }

    pub(super) fn run(mut self) -> (Captured, Captured) {
        block_sigpipe();
        let mut chunk = vec![0u8; CHUNK];
        loop {
            // Slot 0 is the wake pipe, 1 and 2 the output streams, 3 stdin; absent ones get
            // fd -1, which poll ignores.
            let mut fds = [
                pollfd(self.wake.as_raw_fd(), libc::POLLIN),
                pollfd(raw(&self.streams[0].0), libc::POLLIN),
                pollfd(raw(&self.streams[1].0), libc::POLLIN),
                pollfd(
                    self.stdin.as_ref().map_or(-1, |(f, _, _)| f.as_raw_fd()),
                    libc::POLLOUT,
                ),
            ];
            // SAFETY: `fds` is a valid array of pollfd of the length given.
            let res = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
            if res < 0 {
                if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                break;
            }
            if fds[0].revents != 0 {
                break;
            }
            for (idx, fd) in fds[1..3].iter().enumerate() {
                if fd.revents != 0 {
                    let (file, buffer) = &mut self.streams[idx];
                    read_some(file, buffer, &mut chunk);
                }
            }
            if fds[3].revents != 0 {
                self.feed();
            }
        }
        // The group is gone (or poll failed): take what is in the pipes, bounded, and stop.
        self.stdin = None;
        for (file, buffer) in &mut self.streams {
            let mut read = 0;
            while file.is_some() && read < FINAL_DRAIN_LIMIT {
                match read_some(file, buffer, &mut chunk) {
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

fn pollfd(fd: RawFd, events: libc::c_short) -> libc::pollfd {
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
fn nonblocking<P: Into<OwnedFd>>(pipe: P) -> io::Result<File> {
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

/// Blocks SIGPIPE on the calling thread, so a write to a closed stdin fails with EPIPE instead
/// of killing a process that left SIGPIPE at its default.
fn block_sigpipe() {
    // SAFETY: the set is initialised by sigemptyset before use; pthread_sigmask only changes
    // this thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
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
