//! The files of one attempt: where its session, prompt, policy, script and logs go.

use std::path::{Path, PathBuf};

use herd_core::Error;
use herd_protocol::layout::{Artifacts, safe_name};
use herd_protocol::run::RunRecord;

use crate::names;
use crate::plan::{Plan, Runner};
use herd_core::time::Utc;
use herd_protocol::launch::PersistentIds;

/// The files of one attempt, all named from its run id before anything is written.
pub(super) struct Files {
    /// The child's session; for a worktree child known only once the worktree exists.
    pub(super) session: Option<PathBuf>,
    pub(super) activity: PathBuf,
    pub(super) script: PathBuf,
    /// The task artifact, exec prompt or resume message.
    pub(super) artifact: Option<PathBuf>,
    pub(super) accept_spec: Option<PathBuf>,
    /// `runs/<id>.acceptance.json`, the run's acceptance gate.
    pub(super) acceptance: Option<PathBuf>,
    /// The request kept for a model fallback launch (only when candidates remain).
    pub(super) request: Option<PathBuf>,
    /// The skills Pi loads with `--skill`, found once the child's directory is known.
    pub(super) skills: Vec<PathBuf>,
}

impl Files {
    pub(super) fn session(&self) -> Result<&Path, Error> {
        self.session
            .as_deref()
            .ok_or_else(|| Error::internal("the session was not chosen"))
    }
}

/// The session file of a child.
pub(super) fn session_for(
    plan: &Plan,
    artifacts: &Artifacts,
    run_id: &str,
    now: u64,
) -> Result<PathBuf, Error> {
    Ok(match (&plan.resume, &plan.runner) {
        (Some(resume), _) => resume.session.clone(),
        (None, Runner::Pi { .. }) => names::child_session_file(artifacts, now, run_id)?,
        // An exec child has no Pi session; the name only anchors its sidecars, beside its record.
        (None, Runner::Exec { .. }) => artifacts.exec_session(run_id),
    })
}

pub(super) fn files_for(
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
        Some(session_for(plan, artifacts, run_id, now)?)
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
pub(super) fn describe(record: &mut RunRecord, files: &Files, ids: Option<&PersistentIds>) {
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
