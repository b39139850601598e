//! The CLI reference of the six binaries, rendered from their clap definitions.

use clap::{Command, CommandFactory};

/// The width help is wrapped at, fixed so the docs do not depend on the terminal.
const WIDTH: usize = 100;

/// The clap definitions of every herd binary, in the order the reference lists them.
pub fn binaries() -> Vec<Command> {
    vec![
        herd_launch::Cli::command(),
        herd_watch::Cli::command(),
        herd_accept::Cli::command(),
        herd_worktree::Cli::command(),
        herd_cleanup::Cli::command(),
        crate::Cli::command(),
    ]
}

/// The `cli` block: for each binary and each of its subcommands, a heading and its `--help`.
pub fn reference(binaries: Vec<Command>) -> String {
    let mut sections = Vec::new();
    for command in binaries {
        let mut command = command.term_width(WIDTH);
        command.build();
        render(&mut command, 2, &mut sections);
    }
    sections.join("\n")
}

fn render(command: &mut Command, level: usize, sections: &mut Vec<String>) {
    let title = command
        .get_bin_name()
        .unwrap_or(command.get_name())
        .to_owned();
    let help = command.render_long_help().to_string();
    let help: Vec<&str> = help.trim_end().lines().map(str::trim_end).collect();
    sections.push(format!(
        "{} `{title}`\n\n```text\n{}\n```\n",
        "#".repeat(level),
        help.join("\n")
    ));
    for sub in command.get_subcommands_mut() {
        if sub.get_name() == "help" || sub.is_hide_set() {
            continue;
        }
        render(sub, level + 1, sections);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_subcommand_gets_a_section() {
        let command = Command::new("tool")
            .about("Does things.")
            .subcommand(
                Command::new("one")
                    .about("The first.")
                    .subcommand(Command::new("deep")),
            )
            .subcommand(Command::new("hidden").hide(true));
        let text = reference(vec![command]);
        assert!(
            text.starts_with("## `tool`\n\n```text\nDoes things.\n"),
            "{text}"
        );
        assert!(
            text.contains("### `tool one`\n\n```text\nThe first.\n\nUsage: tool one"),
            "{text}"
        );
        assert!(text.contains("#### `tool one deep`"), "{text}");
        assert!(!text.contains("hidden`"), "{text}");
        assert!(!text.contains("`tool help`"), "{text}");
    }
}
