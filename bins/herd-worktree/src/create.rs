//! `herd-worktree create`: a managed worktree on a new branch, manifest first.
//!
//! The order is what makes a crash at any point recoverable from the files:
//!
//! 1. Everything that can be checked without creating anything is checked: the source is a
//!    repository, the base resolves to an exact commit, the branch name is valid and the branch
//!    does not exist, the checkout directory is free and lies in the canonical managed root. A
//!    refusal here changes nothing (exit 2); a checkout directory that is already there is held
//!    by another creation (`conflict`, exit 7).
//! 2. The creation takes the lock of its checkout path (`<root>/<repo>/.<branch dir>.lock`) and
//!    checks again under it that neither the checkout nor the branch appeared meanwhile: of
//!    concurrent creations of one branch exactly one goes on, every other answers `conflict`
//!    (exit 7) before it has written anything, so nothing a loser leaves names the winner's
//!    checkout. Then the manifest is written in state `provisioning`, naming the planned path.
//! 3. The checkout is created, by Herdr (which also opens a workspace and a root pane) or by
//!    `git worktree add` under the managed root, which has the layout Herdr uses, so every
//!    surface gets the same cleanup. Creations of checkouts of one repository take turns
//!    (`<root>/<repo>/.worktree+add.lock`): git fails a `worktree add` that meets another one
//!    half made.
//! 4. The manifest becomes `provisioned`, or `failed` with whatever was learned.
//!
//! A linked checkout as source provisions from the repository's principal checkout (where
//! Herdr and the managed layout expect a source) and takes the base from the linked checkout.
//!
//! The checkout path is `<canonical root>/<repo>/<branch dir>`: the root may itself be a
//! symlink (it is resolved once), but `<root>/<repo>` must be a real directory, so no checkout is
//! ever created outside the root, and the path `create` prints is the one `herd-cleanup` lists.

use std::path::{Path, PathBuf};

use herd_core::escape::encode_host_value;
use herd_core::{Error, ErrorCode};
use herd_git::refname::{branch_dir_name, check_branch_name};
use herd_git::{Deadline, Git, budget};
use herd_herdr::Herdr;
use herd_protocol::layout::{Artifacts, ROOT_ENV, managed_root, validate_run_id};
use herd_protocol::worktree::WorktreeCreate as CreateDocument;

use herd_protocol::worktree::manifest::{Manifest, NewManifest, State};

use herd_protocol::worktree::Surface;

mod acquire;

use acquire::{Acquired, Acquisition, acquire_with_git, acquire_with_herdr};

/// A request to create a managed worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateRequest {
    /// The source repository (any directory inside a checkout; may be a linked checkout).
    pub source_cwd: PathBuf,
    pub branch: String,
    /// The revision to branch from; `None` is the committed `HEAD` of the source.
    pub base: Option<String>,
    pub run_id: String,
    pub surface: Surface,
    /// The workspace label (Herdr) and the manifest's `name`; default: the branch.
    pub label: Option<String>,
}

/// What the creation uses from its environment.
#[derive(Debug, Clone)]
pub struct CreateEnv {
    pub git: Git,
    /// The Herdr client of the herdr surface (its budget is set per call).
    pub herdr: Herdr,
    /// The directory the checkouts live under, as `<root>/<repo>/<branch dir>`.
    pub managed_root: PathBuf,
}

impl CreateEnv {
    /// Git from `$HERD_GIT_BIN`/`PATH`, Herdr from `$HERD_HERDR_BIN`/`PATH`, the root from
    /// `$HERD_WORKTREE_ROOT`, else `~/.herdr/worktrees`.
    pub fn from_env() -> Result<CreateEnv, Error> {
        Ok(CreateEnv {
            git: Git::from_env(),
            herdr: Herdr::from_env(),
            managed_root: managed_root()?,
        })
    }
}

/// Worktree acquisition, including Herdr's workspace and pane (120 s; docs/lifecycle.md,
/// "Budgets").
pub const ACQUISITION_BUDGET: std::time::Duration = budget::ACQUISITION;

