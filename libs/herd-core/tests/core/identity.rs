//! Process identity against real processes: live, reaped and zombie children, reused PIDs,
//! other boots and namespaces, ancestry through a real shell, signals through a pidfd, and the
//! `.process.json` record file.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use herd_core::ErrorCode;
use herd_core::identity::{
    self, Ancestry, DEFAULT_MAX_HOPS, Error, Judgement, Record, Termination, capture,
    is_descendant_of, judge, terminate, wait_exited,
};
use herd_e2e::wait::wait_for;

const SESSION: &str = "/sessions/2024_abc.jsonl";

/// A spawned child in its own process group; the group is killed and the child reaped on drop,
/// so a failing test leaves nothing behind.
struct Proc {
    child: Child,
}

impl Proc {
    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn capture(&self) -> Record {
        capture(self.pid(), "run-1", Path::new(SESSION)).expect("a spawned child can be captured")
    }

    /// Whether the child has not been reaped and has not exited.
    fn running(&mut self) -> bool {
        self.child
            .try_wait()
            .expect("try_wait on an own child")
            .is_none()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        // The child is not reaped yet, so its PID (and group id) cannot have been reused.
        if self.child.try_wait().ok().flatten().is_none() {
            // SAFETY: kill has no memory-safety preconditions.
            unsafe { libc::kill(-(self.child.id() as libc::pid_t), libc::SIGKILL) };
        }
        let _ = self.child.wait();
    }
}

#[expect(
    clippy::disallowed_methods,
    reason = "identity is tested against real processes"
)]
fn spawn(program: impl AsRef<OsStr>, args: &[&str], configure: impl FnOnce(&mut Command)) -> Proc {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    configure(&mut cmd);
    Proc {
        child: cmd.spawn().expect("the test program starts"),
    }
}

fn sleeper() -> Proc {
    spawn("sleep", &["30"], |_| {})
}

/// A `sleep` with SIGTERM blocked: a signal sent to it stays pending and visible in
/// `/proc/<pid>/status`, so a test can tell exactly whether anything was sent.
fn blocked_sleeper() -> Proc {
    spawn("sleep", &["30"], |cmd| {
        // SAFETY: the closure only calls async-signal-safe functions on a local signal set.
        unsafe {
            cmd.pre_exec(|| {
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, libc::SIGTERM);
                if libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            })
        };
    })
}

/// Whether SIGTERM is pending for `pid`, from the `SigPnd`/`ShdPnd` masks of its status file.
fn term_pending(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .expect("an unreaped child has a status file");
    let bit = 1u64 << (libc::SIGTERM - 1);
    status
        .lines()
        .filter_map(|line| {
            line.strip_prefix("SigPnd:")
                .or_else(|| line.strip_prefix("ShdPnd:"))
        })
        .any(|mask| u64::from_str_radix(mask.trim(), 16).expect("signal masks are hex") & bit != 0)
}

/// The state letter of `/proc/<pid>/stat`, `None` when there is no entry.
fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    let close = stat.iter().rposition(|&b| b == b')')?;
    stat.get(close + 2).map(|&b| b as char)
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    wait_for(what, Duration::from_secs(20), || done().then_some(()));
}

fn assert_unknown(judgement: Judgement, needle: &str) {
    match judgement {
        Judgement::Unknown(reason) => {
            assert!(reason.contains(needle), "{reason:?} lacks {needle:?}")
        }
        other => panic!("expected unknown ({needle}), got {other}"),
    }
}

/// Checks that `tamper`ed records of a live process are unknown and are never signalled.
fn assert_never_signalled(tamper: impl Fn(&mut Record), needle: &str) {
    let mut proc = blocked_sleeper();
    let record = proc.capture();
    let mut wrong = record.clone();
    tamper(&mut wrong);
    assert_unknown(judge(&wrong), needle);
    match terminate(&wrong, libc::SIGTERM) {
        Termination::Unknown(reason) => assert!(reason.contains(needle), "{reason:?}"),
        other => panic!("expected unknown, got {other}"),
    }
    assert!(!term_pending(proc.pid()), "a signal reached the process");
    assert!(matches!(
        is_descendant_of(&wrong, std::process::id(), DEFAULT_MAX_HOPS),
        Ancestry::NotVerified(_)
    ));
    assert!(proc.running());
    assert_eq!(judge(&record), Judgement::Alive);
    // The same check sees a signal that is sent, so the assertion above can fail.
    assert_eq!(terminate(&record, libc::SIGTERM), Termination::Signalled);
    assert!(term_pending(proc.pid()));
    assert!(proc.running());
}

