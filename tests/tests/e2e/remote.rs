//! Children on another machine: a real OpenSSH server in a namespace of its own (the test kit's
//! [`herd_e2e::ssh::Remote`]) is the other host.

use std::time::Duration;

use herd_e2e::ssh::Remote;
use herd_e2e::wait::wait_for;

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

    // Powered off, every process of the machine is gone.
    let mut remote = remote;
    remote.power_off();
    assert!(!herd_e2e::proc::process_alive(sleeper));
    assert!(!remote.accepting());
}