/// A created worktree.
#[derive(Debug, Clone, PartialEq)]
pub struct Created {
    pub manifest: Manifest,
    pub manifest_file: PathBuf,
    pub path: PathBuf,
    pub branch: String,
    pub base_sha: String,
    pub base_ref: String,
    /// The principal checkout it was provisioned from.
    pub principal: PathBuf,
    pub surface: Surface,
    pub workspace_id: Option<String>,
    pub pane_id: Option<String>,
    pub tab_id: Option<String>,
    /// Non-fatal problems met on the way (e.g. a recovered incomplete Herdr reply).
    pub diagnostics: Vec<String>,
}

impl Created {
    /// The `--json` document of `herd-worktree create`.
    pub fn document(&self) -> CreateDocument {
        CreateDocument {
            run_id: self.manifest.id.clone(),
            state: self.manifest.state,
            path: self.path.to_string_lossy().into_owned(),
            branch: self.branch.clone(),
            base_sha: self.base_sha.clone(),
            base_ref: self.base_ref.clone(),
            principal: self.principal.to_string_lossy().into_owned(),
            surface: self.surface,
            workspace_id: self.workspace_id.clone(),
            pane_id: self.pane_id.clone(),
            tab_id: self.tab_id.clone(),
            manifest: self.manifest_file.to_string_lossy().into_owned(),
            diagnostics: self.diagnostics.clone(),
        }
    }
}

impl Created {
    /// The human form of `herd-worktree create`, values encoded.
    pub fn human(&self) -> String {
        let value = |s: &str| encode_host_value(s, crate::handoff::VALUE_MAX_CHARS);
        let mut lines = vec![
            format!("Worktree: {}", value(&self.path.to_string_lossy())),
            format!("Branch: {}", value(&self.branch)),
            format!("Base: {} ({})", self.base_sha, value(&self.base_ref)),
        ];
        if let Some(ws) = &self.workspace_id {
            let pane = self
                .pane_id
                .as_deref()
                .map(|p| format!(" · pane {}", value(p)))
                .unwrap_or_default();
            lines.push(format!("Workspace: {}{pane}", value(ws)));
        }
        lines.push(format!(
            "Manifest: {}",
            value(&self.manifest_file.to_string_lossy())
        ));
        for d in &self.diagnostics {
            lines.push(format!("Diagnostic: {}", value(d)));
        }
        lines.join("\n")
    }
}

/// The surface `--surface` defaults to: Herdr when `HERDR_ENV=1` and `herdr` is found
/// (`$HERD_HERDR_BIN`, else on `PATH`; docs/protocol.md, "Herdr"), else git.
pub fn default_surface() -> Surface {
    if herd_herdr::available() {
        Surface::Herdr
    } else {
        Surface::Git
    }
}

/// What was decided before anything is created.
#[derive(Debug, Clone)]
pub struct Plan {
    pub source_cwd: PathBuf,
    pub principal: PathBuf,
    pub branch: String,
    pub base_ref: String,
    pub base_sha: String,
    pub path: PathBuf,
    /// What setup will do in the new checkout ([`crate::setup`]).
    pub setup: crate::setup::SetupPlan,
    /// The sandbox the setup's commands run in: the child's own (`docs/sandbox.md`).
    pub confine: Option<SetupConfinement>,
}

/// A confined child's sandbox, for the setup commands of its worktree: they come from the
/// repository and run in the same sandbox as the child.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupConfinement {
    /// `bwrap`.
    pub program: PathBuf,
    pub policy: herd_sandbox::Policy,
    pub config: herd_sandbox::Config,
}

impl SetupConfinement {
    /// The command line in front of a setup command run in `worktree`, whose background log
    /// goes to `logs`.
    pub fn wrapper(&self, worktree: &Path, logs: &Path) -> Vec<std::ffi::OsString> {
        let places = herd_sandbox::bwrap::Places {
            cwd: worktree.to_path_buf(),
            own: vec![logs.to_path_buf()],
            tmp: None,
            git: None,
            // An allowlist's relay lives as long as the child: setup commands get no network.
            net: None,
            read_caches: Vec::new(),
            agent: None,
        };
        // Setup commands run to their end (a background one is recorded by the sandbox's
        // process): a PID namespace keeps their signals inside.
        herd_sandbox::bwrap::command(
            &self.program,
            &self.policy,
            &self.config,
            &places,
            herd_sandbox::bwrap::Isolation::PidNamespace,
        )
    }
}

