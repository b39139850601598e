//! `herd-launch handoff`: the `/worktree <name> [task]` handoff (docs/tools.md, "What's
//! included").
//!
//! A new interactive Pi in a fresh managed worktree, with the active conversation branch of the
//! session it is handed off from. It is an ordinary session, not a child: no `PI_SUBAGENT_*`
//! variable, no child extension, no result. In order:
//!
//! 1. refuse what cannot work before anything is written (no terminal surface, an unreadable
//!    session, a branch or base the worktree would refuse): exit 2 changes nothing;
//! 2. create the managed worktree (its manifest first, as every worktree launch);
//! 3. seed the new session in Pi's session directory of the worktree with the branch;
//! 4. start `pi --session <new>` there, through `herd-launch exec`, which records its identity;
//! 5. confirm the start through `/proc`: the recorded process is alive in the pane's process tree,
//!    has become the runner (no longer `herd-launch`), works in the worktree and carries
//!    `PI_HERDR_AGENTS_SESSION=<new session>` in its launch-time environment;
//! 6. focus the destination only then. An unconfirmed start is answered `uncertain` (exit 3) and
//!    nothing is focused.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use herd_core::escape::encode_host_value;
use herd_core::identity::{self, Ancestry, Judgement};
use herd_core::{Error, ErrorCode, exit};
use herd_protocol::launch::docs::{HANDOFF_VERSION, HandoffDoc, HandoffStatus, HandoffWorktree};
use herd_protocol::layout::{Artifacts, SessionFiles};
use herd_protocol::run::{PaneRef, SurfaceKind};
use herd_protocol::worktree::manifest::{Manifest, State};
use herd_surface::{Launch, LaunchError, Surface, Target};
use herd_worktree::create::{CreateEnv, CreateRequest, Created};

use crate::pi::PiCommand;
use crate::script::Script;
use crate::spawn::Tools;

/// How long Pi may take to start once its pane runs (the destination is focused only after Pi's
/// start is confirmed).
pub const READINESS_BUDGET: Duration = Duration::from_secs(30);

/// The pause between two looks at `/proc` while Pi starts.
const READINESS_STEP: Duration = Duration::from_millis(50);

/// The bound of a value shown on a host line.
const SHOWN_CHARS: usize = 500;

/// What `herd-launch handoff` is asked.
#[derive(Debug, Clone)]
pub struct Request {
    /// The session whose conversation branch the new Pi continues.
    pub from: PathBuf,
    /// The entry the branch ends at (Pi's leaf); `None` for the session's last entry.
    pub leaf: Option<String>,
    /// The new worktree's branch.
    pub branch: String,
    /// Its base; `None` for the current committed branch (`HEAD`).
    pub base: Option<String>,
    /// The first message of the new session.
    pub task: Option<String>,
    /// The model and thinking level the new session starts with (the handing-off session's).
    pub model: Option<String>,
    pub thinking: Option<String>,
    /// The directory whose repository the worktree is made from.
    pub cwd: PathBuf,
}

/// How a handoff ended.
#[derive(Debug, Clone)]
pub struct Handoff {
    pub id: String,
    pub worktree: PathBuf,
    pub branch: String,
    pub base_sha: String,
    pub workspace_id: Option<String>,
    pub session: PathBuf,
    pub pane: Option<PaneRef>,
    /// `Ok(pid)` of the Pi process that was confirmed, else why not.
    pub confirmed: Result<u32, String>,
    /// Whether the destination was focused, else why not.
    pub focused: Result<(), String>,
    pub diagnostics: Vec<String>,
}

impl Handoff {
    pub fn exit_code(&self) -> i32 {
        if self.confirmed.is_ok() {
            exit::SUCCESS
        } else {
            exit::UNCERTAIN
        }
    }

