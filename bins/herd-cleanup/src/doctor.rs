//! `herd-cleanup doctor`: what herd needs and what it sees, one check at a time.
//!
//! Each check says whether it passed, whether herd needs it here (git, a trustworthy `/proc`, a
//! writable artifacts directory, a Pi that starts, since the pi runner is the default, and Herdr
//! when `HERDR_ENV=1` says it is in use), and why it failed. Where Herdr is in use or installed,
//! whether its notifications are on ([`toasts`]). Runs whose child is gone without a
//! delivered result, or whose record cannot be read, are listed as findings that need a hand.
//!
//! The command succeeds (exit 0) only when every needed check passes and no run needs a hand.
//! Otherwise its answer is a valid negative one, exit 1, as `herd-accept check` rejecting is:
//! the doctor did find out, and what it found is wrong. (Exit 4 would tell a script that the
//! doctor itself got no answer, and so that asking again might help.)

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_core::identity::{self, Judgement};
use herd_core::subprocess::{self, Command, Keep};
use herd_git::{Deadline, Git, budget};
use herd_herdr::Herdr;
use herd_protocol::layout::{Artifacts, SessionFiles};
use herd_protocol::run::{LaunchStatus, RunRecord};

use crate::holders;
use crate::inspect::{shown, shown_path};

mod toasts;

/// The budget of a version probe (`tmux -V`; `pi --version` takes a few seconds to load).
const PROBE_BUDGET: Duration = Duration::from_secs(15);

/// The environment variable naming the Pi CLI (default: `pi` on `PATH`).
pub const PI_BIN_ENV: &str = "HERD_PI";
/// The environment variable naming the runtime `$HERD_PI` runs on, when it is a script.
pub const PI_NODE_ENV: &str = "HERD_PI_NODE";

use herd_protocol::cleanup::{Check, DoctorReport, FindingState, RunFinding};

/// What the doctor looks at.
pub struct Setup {
    pub git: Git,
    pub herdr: Herdr,
    pub herdr_env: Option<std::ffi::OsString>,
    pub path_env: Option<std::ffi::OsString>,
    pub pi: std::ffi::OsString,
    /// The runtime that runs `pi`, when `$HERD_PI_NODE` names one.
    pub pi_node: Option<std::ffi::OsString>,
    pub artifacts: Result<Artifacts, herd_core::Error>,
    pub managed_root: Result<PathBuf, herd_core::Error>,
}

impl Setup {
    pub fn from_env(artifacts: Result<Artifacts, herd_core::Error>) -> Setup {
        Setup {
            git: Git::from_env(),
            herdr: Herdr::from_env().with_budget(herd_herdr::budget::ORDINARY),
            herdr_env: std::env::var_os("HERDR_ENV"),
            path_env: std::env::var_os("PATH"),
            pi: std::env::var_os(PI_BIN_ENV)
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| "pi".into()),
            pi_node: std::env::var_os(PI_NODE_ENV).filter(|v| !v.is_empty()),
            artifacts,
            managed_root: herd_protocol::layout::managed_root(),
        }
    }
}

/// Runs every check.
pub fn doctor(setup: &Setup) -> DoctorReport {
    let mut checks = vec![git(&setup.git), tmux(), sandbox(), herdr(setup)];
    checks.extend(herdr_notifications(setup));
    checks.push(pi(&setup.pi, setup.pi_node.as_deref()));
    checks.push(proc());
    let mut runs = Vec::new();
    let mut runs_inspected = 0;
    match &setup.artifacts {
        Ok(artifacts) => {
            checks.push(artifacts_writable(artifacts));
            match artifacts.run_ids() {
                Ok(ids) => {
                    runs_inspected = ids.len();
                    let boot = identity::boot_id().ok();
                    runs = ids
                        .iter()
                        .filter_map(|id| run_finding(artifacts, id, boot.as_deref()))
                        .collect();
                    checks.push(Check {
                        name: "runs".into(),
                        ok: runs.is_empty(),
                        needed: true,
                        detail: runs_detail(ids.len(), runs.len()),
                    });
                }
                Err(e) => checks.push(Check {
                    name: "runs".into(),
                    ok: false,
                    needed: true,
                    detail: e.message,
                }),
            }
        }
        Err(e) => checks.push(Check {
            name: "artifacts".into(),
            ok: false,
            needed: true,
            detail: e.message.clone(),
        }),
    }
    checks.extend(other_directories(setup.artifacts.as_ref().ok()));
    checks.push(managed_root(&setup.managed_root));
    DoctorReport {
        ok: checks.iter().all(|c| c.ok || !c.needed),
        checks,
        runs_inspected,
        runs,
    }
}

