//! Runs whose launch never finished: what the watcher may conclude from the files alone.
//!
//! herd-launch records its own identity (`runs/<id>.launcher.json`) before it claims a run, so
//! a record still `pending`, a definite `failed` one and an `uncertain` one without an owner can
//! each be judged against a launcher that is either still at work or proven gone:
//!
//! - a child that left evidence of itself (its recorded identity, the launch script's, a pane, an
//!   activity snapshot, a completion sidecar) is supervised like any launched child, whatever the
//!   record says;
//! - while herd-launch runs, the watcher waits for it (it may still place the child, or move on
//!   to the next model candidate and mark this attempt superseded);
//! - a `failed` launch whose herd-launch has ended is settled at once as failed;
//! - a `pending` or ownerless `uncertain` launch whose herd-launch is gone is orphaned: settled as
//!   failed (`lost`) once a grace has passed with no child evidence, because a script dispatched
//!   just before the launcher died may still start its child.

use std::path::Path;
use std::time::Duration;

use herd_core::identity::{self, Record};
use herd_core::time::now_ms;
use herd_protocol::layout::Artifacts;
use herd_protocol::run::{LaunchStatus, RunRecord, Superseded, SurfaceKind};

/// How long an orphaned launch waits for evidence of a child before it settles as lost.
pub const LOST_GRACE: Duration = Duration::from_secs(30);

/// The environment variable that sets [`LOST_GRACE`] in milliseconds.
pub const LOST_GRACE_ENV: &str = "HERD_LOST_GRACE_MS";

/// A record without a launcher identity (written by an older herd-launch, or one killed between
/// the two files) counts as abandoned once it has not changed for this long.
const SILENT_LAUNCHER: Duration = Duration::from_secs(10 * 60);

pub fn lost_grace_from_env() -> Duration {
    std::env::var(LOST_GRACE_ENV)
        .ok()
        .and_then(|ms| ms.parse::<u64>().ok())
        .map_or(LOST_GRACE, Duration::from_millis)
}

/// What the files say about a run's launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchState {
    /// A child exists, or may: supervise it.
    Supervise,
    /// herd-launch is still at work on it.
    InProgress,
    /// Another attempt replaced it; it is never delivered.
    Superseded,
    /// The launch failed definitely and herd-launch has ended: settle it as failed.
    Failed(String),
    /// herd-launch is gone and no owner of a child was ever identified, with the reason.
    Orphaned(String),
}

/// Judges the launch of `record`.
pub fn judge(artifacts: &Artifacts, record: &RunRecord) -> LaunchState {
    if record.status == LaunchStatus::Launched {
        return LaunchState::Supervise;
    }
    if Superseded::read(artifacts, &record.run_id).is_some_and(|s| s.successor.is_some()) {
        return LaunchState::Superseded;
    }
    if record.status != LaunchStatus::Failed && has_child_evidence(artifacts, record) {
        return LaunchState::Supervise;
    }
    let Some(gone) = launcher_gone(artifacts, record) else {
        return LaunchState::InProgress;
    };
    match record.status {
        LaunchStatus::Failed => LaunchState::Failed(
            record
                .launch_failure
                .clone()
                .unwrap_or_else(|| "the launch failed".to_owned()),
        ),
        _ => LaunchState::Orphaned(gone),
    }
}

/// Why herd-launch of `record` is known to be gone; `None` while it may still run.
fn launcher_gone(artifacts: &Artifacts, record: &RunRecord) -> Option<String> {
    match Record::read(&artifacts.launcher(&record.run_id)) {
        Ok(Some(launcher)) => {
            identity::proven_gone(&launcher).map(|why| format!("herd-launch ended ({why})"))
        }
        // Unreadable or missing: only a long silence of the record proves abandonment.
        _ => {
            let silent = now_ms().saturating_sub(record.updated_at_ms.max(record.created_at_ms));
            (Duration::from_millis(silent) >= SILENT_LAUNCHER).then(|| {
                format!(
                    "no herd-launch identity is recorded and the record has not changed for {} s",
                    silent / 1000
                )
            })
        }
    }
}

/// Whether anything shows that a child of `record` started: an owner the surface can be asked
/// about (a pane, the launch script's identity), or files only a child writes.
pub fn has_child_evidence(artifacts: &Artifacts, record: &RunRecord) -> bool {
    let exists = |p: &Path| p.symlink_metadata().is_ok();
    if record.pane.is_some() {
        return true;
    }
    if record.surface == SurfaceKind::Process
        && exists(&herd_surface::leader_record(artifacts, &record.run_id))
    {
        return true;
    }
    if exists(&artifacts.activity(&record.run_id))
        || exists(&herd_surface::runner_exit_file(artifacts, &record.run_id))
    {
        return true;
    }
    !record.session_file.is_empty()
        && (exists(&record.session_files().process()) || exists(&record.session_files().exit()))
}
