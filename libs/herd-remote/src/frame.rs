//! The one form every remote command takes, whatever the host's login shell, and how herd finds
//! its own output in what the host printed.
//!
//! OpenSSH hands the command line to the user's login shell (`$SHELL -c <line>`), which may be
//! `sh`, `bash`, `zsh`, `fish`, `tcsh` or `csh`, and each quotes differently: fish reads `\'`
//! and `\\` inside single quotes, csh refuses a newline in them. So the command line herd sends
//! is one constant, [`LOGIN_LINE`], which every one of them parses to the same argv: it starts
//! `/bin/sh`, which reads one line from standard input, decodes it and runs it. Nothing that
//! varies (a path, a name, a message) is ever on the command line.
//!
//! The line is the script that runs the argv (each word single-quoted for `/bin/sh` by
//! [`crate::quote::command`]) with every `\` written `\\` and every newline `\n`, so it is one
//! line; `printf %b` turns it back. The shell's `read` takes exactly that line from standard
//! input (POSIX requires `read` not to consume past it), so what follows on standard input is
//! the program's own (a request, a file copied, the relay's acknowledgements).
//!
//! The script first prints a marker line holding a random nonce on stdout and on stderr, then
//! `exec`s the program. A login shell that prints something as it starts (a `.bashrc` `echo`, a
//! motd, a `config.fish`) prints it before the marker: herd reads only what follows the marker,
//! on each stream, so the program's output is exactly what herd reads. A stdout without the
//! marker means the login shell never ran herd's script.

use herd_core::{Error, ErrorCode};

use crate::quote;

/// The command line of every remote call: `/bin/sh` reading its script from standard input.
///
/// Only letters, `/`, `-`, spaces and one single-quoted word free of `'`, `\`, `!` and newlines:
/// sh, bash, dash, zsh, ksh, fish, tcsh, csh, rc and nushell all read it as the same argv.
pub const LOGIN_LINE: &str =
    r#"exec /bin/sh -c 'IFS= read -r l || exit 95; s=$(printf %b_ "$l"); eval "${s%_}"'"#;

/// The exit code of [`LOGIN_LINE`] when its script line never arrived.
pub const NO_SCRIPT: i32 = 95;

/// One remote call's framing: the line to send first on standard input, and the marker that
/// precedes the program's output.
#[derive(Debug, Clone)]
pub struct Frame {
    marker: String,
    line: Vec<u8>,
}

impl Frame {
    /// The framing that runs `argv` on the remote.
    ///
    /// # Errors
    ///
    /// As [`quote::command`]; `unavailable` when no random nonce can be read.
    pub fn new<S: AsRef<str>>(argv: &[S]) -> Result<Frame, Error> {
        let command = quote::command(argv)?;
        let marker = new_marker()?;
        let script =
            format!("printf '%s\\n' {marker} && printf '%s\\n' {marker} >&2 && exec {command}");
        let mut line = encode(&script).into_bytes();
        line.push(b'\n');
        Ok(Frame { marker, line })
    }

    /// The bytes that go first on the remote command's standard input.
    pub fn line(&self) -> &[u8] {
        &self.line
    }

    /// The marker line (without its newline).
    pub fn marker(&self) -> &str {
        &self.marker
    }

    /// What follows the marker line in `bytes`, the output of one stream; `None` when the marker
    /// is not there (the login shell never ran the script, or printed more than was kept).
    pub fn after<'b>(&self, bytes: &'b [u8]) -> Option<&'b [u8]> {
        let mut at = 0;
        while at <= bytes.len() {
            let end = bytes[at..].iter().position(|&b| b == b'\n').map(|p| at + p);
            let line = &bytes[at..end.unwrap_or(bytes.len())];
            if line.strip_suffix(b"\r").unwrap_or(line) == self.marker.as_bytes() {
                return Some(end.map_or(&[][..], |e| &bytes[e + 1..]));
            }
            at = end? + 1;
        }
        None
    }

    /// Whether `line` (one line of stdout, its newline removed) is the marker.
    pub fn is_marker(&self, line: &str) -> bool {
        line.trim_end_matches('\r') == self.marker
    }
}