fn git(git: &Git) -> Check {
    let answer = git.run(
        Path::new("/"),
        ["--version"],
        &Deadline::after(budget::CLEANUP),
    );
    match answer {
        Ok(out) => {
            let text = String::from_utf8_lossy(&out).trim().to_owned();
            let ok = text.starts_with("git version ");
            Check {
                name: "git".into(),
                ok,
                needed: true,
                detail: if ok {
                    text
                } else {
                    format!("unexpected answer to `git --version`: {}", shown(&text))
                },
            }
        }
        Err(e) => Check {
            name: "git".into(),
            ok: false,
            needed: true,
            detail: format!("{} (`{}`)", e, git.bin().display()),
        },
    }
}

/// Runs `program args` and returns its first line of output, or why it could not.
fn probe(program: &OsStr, args: &[&OsStr]) -> Result<String, String> {
    let cmd = Command::new(program, PROBE_BUDGET)
        .args(args.iter().copied())
        .stdin_null()
        .stdout_cap(4096, Keep::Head)
        .stderr_cap(4096, Keep::Tail);
    let out = subprocess::run(&cmd).map_err(|e| match e {
        subprocess::Error::ProgramNotFound { .. } => {
            format!("`{}` not found", program.to_string_lossy())
        }
        other => other.to_string(),
    })?;
    let line = || {
        let args: Vec<_> = args.iter().map(|a| a.to_string_lossy()).collect();
        shown(&format!("{} {}", program.to_string_lossy(), args.join(" ")))
    };
    if out.timed_out {
        return Err(format!(
            "`{}` did not answer within {}s",
            line(),
            PROBE_BUDGET.as_secs()
        ));
    }
    let first = |s: &str| s.lines().next().unwrap_or_default().trim().to_owned();
    if out.success() {
        Ok(first(&out.stdout.text()))
    } else {
        let stderr = out.stderr.text();
        let said = match (first(&stderr), explanation(&stderr)) {
            (said, _) if said.is_empty() => first(&out.stdout.text()),
            (said, Some(why)) if why != said => format!("{said} … {why}"),
            (said, _) => said,
        };
        Err(format!("`{}` failed: {}", line(), shown(&said)))
    }
}

/// The line of a failed program's stderr that says what went wrong: Node's (and most
/// runtimes') `SyntaxError: …`, `Error [ERR_…]: …`, whose first line is only where it happened
/// (`file:///…/cli.js:2`).
fn explanation(stderr: &str) -> Option<String> {
    stderr.lines().map(str::trim).find_map(|line| {
        let (head, rest) = line.split_once(':')?;
        let name = head.split(" [").next().unwrap_or_default();
        let named = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric())
            && (name.ends_with("Error") || name.ends_with("Exception"));
        (named && !rest.trim().is_empty()).then(|| line.to_owned())
    })
}

fn tmux() -> Check {
    let inside = std::env::var_os("TMUX").is_some_and(|v| !v.is_empty());
    match probe(OsStr::new("tmux"), &[OsStr::new("-V")]) {
        Ok(version) => Check {
            name: "tmux".into(),
            ok: true,
            needed: false,
            detail: format!(
                "{} ({})",
                shown(&version),
                if inside {
                    "inside a tmux session: the tmux surface is available"
                } else {
                    "not inside tmux"
                }
            ),
        },
        Err(reason) => Check {
            name: "tmux".into(),
            ok: false,
            needed: inside,
            detail: format!("{reason}; needed only for the tmux surface"),
        },
    }
}

