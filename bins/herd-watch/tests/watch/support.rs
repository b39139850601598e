//! Shared fixtures: an environment of real herd programs over a scratch artifacts directory,
//! on the process surface or a private tmux server, and the helpers several behaviours use.

use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_e2e::cli::{self, Run};
use herd_e2e::proc::signal_pid;
use herd_e2e::wait::{try_wait_for, wait_for};
use herd_protocol::launch::LaunchAck;
use herd_protocol::run::{LaunchStatus, RunRecord};
use herd_protocol::watch::{Label, StatusRow, StatusRuns, WatchEvent, WatchWait};
use serde::de::DeserializeOwned;
use serde_json::Value;

pub fn watch_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_herd-watch"))
}

/// herd-launch of this build (the test kit says how to build it when it is missing).
pub fn launch_bin() -> PathBuf {
    herd_e2e::bin("herd-launch")
}

/// A scratch artifacts directory and working directory.
pub struct Env {
    pub dir: tempfile::TempDir,
    pub surface: &'static str,
    pub extra: Vec<(String, String)>,
    /// The test kit's private tmux server (killed when dropped) and its socket.
    pub tmux: Option<(herd_e2e::tmux::Tmux, PathBuf)>,
    /// The umask every herd program of this environment runs with, when not the test's own.
    pub umask: Option<&'static str>,
}

