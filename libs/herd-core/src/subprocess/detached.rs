//! Detached children: started in a session of their own, output appended to log files, adopted
//! by init, supervised by the caller through their identity.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use super::Error;
use super::foreground::spawn;
use super::pump::pipe;
use super::spec::{EnvOp, Spec, spec_methods};
use super::watch::KILL_WAIT;

/// A child to start in the background, for [`spawn_detached`].
///
/// ```no_run
/// use herd_core::subprocess::{self, Detached};
///
/// let pid = subprocess::spawn_detached(
///     &Detached::new("pi", "/tmp/run.stdout.log", "/tmp/run.stderr.log")
///         .args(["--session", "/tmp/run.jsonl"])
///         .cwd("/tmp/checkout")
///         .env("PI_SUBAGENT_ID", "run-1"),
/// )?;
/// # Ok::<(), subprocess::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detached {
    spec: Spec,
    stdin: Option<PathBuf>,
    stdout_log: PathBuf,
    stderr_log: PathBuf,
}

impl Detached {
    /// Starts a description of a detached child whose stdout and stderr are appended to the
    /// given files (created with mode 0600 if missing; they may be the same file).
    #[must_use]
    pub fn new(
        program: impl Into<OsString>,
        stdout_log: impl Into<PathBuf>,
        stderr_log: impl Into<PathBuf>,
    ) -> Detached {
        Detached {
            spec: Spec::new(program.into()),
            stdin: None,
            stdout_log: stdout_log.into(),
            stderr_log: stderr_log.into(),
        }
    }

    spec_methods!();

    /// Reads standard input from `path` instead of `/dev/null`.
    #[must_use]
    pub fn stdin_file(mut self, path: impl Into<PathBuf>) -> Detached {
        self.stdin = Some(path.into());
        self
    }
}

/// Starts `cmd` in a new session and returns its PID without waiting for it.
///
/// The child is started through an intermediate process that forks it and exits at once, so the
/// child is adopted by init (or the nearest subreaper) and never becomes a zombie of the caller:
/// a herd process may exit or keep running without reaping it. The child calls `setsid`, so it
/// leads a session and a process group whose IDs equal its PID, has no controlling terminal,
/// and is not in the caller's group.
///
/// Returns only after the child has exec'd its program: a missing program or working directory
/// is an error here, not a child that dies silently. The caller supervises the child through
/// its identity ([`crate::identity::capture`]).
pub fn spawn_detached(cmd: &Detached) -> Result<u32, Error> {
    cmd.spec.validate()?;
    cmd.spec.check_cwd()?;
    let program = cmd.spec.program_name();
    let supervise = |source: io::Error| Error::Supervise {
        program: program.clone(),
        source,
    };
    let stdin = match &cmd.stdin {
        Some(path) => Stdio::from(File::open(path).map_err(|source| Error::File {
            path: path.clone(),
            source,
        })?),
        None => Stdio::null(),
    };
    let stdout = open_log(&cmd.stdout_log)?;
    let stderr = open_log(&cmd.stderr_log)?;

    let (pid_rx, pid_tx) = pipe().map_err(supervise)?;
    let pid_tx_raw = pid_tx.as_raw_fd();
    let mut std_cmd = cmd.spec.to_std();
    std_cmd.stdin(stdin).stdout(stdout).stderr(stderr);
    let detach = move || -> io::Result<()> {
        // Runs in the forked child, before exec: only async-signal-safe calls from here.
        // SAFETY: fork, write, _exit and setsid are async-signal-safe, and the child of a fork
        // has a single thread, so the second fork cannot deadlock on another thread's lock.
        unsafe {
            let grandchild = libc::fork();
            if grandchild < 0 {
                return Err(io::Error::last_os_error());
            }
            if grandchild > 0 {
                // The intermediate process: report the PID and leave, so nobody has to reap
                // the grandchild. A short write is impossible for 4 bytes into an empty pipe.
                let bytes = grandchild.to_ne_bytes();
                libc::write(pid_tx_raw, bytes.as_ptr().cast(), bytes.len());
                libc::_exit(0);
            }
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            // The signals herd controls a child with start at their defaults, whatever the
            // launcher ignored: one started in the background ignores SIGINT and SIGQUIT, and
            // an ignored signal stays ignored across exec (a shell cannot even trap it).
            for signal in [libc::SIGINT, libc::SIGQUIT, libc::SIGTERM] {
                // SAFETY: sigaction is async-signal-safe; a zeroed action is SIG_DFL, no flags.
                let action: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, &action, std::ptr::null_mut()) < 0 {
                    return Err(io::Error::last_os_error());
                }
            }
        }
        Ok(())
    };
    // SAFETY: the closure only makes async-signal-safe calls (see inside).
    unsafe {
        std_cmd.pre_exec(detach);
    }
    // `spawn` returns once every copy of std's close-on-exec error pipe is closed: the
    // intermediate's at its exit, the grandchild's at its exec. An exec error in the grandchild
    // is written to that pipe, so it surfaces here as a spawn error.
    let mut intermediate = spawn(&mut std_cmd).map_err(|err| cmd.spec.spawn_error(err))?;
    drop(pid_tx);
    let reaped = reap_within(&mut intermediate, KILL_WAIT);
    let mut bytes = [0u8; 4];
    let mut pid_file = File::from(pid_rx);
    pid_file.read_exact(&mut bytes).map_err(supervise)?;
    reaped.map_err(supervise)?;
    let pid = libc::pid_t::from_ne_bytes(bytes);
    u32::try_from(pid).map_err(|_| supervise(io::Error::other("negative pid reported")))
}

/// Opens a log for appending: created 0600 if missing, never through a symlink in its place.
fn open_log(path: &Path) -> Result<Stdio, Error> {
    crate::sidecar::private()
        .append(true)
        .create(true)
        .open(path)
        .map(Stdio::from)
        .map_err(|source| Error::File {
            path: path.to_path_buf(),
            source,
        })
}

/// Reaps `child`, which is known to exit at once, waiting at most `bound`.
fn reap_within(child: &mut Child, bound: Duration) -> io::Result<()> {
    let deadline = Instant::now() + bound;
    loop {
        if child.try_wait()?.is_some() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the intermediate process did not exit",
            ));
        }
        thread::sleep(Duration::from_millis(1));
    }
}
