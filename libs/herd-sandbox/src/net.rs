//! A network allowlist enforced outside the child: `network: ["host:port", …]`.
//!
//! The sandbox has a network namespace of its own (`--unshare-net`): a loopback and nothing
//! else. Two small processes join it to the allowed addresses:
//!
//! - **the relay**, outside the sandbox, started by `herd-launch exec` before it becomes the
//!   sandbox: it listens on a Unix socket, reads which `host:port` each connection is for, and
//!   connects only to those on its list (which it took from its own command line, out of the
//!   child's reach). The child can reach the socket, but can ask it for nothing else.
//! - **the forwarder**, inside, started before the child: it listens, on the sandbox's loopback,
//!   at the address each allowed `host:port` is given there ([`Layout`]) and passes each
//!   connection to the relay. A loopback address is its own; a host name gets a loopback address
//!   of its own (`127.0.0.2` on), written into the sandbox's `/etc/hosts`, so a URL naming it
//!   still works, TLS included (the bytes pass through unchanged). DNS and every other address
//!   are refused: there is no route out.
//!
//! Both die with the child: each is started with the kernel's parent-death signal.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::policy::Endpoint;

/// The first line of each connection to the relay: `herd-net 1 <host:port>`.
const HELLO: &str = "herd-net 1 ";
/// The longest first line read.
const HELLO_MAX: usize = 300;
/// How long the relay waits for a first line, and for a connection out.
const DEADLINE: Duration = Duration::from_secs(10);
/// The most connections one relay (or forwarder) carries at once.
const MAX_OPEN: usize = 256;
/// What the forwarder prints when it listens everywhere it should.
pub const READY: &str = "ready";

/// Where each allowed address is answered inside the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub routes: Vec<Route>,
    /// The sandbox's `/etc/hosts`: the names' loopback addresses.
    pub hosts: String,
}

/// One allowed `host:port` and the address the forwarder listens at for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub listen: SocketAddr,
    pub to: Endpoint,
}

impl Route {
    /// `<listen>=<host:port>`, as the forwarder's command line carries it.
    pub fn to_arg(&self) -> String {
        format!("{}={}", self.listen, self.to)
    }

    pub fn parse(text: &str) -> Result<Route, String> {
        let (listen, to) = text
            .split_once('=')
            .ok_or_else(|| format!("\"{text}\" is not <address>=<host:port>"))?;
        Ok(Route {
            listen: listen
                .parse()
                .map_err(|_| format!("\"{listen}\" is not an address"))?,
            to: Endpoint::parse(to)?,
        })
    }
}

impl Layout {
    /// Gives every endpoint its address inside: a loopback address as itself, `localhost` as
    /// `127.0.0.1`, every other name a loopback address of its own from `127.0.0.2`.
    pub fn of(endpoints: &[Endpoint]) -> Layout {
        let mut names: BTreeMap<&str, Ipv4Addr> = BTreeMap::new();
        let mut routes: Vec<Route> = Vec::new();
        for endpoint in endpoints {
            let ip = match endpoint.loopback_address() {
                Some(ip) => ip,
                None if endpoint.host == "localhost" => Ipv4Addr::LOCALHOST,
                None => {
                    let next = u32::from(Ipv4Addr::new(127, 0, 0, 2)) + names.len() as u32;
                    *names.entry(&endpoint.host).or_insert(Ipv4Addr::from(next))
                }
            };
            let listen = SocketAddr::from((ip, endpoint.port));
            // `localhost:80` and `127.0.0.1:80` are one address inside: the first keeps it.
            if routes.iter().all(|r| r.listen != listen) {
                routes.push(Route {
                    listen,
                    to: endpoint.clone(),
                });
            }
        }
        let mut hosts = String::from("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n");
        for (name, ip) in &names {
            hosts.push_str(&format!("{ip}\t{name}\n"));
        }
        Layout { routes, hosts }
    }

