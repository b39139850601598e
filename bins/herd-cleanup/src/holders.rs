//! The process-holder scan: same-user processes whose working directory is inside a checkout.
//!
//! On macOS the same scan reads `lsof`'s cwd records ([`lsof`]); other platforms have none, and
//! cleanup blocks there. On Linux, through `/proc`: the numeric entries of `/proc` are listed, processes of other
//! users are skipped (their details are not ours to read), and each remaining process's cwd is
//! read with `readlink /proc/<pid>/cwd`, which asks the kernel for the path without opening the
//! directory. A process that vanished meanwhile (`ENOENT`, `ESRCH`, or a zombie, whose cwd link
//! is gone) is not a holder. Any other error leaves the process "not proven unrelated": a
//! warning with a bounded sample of PIDs, never a blocker, and the scan goes on so another
//! holder still blocks. A scan that cannot enumerate `/proc` at all gives no answer, and the
//! caller blocks on that.
//!
//! The scan reads as little as it can per process (one `lstat` for the owner, one `readlink`),
//! and reads `comm` only for the processes found inside a checkout, which is what keeps it far
//! cheaper than `lsof -d cwd`.

mod lsof;

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The most PIDs a warning names; the count says how many there were.
pub const PID_SAMPLE: usize = 10;

/// The shells whose idle instance Herdr can confirm; only they may be exempt (a runtime that
/// happens to sit at an exempt PID, such as a Pi started with `exec`, is never exempt).
pub const SHELLS: &[&str] = &["bash", "zsh", "fish", "sh", "dash"];

/// The bound of a `comm` read (the kernel keeps 16 bytes).
const COMM_LIMIT: u64 = 64;

/// A process whose cwd is inside a checkout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub pid: u32,
    /// `/proc/<pid>/comm`, when readable.
    pub comm: Option<String>,
    /// The cwd as the kernel reports it.
    pub cwd: PathBuf,
    /// Which of the scanned checkouts it is inside (an index into the scan's targets).
    pub target: usize,
}

/// What one scan saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    pub holders: Vec<Holder>,
    /// Same-user processes whose cwd could not be read: how many, and the first PIDs.
    pub unreadable: Sample,
    /// How many same-user processes were inspected.
    pub inspected: usize,
}

/// A count with a bounded sample of PIDs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sample {
    pub count: usize,
    pub pids: Vec<u32>,
}

impl Sample {
    fn add(&mut self, pid: u32) {
        self.count += 1;
        if self.pids.len() < PID_SAMPLE {
            self.pids.push(pid);
        }
    }

    /// `4 processes (PIDs 12, 13, 17, 20)`, `1 process (PID 12)`, `12 processes (PIDs 1, …, 10,
    /// and 2 more)`.
    pub fn describe(&self) -> String {
        let noun = if self.count == 1 {
            "process"
        } else {
            "processes"
        };
        let pids: Vec<String> = self.pids.iter().map(u32::to_string).collect();
        let label = if self.pids.len() == 1 { "PID" } else { "PIDs" };
        let more = self.count.saturating_sub(self.pids.len());
        if more > 0 {
            format!(
                "{} {noun} ({label} {}, and {more} more)",
                self.count,
                pids.join(", ")
            )
        } else {
            format!("{} {noun} ({label} {})", self.count, pids.join(", "))
        }
    }
}

/// Why the scan gave no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("process inspection is not supported on this platform")]
    Unsupported,
    #[error("cannot enumerate processes: {0}")]
    Enumeration(String),
}

/// Scans `/proc` for same-user processes whose cwd is inside one of `targets` (canonical
/// checkout paths); this process itself is skipped.
///
/// Every holder is returned with its `comm`: whether an idle shell Herdr confirmed is exempt is
/// the caller's decision (see [`SHELLS`]), since it depends on the checkout's workspace.
pub fn scan(targets: &[PathBuf]) -> Result<Scan, Error> {
    if cfg!(target_os = "linux") {
        return scan_in(Path::new("/proc"), targets);
    }
    if cfg!(target_os = "macos") {
        // SAFETY: getuid has no preconditions and cannot fail.
        let uid = unsafe { libc::getuid() };
        return lsof::scan(Path::new("lsof"), uid, std::process::id(), targets);
    }
    Err(Error::Unsupported)
}