/// Creates a managed worktree (see the module docs for the order of steps).
///
/// On an error after the manifest was written, the manifest is already `failed` and the error
/// message names it.
pub fn create(
    artifacts: &Artifacts,
    req: &CreateRequest,
    env: &CreateEnv,
) -> Result<Created, Error> {
    create_with(artifacts, req, env, &SetupSource::from_env())
}

/// Where the setup's user-side facts come from: the user's configuration directory (their own
/// setup files and approvals) and the folder the launching parent trusts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupSource {
    pub config_dir: Option<PathBuf>,
    /// The folder the launching parent's trust was given for (`None`: it trusts none). The
    /// project's setup file counts as trusted only for a repository whose principal checkout is
    /// that folder or lies below it.
    pub trusted_folder: Option<PathBuf>,
    /// No launching parent decided (`HERD_PROJECT_TRUST` unset, a command line): the person's
    /// approval of the project file is enough for it to run.
    pub undecided: bool,
    /// The sandbox the setup's commands run in, when the child is confined.
    pub confine: Option<SetupConfinement>,
}

impl SetupSource {
    /// `$XDG_CONFIG_HOME/herd` (else `~/.config/herd`), and with `HERD_PROJECT_TRUST=trusted`
    /// the current directory, the folder the parent launched from, which its decision is for.
    pub fn from_env() -> SetupSource {
        SetupSource {
            config_dir: crate::setup::config::config_dir().ok(),
            trusted_folder: crate::setup::trust::trusted_folder_from_env(),
            undecided: crate::setup::trust::undecided_from_env(),
            confine: None,
        }
    }
}

/// [`create`] with the setup's user-side facts given.
pub fn create_with(
    artifacts: &Artifacts,
    req: &CreateRequest,
    env: &CreateEnv,
    source: &SetupSource,
) -> Result<Created, Error> {
    let plan = plan(artifacts, req, env, source)?;
    create_from(artifacts, req, env, plan)
}

/// [`create`] from what [`check`] found a moment ago for the same request (under any run id),
/// so the source, the base and the setup description are not asked of git again. The checkout
/// directory and the branch are checked again under the checkout's lock, as in every creation.
pub fn create_checked(
    artifacts: &Artifacts,
    req: &CreateRequest,
    env: &CreateEnv,
    checked: Plan,
) -> Result<Created, Error> {
    if checked.branch != req.branch || req.base.as_ref().is_some_and(|b| *b != checked.base_ref) {
        // A check of another request: this one is checked afresh.
        return create(artifacts, req, env);
    }
    fresh_run(artifacts, req)?;
    create_from(artifacts, req, env, checked)
}

