//! "Another machine" for a scenario: a real OpenSSH server on 127.0.0.1 in a PID and mount
//! namespace of its own, with a private home and `/tmp`, reached by key only through a test
//! `ssh` configuration.
//!
//! [`Remote::start`] generates a host key and a user key, writes `sshd_config` (a free port,
//! `PasswordAuthentication no`, `UsePAM no`, `StrictModes no`, `SetEnv PATH=…`) and runs `sshd`
//! under a small loop that is the namespace's init:
//!
//! ```text
//! unshare --pid --mount --fork --mount-proc bash -c '
//!   mount --bind <dir>/server /srv; mount --bind <dir>/home <$HOME>
//!   mount --bind <dir>/boot_id.<n> /proc/sys/kernel/random/boot_id; mount -t tmpfs tmpfs /tmp
//!   while :; do [ -e /srv/hold ] || sshd -D -e -f /srv/sshd_config; sleep 0.1; done'
//! ```
//!
//! so the sessions see their own processes (PIDs from 1), a boot id of each boot's own, their
//! own home and an empty `/tmp`:
//! none of the local artifacts, none of the local processes. What the sessions are given on
//! their `PATH` (Pi and Node.js) is bound back at its own path when it lies under the local
//! `/tmp` (a checkout there), so the scenarios pass from any checkout.
//! [`Remote::start_with_shell`] gives the account another login shell there (a `passwd` of the
//! namespace's own, bound over `/etc/passwd`): fish, tcsh, csh. The network is shared. The local
//! side gets a private home of its own and a client configuration ([`Remote::env`]): `HostName
//! 127.0.0.1`, the port, the user key (`IdentitiesOnly yes`) and a known-hosts file holding the
//! server's key (`StrictHostKeyChecking yes`).
//!
//! Faults: [`Remote::kill_connections`] kills the listener and every per-connection `sshd` (the
//! loop starts a fresh listener; the children of the sessions live on), [`Remote::stop`] and
//! [`Remote::restart`] keep the server down in between, and [`Remote::power_off`] SIGKILLs the
//! namespace's init, so the kernel kills every process of "the machine". Dropping the handle
//! powers it off.
//!
//! ```no_run
//! let remote = herd_e2e::ssh::Remote::start(&[]);
//! let run = remote.ssh("echo $HOME");
//! assert!(run.success(), "{run}");
//! ```

use std::ffi::OsString;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tempfile::TempDir;

use crate::cli::{self, Run};
use crate::proc;
use crate::wait::{try_wait_for, wait_for};

/// The alias of the remote in the client configuration.
pub const ALIAS: &str = "devbox";

/// How long the server may take to accept connections after a start.
const START_BUDGET: Duration = Duration::from_secs(20);

/// The time one `ssh` or `ssh-keygen` of the fixture may take.
const SSH_BUDGET: Duration = Duration::from_secs(30);

/// Where the server's files appear inside the namespace (bound over it there only).
const SERVER_MOUNT: &str = "/srv";

/// The kernel's boot id, which "the machine" sees replaced by one of its own.
const BOOT_ID: &str = "/proc/sys/kernel/random/boot_id";

/// A running OpenSSH server in a namespace of its own.
pub struct Remote {
    dir: TempDir,
    port: u16,
    unshare: Option<Child>,
    /// How many times "the machine" booted.
    boots: u32,
    /// The namespace's init (the loop), as the local side sees its PID.
    init: u32,
    user: String,
    remote_home: PathBuf,
    /// The local directories shown at their own paths inside the namespace, under its `/tmp`.
    exposed: Vec<PathBuf>,
    /// The login shell of the account inside the namespace, when not the passwd database's.
    shell: Option<PathBuf>,
}

impl Remote {
    /// Starts the server; `path` is put before `/usr/local/bin:/usr/bin:/bin` on the sessions'
    /// `PATH` (where the remote finds Pi and Node.js; herd's own programs come by `host add`).
    ///
    /// # Panics
    ///
    /// When `sshd`, `ssh-keygen` or `unshare` is missing, or the server does not accept
    /// connections within 20 s.
    pub fn start(path: &[&Path]) -> Remote {
        Remote::start_with(path, &[])
    }

