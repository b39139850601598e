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

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use herd_core::{Error, ErrorCode, exit, sidecar};
use herd_protocol::child_env::{ChildEnv, SpecialistEnv};
use herd_protocol::launch::{AckWorktree, FailedAttempt, LaunchAck};
use herd_protocol::layout::{Artifacts, SessionFiles, safe_name};
use herd_protocol::run::{LaunchStatus, PaneRef, RunRecord, SurfaceKind, WorktreeRef};
use herd_protocol::run_file::RunFile;
use herd_surface::{Launch, LaunchError, Surface};

use crate::artifact::{self, Mode};
use crate::names;
use crate::plan::{Plan, Runner};
use crate::policy::{Owner, Policy, WorktreeBinding};
use crate::script::Script;
use herd_core::time::Utc;

/// The environment variable that caps every operation's budget of a launch (milliseconds), e.g.
/// in tests of a surface that hangs. Without it each operation has the seed's own budget
/// ([`herd_surface::LaunchBudgets::default`]).
pub const LAUNCH_BUDGET_ENV: &str = "HERD_LAUNCH_BUDGET_MS";

/// The budget of each operation of a launch: the seed's, capped by [`LAUNCH_BUDGET_ENV`].
pub fn launch_budgets(env: &dyn Fn(&str) -> Option<String>) -> herd_surface::LaunchBudgets {
    let budgets = herd_surface::LaunchBudgets::default();
    match env(LAUNCH_BUDGET_ENV).and_then(|ms| ms.parse::<u64>().ok()) {
        Some(ms) => budgets.capped(Duration::from_millis(ms)),
        None => budgets,
    }
}

/// The parent's Herdr pane identity, kept only for a child in a Herdr pane.
pub const HERDR_IDS: [&str; 3] = ["HERDR_PANE_ID", "HERDR_TAB_ID", "HERDR_WORKSPACE_ID"];

/// Variables of the launching environment a pane's shell may lack (a tmux server has its own
/// environment) and that the child needs; none of them is a secret.
const PASS_THROUGH: [&str; 12] = [
    "PATH",
    "HOME",
    "USER",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "XDG_CONFIG_HOME",
    "XDG_STATE_HOME",
    "PI_OFFLINE",
    "PI_TELEMETRY",
    "PI_SKIP_VERSION_CHECK",
];

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

pub use herd_protocol::launch::PersistentIds;

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
    let result: Option<serde_json::Value> =
        herd_core::sidecar::read_json(&artifacts.run_result(&record.run_id), 1024 * 1024)
            .ok()
            .flatten();
    let Some(result) = result else {
        return refuse(format!(
            "run {} has not ended: a review is of a settled result",
            record.run_id
        ));
    };
    let status = result
        .pointer("/details/acceptance/status")
        .and_then(serde_json::Value::as_str);
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

/// The acceptance section of the child's prompt (seed 004), for attested or stricter gates.
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

/// The files of one attempt, all named from its run id before anything is written.
struct Files {
    /// The child's session; for a worktree child known only once the worktree exists.
    session: Option<PathBuf>,
    activity: PathBuf,
    script: PathBuf,
    /// The task artifact, exec prompt or resume message.
    artifact: Option<PathBuf>,
    accept_spec: Option<PathBuf>,
    /// `runs/<id>.acceptance.json`, the run's acceptance gate.
    acceptance: Option<PathBuf>,
    /// The request kept for a model fallback launch (only when candidates remain).
    request: Option<PathBuf>,
    /// The skills Pi loads with `--skill`, found once the child's directory is known.
    skills: Vec<PathBuf>,
}

impl Files {
    fn session(&self) -> Result<&Path, Error> {
        self.session
            .as_deref()
            .ok_or_else(|| Error::internal("the session was not chosen"))
    }
}

/// The session file of a child in `cwd`.
fn session_for(
    plan: &Plan,
    artifacts: &Artifacts,
    run_id: &str,
    now: u64,
    agent_dir: &Path,
    cwd: &Path,
) -> Result<PathBuf, Error> {
    Ok(match (&plan.resume, &plan.runner) {
        (Some(resume), _) => resume.session.clone(),
        (None, Runner::Pi { .. }) => names::session_file(agent_dir, cwd, now, run_id)?,
        // An exec child has no Pi session; the name only anchors its sidecars, beside its record.
        (None, Runner::Exec { .. }) => artifacts.exec_session(run_id),
    })
}

