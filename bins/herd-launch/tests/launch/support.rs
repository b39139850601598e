//! Shared fixtures: a scratch home, artifacts directory and working directory per test, the
//! test child and the stand-in Pi (`scripts/`), and waits for what a launch leaves behind.

use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_e2e::cli::Run;
use herd_e2e::wait::wait_for;
use herd_protocol::launch::LaunchAck;
use herd_protocol::launch::runner_exit::RunnerExit;
use herd_protocol::run::RunRecord;
use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_herd-launch");

pub fn script(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/launch/scripts")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// A scratch home, an artifacts directory and a working directory for one test.
pub struct Env {
    pub dir: tempfile::TempDir,
    pub vars: Vec<(String, String)>,
}

impl Env {
    pub fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["home", "work", "art"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let vars = vec![
            ("PATH".to_owned(), std::env::var("PATH").unwrap_or_default()),
            (
                "HOME".to_owned(),
                dir.path().join("home").to_string_lossy().into_owned(),
            ),
            (
                "HERD_ARTIFACTS".to_owned(),
                dir.path().join("art").to_string_lossy().into_owned(),
            ),
        ];
        Env { dir, vars }
    }

    /// An environment whose agent directory holds the role `name` (`text`, frontmatter and
    /// body) and whose Pi is the stand-in.
    pub fn with_role(name: &str, text: &str) -> Env {
        let mut env = Env::new();
        let agent_dir = env.dir.path().join("agent");
        std::fs::create_dir_all(agent_dir.join("agents")).unwrap();
        std::fs::write(agent_dir.join(format!("agents/{name}.md")), text).unwrap();
        env.set("PI_CODING_AGENT_DIR", agent_dir.to_string_lossy());
        env.set("HERD_PI", script("fake-pi.sh"));
        env
    }

    /// The person of this environment chose unconfined children (`[sandbox] mode = "off"`), for
    /// a test that reads what a child says of its own process (a confined child's PIDs are its
    /// namespace's) or counts every program a launch starts.
    pub fn unconfined(&self) {
        let dir = self.dir.path().join("home/.config/herd");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), "[sandbox]\nmode = \"off\"\n").unwrap();
    }

    pub fn set(&mut self, key: &str, value: impl Into<String>) {
        self.vars.retain(|(k, _)| k != key);
        self.vars.push((key.to_owned(), value.into()));
    }

    /// Makes `herd-launch` use a fake tmux, the shell script `body`, on a socket of this
    /// environment.
    pub fn fake_tmux(&mut self, body: &str) {
        use std::os::unix::fs::PermissionsExt;
        let fake = self.dir.path().join("tmux");
        std::fs::write(&fake, format!("#!/bin/sh\n{body}")).unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        self.set("HERD_TMUX", fake.to_string_lossy());
        let socket = self.dir.path().join("sock");
        self.set("HERD_TMUX_SOCKET", socket.to_string_lossy());
    }

    pub fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    pub fn art(&self) -> PathBuf {
        self.dir.path().join("art")
    }

    pub fn run(&self, args: &[&str], request: &Value) -> Run {
        // A command that does not read its stdin (send, resume) may have closed it already.
        let mut cmd = herd_e2e::cli::command(BIN)
            .args(args.iter().copied())
            .env_clear()
            .cwd(self.work())
            .stdin_bytes(request.to_string());
        for (k, v) in &self.vars {
            cmd = cmd.env(k, v);
        }
        herd_e2e::cli::run(&cmd)
    }

    /// `herd-launch spawn --request - --json` with the exec runner running the test child.
    pub fn spawn_exec(&self, surface: &str, request: &Value, child_args: &[&str]) -> Run {
        let child = script("child.sh");
        let mut args = vec![
            "spawn",
            "--request",
            "-",
            "--json",
            "--surface",
            surface,
            "--runner",
            "exec",
            "--",
            "sh",
            &child,
        ];
        args.extend_from_slice(child_args);
        self.run(&args, request)
    }

    pub fn record(&self, run_id: &str) -> Value {
        serde_json::from_slice(
            &std::fs::read(self.art().join("runs").join(format!("{run_id}.json"))).unwrap(),
        )
        .unwrap()
    }

    /// The record of run `run_id`, as the protocol types it.
    pub fn run_record(&self, run_id: &str) -> RunRecord {
        serde_json::from_value(self.record(run_id)).unwrap()
    }

    pub fn run_ids(&self) -> Vec<String> {
        match std::fs::read_dir(self.art().join("runs")) {
            Ok(dir) => dir
                .filter_map(|e| {
                    e.ok()?
                        .file_name()
                        .to_str()?
                        .strip_suffix(".json")
                        .map(str::to_owned)
                })
                .filter(|n| !n.contains('.'))
                .collect(),
            Err(_) => Vec::new(),
        }
    }
}

