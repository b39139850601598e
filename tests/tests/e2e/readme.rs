//! The README's "Use it from Pi", followed as written by a new user: a fresh HOME,
//! `cargo xtask install --root <dir>`, then an interactive `pi` inside tmux asked to delegate,
//! with an older `node` first on `PATH`. Everything is read off the screen and the files.

#![expect(
    clippy::unwrap_used,
    reason = "scenario steps fail loudly on a broken fixture"
)]

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_e2e::model::{ModelServer, Models, Script, Text};
use herd_e2e::pi::{PiEnv, pi_bin};
use herd_e2e::tmux::Tmux;
use herd_e2e::wait::{try_wait_for, wait_for};
use herd_e2e::{proc, session};
use serde_json::json;

/// The budget of a scenario step that includes a child Pi's whole life.
const STEP: Duration = Duration::from_secs(90);
/// `cargo xtask install --debug` of binaries the test run has built already; minutes when cold.
const INSTALL: Duration = Duration::from_secs(20 * 60);

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A directory with `pi`, the user's own launcher of Pi on its Node (as nvm, volta or `npx`
/// make one), and a directory whose `node` is older: Pi's `cli.js` run on it dies at once.
fn user_bins(dir: &Path) -> (PathBuf, PathBuf) {
    let launcher = dir.join("launcher");
    let old = dir.join("old-node");
    for d in [&launcher, &old] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::os::unix::fs::symlink(pi_bin(), launcher.join("pi")).unwrap();
    let node = old.join("node");
    std::fs::write(
        &node,
        "#!/bin/sh\necho \"SyntaxError: The requested module 'node:module' does not provide an export named 'enableCompileCache'\" >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&node, std::fs::Permissions::from_mode(0o755)).unwrap();
    (launcher, old)
}

/// The user's `PATH`: the older `node` first, then their launcher of Pi, the installed herd
/// binaries and the machine's own directories (none of them the pinned Node's).
fn user_path(first: &[&Path]) -> OsString {
    let machine = std::env::var_os("PATH").unwrap_or_default();
    let pinned = pi_bin().parent().unwrap().join("node_modules");
    let rest = std::env::split_paths(&machine).filter(|p| !p.starts_with(&pinned));
    std::env::join_paths(first.iter().map(|p| p.to_path_buf()).chain(rest)).unwrap()
}

/// `cargo xtask install --debug --root <root> --pi <launcher>` in `env`'s fresh HOME.
fn install(env: &PiEnv, root: &Path, pi: &Path) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let real_home = PathBuf::from(std::env::var_os("HOME").unwrap());
    let mut cmd = env.command(&cargo);
    cmd.current_dir(workspace())
        .args(["xtask", "install", "--debug", "--root"])
        .arg(root)
        .arg("--pi")
        .arg(pi)
        // The toolchain is the machine's, whatever HOME says.
        .env(
            "CARGO_HOME",
            std::env::var_os("CARGO_HOME").unwrap_or_else(|| real_home.join(".cargo").into()),
        )
        .env(
            "RUSTUP_HOME",
            std::env::var_os("RUSTUP_HOME").unwrap_or_else(|| real_home.join(".rustup").into()),
        )
        .env("PATH", std::env::var_os("PATH").unwrap_or_default());
    let done = proc::run(cmd, INSTALL);
    assert!(done.success(), "cargo xtask install: {done}");
    for name in herd_e2e::BINARIES {
        assert!(root.join("bin").join(name).is_file(), "{name} is installed");
    }
}

/// The one session file interactive Pi made under the agent directory.
fn parent_session(env: &PiEnv) -> Option<PathBuf> {
    let dir = env.agent_dir().join("sessions");
    let mut found = Vec::new();
    for sub in std::fs::read_dir(&dir).ok()?.flatten() {
        for file in std::fs::read_dir(sub.path()).ok()?.flatten() {
            if file.path().extension().is_some_and(|x| x == "jsonl") {
                found.push(file.path());
            }
        }
    }
    found.sort();
    found.into_iter().next()
}

fn width(tmux: &Tmux, pane: &str) -> u32 {
    tmux.cmd(["display-message", "-p", "-t", pane, "#{pane_width}"])
        .parse()
        .unwrap()
}

#[test]
fn the_readme_path_a_fresh_home_an_install_and_an_interactive_parent_in_tmux() {
    let model = ModelServer::start_models(
        Models::new()
            .model(
                "parent",
                Script::delegating(
                    json!({"name": "Scout", "task": "Count the files here", "model": PiEnv::model_arg("child")}),
                ),
            )
            .model("child", Script::new().step(Text("REPORT: 3 files"))),
    );
    let env = PiEnv::new(&model);
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("herd");
    let (launcher, old_node) = user_bins(scratch.path());

    // 1. `cargo xtask install` (into a root of the user's choosing), Pi's package registered.
    install(&env, &root, &launcher.join("pi"));

    // 2. `pi` inside tmux, on a PATH whose first `node` is too old for Pi.
    let path = user_path(&[&old_node, &launcher, &root.join("bin")]);
    let mut vars: Vec<(OsString, OsString)> = env
        .vars()
        .iter()
        .filter(|(k, _)| k != "PATH")
        .cloned()
        .collect();
    vars.push(("PATH".into(), path));
    let tmux = Tmux::start(&vars);
    let argv: Vec<OsString> = ["pi", "--model"]
        .iter()
        .map(OsString::from)
        .chain([OsString::from(PiEnv::model_arg("parent"))])
        .collect();
    let pane = tmux.new_session("parent", &env.work_dir(), &argv);
    // The footer names the model once the editor takes input.
    wait_for("the parent's editor", STEP, || {
        let screen = tmux.capture(&pane);
        screen
            .lines()
            .any(|l| l.contains("(auto)") && l.trim_end().ends_with("parent"))
            .then_some(())
    });
    let before = width(&tmux, &pane);

    // 3. "Have a scout count the files here".
    tmux.send_text(&pane, "Have a scout count the files here");
    tmux.send_keys(&pane, &["Enter"]);

    // The widget above the editor shows the child while it runs, or the report is already in.
    let screen = wait_for(
        "the widget or the report on the parent's screen",
        STEP,
        || {
            let screen = tmux.capture(&pane);
            (screen.contains("Subagents") && screen.contains("Scout")
                || screen.contains("Integrated the report."))
            .then_some(screen)
        },
    );
    if !screen.contains("Integrated the report.") {
        assert!(screen.contains("Scout"), "{screen}");
    }
    let screen = tmux.wait_for_text(&pane, "Integrated the report.", STEP);

    // 4. The report arrived once, as a subagent_result, and started the turn that answered it.
    let session = try_wait_for(STEP, || parent_session(&env))
        .unwrap_or_else(|| panic!("no parent session; the screen:\n{screen}"));
    let results = session::custom_entries(&session, "subagent_result");
    assert_eq!(results.len(), 1, "{results:#?}\n{screen}");
    let content = results[0]["content"].as_str().unwrap();
    assert!(
        content.starts_with("Sub-agent \"Scout\" completed"),
        "{content}"
    );
    assert!(content.contains("REPORT: 3 files"), "{content}");

    // 5. The parent's pane kept its width: the child did not squeeze it.
    assert_eq!(width(&tmux, &pane), before, "{}", tmux.capture(&pane));
    tmux.send_text(&pane, "/quit");
    tmux.send_keys(&pane, &["Enter"]);
}
