//! `herd-launch spawn`: one launch attempt per model candidate, each a new run.
//!
//! For each attempt, in this order of safety:
//!
//! 1. the run record `runs/<id>.json` is claimed (exclusive create, status `pending`) before
//!    anything else exists, so every later file and pane has an owner on disk;
//! 2. a managed worktree, when asked (herd-worktree writes its manifest before anything else);
//! 3. the child's files: the seeded session (fork, lineage), the task artifact or the exec
//!    prompt, the launch-policy sidecar, the accept spec (mode 0600), the persistent ledger's first
//!    `dispatched` entry, and last the launch script, which never contains the accept command;
//! 4. the surface places the child and starts the script;
//! 5. the record becomes `launched`, `uncertain` (an owner exists, dispatch unknown) or
//!    `failed`.
//!
//! A definite failure (nothing of the child exists) moves to the next model candidate, if any;
//! an uncertain one never does.

use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_core::{Error, ErrorCode, exit, sidecar};
use herd_protocol::launch::{AckWorktree, FailedAttempt, LaunchAck};
use herd_protocol::layout::Artifacts;
use herd_protocol::run::{LaunchStatus, RunRecord};
use herd_protocol::run_file::RunFile;
use herd_surface::Surface;

use crate::names;
use crate::plan::Plan;

mod attempt;
mod env;
mod files;

use attempt::{Attempt, prepare_and_launch};
pub use env::{bin_dir_env, pane_env, pi_thinking, unset_vars};
use files::{Files, describe, files_for};

/// The environment variable that caps every operation's budget of a launch (milliseconds), e.g.
/// in tests of a surface that hangs. Without it each operation has its own budget
/// ([`herd_surface::LaunchBudgets::default`]).
pub const LAUNCH_BUDGET_ENV: &str = "HERD_LAUNCH_BUDGET_MS";

/// The budget of each operation of a launch (docs/lifecycle.md, "Budgets"), capped by
/// [`LAUNCH_BUDGET_ENV`].
pub fn launch_budgets(env: &dyn Fn(&str) -> Option<String>) -> herd_surface::LaunchBudgets {
    let budgets = herd_surface::LaunchBudgets::default();
    match env(LAUNCH_BUDGET_ENV).and_then(|ms| ms.parse::<u64>().ok()) {
        Some(ms) => budgets.capped(Duration::from_millis(ms)),
        None => budgets,
    }
}

/// The outcome of `spawn`: the acknowledgement and its exit code.
#[derive(Debug, Clone)]
pub struct Ack {
    pub status: LaunchStatus,
    pub record: RunRecord,
    pub artifacts: PathBuf,
    /// Earlier attempts that failed definitely, as `(run id, model, failure)`.
    pub failed_attempts: Vec<(String, Option<String>, String)>,
    pub persistent_ids: Option<PersistentIds>,
}

use herd_protocol::launch::PersistentIds;

impl Ack {
    pub fn exit_code(&self) -> i32 {
        match self.status {
            LaunchStatus::Launched => exit::SUCCESS,
            LaunchStatus::Uncertain => exit::UNCERTAIN,
            LaunchStatus::Failed | LaunchStatus::Pending => exit::NO_ANSWER,
        }
    }

