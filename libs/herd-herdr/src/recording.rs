//! Recorded Herdr replies: reading the fixture directory of a real Herdr's answers.
//!
//! The directory holds one `NNN-name.txt` per command — line 1 the command line as it was run,
//! then what the command printed — and a `README.md` whose table gives each file's exit code
//! and the stream its output went to. Everything here is derived from those files: a command
//! line is split as the shell would, its leading `NAME=value` words are the environment it ran
//! with, and the rest after `herdr` is its argv.
//!
//! A file is replayable (see [`Recording::invocation`]) only when its line 1 is a plain
//! `herdr` command line: lines annotated with a `# …` comment describe a capture that is not
//! the command's own output (a file written by the pane, a trailing exit-code line), and lines
//! that run another program (`python3 raw.py …`) are raw socket exchanges.

use std::path::{Path, PathBuf};

use herd_core::sidecar::read_given as read_bounded;

/// The bound of one recording or README read; the largest recording is a few KiB.
const READ_LIMIT: u64 = 1024 * 1024;

/// Where a recording's output went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
    /// The command printed nothing.
    Nothing,
    /// The text is a file the command's effect produced, not the command's output.
    File,
}

/// The environment and argv of a plain `herdr` command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// `NAME=value` words before `herdr`, in order.
    pub env: Vec<(String, String)>,
    /// The words after `herdr`.
    pub args: Vec<String>,
}

/// One recorded command and its reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recording {
    /// The file name without `.txt`, e.g. `011-pane-get`.
    pub name: String,
    pub command_line: String,
    pub exit: i32,
    pub stream: Stream,
    /// Everything after line 1, byte for byte.
    pub body: Vec<u8>,
    /// `Some` when the recording is a plain `herdr` command line, hence replayable.
    pub invocation: Option<Invocation>,
}

impl Recording {
    /// Returns what the command printed on stdout.
    pub fn stdout(&self) -> &[u8] {
        match self.stream {
            Stream::Stdout => &self.body,
            _ => &[],
        }
    }

    /// Returns what the command printed on stderr.
    pub fn stderr(&self) -> &[u8] {
        match self.stream {
            Stream::Stderr => &self.body,
            _ => &[],
        }
    }

    /// Returns whether the number or the full name is `pick` (`047` or `047-pane-get-after-close`).
    pub fn is_named(&self, pick: &str) -> bool {
        self.name == pick || self.name.split('-').next() == Some(pick)
    }
}

/// The fixture directory of this package, where the recordings are kept.
pub fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/herdr")
}

/// Reads every recording of `dir` that its `README.md` table lists.
pub fn load(dir: &Path) -> Result<Vec<Recording>, String> {
    let readme_path = dir.join("README.md");
    let readme = match read_bounded(&readme_path, READ_LIMIT) {
        Ok(Some(bytes)) => String::from_utf8(bytes)
            .map_err(|_| format!("{} is not UTF-8", readme_path.display()))?,
        Ok(None) => return Err(format!("{} does not exist", readme_path.display())),
        Err(err) => return Err(herd_core::error::chain(&err)),
    };
    let mut out = Vec::new();
    for row in readme.lines().filter_map(table_row) {
        let (file, exit, stream) = row?;
        let path = dir.join(file);
        // A listed file that is absent is simply not replayed.
        let bytes = match read_bounded(&path, READ_LIMIT) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => continue,
            Err(err) => return Err(herd_core::error::chain(&err)),
        };
        out.push(parse(file, exit, stream, &bytes)?);
    }
    if out.is_empty() {
        return Err(format!("no recordings listed in {}", readme_path.display()));
    }
    Ok(out)
}

/// Reads one table row `| NNN-name.txt | exit | stream | command |` of the README.
fn table_row(line: &str) -> Option<Result<(&str, i32, Stream), String>> {
    let mut cells = line.strip_prefix('|')?.split('|').map(str::trim);
    let file = cells.next().filter(|cell| cell.ends_with(".txt"))?;
    let mut row = || -> Result<(&str, i32, Stream), String> {
        let exit = cells
            .next()
            .and_then(|cell| cell.parse().ok())
            .ok_or_else(|| format!("README row of {file} has no exit code"))?;
        let stream = match cells.next() {
            Some("stdout") => Stream::Stdout,
            Some("+stderr") => Stream::Stderr,
            Some("(none)") => Stream::Nothing,
            Some("file") => Stream::File,
            other => return Err(format!("README row of {file} has stream {other:?}")),
        };
        Ok((file, exit, stream))
    };
    Some(row())
}

