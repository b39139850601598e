//! One attempt's files written and its child placed and started, and what is recorded then.

use std::path::{Path, PathBuf};
use std::time::Instant;

use herd_core::Error;
use herd_protocol::layout::{Artifacts, SessionFiles};
use herd_protocol::run::{LaunchStatus, PaneRef, RunRecord, WorktreeRef};
use herd_surface::{Launch, LaunchError, Surface};

use crate::artifact::{self, Mode};
use crate::plan::{Plan, Runner};
use crate::script::Script;
use herd_protocol::launch::PersistentIds;
use herd_protocol::launch::policy::Owner;
use herd_protocol::launch::policy::Policy;
use herd_protocol::launch::policy::WorktreeBinding;

use super::env::{child_env, runner_command};
use super::files::{Files, describe, session_for};
use super::{Ack, Tools, acceptance_section, launch_budgets, review_target};

/// What every step of one attempt works with, passed once.
pub(super) struct Attempt<'a> {
    pub(super) artifacts: &'a Artifacts,
    pub(super) plan: &'a Plan,
    pub(super) surface: &'a dyn Surface,
    pub(super) tools: &'a Tools,
    pub(super) env: &'a dyn Fn(&str) -> Option<String>,
    pub(super) now: u64,
    /// The preflight check of the plan's worktree, for the first attempt only: a later one
    /// checks afresh, as a new creation.
    pub(super) checked: Option<&'a herd_worktree::create::Plan>,
}

/// Where the child runs, once its worktree (if it has one) exists.
pub(super) struct Place {
    pub(super) cwd: PathBuf,
    pub(super) agent_dir: PathBuf,
    /// The worktree's retained root pane the child runs in (Herdr).
    pub(super) root_pane: Option<PaneRef>,
    /// The managed worktree the launch policy binds the child to.
    pub(super) binding: Option<WorktreeBinding>,
    /// The worktree's `HERD_PORT`, when its setup gave one: the child gets it too.
    pub(super) port: Option<u16>,
}

/// Prepares the claimed attempt's files in order and dispatches its child.
pub(super) fn prepare_and_launch(
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

    // 3. What the watcher and a resume read later: the launch policy, the acceptance gate, the
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
            herd_protocol::persistent::Outcome::Dispatched,
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
    // is acquired (the cancel status `requested`); the watcher then delivers the cancelled
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
    pub(super) fn place(
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
        let session = session_for(plan, self.artifacts, &run_id, self.now)?;
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
    pub(super) fn find_skills(&self, record: &mut RunRecord, files: &mut Files, place: &Place) {
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
    pub(super) fn first_message(&self) -> String {
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
    pub(super) fn write_policy(
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
        )
        // A resume and a resurrect run under it again, never wider.
        .with_sandbox(plan.confinement.policy.to_env());
        let writes_policy = plan.resume.is_none()
            && (matches!(plan.runner, Runner::Pi { .. })
                || plan.persistent
                || plan.worktree.is_some());
        if writes_policy {
            policy.write(&SessionFiles::new(session).policy())?;
        }
        Ok(policy)
    }

    /// The acceptance gate, which herd-watch applies to the final report, and its summary in the
    /// record.
    pub(super) fn write_gate(&self, record: &mut RunRecord, files: &Files) -> Result<(), Error> {
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
    pub(super) fn write_script(
        &self,
        record: &mut RunRecord,
        files: &Files,
        session: &Path,
        place: &Place,
        ids: Option<&PersistentIds>,
        trust: herd_protocol::run::ProjectTrust,
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
        // The child's own spawns get no more than it has.
        child_env.push(plan.confinement.ceiling_var());
        // Pi's agent directory is seen through a private one (`bwrap::AgentPlaces`): it holds the
        // person's own sessions, extensions, skills and settings, which the person's next Pi
        // would load unconfined.
        let own = session
            .parent()
            .map(Path::to_path_buf)
            .into_iter()
            // Its activity, and the runs of its own children (herd keeps a parent's whole tree
            // in one artifacts directory).
            .chain([self.artifacts.root().to_path_buf()])
            .collect();
        let sandbox = plan.confinement.wrapper(
            &place.cwd,
            own,
            record.worktree.is_some(),
            &self.artifacts.sandbox(&record.run_id),
            &self.tools.herd_launch,
            matches!(plan.runner, crate::plan::Runner::Pi { .. })
                .then_some(place.agent_dir.as_path()),
        )?;
        let command = runner_command(
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
            sandbox: sandbox.argv,
            relay: sandbox.relay,
            scope_signals: plan.confinement.scopes_signals(),
            argv: command.argv,
            stdin: command.stdin,
            stdout: command.stdout,
            stderr: command.stderr,
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
    pub(super) fn dispatch(
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