#[test]
fn a_live_child_is_alive() {
    let proc = sleeper();
    let record = proc.capture();
    assert_eq!(record.pid, proc.pid());
    assert_eq!(record.id, "run-1");
    assert_eq!(record.session_file, Path::new(SESSION));
    let boot_id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    assert_eq!(record.boot_id, boot_id.trim());
    let ns = std::fs::read_link("/proc/self/ns/pid").unwrap();
    assert_eq!(Path::new(&record.pid_namespace), ns);
    assert!(record.start_time > 0);
    assert_eq!(judge(&record), Judgement::Alive);
    assert_eq!(judge(&record).to_string(), "alive");
}

#[test]
fn a_reaped_child_has_exited() {
    let mut proc = spawn("cat", &[], |cmd| {
        cmd.stdin(Stdio::piped());
    });
    let record = proc.capture();
    assert_eq!(judge(&record), Judgement::Alive);
    drop(proc.child.stdin.take());
    assert!(proc.child.wait().unwrap().success());
    assert_eq!(judge(&record), Judgement::Exited);
    assert_eq!(terminate(&record, libc::SIGTERM), Termination::Exited);
    assert_eq!(
        wait_exited(&record, Instant::now() + Duration::from_secs(10)),
        Judgement::Exited
    );
    assert!(matches!(
        is_descendant_of(&record, std::process::id(), DEFAULT_MAX_HOPS),
        Ancestry::NotVerified(_)
    ));
}

