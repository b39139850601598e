//! Pi's project trust for a child: Pi 1.6 asks "Trust project folder?" before it loads a
//! folder's `.pi` settings, extensions and skills, and an interactive child that stops at that
//! prompt would never start its task.
//!
//! A child never asks. It inherits the decision of its parent and never widens it: the parent
//! says what it decided with `$HERD_PROJECT_TRUST` (`trusted` or `untrusted`; a Pi parent passes
//! its own `ctx.isProjectTrusted()`), for the folder it launches from (herd-launch's working
//! directory). The child is trusted only when its parent is and the child works in that folder or
//! below it; a child elsewhere (another `cwd`, a managed worktree) and a child whose parent said
//! nothing are untrusted. herd-launch hands the child's own decision on in the same variable, so
//! a grandchild inherits the child's, and the child extension answers Pi's `project_trust`
//! event with it (no command-line flag: Pi 0.73 refuses `--approve`). A managed worktree's
//! setup file is gated apart (herd-worktree's `setup::trust`): where no parent said anything, as
//! on a command line, the person's own approval of the file is enough for it to run.

use std::path::{Path, PathBuf};

use herd_core::Error;

/// The variable that carries a decision, to herd-launch and to the child.
pub const ENV: &str = "HERD_PROJECT_TRUST";

/// A project-trust decision; the run record keeps the child's (`extra.project_trust`).
use herd_protocol::run::ProjectTrust as Trust;

/// The parent's decision and the folder it was made for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parent {
    pub trust: Trust,
    pub dir: PathBuf,
    /// No parent said anything (`$HERD_PROJECT_TRUST` unset, a command line): the child is
    /// untrusted, and a worktree's setup file runs on the person's approval alone.
    pub undecided: bool,
}

impl Parent {
    /// The decision of the launching parent for `dir`: `$HERD_PROJECT_TRUST`; unset or empty is
    /// untrusted, and undecided.
    ///
    /// # Errors
    ///
    /// When the variable has another value: a typo must not pass for a decision.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>, dir: &Path) -> Result<Parent, Error> {
        let given = env(ENV).filter(|v| !v.is_empty());
        let undecided = given.is_none();
        let trust = match given {
            None => Trust::Untrusted,
            Some(value) => Trust::parse(&value).ok_or_else(|| {
                Error::invalid(
                    ENV,
                    format!("${ENV} is {value:?}; it is `trusted` or `untrusted`"),
                )
            })?,
        };
        Ok(Parent {
            trust,
            dir: dir.to_path_buf(),
            undecided,
        })
    }

    /// The decision an earlier attempt recorded for its child in `dir` (a model-fallback launch
    /// repeats it); a record without one is untrusted.
    pub fn from_record(record: &herd_protocol::run::RunRecord) -> Parent {
        let trust = record.extra.project_trust.unwrap_or(Trust::Untrusted);
        Parent {
            trust,
            dir: PathBuf::from(&record.cwd),
            undecided: false,
        }
    }

    /// The decision of a child working in `child_dir`: the parent's in its folder or below,
    /// untrusted anywhere else.
    pub fn for_child(&self, child_dir: &Path) -> Trust {
        if self.trust == Trust::Untrusted {
            return Trust::Untrusted;
        }
        let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        if canonical(child_dir).starts_with(canonical(&self.dir)) {
            Trust::Trusted
        } else {
            Trust::Untrusted
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parent(value: Option<&str>, dir: &Path) -> Result<Parent, Error> {
        let value = value.map(str::to_owned);
        Parent::from_env(&move |k| (k == ENV).then(|| value.clone()).flatten(), dir)
    }

    #[test]
    fn a_child_inherits_its_parents_decision_and_never_widens_it() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let sub = project.join("sub");
        let elsewhere = dir.path().join("elsewhere");
        for d in [&sub, &elsewhere] {
            std::fs::create_dir_all(d).unwrap();
        }
        let trusted = parent(Some("trusted"), &project).unwrap();
        assert_eq!(trusted.for_child(&project), Trust::Trusted);
        assert_eq!(trusted.for_child(&sub), Trust::Trusted);
        assert_eq!(trusted.for_child(&sub.join("..")), Trust::Trusted);
        assert_eq!(trusted.for_child(&elsewhere), Trust::Untrusted);
        assert_eq!(
            trusted.for_child(&project.join("../elsewhere")),
            Trust::Untrusted
        );
        assert_eq!(
            trusted.for_child(dir.path()),
            Trust::Untrusted,
            "not a parent folder"
        );
        for untrusted in [
            parent(Some("untrusted"), &project).unwrap(),
            parent(None, &project).unwrap(),
            parent(Some(""), &project).unwrap(),
        ] {
            assert_eq!(untrusted.trust, Trust::Untrusted);
            assert_eq!(untrusted.for_child(&project), Trust::Untrusted);
        }
        let err = parent(Some("yes"), &project).unwrap_err();
        assert!(
            err.message.contains("`trusted` or `untrusted`"),
            "{}",
            err.message
        );
    }
}
