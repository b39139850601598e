//! `herd-worktree trust`: shows the project's setup file and records its approval, with the
//! files of the repository its commands name as they are at the checkout's `HEAD`.

use std::path::PathBuf;

use herd_cli::Output;
use herd_core::Error;
use herd_core::escape::encode_host_value;
use herd_git::status::EntryKind;
use herd_git::{Deadline, Git, budget};
use herd_protocol::worktree::{ApprovedFile, TrustApproved};

use crate::{create, setup};

/// Approves the project file of the repository `cwd` is in (default: the current directory).
///
/// A named file with changes not committed is refused: a new worktree runs the committed
/// content, which is what is approved, so approving while it differs would approve what was
/// not seen.
pub(crate) fn trust(cwd: Option<PathBuf>) -> Result<Output, Error> {
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
        Some(head) => setup::covered::Covered::at(&git, &principal, head, &named)?,
        None => setup::covered::Covered::default(),
    };
    let text = herd_core::sidecar::read_given(&project.file, setup::config::READ_LIMIT)?
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let recorded = setup::trust::approve(&config, &principal, &project, &covered)?;
    let user_file = setup::config::user_file(&config, &principal);
    let files: Vec<ApprovedFile> = covered
        .entries()
        .map(|(path, object)| ApprovedFile {
            path: path.to_owned(),
            object: object.to_owned(),
        })
        .collect();
    let value = |s: &str| encode_host_value(s, 4096);
    let shown: String = text
        .lines()
        .map(|l| format!("  {}", value(l)))
        .collect::<Vec<_>>()
        .join("\n");
    let covered_lines = if files.is_empty() {
        "No file of the repository is named by its commands.".to_owned()
    } else {
        let listed: Vec<String> = files
            .iter()
            .map(|f| format!("  {} ({})", value(&f.path), f.object))
            .collect();
        format!(
            "With the files its commands name, as at {}:\n{}",
            status.head_oid.as_deref().unwrap_or("-"),
            listed.join("\n")
        )
    };
    let human = format!(
        "Approved {} (sha256 {}):\n{shown}\n{covered_lines}\nApproval: {}\nIts commands run in new worktrees whose commit has these files as approved: from a command line on this approval alone, under a Pi parent when it also trusts the project (HERD_PROJECT_TRUST=trusted); a changed file needs a new approval.\nYour own setup file for this repository: {}",
        project.file.display(),
        project.sha256,
        recorded.display(),
        user_file.display()
    );
    let doc = TrustApproved {
        file: project.file.to_string_lossy().into_owned(),
        sha256: project.sha256.clone(),
        approval: recorded.to_string_lossy().into_owned(),
        user_file: user_file.to_string_lossy().into_owned(),
        commit: status.head_oid.clone(),
        files,
    };
    Ok(Output::ok(doc, human))
}
