//! Children on another machine: a real OpenSSH server in a namespace of its own (the test kit's
//! [`herd_e2e::ssh::Remote`]) is the other host.

use std::ffi::OsString;
use std::time::Duration;

use herd_core::error::ErrorDocument;
use herd_e2e::cli::Run;
use herd_e2e::ssh::{ALIAS, Remote};
use herd_e2e::wait::wait_for;
use herd_protocol::cleanup::{
    BlockerCode, Classification, CleanupList, Outcome as Removed, Removal,
};
use herd_protocol::launch::LaunchAck;
use herd_protocol::layout::Artifacts;
use herd_protocol::relay::RelayState;
use herd_protocol::result::Outcome;
use herd_protocol::run::{LaunchStatus, RunRecord, SurfaceKind};
use herd_protocol::watch::{CancelStatus, Label, StatusRuns, WatchCancel, WatchWait};
use herd_remote::host::{AddStatus, HostAdded, HostListing, HostRemoved};
use serde_json::Value;

/// The fixture is another machine: its sessions see their own PIDs, home and `/tmp`, key login
/// works with the test configuration, and its faults do what they say.
#[test]
fn the_ssh_fixture_is_another_machine_with_its_faults() {
    let remote = Remote::start(&[]);
    let marker = tempfile::NamedTempFile::new().unwrap();
    let local_tmp = marker.path().display().to_string();
    let run = remote.ssh(&format!(
        "echo home=$HOME; readlink /proc/self/ns/pid; test -e '{local_tmp}' && echo sees-local-tmp; \
         ls /proc | grep -c '^[0-9]'; echo hi > $HOME/probe"
    ));
    assert!(run.success(), "{run}\n{}", remote.log());
    assert!(
        run.stdout
            .contains(&format!("home={}", remote.remote_home().display())),
        "{run}"
    );
    assert!(!run.stdout.contains("sees-local-tmp"), "{run}");
    let own_ns = std::fs::read_link("/proc/self/ns/pid").unwrap();
    assert!(
        !run.stdout.contains(&own_ns.display().to_string()),
        "the session shares the local PID namespace:\n{run}"
    );
    assert_eq!(
        std::fs::read_to_string(remote.home().join("probe")).unwrap(),
        "hi\n",
        "the remote's home is the fixture's private home"
    );

    // A session's background process outlives the connections being killed.
    let run = remote.ssh("setsid sleep 300 </dev/null >/dev/null 2>&1 & echo started");
    assert!(run.success(), "{run}");
    let sleeper = wait_for("the remote sleep", Duration::from_secs(10), || {
        remote.pids_named("sleep").into_iter().next()
    });
    remote.kill_connections();
    assert!(herd_e2e::proc::process_alive(sleeper));
    let run = remote.ssh("echo again");
    assert!(run.success(), "{run}");

    // Stopped, the server refuses; restarted, it answers; the sleeper lives on.
    remote.stop();
    let run = remote.ssh("echo refused");
    assert_eq!(run.code, 255, "{run}");
    remote.restart();
    let run = remote.ssh("echo back");
    assert!(run.success(), "{run}");
    assert!(herd_e2e::proc::process_alive(sleeper));

    // The machine has a boot id of its own, another after a reboot.
    let boot_id = |remote: &Remote| {
        let run = remote.ssh("cat /proc/sys/kernel/random/boot_id");
        assert!(run.success(), "{run}");
        run.stdout.trim().to_owned()
    };
    let first_boot = boot_id(&remote);
    let local_boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    assert_ne!(first_boot, local_boot.trim());

    // Powered off, every process of the machine is gone.
    let mut remote = remote;
    remote.power_off();
    assert!(!herd_e2e::proc::process_alive(sleeper));
    assert!(!remote.accepting());
    remote.power_on();
    assert_ne!(boot_id(&remote), first_boot);
}

/// One local artifacts directory, the remote, and the local herd programs run with the
/// remote's client configuration.
pub(crate) struct Scene {
    pub(crate) remote: Remote,
    pub(crate) dir: tempfile::TempDir,
}

impl Scene {
    pub(crate) fn new() -> Scene {
        Scene::on(Remote::start(&[]))
    }

    pub(crate) fn on(remote: Remote) -> Scene {
        let scene = Scene {
            remote,
            dir: tempfile::tempdir().expect("a temporary directory"),
        };
        std::fs::create_dir_all(scene.art()).expect("the artifacts directory");
        scene
    }

    /// Prepared: `host add` succeeded.
    pub(crate) fn prepared() -> Scene {
        Scene::prepare(Scene::new())
    }

    pub(crate) fn prepare(scene: Scene) -> Scene {
        let out = scene.herd("herd-launch", &["host", "add", ALIAS, "--json"], None);
        assert_eq!(out.code, 0, "{out}\n{}", scene.remote.log());
        scene
    }

    pub(crate) fn art(&self) -> std::path::PathBuf {
        self.dir.path().join("art")
    }

    pub(crate) fn herd_env(&self, program: &str, args: &[&str], vars: &[(&str, &str)]) -> Run {
        self.herd_with(program, args, vars, None)
    }

    pub(crate) fn herd(&self, program: &str, args: &[&str], stdin: Option<&str>) -> Run {
        self.herd_with(program, args, &[], stdin)
    }

    /// Runs a local herd program with the remote's client configuration, `vars` set over it,
    /// and `stdin`.
    pub(crate) fn herd_with(
        &self,
        program: &str,
        args: &[&str],
        vars: &[(&str, &str)],
        stdin: Option<&str>,
    ) -> Run {
        let mut cmd = herd_e2e::cli::within(herd_e2e::bin(program), Duration::from_secs(120))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HERD_ARTIFACTS", self.art())
            .env("HERD_HANG_WARNING_SECS", "0")
            .cwd(self.dir.path())
            .args(args.iter().copied());
        for (k, v) in self.remote.env() {
            cmd = cmd.env(k, v);
        }
        for (k, v) in vars {
            cmd = cmd.env(k, v);
        }
        if let Some(text) = stdin {
            cmd = cmd.stdin_bytes(text.as_bytes().to_vec());
        }
        herd_e2e::cli::try_run(&cmd)
    }

    /// Launches an exec child running `script` on the remote; returns the acknowledgement.
    pub(crate) fn spawn(&self, request: &Value, script: &str) -> Run {
        self.herd(
            "herd-launch",
            &[
                "spawn",
                "--host",
                ALIAS,
                "--request",
                "-",
                "--json",
                "--runner",
                "exec",
                "--",
                "sh",
                "-c",
                script,
            ],
            Some(&request.to_string()),
        )
    }