    /// Like [`Remote::start`], with `vars` set in every session too (`SetEnv`; a value must not
    /// hold whitespace or quotes).
    ///
    /// # Panics
    ///
    /// As [`Remote::start`], and for a value with whitespace or quotes.
    pub fn start_with(path: &[&Path], vars: &[(&str, &str)]) -> Remote {
        Remote::start_as(path, vars, None)
    }

    /// Like [`Remote::start`], the account's login shell being `shell` on "the machine" (its
    /// passwd entry there says so), as a host whose user chose fish or tcsh.
    ///
    /// # Panics
    ///
    /// As [`Remote::start`], and when `shell` is not an executable file.
    pub fn start_with_shell(shell: &Path) -> Remote {
        assert!(
            shell.is_file(),
            "{} is missing: install it (bash .ci/run does)",
            shell.display()
        );
        Remote::start_as(&[], &[], Some(shell))
    }

    fn start_as(path: &[&Path], vars: &[(&str, &str)], shell: Option<&Path>) -> Remote {
        let sshd = Path::new("/usr/sbin/sshd");
        assert!(
            sshd.exists(),
            "{} is missing: install openssh-server (bash .ci/run does)",
            sshd.display()
        );
        let dir = tempfile::Builder::new()
            .prefix("herd-e2e-ssh-")
            .tempdir()
            .expect("a temporary directory");
        for sub in ["server", "home/.ssh", "client", "local-home"] {
            std::fs::create_dir_all(dir.path().join(sub)).expect("the fixture's directories");
        }
        let user = whoami();
        let remote_home = passwd_home();
        let server = dir.path().join("server");
        let client = dir.path().join("client");
        keygen(&server.join("host_key"));
        keygen(&client.join("id_ed25519"));
        std::fs::copy(
            client.join("id_ed25519.pub"),
            dir.path().join("home/.ssh/authorized_keys"),
        )
        .expect("the authorized key can be written");

        let port = free_port();
        let mut set_env = Vec::new();
        for (k, v) in vars {
            assert!(
                !v.contains(|c: char| c.is_whitespace() || c == '"' || c == '\''),
                "SetEnv {k}: {v:?} holds whitespace or a quote"
            );
            set_env.push(format!("{k}={v}"));
        }
        let mut search: Vec<String> = path.iter().map(|p| p.display().to_string()).collect();
        search.extend(["/usr/local/bin", "/usr/bin", "/bin"].map(str::to_owned));
        let config = format!(
            "ListenAddress 127.0.0.1\n\
             Port {port}\n\
             HostKey {SERVER_MOUNT}/host_key\n\
             PidFile {SERVER_MOUNT}/sshd.pid\n\
             PermitRootLogin prohibit-password\n\
             PubkeyAuthentication yes\n\
             PasswordAuthentication no\n\
             KbdInteractiveAuthentication no\n\
             UsePAM no\n\
             StrictModes no\n\
             AuthorizedKeysFile {home}/.ssh/authorized_keys\n\
             SetEnv PATH={path}{set_env}\n\
             LogLevel ERROR\n",
            home = remote_home.display(),
            path = search.join(":"),
            set_env = set_env.iter().map(|v| format!(" {v}")).collect::<String>(),
        );
        std::fs::write(server.join("sshd_config"), config).expect("sshd_config can be written");

        let host_key = std::fs::read_to_string(server.join("host_key.pub"))
            .expect("the host key was generated");
        let host_key: Vec<&str> = host_key.split_whitespace().take(2).collect();
        std::fs::write(
            client.join("known_hosts"),
            format!("[127.0.0.1]:{port} {}\n", host_key.join(" ")),
        )
        .expect("known_hosts can be written");
        std::fs::write(
            client.join("config"),
            format!(
                "Host {ALIAS}\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n  \
                 IdentityFile {key}\n  IdentitiesOnly yes\n  UserKnownHostsFile {known}\n  \
                 StrictHostKeyChecking yes\n  LogLevel ERROR\n",
                key = client.join("id_ed25519").display(),
                known = client.join("known_hosts").display(),
            ),
        )
        .expect("the client configuration can be written");

        std::fs::create_dir_all("/run/sshd").expect("sshd's privilege separation directory");
        let mut remote = Remote {
            dir,
            port,
            unshare: None,
            boots: 0,
            init: 0,
            user,
            remote_home,
            exposed: exposed_under_tmp(path),
            shell: shell.map(Path::to_path_buf),
        };
        if let Some(shell) = &remote.shell {
            std::fs::write(
                server.join("passwd"),
                passwd_with_shell(&remote.user, shell),
            )
            .expect("the namespace's passwd can be written");
        }
        for (n, _) in remote.exposed.iter().enumerate() {
            std::fs::create_dir_all(server.join(format!("exposed/{n}")))
                .expect("the exposed directories' mount points");
        }
        remote.boot();
        remote
    }