    /// The `--json` document.
    pub fn document(&self) -> LaunchAck {
        let r = &self.record;
        let pane = r.pane.as_ref();
        LaunchAck {
            status: self.status,
            run_id: r.run_id.clone(),
            name: r.name.clone(),
            surface: r.surface,
            runner: r.runner,
            session_file: r.session_file.clone(),
            artifacts: self.artifacts.display().to_string(),
            cwd: r.cwd.clone(),
            persistent: r.persistent,
            auto_exit: r.auto_exit,
            interactive: r.interactive,
            diagnostics: r.diagnostics.clone(),
            pane_id: pane.map(|p| p.pane_id.clone()),
            tab_id: pane.and_then(|p| p.tab_id.clone()),
            workspace_id: pane.and_then(|p| p.workspace_id.clone()),
            model: r.model.clone(),
            fallback_models: r.fallback_models.clone(),
            thinking: r.thinking.clone(),
            worktree: r.worktree.as_ref().map(|wt| AckWorktree {
                path: wt.path.clone(),
                branch: wt.branch.clone(),
                base_sha: wt.base_sha.clone(),
                manifest: wt.manifest.clone(),
            }),
            accept_spec: r.accept_spec.clone(),
            acceptance: r.extra.acceptance.clone(),
            persistent_ids: self.persistent_ids.clone(),
            launch_failure: r.launch_failure.clone(),
            failed_attempts: self
                .failed_attempts
                .iter()
                .map(|(run_id, model, failure)| FailedAttempt {
                    run_id: run_id.clone(),
                    model: model.clone(),
                    launch_failure: failure.clone(),
                })
                .collect(),
            host: r.extra.remote.as_ref().map(|m| m.host.clone()),
            remote_run_id: r.extra.remote.as_ref().and_then(|m| m.run_id.clone()),
        }
    }

    /// The human text.
    pub fn human(&self) -> String {
        let r = &self.record;
        let place = r
            .pane
            .as_ref()
            .map_or_else(String::new, |p| format!(" in pane {}", p.pane_id));
        let mut text = match self.status {
            LaunchStatus::Launched => format!(
                "launched {} ({}) on {}{place}",
                r.name,
                r.run_id,
                r.surface.as_str()
            ),
            LaunchStatus::Uncertain => format!(
                "launch of {} ({}) is uncertain{place}: {}; it stays supervised, do not retry blindly",
                r.name,
                r.run_id,
                r.launch_failure.as_deref().unwrap_or("unknown")
            ),
            _ => format!(
                "launch of {} ({}) failed: {}",
                r.name,
                r.run_id,
                r.launch_failure.as_deref().unwrap_or("unknown")
            ),
        };
        text.push_str(&format!("\nsession: {}", r.session_file));
        for d in &r.diagnostics {
            text.push_str(&format!("\nnote: {d}"));
        }
        text
    }
}

pub fn status_str(status: LaunchStatus) -> &'static str {
    match status {
        LaunchStatus::Pending => "pending",
        LaunchStatus::Launched => "launched",
        LaunchStatus::Uncertain => "uncertain",
        LaunchStatus::Failed => "failed",
    }
}

/// Where herd-launch finds the things a launch script runs.
#[derive(Debug, Clone)]
pub struct Tools {
    /// This program, which the script runs as `herd-launch exec`.
    pub herd_launch: PathBuf,
    /// The child extension Pi loads with `-e`.
    pub extension: Option<PathBuf>,
}

