//! Confined children (`docs/sandbox.md`): a child of a person who chose `workspace` runs in
//! bubblewrap and changes its own work and nothing else; the person's configuration alone widens
//! it; a machine without bubblewrap refuses the spawn and writes nothing.

use std::path::Path;

use herd_core::ErrorCode;
use serde_json::json;

use crate::support::{Env, WAIT, ack, exit_code, read, refusal, repo_env};

/// Spawns `body` as an exec child (`sh -c body`) on the process surface; returns its run id
/// once its runner has exited 0.
pub(crate) fn run_shell(env: &Env, request: serde_json::Value, body: &str) -> String {
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
            "/bin/sh",
            "-c",
            body,
        ],
        &request,
    );
    assert_eq!(run.code, 0, "{run}");
    let ack = crate::support::ack(&run);
    assert_eq!(exit_code(env, &ack.run_id), 0, "the child ran to its end");
    ack.run_id
}

pub(crate) fn answer(env: &Env, file: &str) -> String {
    herd_e2e::wait::wait_for(file, WAIT, || read(env.work().join(file)))
        .trim()
        .to_owned()
}

/// The person's choice of the confined default.
pub(crate) const CONFINED: &str = "[sandbox]\nmode = \"workspace\"\n";

pub(crate) fn write_config(env: &Env, text: &str) {
    let dir = env.dir.path().join("home/.config/herd");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), text).unwrap();
}

#[test]
fn a_confined_child_changes_its_own_work_and_nothing_else() {
    let env = Env::new();
    write_config(&env, CONFINED);
    let home = env.dir.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE KEY").unwrap();
    let outside = env.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    // A process outside the sandbox: this test.
    let pid = std::process::id();
    let body = format!(
        "echo mine > mine.txt; \
         if cat \"$HOME/.ssh/id_ed25519\" >/dev/null 2>&1; then echo seen; else echo hidden; fi > ssh.txt; \
         if echo x > '{outside}/x' 2>/dev/null; then echo wrote; else echo refused; fi > outside.txt; \
         if kill -0 {pid} 2>/dev/null; then echo reached; else echo refused; fi > signal.txt; \
         if echo t > \"$TMPDIR/t\"; then echo private; else echo none; fi > tmp.txt",
        outside = outside.display()
    );
    let run = run_shell(&env, json!({"name": "Boxed", "task": "try"}), &body);
    assert_eq!(answer(&env, "mine.txt"), "mine", "its own work is written");
    assert_eq!(
        answer(&env, "ssh.txt"),
        "hidden",
        "the person's key is not there"
    );
    assert_eq!(
        answer(&env, "outside.txt"),
        "refused",
        "nothing outside its work"
    );
    assert!(!outside.join("x").exists());
    assert_eq!(answer(&env, "signal.txt"), "refused", "no process outside");
    assert_eq!(
        answer(&env, "tmp.txt"),
        "private",
        "a temporary directory of its own"
    );
    // The key itself is untouched, and the launch script names the sandbox it ran in.
    assert_eq!(read(home.join(".ssh/id_ed25519")).unwrap(), "PRIVATE KEY");
    let script = read(env.run_record(&run).extra.launch_script.unwrap()).unwrap();
    assert!(script.contains("'--die-with-parent'"), "{script}");
}

#[test]
fn only_the_persons_configuration_widens_the_sandbox() {
    let env = Env::new();
    write_config(&env, CONFINED);
    let outside = env.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    // The request asks for more than the default allows: refused, nothing written.
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
        &json!({"name": "Wide", "task": "t", "sandbox": "off"}),
    );
    assert_eq!(run.code, 2, "{run}");
    let err = refusal(&run);
    assert_eq!(err.field.as_deref(), Some("sandbox"), "{run}");
    assert!(env.run_ids().is_empty(), "a refusal writes no run");

    // The person allows it: the same request runs unconfined.
    write_config(&env, "[sandbox]\nmode = \"workspace\"\nwidest = \"off\"\n");
    let body = format!("echo x > '{}/x'", outside.display());
    run_shell(
        &env,
        json!({"name": "Wide", "task": "t", "sandbox": "off"}),
        &body,
    );
    assert_eq!(read(outside.join("x")).as_deref(), Some("x\n"));
}

