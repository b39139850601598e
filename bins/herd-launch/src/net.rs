//! The two processes of a confined child's network allowlist (`herd_sandbox::net`):
//! `herd-launch exec --net-relay` starts the relay outside the sandbox before it becomes the
//! sandbox, and the sandbox starts the child through `herd-launch enter`, which starts the
//! forwarder inside and then becomes the child. Each helper dies with the process that started
//! it (the parent-death signal), so the child's end is theirs.

use std::ffi::OsString;
use std::io::BufRead;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use herd_core::{Error, ErrorCode};
use herd_sandbox::net::{self, Route};
use herd_sandbox::policy::Endpoint;

/// How long the forwarder may take to listen before the child is refused.
const READY_WITHIN: Duration = Duration::from_secs(10);

/// What `herd-launch exec --net-relay` was given.
pub struct RelayArgs<'a> {
    pub socket: &'a Path,
    pub allow: &'a [String],
}

fn unavailable(what: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::Unavailable,
        format!("cannot open the child's network: {what}"),
    )
}

fn this_program() -> Result<std::path::PathBuf, Error> {
    std::env::current_exe().map_err(|e| unavailable(format!("cannot find herd-launch: {e}")))
}

/// Binds the relay's socket and starts `herd-launch net-relay` on it, tied to this process.
pub fn start_relay(relay: &RelayArgs<'_>) -> Result<(), Error> {
    for allow in relay.allow {
        Endpoint::parse(allow).map_err(unavailable)?;
    }
    let listener = net::bind_relay(relay.socket)
        .map_err(|e| unavailable(format!("{}: {e}", relay.socket.display())))?;
    let mut args: Vec<OsString> = vec!["net-relay".into()];
    for allow in relay.allow {
        args.extend(["--allow".into(), allow.into()]);
    }
    let stdin = Stdio::from(OwnedFd::from(listener));
    // Not waited for: it ends with this process (which becomes the sandbox), and the kernel
    // hands it to the sandbox's reaper.
    net::start_helper(&this_program()?, &args, stdin, Stdio::null(), false)
        .map_err(|e| unavailable(format!("cannot start the relay: {e}")))?;
    Ok(())
}

/// `herd-launch net-relay`: serves the socket on standard input. Returns only on failure.
pub fn relay(allow: &[String], parent: u32) -> Error {
    if let Err(e) = net::end_with_parent(parent) {
        return unavailable(e);
    }
    let allow = match allow
        .iter()
        .map(|a| Endpoint::parse(a))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(allow) => allow,
        Err(why) => return unavailable(why),
    };
    use std::os::fd::FromRawFd;
    // SAFETY: standard input is the listening socket `start_relay` handed over, owned by nothing
    // else in this process.
    let listener = unsafe { std::os::unix::net::UnixListener::from_raw_fd(0) };
    match net::relay(listener, allow) {
        Ok(()) => unavailable("the relay's socket closed"),
        Err(e) => unavailable(e),
    }
}

/// `herd-launch enter`: with `serve` (the process it ends with), listens and forwards (returns
/// only on failure); otherwise gives the runner back the terminal's interrupt, starts the
/// forwarder when there are routes and waits until it listens, and execs `argv`.
pub fn enter(
    socket: Option<&Path>,
    routes: &[String],
    serve: Option<u32>,
    argv: &[OsString],
) -> (Error, i32) {
    let routes = match routes
        .iter()
        .map(|r| Route::parse(r))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(routes) => routes,
        Err(why) => return (unavailable(why), 126),
    };
    if let (Some(parent), Some(socket)) = (serve, socket) {
        if let Err(e) = net::end_with_parent(parent) {
            return (unavailable(e), 126);
        }
        let err = match net::forward(&routes, socket, std::io::stdout()) {
            Ok(()) => unavailable("the forwarder stopped"),
            Err(e) => unavailable(e),
        };
        return (err, 126);
    }
    if let (Some(socket), false) = (socket, routes.is_empty()) {
        if let Err(err) = start_forwarder(socket, &routes) {
            return (err, 126);
        }
    }
    crate::exec::set_interrupts(libc::SIG_DFL);
    crate::exec::become_runner(argv)
}

/// Starts the forwarder, in a process group of its own, and waits (bounded) until it listens.
fn start_forwarder(socket: &Path, routes: &[Route]) -> Result<(), Error> {
    let mut args: Vec<OsString> = vec![
        "enter".into(),
        "--serve".into(),
        "--socket".into(),
        socket.as_os_str().to_owned(),
    ];
    for route in routes {
        args.extend(["--route".into(), route.to_arg().into()]);
    }
    let mut child = net::start_helper(&this_program()?, &args, Stdio::null(), Stdio::piped(), true)
        .map_err(|e| unavailable(format!("cannot start the forwarder: {e}")))?;
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let read = std::io::BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(read.map(|_| line));
    });
    match rx.recv_timeout(READY_WITHIN) {
        Ok(Ok(line)) if line.trim_end() == net::READY => Ok(()),
        Ok(_) => Err(unavailable("the forwarder ended before it listened")),
        Err(_) => Err(unavailable(format!(
            "the forwarder did not listen within {} s",
            READY_WITHIN.as_secs()
        ))),
    }
}
