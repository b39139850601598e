//! The system `ssh`, one master connection per host.
//!
//! Every call is `ssh <options> -T -- <destination> <LOGIN_LINE>`, the command framed by
//! [`crate::frame`] (its script first on stdin, its output read after the marker), through
//! [`herd_core::subprocess`] with a budget and capped output. The options:
//!
//! - `BatchMode=yes`: a password, passphrase or unknown-host prompt is a failure, never a hang;
//!   the error says what to run instead.
//! - `ControlMaster=auto`, `ControlPath=<dir>/%C`, `ControlPersist=60`: the first call opens a
//!   master connection that the next calls share (one TCP connection and one login per host).
//!   `%C` is a hash of the destination, so the socket path is short; the directory is private
//!   (0700), and its length is checked, since a Unix socket path holds at most 107 bytes. A
//!   directory or socket another user owns or others may write to is refused
//!   ([`check_control_dir`]): whoever controls it answers for the host.
//! - `ServerAliveInterval=5`, `ServerAliveCountMax=2`: a dead connection is noticed within
//!   about 15 s; `ConnectTimeout=10`.
//! - `ForwardAgent=no`, `ForwardX11=no`, `ClearAllForwardings=yes`: nothing of this machine is
//!   lent to the remote.
//!
//! Host keys are checked as the user's configuration says (`StrictHostKeyChecking` is never
//! set here), and in batch mode an unknown or changed key is refused. `$HERD_SSH_CONFIG` names a
//! configuration file to use instead of `~/.ssh/config` (`ssh -F`); `$HERD_SSH` another `ssh`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_core::subprocess::{self, Command, Keep, Output};
use herd_core::{Error, ErrorCode};

use crate::frame::{self, Frame};
use crate::quote;

/// The environment variable naming the `ssh` configuration file (`ssh -F`).
pub const CONFIG_ENV: &str = "HERD_SSH_CONFIG";
/// The environment variable naming the `ssh` executable (default `ssh` on `PATH`).
pub const SSH_ENV: &str = "HERD_SSH";
/// The environment variable naming the directory of the master connections' sockets.
pub const CONTROL_DIR_ENV: &str = "HERD_SSH_CONTROL_DIR";

/// The longest Unix socket path (`sun_path` is 108 bytes with its NUL).
pub const SOCKET_PATH_MAX: usize = 107;
/// What `ssh` adds to the directory: `/`, the 40 hex digits of `%C`, and the 17 characters of
/// the temporary name it binds before renaming it into place.
const SOCKET_NAME_LEN: usize = 1 + 40 + 17;

/// How long a master connection stays up after its last session.
pub const CONTROL_PERSIST_SECS: u64 = 60;

/// The output kept of a call's stdout unless the caller says otherwise.
pub const DEFAULT_CAP: usize = 1024 * 1024;

/// The exit code `ssh` gives its own failures (the remote command's code otherwise).
pub const SSH_FAILED: i32 = 255;

/// A destination: an `ssh` host or `~/.ssh/config` alias, optionally `user@`.
///
/// Checked so it can never be read as an option or split: 1 to 255 characters of letters,
/// digits and `. _ - @ :`, not starting with `-`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Destination(String);

