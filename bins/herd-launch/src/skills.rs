//! A request's skills, by name, as the paths Pi loads with `--skill`.
//!
//! A skill is found where Pi discovers skills for the child's directory: `.pi/skills` and
//! `.agents/skills` of that directory and each one above it (the nearest first), then the agent
//! directory's `skills`. A skill is a directory holding `SKILL.md`, or a single `<name>.md`. Pi
//! then advertises each loaded skill with the task's first message, instead of the skill arriving
//! as a prompt typed after the task has been answered.

use std::path::{Path, PathBuf};

/// How many directories above the child's are searched, a bound on a deep tree.
const MAX_ANCESTORS: usize = 64;

/// The skills of a launch: the paths found, and the names found nowhere.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resolved {
    pub paths: Vec<PathBuf>,
    pub missing: Vec<String>,
}

/// Finds each of `names` for a child in `cwd` whose agent directory is `agent_dir`.
pub fn resolve(names: &[String], cwd: &Path, agent_dir: &Path) -> Resolved {
    let mut bases: Vec<PathBuf> = cwd
        .ancestors()
        .take(MAX_ANCESTORS)
        .flat_map(|dir| [dir.join(".pi/skills"), dir.join(".agents/skills")])
        .collect();
    bases.push(agent_dir.join("skills"));
    let mut resolved = Resolved::default();
    for name in names {
        let found = bases.iter().find_map(|base| {
            let dir = base.join(name);
            if dir.join("SKILL.md").is_file() {
                return Some(dir);
            }
            let file = base.join(format!("{name}.md"));
            file.is_file().then_some(file)
        });
        match found {
            Some(path) => resolved.paths.push(path),
            None => resolved.missing.push(name.clone()),
        }
    }
    resolved
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_project_skill_wins_then_the_agent_directory() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let cwd = root.join("repo/sub");
        std::fs::create_dir_all(&cwd).unwrap();
        let project = root.join("repo/.pi/skills/search");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(project.join("SKILL.md"), "---\nname: search\n---\n").unwrap();
        let agent = root.join("agent");
        std::fs::create_dir_all(agent.join("skills/search")).unwrap();
        std::fs::write(agent.join("skills/search/SKILL.md"), "x").unwrap();
        std::fs::write(agent.join("skills/notes.md"), "x").unwrap();
        let names = ["search", "notes", "nowhere"].map(String::from);
        assert_eq!(
            resolve(&names, &cwd, &agent),
            Resolved {
                paths: vec![project, agent.join("skills/notes.md")],
                missing: vec!["nowhere".into()],
            }
        );
    }
}