fn create_from(
    artifacts: &Artifacts,
    req: &CreateRequest,
    env: &CreateEnv,
    mut plan: Plan,
) -> Result<Created, Error> {
    let _held = hold_checkout_path(&mut plan, env)?;
    Manifest::create(
        artifacts,
        NewManifest {
            run_id: req.run_id.clone(),
            name: Some(req.label.clone().unwrap_or_else(|| req.branch.clone())),
            source_cwd: plan.source_cwd.clone(),
            branch: plan.branch.clone(),
            base_ref: plan.base_ref.clone(),
            base_sha: plan.base_sha.clone(),
            path: Some(plan.path.clone()),
            provision_cwd: Some(plan.principal.clone()),
            surface: Some(req.surface.as_str().to_owned()),
        },
    )?;
    let manifest_file = artifacts.worktree_manifest(&req.run_id);
    let Acquisition { found, error } = match hold_repository(&plan) {
        // One checkout of a repository is made at a time (the lock is released at the end of
        // this arm, before setup runs).
        Ok(_adding) => match req.surface {
            Surface::Git => acquire_with_git(&plan, env),
            Surface::Herdr => acquire_with_herdr(&plan, req, &env.herdr),
        },
        Err(e) => Acquisition::failed(e, Acquired::default()),
    };
    let (found, error) = match error {
        None => match set_up(artifacts, req, &plan, &found) {
            Ok(()) => (found, None),
            Err(e) => (found, Some(e)),
        },
        Some(e) => (found, Some(e)),
    };
    match error {
        None => {
            let acquired = found;
            let manifest = Manifest::update(artifacts, &req.run_id, |m| {
                m.state = State::Provisioned;
                m.path = Some(acquired.path.clone().unwrap_or_else(|| plan.path.clone()));
                m.workspace_id.clone_from(&acquired.workspace_id);
                m.pane_id.clone_from(&acquired.pane_id);
                m.tab_id.clone_from(&acquired.tab_id);
                m.opened_source_workspace
                    .clone_from(&acquired.opened_source);
                m.diagnostics.extend(acquired.diagnostics.iter().cloned());
            })?;
            let mut diagnostics = acquired.diagnostics.clone();
            if let Some(setup) = &manifest.setup {
                diagnostics.extend(setup.skipped.iter().cloned());
            }
            Ok(Created {
                path: manifest.path.clone().unwrap_or_else(|| plan.path.clone()),
                manifest,
                manifest_file,
                branch: plan.branch,
                base_sha: plan.base_sha,
                base_ref: plan.base_ref,
                principal: plan.principal,
                surface: req.surface,
                workspace_id: acquired.workspace_id,
                pane_id: acquired.pane_id,
                tab_id: acquired.tab_id,
                diagnostics,
            })
        }
        Some(error) => {
            let recovered = found;
            let message = error.message.clone();
            let update = Manifest::update(artifacts, &req.run_id, |m| {
                m.state = State::Failed;
                m.error = Some(message.clone());
                if let Some(path) = &recovered.path {
                    m.path = Some(path.clone());
                }
                m.workspace_id.clone_from(&recovered.workspace_id);
                m.pane_id.clone_from(&recovered.pane_id);
                m.tab_id.clone_from(&recovered.tab_id);
                m.diagnostics.extend(recovered.diagnostics.iter().cloned());
            });
            let mut error = error;
            error.message = match update {
                Ok(_) => format!(
                    "{} (manifest {} is failed)",
                    error.message,
                    manifest_file.display()
                ),
                Err(e) => format!(
                    "{}; the manifest {} could not be marked failed: {e}",
                    error.message,
                    manifest_file.display()
                ),
            };
            Err(error)
        }
    }
}

