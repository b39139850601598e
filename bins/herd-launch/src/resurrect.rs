//! `herd-launch resurrect`: every lost run brought back in its exact session file.
//!
//! A run is lost when its result settled as failed with no completion evidence at all: no exit
//! code, no completion sidecar written while it ran, no launch failure, cancel, time limit or stop
//! (a reboot, a killed tmux server, a Herdr restart). Each lost run that can be resumed is resumed
//! through [`crate::resume`] (its session file by path, never `pi --continue`; its saved launch
//! policy; its own name, auto-exit and project-trust decision), one after another, and its result
//! is delivered as every run's is. A worktree child resumes in its retained worktree. A persistent
//! specialist is not resumed (its session never is: spawn a new one); a run without a session file
//! or a launch policy, a child's own child and a run on another machine are listed with why.
//!
//! Nothing is resumed twice: one resurrect at a time holds `runs/resurrect.lock`, and under it a
//! run is taken up only when no later run resumed its session (the successor's record names the
//! same session file and `extra.resurrects` names the run) and its marker
//! `runs/<id>.resurrected.json` names no successor. The marker is written before the launch and
//! again with the successor once the launch answered. `--dry-run` takes no lock and writes
//! nothing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use herd_core::{Error, ErrorCode, sidecar};
use herd_protocol::launch::resurrect::{
    ResurrectDoc, ResurrectRun, ResurrectStatus, Resurrected, SkipReason,
};
use herd_protocol::layout::Artifacts;
use herd_protocol::result::{Outcome, RunResult};
use herd_protocol::run::{LaunchStatus, RunRecord, Runner, SurfaceKind, WorktreeRef};
use herd_protocol::run_file::RunFile;
use herd_protocol::worktree::manifest::{Manifest, State};

use crate::resume::{Lost, Request};

/// How long a resurrect waits for another one to finish.
const LOCK_WAIT: Duration = Duration::from_secs(120);

/// The bound of a result read.
const RESULT_LIMIT: u64 = 1024 * 1024;

/// The first message of a resumed lost run.
pub const CONTINUE: &str = "Your previous run of this session ended before it finished: its process was lost (the machine restarted, or its terminal server ended). Continue your task from where you left off, without repeating what is already done.";

/// What `herd-launch resurrect` was asked.
#[derive(Debug, Clone)]
pub struct Options {
    /// Change nothing: list what would be resumed.
    pub dry_run: bool,
    /// The surface to resume on; `None`: each run's own.
    pub surface: Option<SurfaceKind>,
}

/// One lost run with what is known of it.
struct Candidate {
    record: RunRecord,
    entry: ResurrectRun,
    /// Set while the run can be resumed.
    request: Option<Request>,
}

