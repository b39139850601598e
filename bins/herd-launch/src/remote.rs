//! `herd-launch spawn --host H` (or a request's `host`): a child on another machine.
//!
//! The remote's herd launches and owns the child: this runs `herd-launch spawn --request -
//! --json` there over the host's master connection, the request on stdin (never on the command
//! line), into the remote artifacts directory of this artifacts directory (private, 0700), on
//! the remote's process surface unless a surface was named. Locally a run record names the
//! host and the remote run id, so `herd-watch status`, the widget and `follow` include it; the
//! relay (`herd-watch relay`) brings its result home.
//!
//! The local record is claimed first (with this process's identity, as every launch), so a
//! crash leaves an owner on disk; a launch the remote refused or that never reached it is
//! withdrawn, leaving nothing on either side.

use std::ffi::OsString;
use std::time::Duration;

use herd_cli::Output;
use herd_core::error::ErrorDocument;
use herd_core::{Error, ErrorCode, exit};
use herd_protocol::launch::LaunchAck;
use herd_protocol::layout::Artifacts;
use herd_protocol::run::{LaunchStatus, RemoteRun, RemoteWorktree, RunRecord, Runner, SurfaceKind};
use herd_remote::{Hosts, Ssh};
use serde::Deserialize;
use serde_json::Value;

use crate::{RunnerChoice, SpawnArgs, SurfaceChoice};

/// The budget of the remote launch (its placement, readiness and dispatch included).
const SPAWN_BUDGET: Duration = Duration::from_secs(120);

/// The host a launch names: `--host`, else the request's `host`.
pub fn host_of(args: &SpawnArgs, request: &[u8]) -> Option<String> {
    args.host.clone().or_else(|| {
        serde_json::from_slice::<Value>(request)
            .ok()?
            .get("host")?
            .as_str()
            .map(str::to_owned)
    })
}

