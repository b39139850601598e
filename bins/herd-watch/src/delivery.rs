//! Results delivered exactly once, across crashes and restarts (ARCHITECTURE.md, "Invariants",
//! 4).
//!
//! A result goes through two durable steps, each idempotent:
//!
//! 1. **Settle**: the result is written to `runs/<id>.result.json` with a write-once create, so
//!    the first watcher to settle a run fixes its outcome and every later one reads it back.
//! 2. **Deliver**: under an exclusive `flock` of `runs/<id>.deliver.lock` (released by the kernel
//!    if the holder dies), a watcher that finds no `runs/<id>.delivered` marker emits the result
//!    and then creates the marker.
//!
//! A watcher killed before the marker exists leaves the run undelivered, and the next one
//! delivers it: never zero. Two watchers never deliver the same run: the lock serialises them and
//! the marker is checked under it: never two. The one window left is a kill after the emitted
//! line reached stdout but before the marker is on disk — microseconds wide; the emitted event
//! carries the run id so a consumer can recognise a repeat.
//!
//! **Acknowledged delivery** (`herd-watch follow --ack`) moves the marker to the consumer's side
//! of the pipe: an emitted result is only *awaiting* its acknowledgement, and the marker is
//! created when the consumer names the result's key on stdin (a Pi parent does so once the
//! result is in its transcript). Until then this process emits it no second time; a process that
//! dies before the acknowledgement leaves the result undelivered, and the next watcher emits it
//! again, so the consumer's transcript decides, not a pipe.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use herd_core::{Error, ErrorCode, sidecar};
use herd_protocol::layout::Artifacts;

use herd_protocol::result::RunResult;
use herd_protocol::result::{Delivered, stem};

/// How long a delivery waits for another watcher delivering the same result.
const DELIVERY_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

fn file(artifacts: &Artifacts, stem: &str, suffix: &str) -> std::path::PathBuf {
    artifacts.runs_dir().join(format!("{stem}.{suffix}"))
}

/// Writes `result` unless the run already has one; returns the result that stands. What is
/// written is within the result's read bound ([`RunResult::within_bound`]).
pub fn settle(artifacts: &Artifacts, result: &RunResult) -> Result<RunResult, Error> {
    crate::crash::point("before-settle");
    let result = &result.clone().within_bound();
    let path = file(artifacts, &result.key(), "result.json");
    let mut bytes = serde_json::to_vec_pretty(result)
        .map_err(|e| Error::internal(format!("cannot encode result: {e}")))?;
    bytes.push(b'\n');
    if sidecar::create_once(&path, &bytes)? {
        crate::crash::point("after-settle");
        return Ok(result.clone());
    }
    load_task(artifacts, &result.run_id, result.task.as_deref())?
        .ok_or_else(|| Error::internal(format!("{} vanished", path.display())))
}

/// Reads the settled result of `run_id`, if any.
pub fn load(artifacts: &Artifacts, run_id: &str) -> Result<Option<RunResult>, Error> {
    load_task(artifacts, run_id, None)
}

/// Reads the settled result of a persistent specialist's `task` (or of the run, without one).
pub fn load_task(
    artifacts: &Artifacts,
    run_id: &str,
    task: Option<&str>,
) -> Result<Option<RunResult>, Error> {
    Ok(RunResult::load(artifacts, run_id, task)?)
}

