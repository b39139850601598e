//! Signals kept inside: Landlock's scoping (Linux 6.12, Landlock ABI 6) lets a process and
//! everything it starts signal, and reach by an abstract Unix socket, only processes of its own
//! Landlock domain (or domains nested in it), while every process outside can still signal in.
//!
//! This is what keeps a confined child from signalling the person's other processes without a PID
//! namespace of its own, so every identity herd records stays the machine's: herd outside can
//! verify and signal the child and the children it starts, and a confined child's own spawns work.
//! Where the kernel has no such scoping the sandbox falls back to a PID namespace
//! ([`crate::bwrap::Isolation`]).

use std::io;

/// `LANDLOCK_CREATE_RULESET_VERSION`: asks the kernel for its Landlock ABI.
const CREATE_RULESET_VERSION: u32 = 1 << 0;
/// `LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET`.
const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
/// `LANDLOCK_SCOPE_SIGNAL`.
const SCOPE_SIGNAL: u64 = 1 << 1;
/// The first ABI with scoping.
const SCOPED_ABI: i64 = 6;

/// `struct landlock_ruleset_attr` (ABI 6).
#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

/// The kernel's Landlock ABI, `None` when Landlock is off or absent.
pub fn abi() -> Option<i64> {
    // SAFETY: landlock_create_ruleset(NULL, 0, VERSION) reads no memory and returns the ABI.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    (version > 0).then_some(version)
}

/// Whether this kernel can keep a sandbox's signals inside.
pub fn can_scope_signals() -> bool {
    abi().is_some_and(|v| v >= SCOPED_ABI)
}

/// Restricts this process, and everything it will start, to signalling (and reaching by an
/// abstract Unix socket) only its own Landlock domain. Irreversible; sets `no_new_privs`.
pub fn scope_signals() -> io::Result<()> {
    let attr = RulesetAttr {
        handled_access_fs: 0,
        handled_access_net: 0,
        scoped: SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX_SOCKET,
    };
    // SAFETY: `attr` lives across the call and its size is passed with it.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            &raw const attr,
            std::mem::size_of::<RulesetAttr>(),
            0u32,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd =
        i32::try_from(fd).map_err(|_| io::Error::other("a ruleset descriptor out of range"))?;
    // SAFETY: prctl with integer arguments only.
    let set = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    let result = if set != 0 {
        Err(io::Error::last_os_error())
    } else {
        // SAFETY: `fd` is the ruleset just created; flags 0.
        let rc = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) };
        if rc != 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    };
    // SAFETY: `fd` was returned above and is closed once.
    unsafe {
        libc::close(fd);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_abi_is_asked_without_side_effects() {
        // Whatever the kernel answers, asking twice answers the same.
        assert_eq!(abi(), abi());
    }
}
