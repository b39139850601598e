//! Running a command in the foreground to its end: spawn it as the leader of a process group,
//! pump its pipes, watch its budget and a cancel channel, and reap it once the group is gone.

use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;

use super::Error;
use super::command::{Command, Input, Output, check_duration};
use super::group::{Group, group_has_live_members, wait_exited};
use super::pump::{Pump, pipe};
use super::watch::Watch;

/// Runs `cmd` to completion, its budget, or the end of its grace period, and returns how it
/// ended.
///
/// Returns once the child has exited and been reaped and no other member of its process group
/// is running (see the module docs for processes that leave the group). That is at most the
/// budget plus the grace period plus a short settling time, unless a process is stuck in the
/// kernel, which is [`Error::Unkillable`].
pub fn run(cmd: &Command) -> Result<Output, Error> {
    run_inner(cmd, crossbeam_channel::never::<()>(), Duration::ZERO)
}

/// Runs `cmd` like [`run`], and also stops it when a message arrives on `cancel`.
///
/// On a message the group gets SIGTERM, then SIGKILL after `cancel_grace` (or the command's
/// own grace, if that runs out first), and [`Output::cancelled`] is set. The message is
/// consumed. A disconnected channel never cancels. A cancel that arrives while the group is
/// already being terminated for its budget shortens the wait to `cancel_grace`.
pub fn run_with_cancel<T>(
    cmd: &Command,
    cancel: &Receiver<T>,
    cancel_grace: Duration,
) -> Result<Output, Error> {
    check_duration("cancel grace period", cancel_grace)?;
    run_inner(cmd, cancel.clone(), cancel_grace)
}

fn run_inner<T>(
    cmd: &Command,
    cancel: Receiver<T>,
    cancel_grace: Duration,
) -> Result<Output, Error> {
    cmd.validate()?;
    cmd.spec.check_cwd()?;
    let program = cmd.spec.program_name();
    let supervise = |source: io::Error| Error::Supervise {
        program: program.clone(),
        source,
    };

    // Created before the spawn, close-on-exec, so the child never holds it.
    let (wake_rx, wake_tx) = pipe().map_err(supervise)?;

    let mut std_cmd = cmd.spec.to_std();
    std_cmd.process_group(0);
    std_cmd.stdin(match cmd.stdin {
        Input::Null => Stdio::null(),
        Input::Bytes(_) => Stdio::piped(),
    });
    std_cmd.stdout(Stdio::piped());
    std_cmd.stderr(Stdio::piped());
    // The clock starts before the spawn: the child may run (and a busy machine may keep this
    // thread off its core) before the spawn returns, and the budget covers the start too.
    let started = Instant::now();
    let mut child = spawn(&mut std_cmd).map_err(|err| cmd.spec.spawn_error(err))?;
    let mut group = Group::new(&child);

    let pump = Pump::new(&mut child, cmd, wake_rx).map_err(supervise)?;
    let io_thread = thread::Builder::new()
        .name("herd-subprocess-io".into())
        .spawn(move || pump.run())
        .map_err(supervise)?;
    let (exit_tx, exit_rx) = crossbeam_channel::bounded(1);
    let leader = group.pgid;
    thread::Builder::new()
        .name("herd-subprocess-wait".into())
        .spawn(move || {
            // The receiver is gone only when `run` gave up on an unkillable child.
            let _ = exit_tx.send(wait_exited(leader));
        })
        .map_err(supervise)?;

    let mut watch = Watch {
        pgid: group.pgid,
        exited: exit_rx,
        exited_at: None,
        cancel,
        cancel_grace,
        cancelled: false,
    };
    let deadline = started + cmd.budget;
    let mut timed_out = false;
    if !watch.wait_leader(deadline).map_err(supervise)? {
        let grace = if watch.cancelled {
            cancel_grace.min(cmd.grace)
        } else {
            timed_out = true;
            cmd.grace
        };
        watch.stop_group(grace).map_err(supervise)?;
    } else if group_has_live_members(watch.pgid) {
        // The child is done; anything it left running in its group goes with it.
        watch.stop_group(cmd.grace).map_err(supervise)?;
    }
    let Some(exited_at) = watch.exited_at else {
        return Err(Error::Unkillable {
            program,
            pid: child.id(),
        });
    };

    // The group is gone, so everything it wrote is in the pipes: the pump reads what is left
    // and returns without waiting for writers that escaped the group.
    drop(wake_tx);
    let captured = io_thread.join();
    // Reaping frees the PID (and with it the group ID): from here on the group is not signalled.
    group.disarm();
    let status = child.wait().map_err(supervise)?;
    let (stdout, stderr) =
        captured.map_err(|_| supervise(io::Error::other("output reader panicked")))?;
    Ok(Output {
        code: status.code(),
        signal: status.signal(),
        timed_out,
        cancelled: watch.cancelled,
        elapsed: exited_at.saturating_duration_since(started),
        stdout,
        stderr,
    })
}

#[expect(
    clippy::disallowed_methods,
    reason = "this module is the one place allowed to spawn"
)]
pub(super) fn spawn(cmd: &mut std::process::Command) -> io::Result<Child> {
    // A script written a moment ago can still be open for writing in a child that another thread
    // forked before its exec closed the descriptor; exec then fails with ETXTBSY until that
    // exec happens. It is transient, so a few short retries settle it.
    let mut retries = 0;
    loop {
        match cmd.spawn() {
            Err(err) if err.raw_os_error() == Some(libc::ETXTBSY) && retries < ETXTBSY_RETRIES => {
                retries += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

/// How often a spawn that fails with ETXTBSY is tried again (10 ms apart).
const ETXTBSY_RETRIES: u32 = 20;
