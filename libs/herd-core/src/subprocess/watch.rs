//! Deadlines: waiting for the leader's exit, a cancel or the budget, and termination with
//! TERM → grace → KILL.

use std::io;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, select};

use super::group::{group_has_live_members, signal_group};

/// How long [`run`](super::run) waits, after SIGKILL, for the group to vanish before it gives up.
///
/// SIGKILL cannot be caught, so this only matters for a process stuck in the kernel
/// (uninterruptible sleep, e.g. on a dead network filesystem).
pub(super) const KILL_WAIT: Duration = Duration::from_secs(5);

/// The largest step of the poll for the rest of the group, whose deaths raise no event here.
const GROUP_POLL_MAX: Duration = Duration::from_millis(20);

/// The supervision state of one run: the leader's exit and the cancel channel.
pub(super) struct Watch<T> {
    pub(super) pgid: libc::pid_t,
    pub(super) exited: Receiver<io::Result<()>>,
    pub(super) exited_at: Option<Instant>,
    pub(super) cancel: Receiver<T>,
    pub(super) cancel_grace: Duration,
    pub(super) cancelled: bool,
}

impl<T> Watch<T> {
    /// Waits until the leader exits, a cancel arrives, or `until`; returns whether it exited.
    pub(super) fn wait_leader(&mut self, until: Instant) -> io::Result<bool> {
        if self.exited_at.is_some() {
            return Ok(true);
        }
        loop {
            let left = until.saturating_duration_since(Instant::now());
            select! {
                recv(self.exited) -> res => {
                    self.exited_at = Some(Instant::now());
                    // A closed channel means the waiter thread died, which it cannot do
                    // without sending; report it rather than trust it.
                    res.unwrap_or_else(|_| Err(io::Error::other("exit waiter vanished")))?;
                    return Ok(true);
                }
                recv(self.cancel) -> msg => match msg {
                    Ok(_) => {
                        self.cancelled = true;
                        return Ok(false);
                    }
                    Err(_) => self.cancel = crossbeam_channel::never(),
                },
                default(left) => return Ok(false),
            }
        }
    }

    /// Sends SIGTERM to the group, waits up to `grace` for the leader to exit and the rest of
    /// the group to die, then sends SIGKILL and waits up to [`KILL_WAIT`].
    pub(super) fn stop_group(&mut self, grace: Duration) -> io::Result<()> {
        signal_group(self.pgid, libc::SIGTERM);
        // A stopped process would only see SIGTERM once continued; continue it now so it can
        // shut down cleanly within the grace period rather than be killed after it.
        signal_group(self.pgid, libc::SIGCONT);
        if self.wait_gone(Instant::now() + grace, true)? {
            return Ok(());
        }
        signal_group(self.pgid, libc::SIGKILL);
        self.wait_gone(Instant::now() + KILL_WAIT, false)?;
        Ok(())
    }

    /// Waits until the leader has exited and no other member of the group runs, or `until`.
    ///
    /// While `cancellable`, a cancel pulls `until` in to the cancel grace period.
    fn wait_gone(&mut self, mut until: Instant, cancellable: bool) -> io::Result<bool> {
        while !self.wait_leader(until)? {
            if cancellable && self.cancelled {
                // A cancel may have arrived while the group was being terminated for its budget.
                until = until.min(Instant::now() + self.cancel_grace);
            }
            if Instant::now() >= until {
                return Ok(false);
            }
        }
        let mut step = Duration::from_millis(1);
        loop {
            if !group_has_live_members(self.pgid) {
                return Ok(true);
            }
            let now = Instant::now();
            if now >= until {
                return Ok(false);
            }
            let nap = step.min(until - now);
            select! {
                recv(self.cancel) -> msg => match msg {
                    Ok(_) => {
                        self.cancelled = true;
                        if cancellable {
                            until = until.min(Instant::now() + self.cancel_grace);
                        }
                    }
                    Err(_) => self.cancel = crossbeam_channel::never(),
                },
                default(nap) => {}
            }
            step = (step * 2).min(GROUP_POLL_MAX);
        }
    }
}
