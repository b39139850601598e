//! Process groups: the guard that kills a group left behind, signals to a whole group, and
//! asking `/proc` who is still in the group.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};

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

/// Returns whether any process of group `pgid`, other than its leader, is running.
///
/// The leader is left out because [`run`](super::run) keeps it unreaped on purpose; zombies are
/// left out because they are dead and only wait for whoever adopted them. Each PID is asked for
/// its group with `getpgid`, which is far cheaper than reading its `stat`; only members are
/// read. If `/proc` cannot be listed, the answer is yes, so the caller falls back to its
/// deadlines.
pub(super) fn group_has_live_members(pgid: libc::pid_t) -> bool {
    if ADOPTS_ORPHANS.load(Ordering::Relaxed) && no_live_child_but(pgid) == Some(true) {
        return false;
    }
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

/// Whether [`adopt_orphans`] made this process the reaper of its orphaned descendants.
static ADOPTS_ORPHANS: AtomicBool = AtomicBool::new(false);

/// The bound of one `/proc/self/task/<tid>/children` read: room for 512 children, of 8 bytes
/// each with their space. A longer list is not read; the full scan answers instead.
const CHILDREN_READ_LIMIT: usize = 4096;

/// Makes this process the reaper of its orphaned descendants (`PR_SET_CHILD_SUBREAPER`), so that
/// waiting for a finished command's group usually needs no scan of `/proc`.
///
/// When a command's leader exits, its children are then adopted by this process instead of
/// init. So if this process has no live child but the leader, no descendant of the leader is
/// alive, and neither is a member of its group that is one (a process joins a group only by
/// `setpgid`, from itself or its parent). Every other case falls back to the full scan.
///
/// For a short-lived program whose children are the commands it runs, such as an accept check:
/// an adopted orphan that dies stays a zombie until this process exits, and the attribute
/// survives an `exec`. Returns whether the kernel took it.
pub fn adopt_orphans() -> bool {
    // SAFETY: prctl with integer arguments only; PR_SET_CHILD_SUBREAPER changes no memory.
    let ok = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } == 0;
    if ok {
        ADOPTS_ORPHANS.store(true, Ordering::Relaxed);
    }
    ok
}

/// `Some(true)` when no child of this process other than `leader` is alive (zombies are dead),
/// `Some(false)` when one is, `None` when the kernel does not say.
///
/// Read from `/proc/self/task/<tid>/children` of every thread, since children hang under the
/// thread that made or adopted them. A thread that ends hands its children to another; if it
/// ends between the listing and its read, that read fails and the answer is `None`.
fn no_live_child_but(leader: libc::pid_t) -> Option<bool> {
    let mut buf = [0u8; CHILDREN_READ_LIMIT];
    let mut stat = [0u8; STAT_READ_LIMIT];
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let len = read_bounded(&task.path().join("children"), &mut buf)?;
        if len == buf.len() {
            return None;
        }
        let children = std::str::from_utf8(&buf[..len]).ok()?;
        for pid in children.split_ascii_whitespace() {
            let pid: libc::pid_t = pid.parse().ok()?;
            if pid == leader {
                continue;
            }
            match read_state_and_group(pid, &mut stat) {
                Some((b'Z' | b'X' | b'x', _)) => {}
                // Reaped between the two reads: gone as well.
                None if !std::path::Path::new(&format!("/proc/{pid}")).exists() => {}
                _ => return Some(false),
            }
        }
    }
    Some(true)
}

/// Reads `path` into `buf`, up to its length; `None` when it cannot be read.
fn read_bounded(path: &std::path::Path, buf: &mut [u8]) -> Option<usize> {
    let mut file = File::open(path).ok()?;
    let mut len = 0;
    while len < buf.len() {
        match file.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(len)
}

/// Reads the state and the process group of `pid` from `/proc/<pid>/stat`.
fn read_state_and_group(pid: libc::pid_t, buf: &mut [u8]) -> Option<(u8, libc::pid_t)> {
    let len = read_bounded(std::path::Path::new(&format!("/proc/{pid}/stat")), buf)?;
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
