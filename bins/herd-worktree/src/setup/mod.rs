//! A new worktree made ready to work in: ignored files copied, dependency directories linked,
//! setup commands run, background commands started, a port given.
//!
//! [`config`] reads the description, [`prepare`] decides before anything is created what will
//! be done (and refuses a hostile description then, so nothing exists), and [`apply`] does it in
//! the new checkout. [`trust`] keeps the user's approvals of committed project files.
//!
//! What runs is bounded by who said it: `copy` and `.worktreeinclude` apply as they are; the
//! project file's `setup`, `background`, `install` and `[[link]]` apply only when the user
//! approved the file's exact content (`herd-worktree trust`) and a launching parent that
//! decided trusts the project (`HERD_PROJECT_TRUST=trusted`, given for a folder that holds the
//! repository; a command line, where no parent decided, needs the approval alone); the user's
//! own file applies as it is, and alone may name a link source outside the repository.

pub mod apply;
pub mod config;
pub mod covered;
pub mod log;
pub mod port;
pub mod trust;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_core::Error;
use herd_git::{Deadline, Git};

use config::{Description, Origin, Strategy};
use trust::ParentTrust;

pub use apply::{Applied, apply};

/// An ignored file or directory to copy, relative to the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyItem {
    pub rel: String,
    pub origin: Origin,
}

/// A dependency directory to bring over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkItem {
    /// Where it comes from (absolute).
    pub source: PathBuf,
    /// Where it goes, relative to the new checkout's root.
    pub dest: String,
    pub strategy: Strategy,
    pub when: Option<String>,
    pub install: Option<String>,
    pub origin: Origin,
}

/// A command of the setup, and the file that asked for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandItem {
    pub command: String,
    pub origin: Origin,
}

/// What will be done to a new worktree, decided before it exists.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SetupPlan {
    pub copies: Vec<CopyItem>,
    pub links: Vec<LinkItem>,
    pub setup: Vec<CommandItem>,
    pub background: Vec<CommandItem>,
    /// What the description asked for that will not be done, and why.
    pub skipped: Vec<String>,
    pub budget: Duration,
}

impl SetupPlan {
    /// Whether setup has anything to do at all (a port is given only then).
    pub fn is_empty(&self) -> bool {
        self.copies.is_empty()
            && self.links.is_empty()
            && self.setup.is_empty()
            && self.background.is_empty()
    }
}

/// Whether the user approved what the project file would run in a worktree of one commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// The file's content and every repository file its commands name, as at that commit.
    Approved,
    /// Nothing was approved for this repository.
    NotApproved,
    /// An approval was recorded, of other content than the file's now.
    Changed,
    /// The file's content is approved; the files its commands name were not looked at, since
    /// the parent does not trust the project.
    FileApproved,
    /// The file is approved, but at that commit these files its commands name differ from the
    /// approved content (or could not be looked at: the reason).
    FilesDiffer { commit: String, paths: Vec<String> },
}

/// The description of the repository at `principal` and its plan for a worktree of `commit`,
/// with the user's files under `config` (none read when `None`) and the parent's trust given.
pub fn prepare_with(
    git: &Git,
    principal: &Path,
    config: Option<&Path>,
    parent: &ParentTrust,
    commit: &str,
) -> Result<SetupPlan, Error> {
    let description = config::load(principal, config)?;
    let approval = match (&description.project, config) {
        (Some(project), Some(config)) => match trust::approved(config, principal, project) {
            None if trust::approval_file(config, principal).exists() => Approval::Changed,
            None => Approval::NotApproved,
            // Only asked when it can matter: git is asked about the files only for an approved
            // file the parent trusts.
            Some(approved) if parent.trusts() => {
                approval_at(git, principal, &approved, project, commit)
            }
            Some(_) => Approval::FileApproved,
        },
        _ => Approval::NotApproved,
    };
    prepare(git, principal, &description, parent, &approval)
}

