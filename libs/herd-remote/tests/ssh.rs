//! The transport against a real OpenSSH server in a namespace of its own.

use std::time::Duration;

use herd_core::ErrorCode;
use herd_e2e::ssh::Remote;
use herd_remote::stream::{Line, Session};
use herd_remote::{Destination, Ssh};

const BUDGET: Duration = Duration::from_secs(30);

fn client(remote: &Remote, overrides: &[(&str, String)]) -> Ssh {
    let mut vars: Vec<(String, String)> = remote
        .env()
        .into_iter()
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        })
        .collect();
    for (k, v) in overrides {
        vars.retain(|(key, _)| key != k);
        vars.push(((*k).to_owned(), v.clone()));
    }
    let env = move |k: &str| {
        vars.iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
    };
    Ssh::new(
        Destination::new(remote.alias()).expect("the alias is a destination"),
        &env,
    )
    .expect("a client")
}

fn sockets(ssh: &Ssh) -> usize {
    std::fs::read_dir(ssh.control_dir())
        .map(|d| d.flatten().count())
        .unwrap_or(0)
}

#[test]
fn calls_share_one_master_and_argv_and_stdin_arrive_verbatim() {
    let remote = Remote::start(&[]);
    let ssh = client(&remote, &[]);
    let hostile = [
        "printf",
        "%s\\n",
        "it's",
        "$(touch $HOME/pwned)",
        "`touch $HOME/pwned2`",
        "a\nb",
        "; touch ~/pwned3",
    ];
    let out = ssh.run(&hostile, None, BUDGET).unwrap();
    assert!(out.success(), "{out:?}");
    assert_eq!(
        out.stdout.text(),
        "it's\n$(touch $HOME/pwned)\n`touch $HOME/pwned2`\na\nb\n; touch ~/pwned3\n"
    );
    for f in ["pwned", "pwned2", "pwned3"] {
        assert!(!remote.home().join(f).exists(), "{f} was created");
    }
    let out = ssh
        .run(&["cat"], Some(b"a task\nwith 'quotes' and $(x)\n"), BUDGET)
        .unwrap();
    assert_eq!(out.stdout.text(), "a task\nwith 'quotes' and $(x)\n");
    assert!(ssh.master_up(), "a master connection stays up");
    assert_eq!(sockets(&ssh), 1, "one master socket for the host");
    assert_eq!(
        remote.pids_named("sshd").len(),
        2,
        "the listener and one connection"
    );

    // The remote command's own exit code is an answer, not an ssh failure.
    let out = ssh.run(&["sh", "-c", "exit 3"], None, BUDGET).unwrap();
    assert_eq!(out.code, Some(3));

    // Connections killed: the next call opens a fresh master.
    remote.kill_connections();
    let out = ssh.run(&["echo", "again"], None, BUDGET).unwrap();
    assert_eq!(out.stdout.text(), "again\n");
    ssh.close_master();
    herd_e2e::wait::wait_for("the master to close", BUDGET, || {
        (!ssh.master_up()).then_some(())
    });
}

#[test]
fn refusals_say_what_to_run_and_a_changed_key_is_never_accepted() {
    let remote = Remote::start(&[]);
    let config = std::fs::read_to_string(remote.ssh_config()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let variant = |name: &str, text: String| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let cm = |n: &str| {
        let p = dir.path().join(n);
        p.display().to_string()
    };

    // Another host key on record: refused, and the message names the changed key.
    let known = dir.path().join("changed_known_hosts");
    let other = dir.path().join("other_key");
    let keygen = herd_e2e::cli::within("ssh-keygen", BUDGET)
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&other);
    assert!(herd_e2e::cli::try_run(&keygen).success());
    let other_pub = std::fs::read_to_string(other.with_extension("pub")).unwrap();
    let fields: Vec<&str> = other_pub.split_whitespace().take(2).collect();
    std::fs::write(
        &known,
        format!("[127.0.0.1]:{} {}\n", remote.port(), fields.join(" ")),
    )
    .unwrap();
    let changed = variant(
        "changed",
        config.replace(
            &remote.known_hosts().display().to_string(),
            &known.display().to_string(),
        ),
    );
    let ssh = client(
        &remote,
        &[
            ("HERD_SSH_CONFIG", changed),
            ("HERD_SSH_CONTROL_DIR", cm("c1")),
        ],
    );
    let err = ssh.run(&["true"], None, BUDGET).unwrap_err();
    assert_eq!(err.code, ErrorCode::Unavailable);
    assert!(err.message.contains("has changed"), "{err}");
    // Still refused on a second try: nothing was accepted.
    assert!(ssh.run(&["true"], None, BUDGET).is_err());

    // No key on record: refused in batch mode, never accepted.
    let empty = dir.path().join("empty_known_hosts");
    std::fs::write(&empty, "").unwrap();
    let unknown = variant(
        "unknown",
        config.replace(
            &remote.known_hosts().display().to_string(),
            &empty.display().to_string(),
        ),
    );
    let ssh = client(
        &remote,
        &[
            ("HERD_SSH_CONFIG", unknown),
            ("HERD_SSH_CONTROL_DIR", cm("c2")),
        ],
    );
    let err = ssh.run(&["true"], None, BUDGET).unwrap_err();
    assert!(err.message.contains("never accepts"), "{err}");
    assert_eq!(std::fs::read_to_string(&empty).unwrap(), "");

    // A key the server does not know: the message says how to give ssh the right one.
    let wrong_key = variant(
        "wrong-key",
        config.replace(
            &remote
                .ssh_config()
                .with_file_name("id_ed25519")
                .display()
                .to_string(),
            &other.display().to_string(),
        ),
    );
    let ssh = client(
        &remote,
        &[
            ("HERD_SSH_CONFIG", wrong_key),
            ("HERD_SSH_CONTROL_DIR", cm("c3")),
        ],
    );
    let err = ssh.run(&["true"], None, BUDGET).unwrap_err();
    assert!(err.message.contains("ssh-agent"), "{err}");

    // The server down: not reachable, and said so within the budget.
    remote.stop();
    let ssh = client(&remote, &[("HERD_SSH_CONTROL_DIR", cm("c4"))]);
    let err = ssh.run(&["true"], None, BUDGET).unwrap_err();
    assert!(err.message.contains("not reachable"), "{err}");
}