    /// Whether the forwarder listens on a port only a privileged process may (below 1024): the
    /// sandbox then keeps the one capability that allows it, inside its own network namespace.
    pub fn needs_low_ports(&self) -> bool {
        self.routes.iter().any(|r| r.listen.port() < 1024)
    }
}

/// A Unix socket's path, short enough for the kernel (108 bytes) however deep its directory:
/// a long one is reached through the directory's descriptor (`/proc/self/fd/N/<name>`), which
/// stays open while the returned guard lives.
fn short_path(path: &Path) -> io::Result<(PathBuf, Option<std::fs::File>)> {
    if path.as_os_str().len() < 100 {
        return Ok((path.to_path_buf(), None));
    }
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a socket path needs a directory and a name",
        ));
    };
    let dir = std::fs::File::open(dir)?;
    use std::os::fd::AsRawFd;
    let short = PathBuf::from(format!("/proc/self/fd/{}", dir.as_raw_fd())).join(name);
    Ok((short, Some(dir)))
}

/// Binds the relay's socket at `path` (a file left there by an earlier run is replaced).
pub fn bind_relay(path: &Path) -> io::Result<UnixListener> {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let (short, _dir) = short_path(path)?;
    UnixListener::bind(short)
}

/// Connects to the relay at `path`.
fn connect_relay(path: &Path) -> io::Result<UnixStream> {
    let (short, _dir) = short_path(path)?;
    UnixStream::connect(short)
}

/// Starts `program args… --parent <this process>` as a helper, with `stdin` as its standard
/// input and, when `detach`, a process group of its own (so a terminal's Ctrl+C or a shell's job
/// control does not reach it). The helper calls [`end_with_parent`] first.
pub fn start_helper(
    program: &Path,
    args: &[OsString],
    stdin: std::process::Stdio,
    stdout: std::process::Stdio,
    detach: bool,
) -> io::Result<std::process::Child> {
    use std::os::unix::process::CommandExt;
    #[expect(
        clippy::disallowed_methods,
        reason = "a helper that lives exactly as long as its parent, handed a socket or a pipe: no budget or captured output applies"
    )]
    let mut cmd = std::process::Command::new(program);
    cmd.args(args)
        .arg("--parent")
        .arg(std::process::id().to_string())
        .stdin(stdin)
        .stdout(stdout);
    if detach {
        cmd.process_group(0);
    }
    #[expect(clippy::disallowed_methods, reason = "see above")]
    cmd.spawn()
}

/// Arms the kernel's parent-death signal (SIGKILL) of this process, in the helper itself (an
/// `exec` may clear one armed before it): it ends when `parent` does. An error when `parent`
/// has already ended, or is not this process's parent.
pub fn end_with_parent(parent: u32) -> io::Result<()> {
    // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number and touches no memory.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // Checked after arming: a parent that ends from here on ends this process too.
    if std::os::unix::process::parent_id() != parent {
        return Err(io::Error::other(format!(
            "process {parent}, which started this one, has ended"
        )));
    }
    Ok(())
}

/// The relay: serves `listener` for as long as the process lives, connecting each connection to
/// the `host:port` it names when `allowed` has it, and closing it otherwise.
pub fn relay(listener: UnixListener, allowed: Vec<Endpoint>) -> io::Result<()> {
    let allowed = Arc::new(allowed);
    let open = Arc::new(AtomicUsize::new(0));
    for conn in listener.incoming() {
        let Ok(conn) = conn else { continue };
        let Some(slot) = Slot::take(&open) else {
            continue;
        };
        let allowed = Arc::clone(&allowed);
        std::thread::spawn(move || {
            let _slot = slot;
            let _ = relay_one(conn, &allowed);
        });
    }
    Ok(())
}

fn relay_one(conn: UnixStream, allowed: &[Endpoint]) -> io::Result<()> {
    conn.set_read_timeout(Some(DEADLINE))?;
    let line = greeting(&conn)?;
    conn.set_read_timeout(None)?;
    let asked = line
        .strip_prefix(HELLO)
        .and_then(|l| Endpoint::parse(l).ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no greeting"))?;
    if !allowed.contains(&asked) {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{asked} is not allowed"),
        ));
    }
    let out = connect_out(&asked)?;
    splice(conn, out)
}

