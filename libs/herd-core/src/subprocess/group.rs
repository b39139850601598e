//! Process groups: the guard that kills a group left behind, signals to a whole group, waiting
//! for the leader without reaping it, and asking `/proc` who is still in the group.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::process::Child;

/// The bound of one `/proc/<pid>/stat` read; the line is a few hundred bytes.
const STAT_READ_LIMIT: usize = 4096;

/// The child's process group; dropping it unreaped kills the group, so an early return or a
/// panic in [`run`](super::run) leaves nothing running.
pub(super) struct Group {
    pub(super) pgid: libc::pid_t,
    armed: bool,
}

impl Group {
    pub(super) fn new(child: &Child) -> Group {
        Group {
            pgid: pid_t(child.id()),
            armed: true,
        }
    }

    pub(super) fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if self.armed {
            signal_group(self.pgid, libc::SIGKILL);
        }
    }
}

fn pid_t(pid: u32) -> libc::pid_t {
    // PIDs are below 2^22 on Linux (pid_max); the conversion cannot fail for a real PID.
    libc::pid_t::try_from(pid).unwrap_or(libc::pid_t::MAX)
}

/// Sends `signal` to every member of the group; a group that is already empty is fine.
pub(super) fn signal_group(pgid: libc::pid_t, signal: libc::c_int) {
    // SAFETY: kill has no memory effects; the group ID is pinned by the unreaped leader.
    unsafe {
        libc::kill(-pgid, signal);
    }
}

/// Blocks until the process `pid` (our child) has exited, without reaping it.
///
/// Leaving it a zombie keeps its PID, and with it the group ID, from being reused while the rest
/// of the group is still signalled.
pub(super) fn wait_exited(pid: libc::pid_t) -> io::Result<()> {
    loop {
        // SAFETY: siginfo_t is plain data and zero is a valid bit pattern for it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid, writable siginfo_t.
        let res = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if res == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// Returns whether any process of group `pgid`, other than its leader, is running.
///
/// The leader is left out because [`run`](super::run) keeps it unreaped on purpose; zombies are
/// left out because they are dead and only wait for whoever adopted them. Each PID is asked for
/// its group with `getpgid`, which is far cheaper than reading its `stat`; only members are
/// read. If `/proc` cannot be listed, the answer is yes, so the caller falls back to its
/// deadlines.
pub(super) fn group_has_live_members(pgid: libc::pid_t) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return true;
    };
    let mut buf = [0u8; STAT_READ_LIMIT];
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = std::str::from_utf8(name.as_bytes())
            .ok()
            .and_then(|s| s.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        // SAFETY: getpgid only reads kernel state; a PID that vanished answers -1.
        if pid == pgid || unsafe { libc::getpgid(pid) } != pgid {
            continue;
        }
        // Between the two reads the process may have died or, in theory, left the group; the
        // stat line is the fresher answer.
        if let Some((state, group)) = read_state_and_group(pid, &mut buf) {
            if group == pgid && !matches!(state, b'Z' | b'X' | b'x') {
                return true;
            }
        }
    }
    false
}

/// Reads the state and the process group of `pid` from `/proc/<pid>/stat`.
fn read_state_and_group(pid: libc::pid_t, buf: &mut [u8]) -> Option<(u8, libc::pid_t)> {
    let mut file = File::open(format!("/proc/{pid}/stat")).ok()?;
    let mut len = 0;
    while len < buf.len() {
        match file.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    parse_state_and_group(&buf[..len])
}

/// Parses `pid (comm) state ppid pgrp ...`; the command name may contain anything, so the
/// fields are read after the last `)`.
fn parse_state_and_group(stat: &[u8]) -> Option<(u8, libc::pid_t)> {
    let close = stat.iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(&stat[close + 1..]).ok()?;
    let mut fields = rest.split_ascii_whitespace();
    let state = *fields.next()?.as_bytes().first()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, pgrp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_read_after_the_last_parenthesis() {
        assert_eq!(
            parse_state_and_group(b"42 (a) b) c) S 1 40 40 0 -1"),
            Some((b'S', 40))
        );
        assert_eq!(parse_state_and_group(b"42 (sh) Z 1 7 7"), Some((b'Z', 7)));
        assert_eq!(parse_state_and_group(b"42 (sh) R 1"), None);
        assert_eq!(parse_state_and_group(b"garbage"), None);
    }
}
