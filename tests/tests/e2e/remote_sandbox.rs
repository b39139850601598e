//! Children on another host are confined by the host's herd, never less than they would be
//! here, and a host that cannot confine them refuses (`docs/sandbox.md`).

use std::path::Path;

use herd_core::error::ErrorDocument;
use herd_e2e::cli::Run;
use herd_e2e::ssh::ALIAS;
use herd_protocol::watch::WatchWait;
use serde_json::{Value, json};

use crate::remote::Scene;

/// The exec child: it tries to write its working directory (the host's home) and says how
/// that went.
const PROBE: &str = "if echo x > probe 2>/dev/null; then echo wrote; else echo refused; fi";

fn write_config(home: &Path, text: &str) {
    let dir = home.join(".config/herd");
    std::fs::create_dir_all(&dir).expect("a configuration directory");
    std::fs::write(dir.join("config.toml"), text).expect("the person's choice");
}

/// Launches the probe on the host with `request`, `vars` set here.
fn spawn_probe(scene: &Scene, request: &Value, vars: &[(&str, &str)]) -> Run {
    scene.herd_with(
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
            PROBE,
        ],
        vars,
        Some(&request.to_string()),
    )
}

/// What the probe launched on the host with `request` said, once its result came home.
fn probe(scene: &Scene, request: &Value, vars: &[(&str, &str)]) -> String {
    let ack = Scene::launched(&spawn_probe(scene, request, vars));
    let out = scene.herd(
        "herd-watch",
        &["wait", "--run", &ack.run_id, "--json"],
        None,
    );
    assert_eq!(out.code, 0, "{out}");
    out.doc::<WatchWait>().message
}

#[test]
fn a_remote_child_is_confined_by_the_hosts_herd_never_less_than_here() {
    let scene = Scene::prepared();
    let wrote = scene.remote.home().join("probe");
    // The host's person allows anything; this machine's allows no more than workspace.
    write_config(
        scene.remote.home().as_path(),
        "[sandbox]\nmode = \"workspace\"\nwidest = \"off\"\n",
    );
    write_config(
        &scene.remote.local_home(),
        "[sandbox]\nmode = \"workspace\"\n",
    );

    // The default lets it write its directory.
    let said = probe(&scene, &json!({"name": "Open", "task": "t"}), &[]);
    assert!(said.contains("wrote"), "{said}");
    std::fs::remove_file(&wrote).expect("the probe's file");

    // Asked for read-only: the host's sandbox refuses the write.
    let said = probe(
        &scene,
        &json!({"name": "Reader", "task": "t", "sandbox": "read-only"}),
        &[],
    );
    assert!(said.contains("refused"), "{said}");
    assert!(!wrote.exists(), "the read-only child wrote its directory");

    // A read-only child's own spawn on the host gets no more than its parent has here.
    let said = probe(
        &scene,
        &json!({"name": "Grandchild", "task": "t"}),
        &[("HERD_SANDBOX_POLICY", "read-only,on")],
    );
    assert!(said.contains("refused"), "{said}");
    assert!(!wrote.exists(), "the grandchild wrote its directory");

    // Wider than this machine's person allows: refused here, before the host is asked.
    let (local, remote) = (scene.local_runs(), scene.remote_runs());
    let out = spawn_probe(
        &scene,
        &json!({"name": "Wide", "task": "t", "sandbox": "off"}),
        &[],
    );
    assert_eq!(out.code, 2, "{out}");
    let err = out.doc::<ErrorDocument>().error;
    assert_eq!(err.field.as_deref(), Some("sandbox"), "{out}");
    assert_eq!(scene.local_runs(), local, "nothing written here");
    assert_eq!(scene.remote_runs(), remote, "nothing written on the host");
}

#[test]
fn a_host_without_bubblewrap_refuses_a_confined_child_and_writes_nothing() {
    let scene = Scene::prepared();
    // The machine's bubblewrap made unusable inside the host (its own mount namespace).
    let run = scene
        .remote
        .ssh("mount --bind /dev/null /usr/bin/bwrap && echo hidden");
    assert!(run.stdout.contains("hidden"), "{run}");
    assert!(
        Path::new("/usr/bin/bwrap").is_file(),
        "this machine keeps its own"
    );
    let out = spawn_probe(&scene, &json!({"name": "Boxed", "task": "t"}), &[]);
    assert_eq!(out.code, 4, "{out}");
    let err = out.doc::<ErrorDocument>().error;
    assert_eq!(err.field.as_deref(), Some("sandbox"), "{out}");
    assert!(err.message.contains(&format!("on {ALIAS}")), "{out}");
    assert!(err.message.contains("bubblewrap"), "{out}");
    assert_eq!(
        scene.local_runs(),
        Vec::<String>::new(),
        "nothing written here"
    );
    assert_eq!(
        scene.remote_runs(),
        Vec::<String>::new(),
        "nothing written on the host"
    );
    assert!(!scene.remote.home().join("probe").exists());
}