    pub(crate) fn local_runs(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.art().join("runs"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".json") && n.matches('.').count() == 1)
            .collect();
        names.sort();
        names
    }

    /// The remote artifacts directories (as the local side sees them).
    pub(crate) fn remote_artifacts(&self) -> Vec<std::path::PathBuf> {
        std::fs::read_dir(self.remote.home().join(".herd/artifacts"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect()
    }

    pub(crate) fn remote_runs(&self) -> Vec<String> {
        let mut names = Vec::new();
        for dir in self.remote_artifacts() {
            names.extend(
                std::fs::read_dir(dir.join("runs"))
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.ends_with(".json") && n.matches('.').count() == 1),
            );
        }
        names
    }
}

/// `host add` copies this herd to the remote's home, records the host, and `host list` and
/// `host remove` show and forget it.
#[test]
fn host_add_copies_herd_into_a_versioned_directory_and_records_the_host() {
    let scene = Scene::new();
    let out = scene.herd("herd-launch", &["host", "add", ALIAS, "--json"], None);
    assert_eq!(out.code, 0, "{out}");
    let doc: HostAdded = out.doc();
    assert_eq!(doc.status, AddStatus::Added);
    assert_eq!(doc.host.name, ALIAS);
    assert_eq!(doc.copied, herd_e2e::BINARIES);
    let bin_dir = doc.host.bin_dir;
    assert!(bin_dir.ends_with(&format!("/.herd/bin/{}", env!("CARGO_PKG_VERSION"))));
    for program in herd_e2e::BINARIES {
        let local = scene.remote.local_path(&format!("{bin_dir}/{program}"));
        assert!(local.is_file(), "{} is missing", local.display());
    }
    let run = scene
        .remote
        .ssh(&format!("'{bin_dir}/herd-watch' --version"));
    assert!(run.stdout.starts_with("herd-watch "), "{run}");
    let record = scene
        .remote
        .local_home()
        .join(format!(".config/herd/hosts/{ALIAS}.json"));
    assert!(record.is_file());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&record).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    let out = scene.herd("herd-launch", &["host", "list", "--json"], None);
    let names: Vec<String> = out
        .doc::<HostListing>()
        .hosts
        .into_iter()
        .map(|h| h.name)
        .collect();
    assert_eq!(names, [ALIAS], "{out}");
    let out = scene.herd("herd-launch", &["host", "remove", ALIAS, "--json"], None);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(out.doc::<HostRemoved>().host, ALIAS, "{out}");
    assert!(!record.exists());
    let out = scene.herd("herd-launch", &["host", "list", "--json"], None);
    assert_eq!(out.doc::<HostListing>().hosts, [], "{out}");
}

/// A remote child is the remote's: the remote's herd launched it in its own artifacts
/// directory (private), its processes are the remote's, and the local record names the host
/// and the remote run id.
#[test]
fn spawn_on_a_host_runs_the_child_there_and_records_it_here() {
    let scene = Scene::prepared();
    let out = scene.spawn(
        &serde_json::json!({"name": "Builder", "task": "build it"}),
        "cat > \"$HOME/task-seen\"; echo built",
    );
    assert_eq!(out.code, 0, "{out}");
    let ack: LaunchAck = out.doc();
    assert_eq!(ack.status, LaunchStatus::Launched, "{ack:?}");
    assert_eq!(ack.host.as_deref(), Some(ALIAS));
    let local_id = ack.run_id;
    let remote_id = ack.remote_run_id.expect("a remote run id");
    assert_ne!(local_id, remote_id);
    let record = scene.record(&local_id);
    let remote = record.extra.remote.expect("the record names the host");
    assert_eq!(remote.host, ALIAS, "{remote:?}");
    assert_eq!(remote.run_id.as_deref(), Some(remote_id.as_str()));
    let remote_art = remote.artifacts;
    let local_view = scene.remote.local_path(&remote_art);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&local_view).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "the remote artifacts directory is private");
    assert!(local_view.join(format!("runs/{remote_id}.json")).is_file());
    wait_for("the task on the remote", Duration::from_secs(30), || {
        std::fs::read_to_string(scene.remote.home().join("task-seen"))
            .ok()
            .filter(|t| t.contains("build it"))
    });
    // Local status and the widget show the run with its host.
    let doc = scene.status(&local_id);
    assert_eq!(doc.runs[0].run_id, local_id, "{doc:?}");
    assert!(
        doc.runs[0]
            .detail
            .as_deref()
            .is_some_and(|d| d.starts_with(&format!("on {ALIAS}"))),
        "{doc:?}"
    );
    let widget = scene.herd("herd-watch", &["status", "--widget"], None);
    assert!(
        widget.stdout.contains(&format!("Builder @{ALIAS}")),
        "{widget}"
    );
}

/// A key the host refuses, a host key that changed and a full disk on the host, each met at
/// spawn on the real server: exit 4 naming what to run, never a prompt, nothing left here.
#[test]
fn spawn_meets_a_refused_key_a_changed_host_key_and_a_full_disk_with_what_to_run() {
    let scene = Scene::prepared();
    let request = serde_json::json!({"name": "Builder", "task": "build it"});
    let keygen = |path: &std::path::Path| {
        let cmd = herd_e2e::cli::within("ssh-keygen", BUDGET)
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(path.as_os_str())
            .stdin_null();
        let out = herd_e2e::cli::try_run(&cmd);
        assert!(out.success(), "{out}");
        std::fs::read_to_string(path.with_extension("pub")).unwrap()
    };
    let spawn_refused = |hint: &str| {
        let out = scene.spawn(&request, "cat >/dev/null");
        assert_eq!(out.code, 4, "{out}");
        assert!(out.text().contains(hint), "{hint}: {out}");
        assert_eq!(scene.local_runs(), Vec::<String>::new(), "{out}");
    };

    // The host no longer accepts the user's key.
    let authorized = scene.remote.home().join(".ssh/authorized_keys");
    let kept = std::fs::read_to_string(&authorized).unwrap();
    let other = keygen(&scene.dir.path().join("other_key"));
    std::fs::write(&authorized, other).unwrap();
    scene.remote.kill_connections();
    spawn_refused("ssh-add");
    std::fs::write(&authorized, &kept).unwrap();

    // The host's key is not the one known here.
    let known = scene.remote.known_hosts();
    let kept_known = std::fs::read_to_string(&known).unwrap();
    let host_key = keygen(&scene.dir.path().join("other_host_key"));
    let entry = kept_known.split_whitespace().next().unwrap().to_owned();
    let fields: Vec<&str> = host_key.split_whitespace().take(2).collect();
    std::fs::write(&known, format!("{entry} {}\n", fields.join(" "))).unwrap();
    scene.remote.kill_connections();
    spawn_refused("ssh-keygen -R");
    std::fs::write(&known, &kept_known).unwrap();

    // The host's disk is full where herd keeps its runs.
    let full = scene.remote.ssh(
        "mkdir -p ~/.herd/artifacts && mount -t tmpfs -o size=64k,nr_inodes=16 tmpfs \
         ~/.herd/artifacts && (cat /dev/zero > ~/.herd/artifacts/fill; true)",
    );
    assert!(full.success(), "{full}");
    spawn_refused("space");
    // No file of a run is left there (the tmpfs is seen only inside the host).
    let files = scene.remote.ssh("cd ~/.herd/artifacts && find . -type f");
    assert_eq!(files.stdout.trim(), "./fill", "{files}");
    let freed = scene.remote.ssh("umount ~/.herd/artifacts");
    assert!(freed.success(), "{freed}");
    let out = scene.spawn(&request, "cat >/dev/null");
    assert_eq!(out.code, 0, "{out}");
}

