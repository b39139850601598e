//! Bounded child processes for the scenarios: every run has a deadline and capped output, and
//! the child's whole process group is killed when the deadline passes.
//!
//! This is test support, so failures to spawn are panics naming the program; the outcome of a
//! run that did start is data ([`Finished`]) for the test to assert on.

use std::fmt;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// Bytes kept of each of stdout and stderr; the rest is drained and counted, not kept.
pub const OUTPUT_CAP: usize = 1 << 20;

/// Time allowed between SIGTERM and SIGKILL when a deadline passes.
const GRACE: Duration = Duration::from_secs(2);

/// How often a running child is polled.
const POLL: Duration = Duration::from_millis(20);

/// The outcome of a bounded run.
#[derive(Debug)]
pub struct Finished {
    /// The exit status of the child.
    pub status: ExitStatus,
    /// Standard output, lossily decoded, at most [`OUTPUT_CAP`] bytes.
    pub stdout: String,
    /// Standard error, lossily decoded, at most [`OUTPUT_CAP`] bytes.
    pub stderr: String,
    /// Whether the deadline passed and the child was killed.
    pub timed_out: bool,
}

impl Finished {
    /// Returns the exit code, or `None` when the child died of a signal.
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// Returns whether the child exited 0 within its deadline.
    pub fn success(&self) -> bool {
        self.status.success() && !self.timed_out
    }
}

/// Renders the run as stdout, a separator, stderr and the exit status, for assertion messages.
impl fmt::Display for Finished {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.stdout)?;
        if !self.stdout.is_empty() && !self.stdout.ends_with('\n') {
            writeln!(f)?;
        }
        writeln!(f, "------- stderr -------")?;
        write!(f, "{}", self.stderr)?;
        if !self.stderr.is_empty() && !self.stderr.ends_with('\n') {
            writeln!(f)?;
        }
        match (self.status.code(), self.status.signal()) {
            (Some(code), _) => write!(f, "[exit status: {code}]")?,
            (None, Some(signal)) => write!(f, "[killed by signal {signal}]")?,
            (None, None) => write!(f, "[exit status unknown]")?,
        }
        if self.timed_out {
            write!(f, " [timed out]")?;
        }
        Ok(())
    }
}

/// Runs `cmd` with stdin from /dev/null, in its own process group, for at most `budget`.
///
/// When the budget is spent the group gets SIGTERM, then SIGKILL after a grace period; the
/// result then has `timed_out` set. Processes the child left behind in its group that keep the
/// output pipes open are killed too, so a run never hangs on a stray grandchild.
///
/// # Panics
///
/// When the program cannot be started.
pub fn run(mut cmd: Command, budget: Duration) -> Finished {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let program = cmd.get_program().to_string_lossy().into_owned();
    #[expect(
        clippy::disallowed_methods,
        reason = "the test harness runs its children with its own bounded runner"
    )]
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|err| panic!("cannot start {program}: {err}"));
    let pgid = child.id();
    let (tx, rx) = mpsc::channel();
    for (idx, stream) in [
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .enumerate()
    {
        let tx = tx.clone();
        let stream = stream.expect("both streams are piped");
        thread::spawn(move || {
            let _ = tx.send((idx, drain_capped(stream, OUTPUT_CAP)));
        });
    }
    drop(tx);

    let deadline = Instant::now() + budget;
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(err) => panic!("cannot wait for {program}: {err}"),
        }
        let now = Instant::now();
        if now >= deadline && !timed_out {
            timed_out = true;
            signal_group(pgid, libc::SIGTERM);
            let grace_end = now + GRACE;
            let status = loop {
                if let Ok(Some(status)) = child.try_wait() {
                    break Some(status);
                }
                if Instant::now() >= grace_end {
                    break None;
                }
                thread::sleep(POLL);
            };
            if let Some(status) = status {
                break status;
            }
            signal_group(pgid, libc::SIGKILL);
            break child
                .wait()
                .unwrap_or_else(|err| panic!("cannot reap {program}: {err}"));
        }
        thread::sleep(POLL);
    };

    // The readers end when every holder of the pipes is gone; a leftover in the group is killed.
    let mut outputs = [String::new(), String::new()];
    let mut pending = 2;
    let mut killed_leftovers = false;
    while pending > 0 {
        match rx.recv_timeout(GRACE) {
            Ok((idx, text)) => {
                outputs[idx] = text;
                pending -= 1;
            }
            Err(mpsc::RecvTimeoutError::Timeout) if !killed_leftovers => {
                killed_leftovers = true;
                signal_group(pgid, libc::SIGKILL);
            }
            Err(_) => panic!("the output of {program} is held open by a process outside its group"),
        }
    }
    let [stdout, stderr] = outputs;
    Finished {
        status,
        stdout,
        stderr,
        timed_out,
    }
}

/// Reads `stream` to its end, keeping at most `cap` bytes.
fn drain_capped(mut stream: impl Read, cap: usize) -> String {
    let mut kept = Vec::new();
    let mut buf = [0_u8; 8192];
    let mut dropped = 0_usize;
    loop {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = cap.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
                dropped += n.saturating_sub(room);
            }
        }
    }
    let mut text = String::from_utf8_lossy(&kept).into_owned();
    if dropped > 0 {
        text.push_str(&format!("\n[truncated {dropped} bytes]\n"));
    }
    text
}

/// Sends `signal` to the process group `pgid`; a group that is already gone is not an error.
pub fn signal_group(pgid: u32, signal: i32) {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return;
    };
    // SAFETY: kill(2) takes plain integers and has no memory effects.
    unsafe {
        libc::kill(-pgid, signal);
    }
}

/// Sends `signal` to the process `pid`; a process that is already gone is not an error.
pub fn signal_pid(pid: u32, signal: i32) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    // SAFETY: kill(2) takes plain integers and has no memory effects.
    unsafe {
        libc::kill(pid, signal);
    }
}

/// Returns whether the process `pid` is alive: it exists and is not a zombie (a zombie has
/// exited; whether anyone reaps it is up to its parent, or to an init that may not reap).
pub fn process_alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The state follows the command name, which is in parentheses and may contain anything.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    !matches!(state, None | Some("Z" | "X"))
}

/// Every living descendant of `pid` on this machine (its children, theirs, …), found through
/// each process's parent in `/proc`: a confined child's processes live in a PID namespace of
/// their own, where the PIDs they see of themselves are not these.
pub fn descendants(pid: u32) -> Vec<u32> {
    let mut parents = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for entry in dir.flatten() {
            let Some(child) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
                continue;
            };
            let parent = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<u32>().ok());
            if let Some(parent) = parent {
                parents.push((child, parent));
            }
        }
    }
    let mut found = Vec::new();
    let mut frontier = vec![pid];
    while let Some(at) = frontier.pop() {
        for &(child, parent) in &parents {
            if parent == at && !found.contains(&child) && process_alive(child) {
                found.push(child);
                frontier.push(child);
            }
        }
    }
    found
}
