//! From a `subagent` request and the host's context to a launch plan, before anything is created.
//!
//! Every rule that can refuse a launch runs here, so a refused request changes nothing (exit 2):
//! the request's own rules (herd-tools validates the tool schema and its cross-field rules, and
//! herd-accept the `accept` spec), then the rules that need the host: the role, the working
//! directory, `accept` only for auto-exit children, the runner's fields, `task:<category>`, and
//! what the surface can hold.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use herd_core::escape::{Noun, encode_list};
use herd_core::{Error, ErrorCode};
use herd_protocol::run::SurfaceKind;
use herd_tools::{ModelSpec, SubagentRequest, WorktreeRequest};

use crate::pi::PiCommand;
use crate::roles::{self, Config, Role};

const MODELS: Noun = Noun::new("model", "models");
const PROVIDERS: Noun = Noun::new("provider", "providers");

/// The bound of a request read.
pub const REQUEST_LIMIT: u64 = 1024 * 1024;

/// The host's side of a launch: what the request cannot say.
pub struct Context<'a> {
    /// The environment of the launch.
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// The working directory requests resolve relative paths against.
    pub cwd: PathBuf,
    /// The parent's session, when known (`--parent-session`): needed to fork it.
    pub parent_session: Option<PathBuf>,
    /// The parent's model and thinking level, the last defaults.
    pub parent_model: Option<String>,
    pub parent_thinking: Option<String>,
}

/// What the child is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runner {
    /// The Pi CLI, started by this command.
    Pi { program: PiCommand },
    /// This argv, without a shell; `argv[0]` resolved to a path.
    Exec { argv: Vec<OsString> },
}

impl Runner {
    pub fn kind(&self) -> herd_protocol::run::Runner {
        match self {
            Runner::Pi { .. } => herd_protocol::run::Runner::Pi,
            Runner::Exec { .. } => herd_protocol::run::Runner::Exec,
        }
    }
}

/// A launch, resolved and validated.
#[derive(Debug, Clone)]
pub struct Plan {
    pub request: SubagentRequest,
    /// The request as given (`accept` verbatim), kept for a later model-fallback launch.
    pub request_json: serde_json::Value,
    pub runner: Runner,
    pub surface: SurfaceKind,
    /// The child's working directory; with a worktree, the source repository.
    pub cwd: PathBuf,
    pub agent_dir: PathBuf,
    pub role: Option<Role>,
    /// The models to try in order; empty: Pi's own default.
    pub models: Vec<String>,
    pub thinking: Option<String>,
    /// The allowlist without the child protocol tools; `None`: unrestricted.
    pub tools: Option<Vec<String>>,
    pub denied_tools: Vec<String>,
    pub skills: Vec<String>,
    pub auto_exit: bool,
    pub interactive: bool,
    pub persistent: bool,
    pub fork: bool,
    /// The parent's session to fork or to record as lineage.
    pub parent_session: Option<PathBuf>,
    pub accept: Option<herd_accept::spec::AcceptSpec>,
    /// The acceptance gate of the child's final report; `None`: no gate (level none
    /// inferred, an exec runner or a persistent specialist without an explicit one).
    pub acceptance: Option<herd_protocol::accept::Gate>,
    /// Whether the request gave `acceptance` or `gate` (an explicit gate fails the run).
    pub acceptance_explicit: bool,
    pub worktree: Option<WorktreeRequest>,
    pub diagnostics: Vec<String>,
    /// Set for `herd-launch resume`: the saved session to continue, and the follow-up message.
    pub resume: Option<Resume>,
    /// Models earlier runs of this request already tried (a `--fallback-of` launch).
    pub attempted: Vec<String>,
    /// The run a model fallback replaces (`spawn --fallback-of`).
    pub fallback_of: Option<String>,
    /// The parent's project-trust decision, which the child inherits (`crate::trust`).
    pub trust: crate::trust::Parent,
    /// The longest the child may run before herd-watch terminates it (`--timeout-ms`).
    pub time_limit_ms: Option<u64>,
    /// What the preflight check of `worktree` found (the source, its base commit, the checkout
    /// path, the setup), which the first attempt's creation starts from instead of asking git
    /// again; the checkout directory and the branch are checked again under the checkout's lock.
    pub worktree_checked: Option<herd_worktree::create::Plan>,
    /// How the child is confined (`crate::sandbox`).
    pub confinement: crate::sandbox::Confinement,
    /// The child's hard budget (`crate::budget`): the request's, within what its parent run has
    /// left.
    pub budget: Option<herd_protocol::usage::Budget>,
}