/// Whether the files `project`'s commands name are at `commit` as `approved` covers them.
fn approval_at(
    git: &Git,
    principal: &Path,
    approved: &covered::Covered,
    project: &config::Loaded,
    commit: &str,
) -> Approval {
    let named = covered::named_paths(&project.spec);
    let differ = |paths| Approval::FilesDiffer {
        commit: commit.to_owned(),
        paths,
    };
    match covered::Covered::at(git, principal, commit, &named) {
        Ok(now) => {
            let paths = approved.differences(&now);
            if paths.is_empty() {
                Approval::Approved
            } else {
                differ(paths)
            }
        }
        Err(e) => differ(vec![format!("(the files could not be looked at: {e})")]),
    }
}

/// What is missing for the project file's commands and links to run, each with what gives it:
/// the launching parent's trust, the person's approval, or both.
fn missing(parent: &ParentTrust, approval: &Approval, principal: &Path) -> Vec<String> {
    let trust = format!("herd-worktree trust --cwd {}", principal.display());
    let mut missing = Vec::new();
    match parent {
        ParentTrust::Trusted | ParentTrust::Undecided => {}
        ParentTrust::Untrusted => missing.push(
            "the Pi session that launched it does not trust this project folder (HERD_PROJECT_TRUST=untrusted): trust the folder in that Pi session".to_owned(),
        ),
        ParentTrust::Elsewhere { folder } => missing.push(format!(
            "the launching parent trusts {}, which does not hold this repository (HERD_PROJECT_TRUST is given for the folder the parent launches from)",
            folder.display()
        )),
    }
    match approval {
        Approval::Approved | Approval::FileApproved => {}
        Approval::NotApproved => missing.push(format!(
            "you have not approved it: review it and run `{trust}`"
        )),
        Approval::Changed => missing.push(format!(
            "it changed since you approved it: review it and run `{trust}` again"
        )),
        Approval::FilesDiffer { commit, paths } => missing.push(format!(
            "files its commands name differ at {} from the approved content ({}), and the approval covers the code that runs: review them and run `{trust}` again",
            &commit[..commit.len().min(12)],
            paths.join(", ")
        )),
    }
    missing
}

/// Decides what will be done; refuses (nothing created) a description that reaches outside the
/// repository from anywhere but the user's own file.
pub fn prepare(
    git: &Git,
    principal: &Path,
    description: &Description,
    parent: &ParentTrust,
    approval: &Approval,
) -> Result<SetupPlan, Error> {
    let mut plan = SetupPlan {
        budget: Duration::from_secs(config::DEFAULT_SETUP_BUDGET_SECS),
        ..SetupPlan::default()
    };
    if description.is_empty() {
        return Ok(plan);
    }
    let root = std::fs::canonicalize(principal).map_err(|e| {
        Error::invalid(
            "cwd",
            format!("cannot resolve {}: {e}", principal.display()),
        )
    })?;

    // Ignored files to copy: the project's `copy` with `.worktreeinclude`, then the user's.
    let mut project_patterns: Vec<String> = description.include.clone();
    if let Some(project) = &description.project {
        project_patterns.extend(project.spec.copy.iter().cloned());
    }
    let mut seen = std::collections::BTreeSet::new();
    for (patterns, origin) in [
        (project_patterns, Origin::Project),
        (
            description
                .user
                .as_ref()
                .map(|u| u.spec.copy.clone())
                .unwrap_or_default(),
            Origin::User,
        ),
    ] {
        if patterns.is_empty() {
            continue;
        }
        for rel in ignored_matching(git, principal, &patterns)? {
            if origin != Origin::User {
                check_inside(&root, &root.join(&rel), &rel)?;
            }
            if seen.insert(rel.clone()) {
                plan.copies.push(CopyItem { rel, origin });
            }
        }
    }

    // The project file's commands and links, if trusted and approved.
    if let Some(project) = &description.project {
        let spec = &project.spec;
        let gated = spec.setup.len() + spec.background.len() + spec.link.len();
        if parent.trusts() && *approval == Approval::Approved {
            add_spec(&mut plan, &root, spec, Origin::Project)?;
        } else if gated > 0 {
            let why = missing(parent, approval, principal).join("; and ");
            let mut what = Vec::new();
            for (n, name) in [
                (spec.setup.len(), "setup command"),
                (spec.background.len(), "background command"),
                (spec.link.len(), "link"),
            ] {
                if n > 0 {
                    what.push(format!("{n} {name}{}", if n == 1 { "" } else { "s" }));
                }
            }
            plan.skipped.push(format!(
                "skipped {} of {}: {why}",
                what.join(", "),
                project.file.display(),
            ));
            // A hostile link is refused even when it would be skipped.
            let mut ignored = SetupPlan::default();
            add_spec(&mut ignored, &root, spec, Origin::Project)?;
        }
    }
    if let Some(user) = &description.user {
        add_spec(&mut plan, &root, &user.spec, Origin::User)?;
    }
    Ok(plan)
}

