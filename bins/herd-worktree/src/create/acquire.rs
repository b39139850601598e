//! Making the checkout itself: by `git worktree add` under the managed root, or by Herdr with its
//! workspace and root pane, completed or recovered when Herdr's reply lacks parts.

use std::path::PathBuf;

use herd_core::{Error, ErrorCode};
use herd_git::{Deadline, budget};
use herd_herdr::{Herdr, Recovery, Source, WorktreeCreate, WorktreeCreated};
use herd_protocol::worktree::OpenedWorkspace;

use super::{ACQUISITION_BUDGET, CreateEnv, CreateRequest, Plan};

/// What the creation produced or recovered.
#[derive(Debug, Clone, Default)]
pub(crate) struct Acquired {
    pub path: Option<PathBuf>,
    pub workspace_id: Option<String>,
    pub pane_id: Option<String>,
    pub tab_id: Option<String>,
    /// The source repository's workspace the creation appeared to open.
    pub opened_source: Option<OpenedWorkspace>,
    pub diagnostics: Vec<String>,
}

/// How an acquisition ended: what exists, and the error if it failed.
#[derive(Debug)]
pub(crate) struct Acquisition {
    pub found: Acquired,
    pub error: Option<Error>,
}

impl Acquisition {
    pub(crate) fn ok(found: Acquired) -> Acquisition {
        Acquisition { found, error: None }
    }

    pub(crate) fn failed(error: Error, found: Acquired) -> Acquisition {
        Acquisition {
            found,
            error: Some(error),
        }
    }
}

pub(crate) fn acquire_with_git(plan: &Plan, env: &CreateEnv) -> Acquisition {
    if let Some(parent) = plan.path.parent() {
        if let Err(e) = herd_core::sidecar::ensure_private_dir(parent) {
            return Acquisition::failed(e.into(), Acquired::default());
        }
    }
    let deadline = Deadline::after(budget::ACQUISITION);
    match env.git.worktree_add(
        &plan.principal,
        &plan.path,
        &plan.branch,
        &plan.base_sha,
        &deadline,
    ) {
        Ok(()) => {
            // git made the checkout with the umask's mode; like every directory herd creates
            // under the managed root it is private.
            use std::os::unix::fs::PermissionsExt;
            let mut diagnostics = Vec::new();
            if let Err(e) = std::fs::set_permissions(
                &plan.path,
                std::fs::Permissions::from_mode(herd_core::sidecar::PRIVATE_DIR_MODE),
            ) {
                diagnostics.push(format!("cannot make {} private: {e}", plan.path.display()));
            }
            Acquisition::ok(Acquired {
                path: Some(plan.path.clone()),
                diagnostics,
                ..Acquired::default()
            })
        }
        Err(err) => {
            // A killed `git worktree add` may have left a checkout or a branch behind.
            let timed_out = matches!(err, herd_git::Error::Timeout { .. });
            let mut error = Error::from(err);
            let recovered = if plan.path.symlink_metadata().is_ok() {
                Acquired {
                    path: Some(plan.path.clone()),
                    ..Acquired::default()
                }
            } else {
                Acquired::default()
            };
            if timed_out {
                error.code = ErrorCode::Uncertain;
                error.message = format!(
                    "{}; a checkout at {} or branch {} may exist",
                    error.message,
                    plan.path.display(),
                    plan.branch
                );
            }
            Acquisition::failed(error, recovered)
        }
    }
}