/// A host whose herd is another version is refused at spawn with the fix named, and nothing is
/// left on either side; so is a host that is down, and a host never added.
#[test]
fn spawn_refuses_a_mismatched_unreachable_or_unknown_host_and_leaves_nothing() {
    let scene = Scene::prepared();
    let request = serde_json::json!({"name": "Builder", "task": "build it"});

    let out = scene.herd(
        "herd-launch",
        &["spawn", "--host", "elsewhere", "--request", "-", "--json"],
        Some(&request.to_string()),
    );
    assert_eq!(out.code, 2, "{out}");
    assert!(
        out.text().contains("herd-launch host add elsewhere"),
        "{out}"
    );

    let bin = scene.remote.home().join(format!(
        ".herd/bin/{}/herd-launch",
        env!("CARGO_PKG_VERSION")
    ));
    let real = bin.with_file_name("herd-launch.real");
    std::fs::rename(&bin, &real).unwrap();
    std::fs::write(&bin, "#!/bin/sh\necho herd-launch 0.0.1\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o700)).unwrap();
    let out = scene.spawn(&request, "echo never");
    assert_eq!(out.code, 4, "{out}");
    let error = out.doc::<ErrorDocument>().error;
    assert!(
        error
            .message
            .contains(&format!("herd-launch host add {ALIAS}")),
        "{out}"
    );
    assert_eq!(scene.local_runs(), Vec::<String>::new());
    assert!(scene.remote_artifacts().is_empty(), "nothing on the remote");
    std::fs::rename(&real, &bin).unwrap();

    scene.remote.stop();
    let out = scene.spawn(&request, "echo never");
    assert_eq!(out.code, 4, "{out}");
    assert!(out.text().contains("not reachable"), "{out}");
    assert_eq!(scene.local_runs(), Vec::<String>::new());
    scene.remote.restart();
    assert!(scene.remote_runs().is_empty());
}

/// A local `herd-watch follow --json --forever`, writing its events to a file, stopped by the
/// test (or SIGKILLed).
pub(crate) struct Follow {
    child: std::process::Child,
    out: std::path::PathBuf,
}

impl Scene {
    pub(crate) fn follow(&self, tag: &str) -> Follow {
        use std::os::unix::process::CommandExt;
        let out = self.dir.path().join(format!("follow-{tag}.jsonl"));
        let file = std::fs::File::create(&out).expect("the follow output");
        #[expect(
            clippy::disallowed_methods,
            reason = "a follower the test stops once what it waits for is on disk"
        )]
        let mut cmd = std::process::Command::new(herd_e2e::bin("herd-watch"));
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HERD_ARTIFACTS", self.art())
            .env("HERD_HANG_WARNING_SECS", "0")
            .envs(self.remote.env())
            .args(["follow", "--json", "--forever"])
            .current_dir(self.dir.path())
            .stdin(std::process::Stdio::null())
            .stdout(file)
            .stderr(std::process::Stdio::null())
            .process_group(0);
        #[expect(clippy::disallowed_methods, reason = "see above")]
        let child = cmd.spawn().expect("herd-watch starts");
        Follow { child, out }
    }

    /// The relay's connection state, `relays/devbox.json`.
    pub(crate) fn relay_state(&self) -> Option<RelayState> {
        // Written atomically: a state that does not read is a fault, never a half-written file.
        RelayState::read(&Artifacts::new(self.art()), ALIAS).expect("the relay's state reads")
    }

    /// Whether the relay says it is connected to the host.
    pub(crate) fn relay_connected(&self) -> bool {
        self.relay_state().is_some_and(|state| state.connected)
    }

    /// The relay's PID, while one holds the lock.
    pub(crate) fn relay_pid(&self) -> Option<u32> {
        let lock = self.art().join(format!("relays/{ALIAS}.lock"));
        let inode = {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata(&lock).ok()?.ino()
        };
        std::fs::read_to_string("/proc/locks")
            .ok()?
            .lines()
            .find(|l| l.contains(&format!(":{inode} ")))
            .and_then(|l| l.split_whitespace().nth(4)?.parse().ok())
    }

    pub(crate) fn status(&self, local_id: &str) -> StatusRuns {
        let out = self.herd("herd-watch", &["status", "--run", local_id, "--json"], None);
        out.doc()
    }

    /// The local run record `runs/<id>.json`.
    pub(crate) fn record(&self, local_id: &str) -> RunRecord {
        let path = self.art().join(format!("runs/{local_id}.json"));
        let record = herd_e2e::herd::read_json(&path)
            .unwrap_or_else(|| panic!("no record {}", path.display()));
        herd_e2e::herd::decode(&record)
    }

    /// The acknowledgement of a launch that succeeded.
    pub(crate) fn launched(out: &Run) -> LaunchAck {
        assert_eq!(out.code, 0, "{out}");
        out.doc()
    }

    /// Runs `herd-watch follow --json` until no run is left; returns its events.
    pub(crate) fn follow_all(&self) -> (Run, Vec<Value>) {
        let out = self.herd("herd-watch", &["follow", "--json"], None);
        let events = herd_e2e::herd::json_lines(&out.stdout);
        (out, events)
    }

    pub(crate) fn spawn_waiting(&self, name: &str, task: &str) -> (String, String) {
        let out = self.spawn(
            &serde_json::json!({"name": name, "task": task}),
            "t=$(cat); while [ ! -e \"$HOME/go\" ]; do sleep 0.1; done; printf 'done: %s\\n' \"$t\"",
        );
        let ack = Scene::launched(&out);
        (ack.run_id, ack.remote_run_id.expect("a remote run id"))
    }

    pub(crate) fn remote_delivered(&self, remote_id: &str) -> bool {
        self.remote_artifacts()
            .iter()
            .any(|d| d.join(format!("runs/{remote_id}.delivered")).exists())
    }
}

