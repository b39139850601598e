//! The one function that turns an argv into a command line for the remote `/bin/sh`.
//!
//! The login shell never parses it: [`crate::frame`] sends it, inside the framed script, on
//! standard input to the `/bin/sh` its constant command line starts. Every remote command herd
//! runs is built here, from an argv, and every word is single-quoted: inside single quotes a POSIX shell expands nothing (`$`, `` ` ``, `\`, `*`,
//! newlines are all literal), and the only character that ends the quotes is `'` itself, which
//! is written as `'\''` (close, an escaped quote, reopen). The result is that the remote
//! program receives exactly the argv given, and nothing else runs. Data that is large or comes
//! from a request (a task, a whole request) goes on standard input instead.
//!
//! A NUL byte cannot be passed in an argv at all and is refused.

use herd_core::{Error, ErrorCode};

/// `word` as one single-quoted word of a POSIX shell.
///
/// # Errors
///
/// `invalid_request` when `word` contains a NUL byte.
pub fn word(word: &str) -> Result<String, Error> {
    if word.contains('\0') {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            "a remote argument contains a NUL byte",
        ));
    }
    let mut out = String::with_capacity(word.len() + 2);
    out.push('\'');
    for c in word.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    Ok(out)
}

/// The command line that runs `argv` on the remote: every word quoted by [`word`], joined by
/// spaces.
///
/// # Errors
///
/// `invalid_request` when `argv` is empty or a word contains a NUL byte.
pub fn command<S: AsRef<str>>(argv: &[S]) -> Result<String, Error> {
    if argv.is_empty() {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            "an empty remote command",
        ));
    }
    let words: Result<Vec<String>, Error> = argv.iter().map(|w| word(w.as_ref())).collect();
    Ok(words?.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `line` in a local POSIX shell as the remote's would and returns the argv it got.
    fn parsed(line: &str) -> Vec<String> {
        let cmd = herd_core::subprocess::Command::new("sh", std::time::Duration::from_secs(10))
            .args(["-c", &format!("printf '%s\\0' {line}")]);
        let out = herd_core::subprocess::run(&cmd).unwrap();
        assert!(out.success(), "{out:?}");
        let text = out.stdout.text().into_owned();
        let mut words: Vec<String> = text.split('\0').map(str::to_owned).collect();
        words.pop();
        words
    }

    #[test]
    fn hostile_words_reach_the_program_verbatim() {
        let words = [
            "plain",
            "",
            "it's",
            "''",
            "$(touch /nonexistent/pwned)",
            "`id`",
            "a\nb\r\nc",
            "; rm -rf ~ #",
            "\\'\\",
            "*",
            "~",
            "$HOME ${PATH} $1",
            "tab\there",
            "ünïcødé ✓",
            "-n",
            "\"double\"",
        ];
        let line = command(&words).unwrap();
        assert_eq!(parsed(&line), words);
    }

    #[test]
    fn a_nul_byte_and_an_empty_argv_are_refused() {
        assert_eq!(word("a\0b").unwrap_err().code, ErrorCode::InvalidRequest);
        assert!(command::<&str>(&[]).is_err());
    }

    #[test]
    fn quoting_is_single_quotes_with_escaped_quotes() {
        assert_eq!(word("a'b").unwrap(), "'a'\\''b'");
        assert_eq!(word("").unwrap(), "''");
    }
}