#[test]
fn a_zombie_has_exited() {
    let mut proc = spawn("cat", &[], |cmd| {
        cmd.stdin(Stdio::piped());
    });
    let record = proc.capture();
    drop(proc.child.stdin.take());
    wait_until("cat is a zombie", || proc_state(proc.pid()) == Some('Z'));
    assert_eq!(judge(&record), Judgement::Exited);
    assert_eq!(terminate(&record, libc::SIGTERM), Termination::Exited);
    assert_eq!(
        wait_exited(&record, Instant::now() + Duration::from_secs(10)),
        Judgement::Exited
    );
    // Still a zombie: the answer came from its state, not from a missing entry.
    assert_eq!(proc_state(proc.pid()), Some('Z'));
    let status = proc.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

#[test]
fn a_different_start_time_is_unknown_and_never_signalled() {
    let mut proc = sleeper();
    let record = proc.capture();
    for start_time in [record.start_time + 1, record.start_time - 1, 0] {
        let wrong = Record {
            start_time,
            ..record.clone()
        };
        assert_unknown(judge(&wrong), "now names another process");
        assert!(matches!(
            terminate(&wrong, libc::SIGTERM),
            Termination::Unknown(_)
        ));
        assert!(matches!(
            wait_exited(&wrong, Instant::now()),
            Judgement::Unknown(_)
        ));
    }
    assert!(proc.running());
    assert_eq!(judge(&record), Judgement::Alive);
    assert_never_signalled(|r| r.start_time += 1, "now names another process");
}

#[test]
fn another_boot_is_unknown_and_never_signalled() {
    assert_never_signalled(
        |r| r.boot_id = "00000000-0000-0000-0000-000000000000".into(),
        "another boot",
    );
}

#[test]
fn another_pid_namespace_is_unknown_and_never_signalled() {
    assert_never_signalled(
        |r| r.pid_namespace = "pid:[1]".into(),
        "another pid namespace",
    );
}

#[test]
fn ancestry_is_verified_through_a_real_shell() {
    let mut shell = spawn("sh", &["-c", "sleep 30 & echo $!; wait"], |cmd| {
        cmd.stdout(Stdio::piped());
    });
    let mut line = String::new();
    BufReader::new(shell.child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let grandchild: u32 = line.trim().parse().unwrap();
    let record = capture(grandchild, "run-1", Path::new(SESSION)).unwrap();
    let unrelated = sleeper();

    assert_eq!(
        is_descendant_of(&record, shell.pid(), DEFAULT_MAX_HOPS),
        Ancestry::Verified { hops: 1 }
    );
    assert_eq!(
        is_descendant_of(&record, grandchild, DEFAULT_MAX_HOPS),
        Ancestry::Verified { hops: 0 }
    );
    assert_eq!(
        is_descendant_of(&record, std::process::id(), DEFAULT_MAX_HOPS),
        Ancestry::Verified { hops: 2 }
    );
    assert!(matches!(
        is_descendant_of(&record, shell.pid(), 0),
        Ancestry::NotVerified(_)
    ));
    match is_descendant_of(&record, unrelated.pid(), DEFAULT_MAX_HOPS) {
        Ancestry::NotVerified(reason) => assert!(reason.contains("not a descendant"), "{reason}"),
        other => panic!("an unrelated process verified as an ancestor: {other}"),
    }
    let reused = Record {
        start_time: record.start_time + 1,
        ..record.clone()
    };
    assert!(matches!(
        is_descendant_of(&reused, shell.pid(), DEFAULT_MAX_HOPS),
        Ancestry::NotVerified(_)
    ));

    // Ending the grandchild lets the shell's `wait` return.
    assert_eq!(terminate(&record, libc::SIGTERM), Termination::Signalled);
    assert!(shell.child.wait().unwrap().success());
    assert_eq!(judge(&record), Judgement::Exited);
}

#[test]
fn terminate_signals_a_verified_process_through_a_pidfd() {
    let mut proc = sleeper();
    let record = proc.capture();
    assert_eq!(
        wait_exited(&record, Instant::now() + Duration::from_millis(20)),
        Judgement::Alive
    );
    assert_eq!(terminate(&record, libc::SIGTERM), Termination::Signalled);
    assert_eq!(
        wait_exited(&record, Instant::now() + Duration::from_secs(20)),
        Judgement::Exited
    );
    assert_eq!(proc.child.wait().unwrap().signal(), Some(libc::SIGTERM));
    assert_eq!(terminate(&record, libc::SIGTERM), Termination::Exited);
}

#[test]
fn a_command_name_with_spaces_and_parentheses_parses() {
    let dir = tempfile::tempdir().unwrap();
    let sleep = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|dir| dir.join("sleep"))
        .find(|path| path.is_file())
        .unwrap();
    // The kernel names the process after the file it executed, here a link named `a) b) c`.
    let program = dir.path().join("a) b) c");
    std::os::unix::fs::symlink(&sleep, &program).unwrap();
    let mut proc = spawn(&program, &["30"], |_| {});
    // The spawn can return before the kernel has renamed the new process.
    let comm_path = format!("/proc/{}/comm", proc.pid());
    wait_until("the process is named `a) b) c`", || {
        std::fs::read_to_string(&comm_path).unwrap().trim_end() == "a) b) c"
    });

    let record = proc.capture();
    assert_eq!(judge(&record), Judgement::Alive);
    assert_eq!(
        is_descendant_of(&record, std::process::id(), DEFAULT_MAX_HOPS),
        Ancestry::Verified { hops: 1 }
    );
    assert_eq!(terminate(&record, libc::SIGTERM), Termination::Signalled);
    assert_eq!(proc.child.wait().unwrap().signal(), Some(libc::SIGTERM));
}

#[test]
fn capture_refuses_what_it_cannot_pin() {
    let session = Path::new(SESSION);
    let err = capture(0, "run-1", session).unwrap_err();
    assert_eq!(err.field(), Some("pid"));
    assert_eq!(
        capture(std::process::id(), "", session)
            .unwrap_err()
            .field(),
        Some("id")
    );
    assert_eq!(
        capture(std::process::id(), "run-1", Path::new(""))
            .unwrap_err()
            .field(),
        Some("sessionFile")
    );
    // Above any pid_max the kernel allows, so no process can have it.
    let err = capture(i32::MAX as u32, "run-1", session).unwrap_err();
    assert!(matches!(err, Error::NoSuchProcess { .. }), "{err}");
    assert_eq!(err.code(), ErrorCode::NotFound);
}

fn own_record() -> Record {
    capture(std::process::id(), "run-1", Path::new(SESSION)).expect("this process can be captured")
}

#[test]
fn the_record_is_written_once_in_the_compatible_format() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("2024_abc.jsonl.process.json");
    assert_eq!(Record::read(&path).unwrap(), None);
    let first = own_record();
    let second = Record {
        id: "run-2".into(),
        pid: 1,
        ..first.clone()
    };
    assert!(first.write_once(&path).unwrap());
    assert!(!second.write_once(&path).unwrap());
    assert_eq!(Record::read(&path).unwrap(), Some(first.clone()));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "temporary files were left behind"
    );

    let value: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let expected = serde_json::json!({
        "version": 1,
        "id": "run-1",
        "sessionFile": SESSION,
        "pid": first.pid,
        "startTime": first.start_time.to_string(),
        "bootId": first.boot_id,
        "pidNamespace": first.pid_namespace,
    });
    assert_eq!(value, expected);
}

#[test]
fn a_record_written_by_a_child_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("child.process.json");
    let text = r#"{"version":1,"id":"r","sessionFile":"/s.jsonl","pid":12,"startTime":"0042","bootId":"b","pidNamespace":"pid:[4026531836]","extra":true}"#;
    std::fs::write(&path, text).unwrap();
    let record = Record::read(&path).unwrap().unwrap();
    assert_eq!(
        record,
        Record {
            id: "r".into(),
            session_file: PathBuf::from("/s.jsonl"),
            pid: 12,
            start_time: 42,
            boot_id: "b".into(),
            pid_namespace: "pid:[4026531836]".into(),
        }
    );
}