/// Reads the settled result of `record` (or of its persistent specialist's `task`), so that one
/// run's file never stops the delivery of the others: a result no reader can read (larger than
/// its bound, malformed, not a file) is set aside as `runs/<stem>.result.unreadable.json` and
/// the run settled failed in its place, saying why and where the file is. A result of a newer
/// version, or one that cannot be reached, is an error (only this run's).
pub fn load_or_settle(
    artifacts: &Artifacts,
    record: &herd_protocol::run::RunRecord,
    task: Option<&str>,
) -> Result<Option<RunResult>, Error> {
    use herd_core::sidecar::Error as Read;
    let err = match RunResult::load(artifacts, &record.run_id, task) {
        Ok(result) => return Ok(result),
        Err(
            err @ (Read::TooLarge { .. }
            | Read::Malformed { .. }
            | Read::Invalid { .. }
            | Read::NotAFile { .. }
            | Read::Symlink { .. }),
        ) => err,
        Err(err) => return Err(err.into()),
    };
    let key = stem(&record.run_id, task);
    let path = file(artifacts, &key, "result.json");
    let aside = file(artifacts, &key, herd_protocol::layout::UNREADABLE_RESULT);
    match sidecar::rename_no_replace(&path, &aside) {
        Ok(()) => {}
        // Another watcher set it aside first: what stands now is its result, or none yet.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(load_task(artifacts, &record.run_id, task).ok().flatten());
        }
        Err(_) => return Err(err.into()),
    }
    let why = format!(
        "its result could not be read ({}); it was set aside at {}",
        err,
        aside.display()
    );
    let ending = crate::message::Ending {
        name: record.name.clone(),
        outcome: Some(herd_protocol::result::Outcome::Failed),
        failure: Some(why.clone()),
        task: task.map(str::to_owned),
        ..crate::message::Ending::default()
    };
    let result = RunResult {
        format_version: herd_protocol::result::FORMAT_VERSION,
        run_id: record.run_id.clone(),
        name: record.name.clone(),
        outcome: herd_protocol::result::Outcome::Failed,
        message: ending.message().render(),
        details: herd_protocol::result::Details {
            error_message: Some(why),
            task: task.map(str::to_owned),
            ..herd_protocol::result::Details::default()
        },
        settled_at_ms: herd_core::time::now_ms(),
        task: task.map(str::to_owned),
    };
    settle(artifacts, &result).map(Some)
}

/// The markers of results this process emitted and whose acknowledgement it waits for; `None`
/// unless [`await_acknowledgements`] was called (only `follow --ack` does).
static AWAITING: Mutex<Option<BTreeSet<PathBuf>>> = Mutex::new(None);

fn awaiting() -> std::sync::MutexGuard<'static, Option<BTreeSet<PathBuf>>> {
    AWAITING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// From now on, a result this process emits is marked delivered only by [`acknowledge`].
pub fn await_acknowledgements() {
    awaiting().get_or_insert_with(BTreeSet::new);
}

/// How many emitted results wait for their acknowledgement.
pub fn unacknowledged() -> usize {
    awaiting().as_ref().map_or(0, BTreeSet::len)
}

fn is_awaiting(marker: &Path) -> bool {
    awaiting().as_ref().is_some_and(|set| set.contains(marker))
}

