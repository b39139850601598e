//! Signals past a recorded process that does not pass them on.
//!
//! A confined child's recorded process is its sandbox (bubblewrap): SIGINT ends it, and its end
//! ends the sandbox, instead of reaching the command inside. [`signal_through`] signals that
//! command instead: the live children of the recorded process, found in `/proc` by their parent
//! PID and a start time no earlier than the recorded one. Each child is judged again through a
//! pidfd (its start time and its parent the same), and the recorded process is judged alive after
//! that, so the parent PID the child names was the recorded process's and no other's; only then
//! does the signal go, through the pidfd. A child that is itself such a process (bubblewrap's
//! init, in a PID namespace of its own) is passed through in turn.

use super::{
    Judgement, Pidfd, Record, Stat, Termination, check_context, judge, judge_stat, parse_stat,
    read_current_stat, read_proc, stat_path, terminate,
};

/// The most processes named `through` passed through on the way down.
const MAX_DEPTH: u32 = 4;

/// Sends `signal` to the recorded process, or, when its command name is `through` (a process
/// that does not pass signals on), to the processes it runs, each verified as its child.
/// [`Termination::Signalled`] once at least one was signalled; [`Termination::Unknown`] when the
/// recorded process runs nothing yet, or anything cannot be told.
pub fn signal_through(record: &Record, signal: i32, through: &str) -> Termination {
    if let Err(reason) = check_context(record) {
        return Termination::Unknown(reason);
    }
    let stat = match read_current_stat(record) {
        Ok(Some(stat)) => stat,
        Ok(None) => return Termination::Exited,
        Err(reason) => return Termination::Unknown(reason),
    };
    match judge_stat(record, &stat) {
        Judgement::Alive => {}
        Judgement::Exited => return Termination::Exited,
        Judgement::Unknown(reason) => return Termination::Unknown(reason),
    }
    if stat.comm != through {
        return terminate(record, signal);
    }
    match signal_children(record, signal, through, MAX_DEPTH) {
        Ok(0) => match judge(record) {
            Judgement::Alive => Termination::Unknown(format!(
                "process {} ({through}) runs nothing to signal yet",
                record.pid
            )),
            Judgement::Exited => Termination::Exited,
            Judgement::Unknown(reason) => Termination::Unknown(reason),
        },
        Ok(_) => Termination::Signalled,
        Err(reason) => Termination::Unknown(reason),
    }
}

fn is_child(parent: &Record, stat: &Stat) -> bool {
    i64::from(parent.pid) == stat.ppid
        && stat.start_time >= parent.start_time
        && !matches!(stat.state, b'Z' | b'X' | b'x')
}

/// The live children of `parent`, as the scan saw them: their PIDs and start times.
fn children(parent: &Record) -> Result<Vec<(u32, u64)>, String> {
    Ok(super::proc::scan(|stat| is_child(parent, stat))?
        .into_iter()
        .map(|stat| (stat.pid, stat.start_time))
        .collect())
}

/// Signals the verified children of `parent`, passing through those named `through` while
/// `depth` allows; returns how many were signalled.
fn signal_children(
    parent: &Record,
    signal: i32,
    through: &str,
    depth: u32,
) -> Result<usize, String> {
    let mut signalled = 0;
    for (pid, start_time) in children(parent)? {
        let Ok(pidfd) = Pidfd::open(pid) else {
            continue;
        };
        // Read after the pidfd exists: the same start time proves it names the child.
        let Ok(Some(bytes)) = read_proc(&stat_path(pid)) else {
            continue;
        };
        let Ok(stat) = parse_stat(&bytes) else {
            continue;
        };
        if stat.start_time != start_time || !is_child(parent, &stat) {
            continue;
        }
        // The parent is still the recorded process: the PID the child names was its.
        if judge(parent) != Judgement::Alive {
            break;
        }
        if stat.comm == through && depth > 0 {
            let inner = Record {
                pid,
                start_time,
                ..parent.clone()
            };
            signalled += signal_children(&inner, signal, through, depth - 1)?;
        } else if pidfd.send_signal(signal).is_ok() {
            signalled += 1;
        }
    }
    Ok(signalled)
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::{Duration, Instant};

    use super::*;
    use crate::identity::capture;

    /// Starts `sh -c script` and returns it with its identity.
    fn start(script: &str) -> (std::process::Child, Record) {
        #[expect(
            clippy::disallowed_methods,
            reason = "a test process the test kills itself"
        )]
        let child = std::process::Command::new("sh")
            .args(["-c", script])
            .spawn()
            .unwrap();
        let record = capture(child.id(), "t1", Path::new("/s.jsonl")).unwrap();
        (child, record)
    }

    fn wait_for(what: &str, mut check: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !check() {
            assert!(Instant::now() < deadline, "no {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn a_process_of_another_name_is_signalled_itself() {
        let (mut child, record) = start("sleep 30");
        assert_eq!(
            signal_through(&record, libc::SIGKILL, "no-such-name"),
            Termination::Signalled
        );
        child.wait().unwrap();
        assert_eq!(
            signal_through(&record, libc::SIGKILL, "sh"),
            Termination::Exited
        );
    }

    #[test]
    fn through_processes_pass_the_signal_down_to_the_command_and_live_on() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("sleeper");
        // Two shells (named `sh`, as bubblewrap and its init would be) wait for the child,
        // which says it is there.
        let script = format!(
            "sh -c \"sh -c 'echo \\$\\$ > {m}.tmp && mv {m}.tmp {m} && exec sleep 30'; true\"; echo after",
            m = marker.display()
        );
        let (mut child, record) = start(&script);
        wait_for("the grandchild", || marker.exists());
        let sleeper: u32 = std::fs::read_to_string(&marker)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // Once it is `sleep`, not the `sh` it was before its exec.
        wait_for("the exec", || {
            std::fs::read_to_string(format!("/proc/{sleeper}/comm"))
                .is_ok_and(|comm| comm.trim() == "sleep")
        });
        let sleeper = capture(sleeper, "t1", Path::new("/s.jsonl")).unwrap();
        assert_eq!(
            signal_through(&record, libc::SIGTERM, "sh"),
            Termination::Signalled
        );
        wait_for("the child's end", || judge(&sleeper) == Judgement::Exited);
        // The shells themselves were not signalled: they ran on and ended by themselves.
        let status = child.wait().unwrap();
        assert!(status.success(), "{status:?}");
    }
}