/// The first line of `conn`, without its newline, read a byte at a time: what follows it is the
/// connection's own and must stay unread.
fn greeting(mut conn: &UnixStream) -> io::Result<String> {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while line.len() < HELLO_MAX {
        conn.read_exact(&mut byte)?;
        if byte[0] == b'\n' {
            return String::from_utf8(line)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8"));
        }
        line.push(byte[0]);
    }
    Err(io::Error::new(io::ErrorKind::InvalidData, "no greeting"))
}

/// Connects to the first address of `endpoint` that answers, each within [`DEADLINE`].
fn connect_out(endpoint: &Endpoint) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
    for addr in (endpoint.host.as_str(), endpoint.port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&addr, DEADLINE) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// The forwarder: listens at every route's address, says [`READY`] on `ready`, then passes each
/// connection to the relay at `socket` for as long as the process lives.
pub fn forward(routes: &[Route], socket: &Path, mut ready: impl Write) -> io::Result<()> {
    let mut listeners = Vec::with_capacity(routes.len());
    for route in routes {
        let listener = TcpListener::bind(route.listen).map_err(|e| {
            io::Error::new(e.kind(), format!("cannot listen at {}: {e}", route.listen))
        })?;
        listeners.push((listener, route.to.clone()));
    }
    writeln!(ready, "{READY}")?;
    ready.flush()?;
    drop(ready);
    let open = Arc::new(AtomicUsize::new(0));
    let socket = Arc::new(socket.to_path_buf());
    let threads: Vec<_> = listeners
        .into_iter()
        .map(|(listener, to)| {
            let open = Arc::clone(&open);
            let socket = Arc::clone(&socket);
            std::thread::spawn(move || {
                for conn in listener.incoming() {
                    let Ok(conn) = conn else { continue };
                    let Some(slot) = Slot::take(&open) else {
                        continue;
                    };
                    let socket = Arc::clone(&socket);
                    let to = to.clone();
                    std::thread::spawn(move || {
                        let _slot = slot;
                        let _ = forward_one(conn, &socket, &to);
                    });
                }
            })
        })
        .collect();
    for thread in threads {
        let _ = thread.join();
    }
    Ok(())
}

fn forward_one(conn: TcpStream, socket: &Path, to: &Endpoint) -> io::Result<()> {
    let mut relay = connect_relay(socket)?;
    relay.write_all(format!("{HELLO}{to}\n").as_bytes())?;
    splice(relay, conn)
}

/// One of at most [`MAX_OPEN`] connections, given back when dropped.
struct Slot(Arc<AtomicUsize>);

