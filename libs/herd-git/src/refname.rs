//! Branch-name validation: the rules of `git check-ref-format --branch`, checked without a process.
//!
//! A name is validated before it reaches an argv so that nothing created on its behalf can fail
//! half-way, and so that a name can never be read as an option.

/// The longest branch name herd accepts, in bytes (well under common path limits, since the
/// name also becomes a directory name).
pub const MAX_BRANCH_LEN: usize = 200;

/// Checks that `name` is a valid new branch name; the error says which rule it breaks.
pub fn check_branch_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a branch name cannot be empty".into());
    }
    if name.len() > MAX_BRANCH_LEN {
        return Err(format!("a branch name is at most {MAX_BRANCH_LEN} bytes"));
    }
    if name.starts_with('-') {
        return Err("a branch name cannot start with '-'".into());
    }
    if name == "HEAD" || name == "@" {
        return Err(format!("{name:?} is not a branch name"));
    }
    if let Some(c) = name.chars().find(|&c| {
        c.is_ascii_control() || matches!(c, ' ' | '~' | '^' | ':' | '?' | '*' | '[' | '\\')
    }) {
        return Err(format!("a branch name cannot contain {c:?}"));
    }
    for bad in ["..", "@{", "//"] {
        if name.contains(bad) {
            return Err(format!("a branch name cannot contain {bad:?}"));
        }
    }
    if name.starts_with('/') || name.ends_with('/') || name.ends_with('.') {
        return Err("a branch name cannot start with '/' or end with '/' or '.'".into());
    }
    for component in name.split('/') {
        if component.starts_with('.') {
            return Err("no part of a branch name can start with '.'".into());
        }
        if component.ends_with(".lock") {
            return Err("no part of a branch name can end with \".lock\"".into());
        }
    }
    Ok(())
}

/// A single path component for the branch, as Herdr names its checkouts: every character
/// outside `[A-Za-z0-9._-]` becomes `-` (so `feat/x` becomes `feat-x`).
pub fn branch_dir_name(branch: &str) -> String {
    let slug: String = branch
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    // A valid branch never yields these, but the result must never climb out of its parent.
    if slug.is_empty() || slug == "." || slug == ".." {
        "branch".to_owned()
    } else {
        slug
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_ordinary_names() {
        for ok in ["main", "feat/x", "ticket/123", "a.b", "fix-parser_2", "ünï"] {
            check_branch_name(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
    }

    #[test]
    fn refuses_what_git_refuses() {
        for bad in [
            "",
            "-x",
            "HEAD",
            "@",
            "a b",
            "a~1",
            "a^",
            "a:b",
            "a?",
            "a*",
            "a[",
            "a\\b",
            "a..b",
            "a@{1}",
            "a//b",
            "/a",
            "a/",
            "a.",
            ".a",
            "a/.b",
            "a.lock",
            "a/b.lock/c",
            "a\tb",
            "a\u{7f}",
        ] {
            assert!(check_branch_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_branch_name(&"x".repeat(MAX_BRANCH_LEN + 1)).is_err());
    }

    #[test]
    fn directory_names_follow_herdr() {
        assert_eq!(branch_dir_name("feat/x"), "feat-x");
        assert_eq!(branch_dir_name("ticket/123"), "ticket-123");
        assert_eq!(branch_dir_name("ünï"), "-n-");
        assert_eq!(branch_dir_name(".."), "branch");
    }
}