#[test]
fn without_bubblewrap_a_confined_spawn_is_refused_and_writes_nothing() {
    let mut env = Env::new();
    // A PATH with a shell and no bwrap.
    let bin = env.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink("/bin/sh", bin.join("sh")).unwrap();
    env.set("PATH", bin.to_string_lossy());
    write_config(&env, CONFINED);
    let args = [
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
    ];
    let run = env.run(&args, &json!({"name": "NoBox", "task": "t"}));
    assert_eq!(run.code, 4, "{run}");
    let err = refusal(&run);
    assert_eq!(err.code, ErrorCode::Unavailable);
    assert!(err.message.contains("apt-get install bubblewrap"), "{run}");
    assert!(
        err.message.contains("mode = \\\"off\\\"") || err.message.contains("mode = \"off\""),
        "{run}"
    );
    assert!(env.run_ids().is_empty(), "nothing was written: {run}");
    assert!(
        !env.art().join("runs").exists()
            || std::fs::read_dir(env.art().join("runs"))
                .unwrap()
                .next()
                .is_none()
    );

    // The person's decision to run unconfined is the one way without it.
    write_config(&env, "[sandbox]\nmode = \"off\"\n");
    let run = env.run(&args, &json!({"name": "NoBox", "task": "t"}));
    assert_eq!(run.code, 0, "{run}");
}

#[test]
fn network_off_leaves_only_a_private_loopback() {
    let env = Env::new();
    write_config(&env, CONFINED);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // bash's /dev/tcp connects without any other program.
    let body = format!(
        "if bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}' 2>/dev/null; then echo connected; else echo refused; fi > net.txt"
    );
    run_shell(
        &env,
        json!({"name": "Offline", "task": "t", "network": "off"}),
        &body,
    );
    assert_eq!(answer(&env, "net.txt"), "refused");
    std::fs::remove_file(env.work().join("net.txt")).unwrap();
    run_shell(&env, json!({"name": "Online", "task": "t"}), &body);
    assert_eq!(
        answer(&env, "net.txt"),
        "connected",
        "network on reaches the host"
    );
    drop(listener);
}

#[test]
fn a_child_hands_its_own_policy_down_and_cannot_widen_it() {
    let mut env = Env::new();
    write_config(&env, "[sandbox]\nmode = \"workspace\"\nwidest = \"off\"\n");
    // As a read-only child's own spawn would run: its policy in the environment.
    env.set("HERD_SANDBOX_POLICY", "read-only,on");
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
        &json!({"name": "Grandchild", "task": "t", "sandbox": "workspace"}),
    );
    assert_eq!(run.code, 2, "{run}");
    assert!(refusal(&run).message.contains("spawning child"), "{run}");
    // Asking for nothing gets the ceiling, which the launch script hands down again.
    let run = run_shell(&env, json!({"name": "Grandchild", "task": "t"}), "true");
    let script = read(env.run_record(&run).extra.launch_script.unwrap()).unwrap();
    assert!(
        script.contains("HERD_SANDBOX_POLICY='read-only,on'"),
        "{script}"
    );
    assert!(!Path::new(&env.work().join("x")).exists());
}

/// Setup commands come from the repository: they run in the child's own sandbox, so one that
/// writes into the home directory fails while the worktree is set up.
#[test]
fn a_repositorys_setup_runs_in_the_childs_sandbox() {
    let (mut env, _) = repo_env();
    env.set("HERD_PROJECT_TRUST", "trusted");
    write_config(&env, CONFINED);
    let repo = env.work().join("here");
    crate::support::approved_setup_repo(
        &env,
        &repo,
        "setup = [\"touch ran.txt\", \"if echo x > \\\"$HOME/pwned\\\"; then echo wrote; else echo refused; fi > home.txt\"]\n",
    );
    let request =
        json!({"name": "Setup", "task": "t", "cwd": repo, "worktree": {"branch": "boxed"}});
    let run = env.spawn_exec("process", &request, &["--done"]);
    assert_eq!(run.code, 0, "{run}");
    let launched = ack(&run);
    let wt = std::path::PathBuf::from(&launched.worktree.as_ref().expect("a worktree").path);
    assert!(
        wt.join("ran.txt").exists(),
        "setup ran in the worktree: {launched:?}"
    );
    assert_eq!(read(wt.join("home.txt")).as_deref(), Some("refused\n"));
    assert!(
        !env.dir.path().join("home/pwned").exists(),
        "nothing written into the home"
    );
}

