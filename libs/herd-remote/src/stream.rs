//! A long-lived remote command over the master connection: its stdout read as lines, its stdin
//! written a line at a time. The relay's conversation with the remote `herd-watch follow --json
//! --ack` is one.
//!
//! It has no budget of its own: it lives as long as the relay wants it, and every read has a
//! timeout ([`Session::next_line`]). The `ssh` client leads a process group of its own, which is
//! terminated (TERM, then KILL) when the session is dropped, and gets SIGTERM when the thread
//! that started it dies. It is framed as every remote call ([`crate::frame`]): the script goes
//! first on its stdin, and the lines before the marker (what the login shell printed) are not
//! the session's. Lines are bounded ([`LINE_LIMIT`]); stderr is drained into a bounded tail for
//! the error message.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use herd_core::{Error, ErrorCode};

use crate::frame::Frame;
use crate::ssh::Ssh;

/// The longest stdout line kept; a longer one is cut there.
pub const LINE_LIMIT: usize = 4 * 1024 * 1024;
/// The stderr kept (its tail).
const STDERR_TAIL: usize = 16 * 1024;

/// What [`Session::next_line`] got.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    Text(String),
    /// Nothing within the timeout; the session is still up.
    Quiet,
    /// stdout ended: the remote command or the connection is gone.
    Closed,
}

/// A remote command with its stdin and stdout.
pub struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<Vec<u8>>>,
    frame: Frame,
}

impl Session {
    /// Starts `argv` on the remote through `ssh`.
    ///
    /// # Errors
    ///
    /// `unavailable` when `ssh` cannot be started; `invalid_request` for an argv that cannot be
    /// quoted.
    pub fn start<S: AsRef<str>>(ssh: &Ssh, argv: &[S]) -> Result<Session, Error> {
        let frame = Frame::new(argv)?;
        #[expect(
            clippy::disallowed_methods,
            reason = "a conversation that lives as long as the relay: its reads have timeouts, its \
                      process group is terminated on drop"
        )]
        let mut cmd = std::process::Command::new(ssh.program());
        cmd.args(ssh.login_args())
            .env("LC_ALL", "C")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        // The ssh client ends with the process that started it (a relay SIGKILLed leaves no
        // client holding the remote follower's session).
        // SAFETY: prctl(PR_SET_PDEATHSIG) is async-signal-safe and touches no memory of ours.
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        #[expect(
            clippy::disallowed_methods,
            reason = "see above: the session's group is terminated on drop"
        )]
        let mut child = cmd.spawn().map_err(|e| {
            Error::new(
                ErrorCode::Unavailable,
                format!("cannot run ssh for {}: {e}", ssh.destination()),
            )
        })?;
        let mut stdin = child.stdin.take();
        if let Some(input) = stdin.as_mut() {
            // The script first; a failure shows as the session's end.
            let _ = input.write_all(frame.line()).and_then(|()| input.flush());
        }
        let stdout = child.stdout.take();
        let stderr_pipe = child.stderr.take();
        let (tx, lines) = mpsc::channel();
        if let Some(stdout) = stdout {
            let seen = frame.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stdout);
                // What the login shell printed before herd's marker is not herd's.
                let mut framed = false;
                loop {
                    let mut line = Vec::new();
                    match (&mut reader)
                        .take(LINE_LIMIT as u64)
                        .read_until(b'\n', &mut line)
                    {
                        Ok(0) | Err(_) => return,
                        Ok(_) => {}
                    }
                    if line.last() != Some(&b'\n') && line.len() == LINE_LIMIT {
                        let _ = reader.skip_until(b'\n');
                    }
                    let text = String::from_utf8_lossy(&line).trim_end().to_owned();
                    if !framed {
                        framed = seen.is_marker(&text);
                        continue;
                    }
                    if tx.send(text).is_err() {
                        return;
                    }
                }
            });
        }
        let stderr = Arc::new(Mutex::new(Vec::new()));
        if let Some(mut pipe) = stderr_pipe {
            let sink = Arc::clone(&stderr);
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = pipe.read(&mut buf) {
                    if n == 0 {
                        return;
                    }
                    let mut kept = sink
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    kept.extend_from_slice(&buf[..n]);
                    let excess = kept.len().saturating_sub(STDERR_TAIL);
                    kept.drain(..excess);
                }
            });
        }
        Ok(Session {
            child,
            stdin,
            lines,
            stderr,
            frame,
        })
    }

    /// The next stdout line, waiting at most `timeout`.
    pub fn next_line(&mut self, timeout: Duration) -> Line {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => Line::Text(line),
            Err(RecvTimeoutError::Timeout) => Line::Quiet,
            Err(RecvTimeoutError::Disconnected) => Line::Closed,
        }
    }

    /// Writes `line` and a newline to the remote command's stdin.
    ///
    /// # Errors
    ///
    /// `unavailable` when the session's stdin is closed.
    pub fn send(&mut self, line: &str) -> Result<(), Error> {
        let gone = |e: std::io::Error| {
            Error::new(
                ErrorCode::Unavailable,
                format!("the remote session's input is closed: {e}"),
            )
        };
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| gone(std::io::Error::other("closed")))?;
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .map_err(gone)?;
        stdin.flush().map_err(gone)
    }

    /// The tail of what `ssh` and the remote command wrote on stderr.
    pub fn stderr(&self) -> String {
        let kept = self
            .stderr
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let own = self.frame.after(&kept).unwrap_or(&kept);
        String::from_utf8_lossy(own).into_owned()
    }

    /// The exit code, once the `ssh` client has exited.
    pub fn exit_code(&mut self) -> Option<i32> {
        self.child.try_wait().ok().flatten().and_then(|s| s.code())
    }

    /// Closes stdin (the remote follower's end of input) and ends the session.
    pub fn close(mut self) {
        self.stdin = None;
        self.terminate();
    }

    fn terminate(&mut self) {
        self.stdin = None;
        let Ok(pgid) = libc::pid_t::try_from(self.child.id()) else {
            return;
        };
        for (signal, wait) in [
            (libc::SIGTERM, Duration::from_secs(2)),
            (libc::SIGKILL, Duration::from_secs(5)),
        ] {
            if self.child.try_wait().ok().flatten().is_some() {
                break;
            }
            // SAFETY: kill(2) on the group this session's ssh leads; no memory effects.
            unsafe {
                libc::kill(-pgid, signal);
            }
            let deadline = std::time::Instant::now() + wait;
            while std::time::Instant::now() < deadline {
                if self.child.try_wait().ok().flatten().is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let _ = self.child.try_wait();
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.terminate();
    }
}
