//! The child's environment and command line: the protocol variables, what a pane passes
//! through, and the runner's argv.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use herd_core::{Error, ErrorCode};
use herd_protocol::child_env::{ChildEnv, SpecialistEnv};
use herd_protocol::layout::{Artifacts, SessionFiles};
use herd_protocol::run::{RunRecord, SurfaceKind};
use herd_surface::Surface;

use crate::plan::{Plan, Runner};
use herd_protocol::launch::PersistentIds;

use super::files::Files;
use super::{Tools, acceptance_section};

/// The parent's Herdr pane identity, kept only for a child in a Herdr pane.
const HERDR_IDS: [&str; 3] = ["HERDR_PANE_ID", "HERDR_TAB_ID", "HERDR_WORKSPACE_ID"];

/// Variables of the launching environment a pane's shell may lack (a tmux server has its own
/// environment) and that the child needs; none of them is a secret.
pub(super) const PASS_THROUGH: [&str; 12] = [
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

/// The child's environment (docs/protocol.md, "The child's environment"): what to unset, then
/// what to export.
#[expect(
    clippy::too_many_arguments,
    reason = "everything the environment is made of"
)]
pub(super) fn child_env(
    plan: &Plan,
    record: &RunRecord,
    files: &Files,
    session: &Path,
    agent_dir: &Path,
    surface: &dyn Surface,
    persistent: Option<&PersistentIds>,
    trust: herd_protocol::run::ProjectTrust,
    tools: &Tools,
    env: &dyn Fn(&str) -> Option<String>,
) -> (Vec<String>, Vec<(String, OsString)>) {
    let unset = unset_vars(surface.kind());
    let mut vars = pane_env(surface);
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
///
/// Values are the caller's as they are, bytes and all: a variable that is not UTF-8 (a path of
/// another encoding) passes through unchanged, and never stops a launch.
pub fn pane_env(surface: &dyn Surface) -> Vec<(String, OsString)> {
    pane_env_of(surface, std::env::vars_os())
}

/// [`pane_env`] of the environment `caller`.
fn pane_env_of(
    surface: &dyn Surface,
    caller: impl IntoIterator<Item = (OsString, OsString)>,
) -> Vec<(String, OsString)> {
    let mut vars: Vec<(String, OsString)> = Vec::new();
    if !surface.has_terminal() {
        return vars;
    }
    // A name that is not UTF-8 is neither a pass-through variable nor one of herd's.
    let caller: std::collections::BTreeMap<String, OsString> = caller
        .into_iter()
        .filter_map(|(key, value)| Some((key.into_string().ok()?, value)))
        .collect();
    for key in PASS_THROUGH {
        if let Some(value) = caller.get(key) {
            vars.push((key.to_owned(), value.clone()));
        }
    }
    for (key, value) in &caller {
        if key.starts_with("HERD_") && key != crate::trust::ENV {
            vars.push((key.clone(), value.clone()));
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

/// The command the launch script runs, and where its input and output go.
pub(super) struct RunnerCommand {
    pub(super) argv: Vec<OsString>,
    /// The file the command reads on stdin (the exec runner's prompt).
    pub(super) stdin: Option<PathBuf>,
    /// The logs an exec child in a terminal writes to.
    pub(super) stdout: Option<PathBuf>,
    pub(super) stderr: Option<PathBuf>,
}

/// The runner's command and its standard streams.
pub(super) fn runner_command(
    plan: &Plan,
    record: &RunRecord,
    files: &Files,
    session: &Path,
    surface: &dyn Surface,
    tools: &Tools,
    artifacts: &Artifacts,
) -> Result<RunnerCommand, Error> {
    match &plan.runner {
        Runner::Exec { argv } => {
            // Output goes to the logs on every surface; on the process surface the script's own
            // output already does.
            let (stdout, stderr) = if surface.has_terminal() {
                let [stdout, stderr] = exec_logs(artifacts, &record.run_id)?;
                (Some(stdout), Some(stderr))
            } else {
                (None, None)
            };
            Ok(RunnerCommand {
                argv: argv.clone(),
                stdin: files.artifact.clone(),
                stdout,
                stderr,
            })
        }
        Runner::Pi { program } => Ok(RunnerCommand {
            argv: pi_argv(plan, record, files, session, surface, tools, program.argv()),
            stdin: None,
            stdout: None,
            stderr: None,
        }),
    }
}

/// An exec child's stdout and stderr logs, created here, 0600, so the script's redirections
/// only truncate private files.
fn exec_logs(artifacts: &Artifacts, run_id: &str) -> Result<[PathBuf; 2], Error> {
    herd_core::sidecar::ensure_private_dir(&artifacts.logs_dir())?;
    let logs = [artifacts.stdout_log(run_id), artifacts.stderr_log(run_id)];
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
    Ok(logs)
}

/// Pi's command line: `program` with the session, model, thinking level, tools, the child
/// extension, skills and the task (a file reference, or the raw task of a fork child).
fn pi_argv(
    plan: &Plan,
    record: &RunRecord,
    files: &Files,
    session: &Path,
    surface: &dyn Surface,
    tools: &Tools,
    mut argv: Vec<OsString>,
) -> Vec<OsString> {
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
    argv
}

/// The child protocol tools an allowlist must keep: `caller_ping` always, `subagent_done` for a
/// child that does not exit by itself.
fn child_tools(auto_exit: bool, persistent: bool) -> Vec<&'static str> {
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