/// Launches `request` on `host`; the acknowledgement names the local run and the remote one.
///
/// Everything this machine can judge of the request is judged before the host is asked
/// anything (the request's schema and checks, what does not run on a host, a worktree's branch,
/// base and source repository): a refused request changes nothing on either side.
pub fn spawn(
    artifacts: &Artifacts,
    host: &str,
    request: &[u8],
    args: &SpawnArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Output, Error> {
    let record = Hosts::from_env(env)?.require(host)?;
    let runner = match args.runner {
        RunnerChoice::Pi => crate::plan::RunnerChoice::Pi,
        RunnerChoice::Exec => crate::plan::RunnerChoice::Exec,
    };
    // A JSON object the `subagent` schema accepts, from here on.
    let parsed = crate::plan::check_anywhere(request, runner, args.timeout_ms)?;
    let mut request: Value = serde_json::from_slice(request)
        .map_err(|e| Error::invalid("request", format!("the request is not JSON: {e}")))?;
    if let Some(fields) = request.as_object_mut() {
        fields.remove("host");
    }
    let name = parsed.name.clone();
    refuse_unsupported(host, &record, &parsed, args)?;
    let base = match &parsed.worktree {
        Some(wt) => Some(check_worktree(&request, wt, env)?),
        None => None,
    };
    let remote_args = remote_args(args, &parsed, env)?;
    let ssh = Ssh::new(record.destination()?, env)?;
    let remote_artifacts = record.artifacts_for(artifacts.root());
    // The first call to the host: a worktree child's base commit goes to a herd-owned clone
    // there, by git itself.
    let worktree = match base {
        Some(base) => Some(push_base(&ssh, &record, &mut request, base)?),
        None => None,
    };

    let mut local = claim(artifacts, &name, args, host, &remote_artifacts)?;
    if let Some(remote) = local.extra.remote.as_mut() {
        remote.worktree = worktree;
    }
    let body = serde_json::to_vec(&request).map_err(|e| Error::internal(e.to_string()))?;
    let words: Vec<&str> = remote_args.iter().map(String::as_str).collect();
    let out = match record.run_herd(
        &ssh,
        "herd-launch",
        &remote_artifacts,
        &words,
        Some(&body),
        SPAWN_BUDGET,
    ) {
        Ok(out) => out,
        Err(err) if err.code == ErrorCode::Timeout => {
            // The request went out: the remote may have launched it.
            local.status = LaunchStatus::Uncertain;
            local.launch_failure = Some(err.message.clone());
            crate::files::save_record(artifacts, &mut local)?;
            return Err(Error::new(
                ErrorCode::Uncertain,
                format!(
                    "{} (the launch may have happened there: check with `ssh {host} \
                     herd-watch --artifacts {remote_artifacts} status`)",
                    err.message
                ),
            ));
        }
        Err(err) => {
            withdraw(artifacts, &local);
            return Err(err);
        }
    };
    let text = out.stdout.text().into_owned();
    let doc: Value = serde_json::from_str(text.trim()).unwrap_or(Value::Null);
    if let Some(err) = remote_error(host, &doc) {
        // The remote refused or failed before launching: its error, and nothing left here.
        withdraw(artifacts, &local);
        return Err(err);
    }
    let Ok(mut ack) = serde_json::from_value::<LaunchAck>(doc) else {
        local.status = LaunchStatus::Uncertain;
        local.launch_failure = Some(format!(
            "{host} answered the launch with no acknowledgement (exit {:?}): {}",
            out.code,
            herd_core::escape::encode_host_value(out.stderr.text().trim(), 300)
        ));
        crate::files::save_record(artifacts, &mut local)?;
        return Ok(Output::ok(&local, local_human(&local)).with_exit(exit::UNCERTAIN));
    };
    adopt(&mut local, &ack);
    if let Some(note) = local
        .extra
        .remote
        .as_ref()
        .and_then(|r| setup_not_on_host(host, r.worktree.as_ref()?))
    {
        local.diagnostics.push(note.clone());
        ack.diagnostics.push(note);
    }
    crate::files::save_record(artifacts, &mut local)?;

    let code = match ack.status {
        LaunchStatus::Launched => exit::SUCCESS,
        LaunchStatus::Uncertain => exit::UNCERTAIN,
        LaunchStatus::Failed | LaunchStatus::Pending => exit::NO_ANSWER,
    };
    ack.remote_run_id = Some(std::mem::replace(&mut ack.run_id, local.run_id.clone()));
    ack.host = Some(host.to_owned());
    ack.artifacts = artifacts.root().display().to_string();
    let human = local_human(&local);
    Ok(Output::ok(ack, human).with_exit(code))
}

/// Refuses, before the host is asked, what does not run on another machine: a Pi child on a
/// host without Pi, a persistent specialist, a fallback launch.
fn refuse_unsupported(
    host: &str,
    record: &herd_remote::HostRecord,
    request: &herd_tools::SubagentRequest,
    args: &SpawnArgs,
) -> Result<(), Error> {
    if args.runner == RunnerChoice::Pi && record.pi_version.is_none() {
        return Err(Error::new(
            ErrorCode::Unavailable,
            format!(
                "{host} has no Pi on its PATH: install Pi there (npm install -g \
                 @earendil-works/pi-coding-agent), then run `herd-launch host add {host}` again"
            ),
        )
        .with_field("host"));
    }
    if request.persistent {
        // Its tasks go out by `herd-launch send` and come back by the specialist's own files,
        // neither of which crosses to a host.
        return Err(Error::invalid(
            "persistent",
            format!(
                "a persistent specialist runs on this machine, not on {host}: spawn it without \
                 `host`, or give each task to its own child on {host}"
            ),
        ));
    }
    if args.fallback_of.is_some() {
        return Err(Error::invalid(
            "fallback_of",
            "a fallback launch of a run on another machine is the host's: run it there",
        ));
    }
    Ok(())
}

/// The host's `herd-launch spawn` arguments: data only as quoted words (the request itself
/// goes on stdin). Refuses a request wider than this machine allows (its sandbox).
fn remote_args(
    args: &SpawnArgs,
    request: &herd_tools::SubagentRequest,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<String>, Error> {
    // The policy it gets here (the person's configuration here, a spawning child's own policy):
    // refused here when the request is wider, and the most the host's herd may give it.
    let ceiling = crate::sandbox::resolve(
        herd_sandbox::Asked {
            mode: request.sandbox,
            network: request.network()?,
        },
        herd_sandbox::Asked::default(),
        // A Pi child's model is the host's to find.
        None,
        true,
        env,
    )?
    .policy;
    let surface = match args.surface {
        SurfaceChoice::Auto | SurfaceChoice::Process => "process",
        SurfaceChoice::Tmux => "tmux",
        SurfaceChoice::Herdr => "herdr",
    };
    let runner = match args.runner {
        RunnerChoice::Pi => "pi",
        RunnerChoice::Exec => "exec",
    };
    let mut remote_args: Vec<String> = [
        "spawn",
        "--request",
        "-",
        "--json",
        "--surface",
        surface,
        "--runner",
        runner,
        "--sandbox-ceiling",
        &ceiling.to_env(),
    ]
    .map(str::to_owned)
    .to_vec();
    let parent_model = args
        .parent_model
        .clone()
        .or_else(|| env(crate::PARENT_MODEL_ENV))
        .filter(|m| !m.is_empty());
    if let Some(model) = parent_model {
        remote_args.extend(["--parent-model".to_owned(), model]);
    }
    if let Some(ms) = args.timeout_ms {
        remote_args.extend(["--timeout-ms".to_owned(), ms.to_string()]);
    }
    if !args.argv.is_empty() {
        remote_args.push("--".into());
        for arg in &args.argv {
            remote_args.push(os_text(arg)?);
        }
    }

    Ok(remote_args)
}

/// The host's refusal or failure before it launched, from its error document.
fn remote_error(host: &str, doc: &Value) -> Option<Error> {
    doc.get("error")?;
    Some(match ErrorDocument::deserialize(doc) {
        Ok(ErrorDocument { error }) => {
            let err = Error::new(error.code, format!("on {host}: {}", error.message));
            match error.field {
                Some(field) => err.with_field(field),
                None => err,
            }
        }
        Err(_) => Error::new(
            ErrorCode::Unavailable,
            format!("on {host}: the remote launch failed"),
        ),
    })
}

/// What the host's acknowledgement says of the launched child, taken into the local record.
fn adopt(local: &mut RunRecord, ack: &LaunchAck) {
    local.status = ack.status;
    local.surface = ack.surface;
    local.runner = ack.runner;
    local.cwd.clone_from(&ack.cwd);
    local.model.clone_from(&ack.model);
    local.thinking.clone_from(&ack.thinking);
    local.persistent = ack.persistent;
    local.auto_exit = ack.auto_exit;
    local.interactive = ack.interactive;
    local.launch_failure.clone_from(&ack.launch_failure);
    if let Some(remote) = local.extra.remote.as_mut() {
        remote.run_id = Some(ack.run_id.clone());
        remote.session_file = Some(ack.session_file.clone());
    }
}

/// The budget of each git call of a remote worktree's preparation.
const GIT_BUDGET: Duration = Duration::from_secs(60);

/// A worktree request judged on this machine: its source repository, branch and base commit.
struct LocalBase {
    /// The git command.
    git: String,
    /// The source directory, and its repository's top level.
    source: std::path::PathBuf,
    top: String,
    branch: String,
    sha: String,
}

impl LocalBase {
    /// Runs git in the source directory; its trimmed stdout.
    fn git(&self, args: &[&str], git_env: &[(&str, String)]) -> Result<String, Error> {
        run_git(&self.git, &self.source, args, git_env)
    }
}

fn run_git(
    git: &str,
    source: &std::path::Path,
    args: &[&str],
    git_env: &[(&str, String)],
) -> Result<String, Error> {
    let mut cmd = herd_core::subprocess::Command::new(git, GIT_BUDGET)
        .arg("-C")
        .arg(source)
        .args(args.iter().copied());
    for (name, value) in git_env {
        cmd = cmd.env(name, value);
    }
    let out = herd_core::subprocess::run(&cmd)
        .map_err(|e| Error::new(ErrorCode::Unavailable, format!("cannot run git: {e}")))?;
    if !out.success() {
        return Err(Error::new(
            ErrorCode::Unavailable,
            format!(
                "git {} failed in {}: {}",
                args.first().copied().unwrap_or(""),
                source.display(),
                herd_core::escape::encode_host_value(out.stderr.text().trim(), 300)
            ),
        )
        .with_field("worktree"));
    }
    Ok(out.stdout.text().trim().to_owned())
}

/// Judges a worktree request here, as a local launch would before it creates anything: the
/// branch a valid name that does not exist in the source repository (its commits come home to
/// that branch), the base a commit of it. Asks the host nothing.
fn check_worktree(
    request: &Value,
    worktree: &herd_tools::WorktreeRequest,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<LocalBase, Error> {
    let branch = worktree.branch.clone();
    herd_git::refname::check_branch_name(&branch)
        .map_err(|why| Error::invalid("worktree.branch", why))?;
    if let Some(base) = &worktree.base {
        if base.is_empty() || base.len() > 1024 || base.contains(['\0', '\n']) {
            return Err(Error::invalid(
                "worktree.base",
                "a base revision is 1 to 1024 characters on one line",
            ));
        }
    }
    let current = std::env::current_dir()
        .map_err(|e| Error::new(ErrorCode::Unavailable, format!("no current directory: {e}")))?;
    let source = match request.get("cwd").and_then(Value::as_str) {
        Some(dir) => current.join(dir),
        None => current,
    };
    if !source.is_dir() {
        return Err(
            Error::not_found(format!("{} is not a directory", source.display())).with_field("cwd"),
        );
    }
    let git = env("HERD_GIT_BIN")
        .filter(|g| !g.is_empty())
        .unwrap_or_else(|| "git".into());
    let top = run_git(&git, &source, &["rev-parse", "--show-toplevel"], &[])?;
    let base = worktree.base.as_deref().unwrap_or("HEAD");
    let sha = run_git(
        &git,
        &source,
        &[
            "rev-parse",
            "--verify",
            "--end-of-options",
            &format!("{base}^{{commit}}"),
        ],
        &[],
    )
    .map_err(|_| {
        Error::invalid(
            "worktree.base",
            format!("{base} names no commit in {}", source.display()),
        )
    })?;
    let local = LocalBase {
        git,
        source,
        top,
        branch,
        sha,
    };
    let exists = herd_core::subprocess::run(
        &herd_core::subprocess::Command::new(local.git.clone(), GIT_BUDGET)
            .arg("-C")
            .arg(&local.source)
            .args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
            .arg(format!("refs/heads/{}", local.branch)),
    )
    .map_err(|e| Error::new(ErrorCode::Unavailable, format!("cannot run git: {e}")))?;
    if exists.success() {
        return Err(Error::invalid(
            "worktree.branch",
            format!(
                "branch {} already exists in {}; a worktree run needs a new branch (its commits \
                 come home to it)",
                local.branch, local.top
            ),
        ));
    }
    Ok(local)
}

/// Pushes the base commit of a worktree request to the host's clone of its repository
/// (`~/.herd/repos/<hash>/`, created on first use) and points the request at that clone and
/// commit; returns what the relay needs to fetch the branch back.
fn push_base(
    ssh: &Ssh,
    record: &herd_remote::HostRecord,
    request: &mut Value,
    base: LocalBase,
) -> Result<RemoteWorktree, Error> {
    let digest = <sha2::Sha256 as sha2::Digest>::digest(base.top.as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let clone = format!("{}/.herd/repos/{hex}", record.home);
    let out = ssh.run(&["sh", "-c", INIT_CLONE, "herd", &clone], None, GIT_BUDGET)?;
    if !out.success() {
        return Err(Error::new(
            ErrorCode::Unavailable,
            format!(
                "cannot prepare the clone {clone} on {}: {}",
                record.name,
                herd_core::escape::encode_host_value(out.stderr.text().trim(), 300)
            ),
        ));
    }
    let git_env = ssh.git_env()?;
    let sha = base.sha.clone();
    base.git(
        &[
            "push",
            "--quiet",
            &ssh.git_url(&clone),
            &format!("{sha}:refs/herd/base/{sha}"),
        ],
        &git_env,
    )?;
    if let Some(fields) = request.as_object_mut() {
        fields.insert("cwd".into(), clone.clone().into());
        if let Some(wt) = fields.get_mut("worktree").and_then(Value::as_object_mut) {
            wt.insert("base".into(), sha.clone().into());
        }
    }
    Ok(RemoteWorktree {
        source: base.top,
        clone,
        branch: base.branch,
        base_sha: sha,
    })
}

/// Creates the host's clone when it is missing: `sh -c INIT_CLONE herd <dir>`.
const INIT_CLONE: &str = r#"umask 077
mkdir -p -- "$(dirname -- "$1")" || exit 96
[ -d "$1/.git" ] || git init -q -- "$1""#;

/// What a worktree child on `host` does not get of its repository's setup description, said
/// rather than skipped silently: the description's commands, links and port are this machine's,
/// and ignored files (secrets among them) never leave it.
fn setup_not_on_host(host: &str, wt: &RemoteWorktree) -> Option<String> {
    let source = std::path::Path::new(&wt.source);
    let described: Vec<&str> = [".herd/worktree.toml", ".worktreeinclude"]
        .into_iter()
        .filter(|f| source.join(f).is_file())
        .collect();
    if described.is_empty() {
        return None;
    }
    Some(format!(
        "skipped the worktree setup of {} on {host}: a worktree on another machine gets no \
         setup commands, links, copied ignored files or HERD_PORT there",
        described.join(" and ")
    ))
}

fn local_human(record: &RunRecord) -> String {
    let remote = record.extra.remote.as_ref();
    let notes: String = record
        .diagnostics
        .iter()
        .map(|d| format!("\nnote: {}", herd_core::escape::encode_host_value(d, 500)))
        .collect();
    let line = format!(
        "{} {} on {} ({}; there {})",
        crate::spawn::status_str(record.status),
        herd_core::escape::json_string(&record.name),
        remote.map_or("?", |r| r.host.as_str()),
        record.run_id,
        remote
            .and_then(|r| r.run_id.as_deref())
            .unwrap_or("no run id"),
    );
    line + &notes
}

fn os_text(arg: &OsString) -> Result<String, Error> {
    arg.to_str()
        .map(str::to_owned)
        .ok_or_else(|| Error::invalid("argv", "a remote command's argument is not UTF-8"))
}

/// Claims the local record of a run on `host`, pending until the host acknowledges it.
fn claim(
    artifacts: &Artifacts,
    name: &str,
    args: &SpawnArgs,
    host: &str,
    remote_artifacts: &str,
) -> Result<RunRecord, Error> {
    let now = herd_core::time::now_ms();
    for _ in 0..16 {
        let run_id = crate::names::new_run_id()?;
        let launcher = artifacts.launcher(&run_id);
        let me = herd_core::identity::capture(
            std::process::id(),
            &run_id,
            &artifacts.run_record(&run_id),
        )?;
        if !crate::files::create_once(&launcher, &me.to_json()?)? {
            continue;
        }
        let mut record = RunRecord {
            format_version: herd_protocol::run::FORMAT_VERSION,
            run_id: run_id.clone(),
            name: name.to_owned(),
            agent: None,
            created_at_ms: now,
            updated_at_ms: now,
            runner: match args.runner {
                RunnerChoice::Pi => Runner::Pi,
                RunnerChoice::Exec => Runner::Exec,
            },
            surface: SurfaceKind::Process,
            status: LaunchStatus::Pending,
            cwd: String::new(),
            session_file: artifacts
                .run(&run_id)
                .path::<herd_protocol::run::RemoteState>()
                .display()
                .to_string(),
            pane: None,
            worktree: None,
            accept_spec: None,
            model: None,
            fallback_models: Vec::new(),
            attempted_models: Vec::new(),
            thinking: None,
            persistent: false,
            interactive: false,
            auto_exit: true,
            fallback_of: None,
            parent_run_id: std::env::var("PI_SUBAGENT_ID")
                .ok()
                .filter(|id| herd_protocol::layout::validate_run_id(id).is_ok()),
            launch_failure: None,
            time_limit_ms: None,
            diagnostics: Vec::new(),
            extra: Default::default(),
        };
        record.extra.remote = Some(RemoteRun {
            host: host.to_owned(),
            artifacts: remote_artifacts.to_owned(),
            run_id: None,
            session_file: None,
            worktree: None,
        });
        herd_protocol::open_runs::add(artifacts, &run_id)?;
        if crate::files::claim_record(artifacts, &mut record)? {
            return Ok(record);
        }
        let _ = std::fs::remove_file(&launcher);
    }
    Err(Error::internal("could not claim a free run id in 16 tries"))
}

/// Removes a local record that never became a run.
fn withdraw(artifacts: &Artifacts, record: &RunRecord) {
    let id = &record.run_id;
    let _ = std::fs::remove_file(artifacts.launcher(id));
    let _ = std::fs::remove_file(artifacts.run_record(id));
    herd_protocol::open_runs::remove(artifacts, id);
}
