//! What a task's own text says about changing files, for acceptance inference: an explicit
//! change or no-edit intent in the task wins over the role (docs/tools.md, "Acceptance gates").
//!
//! The reading is deliberately narrow: only explicit wording counts, and anything else is no
//! intent, which leaves the decision to the role and the name heuristics.
//!
//! - **Mutation intent**: an imperative `fix`, `implement`, `edit`, `modify`, `refactor`,
//!   `patch`, `rewrite`, `rename`, `delete`, `remove`, `create`, `add` or `update` — the base form
//!   opening a clause (after punctuation, `and`, `then`, `also`, `first`, `now`, `just`,
//!   `please` or `you to`), so `review the fix` and `list the bugs to fix` are none; `write` or
//!   `change` only with `test`, `tests`, `code`, `file`, `files`, `function`, `module`, `script`
//!   or `to` within the next four words (`write tests`, `change the timeout to 5s`, not `write a
//!   summary`).
//! - **No-edit intent**: `read-only` (or `read only`, `readonly`), `no edits`, `no changes`,
//!   `no modifications`; or a negation (`do not`, `don't`, `must not`, `should not`, `never`,
//!   `without`, `no`), skipping `make`, `any`, `the`, `to` and `a` (and, after `no`, a file-ish
//!   word: `no code changes`), followed by `edit`, `modify`,
//!   `touch`, `alter` (any form), `changes`, `modifications` or one of the mutation verbs; or
//!   followed by `change` or `write` (any form) with a file-ish word (`file`, `files`,
//!   `anything`, `code`, `repo`, `repository`, `tree`, `workspace`, `checkout`, `source`) within
//!   the next three words. `Do not change the public API` is not no-edit intent; `don't change
//!   any files` is.
//!
//! - **A reading task**: a task that opens with `summarise`, `summarize`, `explain`, `describe`,
//!   `list`, `count`, `read`, `review`, `analyse`, `analyze`, `investigate`, `inspect`,
//!   `outline`, `compare`, `search`, `locate`, `find` or `audit` (after `please`, if any) is
//!   no-edit intent too, unless it also asks for a change.
//!
//! Mutation is read first: a task that asks for a change and limits it ("Fix the parser; do not
//! edit the tests") is a writer's. "List what to fix, but do not edit anything" is read-only.

/// The intent a task's text states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskIntent {
    /// The task says not to change files.
    NoEdit,
    /// The task asks for files to be changed.
    Mutation,
}

const NEGATIONS: [&str; 5] = ["don't", "dont", "never", "without", "no"];
const NEGATED_MODALS: [&str; 4] = ["do", "must", "should", "please"];
const FILLERS: [&str; 5] = ["make", "any", "the", "to", "a"];
const STRONG_NO_EDIT: [&str; 11] = [
    "edit",
    "edits",
    "editing",
    "modify",
    "modifying",
    "touch",
    "touching",
    "alter",
    "altering",
    "changes",
    "modifications",
];
const WEAK_NO_EDIT: [&str; 4] = ["change", "changing", "write", "writing"];
const FILE_WORDS: [&str; 11] = [
    "file",
    "files",
    "anything",
    "code",
    "repo",
    "repository",
    "tree",
    "workspace",
    "checkout",
    "source",
    "sources",
];
const MUTATION_VERBS: [&str; 13] = [
    "fix",
    "implement",
    "edit",
    "modify",
    "refactor",
    "patch",
    "rewrite",
    "rename",
    "delete",
    "remove",
    "create",
    "add",
    "update",
];
const WEAK_MUTATION_VERBS: [&str; 2] = ["write", "change"];
/// The verbs of a task that reads: opening the task, they make it no-edit.
const READING_VERBS: [&str; 18] = [
    "summarise",
    "summarize",
    "explain",
    "describe",
    "list",
    "count",
    "read",
    "review",
    "analyse",
    "analyze",
    "investigate",
    "inspect",
    "outline",
    "compare",
    "search",
    "locate",
    "find",
    "audit",
];
const MUTATION_OBJECTS: [&str; 9] = [
    "test", "tests", "code", "file", "files", "function", "module", "script", "to",
];
/// The words after which a verb still opens its clause.
const OPENERS: [&str; 7] = ["and", "then", "also", "first", "now", "just", "please"];

/// The intent `task` states, if it states one (see the module docs).
pub fn task_intent(task: &str) -> Option<TaskIntent> {
    let text = task.to_lowercase().replace(['\u{2019}', '\u{2018}'], "'");
    let flat: String = text
        .chars()
        .map(|c| if c.is_whitespace() { ' ' } else { c })
        .collect();
    let flat = flat
        .split(' ')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    // Clauses end at punctuation; words keep their apostrophes.
    let clauses: Vec<Vec<&str>> = text
        .split(['.', ',', ';', ':', '!', '?', '\n', '(', ')'])
        .map(|clause| {
            clause
                .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
                .filter(|w| !w.is_empty())
                .collect()
        })
        .collect();
    if clauses.iter().any(|words| mutation(words)) {
        return Some(TaskIntent::Mutation);
    }
    if [
        "read-only",
        "read only",
        "readonly",
        "no edits",
        "no changes",
        "no modifications",
    ]
    .iter()
    .any(|phrase| contains_phrase(&flat, phrase))
        || clauses.iter().any(|words| negated_edit(words))
        || reading(clauses.iter().find(|words| !words.is_empty()))
    {
        return Some(TaskIntent::NoEdit);
    }
    None
}