fn files_for(
    plan: &Plan,
    artifacts: &Artifacts,
    run_id: &str,
    now: u64,
    fallback: bool,
) -> Result<Files, Error> {
    let safe = safe_name(&plan.request.name, "subagent");
    let stamp = Utc::from_ms(now).file_seconds();
    let artifact = match (&plan.runner, &plan.resume) {
        (Runner::Pi { .. }, Some(resume)) => resume.message.as_ref().map(|_| {
            artifacts
                .resume_dir()
                .join(format!("{safe}-{stamp}-{run_id}.md"))
        }),
        (Runner::Pi { .. }, None) if plan.fork => None,
        (Runner::Pi { .. }, None) => Some(
            artifacts
                .context_dir()
                .join(format!("{safe}-{stamp}-{run_id}.md")),
        ),
        // The exec runner's prompt, fed to its stdin.
        (Runner::Exec { .. }, _) => Some(artifacts.exec_prompt(run_id)),
    };
    let session = if plan.worktree.is_some() {
        None
    } else {
        Some(session_for(
            plan,
            artifacts,
            run_id,
            now,
            &plan.agent_dir,
            &plan.cwd,
        )?)
    };
    Ok(Files {
        session,
        activity: artifacts.activity(run_id),
        script: artifacts.scripts_dir().join(format!("{safe}-{run_id}.sh")),
        artifact,
        accept_spec: plan.accept.as_ref().map(|_| artifacts.accept_spec(run_id)),
        acceptance: plan.acceptance.as_ref().map(|_| {
            artifacts
                .run(run_id)
                .path::<herd_protocol::accept::RunGate>()
        }),
        request: fallback.then(|| artifacts.launch_request(run_id)),
        skills: Vec::new(),
    })
}

/// Writes what the record says about the attempt's files.
fn describe(record: &mut RunRecord, files: &Files, ids: Option<&PersistentIds>) {
    let text = |p: &Path| p.to_string_lossy().into_owned();
    if let Some(session) = &files.session {
        record.session_file = text(session);
    }
    record.accept_spec = files.accept_spec.as_deref().map(text);
    let extra = &mut record.extra;
    extra.launch_script = Some(text(&files.script));
    extra.activity_file = Some(text(&files.activity));
    extra.task_artifact = files.artifact.as_deref().map(text);
    extra.request_file = files.request.as_deref().map(text);
    extra.acceptance_file = files.acceptance.as_deref().map(text);
    if let Some(ids) = ids {
        extra.logical_id = Some(ids.logical_id.clone());
        extra.generation_id = Some(ids.generation_id.clone());
        extra.task_id = Some(ids.task_id.clone());
    }
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
    let model = plan.model(attempt).map(str::to_owned);
    let fallback_models: Vec<String> = plan.models.iter().skip(attempt + 1).cloned().collect();
    let mut record = RunRecord {
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
        model,
        attempted_models: plan
            .attempted
            .iter()
            .chain(plan.models.iter().take(attempt))
            .cloned()
            .collect(),
        fallback_models,
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
    };
    let ids = if plan.persistent {
        Some(PersistentIds {
            logical_id: String::new(),
            generation_id: format!("gen-{}", names::random_hex(8)?),
            task_id: format!("task-{}", names::random_hex(8)?),
        })
    } else {
        None
    };
    // The record is claimed (created exclusively) before anything else exists, already naming
    // every file the attempt will write, so a crash at any later point leaves an owner on disk.
    let mut claimed = None;
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
        describe(&mut record, &files, ids.as_ref());
        record.extra.resurrects = plan.resume.as_ref().and_then(|r| r.resurrects.clone());
        // This process's identity first: a record never exists without a launcher a watcher
        // can judge, so a launch whose herd-launch died is settled rather than waited on.
        if !record_launcher(artifacts, &record.run_id)? {
            continue;
        }
        // In the open-run set before the record exists, so no open run is ever missing there.
        herd_protocol::open_runs::add(artifacts, &record.run_id)?;
        if crate::files::claim_record(artifacts, &mut record)? {
            claimed = Some((files, ids));
            break;
        }
    }
    let Some((files, ids)) = claimed else {
        return Err(Error::internal("could not claim a free run id in 16 tries"));
    };
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
        Err(err) => {
            // A failure after dispatch (the record's last save) leaves a child running: the
            // launch is uncertain, and an uncertain launch never falls back to another model.
            let dispatched = matches!(
                record.status,
                LaunchStatus::Launched | LaunchStatus::Uncertain
            );
            record.status = if dispatched {
                LaunchStatus::Uncertain
            } else {
                LaunchStatus::Failed
            };
            // A refusal (exit 2) changes nothing: what the attempt wrote before it is removed,
            // as long as nothing outside the artifacts directory (a worktree) was created.
            // (A resume creates no worktree: a resumed worktree child's is the retained one.)
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
    }
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