/// What a resume continues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resume {
    pub session: PathBuf,
    pub message: Option<String>,
    /// A worktree child's retained worktree, which the resumed run works in again
    /// (`herd-launch resurrect`).
    pub worktree: Option<herd_protocol::run::WorktreeRef>,
    /// The lost run this resume brings back (`herd-launch resurrect`).
    pub resurrects: Option<String>,
}

/// Which runner the command line chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunnerChoice {
    Pi,
    Exec,
}

/// What one spawn is asked to launch, before it is planned: the request and the choices given
/// with it, from the command line or, for a `--fallback-of` launch, from the attempt it
/// replaces.
#[derive(Debug, Clone)]
pub struct LaunchInput {
    /// The `subagent` tool's parameters, as JSON.
    pub request: Vec<u8>,
    pub surface: SurfaceKind,
    pub runner: RunnerChoice,
    /// The exec runner's command.
    pub argv: Vec<OsString>,
    /// The time limit of an exec child.
    pub time_limit_ms: Option<u64>,
    /// The attempt this launch replaces (`--fallback-of`).
    pub fallback_of: Option<String>,
    /// The models earlier attempts tried, left out of the candidates.
    pub tried: Vec<String>,
    /// The trust decision the replaced attempt was launched with, kept for its successor;
    /// `None` asks the environment.
    pub trust: Option<crate::trust::Parent>,
}

/// Plans `input`: its request parsed, validated and resolved, then what a fallback launch
/// carries over from the attempt it replaces.
pub fn plan(input: &LaunchInput, ctx: &Context<'_>) -> Result<Plan, Error> {
    if input.time_limit_ms.is_some() && input.runner != RunnerChoice::Exec {
        return Err(Error::invalid(
            "--timeout-ms",
            "a time limit is for the exec runner (--runner exec)",
        ));
    }
    let mut plan = plan_request(
        &input.request,
        input.runner,
        &input.argv,
        input.surface,
        ctx,
    )?;
    if let Some(trust) = &input.trust {
        plan.trust = trust.clone();
    }
    plan.fallback_of.clone_from(&input.fallback_of);
    plan.time_limit_ms = input.time_limit_ms;
    if !input.tried.is_empty() {
        plan.models.retain(|m| !input.tried.contains(m));
        plan.attempted.clone_from(&input.tried);
        if plan.models.is_empty() {
            return Err(Error::invalid(
                "fallback_of",
                "no model candidate is left to try",
            ));
        }
    }
    Ok(plan)
}

/// The checks of a request that hold on any machine: its schema, its `accept` check, its
/// acceptance gate and the time limit's runner. A launch on a host runs them before it asks the
/// host anything, so a request the host would refuse changes nothing on either side.
pub fn check_anywhere(
    bytes: &[u8],
    runner: RunnerChoice,
    time_limit_ms: Option<u64>,
) -> Result<SubagentRequest, Error> {
    if time_limit_ms.is_some() && runner != RunnerChoice::Exec {
        return Err(Error::invalid(
            "--timeout-ms",
            "a time limit is for the exec runner (--runner exec)",
        ));
    }
    let (request_json, request) = read_request(bytes)?;
    accept_spec(&request_json)?;
    acceptance_input(&request_json)?;
    Ok(request)
}