/// Whether the task's first clause opens with a reading verb (after `please`).
fn reading(first: Option<&Vec<&str>>) -> bool {
    let Some(words) = first else {
        return false;
    };
    let verb = match words.as_slice() {
        ["please", verb, ..] | [verb, ..] => verb,
        [] => return false,
    };
    READING_VERBS.contains(verb)
}

/// Whether `phrase` occurs in `text` on word boundaries.
fn contains_phrase(text: &str, phrase: &str) -> bool {
    text.match_indices(phrase).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + phrase.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

fn negated_edit(words: &[&str]) -> bool {
    words.iter().enumerate().any(|(i, word)| {
        let negation = NEGATIONS.contains(word)
            || (*word == "not" && i > 0 && NEGATED_MODALS.contains(&words[i - 1]))
            || matches!(*word, "mustn't" | "shouldn't");
        if !negation {
            return false;
        }
        let Some((at, verb)) = words.iter().enumerate().skip(i + 1).find(|(_, w)| {
            let skipped = FILLERS.contains(w) || (*word == "no" && FILE_WORDS.contains(w));
            !skipped
        }) else {
            return false;
        };
        if STRONG_NO_EDIT.contains(verb) || MUTATION_VERBS.contains(verb) {
            return true;
        }
        WEAK_NO_EDIT.contains(verb)
            && words
                .iter()
                .skip(at + 1)
                .take(3)
                .any(|w| FILE_WORDS.contains(w))
    })
}

fn mutation(words: &[&str]) -> bool {
    words.iter().enumerate().any(|(i, word)| {
        let opens = match i {
            0 => true,
            _ => {
                OPENERS.contains(&words[i - 1])
                    || (i > 1 && words[i - 2] == "you" && words[i - 1] == "to")
            }
        };
        if !opens {
            return false;
        }
        if MUTATION_VERBS.contains(word) {
            return true;
        }
        WEAK_MUTATION_VERBS.contains(word)
            && words
                .iter()
                .skip(i + 1)
                .take(4)
                .any(|w| MUTATION_OBJECTS.contains(w))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(cases: &[(&str, Option<TaskIntent>)]) {
        for (task, expected) in cases {
            assert_eq!(task_intent(task), *expected, "{task:?}");
        }
    }

    #[test]
    fn no_edit_intent_is_explicit_wording() {
        use TaskIntent::NoEdit;
        check(&[
            ("Do not edit any files; report what you find.", Some(NoEdit)),
            ("Read-only: map the parser module.", Some(NoEdit)),
            ("This is a read only investigation", Some(NoEdit)),
            (
                "Don't change any files, just list the callers",
                Some(NoEdit),
            ),
            ("Don\u{2019}t modify anything.", Some(NoEdit)),
            ("Look around without editing.", Some(NoEdit)),
            ("Make no changes; explain the failure", Some(NoEdit)),
            ("Make no code changes, only a plan", Some(NoEdit)),
            ("There must be no file edits", Some(NoEdit)),
            ("You must not touch the repository", Some(NoEdit)),
            ("Please do not make any changes", Some(NoEdit)),
            ("Never write to the checkout", Some(NoEdit)),
            ("Do not fix anything, only report", Some(NoEdit)),
            ("List the bugs to fix, but do not edit.", Some(NoEdit)),
        ]);
    }

    #[test]
    fn mutation_intent_is_an_imperative_verb() {
        use TaskIntent::Mutation;
        check(&[
            ("Fix the flaky test in parser.rs", Some(Mutation)),
            ("Please implement the retry", Some(Mutation)),
            ("Edit README.md to mention the flag", Some(Mutation)),
            ("Write tests for the tokenizer", Some(Mutation)),
            ("Change the default timeout to 5s", Some(Mutation)),
            (
                "Refactor the loop; do not change the public API",
                Some(Mutation),
            ),
            ("Add a --json flag", Some(Mutation)),
            ("Find the parser and fix the overflow", Some(Mutation)),
            ("I need you to implement the cache", Some(Mutation)),
            // A limit on a change is still a change.
            ("Fix the bug. Do not edit the tests.", Some(Mutation)),
            ("Fix the typo; the vendor dir is read-only", Some(Mutation)),
        ]);
    }

    #[test]
    fn a_task_that_opens_by_reading_is_no_edit() {
        use TaskIntent::{Mutation, NoEdit};
        check(&[
            ("Summarise src/ in ten lines", Some(NoEdit)),
            ("Please summarize the parser module", Some(NoEdit)),
            ("Review the fix in the last commit", Some(NoEdit)),
            (
                "Find where the config is parsed and write a summary",
                Some(NoEdit),
            ),
            ("Explain why the build is slow", Some(NoEdit)),
            // Asking for a change as well makes it a writer's.
            ("Find the parser and fix the overflow", Some(Mutation)),
            ("Review the code, then fix what you find", Some(Mutation)),
        ]);
    }

    #[test]
    fn anything_else_states_no_intent() {
        check(&[
            ("The summary should list the callers", None),
            ("Check that the bug is fixed", None),
            ("It should not change behaviour", None),
            ("No tests cover it; explain why", None),
            ("", None),
        ]);
    }
}
