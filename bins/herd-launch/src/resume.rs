//! `herd-launch resume`: continue a saved child session in a new pane, under its saved launch
//! policy (the `subagent_resume` tool, docs/tools.md).
//!
//! The policy sidecar beside the session decides the tools: the saved allowlist (or none, when
//! the launch was deliberately unrestricted) plus `caller_ping`, and `subagent_done` only when
//! the resumed child does not exit by itself; the saved denied tools stay denied. Later changes of
//! a role can never widen a resumed child, and it is confined as it first ran (never wider than the
//! person's configuration allows now). Everything fails closed before anything is created: a
//! missing, malformed or unknown policy, a managed-worktree or persistent session, a session that
//! is still running.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use herd_core::identity::{self, Judgement, Record};
use herd_core::{Error, ErrorCode, sidecar};
use herd_protocol::layout::{Artifacts, SessionFiles};
use herd_protocol::run::WorktreeRef;
use herd_surface::Surface;
use herd_tools::SubagentRequest;

use crate::plan::{Plan, Resume, Runner};
use crate::spawn::{Ack, Tools};
use herd_protocol::launch::policy::Owner;
use herd_protocol::launch::policy::Policy;
use herd_protocol::launch::policy::WorktreeBinding;

/// The bound of the session header read.
const HEADER_LIMIT: u64 = 64 * 1024;

/// How long a resume waits for a child that wrote its completion sidecar to exit.
const FINISHING_CHILD_BUDGET: std::time::Duration = std::time::Duration::from_secs(10);

/// What `herd-launch resume` was asked.
#[derive(Debug, Clone)]
pub struct Request {
    pub session: PathBuf,
    pub message: Option<String>,
    pub auto_exit: bool,
    pub name: String,
    /// `herd-launch resurrect` only: the lost run this resume brings back, with what it keeps
    /// of that run.
    pub lost: Option<Lost>,
}

/// What a resume of a lost run (`herd-launch resurrect`) keeps of it.
#[derive(Debug, Clone)]
pub struct Lost {
    pub run_id: String,
    /// A worktree child's retained worktree: its managed-worktree policy is restored there.
    pub worktree: Option<WorktreeRef>,
    /// The project-trust decision the run was launched with.
    pub trust: crate::trust::Parent,
}

fn guidance(session: &Path) -> String {
    format!(
        "start a new subagent, or resume by hand with `pi --session {}`",
        session.display()
    )
}

/// Reads the saved policy, refusing what resume must not restore. A managed-worktree child's is
/// restored only for a resurrect in its retained `worktree`, the one the policy binds it to.
pub fn restorable_policy(session: &Path, worktree: Option<&WorktreeRef>) -> Result<Policy, Error> {
    let files = SessionFiles::new(session);
    let policy = Policy::read_required(&files).map_err(|err| {
        let mut err = Error::new(
            ErrorCode::InvalidRequest,
            format!(
                "cannot restore the launch policy: {}; {}",
                err.message,
                guidance(session)
            ),
        );
        err.field = Some("policy".into());
        err
    })?;
    if policy.owner == Owner::ManagedWorktree {
        if let (Some(retained), Some(binding), false) =
            (worktree, &policy.worktree, policy.persistent)
        {
            return retained_worktree(retained, binding).map(|()| policy);
        }
        return Err(Error::invalid(
            "session",
            "this is a managed-worktree child: continue in its retained workspace instead of resuming it",
        ));
    }
    if policy.persistent {
        return Err(Error::invalid(
            "session",
            format!(
                "a persistent specialist's session cannot be resumed; {}",
                guidance(session)
            ),
        ));
    }
    Ok(policy)
}

/// Refuses a worktree that is not the one the policy binds the child to, or is gone.
fn retained_worktree(retained: &WorktreeRef, binding: &WorktreeBinding) -> Result<(), Error> {
    if retained.path != binding.path || retained.branch != binding.branch {
        return Err(Error::invalid(
            "worktree",
            format!(
                "the launch policy binds the child to {}, not to the run's worktree {}",
                binding.path, retained.path
            ),
        ));
    }
    if !Path::new(&retained.path).is_dir() {
        return Err(Error::invalid(
            "worktree",
            format!("its worktree {} is no longer retained", retained.path),
        ));
    }
    Ok(())
}

/// What a resume restores: the launch policy, the sandbox policy the child first ran under, and
/// the directory the session continues in.
#[derive(Debug, Clone)]
pub struct Restored {
    pub policy: Policy,
    /// `None`: a launch policy written before children were confined.
    pub sandbox: Option<herd_sandbox::Policy>,
    pub cwd: PathBuf,
}