/// [`scan`] over a `/proc` mounted at `proc`.
pub fn scan_in(proc: &Path, targets: &[PathBuf]) -> Result<Scan, Error> {
    let me = std::process::id();
    trust(proc, me)?;
    let uid = std::fs::metadata(proc.join("self"))
        .map_err(|e| {
            Error::Enumeration(format!("cannot read {}: {e}", proc.join("self").display()))
        })?
        .uid();
    let entries = std::fs::read_dir(proc)
        .map_err(|e| Error::Enumeration(format!("cannot list {}: {e}", proc.display())))?;
    let mut scan = Scan::default();
    let mut saw_any = false;
    for entry in entries {
        let entry = entry
            .map_err(|e| Error::Enumeration(format!("cannot list {}: {e}", proc.display())))?;
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        saw_any = true;
        if pid == me {
            continue;
        }
        let dir = entry.path();
        match std::fs::symlink_metadata(&dir) {
            Ok(meta) if meta.uid() != uid => continue,
            Ok(_) => {}
            Err(e) if gone(&e) => continue,
            Err(_) => {
                scan.unreadable.add(pid);
                continue;
            }
        }
        scan.inspected += 1;
        let cwd = match std::fs::read_link(dir.join("cwd")) {
            Ok(cwd) => cwd,
            Err(e) if gone(&e) => continue,
            Err(_) => {
                scan.unreadable.add(pid);
                continue;
            }
        };
        let Some(target) = targets.iter().position(|t| cwd.starts_with(t)) else {
            continue;
        };
        let comm = read_comm(&dir);
        scan.holders.push(Holder {
            pid,
            comm,
            cwd,
            target,
        });
    }
    if !saw_any {
        return Err(Error::Enumeration(format!(
            "{} lists no processes",
            proc.display()
        )));
    }
    scan.holders.sort_by_key(|h| h.pid);
    Ok(scan)
}

/// `/proc` is believed only when `self` names this process: a `/proc` of another PID namespace
/// (or none at all) would answer about other processes.
fn trust(proc: &Path, me: u32) -> Result<(), Error> {
    let link = std::fs::read_link(proc.join("self")).map_err(|e| {
        Error::Enumeration(format!("cannot read {}: {e}", proc.join("self").display()))
    })?;
    if link.to_str().and_then(|s| s.parse::<u32>().ok()) == Some(me) {
        Ok(())
    } else {
        Err(Error::Enumeration(format!(
            "{} does not name this process; it belongs to another PID namespace",
            proc.join("self").display()
        )))
    }
}

/// Whether an error says the process is gone (or a zombie whose links are gone).
fn gone(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ESRCH)
}

fn read_comm(dir: &Path) -> Option<String> {
    use std::io::Read;
    let file = std::fs::File::open(dir.join("comm")).ok()?;
    let mut bytes = Vec::new();
    file.take(COMM_LIMIT).read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    Some(text.trim_end_matches('\n').to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_samples() {
        let mut s = Sample::default();
        s.add(7);
        assert_eq!(s.describe(), "1 process (PID 7)");
        for pid in 8..20 {
            s.add(pid);
        }
        assert_eq!(
            s.describe(),
            "13 processes (PIDs 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, and 3 more)"
        );
    }

    #[test]
    fn a_proc_of_another_namespace_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("1", dir.path().join("self")).unwrap();
        let err = scan_in(dir.path(), &[]).unwrap_err();
        assert!(matches!(err, Error::Enumeration(_)), "{err}");
    }

    #[test]
    fn finds_own_children_by_cwd() {
        // The scan skips this process itself, so a child of ours stands in as the holder.
        let dir = tempfile::tempdir().unwrap();
        let target = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(target.join("sub")).unwrap();
        #[expect(
            clippy::disallowed_methods,
            reason = "a real process whose cwd the scan must find"
        )]
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .current_dir(target.join("sub"))
            .spawn()
            .unwrap();
        let found = scan(std::slice::from_ref(&target)).unwrap();
        let elsewhere = scan(&[target.join("other")]).unwrap();
        let pid = child.id();
        child.kill().unwrap();
        child.wait().unwrap();
        let holder = found
            .holders
            .iter()
            .find(|h| h.pid == pid)
            .expect("the child holds the directory");
        assert_eq!(holder.comm.as_deref(), Some("sleep"));
        assert_eq!(holder.cwd, target.join("sub"));
        assert_eq!(holder.target, 0);
        assert!(found.inspected > 0);
        assert!(!elsewhere.holders.iter().any(|h| h.pid == pid));
    }
}