impl Follow {
    pub(crate) fn events(&self) -> Vec<Value> {
        herd_e2e::herd::read_text(&self.out)
            .map(|t| herd_e2e::herd::json_lines(&t))
            .unwrap_or_default()
    }

    pub(crate) fn results(&self, run_id: &str) -> Vec<WatchWait> {
        herd_e2e::herd::results(&self.events(), run_id)
    }

    pub(crate) fn wait_result(&self, run_id: &str) -> WatchWait {
        wait_for(
            &format!("the result of {run_id}"),
            Duration::from_secs(60),
            || self.results(run_id).into_iter().next(),
        )
    }

    pub(crate) fn kill(&mut self) {
        herd_e2e::proc::signal_group(self.child.id(), libc::SIGKILL);
        let _ = self.child.wait();
    }
}

impl Drop for Follow {
    fn drop(&mut self) {
        self.kill();
    }
}

pub(crate) const BUDGET: Duration = Duration::from_secs(60);

/// A remote child's report comes home once: the relay settles it here, acknowledges it there,
/// and the local follower delivers it; the remote marks it delivered only after that.
#[test]
fn a_remote_result_arrives_once_and_is_acknowledged_on_the_host() {
    let scene = Scene::prepared();
    let out = scene.spawn(
        &serde_json::json!({"name": "Builder", "task": "build it"}),
        "t=$(cat); printf 'done: %s\\n' \"$t\"",
    );
    let ack = Scene::launched(&out);
    let id = ack.run_id;
    let remote_id = ack.remote_run_id.expect("a remote run id");
    let (out, events) = scene.follow_all();
    assert_eq!(out.code, 0, "{out}");
    let results = herd_e2e::herd::results(&events, &id);
    assert_eq!(results.len(), 1, "{out}");
    assert_eq!(results[0].outcome, Outcome::Completed);
    assert!(
        results[0].message.contains("done: build it"),
        "{:?}",
        results[0]
    );
    wait_for("the acknowledgement on the host", BUDGET, || {
        scene.remote_delivered(&remote_id).then_some(())
    });
    assert!(scene.art().join(format!("runs/{id}.delivered")).exists());
    wait_for("the relay to end", BUDGET, || {
        scene.relay_pid().is_none().then_some(())
    });
}

/// The connection killed mid-run, then sshd stopped (the child finishes meanwhile) and started
/// again: the run shows disconnected, never fails for it, and its result arrives once.
#[test]
fn a_result_survives_killed_connections_and_an_sshd_restart_and_arrives_once() {
    let scene = Scene::prepared();
    let (id, remote_id) = scene.spawn_waiting("Builder", "build it");
    let follow = scene.follow("a");
    wait_for("the relay to connect", BUDGET, || {
        scene.relay_connected().then_some(())
    });
    scene.remote.kill_connections();
    wait_for("the relay to connect again", BUDGET, || {
        (scene.relay_connected() && scene.remote.pids_named("herd-watch").len() == 1).then_some(())
    });

    scene.remote.stop();
    let status = wait_for("the run to show disconnected", BUDGET, || {
        let doc = scene.status(&id);
        let detail = doc.runs[0].detail.clone().unwrap_or_default();
        detail.contains("disconnected · last seen").then_some(doc)
    });
    assert_ne!(status.runs[0].label, Label::Failed, "{status:?}");
    std::fs::write(scene.remote.home().join("go"), "").unwrap();
    wait_for("the child to finish on the host", BUDGET, || {
        scene
            .remote_artifacts()
            .iter()
            .any(|d| d.join(format!("runs/{remote_id}.result.json")).exists())
            .then_some(())
            .or_else(|| {
                // The host's follower died with its connection; the child's files are there.
                scene.remote.pids_named("sh").is_empty().then_some(())
            })
    });
    assert!(follow.results(&id).is_empty(), "no result while down");
    scene.remote.restart();
    let result = follow.wait_result(&id);
    assert_eq!(result.outcome, Outcome::Completed, "{result:?}");
    assert!(result.message.contains("done: build it"), "{result:?}");
    wait_for("the acknowledgement on the host", BUDGET, || {
        scene.remote_delivered(&remote_id).then_some(())
    });
    // Nothing more comes.
    wait_for("the relay to end", BUDGET, || {
        scene.relay_pid().is_none().then_some(())
    });
    assert_eq!(follow.results(&id).len(), 1, "{:?}", follow.events());
}

/// The host rebooted mid-run: its herd judges the run's child, of the earlier boot, lost there,
/// and that result comes home once; while the host was down the run was not failed here.
#[test]
fn a_run_on_a_host_that_rebooted_settles_there_as_lost_and_comes_home_once() {
    let mut scene = Scene::prepared();
    let (id, remote_id) = scene.spawn_waiting("Builder", "build it");
    let follow = scene.follow("a");
    wait_for("the relay to connect", BUDGET, || {
        scene.relay_connected().then_some(())
    });
    scene.remote.power_off();
    let status = wait_for("the run to show disconnected", BUDGET, || {
        let doc = scene.status(&id);
        let detail = doc.runs[0].detail.clone().unwrap_or_default();
        detail.contains("disconnected · last seen").then_some(doc)
    });
    assert_ne!(status.runs[0].label, Label::Failed, "{status:?}");
    assert!(follow.results(&id).is_empty(), "no result while down");
    scene.remote.power_on();
    let result = follow.wait_result(&id);
    assert_eq!(result.outcome, Outcome::Failed, "{result:?}");
    assert!(
        result.message.contains("the machine restarted"),
        "{result:?}"
    );
    assert!(!result.message.contains("done: build it"), "{result:?}");
    wait_for("the acknowledgement on the host", BUDGET, || {
        scene.remote_delivered(&remote_id).then_some(())
    });
    wait_for("the relay to end", BUDGET, || {
        scene.relay_pid().is_none().then_some(())
    });
    assert_eq!(follow.results(&id).len(), 1, "{:?}", follow.events());
}