/// Whether this machine confines children as the person's configuration asks: the policy in one
/// line, and bubblewrap made to start a sandbox (`docs/sandbox.md`).
fn sandbox() -> Check {
    let env = |k: &str| std::env::var(k).ok();
    let home = env("HOME")
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "/".into());
    let config_dir = match env("XDG_CONFIG_HOME").filter(|d| !d.is_empty()) {
        Some(dir) => std::path::PathBuf::from(dir).join("herd"),
        None => std::path::Path::new(&home).join(".config/herd"),
    };
    let config = match herd_sandbox::Config::load(&config_dir, std::path::Path::new(&home)) {
        Ok(config) => config,
        Err(err) => {
            return Check {
                name: "sandbox".into(),
                ok: false,
                needed: true,
                detail: format!("{}; every spawn is refused until it is fixed", err.message),
            };
        }
    };
    let policy = config.limits.default;
    if !policy.confines() {
        let detail = if config.file.is_some() {
            "children run unconfined, as your configuration chose".to_owned()
        } else {
            "children run unconfined: `[sandbox] mode = \"workspace\"` in ~/.config/herd/config.toml confines them (docs/sandbox.md)".to_owned()
        };
        return Check {
            name: "sandbox".into(),
            ok: true,
            needed: false,
            detail,
        };
    }
    let path = std::env::var_os("PATH");
    let Some(bwrap) = herd_sandbox::bwrap::find(path.as_deref()) else {
        return Check {
            name: "sandbox".into(),
            ok: false,
            needed: true,
            detail: format!(
                "bubblewrap (bwrap) is not on PATH, so every spawn is refused; to fix: {}",
                herd_sandbox::bwrap::FIX
            ),
        };
    };
    let args = [
        "--ro-bind",
        "/",
        "/",
        "--unshare-pid",
        "--proc",
        "/proc",
        "--",
        "true",
    ];
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    match probe(bwrap.as_os_str(), &args) {
        Ok(_) => Check {
            name: "sandbox".into(),
            ok: true,
            needed: true,
            detail: policy.describe(),
        },
        Err(reason) => Check {
            name: "sandbox".into(),
            ok: false,
            needed: true,
            detail: format!(
                "{reason}: bubblewrap cannot make a sandbox here (are unprivileged user namespaces turned off?), so confined children fail at their start"
            ),
        },
    }
}

fn herdr(setup: &Setup) -> Check {
    let in_use = setup.herdr_env.as_deref() == Some(OsStr::new("1"));
    if !in_use {
        return Check {
            name: "herdr".into(),
            ok: true,
            needed: false,
            detail: "not in use (HERDR_ENV is not 1)".into(),
        };
    }
    if !setup.herdr.executable_found(setup.path_env.as_deref()) {
        return Check {
            name: "herdr".into(),
            ok: false,
            needed: true,
            detail: format!(
                "HERDR_ENV=1 but `{}` was not found",
                setup.herdr.program().to_string_lossy()
            ),
        };
    }
    match setup.herdr.workspace_list() {
        Ok(list) => Check {
            name: "herdr".into(),
            ok: true,
            needed: true,
            detail: format!("reachable, {} workspaces open", list.len()),
        },
        Err(e) => Check {
            name: "herdr".into(),
            ok: false,
            needed: true,
            detail: format!(
                "HERDR_ENV=1 but herdr is not reachable: {}",
                shown(&e.to_string())
            ),
        },
    }
}

/// Whether Herdr shows herd's notices, when Herdr is in use or installed: its `[ui.toast]`
/// configuration ([`toasts`]). Not needed: without them notices show in Pi only.
fn herdr_notifications(setup: &Setup) -> Option<Check> {
    let in_use = setup.herdr_env.as_deref() == Some(OsStr::new("1"));
    if !in_use && !setup.herdr.executable_found(setup.path_env.as_deref()) {
        return None;
    }
    let path = toasts::config_path(|key| std::env::var_os(key));
    Some(toasts::check(&path, toasts::read(&path)))
}