/// Parses and validates `bytes` as the `subagent` tool's parameters and resolves them.
fn plan_request(
    bytes: &[u8],
    runner: RunnerChoice,
    argv: &[OsString],
    surface: SurfaceKind,
    ctx: &Context<'_>,
) -> Result<Plan, Error> {
    // 1. The request, as the `subagent` tool's schema reads it.
    let (request_json, request) = read_request(bytes)?;
    let accept = accept_spec(&request_json)?;
    let acceptance_input = acceptance_input(&request_json)?;

    // 2. The runner, the directory and the role.
    let runner = choose_runner(runner, argv, &request, ctx)?;
    let exec = matches!(runner, Runner::Exec { .. });
    let budget = requested_budget(&request, exec)?;
    let (cwd, agent_dir, role) = where_it_runs(&request, ctx)?;

    // 3. How the child lives: autonomous, interactive or persistent.
    let persistent = request.persistent;
    let (auto_exit, interactive) = how_it_lives(&request, exec, role.as_ref(), surface)?;

    // 4. What Pi runs it with: models, thinking, tools, skills, the parent's conversation.
    let mut diagnostics = Vec::new();
    let config = if exec {
        Config::default()
    } else {
        Config::load(&agent_dir)?
    };
    let models = choose_models(
        &request,
        exec,
        role.as_ref(),
        &config,
        ctx,
        &cwd,
        &mut diagnostics,
    )?;
    let thinking = choose_thinking(&request, exec, role.as_ref(), ctx);
    let (tools, denied_tools) = choose_tools(&request, role.as_ref())?;
    let skills = match &request.skills {
        Some(list) => roles::list(list),
        None => role
            .as_ref()
            .and_then(|r| r.skills.clone())
            .unwrap_or_default(),
    };
    let fork = choose_fork(&request, exec, role.as_ref(), ctx, &mut diagnostics)?;

    // 5. The acceptance gate.
    let acceptance_explicit = acceptance_input != herd_accept::report::AcceptanceInput::Omitted;
    let acceptance = choose_acceptance(
        &request,
        &acceptance_input,
        exec,
        role.as_ref(),
        tools.as_deref(),
    )?;

    // 6. Pi itself, found last: a refused request is told as such first.
    let runner = match runner {
        Runner::Pi { .. } => Runner::Pi {
            program: crate::pi::find_pi(ctx.env)?,
        },
        exec => exec,
    };
    // A model the request names is one Pi has credentials for (a role's, the configuration's or
    // the parent's is not asked about: a listing costs a Pi start).
    if let (Runner::Pi { program }, Some(ModelSpec::Models(named))) =
        (&runner, request.model_spec())
    {
        crate::catalog::recent::check_named(&named, program, &cwd, ctx.env)?;
    }
    let trust = crate::trust::Parent::from_env(ctx.env, &ctx.cwd)?;
    // 7. The child's confinement: refused here, before anything is written, when it is wider
    // than the person allows or cannot be enforced on this machine.
    let confinement = crate::sandbox::resolve(
        herd_sandbox::Asked {
            mode: request.sandbox,
            network: request.network()?,
        },
        herd_sandbox::Asked {
            mode: role.as_ref().and_then(|r| r.sandbox),
            network: role.as_ref().and_then(|r| r.network.clone()),
        },
        matches!(runner, Runner::Pi { .. }).then_some(crate::sandbox::PiModel {
            agent_dir: &agent_dir,
            models: &models,
        }),
        request.host.is_some(),
        ctx.env,
    )?;
    Ok(Plan {
        request,
        request_json,
        runner,
        surface,
        cwd,
        agent_dir,
        role,
        models,
        thinking,
        tools,
        denied_tools,
        skills,
        auto_exit,
        interactive,
        persistent,
        fork,
        parent_session: ctx.parent_session.clone(),
        accept,
        acceptance,
        acceptance_explicit,
        worktree: None,
        diagnostics,
        resume: None,
        attempted: Vec::new(),
        fallback_of: None,
        trust,
        time_limit_ms: None,
        worktree_checked: None,
        confinement,
        budget,
    }
    .with_worktree())
}

/// The request's `budget`, refused (field `budget`) where the watcher could not hold the child
/// to it: a child with no Pi session (the exec runner), a persistent specialist (stopped only on
/// its parent's directive) and a child on another machine (its session is there).
fn requested_budget(
    request: &SubagentRequest,
    exec: bool,
) -> Result<Option<herd_protocol::usage::Budget>, Error> {
    let Some(limits) = request.budget()? else {
        return Ok(None);
    };
    let refused = if exec {
        Some("a budget is for a Pi child: the exec runner records no usage")
    } else if request.persistent {
        Some("a budget is for an auto-exit child, not a persistent specialist")
    } else if request.host.is_some() {
        Some("a budget is not yet held on another machine: omit budget or host")
    } else {
        None
    };
    if let Some(why) = refused {
        return Err(Error::invalid("budget", why));
    }
    Ok(Some(herd_protocol::usage::Budget {
        tokens: limits.tokens,
        usd: limits.usd.and_then(herd_protocol::usage::Usd::new),
    }))
}