/// Runs every attempt of a plan until one is not a definite failure.
pub fn spawn(
    artifacts: &Artifacts,
    plan: &Plan,
    surface: &dyn Surface,
    tools: &Tools,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Ack, Error> {
    persistent_cap(plan, artifacts)?;
    review_target(artifacts, plan)?;
    let mut failed_attempts = Vec::new();
    let attempts = plan.models.len().max(1);
    for attempt in 0..attempts {
        let ack = launch_once(artifacts, plan, attempt, surface, tools, env)?;
        if ack.status == LaunchStatus::Failed && attempt + 1 < attempts {
            failed_attempts.push((
                ack.record.run_id.clone(),
                ack.record.model.clone(),
                ack.record.launch_failure.clone().unwrap_or_default(),
            ));
            continue;
        }
        // Each earlier attempt failed definitely and is replaced by this one: it is never
        // delivered. Written while this process still runs, so a watcher that sees a failed
        // attempt waits for its launcher to end before it settles one.
        for (run_id, _, _) in &failed_attempts {
            mark_superseded(artifacts, run_id, &ack.record.run_id);
        }
        // The directory joins the user's index (`herd-watch status --all`); an index that
        // cannot be written costs the launch nothing.
        if let Some(index) = herd_protocol::artifacts_index::Index::of_user() {
            let _ = index.record(artifacts);
        }
        return Ok(Ack {
            failed_attempts,
            ..ack
        });
    }
    Err(Error::internal("no launch attempt was made"))
}

/// The run a reviewer reviews (`reviews`): it must have ended with a gate that requires review.
/// A refusal names the field and changes nothing.
pub fn review_target(
    artifacts: &Artifacts,
    plan: &Plan,
) -> Result<Option<herd_protocol::accept::ReviewTarget>, Error> {
    let Some(target) = plan.request.reviews.as_deref() else {
        return Ok(None);
    };
    let refuse = |why: String| Err(Error::invalid("reviews", why));
    let selector = if herd_protocol::layout::validate_run_id(target).is_ok()
        && artifacts.run_record(target).exists()
    {
        herd_protocol::run::Selector::Id(target)
    } else {
        herd_protocol::run::Selector::Name(target)
    };
    let record = match herd_protocol::run::find(artifacts, &selector, |_| true) {
        Ok(record) => record,
        Err(err) => return refuse(format!("names no run to review: {}", err.message)),
    };
    let result = herd_protocol::result::RunResult::load(artifacts, &record.run_id, None)
        .ok()
        .flatten();
    let Some(result) = result else {
        return refuse(format!(
            "run {} has not ended: a review is of a settled result",
            record.run_id
        ));
    };
    let status = result
        .details
        .acceptance
        .as_ref()
        .map(herd_protocol::result::Acceptance::status);
    if status != Some("review-required") {
        return refuse(format!(
            "run {} does not require a review (its acceptance status is {})",
            record.run_id,
            status.unwrap_or("none")
        ));
    }
    Ok(Some(herd_protocol::accept::ReviewTarget {
        run_id: record.run_id,
        name: record.name,
    }))
}

/// The acceptance section of the child's prompt, for attested or stricter gates.
fn acceptance_section(plan: &Plan) -> Option<String> {
    let gate = plan.acceptance.as_ref()?;
    herd_accept::report::prompt::section(gate, plan.request.reviews.is_some())
}

/// Records that the failed attempt `run_id` was replaced by `successor`. A failure to write it
/// leaves the attempt to be delivered as the failure it is, which misleads nobody.
fn mark_superseded(artifacts: &Artifacts, run_id: &str, successor: &str) {
    use herd_protocol::run::Superseded;
    let superseded = Superseded {
        format_version: <Superseded as RunFile>::VERSION,
        at_ms: herd_core::time::now_ms(),
        successor: Some(successor.to_owned()),
        failure: None,
        error: None,
    };
    if artifacts.run(run_id).create_once(superseded).is_ok() {
        herd_protocol::open_runs::remove(artifacts, run_id);
    }
}

/// Refuses a persistent specialist beyond `persistent.maxAgents` live ones (default 3).
fn persistent_cap(plan: &Plan, artifacts: &Artifacts) -> Result<(), Error> {
    if !plan.persistent {
        return Ok(());
    }
    let max = crate::roles::Config::max_persistent(&plan.agent_dir)?;
    let mut live = 0;
    // A live specialist is an open run.
    for id in herd_protocol::open_runs::list(artifacts)? {
        let Ok(record) = RunRecord::load(artifacts, &id) else {
            continue;
        };
        let open = matches!(
            record.status,
            LaunchStatus::Launched | LaunchStatus::Uncertain | LaunchStatus::Pending
        );
        if record.persistent && open && !artifacts.run_result(&id).exists() {
            live += 1;
        }
    }
    if live >= max {
        return Err(Error::new(
            ErrorCode::Conflict,
            format!("{live} persistent specialists are live, the most persistent.maxAgents allows ({max})"),
        )
        .with_field("persistent"));
    }
    Ok(())
}

fn launch_once(
    artifacts: &Artifacts,
    plan: &Plan,
    attempt: usize,
    surface: &dyn Surface,
    tools: &Tools,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Ack, Error> {
    let now = herd_core::time::now_ms();
    let mut record = pending_record(plan, attempt, surface, env, now);
    let ids = if plan.persistent {
        Some(PersistentIds {
            logical_id: String::new(),
            generation_id: format!("gen-{}", names::random_hex(8)?),
            task_id: format!("task-{}", names::random_hex(8)?),
        })
    } else {
        None
    };
    let (files, ids) = claim(artifacts, plan, &mut record, ids, now)?;
    let step = Attempt {
        artifacts,
        plan,
        surface,
        tools,
        env,
        now,
        checked: plan.worktree_checked.as_ref().filter(|_| attempt == 0),
    };
    match prepare_and_launch(&step, &mut record, files, ids) {
        Ok(outcome) => Ok(outcome),
        Err(err) => failed_attempt(artifacts, plan, record, err),
    }
}

/// The record of attempt `attempt` of `plan`, `pending`, before its id and files are chosen.
fn pending_record(
    plan: &Plan,
    attempt: usize,
    surface: &dyn Surface,
    env: &dyn Fn(&str) -> Option<String>,
    now: u64,
) -> RunRecord {
    RunRecord {
        format_version: herd_protocol::run::FORMAT_VERSION,
        run_id: String::new(),
        name: plan.request.name.clone(),
        agent: plan.role.as_ref().map(|r| r.name.clone()),
        created_at_ms: now,
        updated_at_ms: now,
        runner: plan.runner.kind(),
        surface: surface.kind(),
        status: LaunchStatus::Pending,
        cwd: plan.cwd.to_string_lossy().into_owned(),
        session_file: String::new(),
        pane: None,
        // A resumed worktree child works in its retained worktree again.
        worktree: plan.resume.as_ref().and_then(|r| r.worktree.clone()),
        accept_spec: None,
        model: plan.model(attempt).map(str::to_owned),
        attempted_models: plan
            .attempted
            .iter()
            .chain(plan.models.iter().take(attempt))
            .cloned()
            .collect(),
        fallback_models: plan.models.iter().skip(attempt + 1).cloned().collect(),
        thinking: plan.thinking.clone(),
        persistent: plan.persistent,
        interactive: plan.interactive,
        auto_exit: plan.auto_exit,
        fallback_of: plan.fallback_of.clone(),
        parent_run_id: env("PI_SUBAGENT_ID")
            .filter(|id| herd_protocol::layout::validate_run_id(id).is_ok()),
        launch_failure: None,
        time_limit_ms: plan.time_limit_ms,
        diagnostics: plan.diagnostics.clone(),
        extra: Default::default(),
    }
}

/// Claims `record` under a fresh run id: the record is created exclusively before anything else
/// exists, already naming every file the attempt will write, so a crash at any later point
/// leaves an owner on disk.
fn claim(
    artifacts: &Artifacts,
    plan: &Plan,
    record: &mut RunRecord,
    ids: Option<PersistentIds>,
    now: u64,
) -> Result<(Files, Option<PersistentIds>), Error> {
    for _ in 0..16 {
        let run_id = names::new_run_id()?;
        let files = files_for(
            plan,
            artifacts,
            &run_id,
            now,
            !record.fallback_models.is_empty(),
        )?;
        let ids = ids.clone().map(|ids| PersistentIds {
            logical_id: run_id.clone(),
            ..ids
        });
        record.run_id = run_id;
        record.extra = Default::default();
        describe(record, &files, ids.as_ref());
        record.extra.resurrects = plan.resume.as_ref().and_then(|r| r.resurrects.clone());
        record.extra.budget = plan.budget;
        // This process's identity first: a record never exists without a launcher a watcher
        // can judge, so a launch whose herd-launch died is settled rather than waited on.
        if !record_launcher(artifacts, &record.run_id)? {
            continue;
        }
        // In the open-run set before the record exists, so no open run is ever missing there.
        herd_protocol::open_runs::add(artifacts, &record.run_id)?;
        if crate::files::claim_record(artifacts, record)? {
            return Ok((files, ids));
        }
    }
    Err(Error::internal("could not claim a free run id in 16 tries"))
}

/// What an attempt that failed with `err` leaves: a refusal before anything outside the
/// artifacts directory existed is withdrawn and returned; anything else is recorded `failed`,
/// or `uncertain` once the child may run.
fn failed_attempt(
    artifacts: &Artifacts,
    plan: &Plan,
    mut record: RunRecord,
    err: Error,
) -> Result<Ack, Error> {
    // A failure after dispatch (the record's last save) leaves a child running: the launch is
    // uncertain, and an uncertain launch never falls back to another model.
    let dispatched = matches!(
        record.status,
        LaunchStatus::Launched | LaunchStatus::Uncertain
    );
    record.status = if dispatched {
        LaunchStatus::Uncertain
    } else {
        LaunchStatus::Failed
    };
    // A refusal (exit 2) changes nothing: what the attempt wrote before it is removed, as long
    // as nothing outside the artifacts directory (a worktree) was created. (A resume creates no
    // worktree: a resumed worktree child's is the retained one.)
    let created_worktree = record.worktree.is_some() && plan.resume.is_none();
    if err.code == ErrorCode::InvalidRequest && !dispatched && !created_worktree {
        withdraw(artifacts, &record);
        return Err(err);
    }
    record.launch_failure = Some(err.message.clone());
    crate::files::save_record(artifacts, &mut record)?;
    Ok(Ack {
        status: record.status,
        record,
        artifacts: artifacts.root().to_path_buf(),
        failed_attempts: Vec::new(),
        persistent_ids: None,
    })
}

/// Removes the files of an attempt refused before it created anything outside the artifacts
/// directory: every file the record names, then the launcher identity, the record last (so a
/// crash part-way leaves a record a watcher settles, never an orphaned file).
fn withdraw(artifacts: &Artifacts, record: &RunRecord) {
    let id = &record.run_id;
    let mut files: Vec<PathBuf> = record.extra.launch_files().map(PathBuf::from).collect();
    files.extend(record.accept_spec.as_ref().map(PathBuf::from));
    for path in files {
        let _ = std::fs::remove_file(path);
    }
    let _ = std::fs::remove_file(artifacts.launcher(id));
    let _ = std::fs::remove_file(artifacts.run_record(id));
    herd_protocol::open_runs::remove(artifacts, id);
}

/// Writes the identity of this herd-launch for `run_id` once; `false` when the id was taken.
fn record_launcher(artifacts: &Artifacts, run_id: &str) -> Result<bool, Error> {
    let path = artifacts.launcher(run_id);
    let me =
        herd_core::identity::capture(std::process::id(), run_id, &artifacts.run_record(run_id))?;
    let bytes = me.to_json()?;
    crate::files::create_once(&path, &bytes)
}

/// Reads the request: a file, or `-` for stdin, at most [`crate::plan::REQUEST_LIMIT`] bytes.
pub fn read_request(source: &str) -> Result<Vec<u8>, Error> {
    use std::io::Read;
    let limit = crate::plan::REQUEST_LIMIT;
    if source == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .take(limit + 1)
            .read_to_end(&mut buf)
            .map_err(|e| {
                Error::invalid(
                    "request",
                    format!("cannot read the request from stdin: {e}"),
                )
            })?;
        if buf.len() as u64 > limit {
            return Err(Error::invalid(
                "request",
                format!("the request is larger than {limit} bytes"),
            ));
        }
        return Ok(buf);
    }
    // Every unreadable request is the caller's mistake (a directory, a FIFO, no permission):
    // nothing was read, so nothing was changed.
    sidecar::read_given(Path::new(source), limit)
        .map_err(|e| Error::invalid("request", format!("cannot read the request {source}: {e}")))?
        .ok_or_else(|| Error::invalid("request", format!("{source} does not exist")))
}