/// Whether Pi starts: `pi --version` (`$HERD_PI`, run by `$HERD_PI_NODE` when set) answers
/// within the probe budget. The pi runner is the default, so herd needs it.
fn pi(program: &OsStr, node: Option<&OsStr>) -> Check {
    let version = OsStr::new("--version");
    let answer = match node {
        Some(node) => probe(node, &[program, version]),
        None => probe(program, &[version]),
    };
    match answer {
        Ok(version) => Check {
            name: "pi".into(),
            ok: true,
            needed: true,
            detail: format!("pi {}", shown(&version)),
        },
        Err(reason) => Check {
            name: "pi".into(),
            ok: false,
            needed: true,
            detail: format!(
                "{reason}: Pi cannot start, and the pi runner is the default (set {PI_BIN_ENV} to a Pi that starts, or launch with --runner exec)"
            ),
        },
    }
}

fn proc() -> Check {
    match holders::scan(&[]) {
        Ok(scan) => {
            let mut detail = format!(
                "readable, {} processes of this user inspected",
                scan.inspected
            );
            if scan.unreadable.count > 0 {
                detail.push_str(&format!(
                    "; {} could not be inspected",
                    scan.unreadable.describe()
                ));
            }
            Check {
                name: "proc".into(),
                ok: true,
                needed: true,
                detail,
            }
        }
        Err(e) => Check {
            name: "proc".into(),
            ok: false,
            needed: true,
            detail: format!(
                "{e}; process holders cannot be detected, so cleanup blocks every removal"
            ),
        },
    }
}

fn artifacts_writable(artifacts: &Artifacts) -> Check {
    let root = artifacts.root();
    // The nearest existing directory is where a write would have to succeed first.
    let mut dir = root.to_path_buf();
    let existing = loop {
        match std::fs::symlink_metadata(&dir) {
            Ok(_) => break Some(dir.clone()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if !dir.pop() {
                    break None;
                }
            }
            Err(_) => break Some(dir.clone()),
        }
    };
    let Some(existing) = existing else {
        return Check {
            name: "artifacts".into(),
            ok: false,
            needed: true,
            detail: format!("no part of {} exists", shown_path(root)),
        };
    };
    let mut failures = Vec::new();
    let dirs: Vec<PathBuf> = if existing == root {
        [
            root.to_path_buf(),
            artifacts.runs_dir(),
            artifacts.worktree_runs_dir(),
        ]
        .into_iter()
        .filter(|d| d.is_dir())
        .collect()
    } else {
        vec![existing.clone()]
    };
    for d in &dirs {
        if let Err(e) = probe_write(d) {
            failures.push(format!("{} is not writable: {e}", shown_path(d)));
        }
    }
    if failures.is_empty() {
        let detail = if existing == root {
            format!("{} is writable", shown_path(root))
        } else {
            format!(
                "{} does not exist yet; {} is writable, so it can be created",
                shown_path(root),
                shown_path(&existing)
            )
        };
        Check {
            name: "artifacts".into(),
            ok: true,
            needed: true,
            detail,
        }
    } else {
        Check {
            name: "artifacts".into(),
            ok: false,
            needed: true,
            detail: failures.join("; "),
        }
    }
}

/// Creates and removes a probe file in `dir`.
fn probe_write(dir: &Path) -> io::Result<()> {
    let probe = dir.join(format!(".herd-doctor-probe.{}", std::process::id()));
    herd_core::sidecar::private()
        .write(true)
        .create_new(true)
        .open(&probe)?;
    std::fs::remove_file(&probe)
}

fn managed_root(root: &Result<PathBuf, herd_core::Error>) -> Check {
    match root {
        Ok(root) => match crate::paths::discover(root) {
            Ok(d) if d.canonical_root.is_none() => Check {
                name: "managed root".into(),
                ok: true,
                needed: false,
                detail: format!("{} does not exist: no managed worktrees", shown_path(root)),
            },
            Ok(d) => Check {
                name: "managed root".into(),
                ok: true,
                needed: false,
                detail: format!(
                    "{}: {}",
                    shown_path(root),
                    match d.found.len() {
                        1 => "1 entry".to_owned(),
                        n => format!("{n} entries"),
                    }
                ),
            },
            Err(e) => Check {
                name: "managed root".into(),
                ok: false,
                needed: false,
                detail: format!(
                    "{}; `herd-cleanup list` cannot take an inventory",
                    shown(&e.to_string())
                ),
            },
        },
        Err(e) => Check {
            name: "managed root".into(),
            ok: false,
            needed: false,
            detail: e.message.clone(),
        },
    }
}

