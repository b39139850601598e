//! The pidfd: a descriptor that names one process for as long as it is held, so a signal sent
//! through it cannot reach a process that took over its PID.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// A pidfd: a file descriptor that names one process for as long as it is held, even after the
/// process is gone and its PID reused.
#[derive(Debug)]
pub(crate) struct Pidfd(OwnedFd);

impl AsFd for Pidfd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

impl Pidfd {
    #[cfg(target_os = "linux")]
    pub(crate) fn open(pid: u32) -> io::Result<Pidfd> {
        let pid =
            libc::pid_t::try_from(pid).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0 as libc::c_uint) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let fd = i32::try_from(fd).map_err(|_| io::Error::from_raw_os_error(libc::EBADF))?;
        // SAFETY: the kernel just returned this descriptor and nothing else owns it.
        Ok(Pidfd(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    #[cfg(not(target_os = "linux"))]
    pub(crate) fn open(_pid: u32) -> io::Result<Pidfd> {
        Err(io::Error::from_raw_os_error(libc::ENOSYS))
    }

    #[cfg(target_os = "linux")]
    pub(super) fn send_signal(&self, signal: i32) -> io::Result<()> {
        // SAFETY: a valid pidfd, a signal number, no siginfo and no flags; the kernel validates
        // the signal number.
        let res = unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                self.0.as_raw_fd(),
                signal,
                std::ptr::null::<libc::siginfo_t>(),
                0 as libc::c_uint,
            )
        };
        if res < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    #[cfg(not(target_os = "linux"))]
    pub(super) fn send_signal(&self, _signal: i32) -> io::Result<()> {
        Err(io::Error::from_raw_os_error(libc::ENOSYS))
    }

    /// Waits up to `timeout` for the pidfd to become readable, which it does when the process
    /// has exited; returns whether it did.
    pub(super) fn wait_readable(&self, timeout: Duration) -> io::Result<bool> {
        let mut pollfd = libc::pollfd {
            fd: self.0.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // Round up so a sub-millisecond remainder still waits instead of spinning.
        let ms = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int;
        // SAFETY: one valid pollfd for the duration of the call.
        let res = unsafe { libc::poll(&mut pollfd, 1, ms) };
        if res < 0 {
            return Err(io::Error::last_os_error());
        }
        if res == 0 {
            return Ok(false);
        }
        if pollfd.revents & (libc::POLLIN | libc::POLLHUP) != 0 {
            return Ok(true);
        }
        Err(io::Error::other(format!(
            "unexpected poll events {:#x} on a pidfd",
            pollfd.revents
        )))
    }
}
