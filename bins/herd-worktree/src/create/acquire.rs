//! Making the checkout itself: by `git worktree add` under the managed root, or by Herdr with its
//! workspace and root pane, completed or recovered when Herdr's reply lacks parts.

use std::path::PathBuf;

use herd_core::{Error, ErrorCode};
use herd_git::{Deadline, budget};
use herd_herdr::{Herdr, Recovery, Source, WorktreeCreate, WorktreeCreated};

use super::{ACQUISITION_BUDGET, CreateEnv, CreateRequest, Plan};

/// What the creation produced or recovered.
#[derive(Debug, Clone, Default)]
pub(crate) struct Acquired {
    pub path: Option<PathBuf>,
    pub workspace_id: Option<String>,
    pub pane_id: Option<String>,
    pub tab_id: Option<String>,
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
    match acquirer.worktree_create(&params) {
        Ok(created) => match created.complete() {
            Some(tree) => {
                let mut found = Acquired {
                    path: Some(tree.path.clone()),
                    workspace_id: Some(tree.workspace_id),
                    pane_id: Some(tree.pane_id),
                    tab_id: Some(tree.tab_id),
                    diagnostics: Vec::new(),
                };
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
                diagnostics,
            })
        }
        Ok(Recovery::Inconclusive(detail)) => uncertain(detail, seen),
        Err(err) => uncertain(err.to_string(), seen),
    }
}