fn add_spec(
    plan: &mut SetupPlan,
    root: &Path,
    spec: &config::Spec,
    origin: Origin,
) -> Result<(), Error> {
    if let Some(secs) = spec.setup_budget {
        plan.budget = Duration::from_secs(secs);
    }
    for command in &spec.setup {
        plan.setup.push(CommandItem {
            command: command.clone(),
            origin,
        });
    }
    for command in &spec.background {
        plan.background.push(CommandItem {
            command: command.clone(),
            origin,
        });
    }
    for link in &spec.link {
        let given = Path::new(&link.path);
        let (source, dest) = if given.is_absolute() {
            // Only the user's own file gets here (config checks it).
            let name = given
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            (given.to_path_buf(), name)
        } else {
            let source = root.join(given);
            if origin != Origin::User {
                check_inside(root, &source, &link.path)?;
            }
            (source, link.path.trim_end_matches('/').to_owned())
        };
        plan.links.push(LinkItem {
            source,
            dest,
            strategy: link.strategy,
            when: link.when.clone(),
            install: link.install.clone(),
            origin,
        });
    }
    Ok(())
}

/// Refuses a path of the source whose resolution (through symlinks) leaves the repository.
fn check_inside(root: &Path, path: &Path, given: &str) -> Result<(), Error> {
    let Ok(resolved) = std::fs::canonicalize(path) else {
        // Nothing there (or a dangling link, copied as a link): nothing to reach through.
        return Ok(());
    };
    if resolved.starts_with(root) && !resolved.starts_with(root.join(".git")) {
        return Ok(());
    }
    Err(Error::invalid(
        "setup",
        format!(
            "{given:?} resolves to {}, outside the repository {}; only your own setup file may reach outside it",
            resolved.display(),
            root.display()
        ),
    ))
}

/// The ignored paths of the checkout at `principal` that `patterns` (gitignore syntax) match.
/// An ignored directory matched as a whole is one entry; otherwise its matched files are.
fn ignored_matching(
    git: &Git,
    principal: &Path,
    patterns: &[String],
) -> Result<Vec<String>, Error> {
    let deadline = Deadline::after(herd_git::budget::BASE);
    let list = |extra: Vec<OsString>| -> Result<Vec<String>, Error> {
        let mut args: Vec<OsString> = vec![
            "ls-files".into(),
            "-z".into(),
            "--others".into(),
            "--ignored".into(),
            "--directory".into(),
        ];
        args.extend(extra);
        let out = git.run(principal, &args, &deadline).map_err(Error::from)?;
        Ok(out
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect())
    };
    let candidates = list(
        patterns
            .iter()
            .map(|p| OsString::from(format!("--exclude={p}")))
            .collect(),
    )?;
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    let ignored = list(vec!["--exclude-standard".into()])?;
    let is_ignored = |c: &str| {
        ignored
            .iter()
            .any(|i| c == i || (i.ends_with('/') && c.starts_with(i.as_str())))
    };
    let mut out = Vec::new();
    for c in candidates {
        if is_ignored(&c) {
            out.push(c.trim_end_matches('/').to_owned());
        } else if c.ends_with('/') {
            // A matched directory not wholly ignored: its ignored parts.
            for i in ignored.iter().filter(|i| i.starts_with(c.as_str())) {
                out.push(i.trim_end_matches('/').to_owned());
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}