impl Env {
    pub fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
            surface: "process",
            extra: Vec::new(),
            tmux: None,
            umask: None,
        }
    }

    /// Runs `tmux -S <this environment's socket> ARGS`.
    pub fn tmux_cmd(&self, args: &[&str]) -> Run {
        let (_, socket) = self.tmux.as_ref().expect("a tmux environment");
        cli::run(
            &cli::within("tmux", Duration::from_secs(5))
                .arg("-S")
                .arg(socket)
                .args(args.iter().copied()),
        )
    }

    /// The pane a run's record names.
    pub fn pane(&self, run_id: &str) -> String {
        self.run_record(run_id).pane.expect("a pane").pane_id
    }

    /// An environment whose children run in panes of a private tmux server, with one session.
    pub fn tmux() -> Env {
        let mut env = Env::new();
        let vars: Vec<(std::ffi::OsString, std::ffi::OsString)> = ["PATH", "HOME"]
            .into_iter()
            .filter_map(|k| Some((k.into(), std::env::var_os(k)?)))
            .collect();
        let server = herd_e2e::tmux::Tmux::start(&vars);
        server.new_session("herd-test", env.dir.path(), &["sh".into()]);
        let socket = server.socket_path();
        env.surface = "tmux";
        env.extra
            .push(("HERD_TMUX_SOCKET".into(), socket.to_str().unwrap().into()));
        env.tmux = Some((server, socket));
        env
    }

    pub fn art(&self) -> PathBuf {
        self.dir.path().join("art")
    }

    /// The person of this environment chose confined children (`[sandbox] mode`), in a
    /// configuration directory of its own.
    pub fn confine(&mut self, mode: &str) {
        let config = self.dir.path().join("config");
        std::fs::create_dir_all(config.join("herd")).unwrap();
        std::fs::write(
            config.join("herd/config.toml"),
            format!("[sandbox]\nmode = \"{mode}\"\n"),
        )
        .unwrap();
        self.extra
            .push(("XDG_CONFIG_HOME".into(), config.to_str().unwrap().into()));
    }

    pub fn run(
        &self,
        program: &Path,
        args: &[&str],
        extra_env: &[(&str, &str)],
        budget: Duration,
    ) -> Run {
        let mut cmd = match self.umask {
            None => cli::within(program, budget),
            Some(umask) => cli::within("sh", budget)
                .args(["-c", "umask \"$0\" && exec \"$@\""])
                .arg(umask)
                .arg(program),
        };
        cmd = cmd
            .arg("--artifacts")
            .arg(self.art())
            .args(args)
            .cwd(self.dir.path())
            .grace(Duration::from_millis(200));
        for (k, v) in &self.extra {
            cmd = cmd.env(k, v);
        }
        for (k, v) in extra_env {
            cmd = cmd.env(k, v);
        }
        cli::try_run(&cmd)
    }

    /// Launches a child running `script` under `sh -c`; returns its run id.
    pub fn spawn(&self, name: &str, script: &str) -> String {
        self.spawn_request(
            serde_json::json!({"name": name, "task": "the task"}),
            &["--runner", "exec", "--", "sh", "-c", script],
        )
    }

    /// Launches `request` with the further spawn arguments `rest`; returns the run id.
    pub fn spawn_request(&self, request: Value, rest: &[&str]) -> String {
        let out = self.launch(&request, rest, &[]);
        let ack: LaunchAck = serde_json::from_str(&out.stdout)
            .unwrap_or_else(|_| panic!("spawn: {}\n{}", out.stdout, out.stderr));
        assert_eq!(ack.status, LaunchStatus::Launched, "{}", out.stdout);
        ack.run_id
    }

    /// Runs `herd-launch spawn --request FILE --surface SURFACE --json REST…` with more
    /// environment `vars`, the request written to a file of its name.
    pub fn launch(&self, request: &Value, rest: &[&str], vars: &[(&str, &str)]) -> Run {
        let name = request["name"].as_str().unwrap().replace(' ', "_");
        let path = self.dir.path().join(format!("req-{name}.json"));
        std::fs::write(&path, request.to_string()).unwrap();
        let mut args = vec![
            "spawn",
            "--request",
            path.to_str().unwrap(),
            "--surface",
            self.surface,
            "--json",
        ];
        args.extend_from_slice(rest);
        self.run(&launch_bin(), &args, vars, Duration::from_secs(30))
    }

    pub fn watch(&self, args: &[&str]) -> (i32, Value, String) {
        self.watch_env(args, &[])
    }

    /// `herd-watch ARGS` (a `wait … --json`): its exit code, the settled result it printed and
    /// all its output.
    pub fn wait(&self, args: &[&str]) -> (i32, WatchWait, String) {
        self.doc(args)
    }

    /// `herd-watch ARGS` (with `--json`): its exit code, the document it printed as `T`, and all
    /// its output.
    pub fn doc<T: DeserializeOwned>(&self, args: &[&str]) -> (i32, T, String) {
        let out = self.run(&watch_bin(), args, &[], Duration::from_secs(60));
        let text = out.stdout.clone() + &out.stderr;
        let doc = serde_json::from_str(&out.stdout).unwrap_or_else(|err| {
            panic!("herd-watch {args:?} printed no such document ({err}): {text}")
        });
        (out.code, doc, text)
    }

    /// The rows of `herd-watch status --run ID --json`.
    pub fn status(&self, id: &str) -> StatusRuns {
        let out = self.run(
            &watch_bin(),
            &["status", "--run", id, "--json"],
            &[],
            Duration::from_secs(60),
        );
        serde_json::from_str(&out.stdout).unwrap_or_else(|err| {
            panic!(
                "status printed no runs ({err}): {}{}",
                out.stdout, out.stderr
            )
        })
    }

    pub fn watch_env(&self, args: &[&str], env: &[(&str, &str)]) -> (i32, Value, String) {
        let out = self.run(&watch_bin(), args, env, Duration::from_secs(60));
        let doc = serde_json::from_str(&out.stdout).unwrap_or(Value::Null);
        (out.code, doc, out.stdout.clone() + &out.stderr)
    }

    pub fn record(&self, run_id: &str) -> Value {
        let path = self.art().join("runs").join(format!("{run_id}.json"));
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    }

    /// The record of run `run_id`, as the protocol types it.
    pub fn run_record(&self, run_id: &str) -> RunRecord {
        serde_json::from_value(self.record(run_id)).unwrap()
    }

    pub fn identity_pid(&self, run_id: &str) -> u32 {
        let path = PathBuf::from(format!(
            "{}.process.json",
            self.run_record(run_id).session_file
        ));
        wait_for(
            &format!("an identity record at {}", path.display()),
            Duration::from_secs(10),
            || herd_core::identity::Record::read(&path).ok().flatten(),
        )
        .pid
    }
}

pub fn kill(pid: u32) {
    signal_pid(pid, libc::SIGKILL);
}

/// Whether process `pid` still runs (a zombie waiting for its parent's reap does not).
pub fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat[stat.rfind(')').unwrap() + 2..].chars().next();
        !matches!(state, Some('Z' | 'X'))
    })
}

/// The lines of a `follow --json` that are events, as the protocol types them.
pub fn events(stdout: &str) -> Vec<WatchEvent> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// How many results of run `run_id` a `follow --json` printed.
pub fn result_events(stdout: &str, run_id: &str) -> usize {
    events(stdout)
        .iter()
        .filter(|e| matches!(e, WatchEvent::Result { run_id: id, .. } if id == run_id))
        .count()
}