    /// The `--json` document, also kept as `handoffs/<id>.json`.
    pub fn to_json(&self) -> HandoffDoc {
        let text = |p: &std::path::Path| p.to_string_lossy().into_owned();
        HandoffDoc {
            format_version: HANDOFF_VERSION,
            status: if self.confirmed.is_ok() {
                HandoffStatus::Started
            } else {
                HandoffStatus::Uncertain
            },
            handoff_id: self.id.clone(),
            worktree: HandoffWorktree {
                path: text(&self.worktree),
                branch: self.branch.clone(),
                base_sha: self.base_sha.clone(),
                workspace_id: self.workspace_id.clone(),
            },
            session_file: text(&self.session),
            pane: self.pane.clone(),
            pid: self.confirmed.as_ref().ok().copied(),
            unconfirmed: self.confirmed.as_ref().err().cloned(),
            focused: self.focused.is_ok(),
            focus_error: self.focused.as_ref().err().cloned(),
            diagnostics: self.diagnostics.clone(),
        }
    }

    /// The notice: every value on its own host line, encoded.
    pub fn human(&self) -> String {
        let shown = |value: &str| encode_host_value(value, SHOWN_CHARS);
        let mut lines = vec![format!(
            "Worktree handoff: branch {} at {}",
            shown(&self.branch),
            shown(&self.worktree.to_string_lossy())
        )];
        match (&self.confirmed, &self.focused) {
            (Ok(_), Ok(())) => lines.push(
                "Pi started there with this conversation (confirmed through /proc); its pane is focused.".into(),
            ),
            (Ok(_), Err(why)) => lines.push(format!(
                "Pi started there with this conversation (confirmed through /proc); focusing its pane failed: {}",
                shown(why)
            )),
            (Err(why), _) => lines.push(format!(
                "Pi's start there is not confirmed, so nothing was focused: {}",
                shown(why)
            )),
        }
        lines.push(format!(
            "Session: {}",
            shown(&self.session.to_string_lossy())
        ));
        lines.push("This session remains available.".into());
        for d in &self.diagnostics {
            lines.push(format!("Note: {}", shown(d)));
        }
        lines.join("\n")
    }
}

/// Where a handoff happens and with what.
pub struct Place<'a> {
    pub artifacts: &'a Artifacts,
    pub surface: &'a dyn Surface,
    pub tools: &'a Tools,
    /// The command that starts Pi.
    pub pi: &'a PiCommand,
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

/// Runs the handoff.
pub fn handoff(place: &Place<'_>, request: &Request) -> Result<Handoff, Error> {
    let Place {
        artifacts,
        surface,
        tools,
        env,
        ..
    } = *place;
    // 1. Refusals, before anything is written.
    if !surface.has_terminal() {
        return Err(Error::invalid(
            "surface",
            "a handoff starts an interactive Pi, which needs a terminal: run it inside Herdr or tmux, or pass --surface herdr|tmux",
        ));
    }
    // Read once now, so an unreadable session or an unknown leaf refuses with nothing created.
    crate::seed::branch_entries(&request.from, request.leaf.as_deref())?;
    let id = crate::names::new_run_id()?;
    let create = CreateRequest {
        source_cwd: request.cwd.clone(),
        branch: request.branch.clone(),
        base: request.base.clone(),
        run_id: id.clone(),
        surface: if surface.kind() == SurfaceKind::Herdr {
            herd_protocol::worktree::Surface::Herdr
        } else {
            herd_protocol::worktree::Surface::Git
        },
        label: Some(request.branch.clone()),
    };
    let create_env = CreateEnv::from_env()?;
    herd_worktree::create::check(&create, &create_env)?;

    // 2. The worktree.
    let created = herd_worktree::create::create(artifacts, &create, &create_env)?;
    let mut diagnostics = created.diagnostics.clone();

    // 3. The session, where Pi keeps the worktree's sessions.
    let now = herd_core::time::now_ms();
    let agent_dir = crate::names::agent_dir(Some(&created.path), env)?;
    let session = crate::names::session_file(&agent_dir, &created.path, now, &id)?;
    let started = start(place, request, &id, &created, &agent_dir, &session);
    let target = match started {
        Ok(target) => target,
        Err(err) => {
            let _ = Manifest::update(artifacts, &id, |m| {
                m.state = State::Failed;
                m.error = Some(err.message.clone());
            });
            return Err(err);
        }
    };
    let _ = Manifest::update(artifacts, &id, |m| {
        m.state = State::Running;
        m.session_file = Some(session.clone());
    });

    // 5. Confirmation, then 6. focus.
    let confirmed = confirm(
        surface,
        &target,
        &SessionFiles::new(&session).process(),
        &session,
        &created.path,
        &tools.herd_launch,
        Instant::now() + READINESS_BUDGET,
    );
    let focused = match &confirmed {
        Ok(_) => surface
            .focus(&target, Instant::now() + Duration::from_secs(5))
            .map_err(|e| e.to_string()),
        Err(_) => Err("the start was not confirmed".to_owned()),
    };
    if let Err(why) = &focused {
        if confirmed.is_ok() {
            diagnostics.push(format!("focus: {why}"));
        }
    }
    let handoff = Handoff {
        id: id.clone(),
        worktree: created.path.clone(),
        branch: created.branch.clone(),
        base_sha: created.base_sha.clone(),
        workspace_id: created.workspace_id.clone(),
        session,
        pane: target.to_pane_ref(),
        confirmed,
        focused,
        diagnostics,
    };
    crate::files::write_json(&artifacts.handoff_file(&id, "json"), &handoff.to_json())?;
    Ok(handoff)
}

