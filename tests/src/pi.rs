//! The real Pi CLI as a child: where the pinned install is, an isolated environment pointing
//! at a [`ModelServer`], and a builder for Pi's command line.
//!
//! ```no_run
//! use herd_e2e::model::{ModelServer, Script, Text};
//! use herd_e2e::pi::PiEnv;
//! let model = ModelServer::start(Script::new().step(Text("DONE")));
//! let env = PiEnv::new(&model);
//! let out = env.pi().print("say done").run();
//! assert!(out.success(), "{out}");
//! ```

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::json;
use tempfile::TempDir;

use crate::git::ENV as GIT_ENV;
use crate::model::{ModelServer, PROVIDER};
use crate::proc::{self, Finished};

/// The time one Pi child may take (each takes about 2 s, mostly Node startup).
pub const PI_BUDGET: Duration = Duration::from_secs(60);

/// The variable that overrides where the Pi CLI is.
pub const PI_OVERRIDE: &str = "HERD_E2E_PI";

/// Returns the directory of the pinned Pi install (`tests/pi`).
pub fn pi_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("pi")
}

/// Returns the path of the pinned Pi CLI, or of `$HERD_E2E_PI` when set.
///
/// The pinned CLI is `tests/pi/pi`, a small wrapper that runs the installed Pi with the Node.js
/// pinned beside it (Pi 1.6 needs Node 22.19 or newer), whatever `node` the caller's `PATH` has.
///
/// # Panics
///
/// When it is not installed, with the command that installs it: a scenario that needs Pi fails
/// without it, it never passes silently.
pub fn pi_bin() -> PathBuf {
    if let Some(path) = std::env::var_os(PI_OVERRIDE) {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "{PI_OVERRIDE}={} is not a file",
            path.display()
        );
        return path;
    }
    assert!(
        pi_installed(),
        "the pinned Pi CLI is missing at {}: run `bash .ci/run`, or `npm ci --ignore-scripts` in {}",
        pi_cli().display(),
        pi_dir().display()
    );
    pi_path()
}

/// Returns where the Pi CLI is, installed or not: `$HERD_E2E_PI`, else the pinned wrapper
/// `tests/pi/pi`.
pub fn pi_path() -> PathBuf {
    std::env::var_os(PI_OVERRIDE).map_or_else(|| pi_dir().join("pi"), PathBuf::from)
}

/// Returns whether the pinned Pi CLI is installed (for callers that can do without it, like a
/// demo; scenarios call [`pi_bin`] and fail instead).
pub fn pi_available() -> bool {
    std::env::var_os(PI_OVERRIDE).map_or_else(pi_installed, |p| Path::new(&p).is_file())
}

/// The installed CLI the wrapper runs.
fn pi_cli() -> PathBuf {
    pi_dir().join("node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js")
}

fn pi_installed() -> bool {
    pi_cli().is_file()
}

/// An isolated home for Pi children talking to one scripted model server, removed on drop.
///
/// Layout of [`PiEnv::root`]: `home/` (HOME), `agent/` (PI_CODING_AGENT_DIR, with models.json
/// and settings.json), `work/` (a scratch working directory), `sessions/` (for `--session`).
pub struct PiEnv {
    _dir: TempDir,
    root: PathBuf,
    default_model: String,
    vars: Vec<(OsString, OsString)>,
}