/// The checks a resume makes before it changes anything, changing nothing themselves.
pub fn preflight(request: &Request) -> Result<Restored, Error> {
    let session = std::path::absolute(&request.session).unwrap_or_else(|_| request.session.clone());
    let worktree = request.lost.as_ref().and_then(|l| l.worktree.as_ref());
    let policy = restorable_policy(&session, worktree)?;
    let sandbox = stored_sandbox(&policy, &session)?;
    let cwd = session_cwd(&session)?;
    Ok(Restored {
        policy,
        sandbox,
        cwd,
    })
}

/// The sandbox policy the launch policy keeps, read as `HERD_SANDBOX_POLICY` is; one this herd
/// cannot read refuses the resume (never "unconfined", never "the default").
fn stored_sandbox(policy: &Policy, session: &Path) -> Result<Option<herd_sandbox::Policy>, Error> {
    let Some(text) = &policy.sandbox else {
        return Ok(None);
    };
    herd_sandbox::Policy::from_env(text).map(Some).ok_or_else(|| {
        Error::invalid(
            "sandbox",
            format!(
                "cannot restore the sandbox policy: {} keeps sandbox {text:?}, which this herd cannot read; nothing was launched; {}",
                SessionFiles::new(session).policy().display(),
                guidance(session)
            ),
        )
    })
}

/// Refuses a session whose recorded runner still runs, and clears a record of one that is gone.
fn check_not_running(session: &Path) -> Result<(), Error> {
    let files = SessionFiles::new(session);
    let file = files.process();
    let record = match files.read::<Record>() {
        Ok(Some(record)) => record,
        Ok(None) => return Ok(()),
        Err(err) => {
            return Err(Error::invalid(
                "session",
                format!(
                    "the identity record {} is unreadable ({err}); remove it by hand once the child is gone",
                    file.display()
                ),
            ));
        }
    };
    let stale_boot = identity::boot_id().is_ok_and(|boot| boot != record.boot_id);
    // A child that wrote its completion sidecar is on its way out: its result (a help request,
    // typically) reaches the parent while Pi is still shutting down, and the parent's resume
    // follows at once. Give it a bounded moment to exit rather than refusing.
    let mut judgement = identity::judge(&record);
    let modified = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let finishing = match (modified(&files.exit()), modified(&file)) {
        // Written by this process: after its identity record, which it wrote as it started.
        (Some(exit), Some(started)) => exit >= started,
        _ => false,
    };
    if judgement == Judgement::Alive && finishing {
        judgement =
            identity::wait_exited(&record, std::time::Instant::now() + FINISHING_CHILD_BUDGET);
    }
    match judgement {
        // The record names a process that is gone; left in place, a watcher of the resumed run
        // could read it before the new process writes its own and take the new run for ended.
        Judgement::Exited => match std::fs::remove_file(&file) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::new(
                ErrorCode::Unavailable,
                format!(
                    "cannot remove the record of the ended {}: {e}",
                    file.display()
                ),
            )),
        },
        // A record of an earlier boot names a process that cannot be running now.
        Judgement::Unknown(_) if stale_boot => {
            std::fs::remove_file(&file).map_err(|e| {
                Error::new(
                    ErrorCode::Unavailable,
                    format!("cannot remove the stale {}: {e}", file.display()),
                )
            })?;
            Ok(())
        }
        Judgement::Alive => Err(Error::new(
            ErrorCode::Conflict,
            format!(
                "the session is still running as process {}; wait for it to end or cancel it",
                record.pid
            ),
        )
        .with_field("session")),
        Judgement::Unknown(reason) => Err(Error::new(
            ErrorCode::Conflict,
            format!(
                "cannot tell whether the session's process {} still runs: {reason}",
                record.pid
            ),
        )
        .with_field("session")),
    }
}