/// The local follower and the relay SIGKILLed mid-run, and the relay killed after it settled a
/// result but before it acknowledged it: a new follower brings the result home once.
#[test]
fn a_killed_local_follower_and_relay_lose_nothing_and_deliver_once() {
    let scene = Scene::prepared();
    let (id, remote_id) = scene.spawn_waiting("Builder", "build it");
    let mut follow = scene.follow("a");
    let relay = wait_for("the relay", BUDGET, || scene.relay_pid());
    wait_for("the relay to connect", BUDGET, || {
        scene.relay_connected().then_some(())
    });
    follow.kill();
    herd_e2e::proc::signal_pid(relay, libc::SIGKILL);
    wait_for("the relay to be gone", BUDGET, || {
        (!herd_e2e::proc::process_alive(relay)).then_some(())
    });
    std::fs::write(scene.remote.home().join("go"), "").unwrap();
    let follow = scene.follow("b");
    let result = follow.wait_result(&id);
    assert_eq!(result.outcome, Outcome::Completed, "{result:?}");
    wait_for("the acknowledgement on the host", BUDGET, || {
        scene.remote_delivered(&remote_id).then_some(())
    });
    wait_for("the relay to end", BUDGET, || {
        scene.relay_pid().is_none().then_some(())
    });
    let all: usize = [&follow].iter().map(|f| f.results(&id).len()).sum();
    assert_eq!(all, 1);
    assert!(
        herd_e2e::herd::read_text(&scene.dir.path().join("follow-a.jsonl"))
            .map(|t| herd_e2e::herd::results_of(&herd_e2e::herd::json_lines(&t), &id).is_empty())
            .unwrap_or(true)
    );
}