/// `herdr worktree create --cwd <principal> --branch B --base <sha> --path P [--label L]
/// --no-focus`, completed through `worktree list` and `pane list` when the reply lacks parts
/// or may have been cut off. What cannot be completed is uncertain: Herdr may hold a checkout
/// and workspace nobody has identified, so the manifest keeps every part that was seen.
pub(crate) fn acquire_with_herdr(plan: &Plan, req: &CreateRequest, herdr: &Herdr) -> Acquisition {
    let source = Source::Cwd(plan.principal.clone());
    let params = WorktreeCreate {
        source: source.clone(),
        branch: plan.branch.clone(),
        base: Some(plan.base_sha.clone()),
        path: Some(plan.path.clone()),
        label: req.label.clone(),
        no_focus: true,
    };
    let acquirer = herdr.with_budget(ACQUISITION_BUDGET);
    let snapshot = herdr.with_budget(SNAPSHOT_BUDGET);
    let before = snapshot.worktree_list(Some(&source));
    match acquirer.worktree_create(&params) {
        Ok(created) => match created.complete() {
            Some(tree) => {
                let mut found = Acquired {
                    path: Some(tree.path.clone()),
                    workspace_id: Some(tree.workspace_id.clone()),
                    pane_id: Some(tree.pane_id),
                    tab_id: Some(tree.tab_id),
                    opened_source: None,
                    diagnostics: Vec::new(),
                };
                match opened_source(&snapshot, &source, before, &tree.workspace_id) {
                    Ok(opened) => found.opened_source = opened,
                    Err(why) => found.diagnostics.push(why),
                }
                if tree.path != plan.path {
                    found.diagnostics.push(format!(
                        "herdr placed the checkout at {}, not {}",
                        tree.path.display(),
                        plan.path.display()
                    ));
                }
                Acquisition::ok(found)
            }
            None => {
                let why = format!(
                    "herdr worktree create replied without {}",
                    created.missing().join(", ")
                );
                recover_from_herdr(herdr, &source, plan, &created, why)
            }
        },
        Err(err) if err.effect_possible() => {
            let why = err.to_string();
            recover_from_herdr(herdr, &source, plan, &WorktreeCreated::default(), why)
        }
        // A definite refusal: Herdr created nothing.
        Err(err) => Acquisition::failed(Error::from(err), Acquired::default()),
    }
}

/// The bound of each Herdr snapshot taken around the creation for [`opened_source`].
const SNAPSHOT_BUDGET: std::time::Duration = std::time::Duration::from_secs(3);

/// Whether the creation appeared to open a workspace on the source repository: none was open
/// on it before (`before`), one other than the worktree's own is after, and it has exactly one
/// pane with a terminal. A failed snapshot claims nothing and says why.
fn opened_source(
    snapshot: &Herdr,
    source: &Source,
    before: Result<herd_herdr::WorktreeList, herd_herdr::Error>,
    worktree_workspace: &str,
) -> Result<Option<OpenedWorkspace>, String> {
    let failed =
        |what: &str, e: &dyn std::fmt::Display| format!("herdr {what} snapshot failed: {e}");
    let before = before.map_err(|e| failed("worktree list (before create)", &e))?;
    if before.repo.source_workspace_id.is_some() {
        return Ok(None);
    }
    let after = snapshot
        .worktree_list(Some(source))
        .map_err(|e| failed("worktree list (after create)", &e))?;
    let Some(workspace) = after.repo.source_workspace_id else {
        return Ok(None);
    };
    if workspace == worktree_workspace {
        return Ok(None);
    }
    let panes = snapshot
        .pane_list(Some(&workspace))
        .map_err(|e| failed("pane list", &e))?;
    let Ok(pane) = panes.sole_pane() else {
        return Ok(None);
    };
    Ok(pane.terminal_id.clone().map(|terminal_id| OpenedWorkspace {
        workspace_id: workspace,
        pane_id: pane.pane_id.clone(),
        terminal_id,
    }))
}

/// Looks for what an incomplete or uncertain `worktree create` made, within the recovery
/// budget (the recovery inspection has 6 s in total).
fn recover_from_herdr(
    herdr: &Herdr,
    source: &Source,
    plan: &Plan,
    partial: &WorktreeCreated,
    why: String,
) -> Acquisition {
    let seen = Acquired {
        path: partial.path.clone(),
        workspace_id: partial.workspace_id.clone(),
        pane_id: partial.pane_id.clone(),
        tab_id: partial.tab_id.clone(),
        opened_source: None,
        diagnostics: vec![why.clone()],
    };
    let recovery = herdr
        .with_budget(herd_herdr::budget::RECOVERY)
        .recover_worktree(source, &plan.branch, partial);
    let uncertain = |detail: String, seen: Acquired| {
        Acquisition::failed(
            Error::new(
                ErrorCode::Uncertain,
                format!(
                    "{why}; recovery could not identify the worktree ({detail}); \
                     herdr may hold a checkout at {} and a workspace for branch {}",
                    plan.path.display(),
                    plan.branch
                ),
            ),
            seen,
        )
    };
    match recovery {
        Ok(Recovery::Found(tree)) => {
            let mut diagnostics = seen.diagnostics;
            diagnostics.push(
                "recovered the workspace and pane through worktree list and pane list".into(),
            );
            Acquisition::ok(Acquired {
                path: Some(tree.path),
                workspace_id: Some(tree.workspace_id),
                pane_id: Some(tree.pane_id),
                tab_id: Some(tree.tab_id),
                opened_source: None,
                diagnostics,
            })
        }
        Ok(Recovery::Inconclusive(detail)) => uncertain(detail, seen),
        Err(err) => uncertain(err.to_string(), seen),
    }
}
