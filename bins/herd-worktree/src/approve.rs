//! `herd-worktree trust`: shows the project's setup file as it is, with what changed since the
//! last approval, and records its approval, with the files of the repository its commands name
//! as they are at the checkout's `HEAD`, once the person said yes.
//!
//! A person at a terminal is asked; a script says `--yes`; `--show` only shows. Without a
//! terminal and without `--yes` nothing is recorded: an approval nobody saw is no approval.

mod diff;

use std::path::PathBuf;

use herd_cli::Output;
use herd_core::escape::is_host_escaped;
use herd_core::{Error, exit};
use herd_git::status::EntryKind;
use herd_git::{Deadline, Git, budget};
use herd_protocol::worktree::{ApprovedFile, TrustApproved};

use crate::setup::config::Loaded;
use crate::setup::covered::Covered;
use crate::setup::trust::LastApproval;
use crate::{create, setup};

/// How `trust` was asked to approve.
#[derive(Debug, Clone, Default)]
pub(crate) struct Asked {
    /// A directory inside the repository (default: the current directory).
    pub cwd: Option<PathBuf>,
    /// Approve without a question (for scripts).
    pub yes: bool,
    /// Only show the file and what changed; record nothing.
    pub show: bool,
    /// A `--json` document is asked for: there is no question then.
    pub json: bool,
}

/// What the repository's setup file is now, and what was approved before.
struct Found {
    principal: PathBuf,
    project: Loaded,
    covered: Covered,
    commit: Option<String>,
    last: Option<LastApproval>,
    config: PathBuf,
}

impl Found {
    /// Whether the file and the files its commands name are as last approved.
    fn unchanged(&self) -> bool {
        self.last.as_ref().is_some_and(|last| {
            last.sha256 == self.project.sha256 && last.covered.differences(&self.covered).is_empty()
        })
    }

    fn document(&self, approved: bool) -> TrustApproved {
        TrustApproved {
            file: self.project.file.to_string_lossy().into_owned(),
            sha256: self.project.sha256.clone(),
            approval: setup::trust::approval_file(&self.config, &self.principal)
                .to_string_lossy()
                .into_owned(),
            user_file: setup::config::user_file(&self.config, &self.principal)
                .to_string_lossy()
                .into_owned(),
            commit: self.commit.clone(),
            files: self
                .covered
                .entries()
                .map(|(path, object)| ApprovedFile {
                    path: path.to_owned(),
                    object: object.to_owned(),
                })
                .collect(),
            approved,
            previous_sha256: self.last.as_ref().map(|l| l.sha256.clone()),
        }
    }
}

/// Shows, asks and approves the project file of the repository `asked.cwd` is in.
///
/// A named file with changes not committed is refused: a new worktree runs the committed
/// content, which is what is approved, so approving while it differs would approve what was
/// not seen.
pub(crate) fn trust(asked: &Asked) -> Result<Output, Error> {
    if asked.show && asked.yes {
        return Err(Error::invalid(
            "show",
            "--show only shows, and --yes approves: give one of them",
        ));
    }
    let found = find(asked.cwd.clone())?;
    let shown = show(&found);
    let cwd = found.principal.display().to_string();
    if asked.show {
        let approved = found.unchanged();
        let tail = if approved {
            "It is approved as it is; --show changed nothing.".to_owned()
        } else {
            format!("Nothing was approved (--show). To approve it: herd-worktree trust --cwd {cwd}")
        };
        return Ok(Output::ok(
            found.document(approved),
            format!("{shown}\n{tail}"),
        ));
    }
    if found.unchanged() {
        return Ok(Output::ok(
            found.document(true),
            format!("{shown}\nAlready approved: nothing changed since your last approval."),
        ));
    }
    let mut human = shown.clone();
    if !asked.yes {
        if asked.json {
            return Err(Error::invalid(
                "yes",
                "--json asks no question: review the file (--show), then approve it with --yes",
            ));
        }
        if !herd_cli::stdin_is_terminal() {
            return Err(Error::invalid(
                "yes",
                format!(
                    "nothing was approved: standard input is not a terminal, so there is no one to ask. Review the file with `herd-worktree trust --show --cwd {cwd}`, then approve it with `herd-worktree trust --yes --cwd {cwd}`"
                ),
            ));
        }
        herd_cli::show(&shown);
        let question = format!("Approve it for new worktrees of {cwd}?");
        let yes = herd_cli::confirm(&question).map_err(|e| {
            Error::new(
                herd_core::ErrorCode::Unavailable,
                format!("cannot read the answer: {e}"),
            )
        })?;
        if !yes {
            return Ok(
                Output::ok(found.document(false), "Not approved: nothing was recorded.")
                    .with_exit(exit::CANCELLED),
            );
        }
        human = String::new();
    }
    let recorded = setup::trust::approve(
        &found.config,
        &found.principal,
        &found.project,
        &found.covered,
    )?;
    let approved = format!(
        "Approved {} (sha256 {}).\nApproval: {}\nIts commands run in new worktrees whose commit has these files as approved: from a command line on this approval alone, under a Pi parent when it also trusts the project (HERD_PROJECT_TRUST=trusted); a changed file needs a new approval.\nYour own setup file for this repository, which needs no approval: {}",
        found.project.file.display(),
        found.project.sha256,
        recorded.display(),
        setup::config::user_file(&found.config, &found.principal).display()
    );
    human = if human.is_empty() {
        approved
    } else {
        format!("{human}\n{approved}")
    };
    Ok(Output::ok(found.document(true), human))
}