/// A run whose child is gone without a delivered result, or whose record or identity cannot be
/// read; `None` for a run that needs nothing. `boot` is the running boot's ID, when known.
fn run_finding(artifacts: &Artifacts, id: &str, boot: Option<&str>) -> Option<RunFinding> {
    let record = match RunRecord::load(artifacts, id) {
        Ok(record) => record,
        Err(e) => {
            return Some(RunFinding {
                run_id: id.to_owned(),
                name: None,
                state: FindingState::Unreadable,
                detail: format!("the run record cannot be read: {}", shown(&e.message)),
            });
        }
    };
    if std::fs::symlink_metadata(artifacts.run_result(id)).is_ok() {
        return None;
    }
    // Replaced by the next model or candidate: the successor carries the run.
    if herd_protocol::run::Superseded::read(artifacts, id).is_some_and(|s| s.successor.is_some()) {
        return None;
    }
    let finding = |state: FindingState, detail: String| {
        Some(RunFinding {
            run_id: id.to_owned(),
            name: Some(record.name.clone()),
            state,
            detail,
        })
    };
    let files = SessionFiles::new(&record.session_file);
    let process = files.process();
    let identity = if record.session_file.is_empty() {
        Ok(None)
    } else {
        files.read::<identity::Record>()
    };
    if record.status != LaunchStatus::Launched && matches!(identity, Ok(None)) {
        return launch_finding(artifacts, &record)
            .and_then(|(state, detail)| finding(state, detail));
    }
    match identity {
        Ok(Some(identity)) => {
            if boot.is_some_and(|b| b != identity.boot_id) {
                return finding(
                    FindingState::OwnerGone,
                    format!(
                        "the child (PID {}) belonged to an earlier boot and no result was delivered; `herd-watch wait --run {id}` settles it as failed (exit 1), signalling nothing",
                        identity.pid
                    ),
                );
            }
            match identity::judge(&identity) {
                Judgement::Alive => None,
                Judgement::Exited => finding(
                    FindingState::OwnerGone,
                    format!(
                        "the child (PID {}) exited and no result was delivered; `herd-watch wait --run {id}` delivers it",
                        identity.pid
                    ),
                ),
                Judgement::Unknown(_) if identity::proven_gone(&identity).is_some() => finding(
                    FindingState::OwnerGone,
                    format!(
                        "PID {} now names another process, so the child is gone; `herd-watch wait --run {id}` settles it as failed (exit 1), signalling nothing",
                        identity.pid
                    ),
                ),
                Judgement::Unknown(reason) => finding(
                    FindingState::OwnerUnknown,
                    format!("cannot tell whether the child is alive: {}", shown(&reason)),
                ),
            }
        }
        Ok(None) => finding(
            FindingState::OwnerUnknown,
            format!(
                "no identity record at {} and no result delivered",
                shown_path(&process)
            ),
        ),
        Err(e) => finding(
            FindingState::OwnerUnknown,
            format!(
                "the identity record cannot be read: {}",
                shown(&e.to_string())
            ),
        ),
    }
}

/// A run whose launch never placed a child that recorded itself: what `herd-watch wait` will do
/// with it. `None` while its herd-launch still works on it.
fn launch_finding(artifacts: &Artifacts, record: &RunRecord) -> Option<(FindingState, String)> {
    let id = &record.run_id;
    let launcher = identity::Record::read(&artifacts.launcher(id))
        .ok()
        .flatten();
    let gone = launcher.as_ref().and_then(identity::proven_gone);
    if launcher.is_some() && gone.is_none() {
        return None;
    }
    let ended = gone.map_or_else(
        || "no herd-launch identity is recorded".to_owned(),
        |why| format!("herd-launch ended ({})", shown(&why)),
    );
    Some(match record.status {
        LaunchStatus::Failed => (
            FindingState::LaunchFailed,
            format!(
                "the launch failed ({}); `herd-watch wait --run {id}` delivers it as failed (exit 1)",
                shown(
                    record
                        .launch_failure
                        .as_deref()
                        .unwrap_or("no reason recorded")
                )
            ),
        ),
        _ => (
            FindingState::LaunchLost,
            format!(
                "{ended} before the launch placed a child; `herd-watch wait --run {id}` settles it as failed (`lost`, exit 1) unless a child appears within 30 s"
            ),
        ),
    })
}