/// Brings back every lost run of `artifacts`.
pub fn resurrect(
    artifacts: &Artifacts,
    options: &Options,
    herd_launch: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ResurrectDoc, Error> {
    let mut doc = ResurrectDoc {
        dry_run: options.dry_run,
        artifacts: artifacts.root().display().to_string(),
        resumed: 0,
        runs: Vec::new(),
    };
    if !artifacts.runs_dir().is_dir() {
        return Ok(doc);
    }
    // Held to the end: a second resurrect waits, then finds every run already resumed.
    let _lock = if options.dry_run {
        None
    } else {
        Some(
            herd_core::lock::exclusive(&artifacts.resurrect_lock(), Instant::now() + LOCK_WAIT)
                .map_err(|e| match e {
                    herd_core::lock::Error::Held { path } => Error::new(
                        ErrorCode::Conflict,
                        format!(
                            "another herd-launch resurrect still holds {} after {} s; try again once it is done",
                            path.display(),
                            LOCK_WAIT.as_secs()
                        ),
                    ),
                    other => other.into(),
                })?,
        )
    };
    let records = records(artifacts)?;
    let successors = successors(&records);
    for record in &records {
        if lost_result(artifacts, record).is_none() {
            continue;
        }
        let mut candidate = judge(artifacts, record, &successors);
        if candidate.request.is_some() {
            if options.dry_run {
                candidate.entry.status = ResurrectStatus::WouldResume;
                candidate.entry.message = format!(
                    "would resume its session {} in {}",
                    candidate.entry.session_file.as_deref().unwrap_or_default(),
                    candidate.entry.cwd.as_deref().unwrap_or_default()
                );
            } else {
                bring_back(artifacts, options, &mut candidate, herd_launch, env);
                if matches!(
                    candidate.entry.status,
                    ResurrectStatus::Resumed | ResurrectStatus::Uncertain
                ) {
                    doc.resumed += 1;
                }
            }
        }
        doc.runs.push(candidate.entry);
    }
    Ok(doc)
}

/// Every readable run record, oldest first.
fn records(artifacts: &Artifacts) -> Result<Vec<RunRecord>, Error> {
    let mut records: Vec<RunRecord> = artifacts
        .run_ids()?
        .iter()
        .filter_map(|id| RunRecord::load(artifacts, id).ok())
        .collect();
    records.sort_by(|a, b| (a.created_at_ms, &a.run_id).cmp(&(b.created_at_ms, &b.run_id)));
    Ok(records)
}

/// The runs of each session file that did not fail to launch, oldest first.
fn successors(records: &[RunRecord]) -> HashMap<&str, Vec<&RunRecord>> {
    let mut by_session: HashMap<&str, Vec<&RunRecord>> = HashMap::new();
    for record in records {
        if record.session_file.is_empty() || record.status == LaunchStatus::Failed {
            continue;
        }
        by_session
            .entry(record.session_file.as_str())
            .or_default()
            .push(record);
    }
    by_session
}

/// The settled result of `record` when the run was lost.
fn lost_result(artifacts: &Artifacts, record: &RunRecord) -> Option<RunResult> {
    if !matches!(
        record.status,
        LaunchStatus::Launched | LaunchStatus::Uncertain
    ) {
        return None;
    }
    let result: RunResult = sidecar::read_json(&artifacts.run_result(&record.run_id), RESULT_LIMIT)
        .ok()
        .flatten()?;
    let details = &result.details;
    let lost = result.outcome == Outcome::Failed
        && result.task.is_none()
        && details.exit_code.is_none()
        && details.launch_failure.is_none()
        && details.cancellation.is_none()
        && details.timed_out != Some(true)
        && details.stopped != Some(true)
        && !completed_while_it_ran(record, result.settled_at_ms);
    lost.then_some(result)
}

/// Whether the child wrote its completion sidecar (a provider error, a help request, its report)
/// while the run ran, from its start to its result. The sidecar belongs to the session, so a
/// later run of the same session rewrites it; only the run's own time counts. (A runner's exit
/// status the watcher went by is the result's `exitCode`; one written as the terminal went away
/// is no completion.)
fn completed_while_it_ran(record: &RunRecord, settled_at_ms: u64) -> bool {
    let while_it_ran = |path: &Path| {
        std::fs::symlink_metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .is_some_and(|d| {
                (u128::from(record.created_at_ms)..=u128::from(settled_at_ms))
                    .contains(&d.as_millis())
            })
    };
    !record.session_file.is_empty() && while_it_ran(&record.session_files().exit())
}

/// Decides what can be done with one lost run, changing nothing.
fn judge(
    artifacts: &Artifacts,
    record: &RunRecord,
    successors: &HashMap<&str, Vec<&RunRecord>>,
) -> Candidate {
    let session = (!record.session_file.is_empty()).then(|| record.session_file.clone());
    let mut candidate = Candidate {
        record: record.clone(),
        entry: ResurrectRun {
            run_id: record.run_id.clone(),
            name: record.name.clone(),
            status: ResurrectStatus::Skipped,
            why: None,
            message: String::new(),
            session_file: session.filter(|_| record.runner == Runner::Pi),
            cwd: None,
            worktree: record.worktree.as_ref().map(|w| w.path.clone()),
            successor: None,
            launch_status: None,
        },
        request: None,
    };
    let entry = &mut candidate.entry;
    if let Some(successor) = successor_of(artifacts, record, successors) {
        entry.status = ResurrectStatus::AlreadyResumed;
        entry.message = format!("its session was resumed already, as run {successor}");
        entry.successor = Some(successor);
        return candidate;
    }
    let skip = |entry: &mut ResurrectRun, why: SkipReason, message: String| {
        entry.status = ResurrectStatus::Skipped;
        entry.why = Some(why);
        entry.message = message;
    };
    let (session, worktree) = match resumable(artifacts, record) {
        Ok(found) => found,
        Err((why, message)) => {
            skip(entry, why, message);
            return candidate;
        }
    };
    let request = Request {
        session,
        message: Some(CONTINUE.to_owned()),
        auto_exit: record.auto_exit,
        name: record.name.clone(),
        lost: Some(Lost {
            run_id: record.run_id.clone(),
            worktree,
            trust: crate::trust::Parent::from_record(record),
        }),
    };
    match crate::resume::preflight(&request) {
        Ok(restored) => {
            entry.cwd = Some(restored.cwd.display().to_string());
            candidate.request = Some(request);
        }
        Err(err) => {
            let why = if err.field.as_deref() == Some("worktree") {
                SkipReason::WorktreeGone
            } else {
                SkipReason::Refused
            };
            skip(entry, why, err.message);
        }
    }
    candidate
}

/// The session file and retained worktree `record` resumes in, or why it is not resumed: a
/// child's own child, a run on another machine, a persistent specialist, an exec child, a run
/// whose session file, launch policy or worktree is gone.
fn resumable(
    artifacts: &Artifacts,
    record: &RunRecord,
) -> Result<(PathBuf, Option<WorktreeRef>), (SkipReason, String)> {
    if let Some(parent) = &record.parent_run_id {
        return Err((
            SkipReason::LaunchedByChild,
            format!("it was launched by child run {parent}, which resumes its own children"),
        ));
    }
    if let Some(remote) = &record.extra.remote {
        return Err((
            SkipReason::Remote,
            format!("it ran on host {}, whose herd owns it", remote.host),
        ));
    }
    if record.persistent {
        return Err((
            SkipReason::Persistent,
            "a persistent specialist is not resumed: spawn a new one (subagent with persistent: true)"
                .to_owned(),
        ));
    }
    if record.runner == Runner::Exec {
        return Err((
            SkipReason::NoSession,
            "an exec child has no Pi session file to resume".to_owned(),
        ));
    }
    let session = Some(PathBuf::from(&record.session_file))
        .filter(|s| !record.session_file.is_empty() && s.is_file())
        .ok_or_else(|| {
            (
                SkipReason::NoSession,
                format!(
                    "its session file {} does not exist",
                    if record.session_file.is_empty() {
                        "(none recorded)"
                    } else {
                        &record.session_file
                    }
                ),
            )
        })?;
    let policy = record.session_files().policy();
    if !policy.exists() {
        return Err((
            SkipReason::NoPolicy,
            format!(
                "its launch policy {} is missing, so the tools it may have cannot be restored; start a new subagent",
                policy.display()
            ),
        ));
    }
    let worktree = match &record.worktree {
        None => None,
        Some(wt) => {
            let removed =
                Manifest::load(artifacts, &record.run_id).is_ok_and(|m| m.state == State::Removed);
            if removed || !Path::new(&wt.path).is_dir() {
                return Err((
                    SkipReason::WorktreeGone,
                    format!("its worktree {} is no longer retained", wt.path),
                ));
            }
            Some(wt.clone())
        }
    };
    Ok((session, worktree))
}

/// The run that resumed the session of `record` after it: its marker's successor, else a later
/// run of the same session file that did not fail to launch (a resurrect or a resume by hand).
fn successor_of(
    artifacts: &Artifacts,
    record: &RunRecord,
    successors: &HashMap<&str, Vec<&RunRecord>>,
) -> Option<String> {
    if let Some(successor) = Resurrected::read(artifacts, &record.run_id).and_then(|m| m.successor)
    {
        return Some(successor);
    }
    let later = successors.get(record.session_file.as_str())?;
    later
        .iter()
        .find(|r| {
            r.run_id != record.run_id
                && (r.created_at_ms, &r.run_id) > (record.created_at_ms, &record.run_id)
        })
        .map(|r| r.run_id.clone())
}

/// Resumes one lost run, under the lock: its marker first, then the launch, then the marker's
/// successor (or why it failed).
fn bring_back(
    artifacts: &Artifacts,
    options: &Options,
    candidate: &mut Candidate,
    herd_launch: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) {
    let Some(request) = candidate.request.take() else {
        return;
    };
    let run_id = candidate.record.run_id.clone();
    let entry = &mut candidate.entry;
    let marker = |successor: Option<String>, failure: Option<String>| Resurrected {
        format_version: Resurrected::VERSION,
        at_ms: herd_core::time::now_ms(),
        successor,
        failure,
    };
    // The claim: a resurrect killed after it and before the successor's record left nothing
    // running (the record is claimed before anything is launched), so the next one, under the
    // lock, finds no successor and takes the run up again.
    if let Err(err) = artifacts.run(&run_id).write(marker(None, None)) {
        entry.status = ResurrectStatus::Failed;
        entry.message = format!("cannot write its marker: {err}");
        return;
    }
    let kind = options.surface.unwrap_or(candidate.record.surface);
    let launched = crate::open_surface(kind, artifacts, env).and_then(|surface| {
        crate::resume::resume(
            artifacts,
            &request,
            surface.as_ref(),
            herd_launch.to_path_buf(),
            env,
        )
    });
    let (successor, failure) = match launched {
        Ok(ack) => {
            let record = &ack.record;
            entry.successor = Some(record.run_id.clone());
            entry.launch_status = Some(ack.status);
            entry.cwd = Some(record.cwd.clone());
            match ack.status {
                LaunchStatus::Launched => {
                    entry.status = ResurrectStatus::Resumed;
                    entry.message = format!(
                        "resumed as run {} in its session {} on {}",
                        record.run_id,
                        record.session_file,
                        record.surface.as_str()
                    );
                    (Some(record.run_id.clone()), None)
                }
                LaunchStatus::Uncertain => {
                    entry.status = ResurrectStatus::Uncertain;
                    entry.message = format!(
                        "the launch of run {} is uncertain ({}); it stays supervised and is not tried again",
                        record.run_id,
                        record.launch_failure.as_deref().unwrap_or("unknown")
                    );
                    (Some(record.run_id.clone()), None)
                }
                LaunchStatus::Failed | LaunchStatus::Pending => {
                    entry.status = ResurrectStatus::Failed;
                    entry.message = format!(
                        "the launch of run {} failed: {}",
                        record.run_id,
                        record.launch_failure.as_deref().unwrap_or("unknown")
                    );
                    (None, Some(entry.message.clone()))
                }
            }
        }
        Err(err) => {
            // A refusal changed nothing (exit 2): the run cannot be resumed as it is.
            if matches!(err.code, ErrorCode::InvalidRequest | ErrorCode::Conflict) {
                entry.status = ResurrectStatus::Skipped;
                entry.why = Some(SkipReason::Refused);
            } else {
                entry.status = ResurrectStatus::Failed;
            }
            entry.message = err.message.clone();
            (None, Some(err.message))
        }
    };
    if let Err(err) = artifacts
        .run(&run_id)
        .write(marker(successor.clone(), failure))
    {
        // The successor's record still names the session: the run is not taken up again.
        entry
            .message
            .push_str(&format!("; its marker was not updated: {err}"));
    }
}

/// The exit code of a resurrect: 3 when a launch is uncertain, 4 when one failed, else 0.
pub fn exit_code(doc: &ResurrectDoc) -> i32 {
    let any = |status: ResurrectStatus| doc.runs.iter().any(|r| r.status == status);
    if any(ResurrectStatus::Uncertain) {
        herd_core::exit::UNCERTAIN
    } else if any(ResurrectStatus::Failed) {
        herd_core::exit::NO_ANSWER
    } else {
        herd_core::exit::SUCCESS
    }
}

/// The human text: a line per lost run, then what was resumed.
pub fn human(doc: &ResurrectDoc) -> String {
    if doc.runs.is_empty() {
        return "no lost run to resurrect".to_owned();
    }
    let mut lines: Vec<String> = doc
        .runs
        .iter()
        .map(|run| {
            let what = match run.status {
                ResurrectStatus::Resumed => "resumed",
                ResurrectStatus::WouldResume => "would resume",
                ResurrectStatus::Uncertain => "uncertain",
                ResurrectStatus::AlreadyResumed => "already resumed",
                ResurrectStatus::Skipped => "not resumed",
                ResurrectStatus::Failed => "failed",
            };
            let name = herd_core::escape::encode_host_value(&run.name, 80);
            format!("{what}: {name} ({}): {}", run.run_id, run.message)
        })
        .collect();
    let count = doc
        .runs
        .iter()
        .filter(|r| r.status == ResurrectStatus::WouldResume)
        .count();
    lines.push(if doc.dry_run {
        format!("dry run: {count} would be resumed; nothing was changed")
    } else {
        format!("{} resumed", doc.resumed)
    });
    lines.join("\n")
}