/// Does the plan's setup in the new checkout: a port when there is anything to set up, then
/// [`crate::setup::apply`], its record written to the manifest whether it succeeded or not.
fn set_up(
    artifacts: &Artifacts,
    req: &CreateRequest,
    plan: &Plan,
    found: &Acquired,
) -> Result<(), Error> {
    if plan.setup.is_empty() && plan.setup.skipped.is_empty() {
        return Ok(());
    }
    let worktree = found.path.clone().unwrap_or_else(|| plan.path.clone());
    let port = if plan.setup.is_empty() {
        None
    } else {
        Some(crate::setup::port::allocate(artifacts, &req.run_id)?)
    };
    let env = crate::setup::apply::CommandEnv {
        worktree,
        source_root: plan.principal.clone(),
        branch: plan.branch.clone(),
        run_id: req.run_id.clone(),
        port,
        log: artifacts
            .logs_dir()
            .join(format!("{}.setup.log", req.run_id)),
        background_log: artifacts
            .logs_dir()
            .join(format!("{}.background.log", req.run_id)),
        sandbox: Vec::new(),
    };
    let mut env = env;
    if let Some(confine) = &plan.confine {
        herd_core::sidecar::ensure_private_dir(&artifacts.logs_dir())?;
        env.sandbox = confine.wrapper(&env.worktree, &artifacts.logs_dir());
    }
    let applied = crate::setup::apply(&plan.setup, &env);
    let record = applied.record;
    Manifest::update(artifacts, &req.run_id, |m| m.setup = Some(record))?;
    match applied.error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Checks everything that can be checked before creating anything.
pub(crate) fn plan(
    artifacts: &Artifacts,
    req: &CreateRequest,
    env: &CreateEnv,
    source: &SetupSource,
) -> Result<Plan, Error> {
    fresh_run(artifacts, req)?;
    check_with(req, env, source)
}

/// A valid run id without a worktree manifest yet.
fn fresh_run(artifacts: &Artifacts, req: &CreateRequest) -> Result<(), Error> {
    validate_run_id(&req.run_id)?;
    let manifest_file = artifacts.worktree_manifest(&req.run_id);
    if manifest_file.exists() {
        return Err(Error::invalid(
            "run_id",
            format!(
                "a worktree manifest for run {} already exists at {}",
                req.run_id,
                manifest_file.display()
            ),
        ));
    }
    Ok(())
}

/// Checks everything about a request that does not depend on its run: the names, the source
/// repository, the base, that the branch and the checkout directory are free. Creates nothing;
/// herd-launch runs it before it claims a run, so a refused worktree leaves no trace.
pub fn check(req: &CreateRequest, env: &CreateEnv) -> Result<Plan, Error> {
    check_with(req, env, &SetupSource::from_env())
}

/// [`check`] with the setup's user-side facts given.
pub fn check_with(
    req: &CreateRequest,
    env: &CreateEnv,
    source: &SetupSource,
) -> Result<Plan, Error> {
    let source_cwd = checked_fields(req)?;
    let base_ref = req.base.clone().unwrap_or_else(|| "HEAD".to_owned());
    let (facts, base_sha) = env
        .git
        .facts_and_commit(&source_cwd, &base_ref, &Deadline::after(budget::BASE))
        .map_err(|e| source_error(e, &source_cwd))?;
    let base_sha = base_sha.ok_or_else(|| {
        Error::invalid(
            "base",
            format!("{base_ref} names no commit in {}", source_cwd.display()),
        )
    })?;
    let principal = env
        .git
        .principal_checkout(&source_cwd, &facts, &Deadline::after(budget::PRINCIPAL))
        .map_err(Error::from)?;
    let repo_name = principal
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
        .ok_or_else(|| {
            Error::invalid(
                "cwd",
                format!("{} has no directory name", principal.display()),
            )
        })?;
    let path = checkout_path(&env.managed_root, &repo_name, &req.branch)?;
    let taken = path.symlink_metadata().is_ok();
    let exists = taken
        || env
            .git
            .branch_exists(&principal, &req.branch, &Deadline::after(budget::BASE))
            .map_err(Error::from)?;
    if exists {
        return Err(taken_error(&path, &req.branch, taken));
    }
    // The setup description is read and checked now: a hostile one is refused before
    // anything exists. Its approval is judged for the base commit, whose files its commands run.
    let setup = crate::setup::prepare_with(
        &env.git,
        &principal,
        source.config_dir.as_deref(),
        &crate::setup::trust::ParentTrust::of(
            source.trusted_folder.as_deref(),
            source.undecided,
            &principal,
        ),
        &base_sha,
    )?;
    Ok(Plan {
        source_cwd,
        principal,
        branch: req.branch.clone(),
        base_ref,
        base_sha,
        path,
        setup,
        confine: source.confine.clone(),
    })
}

/// The request's branch, base and label checked, and its source directory made absolute.
fn checked_fields(req: &CreateRequest) -> Result<PathBuf, Error> {
    check_branch_name(&req.branch).map_err(|why| Error::invalid("branch", why))?;
    if let Some(base) = &req.base {
        if base.is_empty() || base.len() > 1024 || base.contains(['\0', '\n']) {
            return Err(Error::invalid(
                "base",
                "a base revision is 1 to 1024 characters on one line",
            ));
        }
    }
    if let Some(label) = &req.label {
        if label.is_empty() || label.chars().count() > 200 || label.chars().any(char::is_control) {
            return Err(Error::invalid(
                "label",
                "a label is 1 to 200 characters without control characters",
            ));
        }
    }
    let source_cwd = std::path::absolute(&req.source_cwd).map_err(|e| {
        Error::invalid(
            "cwd",
            format!("cannot resolve {}: {e}", req.source_cwd.display()),
        )
    })?;
    if !source_cwd.is_dir() {
        return Err(
            Error::not_found(format!("{} is not a directory", source_cwd.display()))
                .with_field("cwd"),
        );
    }
    Ok(source_cwd)
}

/// Why a branch that exists, or a checkout directory that is `taken`, refuses the creation.
fn taken_error(path: &Path, branch: &str, taken: bool) -> Error {
    // Only a creation of this very checkout that holds its lock right now makes this a race
    // (`conflict`, exit 7). A branch or checkout that is simply there, a finished creation's
    // included, is a request that retrying will never make good: `invalid_request`.
    if creation_in_progress(path) {
        return Error::new(
            ErrorCode::Conflict,
            format!(
                "another creation of branch {} at {} is in progress",
                branch,
                path.display()
            ),
        )
        .with_field("branch");
    }
    let why = if taken {
        format!(
            "the checkout directory {} of branch {} already exists",
            path.display(),
            branch
        )
    } else {
        format!("branch {branch} already exists")
    };
    Error::invalid(
        "branch",
        format!("{why}; a worktree run needs a new branch"),
    )
}

/// Where the checkout of `branch` of the repository `repo` goes: `<canonical root>/<repo>/<branch
/// dir>`. The root may be a symlink; `<root>/<repo>`, when it exists, must be a directory of its
/// own, never a symlink (one could lead the checkout out of the root). Nothing is created.
fn checkout_path(root: &Path, repo: &str, branch: &str) -> Result<PathBuf, Error> {
    let unavailable = |path: &Path, e: std::io::Error| {
        Error::new(
            ErrorCode::Unavailable,
            format!("cannot resolve {}: {e}", path.display()),
        )
    };
    let canonical_root = match std::fs::canonicalize(root) {
        Ok(canonical) => canonical,
        // Created, as a real directory, with the checkout.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::path::absolute(root).map_err(|e| unavailable(root, e))?
        }
        Err(e) => return Err(unavailable(root, e)),
    };
    let repo_dir = canonical_root.join(repo);
    match repo_dir.symlink_metadata() {
        Ok(meta) if meta.is_dir() => {}
        Ok(meta) => {
            let what = if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&repo_dir)
                    .map(|t| format!(" (to {})", t.display()))
                    .unwrap_or_default();
                format!("a symlink{target}")
            } else {
                "not a directory".to_owned()
            };
            return Err(Error::invalid(
                ROOT_ENV,
                format!(
                    "{} is {what}; herd creates checkouts only in directories of their own under the managed root {}",
                    repo_dir.display(),
                    canonical_root.display()
                ),
            ));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(unavailable(&repo_dir, e)),
    }
    Ok(repo_dir.join(branch_dir_name(branch)))
}