/// What every step of one attempt works with, passed once.
struct Attempt<'a> {
    artifacts: &'a Artifacts,
    plan: &'a Plan,
    surface: &'a dyn Surface,
    tools: &'a Tools,
    env: &'a dyn Fn(&str) -> Option<String>,
    now: u64,
    /// The preflight check of the plan's worktree, for the first attempt only: a later one
    /// checks afresh, as a new creation.
    checked: Option<&'a crate::worktree::Checked>,
}

/// Where the child runs, once its worktree (if it has one) exists.
struct Place {
    cwd: PathBuf,
    agent_dir: PathBuf,
    /// The worktree's retained root pane the child runs in (Herdr).
    root_pane: Option<PaneRef>,
    /// The managed worktree the launch policy binds the child to.
    binding: Option<WorktreeBinding>,
    /// The worktree's `HERD_PORT`, when its setup gave one: the child gets it too.
    port: Option<u16>,
}

/// Prepares the claimed attempt's files in order and dispatches its child.
fn prepare_and_launch(
    attempt: &Attempt<'_>,
    record: &mut RunRecord,
    mut files: Files,
    persistent_ids: Option<PersistentIds>,
) -> Result<Ack, Error> {
    let plan = attempt.plan;
    // 1. The worktree first: its manifest is written before anything is created for it.
    let place = attempt.place(record, &mut files, persistent_ids.as_ref())?;
    let trust = plan.trust.for_child(&place.cwd);
    record.extra.project_trust = Some(trust);
    attempt.find_skills(record, &mut files, &place);

    // 2. The session and the first message.
    let session = files.session()?.to_path_buf();
    if let Some(parent) = session.parent() {
        herd_core::sidecar::ensure_private_dir(parent)?;
    }
    if let (Runner::Pi { .. }, None) = (&plan.runner, &plan.resume) {
        crate::seed::seed_session(plan, &session, &place.cwd, attempt.now)?;
    }
    if let Some(path) = &files.artifact {
        crate::files::write(path, attempt.first_message().as_bytes())?;
    }

    // 3. What the watcher and a resume read later: the launch policy, seed 004's gate, the
    //    accept spec (the command lives only in that file), a persistent specialist's first
    //    task in its ledger, the request a model fallback relaunches.
    let policy = attempt.write_policy(record, &session, persistent_ids.as_ref(), &place)?;
    attempt.write_gate(record, &files)?;
    if let (Some(spec), Some(path)) = (&plan.accept, &files.accept_spec) {
        spec.write(path)?;
    }
    if let Some(ids) = &persistent_ids {
        crate::persistent::append_ledger(
            &SessionFiles::new(&session).ledger(),
            &ids.task_id,
            crate::persistent::Outcome::Dispatched,
            &ids.generation_id,
            &ids.logical_id,
            &policy.hash(),
        )?;
    }
    if let Some(request) = &files.request {
        crate::files::write_json(request, &plan.request_json)?;
    }

    // 4. The launch script, last.
    attempt.write_script(
        record,
        &files,
        &session,
        &place,
        persistent_ids.as_ref(),
        trust,
    )?;

    // 5. Dispatch.
    let owner = attempt.dispatch(record, &files, &session, &place)?;
    // A cancel recorded while this launch was acquiring its owner ends the owner as soon as it
    // is acquired (seed 003, cancel status `requested`); the watcher then delivers the cancelled
    // result. A pane herd was given (a retained worktree root) is never closed here.
    if let Some(target) = &owner {
        let run = attempt.artifacts.run(&record.run_id);
        if run.path::<herd_protocol::intents::CancelIntent>().exists() {
            let deadline = Instant::now() + herd_surface::ABSENCE_CONFIRMATION;
            let _ = herd_surface::close_confirmed(attempt.surface, target, deadline);
        }
    }
    Ok(Ack {
        status: record.status,
        record: record.clone(),
        artifacts: attempt.artifacts.root().to_path_buf(),
        failed_attempts: Vec::new(),
        persistent_ids,
    })
}