/// How long a test waits for what a launch leaves behind.
pub const WAIT: Duration = Duration::from_secs(30);

pub fn read(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

pub fn exit_code(env: &Env, run_id: &str) -> i32 {
    let file = env
        .art()
        .join("runs")
        .join(format!("{run_id}.runner-exit.json"));
    let exit: RunnerExit = wait_for("the runner's exit", WAIT, || {
        serde_json::from_str(&read(&file)?).ok()
    });
    exit.exit_code
}

/// An environment with a repository `repo` (one commit) in its work directory and a managed
/// root of its own; returns it with the commit.
pub fn repo_env() -> (Env, String) {
    let mut env = Env::new();
    let repo = env.work().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let sb = herd_e2e::git::Sandbox::new();
    sb.git(&repo, ["init", "-q", "-b", "main"]);
    sb.write(&repo, "README", "hi\n");
    let head = sb.commit_all(&repo, "first");
    sb.git(&repo, ["branch", "taken"]);
    let root = env.dir.path().join("managed");
    env.set("HERD_WORKTREE_ROOT", root.to_string_lossy());
    env.set("GIT_CONFIG_GLOBAL", "/dev/null");
    env.set("GIT_CONFIG_NOSYSTEM", "1");
    (env, head)
}

/// `text` as a snapshot holds it: the artifacts directory as `[ART]`, the rest of the test's
/// directory as `[DIR]`, a Pi session file's directory (its encoded working directory) as `[CWD]`
/// and its name (a time and an id) as `[SESSION]`, and a run id (8 hex characters, as wide) as
/// `[RUN-ID]`.
pub fn redact(env: &Env, text: &str) -> String {
    herd_e2e::redact::Redactions::new()
        .path(&env.art(), "ART")
        .path(env.dir.path(), "DIR")
        .pattern(r"/sessions/--[^/\s]*--/", "/sessions/[CWD]/")
        .pattern(
            r"\d{4}-\d{2}-\d{2}T[\d-]+Z_[0-9a-f-]+\.jsonl",
            "[SESSION].jsonl",
        )
        .pattern(r"\b[0-9a-f]{8}\b", "[RUN-ID]")
        .apply(text)
}

/// The error document a refused `--json` command printed in `run`.
pub fn refusal(run: &Run) -> herd_core::error::ErrorBody {
    serde_json::from_str::<herd_core::error::ErrorDocument>(&run.stdout)
        .unwrap_or_else(|err| panic!("no error document ({err}): {run}"))
        .error
}

/// The acknowledgement `spawn --json` printed in `run`.
pub fn ack(run: &Run) -> LaunchAck {
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|err| panic!("no acknowledgement ({err}): {run}"))
}

/// A repository at `repo` whose committed setup file is `toml`, approved by the user of `env`.
pub fn approved_setup_repo(env: &Env, repo: &Path, toml: &str) {
    std::fs::create_dir_all(repo).unwrap();
    let sb = herd_e2e::git::Sandbox::new();
    sb.git(repo, ["init", "-q", "-b", "main"]);
    sb.write(repo, ".herd/worktree.toml", toml);
    sb.commit_all(repo, "setup");
    let config = env.dir.path().join("home/.config/herd");
    let description = herd_worktree::setup::config::load(repo, None).unwrap();
    herd_worktree::setup::trust::approve(
        &config,
        repo,
        description.project.as_ref().unwrap(),
        &herd_worktree::setup::covered::Covered::default(),
    )
    .unwrap();
}