#[test]
fn malformed_records_name_the_file_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.process.json");
    let valid = serde_json::json!({
        "version": 1, "id": "r", "sessionFile": "/s.jsonl", "pid": 12,
        "startTime": "42", "bootId": "b", "pidNamespace": "pid:[1]",
    });
    let cases: &[(&str, serde_json::Value, &str)] = &[
        ("pid", serde_json::json!(0), "pid"),
        ("pid", serde_json::json!(-3), "pid"),
        ("pid", serde_json::json!(1.5), "pid"),
        ("pid", serde_json::json!("12"), "pid"),
        ("pid", serde_json::json!(4_294_967_296u64), "pid"),
        ("pid", serde_json::json!(2_147_483_648u64), "pid"),
        ("startTime", serde_json::json!("12a"), "startTime"),
        ("startTime", serde_json::json!("-12"), "startTime"),
        ("startTime", serde_json::json!(" 12"), "startTime"),
        ("startTime", serde_json::json!(""), "startTime"),
        ("startTime", serde_json::json!(42), "startTime"),
        (
            "startTime",
            serde_json::json!("99999999999999999999999"),
            "startTime",
        ),
        ("bootId", serde_json::json!(""), "bootId"),
        ("id", serde_json::json!(""), "id"),
        ("sessionFile", serde_json::json!(null), "sessionFile"),
        ("pidNamespace", serde_json::json!(7), "pidNamespace"),
        ("version", serde_json::json!(2), "version"),
        ("version", serde_json::json!(0), "version"),
        ("version", serde_json::json!("1"), "version"),
    ];
    for (key, bad, field) in cases {
        let mut value = valid.clone();
        value[*key] = bad.clone();
        std::fs::write(&path, serde_json::to_vec(&value).unwrap()).unwrap();
        let err = Record::read(&path).unwrap_err();
        assert_eq!(err.field(), Some(*field), "{key} = {bad}: {err}");
        let message = err.to_string();
        assert!(
            message.contains("bad.process.json") && message.contains(field),
            "{message}"
        );
        let reported = herd_core::Error::from(err);
        assert_eq!(reported.field.as_deref(), Some(*field));
    }
    for key in [
        "version",
        "id",
        "sessionFile",
        "pid",
        "startTime",
        "bootId",
        "pidNamespace",
    ] {
        let mut value = valid.clone();
        value.as_object_mut().unwrap().remove(key);
        std::fs::write(&path, serde_json::to_vec(&value).unwrap()).unwrap();
        assert_eq!(
            Record::read(&path).unwrap_err().field(),
            Some(key),
            "missing {key}"
        );
    }

    let version = {
        let mut value = valid.clone();
        value["version"] = serde_json::json!(2);
        std::fs::write(&path, serde_json::to_vec(&value).unwrap()).unwrap();
        Record::read(&path).unwrap_err()
    };
    assert!(matches!(
        version,
        Error::UnsupportedVersion { found: 2, .. }
    ));

    for text in ["", "{", "[1]", "null", "\"x\""] {
        std::fs::write(&path, text).unwrap();
        let err = Record::read(&path).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidRequest, "{text:?}: {err}");
        assert!(err.to_string().contains("bad.process.json"), "{err}");
    }
    std::fs::write(&path, vec![b' '; identity::RECORD_READ_LIMIT as usize + 1]).unwrap();
    assert!(matches!(
        Record::read(&path).unwrap_err(),
        Error::Sidecar(_)
    ));
}

#[test]
fn an_invalid_record_built_in_code_is_unknown() {
    let record = Record {
        pid: 0,
        ..own_record()
    };
    assert!(matches!(judge(&record), Judgement::Unknown(_)));
    assert!(matches!(
        terminate(&record, libc::SIGTERM),
        Termination::Unknown(_)
    ));
    let record = Record {
        pid: i32::MAX as u32,
        ..own_record()
    };
    assert_eq!(judge(&record), Judgement::Exited);
    assert_eq!(terminate(&record, libc::SIGTERM), Termination::Exited);
}

#[test]
fn an_exit_watch_names_the_recorded_process_and_turns_readable_when_it_exits() {
    let mut proc = spawn("cat", &[], |cmd| {
        cmd.stdin(Stdio::piped());
    });
    let record = proc.capture();
    let reused = Record {
        start_time: record.start_time + 1,
        ..record.clone()
    };
    assert!(
        identity::ExitWatch::open(&reused).is_none(),
        "a start time that differs names another process: no watch"
    );
    let watch = identity::ExitWatch::open(&record).expect("a live child can be watched");
    assert!(!watch.has_exited());
    assert!(proc.running());
    drop(proc.child.stdin.take());
    let status = proc.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(
        watch.has_exited(),
        "the pidfd is readable once the child has exited"
    );
    assert!(
        identity::ExitWatch::open(&record).is_none(),
        "an exited process is not watched"
    );
}