impl Attempt<'_> {
    /// Creates the managed worktree when the plan asks for one, and says where the child runs.
    /// A worktree child's session lives with the worktree's agent directory, so it is chosen
    /// and recorded here.
    fn place(
        &self,
        record: &mut RunRecord,
        files: &mut Files,
        ids: Option<&PersistentIds>,
    ) -> Result<Place, Error> {
        let plan = self.plan;
        let Some(wt) = &plan.worktree else {
            return Ok(Place {
                cwd: plan.cwd.clone(),
                agent_dir: plan.agent_dir.clone(),
                root_pane: None,
                binding: None,
                port: None,
            });
        };
        let run_id = record.run_id.clone();
        let created = crate::worktree::create(
            self.artifacts,
            plan,
            &run_id,
            wt,
            self.surface.kind(),
            self.checked,
        )?;
        let path = created.path.to_string_lossy().into_owned();
        record.worktree = Some(WorktreeRef {
            path: path.clone(),
            branch: created.branch.clone(),
            base_sha: created.base_sha.clone(),
            manifest: created.manifest_file.to_string_lossy().into_owned(),
        });
        record
            .diagnostics
            .extend(created.diagnostics.iter().cloned());
        record.cwd = path.clone();
        let binding = WorktreeBinding {
            path,
            workspace_id: created
                .workspace_id
                .clone()
                .unwrap_or_else(|| "none".to_owned()),
            branch: created.branch.clone(),
            base_sha: created.base_sha.clone(),
        };
        let cwd = created.path.clone();
        let agent_dir = crate::names::agent_dir(Some(&cwd), self.env)?;
        let session = session_for(plan, self.artifacts, &run_id, self.now, &agent_dir, &cwd)?;
        crate::worktree::record_session(self.artifacts, &run_id, session.clone());
        files.session = Some(session);
        describe(record, files, ids);
        crate::files::save_record(self.artifacts, record)?;
        Ok(Place {
            root_pane: crate::worktree::root_pane(&created, self.surface),
            cwd,
            agent_dir,
            binding: Some(binding),
            port: crate::worktree::port(&created),
        })
    }

    /// Finds the skills Pi loads with `--skill` in the child's directories; those not found are
    /// left to Pi's own discovery, with a diagnostic.
    fn find_skills(&self, record: &mut RunRecord, files: &mut Files, place: &Place) {
        let plan = self.plan;
        if !matches!(plan.runner, Runner::Pi { .. }) || plan.skills.is_empty() {
            return;
        }
        let skills = crate::skills::resolve(&plan.skills, &place.cwd, &place.agent_dir);
        if !skills.missing.is_empty() {
            record.diagnostics.push(format!(
                "skills not found in the child's .pi/skills, .agents/skills or the agent directory, left to Pi's own discovery: {}",
                skills.missing.join(", ")
            ));
        }
        files.skills = skills.paths;
    }

    /// The first message: the task artifact, the exec prompt or the resume message.
    fn first_message(&self) -> String {
        let plan = self.plan;
        let mode = if plan.persistent {
            Mode::Persistent
        } else if plan.auto_exit {
            Mode::AutoExit
        } else {
            Mode::Interactive
        };
        match (&plan.runner, &plan.resume) {
            (Runner::Pi { .. }, Some(resume)) => {
                format!(
                    "{}\n",
                    resume.message.as_deref().unwrap_or_default().trim_end()
                )
            }
            (Runner::Pi { .. }, None) => {
                let role = match &plan.role {
                    Some(role) => Some(role.body.as_str()),
                    None => plan.request.system_prompt.as_deref(),
                };
                artifact::task_artifact(
                    role,
                    mode,
                    plan.accept.is_some(),
                    &plan.skills,
                    &plan.request.task,
                    acceptance_section(plan).as_deref(),
                )
            }
            (Runner::Exec { .. }, _) => artifact::exec_prompt(
                plan.request.system_prompt.as_deref(),
                &plan.request.task,
                acceptance_section(plan).as_deref(),
            ),
        }
    }

    /// The launch policy, which resume restores (a resume keeps the one it restored; an exec
    /// child is no Pi session and cannot be resumed), written where it applies.
    fn write_policy(
        &self,
        record: &RunRecord,
        session: &Path,
        ids: Option<&PersistentIds>,
        place: &Place,
    ) -> Result<Policy, Error> {
        let plan = self.plan;
        let run_id = &record.run_id;
        let owner = if place.binding.is_some() {
            Owner::ManagedWorktree
        } else {
            Owner::Public
        };
        let policy = Policy::new(
            owner,
            plan.tools.clone(),
            plan.denied_tools.clone(),
            plan.persistent,
            ids.map_or_else(|| run_id.clone(), |ids| ids.logical_id.clone()),
            ids.map_or_else(|| format!("gen-{run_id}"), |ids| ids.generation_id.clone()),
            place.binding.clone(),
        );
        let writes_policy = plan.resume.is_none()
            && (matches!(plan.runner, Runner::Pi { .. })
                || plan.persistent
                || plan.worktree.is_some());
        if writes_policy {
            policy.write(&SessionFiles::new(session).policy())?;
        }
        Ok(policy)
    }

    /// Seed 004's gate, which herd-watch applies to the final report, and its summary in the
    /// record.
    fn write_gate(&self, record: &mut RunRecord, files: &Files) -> Result<(), Error> {
        let (Some(gate), Some(_)) = (&self.plan.acceptance, &files.acceptance) else {
            return Ok(());
        };
        let run_gate = herd_protocol::accept::RunGate {
            format_version: herd_protocol::accept::RunGate::FORMAT_VERSION,
            gate: gate.clone(),
            reviews: review_target(self.artifacts, self.plan)?,
        };
        self.artifacts.run(&record.run_id).write(run_gate.clone())?;
        record.extra.acceptance = Some(herd_protocol::run::AcceptanceSummary {
            level: gate.level.as_str().to_owned(),
            explicit: gate.explicit,
            review_required: gate.review.as_ref().is_some_and(|r| r.required),
            reviews: run_gate
                .reviews
                .as_ref()
                .map(|target| target.run_id.clone()),
        });
        Ok(())
    }

    /// Writes the launch script: the child's environment, the runner's command line and where
    /// its exit status goes.
    fn write_script(
        &self,
        record: &mut RunRecord,
        files: &Files,
        session: &Path,
        place: &Place,
        ids: Option<&PersistentIds>,
        trust: crate::trust::Trust,
    ) -> Result<(), Error> {
        let plan = self.plan;
        let (unset, mut child_env) = child_env(
            plan,
            record,
            files,
            session,
            &place.agent_dir,
            self.surface,
            ids,
            trust,
            self.tools,
            self.env,
        );
        if let Some(port) = place.port {
            child_env.push((crate::worktree::PORT_ENV.into(), port.to_string().into()));
        }
        let (argv, stdin, stdout, stderr) = runner_argv(
            plan,
            record,
            files,
            session,
            self.surface,
            self.tools,
            self.artifacts,
        )?;
        let script = Script {
            run_id: record.run_id.clone(),
            name: plan.request.name.clone(),
            prologue: self.surface.script_prologue(&plan.request.name),
            cwd: place.cwd.clone(),
            unset,
            env: child_env,
            herd_launch: self.tools.herd_launch.clone(),
            identity_file: SessionFiles::new(session).process(),
            session_file: session.to_path_buf(),
            argv,
            stdin,
            stdout,
            stderr,
            exit_status_file: herd_surface::runner_exit_file(self.artifacts, &record.run_id),
        };
        script.write(&files.script)?;
        if let Runner::Exec { argv } = &plan.runner {
            // Kept for a fallback launch of the same command; written with the final state.
            record.extra.exec_argv = argv
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
        }
        Ok(())
    }

    /// Starts the launch script on the surface and records how that went: the record's last
    /// save. Returns the owner of the child when one was acquired.
    fn dispatch(
        &self,
        record: &mut RunRecord,
        files: &Files,
        session: &Path,
        place: &Place,
    ) -> Result<Option<herd_surface::Target>, Error> {
        let run_id = record.run_id.clone();
        let launch = Launch {
            run_id: &run_id,
            name: &self.plan.request.name,
            cwd: &place.cwd,
            script: &files.script,
            session_file: session,
            into: place.root_pane.as_ref(),
        };
        let mut owner = None;
        let status = match self.surface.launch(&launch, &launch_budgets(self.env)) {
            Ok(target) => {
                record.pane = target.to_pane_ref();
                owner = Some(target);
                LaunchStatus::Launched
            }
            Err(LaunchError::Definite(err)) => {
                record.launch_failure = Some(err.to_string());
                LaunchStatus::Failed
            }
            Err(LaunchError::Uncertain {
                error,
                owner: uncertain,
            }) => {
                record.pane = uncertain.to_pane_ref();
                record.launch_failure = Some(error.to_string());
                owner = Some(*uncertain);
                LaunchStatus::Uncertain
            }
            Err(LaunchError::Unowned(err)) => {
                record.launch_failure = Some(format!("{err}; no owner was identified"));
                LaunchStatus::Uncertain
            }
        };
        if self.plan.worktree.is_some() {
            match status {
                LaunchStatus::Launched => crate::worktree::mark_running(self.artifacts, &run_id),
                LaunchStatus::Failed => crate::worktree::mark_failed(
                    self.artifacts,
                    &run_id,
                    record.launch_failure.as_deref().unwrap_or("launch failed"),
                ),
                _ => {}
            }
        }
        record.status = status;
        crate::files::save_record(self.artifacts, record)?;
        Ok(owner)
    }
}