/// The repository's setup file as it is now, the files its commands name at `HEAD`, and the
/// last approval.
fn find(cwd: Option<PathBuf>) -> Result<Found, Error> {
    let cwd = match cwd {
        Some(cwd) => cwd,
        None => std::env::current_dir().map_err(|e| {
            Error::invalid("cwd", format!("cannot tell the current directory: {e}"))
        })?,
    };
    let git = Git::from_env();
    let facts = git
        .facts(&cwd, &Deadline::after(budget::BASE))
        .map_err(|e| create::source_error(e, &cwd))?;
    let principal = git
        .principal_checkout(&cwd, &facts, &Deadline::after(budget::PRINCIPAL))
        .map_err(Error::from)?;
    let config = setup::config::config_dir()?;
    let description = setup::config::load(&principal, None)?;
    let Some(project) = description.project else {
        return Err(Error::not_found(format!(
            "{} has no {}",
            principal.display(),
            setup::config::PROJECT_FILE
        ))
        .with_field("cwd"));
    };
    let named = setup::covered::named_paths(&project.spec);
    let status = git
        .status(&principal, &Deadline::after(budget::CLEANUP))
        .map_err(Error::from)?;
    let uncommitted: Vec<&str> = status
        .entries
        .iter()
        .filter(|e| !matches!(e.kind, EntryKind::Untracked | EntryKind::Ignored))
        .map(|e| e.path.as_str())
        .filter(|p| {
            named.iter().any(|n| {
                p == n
                    || p.strip_prefix(n.as_str())
                        .is_some_and(|r| r.starts_with('/'))
            })
        })
        .collect();
    if !uncommitted.is_empty() {
        return Err(Error::invalid(
            "cwd",
            format!(
                "files its commands name have changes not committed ({}); a new worktree runs the committed content, which is what an approval covers: commit or set aside the changes, review, and approve again",
                uncommitted.join(", ")
            ),
        ));
    }
    let covered = match &status.head_oid {
        Some(head) => Covered::at(&git, &principal, head, &named)?,
        None => Covered::default(),
    };
    let last = setup::trust::last_approval(&config, &principal);
    Ok(Found {
        principal,
        project,
        covered,
        commit: status.head_oid,
        last,
        config,
    })
}

/// The file as it is, what changed since the last approval, and the files its commands name.
fn show(found: &Found) -> String {
    let project = &found.project;
    let mut out = vec![format!(
        "Setup file {} (sha256 {}):",
        project.file.display(),
        project.sha256
    )];
    out.extend(
        project
            .text
            .lines()
            .map(|l| format!("  {}", for_terminal(l))),
    );
    out.push(String::new());
    out.push(changes(found.last.as_ref(), &project.text, &project.sha256));
    if let Some(last) = &found.last {
        let moved = last.covered.differences(&found.covered);
        if !moved.is_empty() {
            let moved: Vec<String> = moved.iter().map(|p| for_terminal(p)).collect();
            out.push(format!(
                "Files its commands name that changed since your last approval: {}",
                moved.join(", ")
            ));
        }
    }
    if found.covered.entries().next().is_none() {
        out.push("No file of the repository is named by its commands.".to_owned());
    } else {
        out.push(format!(
            "With the files its commands name, as at {}:",
            found.commit.as_deref().unwrap_or("-")
        ));
        out.extend(
            found
                .covered
                .entries()
                .map(|(path, object)| format!("  {} ({object})", for_terminal(path))),
        );
    }
    out.join("\n")
}

/// What changed in the file since the last approval, as a person reads it.
fn changes(last: Option<&LastApproval>, text: &str, sha256: &str) -> String {
    let Some(last) = last else {
        return "Not approved before.".to_owned();
    };
    if last.sha256 == sha256 {
        return "The file is as you last approved it.".to_owned();
    }
    let Some(before) = &last.text else {
        return format!(
            "Changed since your last approval (sha256 {}), whose content was not kept then: review the whole file.",
            last.sha256
        );
    };
    match diff::lines(before, text) {
        Some(hunks) => {
            let lines: Vec<String> = hunks
                .iter()
                .map(|line| format!("  {}", for_terminal(line)))
                .collect();
            format!(
                "Changes since your last approval (- removed, + added):\n{}",
                lines.join("\n")
            )
        }
        None => "Changed since your last approval, too much to compare line by line: review the whole file.".to_owned(),
    }
}

/// A line of the file for a terminal, as it is: only what a terminal would act on (control
/// characters, escape sequences among them, line separators, bidi controls) is shown as
/// `\u{…}`; a tab stays a tab.
fn for_terminal(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        if c != '\t' && is_host_escaped(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_shown_as_it_is_but_for_what_a_terminal_acts_on() {
        assert_eq!(
            for_terminal("copy = [\".env*\"]\t# \\ ok"),
            "copy = [\".env*\"]\t# \\ ok"
        );
        assert_eq!(
            for_terminal("a\u{1b}[2Jb\u{202e}c\rd"),
            "a\\u{1b}[2Jb\\u{202e}c\\u{d}d"
        );
    }
}