impl PiEnv {
    /// Creates the environment: models.json lists every model of `model` under provider
    /// [`PROVIDER`], and settings.json turns retries off so a failure costs one request.
    ///
    /// # Panics
    ///
    /// When the directories or files cannot be written.
    pub fn new(model: &ModelServer) -> PiEnv {
        let dir = tempfile::Builder::new()
            .prefix("herd-e2e-pi-")
            .tempdir()
            .expect("a temporary directory");
        let root = dir
            .path()
            .canonicalize()
            .expect("the temporary directory exists");
        for sub in ["home", "agent", "work", "sessions"] {
            std::fs::create_dir_all(root.join(sub))
                .expect("directories in the temporary directory");
        }
        let models: Vec<_> = model
            .models()
            .ids()
            .map(|id| {
                let mut entry = json!({ "id": id, "reasoning": false, "input": ["text"], "contextWindow": 128_000, "maxTokens": 4096 });
                if let Some(cost) = model.models().price(id) {
                    entry["cost"] = cost.clone();
                }
                entry
            })
            .collect();
        let models_json = json!({ "providers": { PROVIDER: {
            "baseUrl": model.base_url(),
            "api": "openai-completions",
            "apiKey": "fake-key",
            "compat": { "supportsDeveloperRole": false, "supportsReasoningEffort": false },
            "models": models,
        }}});
        let settings_json = json!({ "quietStartup": true, "retry": { "enabled": false, "provider": { "maxRetries": 0 } } });
        write_json(&root.join("agent/models.json"), &models_json);
        write_json(&root.join("agent/settings.json"), &settings_json);

        let pi_bin_dir = pi_dir().join("node_modules/.bin");
        let path = std::env::join_paths(
            std::iter::once(pi_bin_dir).chain(
                std::env::var_os("PATH")
                    .iter()
                    .flat_map(std::env::split_paths),
            ),
        )
        .expect("PATH entries have no separator in them");
        let mut vars: Vec<(OsString, OsString)> = vec![
            ("PATH".into(), path),
            ("HOME".into(), root.join("home").into()),
            ("PI_CODING_AGENT_DIR".into(), root.join("agent").into()),
            ("PI_OFFLINE".into(), "1".into()),
            ("PI_TELEMETRY".into(), "0".into()),
            ("PI_SKIP_VERSION_CHECK".into(), "1".into()),
            ("TERM".into(), "xterm-256color".into()),
            ("LANG".into(), "C.UTF-8".into()),
        ];
        vars.extend(
            GIT_ENV
                .iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v))),
        );
        PiEnv {
            _dir: dir,
            root,
            default_model: model.default_model().to_owned(),
            vars,
        }
    }

    /// Returns the root of the environment (canonical path).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Returns the scratch working directory, `<root>/work`.
    pub fn work_dir(&self) -> PathBuf {
        self.root.join("work")
    }

    /// Returns the agent directory, `<root>/agent` (`PI_CODING_AGENT_DIR`).
    pub fn agent_dir(&self) -> PathBuf {
        self.root.join("agent")
    }

    /// Returns `<root>/sessions/<name>.jsonl`, a session path for `--session`.
    pub fn session_path(&self, name: &str) -> PathBuf {
        self.root.join("sessions").join(format!("{name}.jsonl"))
    }

    /// Returns the `--model` value for model `id`: `fake/<id>`.
    pub fn model_arg(id: &str) -> String {
        format!("{PROVIDER}/{id}")
    }

    /// Returns the complete environment of a child: `PATH` (with the pinned Pi's bin directory
    /// first), `HOME`, `PI_CODING_AGENT_DIR`, `PI_OFFLINE=1`, `TERM`, `LANG` and the hermetic
    /// git variables. Children get exactly these, nothing inherited.
    pub fn vars(&self) -> &[(OsString, OsString)] {
        &self.vars
    }

    /// Returns a command for `program` with the environment cleared and set to [`PiEnv::vars`],
    /// in [`PiEnv::work_dir`]. Use it to run herd binaries that start Pi children.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        #[expect(
            clippy::disallowed_methods,
            reason = "test support builds commands for its own bounded runner"
        )]
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .envs(self.vars.iter().map(|(k, v)| (k, v)))
            .current_dir(self.work_dir());
        cmd
    }

    /// Returns a Pi command line in this environment, on the default model, in the work dir.
    pub fn pi(&self) -> PiCommand<'_> {
        PiCommand {
            env: self,
            cwd: self.work_dir(),
            model: self.default_model.clone(),
            args: Vec::new(),
            budget: PI_BUDGET,
        }
    }
}

fn write_json(path: &Path, value: &serde_json::Value) {
    let text = serde_json::to_string_pretty(value).expect("JSON values serialize");
    std::fs::write(path, text)
        .unwrap_or_else(|err| panic!("cannot write {}: {err}", path.display()));
}

/// A Pi command line being built; [`PiCommand::run`] runs it bounded, [`PiCommand::argv`]
/// hands it to something else (a tmux pane, a herd binary).
#[derive(Clone)]
pub struct PiCommand<'env> {
    env: &'env PiEnv,
    cwd: PathBuf,
    model: String,
    args: Vec<OsString>,
    budget: Duration,
}

impl PiCommand<'_> {
    /// Print mode: runs `prompt`, prints the last assistant text and exits.
    #[must_use]
    pub fn print(self, prompt: &str) -> Self {
        self.arg("-p").arg(prompt)
    }

    /// Adds `prompt` as an initial message (interactive mode sends it at startup).
    #[must_use]
    pub fn prompt(self, prompt: &str) -> Self {
        self.arg(prompt)
    }

    /// Uses the session file `path` (`--session`).
    #[must_use]
    pub fn session(self, path: &Path) -> Self {
        self.arg("--session").arg(path)
    }

    /// Uses model `id` of the scripted server instead of the default one.
    #[must_use]
    pub fn model(mut self, id: &str) -> Self {
        id.clone_into(&mut self.model);
        self
    }

    /// Loads the extension at `path` (`-e`).
    #[must_use]
    pub fn extension(self, path: &Path) -> Self {
        self.arg("-e").arg(path)
    }

    /// Runs in `dir` instead of the work dir.
    #[must_use]
    pub fn cwd(mut self, dir: &Path) -> Self {
        dir.clone_into(&mut self.cwd);
        self
    }

    /// Sets the time budget of [`PiCommand::run`] (default [`PI_BUDGET`]).
    #[must_use]
    pub fn budget(mut self, budget: Duration) -> Self {
        self.budget = budget;
        self
    }

    /// Adds one argument.
    #[must_use]
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Returns the full argument vector, the Pi binary first.
    ///
    /// # Panics
    ///
    /// When Pi is not installed.
    pub fn argv(&self) -> Vec<OsString> {
        let mut argv = vec![
            pi_bin().into_os_string(),
            "--model".into(),
            PiEnv::model_arg(&self.model).into(),
        ];
        argv.extend(self.args.iter().cloned());
        argv
    }

    /// Returns the working directory.
    pub fn dir(&self) -> &Path {
        &self.cwd
    }

    /// Returns the command, ready to spawn, with the environment's variables only.
    ///
    /// # Panics
    ///
    /// When Pi is not installed.
    pub fn command(&self) -> Command {
        let argv = self.argv();
        let mut cmd = self.env.command(&argv[0]);
        cmd.args(&argv[1..]).current_dir(&self.cwd);
        cmd
    }

    /// Runs Pi to its end within the budget (stdin from /dev/null).
    ///
    /// # Panics
    ///
    /// When Pi is not installed or cannot be started.
    pub fn run(&self) -> Finished {
        proc::run(self.command(), self.budget)
    }
}