/// Whether a creation of the checkout `path` holds its lock now. Only an existing lock file is
/// tried, so the check creates nothing.
fn creation_in_progress(path: &Path) -> bool {
    let lock = checkout_lock(path);
    lock.is_file()
        && matches!(
            herd_core::lock::exclusive(&lock, std::time::Instant::now()),
            Err(herd_core::lock::Error::Held { .. })
        )
}

/// The lock a creation of the checkout `path` takes: `<root>/<repo>/.<branch dir>.lock`.
fn checkout_lock(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.lock"))
}

/// The lock every creation of a checkout of the repository takes while the checkout is made:
/// `<root>/<repo>/.worktree+add.lock` (a `+` is in no branch directory's name, so it is never a
/// checkout's lock). git fails a `worktree add` that meets another one half made in the same
/// repository ("failed to read .git/worktrees/<name>/commondir"), after creating its branch, so
/// concurrent creations take turns; each waits up to the acquisition budget, and one that
/// waited in vain says so.
fn hold_repository(plan: &Plan) -> Result<herd_core::lock::FileLock, Error> {
    let repo_dir = plan
        .path
        .parent()
        .ok_or_else(|| Error::internal("a checkout path has a parent"))?;
    let lock = repo_dir.join(".worktree+add.lock");
    herd_core::lock::exclusive(&lock, std::time::Instant::now() + ACQUISITION_BUDGET).map_err(
        |e| match e {
            herd_core::lock::Error::Held { .. } => Error::new(
                ErrorCode::Unavailable,
                format!(
                    "other creations of checkouts of this repository held {} for {} s; the checkout of branch {} was not made",
                    lock.display(),
                    ACQUISITION_BUDGET.as_secs(),
                    plan.branch
                ),
            ),
            other => Error::from(other),
        },
    )
}