/// Steps 3 and 4: the seeded session and the running pane.
fn start(
    place: &Place<'_>,
    request: &Request,
    id: &str,
    created: &Created,
    agent_dir: &Path,
    session: &Path,
) -> Result<Target, Error> {
    let Place {
        artifacts,
        surface,
        tools,
        pi,
        env,
    } = *place;
    if let Some(dir) = session.parent() {
        herd_core::sidecar::ensure_private_dir(dir)?;
    }
    crate::seed::seed_handoff(
        session,
        &created.path,
        &request.from,
        request.leaf.as_deref(),
        herd_core::time::now_ms(),
    )?;
    let mut vars = session_env(surface, session, agent_dir, tools, env);
    if let Some(port) = crate::worktree::port(created) {
        vars.push((crate::worktree::PORT_ENV.into(), port.to_string().into()));
    }
    let script_file = artifacts.handoff_file(id, "sh");
    // The surface's lines keep the pane and title it; the pane id they export is for a child's
    // extension, and the new Pi is no child.
    let mut prologue = surface.script_prologue(&request.branch);
    prologue.push(format!("unset {}", herd_surface::CHILD_PANE_ENV));
    let script = Script {
        run_id: id.to_owned(),
        name: request.branch.clone(),
        prologue,
        cwd: created.path.clone(),
        unset: crate::spawn::unset_vars(surface.kind()),
        env: vars,
        herd_launch: tools.herd_launch.clone(),
        identity_file: SessionFiles::new(session).process(),
        session_file: session.to_path_buf(),
        // The person's own new Pi, not a child: unconfined.
        sandbox: Vec::new(),
        scope_signals: false,
        relay: None,
        argv: pi_argv(pi, request, session),
        stdin: None,
        stdout: None,
        stderr: None,
        exit_status_file: artifacts.handoff_file(id, "runner-exit.json"),
    };
    script.write(&script_file)?;
    let root = crate::worktree::root_pane(created, surface);
    let launch = Launch {
        run_id: id,
        name: &request.branch,
        cwd: &created.path,
        script: &script_file,
        session_file: session,
        into: root.as_ref(),
    };
    // The launch's own budgets per operation (placement, readiness, dispatch).
    match surface.launch(&launch, &crate::spawn::launch_budgets(env)) {
        Ok(target) => Ok(target),
        // Its pane exists and may run Pi: confirmation decides.
        Err(LaunchError::Uncertain { owner, .. }) => Ok(*owner),
        Err(err) => Err(Error::new(
            ErrorCode::Unavailable,
            format!("cannot start Pi in the worktree: {}", err.error()),
        )),
    }
}

/// The new session's environment: what a pane's shell lacks of the caller's, herd's own
/// settings, and `PI_HERDR_AGENTS_SESSION`, the evidence of its start.
fn session_env(
    surface: &dyn Surface,
    session: &Path,
    agent_dir: &Path,
    tools: &Tools,
    env: &dyn Fn(&str) -> Option<String>,
) -> Vec<(String, OsString)> {
    let mut vars = crate::spawn::pane_env(surface);
    vars.extend(crate::spawn::bin_dir_env(tools, env));
    vars.push((
        herd_protocol::child_env::ChildEnv::SESSION.into(),
        session.as_os_str().to_owned(),
    ));
    vars.push((
        "PI_CODING_AGENT_DIR".into(),
        agent_dir.as_os_str().to_owned(),
    ));
    vars
}

