//! A confined child's network allowlist (`network: ["host:port", …]`, docs/sandbox.md): the
//! addresses it names answer, through herd's relay outside the sandbox; every other address, and
//! DNS, are refused; the relay and the forwarder end with the child.

use std::io::{Read, Write};
use std::net::{TcpListener, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;

use crate::sandbox::{CONFINED, answer, run_shell, write_config};
use crate::support::{Env, refusal};

/// A server on this machine's loopback that sends back the first five bytes it gets, and counts
/// its connections.
fn echo() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&seen);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            count.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 5];
            if conn.read_exact(&mut buf).is_ok() {
                let _ = conn.write_all(&buf);
            }
        }
    });
    (port, seen)
}

/// The shell lines that try `host:port` with bash's `/dev/tcp` and write what came back (or
/// `refused`) to `file`.
fn try_connect(host: &str, port: u16, file: &str) -> String {
    format!(
        "if bash -c 'exec 3<>/dev/tcp/{host}/{port} && printf hello >&3 && head -c 5 <&3' > {file}.tmp 2>/dev/null; then mv {file}.tmp {file}; else echo refused > {file}; fi; "
    )
}

/// This machine's own name, when it resolves to 127.0.0.1 here (as most machines' hosts files
/// say): then the allowlist is also tried by name, through the sandbox's own hosts file.
fn local_name() -> Option<String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
    let name = name.trim().to_ascii_lowercase();
    let resolves_here = (name.as_str(), 1)
        .to_socket_addrs()
        .ok()?
        .any(|addr| addr.ip() == std::net::Ipv4Addr::LOCALHOST);
    (resolves_here
        && name != "localhost"
        && herd_sandbox::policy::Endpoint::parse(&format!("{name}:1")).is_ok())
    .then_some(name)
}

fn processes_naming(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if text.contains(needle) && !text.contains("cargo") {
                found.push(text);
            }
        }
    }
    found
}

#[test]
fn an_allowlist_reaches_what_it_names_and_nothing_else() {
    let env = Env::new();
    write_config(&env, CONFINED);
    let (allowed, _) = echo();
    let (other, other_seen) = echo();
    let name = local_name();
    let mut network = vec![format!("127.0.0.1:{allowed}")];
    let mut body = try_connect("127.0.0.1", allowed, "allowed.txt");
    body.push_str(&try_connect("127.0.0.1", other, "other.txt"));
    if let Some(name) = &name {
        network.push(format!("{name}:{allowed}"));
        body.push_str(&try_connect(name, allowed, "named.txt"));
    }
    // No DNS: a name outside the list does not resolve.
    body.push_str(
        "if getent hosts example.com >/dev/null 2>&1; then echo resolved; else echo refused; fi > dns.txt",
    );
    let run = run_shell(
        &env,
        json!({"name": "Listed", "task": "t", "network": network}),
        &body,
    );
    assert_eq!(
        answer(&env, "allowed.txt"),
        "hello",
        "the listed address answers"
    );
    assert_eq!(answer(&env, "other.txt"), "refused", "an unlisted port");
    assert_eq!(other_seen.load(Ordering::SeqCst), 0, "nothing reached it");
    assert_eq!(answer(&env, "dns.txt"), "refused", "no DNS");
    if name.is_some() {
        assert_eq!(
            answer(&env, "named.txt"),
            "hello",
            "a listed host by its name"
        );
    }
    // The relay and the forwarder ended with the child (the forwarder names the socket, the
    // relay the port, which no other test's relay allows).
    let socket = env.art().join("sandbox").join(&run).join("net.sock");
    let helpers = || {
        let mut left = processes_naming(&socket.display().to_string());
        left.extend(processes_naming(&format!(
            "net-relay --allow 127.0.0.1:{allowed}"
        )));
        left
    };
    let gone =
        herd_e2e::wait::try_wait_for(crate::support::WAIT, || helpers().is_empty().then_some(()));
    assert!(gone.is_some(), "still running: {:?}", helpers());
}

#[test]
fn an_allowlist_is_wider_than_off_and_an_address_by_number_is_refused() {
    let env = Env::new();
    write_config(&env, "[sandbox]\nmode = \"workspace\"\nnetwork = \"off\"\n");
    for network in [
        json!(["127.0.0.1:80"]),
        json!(["10.0.0.1:80"]),
        json!(["example.com"]),
    ] {
        let run = env.run(
            &[
                "spawn",
                "--request",
                "-",
                "--json",
                "--surface",
                "process",
                "--runner",
                "exec",
                "--",
                "/bin/true",
            ],
            &json!({"name": "Wide", "task": "t", "network": network}),
        );
        assert_eq!(run.code, 2, "{network}: {run}");
        let field = refusal(&run).field.unwrap_or_default();
        assert!(field.starts_with("network"), "{run}");
        assert!(env.run_ids().is_empty(), "a refusal writes no run");
    }
}