#[test]
fn a_session_reads_lines_takes_input_and_ends_when_the_connection_drops() {
    let remote = Remote::start(&[]);
    let ssh = client(&remote, &[]);
    let mut session = Session::start(
        &ssh,
        &[
            "sh",
            "-c",
            "echo ready; while read -r l; do echo \"got $l\"; done",
        ],
    )
    .unwrap();
    assert_eq!(
        session.next_line(BUDGET),
        Line::Text("ready".into()),
        "{}",
        session.stderr()
    );
    session.send("{\"ack\":\"r1\"}").unwrap();
    assert_eq!(
        session.next_line(BUDGET),
        Line::Text("got {\"ack\":\"r1\"}".into())
    );
    assert_eq!(session.next_line(Duration::from_millis(100)), Line::Quiet);
    remote.kill_connections();
    herd_e2e::wait::wait_for("the session to end", BUDGET, || {
        match session.next_line(Duration::from_millis(200)) {
            Line::Closed => Some(()),
            _ => None,
        }
    });
}

/// Startup files that print on stdout and on stderr, for every login shell the tests use: what
/// a `.bashrc` `echo` or a motd script does to every command on such a host.
fn chatty(remote: &Remote) {
    let home = remote.home();
    let files = [
        (
            ".bashrc",
            "echo 'bashrc says hi'; echo 'bashrc warns' >&2\n",
        ),
        (
            ".config/fish/config.fish",
            "echo 'fish says hi'; echo 'fish warns' >&2\n",
        ),
        (
            ".tcshrc",
            "echo 'tcsh says hi'\necho 'tcsh warns' > /dev/stderr\n",
        ),
        (
            ".cshrc",
            "echo 'csh says hi'\necho 'csh warns' > /dev/stderr\n",
        ),
    ];
    for (name, text) in files {
        let path = home.join(name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("the startup file's directory");
        }
        std::fs::write(path, text).expect("the startup file");
    }
}

/// The login shells a host may give its user: each parses the one command line herd sends
/// alike, whatever it prints as it starts is not herd's, and argv and stdin arrive verbatim.
#[test]
fn every_login_shell_runs_the_argv_verbatim_and_its_chatter_is_ignored() {
    for shell in [
        "/bin/bash",
        "/usr/bin/fish",
        "/usr/bin/tcsh",
        "/usr/bin/bsd-csh",
    ] {
        let remote = Remote::start_with_shell(std::path::Path::new(shell));
        chatty(&remote);
        // The shell is the login shell there, and it chatters on both streams.
        let raw = remote.ssh("true");
        assert!(raw.stdout.contains("says hi"), "{shell}: {raw}");
        assert!(raw.stderr.contains("warns"), "{shell}: {raw}");

        let ssh = client(&remote, &[]);
        let words = [
            "it\\'s",
            "it's",
            "a\\\\b\\n",
            "$(touch $HOME/pwned)",
            "`touch $HOME/pwned2`",
            "a\nb",
            "; touch ~/pwned3 #",
            "!! !1 %s {a,b} ~ *",
            "",
        ];
        let mut argv = vec!["printf", "%s|"];
        argv.extend(words);
        let out = ssh.run(&argv, None, BUDGET).unwrap();
        assert!(out.success(), "{shell}: {out:?}");
        assert_eq!(
            out.stdout.text(),
            format!("{}|", words.join("|")),
            "{shell}"
        );
        assert_eq!(out.stderr.text(), "", "{shell}");
        let task = b"a task\nwith 'quotes', it\\'s, $(x) and \\\\\n";
        let out = ssh.run(&["cat"], Some(task), BUDGET).unwrap();
        assert_eq!(out.stdout.bytes, task, "{shell}");
        let out = ssh
            .run(&["sh", "-c", "echo said >&2; exit 3"], None, BUDGET)
            .unwrap();
        assert_eq!(out.code, Some(3), "{shell}");
        assert_eq!(out.stderr.text(), "said\n", "{shell}");
        for f in ["pwned", "pwned2", "pwned3"] {
            assert!(!remote.home().join(f).exists(), "{shell}: {f} was created");
        }

        // A long-lived session's first line is the program's.
        let mut session = Session::start(
            &ssh,
            &[
                "sh",
                "-c",
                "echo ready; while read -r l; do echo \"got $l\"; done",
            ],
        )
        .unwrap();
        assert_eq!(
            session.next_line(BUDGET),
            Line::Text("ready".into()),
            "{shell}: {}",
            session.stderr()
        );
        session.send("it\\'s").unwrap();
        assert_eq!(
            session.next_line(BUDGET),
            Line::Text("got it\\'s".into()),
            "{shell}"
        );
        session.close();
        ssh.close_master();
    }
}