/// The `cwd` of a session's header line.
fn session_cwd(session: &Path) -> Result<PathBuf, Error> {
    let file = sidecar::open_given(session)
        .map_err(|e| Error::invalid("session", format!("cannot read the session: {e}")))?
        .ok_or_else(|| {
            Error::invalid(
                "session",
                format!("the session {} does not exist", session.display()),
            )
        })?;
    let mut line = Vec::new();
    BufReader::new(file.take(HEADER_LIMIT))
        .read_until(b'\n', &mut line)
        .map_err(|e| {
            Error::invalid("session", format!("cannot read {}: {e}", session.display()))
        })?;
    let header = std::str::from_utf8(&line)
        .ok()
        .and_then(herd_protocol::session::parse_line)
        .ok_or_else(|| {
            Error::invalid(
                "session",
                format!("{} has no session header", session.display()),
            )
        })?;
    let herd_protocol::session::Entry::Session { cwd, .. } = header else {
        return Err(Error::invalid(
            "session",
            format!("{} does not start with a session header", session.display()),
        ));
    };
    let cwd = cwd.map(PathBuf::from).ok_or_else(|| {
        Error::invalid(
            "session",
            format!("the header of {} has no cwd", session.display()),
        )
    })?;
    if !cwd.is_dir() {
        return Err(Error::invalid(
            "session",
            format!("the session's directory {} is gone", cwd.display()),
        ));
    }
    Ok(cwd)
}

/// Resumes a session with the `herd-launch` at `herd_launch`. The child extension is installed
/// only once every check has passed: a refusal (exit 2) writes nothing, that copy included.
pub fn resume(
    artifacts: &Artifacts,
    request: &Request,
    surface: &dyn Surface,
    herd_launch: PathBuf,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Ack, Error> {
    let session = std::path::absolute(&request.session).unwrap_or_else(|_| request.session.clone());
    let Restored {
        policy,
        sandbox,
        cwd,
    } = preflight(request)?;
    if let Some(message) = &request.message {
        if message.trim().is_empty() {
            return Err(Error::invalid("message", "the message is empty"));
        }
    }
    if !surface.has_terminal() && (!request.auto_exit || request.message.is_none()) {
        return Err(Error::invalid(
            "surface",
            "a resume without a terminal needs a message and auto-exit: use --surface tmux or herdr",
        ));
    }
    let name = request.name.trim();
    if name.is_empty() || name.chars().any(char::is_control) {
        return Err(Error::invalid("name", "is not a usable label"));
    }
    let program = crate::pi::find_pi(env)?;
    let agent_dir = crate::names::agent_dir(None, env)?;
    // The parent decided about the folder it resumes from.
    let launch_dir = std::env::current_dir().map_err(|e| {
        Error::new(
            herd_core::ErrorCode::Unavailable,
            format!("cannot read the current directory: {e}"),
        )
    })?;
    // Last of the checks: it may remove an identity record of an earlier boot, and a refusal
    // (exit 2) changes nothing.
    check_not_running(&session)?;
    // Confined as it first ran, never wider than the person's configuration allows now (a
    // resumed child asks for nothing of its own).
    let confinement = crate::sandbox::restore(
        sandbox,
        crate::sandbox::PiModel {
            agent_dir: &agent_dir,
            models: &[],
        },
        env,
    )?;
    let tools = Tools {
        herd_launch,
        extension: Some(crate::extension::install(artifacts, env)?),
    };
    let plan = Plan {
        request: SubagentRequest {
            name: herd_core::escape::abbreviate_name(name).into_owned(),
            task: request.message.clone().unwrap_or_default(),
            cwd: Some(cwd.clone()),
            ..SubagentRequest::default()
        },
        request_json: serde_json::Value::Null,
        runner: Runner::Pi { program },
        surface: surface.kind(),
        cwd,
        agent_dir,
        role: None,
        models: Vec::new(),
        thinking: None,
        tools: policy.tools.clone(),
        denied_tools: policy.denied_tools.clone(),
        skills: Vec::new(),
        auto_exit: request.auto_exit,
        interactive: !request.auto_exit,
        persistent: false,
        fork: false,
        parent_session: None,
        accept: None,
        // A resumed session keeps no acceptance gate of its own (`gate` is refused on a
        // retained resume).
        acceptance: None,
        acceptance_explicit: false,
        worktree: None,
        diagnostics: vec![format!(
            "resumed {} under its saved launch policy",
            session.display()
        )],
        attempted: Vec::new(),
        fallback_of: None,
        trust: match &request.lost {
            // The same child in the same place: the decision it was launched with.
            Some(lost) => lost.trust.clone(),
            None => crate::trust::Parent::from_env(env, &launch_dir)?,
        },
        time_limit_ms: None,
        worktree_checked: None,
        confinement,
        budget: None,
        resume: Some(Resume {
            session,
            message: request.message.clone(),
            worktree: request.lost.as_ref().and_then(|l| l.worktree.clone()),
            resurrects: request.lost.as_ref().map(|l| l.run_id.clone()),
        }),
    };
    crate::spawn::spawn(artifacts, &plan, surface, &tools, env)
}