/// The status row of run `id` once its label is `label`, or the last one read within 15 s.
pub fn wait_for_label(env: &Env, id: &str, label: Label) -> StatusRow {
    let mut last = None;
    try_wait_for(Duration::from_secs(15), || {
        let row = env.status(id).runs.remove(0);
        if row.label == label {
            return Some(row);
        }
        last = Some(row);
        None
    })
    .or(last)
    .unwrap()
}

/// `text` as a snapshot holds it: this environment's directory as `[DIR]`, a run id as
/// `[RUN-ID]` and a run time as `MM:SS` (both as wide as what they replace, so columns and frames
/// stay aligned), an age (`since 3s`, or what a widget row ends with) as `Ns`, a time in
/// milliseconds since the epoch as `[EPOCH-MS]`, and a process id as `[PID]`.
pub fn redact(dir: &Path, text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(age_redacted).collect();
    if text.ends_with('\n') {
        lines.push(String::new());
    }
    herd_e2e::redact::Redactions::new()
        .path(dir, "DIR")
        .pattern(r"\b[0-9a-f]{8}\b", "[RUN-ID]")
        .pattern(r"\b\d{2}:\d{2}\b", "MM:SS")
        .pattern(r"\bsince \d+([smh])\b", "since N$1")
        .pattern(r"\b\d{13}\b", "[EPOCH-MS]")
        .pattern(r"\bprocess \d+\b", "process [PID]")
        .apply(&lines.join("\n"))
}

/// `line` with the age before its closing frame (`… 12s │`) as `Ns`, the row padded back to its
/// width where its widest gap is, as the row of a one-digit age is drawn.
fn age_redacted(line: &str) -> String {
    let Some(body) = line.strip_suffix(" │") else {
        return line.to_owned();
    };
    let start = body.rfind(' ').map_or(0, |i| i + 1);
    let token = &body[start..];
    let Some(digits) = token.strip_suffix(['s', 'm', 'h']) else {
        return line.to_owned();
    };
    let unit = &token[digits.len()..];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return line.to_owned();
    }
    let head = &body[..start];
    let pad = " ".repeat(digits.len() - 1);
    match head.rfind("  ") {
        Some(gap) => format!("{}{pad}{}N{unit} │", &head[..gap], &head[gap..]),
        None => format!("{head}N{unit} │"),
    }
}

/// A stand-in for the Pi CLI that follows the child's on-disk protocol: a provider error on the
/// model `prov/a`, a report and `done` on any other. (The real Pi CLI plays this part in the
/// end-to-end scenarios.) Asked which models it has credentials for, it lists `prov/a` and
/// `prov/b` as Pi prints them.
const FAKE_PI: &str = r#"#!/bin/sh
if [ "$1" = --list-models ]; then
  printf 'provider  model  context  max-out  thinking  images\n'
  printf 'prov      a      128K     4.1K     no        no    \n'
  printf 'prov      b      128K     4.1K     no        no    \n'
  exit 0
fi
model=""
while [ $# -gt 0 ]; do case "$1" in --model) model="$2"; shift;; esac; shift; done
case "$model" in
  prov/a) printf '{"type":"error","errorMessage":"500 scripted failure","stopReason":"error"}' > "$PI_SUBAGENT_SESSION.exit"; exit 1;;
  *) printf '{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"done with %s"}],"stopReason":"stop","provider":"prov","model":"%s"}}\n' "$model" "${model#prov/}" > "$PI_SUBAGENT_SESSION"
     printf '{"type":"done"}' > "$PI_SUBAGENT_SESSION.exit";;
esac
"#;

pub fn with_fake_pi(env: &mut Env) {
    let pi = env.dir.path().join("fake-pi");
    std::fs::write(&pi, FAKE_PI).unwrap();
    let mut perms = std::fs::metadata(&pi).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&pi, perms).unwrap();
    env.extra
        .push(("HERD_PI".into(), pi.to_str().unwrap().into()));
    env.extra.push((
        "PI_CODING_AGENT_DIR".into(),
        env.dir.path().join("agent").to_str().unwrap().into(),
    ));
}

/// Writes an executable script at `path`.
pub fn write_script(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    let mut perms = std::fs::metadata(path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(path, perms).unwrap();
}
