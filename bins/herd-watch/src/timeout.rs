//! The time limit of a run (`herd-launch spawn --timeout-ms`): past it the watcher ends the run.
//!
//! The limit counts from the record's creation. When it has passed, the watcher records the
//! expiry once (`runs/<id>.timeout.json`) and then cancels the run the way `herd-watch cancel`
//! does — its cancel intent, then termination of the child through its verified identity — on a
//! thread of its own, so a slow termination holds up no other run. The finished run is `failed`
//! and says it timed out (see `finish::build`); a watcher that starts later finds the expiry
//! and the cancel intent on disk and finishes the same way.

use std::thread::JoinHandle;

use herd_protocol::intents::Expiry;
use herd_protocol::layout::Artifacts;
use herd_protocol::run::RunRecord;
use herd_protocol::run_file::RunFile;

/// Whether `record` has a time limit and it has passed at `now_ms`.
pub fn expired(record: &RunRecord, now_ms: u64) -> bool {
    record
        .time_limit_ms
        .is_some_and(|limit| now_ms >= record.created_at_ms.saturating_add(limit))
}

/// Records the expiry of `record` (the first record stands) and cancels the run on a thread.
pub fn enforce(artifacts: &Artifacts, record: &RunRecord, now_ms: u64) -> JoinHandle<()> {
    let artifacts = artifacts.clone();
    let record = record.clone();
    std::thread::spawn(move || {
        let expiry = Expiry {
            format_version: Expiry::VERSION,
            limit_ms: record.time_limit_ms.unwrap_or_default(),
            expired_at_ms: now_ms,
        };
        // The expiry comes first: a cancel intent without it would read as the parent's.
        if artifacts.run(&record.run_id).create_once(expiry).is_err() {
            return;
        }
        // An unconfirmed termination keeps its intent; supervision goes on as after a cancel.
        let _ = crate::control::cancel(&artifacts, &record);
    })
}

/// A cancel that a passed time limit made, into the result: a failure saying so, its report
/// already kept in `ending`.
pub fn timed_out_into(
    limit_ms: u64,
    ending: &mut crate::message::Ending,
    details: &mut herd_protocol::result::Details,
) {
    ending.outcome = Some(herd_protocol::result::Outcome::Failed);
    ending.timed_out = true;
    ending.failure = Some(format!(
        "timed out: still running after its time limit of {limit_ms} ms; its process was terminated"
    ));
    details.timed_out = Some(true);
    details.time_limit_ms = Some(limit_ms);
}
