//! `herd-launch`: start a child — validate the request, place it on a surface, write its
//! sidecars, dispatch it, and capture its identity.

pub mod artifact;
pub mod budget;
pub mod catalog;
pub mod exec;
pub mod extension;
pub mod files;
pub mod handoff;
pub mod host;
pub mod list;
pub mod models;
pub mod names;
pub mod net;
pub mod persistent;
pub mod pi;
pub mod plan;
pub mod remote;
pub mod resume;
pub mod resurrect;
pub mod roles;
pub mod sandbox;
pub mod script;
pub mod seed;
pub mod skills;
pub mod spawn;
pub mod trust;
pub mod worktree;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use herd_cli::{ArtifactsArgs, Output};
use herd_core::{Error, ErrorCode};
use herd_protocol::layout::Artifacts;
use herd_protocol::run::{Selector, SurfaceKind};
use herd_surface::Surface;

pub use pi::{PI_ENV, PI_NODE_ENV};
/// The environment variables of the parent's model and thinking level, the last defaults of a
/// child's.
pub const PARENT_MODEL_ENV: &str = "HERD_PARENT_MODEL";
pub const PARENT_THINKING_ENV: &str = "HERD_PARENT_THINKING";

/// Start Pi children (or any command) on a surface, with all state on disk.
#[derive(Debug, Parser)]
#[command(name = "herd-launch", version, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    pub artifacts: ArtifactsArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Launch a child from the `subagent` tool's parameters.
    ///
    /// The run's acceptance gate is resolved here: the request's `acceptance` or `gate`,
    /// else the inferred one (a Pi child only: read-only tasks and roles attested, writers
    /// checked, writers in a worktree checked with a required review; the task's own explicit
    /// no-edit or change wording wins over the role). It is written to
    /// `runs/<id>.acceptance.json`, reported in the acknowledgement as `acceptance`, and for
    /// attested or stricter the child's prompt ends with the section that asks for its
    /// `acceptance-report` block. `reviews: <run>` launches the reviewer of a run whose result
    /// is review-required.
    Spawn(SpawnArgs),
    /// Resume a saved child session in a new pane, under its saved launch policy.
    Resume(ResumeArgs),
    /// Bring back the runs that were lost (a reboot, a killed tmux server, a Herdr restart):
    /// each resumed in its exact session file under its saved launch policy.
    ///
    /// A run is lost when its result settled as failed with no completion evidence (no exit
    /// code, no completion sidecar while it ran, no launch failure, cancel, time limit or
    /// stop); a watcher settles a run whose process went away that way. Each lost run that can
    /// be resumed is resumed, one after another, by its session file's path (never `pi
    /// --continue`), with its saved tools and denied tools, its name and auto-exit, and a first
    /// message saying it was interrupted; its result is delivered as every run's. A worktree
    /// child resumes in its retained worktree. Listed with why and not resumed: a persistent
    /// specialist (spawn a new one), a run without a session file (an exec child) or without a
    /// launch policy, a child's own child, a run on another machine, one whose worktree is gone.
    ///
    /// Nothing is resumed twice: one resurrect at a time (a second waits for the first, up to
    /// 120 s), and a run whose session a later run resumed, or whose marker
    /// `runs/<id>.resurrected.json` names a successor, is `already_resumed`. Exit 0 when every
    /// resumable run was resumed (or none was lost), 3 when a launch is uncertain, 4 when one
    /// failed.
    Resurrect(ResurrectArgs),
    /// Send the next task to an idle persistent specialist.
    Send(SendArgs),
    /// Record this process's identity beside the session, then exec the runner (used by launch
    /// scripts).
    Exec(ExecArgs),
    /// Carry a confined child's connections to the addresses its allowlist names (started by
    /// `herd-launch exec` outside the sandbox, with the relay's socket as standard input).
    NetRelay(NetRelayArgs),
    /// Inside a confined child's sandbox: give the runner back the terminal's interrupt (which
    /// the sandbox outside ignores), listen on its loopback for the addresses its allowlist names
    /// (`--socket`, `--route`), then exec the runner (used by launch scripts).
    Enter(EnterArgs),
    /// List the role definitions a launch can name, the live persistent specialists and the
    /// supervision mode (the `subagents_list` tool).
    Roles(RolesArgs),
    /// Validate and atomically replace `models.tasks` and `models.tasksMeta` of the durable
    /// configuration (the `subagents_write_task_models` tool), keeping every other setting.
    WriteTaskModels(WriteTaskModelsArgs),
    /// Hand the conversation off to a new interactive Pi in a fresh managed worktree (the
    /// `/worktree <name> [task]` command): focused once its start is confirmed through `/proc`.
    Handoff(HandoffArgs),
    /// The model catalog: the models Pi has credentials for (`pi --list-models`, asked now) and
    /// the task categories of the configuration over them, with the text of the `subagent`
    /// guideline that shows it.
    Models(ModelsArgs),
    /// The other machines children can run on (`spawn --host`): add (check the host over ssh
    /// and copy this herd there), list, remove.
    Host(HostArgs),
}

