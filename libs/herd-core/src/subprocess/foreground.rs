//! Running a command in the foreground to its end: spawn it as the leader of a process group,
//! pump its pipes and watch its budget and a cancel channel on the caller's thread, and reap it
//! once the group is gone.

use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use super::Error;
use super::command::{Command, Input, Output, check_duration};
use super::group::Group;
use super::pump::{Pump, SigpipeBlocked};
use super::signals::Cancel;
use super::watch::{Leader, Watch};

/// Runs `cmd` to completion, its budget, or the end of its grace period, and returns how it
/// ended.
///
/// Returns once the child has exited and been reaped and no other member of its process group
/// is running (see the module docs for processes that leave the group). That is at most the
/// budget plus the grace period plus a short settling time, unless a process is stuck in the
/// kernel, which is [`Error::Unkillable`].
pub fn run(cmd: &Command) -> Result<Output, Error> {
    run_inner(cmd, None, Duration::ZERO)
}

/// Runs `cmd` like [`run`], and also stops it on a `cancel`: a message on a channel, or a
/// termination signal of this process ([`TerminationSignals`](super::TerminationSignals)).
///
/// On a cancel the group gets SIGTERM, then SIGKILL after `cancel_grace` (or the command's
/// own grace, if that runs out first), and [`Output::cancelled`] is set. The message is
/// consumed. A disconnected channel never cancels. A cancel that arrives while the group is
/// already being terminated for its budget shortens the wait to `cancel_grace`. A signal is
/// polled with the child's pipes; a channel cannot be, so it is looked at every 10 ms, and its
/// message takes effect within that.
pub fn run_with_cancel(
    cmd: &Command,
    cancel: &dyn Cancel,
    cancel_grace: Duration,
) -> Result<Output, Error> {
    check_duration("cancel grace period", cancel_grace)?;
    run_inner(cmd, Some(cancel), cancel_grace)
}

fn run_inner(
    cmd: &Command,
    cancel: Option<&dyn Cancel>,
    cancel_grace: Duration,
) -> Result<Output, Error> {
    cmd.validate()?;
    cmd.spec.check_cwd()?;
    let program = cmd.spec.program_name();
    let supervise = |source: io::Error| Error::Supervise {
        program: program.clone(),
        source,
    };

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

    let mut pump = Pump::new(&mut child, cmd).map_err(supervise)?;
    let sigpipe = pump.feeds_stdin().then(SigpipeBlocked::new);
    let leader = Leader::of(child.id(), group.pgid);
    let mut watch = Watch::new(leader, group.pgid, cmd.grace, cancel, cancel_grace);
    watch
        .run(&mut pump, started + cmd.budget)
        .map_err(supervise)?;
    let Some(exited_at) = watch.exited_at else {
        return Err(Error::Unkillable {
            program,
            pid: child.id(),
        });
    };

    // The group is gone, so everything it wrote is in the pipes: take what is left, without
    // waiting for writers that escaped the group.
    let (stdout, stderr) = pump.finish();
    drop(sigpipe);
    // Reaping frees the PID (and with it the group ID): from here on the group is not signalled.
    group.disarm();
    let status = child.wait().map_err(supervise)?;
    Ok(Output {
        code: status.code(),
        signal: status.signal(),
        timed_out: watch.timed_out,
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
