//! The loop of a run, on the caller's thread: one `poll` over the child's pipes, the leader's
//! exit and a cancel, the budget, and termination with TERM → grace → KILL.

use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::time::{Duration, Instant};

use super::group::{group_has_live_members, signal_group};
use super::pump::{Pump, pollfd};
use super::signals::{Cancel, Taken};
use crate::identity::pidfd::Pidfd;

/// How long [`run`](super::run) waits, after SIGKILL, for the group to vanish before it gives up.
///
/// SIGKILL cannot be caught, so this only matters for a process stuck in the kernel
/// (uninterruptible sleep, e.g. on a dead network filesystem).
pub(super) const KILL_WAIT: Duration = Duration::from_secs(5);

/// The largest step of the poll for the rest of the group, whose deaths raise no event here.
const GROUP_POLL_MAX: Duration = Duration::from_millis(20);

/// The longest wait of the loop while it must look at something that has no descriptor to
/// poll: a cancel channel, or the leader on a kernel without pidfds. Such a cancel is seen within
/// it.
const POLL_STEP: Duration = Duration::from_millis(10);

/// How the loop learns that the leader exited, without reaping it: its pidfd turns readable in
/// the same `poll`, or, on a kernel without pidfds, `waitid` is asked at every step.
pub(super) enum Leader {
    Pidfd(Pidfd),
    Asked(libc::pid_t),
}

/// Where a run is: running within its budget, terminated with SIGTERM until a deadline, killed
/// with SIGKILL until a deadline, or over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Running { deadline: Instant },
    Terminating { until: Instant },
    Killing { until: Instant },
    Over,
}

/// The supervision of one run, from its spawn to the moment its group is gone (or given up).
pub(super) struct Watch<'a> {
    pgid: libc::pid_t,
    leader: Leader,
    pub(super) exited_at: Option<Instant>,
    cancel: Option<&'a dyn Cancel>,
    cancel_grace: Duration,
    grace: Duration,
    pub(super) cancelled: bool,
    pub(super) timed_out: bool,
}

impl Leader {
    /// The leader `pid` of group `pgid`: through a pidfd when the kernel gives one.
    pub(super) fn of(pid: u32, pgid: libc::pid_t) -> Leader {
        match Pidfd::open(pid) {
            Ok(pidfd) => Leader::Pidfd(pidfd),
            Err(_) => Leader::Asked(pgid),
        }
    }
}

impl<'a> Watch<'a> {
    /// Watches the group `pgid` of `leader`, with the command's `grace` and, when `cancel` is
    /// given, its `cancel_grace`.
    pub(super) fn new(
        leader: Leader,
        pgid: libc::pid_t,
        grace: Duration,
        cancel: Option<&'a dyn Cancel>,
        cancel_grace: Duration,
    ) -> Watch<'a> {
        Watch {
            pgid,
            leader,
            exited_at: None,
            cancel,
            cancel_grace,
            grace,
            cancelled: false,
            timed_out: false,
        }
    }

    /// Pumps the pipes until the leader has exited and no other member of its group runs, the
    /// budget ending at `deadline` has run out and the group was terminated, or a cancel did the
    /// same; gives up on a group that survives SIGKILL for [`KILL_WAIT`].
    pub(super) fn run(&mut self, pump: &mut Pump, deadline: Instant) -> io::Result<()> {
        let mut phase = Phase::Running { deadline };
        // After the leader's exit, the rest of the group is asked for at growing steps.
        let mut group_step = Duration::from_millis(1);
        let mut next_group_check: Option<Instant> = None;
        while phase != Phase::Over {
            let now = Instant::now();
            let mut wake = phase_deadline(phase).saturating_duration_since(now);
            if let Some(at) = next_group_check {
                wake = wake.min(at.saturating_duration_since(now));
            }
            let cancel_unpolled = self.cancel.is_some_and(|cancel| cancel.fd().is_none());
            if cancel_unpolled || matches!(self.leader, Leader::Asked(_)) {
                wake = wake.min(POLL_STEP);
            }
            self.poll(pump, wake)?;
            self.take_cancel();

            let now = Instant::now();
            let group_checked = match next_group_check {
                Some(at) if self.exited_at.is_some() && now >= at => {
                    group_step = (group_step * 2).min(GROUP_POLL_MAX);
                    next_group_check = Some(now + group_step);
                    Some(group_has_live_members(self.pgid))
                }
                _ => None,
            };
            let group_gone = group_checked == Some(false);
            phase = match phase {
                Phase::Running { deadline } => {
                    if self.exited_at.is_some() {
                        // The child is done; anything it left running in its group goes with it.
                        if group_has_live_members(self.pgid) {
                            next_group_check = Some(now + group_step);
                            self.terminate(self.grace)
                        } else {
                            Phase::Over
                        }
                    } else if self.cancelled {
                        self.terminate(self.cancel_grace.min(self.grace))
                    } else if now >= deadline {
                        self.timed_out = true;
                        self.terminate(self.grace)
                    } else {
                        phase
                    }
                }
                Phase::Terminating { mut until } => {
                    if self.cancelled {
                        // A cancel may have arrived while the group was terminated for its budget.
                        until = until.min(now + self.cancel_grace);
                    }
                    if group_gone {
                        Phase::Over
                    } else if now >= until {
                        signal_group(self.pgid, libc::SIGKILL);
                        Phase::Killing {
                            until: now + KILL_WAIT,
                        }
                    } else {
                        Phase::Terminating { until }
                    }
                }
                Phase::Killing { until } => {
                    if group_gone || now >= until {
                        Phase::Over
                    } else {
                        phase
                    }
                }
                Phase::Over => Phase::Over,
            };
            if self.exited_at.is_some() && next_group_check.is_none() && phase != Phase::Over {
                next_group_check = Some(now);
            }
        }
        Ok(())
    }

    /// Sends SIGTERM to the group, and SIGCONT: a stopped process would only see SIGTERM once
    /// continued, so it is continued now to shut down within the grace period rather than be
    /// killed after it.
    fn terminate(&self, grace: Duration) -> Phase {
        signal_group(self.pgid, libc::SIGTERM);
        signal_group(self.pgid, libc::SIGCONT);
        Phase::Terminating {
            until: Instant::now() + grace,
        }
    }

    /// One `poll` of the pipes and the leader's pidfd, for at most `wake`; services what is
    /// ready and notes the leader's exit.
    fn poll(&mut self, pump: &mut Pump, wake: Duration) -> io::Result<()> {
        let [out, err, stdin] = pump.pollfds();
        let exit_fd = match (&self.leader, self.exited_at) {
            (Leader::Pidfd(pidfd), None) => pidfd.as_fd().as_raw_fd(),
            _ => -1,
        };
        let cancel_fd = self
            .cancel
            .and_then(|cancel| cancel.fd())
            .map_or(-1, |fd| fd.as_raw_fd());
        let mut fds = [
            out,
            err,
            stdin,
            pollfd(exit_fd, libc::POLLIN),
            pollfd(cancel_fd, libc::POLLIN),
        ];
        // Round up so a sub-millisecond remainder still waits instead of spinning.
        let ms = wake.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int;
        // SAFETY: `fds` is a valid array of pollfd of the length given.
        let res = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if res < 0 {
            let err = io::Error::last_os_error();
            return if err.kind() == io::ErrorKind::Interrupted {
                Ok(())
            } else {
                Err(err)
            };
        }
        pump.service(&fds[..3]);
        if self.exited_at.is_none() {
            let exited = match self.leader {
                Leader::Pidfd(_) => fds[3].revents != 0,
                Leader::Asked(pid) => has_exited(pid)?,
            };
            if exited {
                self.exited_at = Some(Instant::now());
            }
        }
        Ok(())
    }

    /// Takes a waiting cancel, if one is there; a cancel that can never come (a disconnected
    /// channel) is forgotten.
    fn take_cancel(&mut self) {
        let Some(cancel) = self.cancel else { return };
        match cancel.take() {
            Taken::Cancel => self.cancelled = true,
            Taken::Nothing => {}
            Taken::Never => self.cancel = None,
        }
    }
}