/// The local program git runs as its ssh (`GIT_SSH_COMMAND`, with `GIT_SSH_VARIANT=simple`):
/// `sh -c GIT_SSH herd <marker> <ssh> <its arguments, the constant LOGIN_LINE last>`, to which
/// git appends its host and its remote command (`git-receive-pack '<path>'`, quoted by git for a
/// POSIX shell). The host git names is dropped (the arguments name it); git's command becomes
/// the framed script, sent first on the connection's standard input, and what arrives before
/// the marker is dropped before git reads it: git's pack protocol sees only the remote git.
pub const GIT_SSH: &str = r#"m=$1
shift
for a; do c=$a; done
n=$#
i=0
for a; do i=$((i + 1)); if [ "$i" -le $((n - 2)) ]; then set -- "$@" "$a"; fi; done
shift "$n"
l=$(printf '%s\n' "printf '%s\\n' $m && printf '%s\\n' $m >&2 && exec $c" | sed 's/\\/\\\\/g')
{ printf '%s\n' "$l"; exec cat; } | "$@" | { while IFS= read -r r; do [ "$r" = "$m" ] && break; done; exec cat; }"#;

/// A fresh marker line (`herd-frame-` and 16 random hex digits).
///
/// # Errors
///
/// `unavailable` when no random nonce can be read.
pub fn new_marker() -> Result<String, Error> {
    Ok(format!("herd-frame-{}", nonce()?))
}

/// `script` as one line that `printf %b` turns back: `\` as `\\`, newline as `\n`.
pub fn encode(script: &str) -> String {
    let mut out = String::with_capacity(script.len() + 16);
    for c in script.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// 16 random hex digits from the kernel.
fn nonce() -> Result<String, Error> {
    use std::io::Read;
    let mut buf = [0u8; 8];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .map_err(|e| {
            Error::new(
                ErrorCode::Unavailable,
                format!("cannot read /dev/urandom: {e}"),
            )
        })?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Runs `argv` framed through `shell -c LOGIN_LINE` as sshd would, with `stdin` after the
    /// script line; returns stdout after the marker.
    fn through(shell: &str, argv: &[&str], stdin: &[u8]) -> Option<String> {
        let frame = Frame::new(argv).unwrap();
        let mut input = frame.line().to_vec();
        input.extend_from_slice(stdin);
        let cmd = herd_core::subprocess::Command::new(shell, Duration::from_secs(10))
            .args(["-c", LOGIN_LINE])
            .stdin_bytes(input);
        let out = herd_core::subprocess::run(&cmd).unwrap();
        assert!(out.success(), "{shell}: {out:?}");
        let text = frame.after(&out.stdout.bytes)?;
        assert_eq!(frame.after(&out.stderr.bytes), Some(&b""[..]), "{shell}");
        Some(String::from_utf8_lossy(text).into_owned())
    }

    #[test]
    fn posix_shells_run_the_argv_verbatim_and_leave_stdin_to_the_program() {
        let words = [
            "it\\'s",
            "a'b",
            "$(touch /nonexistent/pwned)",
            "`id`",
            "a\nb\r\nc",
            "back\\\\slash\\n\\c\\0101",
            "%s %b %%",
            "; rm -rf ~ #",
            "!1 !! ~ * {a,b}",
            "",
        ];
        let mut argv = vec!["sh", "-c", "printf '%s|' \"$@\"; cat", "argv0"];
        argv.extend(words);
        let expected = format!("{}|stdin\\' data\n", words.join("|"));
        for shell in ["sh", "bash"] {
            assert_eq!(
                through(shell, &argv, b"stdin\\' data\n").as_deref(),
                Some(expected.as_str()),
                "{shell}"
            );
        }
    }

    #[test]
    fn the_marker_is_found_only_as_a_whole_line() {
        let frame = Frame::new(&["true"]).unwrap();
        let m = frame.marker().to_owned();
        let noisy = format!("hello {m}\n{m}x\nmotd\n{m}\nout\n");
        assert_eq!(frame.after(noisy.as_bytes()), Some(&b"out\n"[..]));
        assert_eq!(frame.after(m.as_bytes()), Some(&b""[..]));
        assert_eq!(frame.after(format!("{m}\r\nx").as_bytes()), Some(&b"x"[..]));
        assert_eq!(frame.after(b"no marker\n"), None);
        assert_ne!(Frame::new(&["true"]).unwrap().marker(), m);
    }

    #[test]
    fn the_login_line_has_nothing_any_shell_reads_differently() {
        let inner = LOGIN_LINE
            .split_once('\'')
            .and_then(|(_, rest)| rest.strip_suffix('\''))
            .unwrap();
        assert!(!inner.contains(['\'', '\\', '!', '\n']), "{inner}");
    }
}