/// A repository's files never widen the sandbox: a setup file that names `sandbox` is refused
/// as any unknown key is, and the child is confined all the same.
#[test]
fn a_repositorys_setup_file_cannot_turn_the_sandbox_off() {
    let (mut env, _) = repo_env();
    env.set("HERD_PROJECT_TRUST", "trusted");
    write_config(&env, CONFINED);
    let repo = env.work().join("here");
    std::fs::create_dir_all(&repo).unwrap();
    let sb = herd_e2e::git::Sandbox::new();
    sb.git(&repo, ["init", "-q", "-b", "main"]);
    sb.write(
        &repo,
        ".herd/worktree.toml",
        "sandbox = \"off\"\nsetup = [\"touch ran.txt\"]\n",
    );
    sb.commit_all(&repo, "setup");
    let request =
        json!({"name": "Setup", "task": "t", "cwd": repo, "worktree": {"branch": "still-boxed"}});
    let run = env.spawn_exec("process", &request, &["--done"]);
    let script = match run.code {
        // Refused outright: nothing launched.
        2 => {
            assert!(env.run_ids().is_empty(), "{run}");
            return;
        }
        0 => read(
            env.run_record(&ack(&run).run_id)
                .extra
                .launch_script
                .unwrap(),
        )
        .unwrap(),
        _ => panic!("{run}"),
    };
    assert!(
        script.contains("'--die-with-parent'"),
        "the child is confined: {script}"
    );
}

/// A confined child's own spawn (herd-launch run inside its sandbox, its policy handed down) is
/// refused with exit 4 and writes nothing: it could not be confined again, nor cancelled.
#[test]
fn a_confined_child_cannot_start_children_of_its_own_yet() {
    let env = Env::new();
    write_config(&env, CONFINED);
    let dir = env.dir.path().to_str().unwrap().to_owned();
    let request = env.dir.path().join("request.json");
    std::fs::write(
        &request,
        json!({"name": "Grandchild", "task": "t"}).to_string(),
    )
    .unwrap();
    let mut cmd = herd_e2e::cli::command("bwrap")
        .args([
            "--die-with-parent",
            "--unshare-pid",
            "--ro-bind",
            "/",
            "/",
            "--dev-bind",
            "/dev",
            "/dev",
            "--proc",
            "/proc",
            "--bind",
            &dir,
            &dir,
            "--",
        ])
        .arg(crate::support::BIN)
        .args([
            "spawn",
            "--json",
            "--surface",
            "process",
            "--runner",
            "exec",
            "--request",
        ])
        .arg(&request)
        .args(["--", "/bin/true"])
        .env_clear()
        .cwd(env.work())
        .env("HERD_SANDBOX_POLICY", "workspace,on");
    for (k, v) in &env.vars {
        cmd = cmd.env(k, v);
    }
    let run = herd_e2e::cli::run(&cmd);
    assert_eq!(run.code, 4, "{run}");
    let err = refusal(&run);
    assert_eq!(err.field.as_deref(), Some("sandbox"), "{run}");
    assert!(
        err.message.contains("cannot start children of its own"),
        "{run}"
    );
    assert!(env.run_ids().is_empty(), "nothing was written: {run}");
}

/// Where the kernel keeps a sandbox's signals inside (Landlock's scoping), a confined child starts
/// a child of its own: confined again, with at most its policy, and recorded with the machine's
/// PIDs.
#[test]
fn a_confined_child_starts_a_confined_child_of_its_own() {
    if !herd_sandbox::landlock::can_scope_signals() {
        eprintln!("this kernel has no Landlock scoping: the nested case is the refusal above");
        return;
    }
    let env = Env::new();
    write_config(&env, CONFINED);
    std::fs::write(
        env.work().join("request.json"),
        json!({"name": "Grandchild", "task": "t", "sandbox": "workspace"}).to_string(),
    )
    .unwrap();
    let body = format!(
        "'{bin}' spawn --json --surface process --runner exec --request request.json -- \
         /bin/sh -c 'echo nested > nested.txt' > ack.json 2> ack.err; echo $? > spawned.txt",
        bin = crate::support::BIN
    );
    run_shell(&env, json!({"name": "Parent", "task": "t"}), &body);
    assert_eq!(
        answer(&env, "spawned.txt"),
        "0",
        "{:?}",
        read(env.work().join("ack.err"))
    );
    assert_eq!(answer(&env, "nested.txt"), "nested", "the grandchild ran");
    let ack: herd_protocol::launch::LaunchAck =
        serde_json::from_str(&read(env.work().join("ack.json")).unwrap()).unwrap();
    let record = env.run_record(&ack.run_id);
    let script = read(record.extra.launch_script.unwrap()).unwrap();
    assert!(
        script.contains("'--die-with-parent'"),
        "confined again: {script}"
    );
    assert!(
        script.contains("HERD_SANDBOX_POLICY='workspace,on'"),
        "{script}"
    );
}