/// Hostile names, tasks and argv words reach the remote child verbatim, and nothing they spell
/// runs on either machine.
#[test]
fn hostile_names_tasks_and_argv_reach_the_remote_child_verbatim() {
    let scene = Scene::prepared();
    let name = "it's $(touch /tmp/pwned-name) `id` \"q\"";
    let task = "line one\n'; touch ~/pwned-task; echo '\n$(touch ~/pwned-sub) `touch ~/pwned-tick`\n\\ end";
    let out = scene.herd(
        "herd-launch",
        &[
            "spawn",
            "--host",
            ALIAS,
            "--request",
            "-",
            "--json",
            "--runner",
            "exec",
            "--",
            "sh",
            "-c",
            "cat > \"$HOME/task-seen\"; printf '%s\\n' \"$@\" > \"$HOME/argv-seen\"; echo ok",
            "argv0",
            "a'b",
            "$(touch ~/pwned-argv)",
            "semi; touch ~/pwned-semi",
        ],
        Some(&serde_json::json!({"name": name, "task": task}).to_string()),
    );
    let ack = Scene::launched(&out);
    assert_eq!(ack.name, name);
    let id = ack.run_id;
    let out = scene.herd("herd-watch", &["wait", "--run", &id, "--json"], None);
    assert_eq!(out.code, 0, "{out}");
    let seen = std::fs::read_to_string(scene.remote.home().join("task-seen")).unwrap();
    assert!(seen.starts_with(task), "the task arrived as {seen:?}");
    assert_eq!(
        std::fs::read_to_string(scene.remote.home().join("argv-seen")).unwrap(),
        "a'b\n$(touch ~/pwned-argv)\nsemi; touch ~/pwned-semi\n"
    );
    let leftovers: Vec<String> = std::fs::read_dir(scene.remote.home())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("pwned"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    assert!(!std::path::Path::new("/tmp/pwned-name").exists());
    assert_eq!(scene.record(&id).name, name);
}

/// A cancel of a remote run is the host's: its herd-watch terminates the child there, confirms
/// it, and the cancelled result comes home once.
#[test]
fn a_cancel_is_confirmed_on_the_host_and_its_result_comes_home() {
    let scene = Scene::prepared();
    let (id, _remote_id) = scene.spawn_waiting("Builder", "build it");
    let follow = scene.follow("a");
    wait_for("the child's loop on the host", BUDGET, || {
        (!scene.remote.pids_named("sleep").is_empty()).then_some(())
    });
    let out = scene.herd("herd-watch", &["cancel", "--run", &id, "--json"], None);
    assert_eq!(out.code, 0, "{out}");
    let doc: WatchCancel = out.doc();
    assert_eq!(doc.status, CancelStatus::Confirmed, "{doc:?}");
    assert_eq!(doc.run_id, id);
    // The host is named beside the host's answer, a field of the relay's own.
    assert_eq!(out.json()["host"], ALIAS, "{out}");
    let result = follow.wait_result(&id);
    assert_eq!(result.outcome, Outcome::Cancelled, "{result:?}");
    wait_for("the child's processes gone on the host", BUDGET, || {
        scene.remote.pids_named("sleep").is_empty().then_some(())
    });
    wait_for("the relay to end", BUDGET, || {
        scene.relay_pid().is_none().then_some(())
    });
    assert_eq!(follow.results(&id).len(), 1);
}

/// A steer of a child on the host's tmux is forwarded to the host's herd-watch, which types it
/// into the child's pane there; the child reads it verbatim and its result comes home once.
#[test]
fn a_steer_of_a_child_on_the_hosts_tmux_reaches_it_there() {
    let scene = Scene::prepared();
    let request = serde_json::json!({"name": "Builder", "task": "build it"});
    let out = scene.herd(
        "herd-launch",
        &[
            "spawn",
            "--host",
            ALIAS,
            "--surface",
            "tmux",
            "--request",
            "-",
            "--json",
            "--runner",
            "exec",
            "--",
            "sh",
            "-c",
            "touch \"$HOME/reading\"; IFS= read -r line </dev/tty; printf 'steered: %s\\n' \"$line\"",
        ],
        Some(&request.to_string()),
    );
    let ack = Scene::launched(&out);
    assert_eq!(ack.surface, SurfaceKind::Tmux, "{ack:?}");
    let id = ack.run_id;
    let follow = scene.follow("a");
    wait_for("the child reading its line on the host", BUDGET, || {
        scene.remote.home().join("reading").exists().then_some(())
    });
    let message = "a 'quoted' $(line)";
    let out = scene.herd(
        "herd-watch",
        &["steer", "--run", &id, "--message", message, "--json"],
        None,
    );
    assert_eq!(out.code, 0, "{out}");
    let result = follow.wait_result(&id);
    assert_eq!(result.outcome, Outcome::Completed, "{result:?}");
    assert!(
        result.message.contains(&format!("steered: {message}")),
        "{result:?}"
    );
    assert_eq!(follow.results(&id).len(), 1, "{:?}", follow.events());
}

/// A real Pi child on the host, against the scripted model on loopback: the host's herd
/// launches it with the child extension it carries, and its report comes home once.
#[test]
fn a_real_pi_child_on_the_host_reports_home_once() {
    use herd_e2e::model::{ModelServer, Script, Text};
    let model = ModelServer::start(Script::new().step(Text("REMOTE REPORT: all good")));
    let pi_env = herd_e2e::pi::PiEnv::new(&model);
    let pi_dir = herd_e2e::pi::pi_dir();
    let _ = herd_e2e::pi::pi_bin();
    let node_bin = pi_dir.join("node_modules/.bin");
    let remote = Remote::start_with(
        &[&pi_dir, &node_bin],
        &[
            ("PI_OFFLINE", "1"),
            ("PI_TELEMETRY", "0"),
            ("PI_SKIP_VERSION_CHECK", "1"),
            ("LANG", "C.UTF-8"),
            ("TERM", "xterm-256color"),
        ],
    );
    // The host's Pi configuration: the scripted provider, no retries.
    let agent = remote.home().join(".pi/agent");
    std::fs::create_dir_all(&agent).unwrap();
    for file in ["models.json", "settings.json"] {
        std::fs::copy(pi_env.agent_dir().join(file), agent.join(file)).unwrap();
    }
    let scene = Scene::prepare(Scene::on(remote));
    let host = std::fs::read_to_string(
        scene
            .remote
            .local_home()
            .join(format!(".config/herd/hosts/{ALIAS}.json")),
    )
    .unwrap();
    assert!(host.contains("\"pi_version\""), "{host}");

    let request = serde_json::json!({
        "name": "Scout",
        "task": "Look around",
        "model": herd_e2e::pi::PiEnv::model_arg("fake-model"),
    });
    let out = scene.herd(
        "herd-launch",
        &["spawn", "--host", ALIAS, "--request", "-", "--json"],
        Some(&request.to_string()),
    );
    let ack = Scene::launched(&out);
    let (id, session) = (ack.run_id, ack.session_file);
    let (out, events) = scene.follow_all();
    assert_eq!(out.code, 0, "{out}");
    let results = herd_e2e::herd::results(&events, &id);
    assert_eq!(results.len(), 1, "{out}");
    assert_eq!(results[0].outcome, Outcome::Completed, "{:?}", results[0]);
    assert!(
        results[0].message.contains("REMOTE REPORT: all good"),
        "{:?}",
        results[0]
    );
    assert!(
        scene.remote.local_path(&session).is_file(),
        "the session is on the host: {session}"
    );
}

/// The user's path: a real parent Pi (RPC) whose model calls `subagent` with `host`; the real Pi
/// child runs on the host, and its report arrives in the parent once, as a `subagent_result`.
#[test]
fn a_pi_parent_delegates_to_a_host_and_the_report_arrives_once() {
    use herd_e2e::model::{ModelServer, Models, Script, Text};
    use herd_e2e::pi::PiEnv;
    let model = ModelServer::start_models(
        Models::new()
            .model(
                "parent",
                Script::delegating(serde_json::json!({
                    "name": "Builder",
                    "task": "Build it there",
                    "host": ALIAS,
                    "model": PiEnv::model_arg("child"),
                })),
            )
            .model("child", Script::new().step(Text("REMOTE REPORT: built"))),
    );
    let (_pi_env, scene, session, mut parent) = pi_parent_with_a_host(&model);
    parent.prompt("Delegate the build to the devbox.");
    herd_e2e::session::wait_for_answer(&session, "Integrated the report.", BUDGET);
    let found = herd_e2e::session::custom_entries(&session, "subagent_result");
    assert_eq!(found.len(), 1, "{found:#?}");
    let content = found[0]["content"].as_str().unwrap();
    assert!(content.contains("REMOTE REPORT: built"), "{content}");
    // The child ran on the host: its session is there, and the host acknowledged the result.
    let runs = scene.remote_runs();
    assert_eq!(runs.len(), 1, "{runs:?}");
    let remote_id = runs[0].trim_end_matches(".json").to_owned();
    wait_for("the acknowledgement on the host", BUDGET, || {
        scene.remote_delivered(&remote_id).then_some(())
    });
    assert!(parent.close().success());
}

/// `spawn --host` killed while its ssh call is out: the local record's launch is judged as any
/// launch whose herd-launch died, and settles as lost once, rather than staying open.
#[test]
fn a_spawn_killed_during_its_ssh_call_settles_as_lost_once() {
    let scene = Scene::prepared();
    let bin = scene.remote.home().join(format!(
        ".herd/bin/{}/herd-launch",
        env!("CARGO_PKG_VERSION")
    ));
    let real = bin.with_file_name("herd-launch.real");
    std::fs::rename(&bin, &real).unwrap();
    std::fs::write(
        &bin,
        "#!/bin/sh\ncase \"$1\" in --version) exec \"$0.real\" --version;; esac\nexec sleep 300\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o700)).unwrap();

    use std::os::unix::process::CommandExt;
    #[expect(
        clippy::disallowed_methods,
        reason = "a spawn the test SIGKILLs while its ssh call is out"
    )]
    let mut cmd = std::process::Command::new(herd_e2e::bin("herd-launch"));
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HERD_ARTIFACTS", scene.art())
        .envs(scene.remote.env())
        .args([
            "spawn",
            "--host",
            ALIAS,
            "--request",
            "-",
            "--json",
            "--runner",
            "exec",
            "--",
            "true",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0);
    #[expect(clippy::disallowed_methods, reason = "see above")]
    let mut child = cmd.spawn().unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(br#"{"name":"Builder","task":"build it"}"#)
            .unwrap();
    }
    wait_for("the remote launch to hang", BUDGET, || {
        scene.remote.pids_named("sleep").first().copied()
    });
    assert_eq!(
        scene.local_runs().len(),
        1,
        "the local record is claimed first"
    );
    herd_e2e::proc::signal_group(child.id(), libc::SIGKILL);
    let _ = child.wait();

    let out = scene.herd_env(
        "herd-watch",
        &["follow", "--json"],
        &[("HERD_LOST_GRACE_MS", "500")],
    );
    assert_eq!(out.code, 0, "{out}");
    let events = herd_e2e::herd::json_lines(&out.stdout);
    let ids = scene.local_runs();
    assert_eq!(ids.len(), 1, "{ids:?}");
    let id = ids[0].trim_end_matches(".json");
    let results = herd_e2e::herd::results(&events, id);
    assert_eq!(results.len(), 1, "{out}");
    assert_eq!(results[0].outcome, Outcome::Failed, "{:?}", results[0]);
}

/// A Pi child on a host without Pi is refused at spawn (exit 4, the fix named), so is a
/// persistent specialist on any host (exit 2), and a host with open runs cannot be removed
/// (exit 7).
#[test]
fn a_host_without_pi_refuses_pi_children_and_a_busy_host_is_not_removed() {
    let scene = Scene::prepared();
    let request = serde_json::json!({"name": "Scout", "task": "look"});
    let out = scene.herd(
        "herd-launch",
        &["spawn", "--host", ALIAS, "--request", "-", "--json"],
        Some(&request.to_string()),
    );
    assert_eq!(out.code, 4, "{out}");
    assert!(out.text().contains("no Pi"), "{out}");
    assert_eq!(scene.local_runs(), Vec::<String>::new());
    // A persistent specialist stays on this machine: refused before anything is asked of the host.
    let request = serde_json::json!({"name": "Keeper", "task": "keep", "persistent": true});
    let out = scene.spawn(&request, "cat >/dev/null");
    assert_eq!(out.code, 2, "{out}");
    assert!(out.text().contains("persistent"), "{out}");
    assert_eq!(scene.local_runs(), Vec::<String>::new());
    assert_eq!(scene.remote_runs(), Vec::<String>::new(), "{out}");

    let (id, _) = scene.spawn_waiting("Builder", "build it");
    let out = scene.herd("herd-launch", &["host", "remove", ALIAS, "--json"], None);
    assert_eq!(out.code, 7, "{out}");
    assert!(out.text().contains(&id), "{out}");
    std::fs::write(scene.remote.home().join("go"), "").unwrap();
    let out = scene.herd("herd-watch", &["wait", "--run", &id, "--json"], None);
    assert_eq!(out.code, 0, "{out}");
    let out = scene.herd("herd-launch", &["host", "remove", ALIAS, "--json"], None);
    assert_eq!(out.code, 0, "{out}");
}

/// Twenty children launched at once over one master (more than sshd's MaxSessions of 10): every
/// launch is acknowledged, and every result arrives once.
#[test]
fn twenty_concurrent_remote_children_all_launch_and_deliver_once() {
    let scene = Scene::prepared();
    // The master is up before the launches race for its sessions.
    let out = scene.spawn(
        &serde_json::json!({"name": "First", "task": "t"}),
        "cat >/dev/null; echo first",
    );
    let mut ids = vec![Scene::launched(&out).run_id];
    let acks: Vec<Run> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..20)
            .map(|i| {
                let scene = &scene;
                s.spawn(move || {
                    scene.spawn(
                        &serde_json::json!({"name": format!("Worker {i}"), "task": format!("task {i}")}),
                        "t=$(cat); sleep 1; printf 'done: %s\\n' \"$t\"",
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for out in &acks {
        ids.push(Scene::launched(out).run_id);
    }
    let (out, events) = scene.follow_all();
    assert_eq!(out.code, 0, "{out}");
    for id in &ids {
        assert_eq!(
            herd_e2e::herd::results(&events, id).len(),
            1,
            "{id}: {}",
            out.stdout
        );
    }
}

/// Runs git in `dir` with a fixed identity; returns its trimmed stdout.
/// A real parent Pi (RPC, process surface) of `model`, with the ssh fixture prepared as a host
/// whose Pi asks the same model: the parent's environment, the scene, its session, the parent.
pub(crate) fn pi_parent_with_a_host(
    model: &herd_e2e::model::ModelServer,
) -> (
    herd_e2e::pi::PiEnv,
    Scene,
    std::path::PathBuf,
    herd_e2e::rpc::PiRpc,
) {
    let pi_env = herd_e2e::pi::PiEnv::new(model);
    let pi_dir = herd_e2e::pi::pi_dir();
    let _ = herd_e2e::pi::pi_bin();
    let node_bin = pi_dir.join("node_modules/.bin");
    let remote = Remote::start_with(
        &[&pi_dir, &node_bin],
        &[
            ("PI_OFFLINE", "1"),
            ("PI_TELEMETRY", "0"),
            ("PI_SKIP_VERSION_CHECK", "1"),
            ("LANG", "C.UTF-8"),
            ("TERM", "xterm-256color"),
        ],
    );
    let agent = remote.home().join(".pi/agent");
    std::fs::create_dir_all(&agent).expect("the host's Pi agent directory");
    for file in ["models.json", "settings.json"] {
        std::fs::copy(pi_env.agent_dir().join(file), agent.join(file))
            .expect("Pi's files copied to the host");
    }
    let scene = Scene::prepare(Scene::on(remote));
    // The parent sees the host as the user's own herd programs do.
    let vars: Vec<(OsString, OsString)> = scene
        .remote
        .env()
        .into_iter()
        .filter(|(k, _)| k != "HOME")
        .collect();
    let extra: Vec<(&str, &std::ffi::OsStr)> = vars
        .iter()
        .map(|(k, v)| {
            (
                k.to_str().expect("the fixture's names are text"),
                v.as_os_str(),
            )
        })
        .collect();
    let session = pi_env.session_path("parent");
    let parent = herd_e2e::rpc::PiRpc::start_with(
        &pi_env,
        &session,
        "parent",
        &extra,
        &["--herd-surface", "process"],
    );
    (pi_env, scene, session, parent)
}

pub(crate) fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let cmd = herd_e2e::cli::within("git", Duration::from_secs(30))
        .args([
            "-c",
            "user.name=Local",
            "-c",
            "user.email=local@example.org",
            "-C",
        ])
        .arg(dir)
        .args(args.iter().copied());
    let out = herd_e2e::cli::try_run(&cmd);
    assert!(out.success(), "git {args:?}:\n{out}");
    out.stdout.trim().to_owned()
}

/// A worktree child on the host: its base commit reaches the host by git over the same ssh, its
/// commits come home as its branch before its result; a local branch that moved meanwhile is
/// never overwritten, and the result says so.
#[test]
fn a_remote_worktree_childs_branch_comes_home_and_a_moved_local_branch_is_kept() {
    let scene = Scene::prepared();
    let src = scene.dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    git(&src, &["init", "-q", "-b", "main"]);
    std::fs::write(src.join("README"), "base\n").unwrap();
    git(&src, &["add", "README"]);
    git(&src, &["commit", "-q", "-m", "base"]);
    let base = git(&src, &["rev-parse", "HEAD"]);
    let script = "cat >/dev/null; echo change > child.txt && git add child.txt && \
                  git -c user.name=Child -c user.email=child@example.org commit -q -m 'child work' \
                  && echo committed";

    let request = serde_json::json!({
        "name": "Fixer",
        "task": "fix it",
        "cwd": src.display().to_string(),
        "worktree": {"branch": "fix/x"},
    });
    let id = Scene::launched(&scene.spawn(&request, script)).run_id;
    let (out, events) = scene.follow_all();
    assert_eq!(out.code, 0, "{out}");
    let results = herd_e2e::herd::results(&events, &id);
    assert_eq!(results.len(), 1, "{out}");
    assert_eq!(results[0].outcome, Outcome::Completed, "{:?}", results[0]);
    assert_eq!(
        git(&src, &["log", "-1", "--format=%s", "fix/x"]),
        "child work"
    );
    assert_eq!(git(&src, &["rev-parse", "fix/x~1"]), base);

    // A local branch of the same name made while the child ran: kept, and the result names
    // it. (One that exists at launch refuses the launch.)
    let request = serde_json::json!({
        "name": "Fixer 2",
        "task": "fix it too",
        "cwd": src.display().to_string(),
        "worktree": {"branch": "fix/y", "base": base},
    });
    let id = Scene::launched(&scene.spawn(&request, script)).run_id;
    git(&src, &["branch", "fix/y", "main"]);
    git(&src, &["checkout", "-q", "fix/y"]);
    std::fs::write(src.join("local.txt"), "local\n").unwrap();
    git(&src, &["add", "local.txt"]);
    git(&src, &["commit", "-q", "-m", "local work"]);
    git(&src, &["checkout", "-q", "main"]);
    let local_tip = git(&src, &["rev-parse", "fix/y"]);
    let (out, events) = scene.follow_all();
    let results = herd_e2e::herd::results(&events, &id);
    assert_eq!(results.len(), 1, "{out}");
    let message = &results[0].message;
    assert!(
        message.contains("Branch fix/y was not brought home"),
        "{message}"
    );
    assert_eq!(
        git(&src, &["rev-parse", "fix/y"]),
        local_tip,
        "the local branch is kept"
    );
}

/// The managed worktree entry of a `herd-cleanup list --json` document, by branch.
fn listed<'d>(doc: &'d CleanupList, branch: &str) -> Option<&'d herd_protocol::cleanup::Entry> {
    doc.worktrees
        .iter()
        .map(|e| &e.entry)
        .find(|e| e.branch.as_deref() == Some(branch))
}

/// `herd-cleanup list/remove --host` run the host's own herd-cleanup: a remote worktree child's
/// checkout is listed there and removed once its result is home; a checkout with an uncommitted
/// change is refused there; an unknown or unreachable host changes nothing.
#[test]
fn cleanup_on_a_host_lists_and_removes_its_worktrees_under_the_hosts_rules() {
    let scene = Scene::prepared();
    let src = scene.dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    git(&src, &["init", "-q", "-b", "main"]);
    std::fs::write(src.join("README"), "base\n").unwrap();
    git(&src, &["add", "README"]);
    git(&src, &["commit", "-q", "-m", "base"]);
    let committed = "cat >/dev/null; echo change > child.txt && git add child.txt && \
                     git -c user.name=Child -c user.email=child@example.org commit -q -m 'child \
                     work' && echo committed";
    let dirty = "cat >/dev/null; echo more >> README && echo left a change";
    let mut ids = Vec::new();
    for (name, branch, script) in [("Fixer", "fix/x", committed), ("Dirty", "fix/d", dirty)] {
        let request = serde_json::json!({
            "name": name,
            "task": "fix it",
            "cwd": src.display().to_string(),
            "worktree": {"branch": branch},
        });
        ids.push(Scene::launched(&scene.spawn(&request, script)).run_id);
    }
    // Both results home (the branch fetched back first).
    let (out, events) = scene.follow_all();
    assert_eq!(out.code, 0, "{out}");
    for id in &ids {
        assert_eq!(herd_e2e::herd::results(&events, id).len(), 1, "{out}");
    }
    assert_eq!(
        git(&src, &["log", "-1", "--format=%s", "fix/x"]),
        "child work"
    );

    // Listed on the host, by the host's herd, with the host named.
    let out = scene.herd("herd-cleanup", &["list", "--host", ALIAS, "--json"], None);
    assert_eq!(out.code, 0, "{out}");
    // The host is named beside the host's listing, a field of the relay's own.
    assert_eq!(out.json()["host"], ALIAS, "{out}");
    let doc: CleanupList = out.doc();
    let fixed = listed(&doc, "fix/x").unwrap_or_else(|| panic!("fix/x is listed: {doc:?}"));
    assert_eq!(fixed.classification, Classification::Eligible, "{fixed:?}");
    let fixed_path = fixed.path.clone();
    assert!(
        fixed_path.starts_with(&scene.remote.remote_home().display().to_string()),
        "the path is the host's: {fixed_path}"
    );
    let held = listed(&doc, "fix/d").unwrap_or_else(|| panic!("fix/d is listed: {doc:?}"));
    assert_eq!(held.classification, Classification::Blocked, "{held:?}");
    let held_path = held.path.clone();
    let out = scene.herd("herd-cleanup", &["list", "--host", ALIAS], None);
    assert_eq!(out.code, 0, "{out}");
    assert!(out.stdout.starts_with(&format!("on {ALIAS}:")), "{out}");
    assert!(out.stdout.contains("fix/x"), "{out}");

    // An unknown host is refused before any connection; an unreachable one changes nothing.
    let out = scene.herd(
        "herd-cleanup",
        &["remove", &fixed_path, "--host", "nosuch", "--json"],
        None,
    );
    assert_eq!(out.code, 2, "{out}");
    assert!(out.text().contains("herd-launch host add nosuch"), "{out}");
    scene.remote.stop();
    let out = scene.herd(
        "herd-cleanup",
        &["remove", &fixed_path, "--host", ALIAS],
        None,
    );
    assert_eq!(out.code, 4, "{out}");
    assert!(out.text().contains("nothing was changed"), "{out}");
    scene.remote.restart();
    assert!(scene.remote.local_path(&fixed_path).is_dir());

    // The uncommitted change is refused on the host; the checkout stays.
    let out = scene.herd(
        "herd-cleanup",
        &["remove", &held_path, "--host", ALIAS, "--json"],
        None,
    );
    assert_eq!(out.code, 1, "{out}");
    assert_eq!(out.json()["host"], ALIAS, "{out}");
    let doc: Removal = out.doc();
    assert_eq!(doc.outcome, Removed::Blocked, "{doc:?}");
    assert!(
        doc.blockers.iter().any(|b| b.code == BlockerCode::Dirty),
        "{doc:?}"
    );
    assert!(scene.remote.local_path(&held_path).is_dir());

    // The child whose result is home: removed there.
    let out = scene.herd(
        "herd-cleanup",
        &["remove", &fixed_path, "--host", ALIAS, "--json"],
        None,
    );
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(out.doc::<Removal>().outcome, Removed::Removed, "{out}");
    assert!(!scene.remote.local_path(&fixed_path).exists());
    assert_eq!(
        git(&src, &["log", "-1", "--format=%s", "fix/x"]),
        "child work",
        "the branch fetched home stays"
    );
}