/// The request's `accept` (the check a child's work must pass), parsed.
fn accept_spec(
    request_json: &serde_json::Value,
) -> Result<Option<herd_accept::spec::AcceptSpec>, Error> {
    match request_json.get("accept") {
        Some(value) if !value.is_null() => Ok(Some(
            herd_accept::spec::AcceptSpec::from_tool_value(value, "accept")?,
        )),
        _ => Ok(None),
    }
}

/// The child's working directory (the request's `cwd` under the caller's), the agent
/// directory its configuration comes from, and its role.
fn where_it_runs(
    request: &SubagentRequest,
    ctx: &Context<'_>,
) -> Result<(PathBuf, PathBuf, Option<Role>), Error> {
    let cwd = match &request.cwd {
        Some(cwd) => ctx.cwd.join(cwd),
        None => ctx.cwd.clone(),
    };
    if !cwd.is_dir() {
        return Err(Error::invalid(
            "cwd",
            format!("{} is not a directory", cwd.display()),
        ));
    }
    let agent_dir = crate::names::agent_dir(request.cwd.as_ref().map(|_| cwd.as_path()), ctx.env)?;
    let role = match &request.agent {
        Some(name) => Some(roles::load(name, &cwd, &agent_dir)?),
        None => None,
    };
    Ok((cwd, agent_dir, role))
}

/// The thinking level: the request's, else (for Pi) the role's, else the parent's.
fn choose_thinking(
    request: &SubagentRequest,
    exec: bool,
    role: Option<&Role>,
    ctx: &Context<'_>,
) -> Option<String> {
    match request.thinking {
        Some(t) => Some(t.as_str().to_owned()),
        None if exec => None,
        None => role
            .and_then(|r| r.thinking.clone())
            .or_else(|| ctx.parent_thinking.clone()),
    }
}

/// Reads the request as the `subagent` tool's schema does: its JSON, and the typed request.
fn read_request(bytes: &[u8]) -> Result<(serde_json::Value, SubagentRequest), Error> {
    let json: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        Error::new(
            ErrorCode::InvalidRequest,
            format!("the request is not valid JSON: {e}"),
        )
    })?;
    let mut request: SubagentRequest = herd_tools::parse("subagent", &json)?;
    // "Names are abbreviated to 80 characters": a longer name is kept as its first 79
    // characters and `…`, the form every line that shows it uses.
    request.name = herd_core::escape::abbreviate_name(&request.name).into_owned();
    Ok((json, request))
}

/// How the child lives: whether it exits by itself (a bare spawn does; a role says so with
/// `auto-exit: true`; a Pi child the request asks to be `interactive: true` does not: it waits
/// for its person after each answer) and whether it is interactive. A check needs a child that
/// exits, and an interactive or persistent Pi child a terminal.
fn how_it_lives(
    request: &SubagentRequest,
    exec: bool,
    role: Option<&roles::Role>,
    surface: SurfaceKind,
) -> Result<(bool, bool), Error> {
    let persistent = request.persistent;
    let for_a_person = !exec && request.interactive == Some(true);
    let auto_exit =
        !persistent && !for_a_person && (exec || role.is_none_or(|r| r.auto_exit == Some(true)));
    if request.accept.is_some() && !auto_exit {
        let why = match (for_a_person, role) {
            (true, _) => "`interactive: true` keeps it open for its person".to_owned(),
            (false, Some(role)) => format!("role {} has no `auto-exit: true`", role.name),
            (false, None) => "it is persistent".to_owned(),
        };
        return Err(Error::invalid(
            "accept",
            format!("accept is refused for a child that does not exit by itself ({why})"),
        ));
    }
    let interactive = request
        .interactive
        .or(role.and_then(|r| r.interactive))
        .unwrap_or(!auto_exit);
    if !exec && surface == SurfaceKind::Process && (persistent || !auto_exit) {
        return Err(Error::invalid(
            "surface",
            "an interactive or persistent Pi child needs a terminal: use --surface tmux or herdr",
        ));
    }
    Ok((auto_exit, interactive))
}

