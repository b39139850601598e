//! What an approval of the project's setup file covers besides the file itself: every file of
//! the repository that its commands name, as it is at the commit a worktree starts from.
//!
//! A command runs in the new checkout, made of the commit the request chose, so
//! `setup = ["./scripts/gen.sh"]` runs that commit's `scripts/gen.sh`. Every word of a `setup`,
//! `background` or `install` command that is a relative path (`./scripts/gen.sh`,
//! `scripts/gen.sh`, `tools/` — a comment's words too) is looked up at the commit through the
//! symlinks of its tree ([`herd_git::objects`]): a file is covered by its blob, a directory by its
//! tree (so everything under it), a symlink leaving the tree by its target. The approval records
//! them, and a worktree whose commit gives any of them other content (or gives one that was
//! absent, or takes one away) asks for a new approval. A file no word names (one that `make`,
//! `npm` or a named script reads by itself) is not covered: name it in the command.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use herd_core::Error;
use herd_git::objects::PathObject;
use herd_git::{Deadline, Git, budget};

use super::config::Spec;

/// The repository paths named by a project file's commands, and what each is at one commit
/// (a path absent there is not listed).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Covered {
    /// The path, relative to the root, and what it names: `blob <id>`, `tree <id>`,
    /// `commit <id>`, `outside <target in hex>`, `unresolved <why>`.
    entries: BTreeMap<String, String>,
}

impl Covered {
    /// What the paths `named` name at `commit` of the repository at `principal`.
    pub fn at(
        git: &Git,
        principal: &Path,
        commit: &str,
        named: &[String],
    ) -> Result<Covered, Error> {
        let answers = git
            .objects_at(principal, commit, named, &Deadline::after(budget::BASE))
            .map_err(Error::from)?;
        let mut entries = BTreeMap::new();
        for (path, answer) in named.iter().zip(answers) {
            let what = match answer {
                PathObject::Missing => continue,
                PathObject::Object { id, kind } => format!("{kind} {id}"),
                PathObject::Outside { target } => {
                    let hex: String = target.iter().map(|b| format!("{b:02x}")).collect();
                    format!("outside {hex}")
                }
                PathObject::Unresolved { why } => format!("unresolved {why}"),
            };
            entries.insert(path.clone(), what);
        }
        Ok(Covered { entries })
    }

    /// The covered paths and what each names, in path order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(p, w)| (p.as_str(), w.as_str()))
    }

    /// The lines of an approval record: `<path>\t<what>`.
    pub fn record_lines(&self) -> String {
        self.entries
            .iter()
            .map(|(path, what)| format!("{path}\t{what}\n"))
            .collect()
    }

    /// Reads the lines of an approval record (after its first line); a line that is not
    /// `<path>\t<what>` is kept as it is, so it matches nothing a commit gives.
    pub fn from_record_lines<'a>(lines: impl Iterator<Item = &'a str>) -> Covered {
        let entries = lines
            .filter(|l| !l.is_empty())
            .map(|l| match l.split_once('\t') {
                Some((path, what)) => (path.to_owned(), what.to_owned()),
                None => (l.to_owned(), String::new()),
            })
            .collect();
        Covered { entries }
    }

    /// The paths whose content differs between `self` and `other` (either way), in order.
    pub fn differences(&self, other: &Covered) -> Vec<String> {
        let paths: BTreeSet<&String> = self.entries.keys().chain(other.entries.keys()).collect();
        paths
            .into_iter()
            .filter(|p| self.entries.get(*p) != other.entries.get(*p))
            .cloned()
            .collect()
    }
}

/// The repository paths the commands of `spec` name: every word of a `setup`, `background` or
/// `install` command that reads as a path relative to the root, without its leading `./` and
/// trailing `/`, in order, each once.
pub fn named_paths(spec: &Spec) -> Vec<String> {
    let commands = spec
        .setup
        .iter()
        .chain(&spec.background)
        .chain(spec.link.iter().filter_map(|l| l.install.as_ref()));
    let mut named = BTreeSet::new();
    for command in commands {
        let words = command.split(|c: char| c.is_whitespace() || ";&|()<>'\"`$=,{}\\".contains(c));
        named.extend(words.filter_map(repository_path));
    }
    named.into_iter().collect()
}

/// `word` as a path relative to the root, or `None` when it cannot be one: empty, absolute, an
/// option, a home directory, a glob, pathspec magic, a `..` component, inside `.git`.
fn repository_path(word: &str) -> Option<String> {
    if word.is_empty() || word.starts_with(['/', '-', '~', ':']) || word.contains(['*', '?', '[']) {
        return None;
    }
    let mut parts = Vec::new();
    for part in word.split('/') {
        match part {
            "" | "." => {}
            ".." => return None,
            part => parts.push(part),
        }
    }
    if parts.is_empty() || parts[0] == ".git" {
        return None;
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(setup: &[&str]) -> Spec {
        Spec {
            setup: setup.iter().map(|s| (*s).to_owned()).collect(),
            ..Spec::default()
        }
    }

    #[test]
    fn the_words_that_can_be_paths_are_named() {
        let named = named_paths(&spec(&[
            "./scripts/gen.sh --out=dist/x && sh tools/ # package.json",
            "make -C build; echo \"$HOME/x\" > /tmp/y",
            "ls ../up *.rs ~/me .git/config :/x",
        ]));
        assert_eq!(
            named,
            [
                "#",
                "HOME/x",
                "build",
                "dist/x",
                "echo",
                "ls",
                "make",
                "package.json",
                "scripts/gen.sh",
                "sh",
                "tools",
            ]
        );
    }

    #[test]
    fn differences_go_both_ways() {
        let a = Covered::from_record_lines(["x\tblob 1", "y\tblob 2"].into_iter());
        let b = Covered::from_record_lines(["x\tblob 1", "z\tblob 3"].into_iter());
        assert_eq!(a.differences(&b), ["y", "z"]);
        assert!(a.differences(&a.clone()).is_empty());
        assert_eq!(
            Covered::from_record_lines(a.record_lines().lines()),
            a,
            "a record reads back"
        );
    }
}