fn parse(file: &str, exit: i32, stream: Stream, bytes: &[u8]) -> Result<Recording, String> {
    let split = bytes
        .iter()
        .position(|b| *b == b'\n')
        .unwrap_or(bytes.len());
    let command_line = std::str::from_utf8(&bytes[..split])
        .map_err(|_| format!("{file}: line 1 is not UTF-8"))?
        .to_owned();
    let body = bytes.get(split + 1..).unwrap_or_default().to_vec();
    if stream == Stream::Nothing && !body.is_empty() {
        return Err(format!(
            "{file}: the README says no output, the file has some"
        ));
    }
    let (words, annotated) =
        split_words(&command_line).map_err(|problem| format!("{file}: {problem}"))?;
    let invocation = if annotated || stream == Stream::File {
        None
    } else {
        invocation(words)
    };
    Ok(Recording {
        name: file.trim_end_matches(".txt").to_owned(),
        command_line,
        exit,
        stream,
        body,
        invocation,
    })
}

fn invocation(words: Vec<String>) -> Option<Invocation> {
    let mut env = Vec::new();
    let mut words = words.into_iter();
    for word in words.by_ref() {
        if word == "herdr" {
            return Some(Invocation {
                env,
                args: words.collect(),
            });
        }
        let (key, value) = word.split_once('=')?;
        let is_name = !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        if !is_name {
            return None;
        }
        env.push((key.to_owned(), value.to_owned()));
    }
    None
}

/// Splits a command line as a POSIX shell would (quotes, backslashes, `#` comments). Returns
/// the words and whether a comment followed them.
pub fn split_words(line: &str) -> Result<(Vec<String>, bool), String> {
    let mut words = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        match chars.peek() {
            None => return Ok((words, false)),
            Some('#') => return Ok((words, true)),
            Some(_) => {}
        }
        let mut word = String::new();
        while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
            match c {
                '\'' => loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("unterminated single quote".to_owned()),
                    }
                },
                '"' => loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("unterminated double quote".to_owned()),
                        },
                        Some(c) => word.push(c),
                        None => return Err("unterminated double quote".to_owned()),
                    }
                },
                '\\' => match chars.next() {
                    Some(c) => word.push(c),
                    None => return Err("a trailing backslash".to_owned()),
                },
                c => word.push(c),
            }
        }
        words.push(word);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        split_words(line).unwrap().0
    }

    #[test]
    fn splits_like_the_shell() {
        assert_eq!(
            words(r#"herdr pane run w1:p2 "sh -c 'echo hi; sleep 30'""#),
            ["herdr", "pane", "run", "w1:p2", "sh -c 'echo hi; sleep 30'"]
        );
        assert_eq!(
            words(r"herdr pane wait-output w1:p2 --regex '^hi$' --timeout 5000"),
            [
                "herdr",
                "pane",
                "wait-output",
                "w1:p2",
                "--regex",
                "^hi$",
                "--timeout",
                "5000"
            ]
        );
        assert_eq!(words(r#"a"b\"c"'d'\ e"#), [r#"ab"cd e"#]);
        let (rest, annotated) = split_words("herdr agent wait w1:p7   # started before").unwrap();
        assert_eq!(rest, ["herdr", "agent", "wait", "w1:p7"]);
        assert!(annotated);
        assert!(split_words("herdr 'open").is_err());
    }

    #[test]
    fn reads_every_listed_recording() {
        let all = load(&fixture_dir()).unwrap();
        assert!(all.len() >= 100, "{} recordings", all.len());
        let by_name = |name: &str| all.iter().find(|r| r.name == name).unwrap();

        let missing = by_name("001-pane-list-server-not-running");
        let call = missing.invocation.as_ref().unwrap();
        assert_eq!(
            call.env,
            [(
                "HERDR_SOCKET_PATH".to_owned(),
                "/home/dev/src/absent.sock".to_owned()
            )]
        );
        assert_eq!(call.args, ["pane", "list"]);
        assert_eq!((missing.exit, missing.stream), (1, Stream::Stderr));
        assert!(missing.stdout().is_empty());
        assert!(
            missing
                .stderr()
                .starts_with(br#"{"id":"cli:pane:list","error""#)
        );

        // Raw socket exchanges, pane-written files and annotated captures are not replayable.
        for name in [
            "031-raw-ping",
            "045-pane-env-inside-pane",
            "070-raw-events-subscribe",
            "077-agent-wait-custom-done",
        ] {
            assert_eq!(by_name(name).invocation, None, "{name}");
        }
        let silent = by_name("017-pane-read-recent");
        assert_eq!((silent.stream, silent.body.len()), (Stream::Nothing, 0));
        assert!(by_name("047-pane-get-after-close").is_named("047"));
    }
}
