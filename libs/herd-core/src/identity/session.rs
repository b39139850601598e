//! The processes of a recorded session leader: everything a detached child started, found and
//! signalled one verified process at a time.
//!
//! A leader started with `setsid` gives its session its own PID as the session id, and the kernel
//! hands out no PID that a live session or process group still uses, so a process whose session
//! id is the leader's PID and that started no earlier than the leader belongs to that session.
//! Each member is judged again through a pidfd before it is signalled: the pidfd names one
//! process, and a matching session and start time read after opening it prove which.

use std::time::{Duration, Instant};

use super::{Pidfd, Record, Stat, check_context, parse_stat, read_proc, stat_path};

/// The step of [`wait_empty`].
const POLL_STEP: Duration = Duration::from_millis(20);

/// A process of the session, as the scan saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Member {
    pid: u32,
    start_time: u64,
}

fn is_member(leader: &Record, stat: &Stat) -> bool {
    i64::from(leader.pid) == stat.session
        && stat.start_time >= leader.start_time
        && !matches!(stat.state, b'Z' | b'X' | b'x')
}

/// The live processes of the session `leader` started (the leader itself included while it runs).
fn members(leader: &Record) -> Result<Vec<Member>, String> {
    check_context(leader)?;
    Ok(super::proc::scan(|stat| is_member(leader, stat))?
        .into_iter()
        .map(|stat| Member {
            pid: stat.pid,
            start_time: stat.start_time,
        })
        .collect())
}

/// The PIDs of the live processes of the session `leader` started (the leader itself included
/// while it runs); an error when `/proc` cannot tell, or the record is of another boot or PID
/// namespace.
pub fn session_pids(leader: &Record) -> Result<Vec<u32>, String> {
    members(leader).map(|m| m.into_iter().map(|m| m.pid).collect())
}

/// The number of live processes left in the session `leader` started; an error when `/proc`
/// cannot tell (then nothing is known to be gone).
pub fn session_count(leader: &Record) -> Result<usize, String> {
    members(leader).map(|m| m.len())
}

/// Signals every live process of the session `leader` started, each re-verified through a pidfd
/// immediately before the signal. Returns how many were signalled; a process that is gone by the
/// time it is reached is skipped, never a process that took its PID.
pub fn signal_session(leader: &Record, signal: i32) -> Result<usize, String> {
    let mut signalled = 0;
    for member in members(leader)? {
        let Ok(pidfd) = Pidfd::open(member.pid) else {
            continue;
        };
        // Read after the pidfd exists: the same start time proves it names the member.
        let Ok(Some(bytes)) = read_proc(&stat_path(member.pid)) else {
            continue;
        };
        let Ok(stat) = parse_stat(&bytes) else {
            continue;
        };
        if stat.start_time != member.start_time || !is_member(leader, &stat) {
            continue;
        }
        if pidfd.send_signal(signal).is_ok() {
            signalled += 1;
        }
    }
    Ok(signalled)
}

/// Waits until no live process is left in the session, or `deadline`; returns how many are left.
pub fn wait_empty(leader: &Record, deadline: Instant) -> Result<usize, String> {
    loop {
        let left = session_count(leader)?;
        if left == 0 || Instant::now() >= deadline {
            return Ok(left);
        }
        std::thread::sleep(POLL_STEP.min(deadline.saturating_duration_since(Instant::now())));
    }
}

/// Ends the whole session `leader` started: SIGTERM to every verified member, `grace` for them to
/// exit, then SIGKILL to whatever is left, and a wait until `deadline`. Returns how many
/// processes survived (0 means the session is empty: nothing the child started is left).
pub fn terminate_session(
    leader: &Record,
    grace: Duration,
    deadline: Instant,
) -> Result<usize, String> {
    signal_session(leader, libc::SIGTERM)?;
    let left = wait_empty(leader, (Instant::now() + grace).min(deadline))?;
    if left == 0 {
        return Ok(0);
    }
    signal_session(leader, libc::SIGKILL)?;
    wait_empty(leader, deadline)
}