/// The child's environment (protocol.md §1.1): what to unset, then what to export.
#[expect(
    clippy::too_many_arguments,
    reason = "everything the environment is made of"
)]
fn child_env(
    plan: &Plan,
    record: &RunRecord,
    files: &Files,
    session: &Path,
    agent_dir: &Path,
    surface: &dyn Surface,
    persistent: Option<&PersistentIds>,
    trust: crate::trust::Trust,
    tools: &Tools,
    env: &dyn Fn(&str) -> Option<String>,
) -> (Vec<String>, Vec<(String, OsString)>) {
    let unset = unset_vars(surface.kind());
    let mut vars = pane_env(surface, env);
    vars.push((
        "PI_CODING_AGENT_DIR".into(),
        agent_dir.as_os_str().to_owned(),
    ));
    // The child extension runs `herd-accept` and `herd-watch`.
    vars.extend(bin_dir_env(tools, env));
    // The child's own decision: its extension answers Pi's trust question with it, and its own
    // launches inherit it.
    vars.push((crate::trust::ENV.into(), trust.as_str().into()));
    let child = ChildEnv {
        session: session.to_owned(),
        denied_tools: plan.denied_tools.clone(),
        run_id: record.run_id.clone(),
        name: record.name.clone(),
        agent: record.agent.clone(),
        auto_exit: plan.auto_exit,
        specialist: persistent.map(|ids| SpecialistEnv {
            logical_id: ids.logical_id.clone(),
            generation_id: ids.generation_id.clone(),
            task_id: ids.task_id.clone(),
        }),
        activity_file: files.activity.clone(),
        process_file: SessionFiles::new(session).process(),
        accept_file: files.accept_spec.clone(),
    };
    vars.extend(child.to_vars());
    (unset, vars)
}