impl Destination {
    /// # Errors
    ///
    /// `invalid_request` naming the field `host` when `name` is not a destination.
    pub fn new(name: &str) -> Result<Destination, Error> {
        let ok = (1..=255).contains(&name.len())
            && !name.starts_with('-')
            && !name.starts_with('.')
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b".-_@:".contains(&b));
        if !ok {
            return Err(Error::invalid(
                "host",
                format!(
                    "{} is not an ssh destination herd takes: letters, digits and . _ - @ : only, \
                     not starting with - or . (an alias in ~/.ssh/config can name any host)",
                    herd_core::escape::json_string(&herd_core::escape::abbreviate_name(name))
                ),
            ));
        }
        Ok(Destination(name.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Destination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// An `ssh` client for one destination, sharing one master connection.
#[derive(Debug, Clone)]
pub struct Ssh {
    program: OsString,
    config: Option<PathBuf>,
    control_dir: PathBuf,
    dest: Destination,
}

impl Ssh {
    /// The client of `dest`, configured from the environment `env`.
    ///
    /// # Errors
    ///
    /// `unavailable` when no private directory for the sockets can be made or its path is too
    /// long for a socket (the message names `$HERD_SSH_CONTROL_DIR`).
    pub fn new(dest: Destination, env: &dyn Fn(&str) -> Option<String>) -> Result<Ssh, Error> {
        let control_dir = control_dir(env)?;
        Ok(Ssh {
            program: env(SSH_ENV)
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "ssh".into())
                .into(),
            config: env(CONFIG_ENV).filter(|s| !s.is_empty()).map(PathBuf::from),
            control_dir,
            dest,
        })
    }

    /// The `ssh` executable.
    pub fn program(&self) -> &std::ffi::OsStr {
        &self.program
    }

    pub fn destination(&self) -> &Destination {
        &self.dest
    }

    /// The master connection's socket directory.
    pub fn control_dir(&self) -> &Path {
        &self.control_dir
    }

    /// The options of every call, before the destination.
    pub fn options(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::new();
        if let Some(config) = &self.config {
            args.push("-F".into());
            args.push(config.clone().into());
        }
        let control_path = self.control_dir.join("%C");
        for opt in [
            "BatchMode=yes".to_owned(),
            "ControlMaster=auto".to_owned(),
            format!("ControlPath={}", control_path.display()),
            format!("ControlPersist={CONTROL_PERSIST_SECS}"),
            "ServerAliveInterval=5".to_owned(),
            "ServerAliveCountMax=2".to_owned(),
            "ConnectTimeout=10".to_owned(),
            "ForwardAgent=no".to_owned(),
            "ForwardX11=no".to_owned(),
            "ClearAllForwardings=yes".to_owned(),
            "LogLevel=ERROR".to_owned(),
        ] {
            args.push("-o".into());
            args.push(opt.into());
        }
        args
    }

    /// The command that runs `argv` on the remote through its framing ([`Frame`]): `ssh`'s
    /// command line is the constant [`frame::LOGIN_LINE`], and the framed script goes first on
    /// its standard input, before `stdin`. Budget `budget`.
    ///
    /// # Errors
    ///
    /// As [`Frame::new`].
    pub fn command<S: AsRef<str>>(
        &self,
        argv: &[S],
        stdin: Option<&[u8]>,
        budget: Duration,
    ) -> Result<(Command, Frame), Error> {
        let frame = Frame::new(argv)?;
        let mut input = frame.line().to_vec();
        input.extend_from_slice(stdin.unwrap_or_default());
        let cmd = Command::new(self.program.clone(), budget)
            .args(self.login_args())
            .env("LC_ALL", "C")
            .stdin_bytes(input)
            .stdout_cap(DEFAULT_CAP, Keep::Head)
            .stderr_cap(64 * 1024, Keep::Tail);
        Ok((cmd, frame))
    }

    /// Every argument of a framed call: the options, `-T -- <destination>` and the constant
    /// command line.
    pub fn login_args(&self) -> Vec<OsString> {
        let mut args = self.options();
        args.extend(["-T", "--", self.dest.as_str(), frame::LOGIN_LINE].map(OsString::from));
        args
    }

    /// Runs `argv` on the remote within `budget`, with `stdin` on its standard input.
    ///
    /// `Ok` with the remote command's output whenever the remote command ran (whatever its
    /// exit code), stdout and stderr holding only what the program printed (what the login
    /// shell printed before it is dropped, see [`Frame`]); an error when `ssh` itself failed
    /// (exit 255: not reachable, login refused, a host key refused), the budget ran out, or
    /// the host's login shell never ran herd's script, with what to run to fix it.
    ///
    /// # Errors
    ///
    /// See above; [`classify`] says which kind.
    pub fn run<S: AsRef<str>>(
        &self,
        argv: &[S],
        stdin: Option<&[u8]>,
        budget: Duration,
    ) -> Result<Output, Error> {
        let (cmd, frame) = self.command(argv, stdin, budget)?;
        let mut out = subprocess::run(&cmd).map_err(|e| {
            Error::new(
                ErrorCode::Unavailable,
                format!(
                    "cannot run ssh for {}: {e} (is OpenSSH's ssh installed?)",
                    self.dest
                ),
            )
        })?;
        if out.timed_out {
            return Err(Error::new(
                ErrorCode::Timeout,
                format!(
                    "ssh {} did not answer within {} s: check the connection with `ssh {} true`",
                    self.dest,
                    budget.as_secs(),
                    self.dest
                ),
            ));
        }
        if out.code == Some(SSH_FAILED) || out.code.is_none() {
            return Err(classify(&self.dest, &out.stderr.text()));
        }
        let Some(stdout) = frame.after(&out.stdout.bytes).map(<[u8]>::to_vec) else {
            return Err(self.unframed(out.code, &out.stderr.text()));
        };
        out.stdout.bytes = stdout;
        if let Some(stderr) = frame.after(&out.stderr.bytes).map(<[u8]>::to_vec) {
            out.stderr.bytes = stderr;
        }
        Ok(out)
    }

    /// The error of a call whose output holds no marker: the login shell never ran herd's
    /// script (or printed more than herd keeps before it).
    pub fn unframed(&self, code: Option<i32>, stderr: &str) -> Error {
        let dest = &self.dest;
        Error::new(
            ErrorCode::Unavailable,
            format!(
                "the login shell of {dest} did not run herd's command (exit {}: {}); herd runs \
                 every command as `{}` with its script on standard input: check that \
                 `ssh {dest} /bin/sh -c true` works and that the shell's startup files print \
                 little",
                code.map_or_else(|| "none".to_owned(), |c| c.to_string()),
                herd_core::escape::encode_host_value(stderr.trim(), 300),
                frame::LOGIN_LINE
            ),
        )
        .with_field("host")
    }

    /// The environment that makes git reach the host through this client (its options, its
    /// master connection) and its framing: `GIT_SSH_COMMAND` runs [`frame::GIT_SSH`], which
    /// sends git's remote command as the framed script and drops what the login shell printed
    /// before git reads the connection; `GIT_SSH_VARIANT=simple` makes git give it only the
    /// host and that command.
    ///
    /// # Errors
    ///
    /// As [`quote::command`], and `unavailable` when no random marker can be made.
    pub fn git_env(&self) -> Result<Vec<(&'static str, String)>, Error> {
        let mut argv: Vec<String> = vec![
            "sh".into(),
            "-c".into(),
            frame::GIT_SSH.into(),
            "herd".into(),
            frame::new_marker()?,
            self.program.to_string_lossy().into_owned(),
        ];
        argv.extend(
            self.login_args()
                .iter()
                .map(|o| o.to_string_lossy().into_owned()),
        );
        Ok(vec![
            ("GIT_SSH_COMMAND", quote::command(&argv)?),
            ("GIT_SSH_VARIANT", "simple".to_owned()),
        ])
    }

    /// The git URL of the repository at `path` (absolute) on the host.
    pub fn git_url(&self, path: &str) -> String {
        format!("ssh://{}{path}", self.dest)
    }

    /// Whether a master connection is up (`ssh -O check`).
    pub fn master_up(&self) -> bool {
        self.control(&["check"]).is_some_and(|o| o.success())
    }

    /// Closes the master connection, if there is one (`ssh -O exit`).
    pub fn close_master(&self) {
        let _ = self.control(&["exit"]);
    }

    fn control(&self, op: &[&str]) -> Option<Output> {
        let cmd = Command::new(self.program.clone(), Duration::from_secs(10))
            .args(self.options())
            .arg("-O")
            .args(op.iter().copied())
            .arg("--")
            .arg(self.dest.as_str());
        subprocess::run(&cmd).ok()
    }
}

/// The error of a failed `ssh` (exit 255), from what it printed, with what to run instead.
pub fn classify(dest: &Destination, stderr: &str) -> Error {
    let said = stderr
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty() && !l.starts_with('@'))
        .unwrap_or("no message");
    let said = herd_core::escape::encode_host_value(said, 300);
    let has = |s: &str| stderr.contains(s);
    let message = if has("REMOTE HOST IDENTIFICATION HAS CHANGED") {
        format!(
            "the host key of {dest} has changed and is refused ({said}); if the change is \
             expected, remove the old key with `ssh-keygen -R <host>` and check the new one with \
             `ssh {dest} true`"
        )
    } else if has("Host key verification failed") || has("No ED25519 host key is known") {
        format!(
            "the host key of {dest} is not known or does not match ({said}); herd never accepts \
             a key by itself: connect once with `ssh {dest} true` and check the fingerprint"
        )
    } else if has("Permission denied") || has("passphrase") || has("Too many authentication") {
        format!(
            "ssh {dest} asks for a password or passphrase, or refused the key ({said}); herd \
             never prompts: load the key into ssh-agent (`ssh-add`) or name it with IdentityFile \
             for {dest} in ~/.ssh/config, then check with `ssh -o BatchMode=yes {dest} true`"
        )
    } else if has("Could not resolve hostname") || has("Name or service not known") {
        format!(
            "{dest} is not a host ssh can find ({said}): add it to ~/.ssh/config (Host {dest} / \
             HostName …) or use its address"
        )
    } else {
        format!(
            "{dest} is not reachable over ssh ({said}); check with `ssh {dest} true`, and \
             whether it is up"
        )
    };
    Error::new(ErrorCode::Unavailable, message).with_field("host")
}

/// The private directory of the master connections' sockets: `$HERD_SSH_CONTROL_DIR`, else
/// `$XDG_RUNTIME_DIR/herd-ssh`, else `~/.herd/ssh`. Created 0700; refused when a socket path in
/// it could be longer than 107 bytes.
fn control_dir(env: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, Error> {
    let set = |k: &str| env(k).filter(|v| !v.is_empty());
    let dir = if let Some(dir) = set(CONTROL_DIR_ENV) {
        PathBuf::from(dir)
    } else if let Some(run) = set("XDG_RUNTIME_DIR") {
        PathBuf::from(run).join("herd-ssh")
    } else if let Some(home) = set("HOME") {
        PathBuf::from(home).join(".herd/ssh")
    } else {
        return Err(Error::new(
            ErrorCode::Unavailable,
            format!("no directory for ssh's master connections: set {CONTROL_DIR_ENV}"),
        ));
    };
    check_socket_dir(&dir)?;
    check_control_dir(&dir)?;
    herd_core::sidecar::ensure_private_dir(&dir)?;
    check_control_dir(&dir)?;
    Ok(dir)
}

/// Refuses a directory of master connections that herd cannot trust: one another user owns or
/// that its group or others may write to (as herd refuses such an artifacts root,
/// [`herd_core::sidecar::check_private_root`]), and any entry in it another user owns or others
/// may write to. Whoever controls a socket there is "the host" to every call: it reads what
/// herd sends and answers for the host. A directory that does not exist yet is fine: herd
/// creates it 0700.
pub fn check_control_dir(dir: &Path) -> Result<(), Error> {
    use std::os::unix::fs::MetadataExt;
    let refuse = |what: &Path, why: String| {
        Error::new(
            ErrorCode::Unavailable,
            format!(
                "refusing {} for ssh's master connections: {why}; whoever controls it could read \
                 what herd sends a host and answer for the host. Remove it, or set \
                 {CONTROL_DIR_ENV} to a directory of your own (herd creates it 0700)",
                what.display()
            ),
        )
    };
    if let Err(err) = herd_core::sidecar::check_private_root(dir) {
        let why = match &err {
            herd_core::sidecar::Error::Unsafe { reason, .. } => format!("it {reason}"),
            other => other.to_string(),
        };
        return Err(refuse(dir, why));
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(refuse(dir, format!("it cannot be read ({e})"))),
    };
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.uid() != me {
            return Err(refuse(
                &path,
                format!(
                    "it is owned by uid {}, not by this user (uid {me})",
                    meta.uid()
                ),
            ));
        }
        if meta.file_type().is_symlink() {
            return Err(refuse(&path, "it is a symbolic link".to_owned()));
        }
        let mode = meta.mode() & 0o7777;
        if mode & 0o022 != 0 {
            return Err(refuse(
                &path,
                format!("it is writable by its group or by others (mode {mode:04o})"),
            ));
        }
    }
    Ok(())
}

/// Refuses a directory whose sockets' paths could exceed [`SOCKET_PATH_MAX`].
pub fn check_socket_dir(dir: &Path) -> Result<(), Error> {
    let len = dir.as_os_str().len() + SOCKET_NAME_LEN;
    if len > SOCKET_PATH_MAX {
        return Err(Error::new(
            ErrorCode::Unavailable,
            format!(
                "the directory for ssh's master connections, {}, is too long for a socket path \
                 ({len} > {SOCKET_PATH_MAX} bytes): set {CONTROL_DIR_ENV} to a shorter private \
                 directory",
                dir.display()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destinations_cannot_be_options_or_split() {
        for ok in ["devbox", "me@build-1.example.org", "host:22", "a_b"] {
            assert!(Destination::new(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "-oProxyCommand=x",
            ".hidden",
            "a b",
            "a;b",
            "a\nb",
            "$(x)",
            "a/b",
            "'q'",
        ] {
            let err = Destination::new(bad).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidRequest, "{bad}");
            assert_eq!(err.field.as_deref(), Some("host"));
        }
    }

    #[test]
    fn a_socket_directory_too_long_is_refused_with_the_override_named() {
        assert!(check_socket_dir(Path::new("/run/user/1000/herd-ssh")).is_ok());
        let long = PathBuf::from(format!("/{}", "d".repeat(60)));
        let err = check_socket_dir(&long).unwrap_err();
        assert!(err.message.contains(CONTROL_DIR_ENV), "{err}");
    }

    #[test]
    fn options_never_relax_host_keys_and_share_one_private_master() {
        let dir = tempfile::tempdir().unwrap();
        let cm = dir.path().join("cm");
        let cm_text = cm.display().to_string();
        let env = move |k: &str| (k == CONTROL_DIR_ENV).then(|| cm_text.clone());
        let ssh = Ssh::new(Destination::new("devbox").unwrap(), &env).unwrap();
        let opts: Vec<String> = ssh
            .options()
            .iter()
            .map(|o| o.to_string_lossy().into_owned())
            .collect();
        assert!(opts.iter().any(|o| o == "BatchMode=yes"));
        assert!(opts.iter().any(|o| o == "ForwardAgent=no"));
        assert!(opts.iter().any(|o| o == "ControlMaster=auto"));
        assert!(
            opts.iter()
                .any(|o| *o == format!("ControlPath={}/%C", cm.display()))
        );
        assert!(!opts.iter().any(|o| o.contains("StrictHostKeyChecking")));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&cm).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }

    #[test]
    fn a_control_directory_or_socket_another_user_controls_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let cm = dir.path().join("cm");
        let client = |cm: &Path| {
            let text = cm.display().to_string();
            let env = move |k: &str| (k == CONTROL_DIR_ENV).then(|| text.clone());
            Ssh::new(Destination::new("devbox").unwrap(), &env)
        };
        // Missing: herd creates it 0700.
        client(&cm).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(&cm), 0o700);
        // Writable by others (a shared /tmp directory): refused, saying why, and left as it is.
        std::fs::set_permissions(&cm, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = client(&cm).unwrap_err();
        assert_eq!(err.code, ErrorCode::Unavailable, "{err}");
        assert!(
            err.message.contains("writable by its group or by others"),
            "{err}"
        );
        assert!(err.message.contains(CONTROL_DIR_ENV), "{err}");
        assert_eq!(mode(&cm), 0o777);
        std::fs::set_permissions(&cm, std::fs::Permissions::from_mode(0o700)).unwrap();
        // An entry others may write to, or a symbolic link, in place of a socket.
        let entry = cm.join("0123abcd");
        std::fs::write(&entry, "").unwrap();
        std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o666)).unwrap();
        let err = client(&cm).unwrap_err();
        assert!(err.message.contains("0123abcd"), "{err}");
        std::fs::remove_file(&entry).unwrap();
        std::os::unix::fs::symlink("/elsewhere", &entry).unwrap();
        assert!(client(&cm).unwrap_err().message.contains("symbolic link"));
        std::fs::remove_file(&entry).unwrap();
        client(&cm).unwrap();
        // Only root can give a file away, so the ownership rules are tested when run as root.
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            let listener = std::os::unix::net::UnixListener::bind(&entry).unwrap();
            std::os::unix::fs::chown(&entry, Some(65534), None).unwrap();
            let err = client(&cm).unwrap_err();
            assert!(err.message.contains("owned by uid 65534"), "{err}");
            drop(listener);
            std::fs::remove_file(&entry).unwrap();
            std::os::unix::fs::chown(&cm, Some(65534), None).unwrap();
            let err = client(&cm).unwrap_err();
            assert_eq!(err.code, ErrorCode::Unavailable, "{err}");
            assert!(err.message.contains("owned by uid 65534"), "{err}");
        }
    }

    #[test]
    fn ssh_failures_name_what_to_run() {
        let dest = Destination::new("devbox").unwrap();
        let cases = [
            (
                "root@127.0.0.1: Permission denied (publickey).",
                "ssh-agent",
            ),
            ("Host key verification failed.", "ssh devbox true"),
            (
                "@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\nHost key verification failed.",
                "ssh-keygen -R",
            ),
            (
                "ssh: Could not resolve hostname devbox: Name or service not known",
                "~/.ssh/config",
            ),
            (
                "ssh: connect to host 127.0.0.1 port 1: Connection refused",
                "not reachable",
            ),
        ];
        for (stderr, hint) in cases {
            let err = classify(&dest, stderr);
            assert_eq!(err.code, ErrorCode::Unavailable);
            assert!(err.message.contains(hint), "{stderr}: {err}");
        }
    }
}