/// The acceptance gate of the run: none for a specialist (whose tasks are not gated) or a
/// command without an explicit gate or a review; an explicit gate alone for a command; else the
/// gate inferred from the role, its tools and the task.
fn choose_acceptance(
    request: &SubagentRequest,
    acceptance_input: &herd_accept::report::AcceptanceInput,
    exec: bool,
    role: Option<&roles::Role>,
    tools: Option<&[String]>,
) -> Result<Option<herd_protocol::accept::Gate>, Error> {
    let persistent = request.persistent;
    let acceptance_explicit = *acceptance_input != herd_accept::report::AcceptanceInput::Omitted;
    if persistent && (acceptance_explicit || request.reviews.is_some()) {
        let field = if request.reviews.is_some() {
            "reviews"
        } else if request.gate.is_some() {
            "gate"
        } else {
            "acceptance"
        };
        return Err(Error::invalid(
            field,
            "a persistent specialist's tasks are not gated; give acceptance to an auto-exit child",
        ));
    }
    // Every Pi run resolves a gate; an exec command only an explicit one or a reviewer's, a
    // specialist none.
    Ok(
        if (exec || persistent) && !acceptance_explicit && request.reviews.is_none() {
            None
        } else if exec && request.reviews.is_none() {
            // Nothing is inferred for a command: the explicit gate is the whole of it.
            Some(herd_accept::report::config::resolve(
                acceptance_input,
                herd_protocol::accept::Level::None,
            ))
        } else {
            let context = acceptance_context(
                role,
                tools,
                &request.task,
                request.worktree.is_some(),
                request.reviews.is_some(),
            );
            Some(herd_accept::report::config::resolve_inferred(
                acceptance_input,
                context,
            ))
        },
    )
}

/// The runner: the exec runner's command resolved on `PATH` (and no Pi setting beside it), or
/// Pi, whose program is looked up once every rule of the request has passed.
fn choose_runner(
    choice: RunnerChoice,
    argv: &[OsString],
    request: &SubagentRequest,
    ctx: &Context<'_>,
) -> Result<Runner, Error> {
    match choice {
        RunnerChoice::Exec => {
            let Some((program, rest)) = argv.split_first() else {
                return Err(Error::invalid(
                    "argv",
                    "the exec runner needs a command after `--`",
                ));
            };
            for (field, set) in [
                ("agent", request.agent.is_some()),
                ("model", request.model.is_some()),
                ("thinking", request.thinking.is_some()),
                ("skills", request.skills.is_some()),
                ("tools", request.tools.is_some()),
                ("fork", request.fork == Some(true)),
            ] {
                if set {
                    return Err(Error::invalid(
                        field,
                        format!(
                            "`{field}` is a Pi setting; the exec runner runs the command given after `--`"
                        ),
                    ));
                }
            }
            let path = (ctx.env)("PATH").unwrap_or_default();
            let resolved = resolve_program(program, &path).ok_or_else(|| {
                Error::new(
                    ErrorCode::Unavailable,
                    format!(
                        "`{}` is not an executable on PATH",
                        Path::new(program).display()
                    ),
                )
                .with_field("argv")
            })?;
            let mut argv = vec![resolved.into_os_string()];
            argv.extend(rest.iter().cloned());
            Ok(Runner::Exec { argv })
        }
        RunnerChoice::Pi if !argv.is_empty() => Err(Error::invalid(
            "argv",
            "a command after `--` is only for the exec runner (--runner exec)",
        )),
        RunnerChoice::Pi => Ok(Runner::Pi {
            program: PiCommand::direct(PathBuf::new()),
        }),
    }
}