/// The human form: one line per check (a failed one with its reason), then the runs.
pub fn human(report: &DoctorReport) -> String {
    let mut out = Vec::new();
    for c in &report.checks {
        let status = match (c.ok, c.needed) {
            (true, _) => "ok",
            (false, true) => "FAILED",
            (false, false) => "unavailable",
        };
        out.push(format!("{}: {status}: {}", c.name, c.detail));
    }
    for r in &report.runs {
        let name = r
            .name
            .as_deref()
            .map(|n| format!(" ({})", shown(n)))
            .unwrap_or_default();
        out.push(format!("run {}{name}: {}", r.run_id, r.detail));
    }
    if report.ok {
        out.push("everything herd needs here is fine".into());
        return out.join("\n");
    }
    let failed: Vec<&str> = report
        .checks
        .iter()
        // Runs that need a hand are told below; a runs directory that cannot be read is here.
        .filter(|c| c.needed && !c.ok && (c.name != "runs" || report.runs.is_empty()))
        .map(|c| c.name.as_str())
        .collect();
    if !failed.is_empty() {
        out.push(format!(
            "herd cannot work here until fixed: {}",
            failed.join(", ")
        ));
    }
    match report.runs.len() {
        0 => {}
        1 => out.push("1 run needs a hand: see its line above".into()),
        n => out.push(format!("{n} runs need a hand: see their lines above")),
    }
    out.join("\n")
}

/// The other artifacts directories this user launched from (the index herd-launch keeps): how
/// many of their runs need a hand, so a shell whose own directory is quiet still hears of them.
/// Not needed: each directory's own doctor names its runs. `None` when there is no other.
fn other_directories(current: Option<&Artifacts>) -> Option<Check> {
    let dirs = herd_protocol::artifacts_index::Index::of_user()?
        .directories(None)
        .ok()?;
    let others: Vec<&Artifacts> = dirs
        .iter()
        .filter(|d| current.is_none_or(|c| c.root() != d.root()))
        .collect();
    if others.is_empty() {
        return None;
    }
    let boot = identity::boot_id().ok();
    let (mut records, mut needing) = (0, Vec::new());
    for dir in &others {
        let ids = dir.run_ids().unwrap_or_default();
        records += ids.len();
        let n = ids
            .iter()
            .filter(|id| run_finding(dir, id, boot.as_deref()).is_some())
            .count();
        if n > 0 {
            needing.push((crate::inspect::shown_path(dir.root()), n));
        }
    }
    let mut detail = format!(
        "{} more artifacts {} of this user: {}",
        others.len(),
        if others.len() == 1 {
            "directory"
        } else {
            "directories"
        },
        runs_detail(records, needing.iter().map(|(_, n)| n).sum()),
    );
    for (dir, _) in &needing {
        detail.push_str(&format!(
            "; `herd-cleanup --artifacts {dir} doctor` names them"
        ));
    }
    Some(Check {
        name: "other directories".into(),
        ok: needing.is_empty(),
        needed: false,
        detail,
    })
}

/// The detail of the `runs` check: `1 run record, none needs a hand`.
fn runs_detail(records: usize, need_a_hand: usize) -> String {
    let records = match records {
        1 => "1 run record".to_owned(),
        n => format!("{n} run records"),
    };
    match need_a_hand {
        0 => format!("{records}, none needs a hand"),
        1 => format!("{records}, 1 needs a hand"),
        n => format!("{records}, {n} need a hand"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_runs_check_counts_in_plain_words() {
        assert_eq!(super::runs_detail(1, 0), "1 run record, none needs a hand");
        assert_eq!(super::runs_detail(3, 2), "3 run records, 2 need a hand");
    }
}