/// `pi --session <new> [--model M] [--thinking T] [task]`: interactive, with the task as its
/// first message.
fn pi_argv(pi: &PiCommand, request: &Request, session: &Path) -> Vec<OsString> {
    let mut argv: Vec<OsString> = pi.argv();
    argv.push("--session".into());
    argv.push(session.as_os_str().to_owned());
    if let Some(model) = &request.model {
        argv.push("--model".into());
        argv.push(model.into());
    }
    if let Some(thinking) = &request.thinking {
        argv.push("--thinking".into());
        argv.push(crate::spawn::pi_thinking(thinking).into());
    }
    if let Some(task) = request.task.as_deref().filter(|t| !t.trim().is_empty()) {
        argv.push(task.into());
    }
    argv
}

/// Step 5: waits, by `deadline`, for the proof that Pi runs in the pane for `session`; answers
/// its PID, else the last reason it is not proven.
fn confirm(
    surface: &dyn Surface,
    target: &Target,
    identity_file: &Path,
    session: &Path,
    worktree: &Path,
    herd_launch: &Path,
    deadline: Instant,
) -> Result<u32, String> {
    let mut pane_pid = None;
    let mut last = "Pi has not started yet".to_owned();
    loop {
        if pane_pid.is_none() {
            match surface.pane_pid(target, deadline) {
                Ok(pid) => pane_pid = Some(pid),
                Err(err) => last = format!("the pane's process is unknown: {err}"),
            }
        }
        if let Some(root) = pane_pid {
            match started(root, identity_file, session, worktree, herd_launch) {
                Ok(pid) => return Ok(pid),
                Err(why) => last = why,
            }
        }
        if Instant::now() + READINESS_STEP >= deadline {
            return Err(format!(
                "not confirmed within {} s: {last}",
                READINESS_BUDGET.as_secs()
            ));
        }
        std::thread::sleep(READINESS_STEP);
    }
}

/// One look: whether the process `herd-launch exec` recorded for `session` is Pi, started for
/// it, in the worktree, in the pane whose process is `root`.
fn started(
    root: u32,
    identity_file: &Path,
    session: &Path,
    worktree: &Path,
    herd_launch: &Path,
) -> Result<u32, String> {
    let record = identity::Record::read(identity_file)
        .map_err(|e| format!("cannot read {}: {e}", identity_file.display()))?
        .ok_or_else(|| "Pi has not started yet".to_owned())?;
    match identity::judge(&record) {
        Judgement::Alive => {}
        other => return Err(format!("process {} is not alive: {other}", record.pid)),
    }
    if let Ancestry::NotVerified(why) =
        identity::is_descendant_of(&record, root, identity::DEFAULT_MAX_HOPS)
    {
        return Err(why);
    }
    let proc_dir = PathBuf::from(format!("/proc/{}", record.pid));
    // `herd-launch exec` records the identity, then becomes the runner: until it has, the
    // process is still herd-launch.
    let exe = std::fs::read_link(proc_dir.join("exe"))
        .map_err(|e| format!("cannot read the executable of process {}: {e}", record.pid))?;
    let herd_launch = herd_launch
        .canonicalize()
        .unwrap_or_else(|_| herd_launch.to_path_buf());
    if exe == herd_launch {
        return Err(format!("process {} has not become Pi yet", record.pid));
    }
    let cwd = std::fs::read_link(proc_dir.join("cwd"))
        .map_err(|e| format!("cannot read the directory of process {}: {e}", record.pid))?;
    let worktree = worktree
        .canonicalize()
        .unwrap_or_else(|_| worktree.to_path_buf());
    if cwd != worktree {
        return Err(format!(
            "process {} works in {}, not in the worktree",
            record.pid,
            cwd.display()
        ));
    }
    if !herd_surface::pi_ready_among(&[record.pid], session) {
        return Err(format!(
            "process {} was not started for {}",
            record.pid,
            session.display()
        ));
    }
    Ok(record.pid)
}