/// The refusal of a checkout path another creation made while this one waited for its lock.
fn held_checkout(path: &Path) -> Error {
    Error::new(
        ErrorCode::Conflict,
        format!(
            "the checkout directory {} was made by another creation meanwhile",
            path.display()
        ),
    )
    .with_field("branch")
}

/// Takes the lock of the plan's checkout path (creating `<root>/<repo>` 0700 for it) and checks
/// under it that the checkout directory and the branch are still free. A lock another creation
/// holds, or a checkout or branch that appeared since [`plan`] looked, is a `conflict`.
fn hold_checkout_path(
    plan: &mut Plan,
    env: &CreateEnv,
) -> Result<herd_core::lock::FileLock, Error> {
    let repo_dir = plan
        .path
        .parent()
        .ok_or_else(|| Error::internal("a checkout path has a parent"))?;
    herd_core::sidecar::ensure_private_dir(repo_dir)?;
    // A root created just now is resolved now, so the path is canonical all the same.
    let repo = repo_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    plan.path = checkout_path(&env.managed_root, &repo, &plan.branch)?;
    let repo_dir = plan
        .path
        .parent()
        .ok_or_else(|| Error::internal("a checkout path has a parent"))?;
    // Created just now or there before: a directory of its own, never a symlink.
    let meta = repo_dir.symlink_metadata().map_err(|e| {
        Error::new(
            ErrorCode::Unavailable,
            format!("cannot read {}: {e}", repo_dir.display()),
        )
    })?;
    if !meta.is_dir() {
        return Err(Error::invalid(
            ROOT_ENV,
            format!(
                "{} is not a directory of its own under the managed root",
                repo_dir.display()
            ),
        ));
    }
    let lock_path = checkout_lock(&plan.path);
    let lock =
        herd_core::lock::exclusive(&lock_path, std::time::Instant::now()).map_err(|e| match e {
            herd_core::lock::Error::Held { .. } => Error::new(
                ErrorCode::Conflict,
                format!(
                    "another creation of branch {} at {} is in progress",
                    plan.branch,
                    plan.path.display()
                ),
            )
            .with_field("branch"),
            other => Error::from(other),
        })?;
    if plan.path.symlink_metadata().is_ok() {
        return Err(held_checkout(&plan.path));
    }
    let exists = env
        .git
        .branch_exists(
            &plan.principal,
            &plan.branch,
            &Deadline::after(budget::BASE),
        )
        .map_err(Error::from)?;
    if exists {
        return Err(Error::new(
            ErrorCode::Conflict,
            format!(
                "branch {} was created by another creation meanwhile",
                plan.branch
            ),
        )
        .with_field("branch"));
    }
    Ok(lock)
}

/// A git error about the source: "not a repository" is the caller's mistake, anything else
/// means git gave no answer.
pub(crate) fn source_error(err: herd_git::Error, source: &Path) -> Error {
    match &err {
        herd_git::Error::Failed { stderr, .. } if stderr.contains("not a git repository") => {
            Error::invalid(
                "cwd",
                format!("{} is not inside a git repository", source.display()),
            )
        }
        _ => Error::from(err),
    }
}
