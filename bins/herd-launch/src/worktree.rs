//! Worktree launches through herd-worktree: the manifest is written before anything is created,
//! and follows the launch (`running`, or `failed` with the reason).

use std::path::PathBuf;

use herd_core::Error;
use herd_protocol::layout::Artifacts;
use herd_protocol::run::{PaneRef, SurfaceKind};
use herd_protocol::worktree::Surface;
use herd_protocol::worktree::manifest::{Manifest, State};
use herd_tools::WorktreeRequest;
use herd_worktree::create::{CreateEnv, CreateRequest, Created, SetupSource};

use herd_worktree::create::Plan as Checked;

use crate::plan::Plan;

/// Refuses a worktree request that herd-worktree would refuse, before the run is claimed, so a
/// refusal (exit 2) leaves nothing behind. Returns what the check found, for [`create`].
pub fn check(plan: &Plan, wt: &WorktreeRequest, surface: SurfaceKind) -> Result<Checked, Error> {
    let request = request(plan, "preflight", wt, surface);
    herd_worktree::create::check_with(&request, &CreateEnv::from_env()?, &setup_source(plan))
        .map_err(request_field)
}

/// The setup's user-side facts for this launch: the user's configuration, and the folder the
/// parent's trust was given for (`plan.trust`, herd-launch's working directory), so a request
/// whose `cwd` names another repository does not run that repository's setup on the strength
/// of a decision made for this one.
fn setup_source(plan: &Plan) -> SetupSource {
    SetupSource {
        config_dir: herd_worktree::setup::config::config_dir().ok(),
        trusted_folder: (plan.trust.trust == herd_protocol::run::ProjectTrust::Trusted)
            .then(|| plan.trust.dir.clone()),
        undecided: plan.trust.undecided,
        // The repository's setup commands run in the child's own sandbox.
        confine: plan.confinement.program.as_ref().map(|program| {
            herd_worktree::create::SetupConfinement {
                program: program.clone(),
                policy: plan.confinement.policy.clone(),
                config: plan.confinement.config.clone(),
            }
        }),
    }
}

/// Names a refused worktree field as the request does (`worktree.branch`, not `branch`).
pub fn request_field(mut err: Error) -> Error {
    if let Some(field) = err.field.as_deref() {
        if matches!(field, "branch" | "base") {
            err.field = Some(format!("worktree.{field}"));
        }
    }
    err
}

fn request(plan: &Plan, run_id: &str, wt: &WorktreeRequest, surface: SurfaceKind) -> CreateRequest {
    CreateRequest {
        source_cwd: plan.cwd.clone(),
        branch: wt.branch.clone(),
        base: wt.base.clone(),
        run_id: run_id.to_owned(),
        surface: if surface == SurfaceKind::Herdr {
            Surface::Herdr
        } else {
            Surface::Git
        },
        label: Some(plan.request.name.clone()),
    }
}

/// Creates the managed worktree of run `run_id`: by Herdr (a workspace and its root pane) when
/// the child runs on Herdr, else by `git worktree add` under the managed root. With `checked`
/// (the preflight [`check`] of this launch), the source, base and setup are not asked again.
pub fn create(
    artifacts: &Artifacts,
    plan: &Plan,
    run_id: &str,
    wt: &WorktreeRequest,
    surface: SurfaceKind,
    checked: Option<&Checked>,
) -> Result<Created, Error> {
    let request = request(plan, run_id, wt, surface);
    let env = CreateEnv::from_env()?;
    match checked {
        Some(checked) => {
            herd_worktree::create::create_checked(artifacts, &request, &env, checked.clone())
        }
        None => herd_worktree::create::create_with(artifacts, &request, &env, &setup_source(plan)),
    }
    .map_err(request_field)
}

/// The variable that gives the port setup allocated to a worktree, to its setup commands and
/// to the Pi that works in it.
pub const PORT_ENV: &str = "HERD_PORT";

/// The port the worktree's setup allocated (unique among live managed worktrees), if any.
pub fn port(created: &Created) -> Option<u16> {
    created.manifest.setup.as_ref().and_then(|s| s.port)
}

/// The root pane Herdr opened with the worktree's workspace, where the child runs: given to herd,
/// never closed by it. `None` for a worktree git made.
pub fn root_pane(created: &Created, surface: &dyn herd_surface::Surface) -> Option<PaneRef> {
    let (Some(pane), Some(workspace)) = (&created.pane_id, &created.workspace_id) else {
        return None;
    };
    Some(PaneRef {
        pane_id: pane.clone(),
        tab_id: created.tab_id.clone(),
        workspace_id: Some(workspace.clone()),
        owned: false,
        socket: surface.socket().map(|s| s.to_string_lossy().into_owned()),
        server_pid: None,
        terminal_id: None,
    })
}

/// Records that the child was dispatched into its worktree. A manifest that cannot be updated
/// does not undo a launch; herd-watch and herd-cleanup read the run record too.
pub fn mark_running(artifacts: &Artifacts, run_id: &str) {
    let _ = Manifest::update(artifacts, run_id, |m| m.state = State::Running);
}

/// Records why the launch into the worktree failed; the checkout is retained.
pub fn mark_failed(artifacts: &Artifacts, run_id: &str, why: &str) {
    let _ = Manifest::update(artifacts, run_id, |m| {
        m.state = State::Failed;
        m.error = Some(why.to_owned());
    });
}

/// Records the child's session in the manifest.
pub fn record_session(artifacts: &Artifacts, run_id: &str, session: PathBuf) {
    let _ = Manifest::update(artifacts, run_id, |m| m.session_file = Some(session));
}