impl Slot {
    fn take(open: &Arc<AtomicUsize>) -> Option<Slot> {
        let taken = open.fetch_add(1, Ordering::SeqCst);
        if taken >= MAX_OPEN {
            open.fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        Some(Slot(Arc::clone(open)))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A stream one side of a connection is carried over.
trait Stream: Read + Write + Send + Sized + 'static {
    fn clone_stream(&self) -> io::Result<Self>;
    fn end_writes(&self);
}

impl Stream for TcpStream {
    fn clone_stream(&self) -> io::Result<Self> {
        self.try_clone()
    }
    fn end_writes(&self) {
        let _ = self.shutdown(std::net::Shutdown::Write);
    }
}

impl Stream for UnixStream {
    fn clone_stream(&self) -> io::Result<Self> {
        self.try_clone()
    }
    fn end_writes(&self) {
        let _ = self.shutdown(std::net::Shutdown::Write);
    }
}

/// Copies each side to the other until both have ended, passing on each end of input.
fn splice<A: Stream, B: Stream>(a: A, b: B) -> io::Result<()> {
    let (mut a_in, mut b_in) = (a.clone_stream()?, b.clone_stream()?);
    let (mut a_out, mut b_out) = (a, b);
    let there = std::thread::spawn(move || {
        let _ = io::copy(&mut a_in, &mut b_out);
        b_out.end_writes();
    });
    let _ = io::copy(&mut b_in, &mut a_out);
    a_out.end_writes();
    let _ = there.join();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoints(text: &str) -> Vec<Endpoint> {
        crate::Network::parse(text).unwrap().endpoints().to_vec()
    }

    #[test]
    fn names_get_loopback_addresses_of_their_own_and_loopback_keeps_its_own() {
        let layout = Layout::of(&endpoints(
            "127.0.0.1:8080,api.example.com:443,api.example.com:80,localhost:8080,other.example.org:443",
        ));
        let listen: Vec<String> = layout.routes.iter().map(Route::to_arg).collect();
        assert_eq!(
            listen,
            [
                "127.0.0.1:8080=127.0.0.1:8080",
                "127.0.0.2:80=api.example.com:80",
                "127.0.0.2:443=api.example.com:443",
                "127.0.0.3:443=other.example.org:443",
            ]
        );
        assert!(layout.hosts.contains("127.0.0.2\tapi.example.com\n"));
        assert!(layout.hosts.contains("127.0.0.3\tother.example.org\n"));
        assert!(layout.needs_low_ports());
        for route in &layout.routes {
            assert_eq!(Route::parse(&route.to_arg()).as_ref(), Ok(route));
        }
    }

    /// The relay and the forwarder end to end on this machine's loopback: an allowed address
    /// answers through both, one the relay does not have is closed without a byte.
    #[test]
    fn the_relay_carries_only_what_it_allows() {
        let dir = tempfile::tempdir().unwrap();
        // A directory deep enough that the socket's path passes the kernel's limit.
        let deep = dir.path().join("d".repeat(60)).join("e".repeat(60));
        std::fs::create_dir_all(&deep).unwrap();
        let socket = deep.join("net.sock");
        let echo = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = echo.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for conn in echo.incoming() {
                let mut conn = conn.unwrap();
                let mut buf = [0u8; 5];
                conn.read_exact(&mut buf).unwrap();
                conn.write_all(&buf).unwrap();
            }
        });
        let allowed = endpoints(&format!("127.0.0.1:{port}"));
        let listener = bind_relay(&socket).unwrap();
        std::thread::spawn(move || relay(listener, allowed));

        let mut greeting = connect_relay(&socket).unwrap();
        // The greeting and the first bytes in one write: none of them may be lost.
        greeting
            .write_all(format!("{HELLO}127.0.0.1:{port}\nhello").as_bytes())
            .unwrap();
        let mut back = [0u8; 5];
        greeting.read_exact(&mut back).unwrap();
        assert_eq!(&back, b"hello");

        let mut refused = connect_relay(&socket).unwrap();
        refused
            .write_all(format!("{HELLO}127.0.0.1:{}\n", port ^ 1).as_bytes())
            .unwrap();
        let mut rest = Vec::new();
        refused.read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty(), "{rest:?}");

        // The forwarder in front of it, at another loopback address of this machine.
        let free = TcpListener::bind("127.0.0.1:0").unwrap();
        let inner = free.local_addr().unwrap();
        drop(free);
        let routes = [Route {
            listen: inner,
            to: Endpoint::parse(&format!("127.0.0.1:{port}")).unwrap(),
        }];
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<()>();
        struct Ready(std::sync::mpsc::Sender<()>);
        impl Write for Ready {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                let _ = self.0.send(());
                Ok(b.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let socket_for = socket.clone();
        std::thread::spawn(move || forward(&routes, &socket_for, Ready(ready_tx)));
        ready_rx.recv_timeout(Duration::from_secs(30)).unwrap();
        let mut through = TcpStream::connect(inner).unwrap();
        through.write_all(b"again").unwrap();
        through.read_exact(&mut back).unwrap();
        assert_eq!(&back, b"again");
    }
}