/// The models, in the order they are tried: the request's list, a `task:<category>`'s
/// candidates whose provider Pi has credentials for (asked now; a worktree launch takes the first
/// of them), else the role's, the configuration's or the parent's.
fn choose_models(
    request: &SubagentRequest,
    exec: bool,
    role: Option<&roles::Role>,
    config: &Config,
    ctx: &Context<'_>,
    cwd: &Path,
    diagnostics: &mut Vec<String>,
) -> Result<Vec<String>, Error> {
    match request.model_spec() {
        Some(ModelSpec::Models(list)) => {
            if list.iter().any(|m| m.starts_with("task:")) {
                return Err(Error::invalid(
                    "model",
                    "task:<category> must be the whole value, not an entry of a list",
                ));
            }
            Ok(list)
        }
        Some(ModelSpec::Task(category)) => {
            let candidates = config.task_candidates(&category)?;
            let available = crate::catalog::list(&crate::pi::find_pi(ctx.env)?, cwd)?;
            let (authenticated, skipped) = crate::catalog::authenticated(candidates, &available);
            if authenticated.is_empty() {
                return Err(Error::invalid(
                    "model",
                    format!(
                        "task:{category} has no authenticated candidate: Pi has no credentials for the provider of {} (it has credentials for {}); log in to one, or name another model",
                        encode_list(candidates, 1_000, MODELS),
                        match crate::catalog::providers(&available) {
                            p if p.is_empty() => "no provider".to_owned(),
                            p => encode_list(&p.into_iter().collect::<Vec<_>>(), 1_000, PROVIDERS),
                        }
                    ),
                ));
            }
            if !skipped.is_empty() {
                diagnostics.push(format!(
                    "task:{category} skipped {}: Pi has no credentials for their provider",
                    encode_list(&skipped, 1_000, MODELS)
                ));
            }
            if request.worktree.is_some() {
                diagnostics.push(format!(
                    "task:{category} resolved to its first authenticated candidate {} for the worktree",
                    authenticated[0]
                ));
                Ok(vec![authenticated[0].clone()])
            } else {
                Ok(authenticated)
            }
        }
        None if exec => Ok(Vec::new()),
        None => Ok(role
            .and_then(|r| r.model.clone())
            .or_else(|| role.and_then(|r| config.agent_model(&r.name).map(str::to_owned)))
            .or_else(|| config.default_model.clone())
            .or_else(|| ctx.parent_model.clone())
            .into_iter()
            .collect()),
    }
}

/// The tools the child gets (the request's, else the role's) and those it is denied (the
/// role's, plus the spawning tools of a role that may not spawn).
fn choose_tools(
    request: &SubagentRequest,
    role: Option<&roles::Role>,
) -> Result<(Option<Vec<String>>, Vec<String>), Error> {
    let tools = match &request.tools {
        Some(list) => {
            let names = roles::list(list);
            if names.is_empty() {
                return Err(Error::invalid(
                    "tools",
                    "names no tool; omit it for the role's or Pi's default",
                ));
            }
            Some(names)
        }
        None => role.and_then(|r| r.tools.clone()),
    };
    if let Some(tools) = &tools {
        check_tool_names(tools, "tools")?;
    }
    let mut denied_tools = role.map(|r| r.deny_tools.clone()).unwrap_or_default();
    if role.and_then(|r| r.spawning) == Some(false) {
        for tool in roles::SPAWNING_TOOLS {
            if !denied_tools.iter().any(|d| d == tool) {
                denied_tools.push(tool.to_owned());
            }
        }
    }
    check_tool_names(&denied_tools, "agent")?;
    Ok((tools, denied_tools))
}

/// Whether the child forks the parent's conversation: the request's `fork`, else the role's
/// default ([`Role::forks_by_default`]). An explicit fork without a parent session is refused with the reason; a
/// role's default gives way to a fresh child, and the acknowledgement says so.
fn choose_fork(
    request: &SubagentRequest,
    exec: bool,
    role: Option<&roles::Role>,
    ctx: &Context<'_>,
    diagnostics: &mut Vec<String>,
) -> Result<bool, Error> {
    let role_forks = role.is_some_and(Role::forks_by_default);
    let mut fork = !exec && request.fork.unwrap_or(role_forks);
    if fork && ctx.parent_session.is_none() {
        if request.fork == Some(true) {
            return Err(Error::invalid(
                "fork",
                "forking copies the parent's conversation, and this launch has no parent session: pass --parent-session, or fork: false for a fresh child",
            ));
        }
        fork = false;
        diagnostics.push(
            "the role forks by default (its session-mode or defaultContext), but there is no parent session to copy: the child starts fresh".to_owned(),
        );
    }
    if fork && request.worktree.is_some() {
        diagnostics.push(
            "the fork child starts in the new worktree with the parent's conversation".to_owned(),
        );
    }
    Ok(fork)
}