    /// Starts the namespace and its loop, and waits until the port accepts connections.
    fn boot(&mut self) {
        let server = self.dir.path().join("server");
        let home = self.dir.path().join("home");
        // Each boot has a boot id of its own, as a machine's does: another machine's than the
        // local one, and another after a reboot.
        let boot_id = self.dir.path().join(format!("boot_id.{}", self.boots));
        self.boots += 1;
        std::fs::write(&boot_id, format!("{}\n", fresh_boot_id())).expect("a boot id");
        // What the sessions need from under the local /tmp (Pi, in a checkout there) is held
        // under /srv before the empty /tmp hides it, and bound back at its own path after.
        let mut hold = String::new();
        let mut expose = String::new();
        for (n, dir) in self.exposed.iter().enumerate() {
            let at = format!("{SERVER_MOUNT}/exposed/{n}");
            hold.push_str(&format!("mount --bind {} {at} && ", shell_word(dir)));
            expose.push_str(&format!(
                "mkdir -p {dir} && mount --bind {at} {dir} && ",
                dir = shell_word(dir)
            ));
        }
        let passwd = if self.shell.is_some() {
            format!("mount --bind {SERVER_MOUNT}/passwd /etc/passwd && ")
        } else {
            String::new()
        };
        let script = format!(
            "mount --bind {server} {SERVER_MOUNT} && mount --bind {home} {remote_home} && \
             mount --bind {boot_id} {BOOT_ID} && {passwd}{hold}\
             mount -t tmpfs -o mode=1777 tmpfs /tmp && {expose}\
             while :; do [ -e {SERVER_MOUNT}/hold ] || /usr/sbin/sshd -D -e -f \
             {SERVER_MOUNT}/sshd_config; sleep 0.1; done",
            server = shell_word(&server),
            home = shell_word(&home),
            remote_home = shell_word(&self.remote_home),
            boot_id = shell_word(&boot_id),
        );
        let log = std::fs::File::create(self.dir.path().join("sshd.log")).expect("sshd.log");
        #[expect(
            clippy::disallowed_methods,
            reason = "the fixture's server runs until the test powers it off; it has no budget"
        )]
        let mut cmd = Command::new("unshare");
        cmd.args(["--pid", "--mount", "--fork", "--mount-proc", "bash", "-c"])
            .arg(script)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("sshd.log"))
            .stderr(log);
        #[expect(
            clippy::disallowed_methods,
            reason = "the fixture's server runs until the test powers it off"
        )]
        let child = cmd.spawn().expect("unshare starts");
        let unshare_pid = child.id();
        self.unshare = Some(child);
        self.init = wait_for(
            "the namespace's init (the child of unshare)",
            START_BUDGET,
            || children_of(unshare_pid).into_iter().next(),
        );
        self.wait_accepting();
    }

    /// Waits until the server's port accepts connections.
    fn wait_accepting(&self) {
        wait_for(
            &format!("sshd to accept on 127.0.0.1:{}", self.port),
            START_BUDGET,
            || self.accepting().then_some(()),
        );
    }

    /// Whether the port accepts a connection now.
    pub fn accepting(&self) -> bool {
        TcpStream::connect_timeout(
            &(Ipv4Addr::LOCALHOST, self.port).into(),
            Duration::from_millis(500),
        )
        .is_ok()
    }

    /// The alias of the remote in [`Remote::ssh_config`].
    pub fn alias(&self) -> &'static str {
        ALIAS
    }

    /// The server's port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The client configuration (an `ssh -F` file; `ssh` reads `~/.ssh/config` of the account,
    /// not of `$HOME`).
    pub fn ssh_config(&self) -> PathBuf {
        self.dir.path().join("client/config")
    }

    /// The known-hosts file of the client configuration.
    pub fn known_hosts(&self) -> PathBuf {
        self.dir.path().join("client/known_hosts")
    }

    /// The remote's home as the local side sees it (what the remote sees as its `$HOME`).
    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// The remote's `$HOME`, as the remote sees it.
    pub fn remote_home(&self) -> &Path {
        &self.remote_home
    }

    /// Translates a path the remote printed under its `$HOME` into the local view of it.
    pub fn local_path(&self, remote: &str) -> PathBuf {
        match Path::new(remote).strip_prefix(&self.remote_home) {
            Ok(rest) => self.home().join(rest),
            Err(_) => PathBuf::from(remote),
        }
    }

    /// The local side's private home.
    pub fn local_home(&self) -> PathBuf {
        self.dir.path().join("local-home")
    }

    /// The variables the local herd programs run with: the private home and configuration
    /// directory, the client configuration (`HERD_SSH_CONFIG`) and a short directory for the
    /// master connections' sockets.
    pub fn env(&self) -> Vec<(OsString, OsString)> {
        let home = self.local_home();
        vec![
            ("HOME".into(), home.clone().into()),
            ("XDG_CONFIG_HOME".into(), home.join(".config").into()),
            ("HERD_SSH_CONFIG".into(), self.ssh_config().into()),
            (
                "HERD_SSH_CONTROL_DIR".into(),
                self.dir.path().join("cm").into(),
            ),
        ]
    }

    /// Runs `command` on the remote through its own connection (no master), within 30 s.
    pub fn ssh(&self, command: &str) -> Run {
        let config = self.ssh_config();
        let cmd = cli::within("ssh", SSH_BUDGET)
            .args([
                OsString::from("-F"),
                config.into(),
                "-o".into(),
                "BatchMode=yes".into(),
                "-o".into(),
                "ControlMaster=no".into(),
                "-o".into(),
                "ControlPath=none".into(),
                "-T".into(),
                ALIAS.into(),
                command.into(),
            ])
            .stdin_null();
        cli::try_run(&cmd)
    }

    /// The PIDs (as the local side sees them) of every process of the namespace, init first.
    pub fn pids(&self) -> Vec<u32> {
        let Ok(ns) = std::fs::read_link(format!("/proc/{}/ns/pid", self.init)) else {
            return Vec::new();
        };
        let mut pids = vec![self.init];
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            if pid != self.init
                && std::fs::read_link(format!("/proc/{pid}/ns/pid")).is_ok_and(|l| l == ns)
                && proc::process_alive(pid)
            {
                pids.push(pid);
            }
        }
        pids
    }

    /// The PIDs of the namespace's processes whose command name is `comm`.
    pub fn pids_named(&self, comm: &str) -> Vec<u32> {
        self.pids()
            .into_iter()
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/comm"))
                    .is_ok_and(|c| c.trim_end() == comm)
            })
            .collect()
    }

    /// Kills the listener and every per-connection `sshd` (every connection drops at once, as
    /// when a network goes away); the loop starts a new listener, and the processes the
    /// sessions started live on. Returns once the port accepts again.
    pub fn kill_connections(&self) {
        self.kill_sshd();
        self.wait_accepting();
    }

    /// Stops the server: no listener, no connection, until [`Remote::restart`]. The processes
    /// the sessions started live on.
    pub fn stop(&self) {
        std::fs::write(self.dir.path().join("server/hold"), "").expect("the hold file");
        self.kill_sshd();
        wait_for("the listener to be gone", START_BUDGET, || {
            (!self.accepting()).then_some(())
        });
    }

    /// Starts the server again after [`Remote::stop`]; returns once it accepts connections.
    pub fn restart(&self) {
        let _ = std::fs::remove_file(self.dir.path().join("server/hold"));
        self.wait_accepting();
    }

    fn kill_sshd(&self) {
        for _ in 0..3 {
            let sshd = self.pids_named("sshd");
            if sshd.is_empty() {
                break;
            }
            for pid in sshd {
                proc::signal_pid(pid, libc::SIGKILL);
            }
            let _ = try_wait_for(Duration::from_secs(2), || {
                self.pids_named("sshd").is_empty().then_some(())
            });
        }
    }

    /// Powers "the machine" off: SIGKILL to the namespace's init, so the kernel kills every
    /// process in it. Returns once they are gone.
    pub fn power_off(&mut self) {
        let pids = self.pids();
        proc::signal_pid(self.init, libc::SIGKILL);
        if let Some(mut child) = self.unshare.take() {
            let _ = try_wait_for(Duration::from_secs(10), || {
                child.try_wait().ok().flatten().map(|_| ())
            });
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = try_wait_for(Duration::from_secs(10), || {
            pids.iter()
                .all(|pid| !proc::process_alive(*pid))
                .then_some(())
        });
    }

    /// Boots "the machine" again after [`Remote::power_off`]: a new namespace over the same
    /// home (its files survive, its processes do not), as a reboot; returns once it accepts.
    pub fn power_on(&mut self) {
        assert!(self.unshare.is_none(), "the machine is running");
        let _ = std::fs::remove_file(self.dir.path().join("server/hold"));
        self.boot();
    }

    /// The server's log (`sshd -e`), for assertion messages.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }

    /// The account the client logs in as.
    pub fn user(&self) -> &str {
        &self.user
    }
}