/// What a launch must not inherit: the child protocol, and the other surfaces' pane ids.
pub fn unset_vars(kind: SurfaceKind) -> Vec<String> {
    let mut unset: Vec<String> = ChildEnv::VARS.iter().map(|v| (*v).to_owned()).collect();
    if kind != SurfaceKind::Herdr {
        unset.extend(HERDR_IDS.iter().map(|v| (*v).to_owned()));
    }
    if kind != SurfaceKind::Tmux {
        unset.push("TMUX_PANE".to_owned());
    }
    unset
}

/// What a pane's shell lacks of the caller's environment (it has the multiplexer's): the
/// pass-through variables and herd's own settings, the project-trust decision aside, which each
/// launch makes. Nothing on the process surface, whose script inherits the caller's.
pub fn pane_env(
    surface: &dyn Surface,
    env: &dyn Fn(&str) -> Option<String>,
) -> Vec<(String, OsString)> {
    let mut vars: Vec<(String, OsString)> = Vec::new();
    if !surface.has_terminal() {
        return vars;
    }
    for key in PASS_THROUGH {
        if let Some(value) = env(key) {
            vars.push((key.to_owned(), value.into()));
        }
    }
    let mut herd: Vec<String> = std::env::vars()
        .map(|(k, _)| k)
        .filter(|k| k.starts_with("HERD_") && k != crate::trust::ENV)
        .collect();
    herd.sort();
    for key in herd {
        if let Some(value) = env(&key) {
            vars.push((key, value.into()));
        }
    }
    vars
}