/// When the phase's own deadline is; a finished run has none.
fn phase_deadline(phase: Phase) -> Instant {
    match phase {
        Phase::Running { deadline } => deadline,
        Phase::Terminating { until } | Phase::Killing { until } => until,
        Phase::Over => Instant::now(),
    }
}

/// Whether the process `pid` (our child) has exited, without reaping it or waiting.
///
/// Leaving it a zombie keeps its PID, and with it the group ID, from being reused while the rest
/// of the group is still signalled.
fn has_exited(pid: libc::pid_t) -> io::Result<bool> {
    // SAFETY: siginfo_t is plain data and zero is a valid bit pattern for it.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: `info` is a valid, writable siginfo_t.
    let res = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOWAIT | libc::WNOHANG,
        )
    };
    if res != 0 {
        let err = io::Error::last_os_error();
        return if err.kind() == io::ErrorKind::Interrupted {
            Ok(false)
        } else {
            Err(err)
        };
    }
    // SAFETY: waitid filled `info`; with WNOHANG and no exited child, si_pid is 0.
    Ok(unsafe { info.si_pid() } != 0)
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;

    use super::*;
    use crate::subprocess::Command;
    use crate::subprocess::foreground::spawn;

    /// Runs `script` through the loop with the leader's exit asked of `waitid`, as on a kernel
    /// without pidfds; returns the watch, what it printed and how it ended.
    fn run_asked(script: &str, budget: Duration) -> (Watch<'static>, Vec<u8>, Option<i32>) {
        let cmd = Command::new("sh", budget).args(["-c", script]);
        let mut std_cmd = cmd.spec.to_std();
        std_cmd
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let started = Instant::now();
        let mut child = spawn(&mut std_cmd).unwrap();
        let pid = libc::pid_t::try_from(child.id()).unwrap();
        let mut pump = Pump::new(&mut child, &cmd).unwrap();
        let mut watch = Watch::new(
            Leader::Asked(pid),
            pid,
            Duration::from_millis(200),
            None,
            Duration::ZERO,
        );
        watch.run(&mut pump, started + budget).unwrap();
        let (out, _) = pump.finish();
        let status = child.wait().unwrap();
        (watch, out.bytes, status.code())
    }

    #[test]
    fn without_a_pidfd_the_leaders_exit_is_asked_of_waitid() {
        let (watch, out, code) = run_asked("echo hi; sleep 0.05; exit 4", Duration::from_secs(30));
        assert!(watch.exited_at.is_some());
        assert!(!watch.timed_out);
        assert_eq!((out, code), (b"hi\n".to_vec(), Some(4)));

        let (watch, _, code) = run_asked("sleep 30", Duration::from_millis(100));
        assert!(watch.timed_out && watch.exited_at.is_some());
        assert_eq!(code, None, "ended by SIGTERM");
    }
}
