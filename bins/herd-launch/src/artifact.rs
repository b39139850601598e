//! The child's first message: the task artifact `context/<safeName>-<ts>-<runId>.md`
//! (docs/protocol.md, "Names and places"), and the prompt an `exec` runner reads on stdin.
//!
//! The artifact is, blank-line separated: the role block (the role's body, or a bare spawn's
//! `systemPrompt`, which is never passed to Pi as a system prompt), a mode hint, the task, and the
//! instruction that the final message must summarise the work. Pi gets it as `@<path>`. A fork
//! child gets the raw task instead and no artifact.

/// How the child ends, which the mode hint tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Ends by itself when its turn settles.
    AutoExit,
    /// The user may interact; the child calls `subagent_done` when finished.
    Interactive,
    /// Stays alive between tasks.
    Persistent,
}

/// The text of a task artifact.
pub fn task_artifact(
    role: Option<&str>,
    mode: Mode,
    accept: bool,
    skills: &[String],
    task: &str,
    acceptance: Option<&str>,
) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(role) = role.map(str::trim).filter(|r| !r.is_empty()) {
        parts.push(role.to_owned());
    }
    if !skills.is_empty() {
        let names: Vec<String> = skills.iter().map(|s| format!("`{s}`")).collect();
        parts.push(format!(
            "Skills for this task: {}. Load each one (read its SKILL.md) before you start.",
            names.join(", ")
        ));
    }
    let mut hint = match mode {
        Mode::AutoExit => "Complete this task autonomously. Your session ends by itself when your final response \
                           is complete; there is no one to answer questions, so use `caller_ping` only if you \
                           cannot continue without help."
            .to_owned(),
        Mode::Interactive => "The user may interact with you in this session. Call `subagent_done` when you are \
                              finished."
            .to_owned(),
        Mode::Persistent => "You are a persistent specialist: you take one task at a time and stay available \
                             afterwards. End each task with a final response that summarises it; later tasks \
                             arrive as new messages. Use `caller_ping` if you need help with a task."
            .to_owned(),
    };
    if accept {
        hint.push_str(
            " When you finish, an acceptance check runs in your working directory; if it fails, its output \
             comes back to you for another turn.",
        );
    }
    parts.push(hint);
    parts.push(task.trim_end().to_owned());
    parts.push(
        "Your final assistant message is your report to the parent: summarise what you did, what you found \
         or changed, and anything left undone."
            .to_owned(),
    );
    // The acceptance section, last: it asks for the block the message ends with.
    if let Some(section) = acceptance {
        parts.push(section.trim_end().to_owned());
    }
    let mut text = parts.join("\n\n");
    text.push('\n');
    text
}

/// The prompt of an `exec` runner: `<System instructions>` and `<Task>` sections when there is a
/// system prompt, else the task alone; an acceptance section follows the task.
pub fn exec_prompt(system_prompt: Option<&str>, task: &str, acceptance: Option<&str>) -> String {
    let task = match acceptance {
        Some(section) => format!("{}\n\n{}", task.trim_end(), section.trim_end()),
        None => task.to_owned(),
    };
    match system_prompt.map(str::trim).filter(|s| !s.is_empty()) {
        Some(system) => format!("<System instructions>\n{system}\n\n<Task>\n{task}\n"),
        None => format!("{task}\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artifact_has_role_hint_task_and_closing_in_order() {
        let text = task_artifact(
            Some("You review code."),
            Mode::AutoExit,
            true,
            &[],
            "Review src/.",
            None,
        );
        let parts: Vec<&str> = text.trim_end().split("\n\n").collect();
        assert_eq!(parts[0], "You review code.");
        assert!(
            parts[1].starts_with("Complete this task autonomously.")
                && parts[1].contains("acceptance check")
        );
        assert_eq!(parts[2], "Review src/.");
        assert!(parts[3].starts_with("Your final assistant message"));
        let bare = task_artifact(None, Mode::Interactive, false, &[], "x", None);
        assert!(bare.starts_with("The user may interact"), "{bare}");
        assert!(bare.contains("`subagent_done`"));
        let skilled = task_artifact(None, Mode::AutoExit, false, &["search".into()], "x", None);
        assert!(
            skilled.starts_with("Skills for this task: `search`. Load each one"),
            "{skilled}"
        );
    }

    #[test]
    fn exec_prompt_sections() {
        assert_eq!(exec_prompt(None, "do it", None), "do it\n");
        assert_eq!(
            exec_prompt(None, "do it", Some("## Acceptance\n\nx")),
            "do it\n\n## Acceptance\n\nx\n"
        );
        assert_eq!(
            exec_prompt(Some("be brief"), "do it", None),
            "<System instructions>\nbe brief\n\n<Task>\ndo it\n"
        );
    }
}