/// `HERD_BIN_DIR` naming this program's directory, unless the caller named the place of the herd
/// programs itself.
pub fn bin_dir_env(
    tools: &Tools,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<(String, OsString)> {
    let key = herd_core::subprocess::BIN_DIR_ENV;
    if env(key).is_some_and(|d| !d.is_empty()) {
        return None;
    }
    let dir = tools.herd_launch.parent()?;
    Some((key.into(), dir.as_os_str().to_owned()))
}

/// The runner's argv and its standard streams.
#[expect(
    clippy::type_complexity,
    reason = "argv and the three standard streams, used once"
)]
fn runner_argv(
    plan: &Plan,
    record: &RunRecord,
    files: &Files,
    session: &Path,
    surface: &dyn Surface,
    tools: &Tools,
    artifacts: &Artifacts,
) -> Result<
    (
        Vec<OsString>,
        Option<PathBuf>,
        Option<PathBuf>,
        Option<PathBuf>,
    ),
    Error,
> {
    match &plan.runner {
        Runner::Exec { argv } => {
            // Output goes to the logs on every surface; on the process surface the script's own
            // output already does.
            let (stdout, stderr) = if surface.has_terminal() {
                herd_core::sidecar::ensure_private_dir(&artifacts.logs_dir())?;
                let logs = [
                    artifacts.stdout_log(&record.run_id),
                    artifacts.stderr_log(&record.run_id),
                ];
                // Created here, 0600, so the script's redirections only truncate private files.
                for log in &logs {
                    herd_core::sidecar::private()
                        .write(true)
                        .create(true)
                        .truncate(true)
                        .open(log)
                        .map_err(|e| {
                            Error::new(
                                ErrorCode::Unavailable,
                                format!("cannot create {}: {e}", log.display()),
                            )
                        })?;
                }
                let [stdout, stderr] = logs;
                (Some(stdout), Some(stderr))
            } else {
                (None, None)
            };
            Ok((argv.clone(), files.artifact.clone(), stdout, stderr))
        }
        Runner::Pi { program } => {
            let mut argv: Vec<OsString> = program.argv();
            if !surface.has_terminal() {
                // No terminal: print mode runs the prompt and exits.
                argv.push("-p".into());
            }
            argv.push("--session".into());
            argv.push(session.as_os_str().to_owned());
            if let Some(model) = &record.model {
                argv.push("--model".into());
                argv.push(model.into());
            }
            if let Some(thinking) = &record.thinking {
                argv.push("--thinking".into());
                argv.push(pi_thinking(thinking).into());
            }
            if let Some(tools) = &plan.tools {
                let mut list = tools.clone();
                for extra in child_tools(plan.auto_exit, plan.persistent) {
                    if !list.iter().any(|t| t == extra) {
                        list.push(extra.to_owned());
                    }
                }
                argv.push("--tools".into());
                argv.push(list.join(",").into());
            }
            if let Some(extension) = &tools.extension {
                argv.push("-e".into());
                argv.push(extension.clone().into_os_string());
            }
            for skill in &files.skills {
                argv.push("--skill".into());
                argv.push(skill.clone().into_os_string());
            }
            match &files.artifact {
                Some(artifact) => {
                    let mut at = OsString::from("@");
                    at.push(artifact);
                    argv.push(at);
                }
                None if plan.resume.is_some() => {}
                // A fork child gets the raw task, and with it the acceptance section.
                None => argv.push(
                    match acceptance_section(plan) {
                        Some(section) => format!("{}\n\n{section}", plan.request.task.trim_end()),
                        None => plan.request.task.clone(),
                    }
                    .into(),
                ),
            }
            Ok((argv, None, None, None))
        }
    }
}

/// The child protocol tools an allowlist must keep: `caller_ping` always, `subagent_done` for a
/// child that does not exit by itself.
pub fn child_tools(auto_exit: bool, persistent: bool) -> Vec<&'static str> {
    if auto_exit && !persistent {
        vec!["caller_ping"]
    } else {
        vec!["caller_ping", "subagent_done"]
    }
}

/// Pi's thinking levels stop at `xhigh`; the tool's `max` asks for the highest.
pub fn pi_thinking(level: &str) -> &str {
    if level == "max" { "xhigh" } else { level }
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