impl Drop for Remote {
    fn drop(&mut self) {
        if self.unshare.is_some() {
            self.power_off();
        }
    }
}

/// Generates an ed25519 key pair without a passphrase at `path` (and `path.pub`).
fn keygen(path: &Path) {
    let cmd = cli::within("ssh-keygen", SSH_BUDGET)
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "herd-e2e", "-f"])
        .arg(path);
    let out = cli::try_run(&cmd);
    assert!(out.success(), "ssh-keygen:\n{out}");
}

/// A port of 127.0.0.1 that nothing listens on now.
fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// The direct children of `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// The name of the account this process runs as.
fn whoami() -> String {
    let out = cli::try_run(&cli::within("id", SSH_BUDGET).arg("-un"));
    assert!(out.success(), "id -un:\n{out}");
    out.stdout.trim().to_owned()
}

/// The home directory of this account in the passwd database (what `sshd` gives a session).
fn passwd_home() -> PathBuf {
    let out = cli::try_run(
        &cli::within("sh", SSH_BUDGET).args(["-c", "getent passwd \"$(id -u)\" | cut -d: -f6"]),
    );
    let home = out.stdout.trim();
    assert!(out.success() && !home.is_empty(), "getent passwd:\n{out}");
    PathBuf::from(home)
}

/// The directories of `path` that lie under `/tmp` (resolved, without one inside another):
/// the namespace's empty `/tmp` would hide them.
fn exposed_under_tmp(path: &[&Path]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = path
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .filter(|p| p.starts_with("/tmp") && p != Path::new("/tmp"))
        .collect();
    dirs.sort();
    dirs.dedup();
    let mut outer: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        if !outer.iter().any(|o| dir.starts_with(o)) {
            outer.push(dir);
        }
    }
    outer
}

/// The passwd database with the login shell of `user` replaced by `shell`.
fn passwd_with_shell(user: &str, shell: &Path) -> String {
    let passwd = std::fs::read_to_string("/etc/passwd").expect("/etc/passwd");
    let mut out = String::new();
    for line in passwd.lines() {
        let mut fields: Vec<&str> = line.split(':').collect();
        let shell_text = shell.display().to_string();
        if fields.first() == Some(&user) && fields.len() == 7 {
            fields[6] = &shell_text;
            out.push_str(&fields.join(":"));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// `path` quoted for a POSIX shell.
fn shell_word(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', "'\\''"))
}

/// A random boot id (the kernel's own generator, as the boot id itself is).
fn fresh_boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/uuid")
        .expect("the kernel's uuid generator")
        .trim()
        .to_owned()
}