#[derive(Debug, clap::Args)]
pub struct HostArgs {
    #[command(subcommand)]
    pub command: HostCommand,
}

#[derive(Debug, Subcommand)]
pub enum HostCommand {
    /// Check an ssh destination (or ~/.ssh/config alias) and prepare it: its OS, architecture,
    /// home and Pi; this herd's six programs copied into ~/.herd/bin/<version>/ there when the
    /// OS and architecture match (else exit 4 with the command that builds herd there).
    Add {
        /// The ssh destination or alias.
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// The prepared hosts.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Forget a host and close its master connection (refused while runs are open there, in any
    /// artifacts directory of this user's index).
    Remove {
        name: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, clap::Args)]
pub struct ModelsArgs {
    /// The directory the children would start in, whose `.pi/agent/` may hold the project's
    /// configuration [default: the current one].
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct HandoffArgs {
    /// The session whose active conversation branch the new Pi continues.
    #[arg(long, value_name = "FILE")]
    pub from: PathBuf,
    /// The entry that branch ends at (Pi's leaf) [default: the session's last entry].
    #[arg(long, value_name = "ENTRY_ID")]
    pub leaf: Option<String>,
    /// The new worktree's branch.
    #[arg(long, value_name = "NAME")]
    pub branch: String,
    /// The commit the branch starts at [default: the current committed branch].
    #[arg(long, value_name = "REF")]
    pub base: Option<String>,
    /// The first message of the new session.
    #[arg(long)]
    pub task: Option<String>,
    /// The new session's model [default: $HERD_PARENT_MODEL].
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Its thinking level [default: $HERD_PARENT_THINKING].
    #[arg(long, value_name = "LEVEL")]
    pub thinking: Option<String>,
    /// The directory whose repository the worktree is made from [default: the current one].
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Where the new Pi runs: Herdr or tmux (a handoff needs a terminal).
    #[arg(long, value_enum, default_value_t = SurfaceChoice::Auto)]
    pub surface: SurfaceChoice,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct WriteTaskModelsArgs {
    /// The tool's parameters as JSON, from a file or `-` for stdin.
    #[arg(long, value_name = "FILE|-")]
    pub request: String,
    /// The directory whose `.pi/agent/` may hold the project's configuration [default: the
    /// current one].
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct RolesArgs {
    /// The directory whose `.pi/agents/` holds the project's roles [default: the current one].
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
}

/// Where a child runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SurfaceChoice {
    /// Herdr when inside Herdr, tmux when inside tmux, else a detached process.
    Auto,
    Herdr,
    Tmux,
    Process,
}

/// What the child is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RunnerChoice {
    /// The Pi CLI with the child extension.
    Pi,
    /// Any command given after `--`, without a shell; the task goes to its stdin.
    Exec,
}

#[derive(Debug, clap::Args)]
pub struct SpawnArgs {
    /// The `subagent` tool's parameters as JSON, from a file or `-` for stdin.
    #[arg(long, value_name = "FILE|-", required_unless_present = "fallback_of")]
    pub request: Option<String>,
    #[arg(long, value_enum, default_value_t = SurfaceChoice::Auto)]
    pub surface: SurfaceChoice,
    #[arg(long, value_enum, default_value_t = RunnerChoice::Pi)]
    pub runner: RunnerChoice,
    /// Launch the next model candidate of an earlier run that ended with a provider error: its
    /// request, surface and runner again, with the model after the ones it tried.
    #[arg(long, value_name = "RUN_ID", conflicts_with = "request")]
    pub fallback_of: Option<String>,
    /// The parent's model, the last default of the child's [default: $HERD_PARENT_MODEL].
    #[arg(long, value_name = "MODEL")]
    pub parent_model: Option<String>,
    /// The parent's thinking level [default: $HERD_PARENT_THINKING].
    #[arg(long, value_name = "LEVEL")]
    pub parent_thinking: Option<String>,
    /// The longest the exec runner's command may run, in milliseconds: past it a watcher
    /// terminates its process tree and the run fails as timed out.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_ms: Option<u64>,
    /// Run the child on another machine, a host `herd-launch host add` prepared (or the
    /// request's `host`): the host's herd launches and owns it; its result comes home.
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// The widest sandbox policy the child may get, `<mode>,<network>` as `HERD_SANDBOX_POLICY`
    /// carries it: it only narrows. A launch on another host passes the policy it resolved
    /// here, so the host's herd never confines the child less.
    #[arg(long, value_name = "POLICY")]
    pub sandbox_ceiling: Option<String>,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
    /// The command of the `exec` runner.
    #[arg(last = true, value_name = "ARGV")]
    pub argv: Vec<OsString>,
}

#[derive(Debug, clap::Args)]
pub struct ResumeArgs {
    /// The child session `.jsonl` file to resume.
    #[arg(long, value_name = "FILE")]
    pub session: PathBuf,
    /// A message to send after resuming.
    #[arg(long)]
    pub message: Option<String>,
    /// Exit after the next response settles.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    pub auto_exit: bool,
    /// The display name of the resumed run.
    #[arg(long, default_value = "Resume")]
    pub name: String,
    #[arg(long, value_enum, default_value_t = SurfaceChoice::Auto)]
    pub surface: SurfaceChoice,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct ResurrectArgs {
    /// List the lost runs and what would be done with each, changing nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Where the resumed runs start [default: the surface each run was on].
    #[arg(long, value_enum)]
    pub surface: Option<SurfaceChoice>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("target").required(true))]
pub struct SendArgs {
    /// The run id of the specialist.
    #[arg(long, group = "target")]
    pub run: Option<String>,
    /// The exact, unambiguous name of the specialist.
    #[arg(long, group = "target")]
    pub name: Option<String>,
    /// The next task.
    #[arg(long)]
    pub message: String,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct ExecArgs {
    /// The identity record to write (`<session>.process.json`).
    #[arg(long, value_name = "FILE")]
    pub identity: PathBuf,
    /// The run id recorded in the identity.
    #[arg(long)]
    pub run_id: String,
    /// The session file recorded in the identity.
    #[arg(long, value_name = "FILE")]
    pub session: PathBuf,
    /// Keep the runner's signals inside its sandbox (Landlock's scoping) before becoming it.
    #[arg(long)]
    pub scope_signals: bool,
    /// The runner is a sandbox: it ignores the terminal's interrupt and quit (which would end the
    /// whole sandbox), and `herd-launch enter` inside gives them back to the child.
    #[arg(long)]
    pub sandboxed: bool,
    /// Start a relay on this Unix socket for the sandbox's allowlist (`--net-allow`).
    #[arg(long, value_name = "SOCKET")]
    pub net_relay: Option<PathBuf>,
    /// A `host:port` the relay connects to.
    #[arg(long, value_name = "HOST:PORT", requires = "net_relay")]
    pub net_allow: Vec<String>,
    /// The runner's argv.
    #[arg(last = true, required = true, value_name = "ARGV")]
    pub argv: Vec<OsString>,
}

#[derive(Debug, clap::Args)]
pub struct NetRelayArgs {
    /// A `host:port` the relay connects to; any other is refused.
    #[arg(long, value_name = "HOST:PORT")]
    pub allow: Vec<String>,
    /// The process it ends with.
    #[arg(long, value_name = "PID")]
    pub parent: u32,
}

#[derive(Debug, clap::Args)]
pub struct EnterArgs {
    /// The relay's Unix socket, for an allowlist's routes.
    #[arg(long, value_name = "SOCKET", requires = "route")]
    pub socket: Option<PathBuf>,
    /// `<loopback address>=<host:port>`: where to listen, and for which allowed address.
    #[arg(long, value_name = "ADDRESS=HOST:PORT", requires = "socket")]
    pub route: Vec<String>,
    /// Serve in this process (the forwarder herd-launch starts for itself) instead of starting
    /// the forwarder and becoming the runner.
    #[arg(long)]
    pub serve: bool,
    /// With `--serve`: the process it ends with.
    #[arg(long, value_name = "PID", requires = "serve")]
    pub parent: Option<u32>,
    /// The runner's argv.
    #[arg(last = true, value_name = "ARGV")]
    pub argv: Vec<OsString>,
}

impl Cli {
    fn json(&self) -> bool {
        match &self.command {
            Command::Spawn(a) => a.json,
            Command::Resume(a) => a.json,
            Command::Resurrect(a) => a.json,
            Command::Send(a) => a.json,
            Command::Roles(a) => a.json,
            Command::WriteTaskModels(a) => a.json,
            Command::Handoff(a) => a.json,
            Command::Models(a) => a.json,
            Command::Host(a) => match &a.command {
                HostCommand::Add { json, .. }
                | HostCommand::List { json }
                | HostCommand::Remove { json, .. } => *json,
            },
            Command::Exec(_) | Command::NetRelay(_) | Command::Enter(_) => false,
        }
    }
}

/// The entry point of the binary.
pub fn main_impl(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    herd_cli::main(args, Cli::json, run)
}

pub fn run(cli: Cli) -> Result<Output, Error> {
    let env = |key: &str| std::env::var(key).ok();
    match cli.command {
        Command::Spawn(args) => spawn_entry(&cli.artifacts, &args, &env),
        Command::Host(args) => Ok(match &args.command {
            HostCommand::Add { name, .. } => {
                let (doc, human) = host::add(name, &env)?;
                Output::ok(doc, human)
            }
            HostCommand::List { .. } => {
                let (doc, human) = host::list(&env)?;
                Output::ok(doc, human)
            }
            HostCommand::Remove { name, .. } => {
                // Every directory this user launched from, not only this one: a Pi session's
                // runs on the host may be in another.
                let current = cli.artifacts.resolve().ok();
                let dirs = match herd_protocol::artifacts_index::Index::of_user() {
                    Some(index) => index.directories(current.as_ref())?,
                    None => current.into_iter().collect(),
                };
                let (doc, human) = host::remove(name, &dirs, &env)?;
                Output::ok(doc, human)
            }
        }),
        Command::Resume(args) => resume_command(&cli.artifacts, &args, &env),
        Command::Resurrect(args) => {
            let artifacts = cli.artifacts.resolve()?;
            let options = resurrect::Options {
                dry_run: args.dry_run,
                surface: args.surface.map(|choice| surface_kind(choice, &env)),
            };
            let doc = resurrect::resurrect(&artifacts, &options, &herd_launch_path(&env)?, &env)?;
            let code = resurrect::exit_code(&doc);
            let human = resurrect::human(&doc);
            Ok(Output::ok(doc, human).with_exit(code))
        }
        Command::Send(args) => send_command(&cli.artifacts, &args),
        Command::Roles(args) => {
            let artifacts = cli.artifacts.resolve()?;
            let cwd = cwd_or_current(args.cwd.as_deref())?;
            let agent_dir = names::agent_dir(Some(&cwd), &env)?;
            let listing = list::list(&artifacts, &cwd, &agent_dir)?;
            Ok(Output::ok(listing.to_json(), listing.human()))
        }
        Command::WriteTaskModels(args) => {
            let cwd = cwd_or_current(args.cwd.as_deref())?;
            let bytes = spawn::read_request(&args.request)?;
            let request: herd_tools::WriteTaskModelsRequest =
                herd_tools::parse_slice("subagents_write_task_models", &bytes)?;
            let agent_dir = names::agent_dir(Some(&cwd), &env)?;
            let written = models::write(&agent_dir, &request)?;
            Ok(Output::ok(written.to_json(), written.human()))
        }
        Command::Handoff(args) => handoff_command(&cli.artifacts, &args, &env),
        Command::Models(args) => {
            let cwd = cwd_or_current(args.cwd.as_deref())?;
            let agent_dir = names::agent_dir(Some(&cwd), &env)?;
            let config = roles::Config::load(&agent_dir)?;
            let models = catalog::list(&pi::find_pi(&env)?, &cwd)?;
            let mut catalog = catalog::Catalog::new(models, &config.tasks);
            catalog.launch_roster = config.launch_roster;
            Ok(Output::ok(catalog.to_json(), catalog.guideline()))
        }
        Command::Exec(args) => {
            let relay = args.net_relay.as_ref().map(|socket| net::RelayArgs {
                socket,
                allow: &args.net_allow,
            });
            let (err, code) = exec::exec(
                &args.identity,
                &args.run_id,
                &args.session,
                exec::Sandbox {
                    scope_signals: args.scope_signals,
                    sandboxed: args.sandboxed,
                    relay,
                },
                &args.argv,
            );
            herd_cli::diagnostic(&format!("herd-launch exec: {}", err.message));
            Ok(Output::ok(err.to_json(), String::new()).with_exit(code))
        }
        Command::NetRelay(args) => {
            let err = net::relay(&args.allow, args.parent);
            herd_cli::diagnostic(&format!("herd-launch net-relay: {}", err.message));
            Ok(Output::ok(err.to_json(), String::new()).with_exit(126))
        }
        Command::Enter(args) => {
            let serve = if args.serve { args.parent } else { None };
            let (err, code) = net::enter(args.socket.as_deref(), &args.route, serve, &args.argv);
            herd_cli::diagnostic(&format!("herd-launch enter: {}", err.message));
            Ok(Output::ok(err.to_json(), String::new()).with_exit(code))
        }
    }
}

/// `herd-launch spawn`: here, or on the host the request names.
fn spawn_entry(
    given: &herd_cli::ArtifactsArgs,
    args: &SpawnArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Output, Error> {
    let ceiling = sandbox::ceiling_arg(args.sandbox_ceiling.as_deref())?;
    let narrowed = |key: &str| sandbox::narrowed_env(key, ceiling.as_ref(), env);
    let env: &dyn Fn(&str) -> Option<String> = &narrowed;
    let artifacts = given.resolve()?;
    refuse_tracked_artifacts(&artifacts)?;
    // A child on another machine is the host's to launch.
    let request = match (&args.request, &args.fallback_of) {
        (Some(source), None) => Some(spawn::read_request(source)?),
        _ => None,
    };
    if let Some(host) = request.as_deref().and_then(|r| remote::host_of(args, r)) {
        // Its record is here: the directory joins the user's index as a local launch's does.
        if let Some(index) = herd_protocol::artifacts_index::Index::of_user() {
            let _ = index.record(&artifacts);
        }
        let bytes = request.unwrap_or_default();
        return remote::spawn(&artifacts, &host, &bytes, args, env);
    }
    spawn_command(
        &artifacts,
        args,
        request,
        given.parent_session.as_deref(),
        env,
    )
}

/// Refuses an artifacts directory that holds files git tracks (a project's committed `.herd/`,
/// say): run files would be written among them, into the next commit. A directory outside a
/// git work tree, or one git tracks nothing in, is fine; git's own failure is not a refusal.
fn refuse_tracked_artifacts(artifacts: &herd_protocol::layout::Artifacts) -> Result<(), Error> {
    let root = artifacts.root();
    // Only a directory under a `.git` is asked about: no git call for the usual one.
    if !root.is_dir() || !root.ancestors().any(|dir| dir.join(".git").exists()) {
        return Ok(());
    }
    let deadline = herd_git::Deadline::after(std::time::Duration::from_secs(10));
    let Ok(out) = herd_git::Git::from_env().run(root, ["ls-files", "-z", "--", "."], &deadline)
    else {
        return Ok(());
    };
    let Some(first) = out.split(|b| *b == 0).find(|f| !f.is_empty()) else {
        return Ok(());
    };
    Err(Error::invalid(
        "--artifacts",
        format!(
            "{} holds files git tracks ({}): herd's run files would be written among the \
             project's committed files; use a directory outside the repository (unset \
             HERD_ARTIFACTS for herd's own under the state directory)",
            herd_core::escape::encode_host_value(&root.to_string_lossy(), 500),
            herd_core::escape::encode_host_value(&String::from_utf8_lossy(first), 200),
        ),
    ))
}

/// `herd-launch resume`.
fn resume_command(
    artifacts: &herd_cli::ArtifactsArgs,
    args: &ResumeArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Output, Error> {
    let artifacts = artifacts.resolve()?;
    let kind = surface_kind(args.surface, env);
    let surface = open_surface(kind, &artifacts, env)?;
    let request = resume::Request {
        session: args.session.clone(),
        message: args.message.clone(),
        auto_exit: args.auto_exit,
        name: args.name.clone(),
        lost: None,
    };
    let ack = resume::resume(
        &artifacts,
        &request,
        surface.as_ref(),
        herd_launch_path(env)?,
        env,
    )?;
    Ok(Output::ok(ack.document(), ack.human()).with_exit(ack.exit_code()))
}

/// `herd-launch send`.
fn send_command(artifacts: &herd_cli::ArtifactsArgs, args: &SendArgs) -> Result<Output, Error> {
    let artifacts = artifacts.resolve()?;
    let selector = Selector::from_flags(args.run.as_deref(), args.name.as_deref())?;
    let sent = persistent::send(&artifacts, &selector, &args.message)?;
    let human = format!(
        "sent task {} to {} ({})",
        sent.task_id, sent.record.name, sent.record.run_id
    );
    let json = herd_protocol::launch::LaunchSend {
        status: herd_protocol::launch::SendStatus::Dispatched,
        run_id: sent.record.run_id,
        name: sent.record.name,
        task_id: sent.task_id,
        inbox: sent.inbox.to_string_lossy().into_owned(),
    };
    Ok(Output::ok(json, human))
}

/// `herd-launch handoff`.
fn handoff_command(
    artifacts: &herd_cli::ArtifactsArgs,
    args: &HandoffArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Output, Error> {
    let artifacts = artifacts.resolve()?;
    let kind = surface_kind(args.surface, env);
    let surface = open_handoff_surface(kind, &artifacts, env)?;
    let cwd = cwd_or_current(args.cwd.as_deref())?;
    let from_env =
        |value: Option<String>, key: &str| value.or_else(|| env(key)).filter(|v| !v.is_empty());
    let request = handoff::Request {
        from: args.from.clone(),
        leaf: args.leaf.clone(),
        branch: args.branch.clone(),
        base: args.base.clone(),
        task: args.task.clone(),
        model: from_env(args.model.clone(), PARENT_MODEL_ENV),
        thinking: from_env(args.thinking.clone(), PARENT_THINKING_ENV),
        cwd,
    };
    let tools = spawn::Tools {
        herd_launch: herd_launch_path(env)?,
        extension: None,
    };
    let pi = pi::find_pi(env)?;
    let place = handoff::Place {
        artifacts: &artifacts,
        surface: surface.as_ref(),
        tools: &tools,
        pi: &pi,
        env,
    };
    let done = handoff::handoff(&place, &request)?;
    Ok(Output::ok(done.to_json(), done.human()).with_exit(done.exit_code()))
}

fn spawn_command(
    artifacts: &Artifacts,
    args: &SpawnArgs,
    request: Option<Vec<u8>>,
    parent_session: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Output, Error> {
    let input = match &args.fallback_of {
        Some(run_id) => fallback_input(artifacts, run_id)?,
        None => fresh_input(args, request, env)?,
    };
    let cwd = std::env::current_dir().map_err(|e| {
        Error::new(
            ErrorCode::Unavailable,
            format!("cannot read the current directory: {e}"),
        )
    })?;
    let ctx = plan::Context {
        env,
        cwd,
        parent_session: parent_session.map(Path::to_path_buf),
        parent_model: args
            .parent_model
            .clone()
            .or_else(|| env(PARENT_MODEL_ENV))
            .filter(|m| !m.is_empty()),
        parent_thinking: args
            .parent_thinking
            .clone()
            .or_else(|| env(PARENT_THINKING_ENV))
            .filter(|t| !t.is_empty()),
    };
    let mut plan = plan::plan(&input, &ctx)?;
    // A child's own spawn gets at most what its parent run has left, refused when nothing is.
    let holds = matches!(plan.runner, plan::Runner::Pi { .. })
        && !plan.persistent
        && plan.request.host.is_none();
    plan.budget = budget::within_parent(artifacts, plan.budget, holds, env)?;
    let surface = open_surface(input.surface, artifacts, env)?;
    // Refused before anything is written, the shared child extension included: exit 2 changes
    // nothing.
    if let Some(wt) = &plan.worktree {
        plan.worktree_checked = Some(worktree::check(&plan, wt, surface.kind())?);
    }
    let tools = spawn::Tools {
        herd_launch: herd_launch_path(env)?,
        extension: match plan.runner {
            plan::Runner::Pi { .. } => Some(extension::install(artifacts, env)?),
            plan::Runner::Exec { .. } => None,
        },
    };
    let ack = spawn::spawn(artifacts, &plan, surface.as_ref(), &tools, env)?;
    Ok(Output::ok(ack.document(), ack.human()).with_exit(ack.exit_code()))
}

/// What the command line asks to launch.
fn fresh_input(
    args: &SpawnArgs,
    request: Option<Vec<u8>>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<plan::LaunchInput, Error> {
    let source = args
        .request
        .as_deref()
        .ok_or_else(|| Error::invalid("request", "give --request FILE or -"))?;
    Ok(plan::LaunchInput {
        request: match request {
            Some(bytes) => bytes,
            None => spawn::read_request(source)?,
        },
        surface: surface_kind(args.surface, env),
        runner: match args.runner {
            RunnerChoice::Pi => plan::RunnerChoice::Pi,
            RunnerChoice::Exec => plan::RunnerChoice::Exec,
        },
        argv: args.argv.clone(),
        time_limit_ms: args.timeout_ms,
        fallback_of: None,
        tried: Vec::new(),
        trust: None,
    })
}

/// The launch that replaces run `run_id` with its next model: its request, surface, runner,
/// command, time limit and trust decision, without the models it already tried.
fn fallback_input(artifacts: &Artifacts, run_id: &str) -> Result<plan::LaunchInput, Error> {
    let previous = herd_protocol::run::RunRecord::load(artifacts, run_id)?;
    let request_file =
        previous.extra.request_file.as_deref().ok_or_else(|| {
            Error::invalid("fallback_of", format!("run {run_id} kept no request"))
        })?;
    if previous.fallback_models.is_empty() {
        return Err(Error::invalid(
            "fallback_of",
            format!("run {run_id} has no model left to try"),
        ));
    }
    // The models already tried, by name: the candidates are resolved again (which providers
    // have credentials is asked anew), so their positions may have moved.
    let mut tried = previous.attempted_models.clone();
    tried.extend(previous.model.clone());
    Ok(plan::LaunchInput {
        request: spawn::read_request(request_file)?,
        surface: previous.surface,
        runner: match previous.runner {
            herd_protocol::run::Runner::Pi => plan::RunnerChoice::Pi,
            herd_protocol::run::Runner::Exec => plan::RunnerChoice::Exec,
        },
        argv: previous
            .extra
            .exec_argv
            .iter()
            .map(OsString::from)
            .collect(),
        time_limit_ms: previous.time_limit_ms,
        fallback_of: Some(run_id.to_owned()),
        // The same child in the same place: the decision its first attempt was launched with.
        trust: Some(trust::Parent::from_record(&previous)),
        tried,
    })
}

/// `--cwd`, else the current directory.
fn cwd_or_current(cwd: Option<&Path>) -> Result<PathBuf, Error> {
    match cwd {
        Some(dir) => Ok(dir.to_path_buf()),
        None => std::env::current_dir()
            .map_err(|e| Error::new(ErrorCode::Unavailable, format!("no current directory: {e}"))),
    }
}

/// The surface `--surface` names, `auto` resolved from the environment.
pub fn surface_kind(choice: SurfaceChoice, env: &dyn Fn(&str) -> Option<String>) -> SurfaceKind {
    match choice {
        SurfaceChoice::Auto => herd_surface::auto_kind(env),
        SurfaceChoice::Herdr => SurfaceKind::Herdr,
        SurfaceChoice::Tmux => SurfaceKind::Tmux,
        SurfaceChoice::Process => SurfaceKind::Process,
    }
}

/// Opens a surface of `kind` from the environment.
pub fn open_surface(
    kind: SurfaceKind,
    artifacts: &Artifacts,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Box<dyn Surface>, Error> {
    Ok(match kind {
        SurfaceKind::Process => Box::new(herd_surface::process::Process::new(artifacts.clone())),
        // Children of one parent share its herd window, unless $HERD_TMUX_PLACEMENT says split.
        SurfaceKind::Tmux => {
            Box::new(herd_surface::tmux::Tmux::from_env(env)?.for_children(artifacts, env)?)
        }
        // Children of one parent share its owned "Agents" tab (docs/surfaces.md, "Herdr").
        SurfaceKind::Herdr => {
            Box::new(herd_surface::herdr::Herdr::from_env(env).grouped(artifacts))
        }
    })
}

/// Opens the surface a `/worktree` handoff's Pi starts on: a child's, but on tmux a window of its
/// own in the caller's session, since the handoff is the conversation's new home and is brought in
/// front, not squeezed beside the parent.
pub fn open_handoff_surface(
    kind: SurfaceKind,
    artifacts: &Artifacts,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Box<dyn Surface>, Error> {
    if kind == SurfaceKind::Tmux {
        let tmux = herd_surface::tmux::Tmux::from_env(env)?
            .with_placement(herd_surface::tmux::Placement::Window);
        return Ok(Box::new(tmux));
    }
    open_surface(kind, artifacts, env)
}

/// This program's path, which launch scripts run as `herd-launch exec`.
pub(crate) fn herd_launch_path(env: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, Error> {
    let found = herd_core::subprocess::sibling_binary("herd-launch");
    if found.is_absolute() && found.is_file() {
        return Ok(found);
    }
    herd_surface::find_on_path("herd-launch", &env("PATH").unwrap_or_default()).ok_or_else(|| {
        Error::new(
            ErrorCode::Unavailable,
            format!(
                "cannot find the herd-launch executable; set ${}",
                herd_core::subprocess::BIN_DIR_ENV
            ),
        )
    })
}