/// Records that the consumer holds the result named by `key` (`<run-id>` or
/// `<run-id>.task-<task>`): creates its `delivered` marker. Returns whether the marker is new.
///
/// A key that names no settled result is refused (`not_found`), and a malformed one
/// (`invalid_request`): an acknowledgement never marks a run that has nothing to deliver.
pub fn acknowledge(artifacts: &Artifacts, key: &str) -> Result<bool, Error> {
    let (run_id, task) = match key.split_once(".task-") {
        Some((run_id, task)) => (run_id, Some(task)),
        None => (key, None),
    };
    let valid = |part: &str| {
        (1..=64).contains(&part.len())
            && part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    if !valid(run_id) || !task.is_none_or(valid) {
        return Err(Error::invalid(
            "ack",
            format!(
                "{} is not the key of a result",
                herd_core::escape::json_string(&herd_core::escape::abbreviate_name(key))
            ),
        ));
    }
    if load_task(artifacts, run_id, task)?.is_none() {
        return Err(Error::not_found(format!(
            "no settled result has the key {key}"
        )));
    }
    let marker = file(artifacts, key, "delivered");
    let created = sidecar::create_once(&marker, &delivered_stamp())?;
    if let Some(set) = awaiting().as_mut() {
        set.remove(&marker);
    }
    if task.is_none() {
        herd_protocol::open_runs::remove(artifacts, run_id);
    }
    Ok(created)
}

/// The content of a `delivered` marker, stamped now.
fn delivered_stamp() -> Vec<u8> {
    let stamp = Delivered {
        format_version: Delivered::FORMAT_VERSION,
        delivered_at_ms: herd_core::time::now_ms(),
    };
    serde_json::to_vec(&stamp).unwrap_or_default()
}

/// Whether the result of `run_id` was delivered.
pub fn is_delivered(artifacts: &Artifacts, run_id: &str) -> bool {
    is_task_delivered(artifacts, run_id, None)
}

/// Whether the result of a persistent specialist's `task` (or of the run, without one) was
/// delivered.
///
/// In a process that awaits acknowledgements, a result it emitted counts as delivered while it
/// waits for its acknowledgement, so it is emitted once per process.
pub fn is_task_delivered(artifacts: &Artifacts, run_id: &str, task: Option<&str>) -> bool {
    let marker = file(artifacts, &stem(run_id, task), "delivered");
    marker.exists() || is_awaiting(&marker)
}

/// Delivers the settled result of `run_id` at most once through `emit`, and records it.
///
/// Returns `Ok(true)` when this call delivered it, `Ok(false)` when it had been delivered
/// already (then `emit` is not called). An error from `emit` leaves the run undelivered.
pub fn deliver_once(
    artifacts: &Artifacts,
    result: &RunResult,
    emit: impl FnOnce(&RunResult) -> std::io::Result<()>,
) -> Result<bool, Error> {
    // The other holder's work under the lock is one write to its stdout; one that stays stuck
    // (a consumer that stopped reading) gets this watcher an error, not a wait without end.
    let deadline = std::time::Instant::now() + DELIVERY_LOCK_WAIT;
    let _lock =
        herd_core::lock::exclusive(&file(artifacts, &result.key(), "deliver.lock"), deadline)?;
    let marker = file(artifacts, &result.key(), "delivered");
    if marker.exists() || is_awaiting(&marker) {
        return Ok(false);
    }
    crate::crash::point("before-emit");
    emit(result).map_err(|e| {
        Error::new(
            ErrorCode::Unavailable,
            format!("cannot emit the result: {e}"),
        )
    })?;
    if let Some(set) = awaiting().as_mut() {
        // The consumer's acknowledgement creates the marker (see `acknowledge`).
        set.insert(marker);
        return Ok(true);
    }
    sidecar::create_once(&marker, &delivered_stamp())?;
    crate::crash::point("after-mark");
    // Closed on disk: the run leaves the open-run set (a kill before this leaves a stale entry
    // that the next scan removes).
    if result.task.is_none() {
        herd_protocol::open_runs::remove(artifacts, &result.run_id);
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use herd_protocol::result::{Details, FORMAT_VERSION, Outcome};

    fn result(id: &str, message: &str) -> RunResult {
        RunResult {
            format_version: FORMAT_VERSION,
            run_id: id.into(),
            name: "scout".into(),
            outcome: Outcome::Completed,
            message: message.into(),
            details: Details::default(),
            settled_at_ms: 1,
            task: None,
        }
    }

    #[test]
    fn the_first_settled_result_stands() {
        let dir = tempfile::tempdir().unwrap();
        let art = Artifacts::new(dir.path());
        assert_eq!(
            settle(&art, &result("r1", "first")).unwrap().message,
            "first"
        );
        assert_eq!(
            settle(&art, &result("r1", "second")).unwrap().message,
            "first"
        );
        assert_eq!(load(&art, "r1").unwrap().unwrap().message, "first");
    }

    #[test]
    fn a_task_result_settled_twice_reads_back_the_task_result() {
        let dir = tempfile::tempdir().unwrap();
        let art = Artifacts::new(dir.path());
        let task = |message: &str| RunResult {
            task: Some("t1".into()),
            ..result("r1", message)
        };
        assert_eq!(settle(&art, &task("first")).unwrap().message, "first");
        let again = settle(&art, &task("second")).unwrap();
        assert_eq!(again.message, "first");
        assert_eq!(again.task.as_deref(), Some("t1"));
        assert!(
            load(&art, "r1").unwrap().is_none(),
            "the run has no own result"
        );
    }

    #[test]
    fn delivery_happens_once_and_a_failed_emit_leaves_it_pending() {
        let dir = tempfile::tempdir().unwrap();
        let art = Artifacts::new(dir.path());
        let r = settle(&art, &result("r1", "m")).unwrap();
        let failed = deliver_once(&art, &r, |_| Err(std::io::Error::other("pipe closed")));
        assert!(failed.is_err());
        assert!(!is_delivered(&art, "r1"));
        let mut emitted = 0;
        assert!(
            deliver_once(&art, &r, |_| {
                emitted += 1;
                Ok(())
            })
            .unwrap()
        );
        assert!(
            !deliver_once(&art, &r, |_| {
                emitted += 1;
                Ok(())
            })
            .unwrap()
        );
        assert_eq!(emitted, 1);
        assert!(is_delivered(&art, "r1"));
    }

    #[test]
    fn concurrent_deliverers_emit_once() {
        let dir = tempfile::tempdir().unwrap();
        let art = Artifacts::new(dir.path());
        let r = settle(&art, &result("r1", "m")).unwrap();
        let count = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    deliver_once(&art, &r, |_| {
                        count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        Ok(())
                    })
                    .unwrap();
                });
            }
        });
        assert_eq!(count.into_inner(), 1);
    }
}