impl Plan {
    /// The request's worktree, with the note that a persistent specialist holds it for life.
    fn with_worktree(mut self) -> Plan {
        self.worktree = self.request.worktree.clone();
        if self.persistent && self.worktree.is_some() {
            self.diagnostics
                .push("the persistent specialist holds its worktree for its whole life".to_owned());
        }
        self
    }

    /// The model of attempt `n` (0-based), `None` for Pi's default.
    pub fn model(&self, attempt: usize) -> Option<&str> {
        self.models.get(attempt).map(String::as_str)
    }
}

/// The request's `acceptance` and `gate`, validated by herd-accept: every problem is refused
/// with the path of its field before anything is written.
fn acceptance_input(
    request: &serde_json::Value,
) -> Result<herd_accept::report::AcceptanceInput, Error> {
    let mut given = serde_json::Map::new();
    for key in ["acceptance", "gate"] {
        if let Some(value) = request.get(key).filter(|v| !v.is_null()) {
            given.insert(key.to_owned(), value.clone());
        }
    }
    if given.is_empty() {
        return Ok(herd_accept::report::AcceptanceInput::Omitted);
    }
    herd_accept::report::config::parse_input(&serde_json::Value::Object(given))
        .map_err(herd_accept::report::Diagnostics::into_error)
}

/// What the run is, for acceptance inference (docs/tools.md, "Acceptance gates"): a reviewer; then
/// the task's own explicit mutation or no-edit intent, which wins over the role; then the role's
/// `acceptance-role`; then the name heuristics (a reviewer or scout role is read-only, a worker a
/// writer); then a tool set that cannot change files. A writer in a managed worktree is the risky
/// context.
pub fn acceptance_context(
    role: Option<&Role>,
    tools: Option<&[String]>,
    task: &str,
    worktree: bool,
    reviewer: bool,
) -> herd_accept::report::config::Context {
    use herd_accept::report::config::Context;
    use herd_accept::report::intent::{TaskIntent, task_intent};
    let writer = if worktree {
        Context::RiskyWriter
    } else {
        Context::Writer
    };
    if reviewer {
        return Context::ReadOnly;
    }
    match task_intent(task) {
        Some(TaskIntent::NoEdit) => return Context::ReadOnly,
        Some(TaskIntent::Mutation) => return writer,
        None => {}
    }
    match role.and_then(|r| r.acceptance_role) {
        Some(roles::AcceptanceRole::ReadOnly) => return Context::ReadOnly,
        Some(roles::AcceptanceRole::Writer) => return writer,
        None => {}
    }
    let name = role.map(|r| r.name.to_lowercase()).unwrap_or_default();
    if ["review", "scout"].iter().any(|word| name.contains(word)) {
        return Context::ReadOnly;
    }
    if name.contains("worker") {
        return writer;
    }
    if let Some(tools) = tools {
        let mutating = ["edit", "write", "bash"];
        if !tools.iter().any(|t| mutating.contains(&t.as_str())) {
            return Context::ReadOnly;
        }
    }
    writer
}

fn check_tool_names(names: &[String], field: &str) -> Result<(), Error> {
    for name in names {
        if name.chars().any(|c| c.is_whitespace() || c == ',') {
            return Err(Error::invalid(
                field,
                format!("{name:?} is not a tool name"),
            ));
        }
    }
    Ok(())
}

/// Resolves a program: a path with a slash must be executable; a bare name is looked up on `path`.
pub fn resolve_program(program: &OsString, path: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let candidate = Path::new(program);
    if candidate.as_os_str().is_empty() {
        return None;
    }
    if candidate.components().count() > 1 {
        let ok = std::fs::metadata(candidate)
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
        return ok
            .then(|| std::path::absolute(candidate).unwrap_or_else(|_| candidate.to_path_buf()));
    }
    herd_surface::find_on_path(&candidate.to_string_lossy(), path)
}

#[cfg(test)]
mod acceptance_tests;
