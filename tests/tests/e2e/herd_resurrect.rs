//! Every child back after its terminal server went away: runs that were mid-turn when the
//! private tmux server was killed (or the Herdr server restarted) settle as lost, and
//! `herd-launch resurrect` resumes each once in its exact session file, a worktree child in its
//! retained worktree; a persistent specialist, an exec child and a run without its launch policy
//! are listed with why. Real Pi children with the scripted model.

#![expect(
    clippy::unwrap_used,
    reason = "scenario steps fail loudly on a broken fixture"
)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_core::error::{ErrorCode, ErrorDocument};
use herd_e2e::git::Sandbox;
use herd_e2e::herd::{Herd, Where, results};
use herd_e2e::model::{ModelServer, Script, Text, ToolCall, request};
use herd_e2e::pi::PiEnv;
use herd_e2e::wait::wait_for;
use herd_protocol::launch::LaunchAck;
use herd_protocol::launch::resurrect::{ResurrectDoc, ResurrectRun, ResurrectStatus, SkipReason};
use herd_protocol::result::Outcome;
use herd_protocol::run::SurfaceKind;
use herd_protocol::watch::WatchEvent;
use serde_json::{Value, json};

const BUDGET: Duration = Duration::from_secs(60);

/// A child that starts its task and is still in its first tool when its terminal goes away, then,
/// resumed, records where it runs and reports.
fn script() -> Script {
    Script::new()
        .step(ToolCall::bash(
            "pwd > \"started-$PI_SUBAGENT_NAME.txt\"; sleep 60",
        ))
        .step(ToolCall::bash("pwd > \"resumed-$PI_SUBAGENT_NAME.txt\""))
        .step(Text("RESUMED: picked up the task"))
}

fn spawn(herd: &Herd<'_>, cwd: &Path, request: Value) -> String {
    herd.launch_in(cwd, &request).run_id
}

fn resurrect(herd: &Herd<'_>, extra: &[&str]) -> (i32, ResurrectDoc) {
    let mut args = vec!["resurrect", "--json"];
    args.extend_from_slice(extra);
    let out = herd.run("herd-launch", &args);
    assert!(!out.timed_out, "herd-launch resurrect:\n{out}");
    (out.code, out.doc())
}

/// The entry of `run` in a resurrect document.
fn entry<'a>(doc: &'a ResurrectDoc, run: &str) -> &'a ResurrectRun {
    doc.runs
        .iter()
        .find(|r| r.run_id == run)
        .unwrap_or_else(|| panic!("run {run} is not listed: {doc:#?}"))
}

/// Every file of the artifacts directory with its bytes, to prove a dry run changed nothing.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push((path.clone(), std::fs::read(&path).unwrap_or_default()));
            }
        }
    }
    files.sort();
    files
}

/// Kills the tmux server (every pane with it) and starts a new one on the same socket, as after
/// a crash of the server or a reboot: the new server knows none of the old panes.
fn kill_tmux(herd: &Herd<'_>) {
    let tmux = herd.tmux().unwrap();
    let old = tmux.pid();
    let _ = tmux.try_cmd(["kill-server"]);
    wait_for("the tmux server to exit", BUDGET, || {
        (!herd_e2e::proc::process_alive(old)).then_some(())
    });
    tmux.cmd(["start-server"]);
}

/// Waits until each child is in its first tool (it wrote its `started-` file).
fn wait_started(dirs: &[(&Path, &str)]) {
    for (dir, name) in dirs {
        let file = dir.join(format!("started-{name}.txt"));
        wait_for(&format!("{} to start", file.display()), BUDGET, || {
            file.exists().then_some(())
        });
    }
}

/// The requests the model got from the child whose task is `task`.
fn requests_of(model: &ModelServer, task: &str) -> Vec<Value> {
    model
        .requests()
        .into_iter()
        .filter(|r| request::user_texts(r).iter().any(|t| t.contains(task)))
        .collect()
}

#[test]
fn after_a_killed_tmux_server_resurrect_resumes_each_lost_run_once_in_its_session() {
    let model = ModelServer::start(script());
    let env = PiEnv::new(&model);
    let sb = Sandbox::new();
    let repo = sb.repo("repo");
    let mut herd = Herd::new(&env, Where::Tmux);
    herd.set_var("HERD_WORKTREE_ROOT", env.root().join("worktrees"));
    let work = env.work_dir();
    let scout = spawn(
        &herd,
        &work,
        json!({"name": "Scout", "task": "Task of the scout: look around",
               "model": Herd::model("fake-model")}),
    );
    let builder = spawn(
        &herd,
        &repo,
        json!({"name": "Builder", "task": "Task of the builder: build it",
               "model": Herd::model("fake-model"), "worktree": {"branch": "feature/build"}}),
    );
    let checkout = PathBuf::from(herd.run_record(&builder).worktree.unwrap().path);
    wait_started(&[(&work, "Scout"), (&checkout, "Builder")]);
    let sessions: Vec<String> = [&scout, &builder]
        .iter()
        .map(|id| herd.run_record(id).session_file)
        .collect();

    kill_tmux(&herd);
    // A watcher settles both as lost, and delivers that once.
    let events = herd.follow();
    for id in [&scout, &builder] {
        let results = results(&events, id);
        assert_eq!(results.len(), 1, "{events:#?}");
        assert_eq!(results[0].outcome, Outcome::Failed, "{events:#?}");
        // The loss names the way back.
        assert!(
            results[0]
                .message
                .contains("`/subagent resurrect` resumes it there")
                && results[0].message.contains("--dry-run"),
            "{:#?}",
            results[0]
        );
    }

    // A dry run lists both and changes nothing.
    let before = snapshot(herd.artifacts());
    let (code, doc) = resurrect(&herd, &["--dry-run"]);
    assert_eq!(code, 0, "{doc:#?}");
    assert!(doc.dry_run, "{doc:#?}");
    for id in [&scout, &builder] {
        assert_eq!(
            entry(&doc, id).status,
            ResurrectStatus::WouldResume,
            "{doc:#?}"
        );
    }
    assert_eq!(
        entry(&doc, &builder).cwd.as_deref(),
        checkout.to_str(),
        "{doc:#?}"
    );
    assert_eq!(
        before,
        snapshot(herd.artifacts()),
        "a dry run wrote nothing"
    );

    // Two resurrects at once: each run is resumed by exactly one of them.
    let args: Vec<OsString> = ["resurrect", "--json"].map(OsString::from).to_vec();
    let commands = [
        herd.command_in(&work, "herd-launch", &args),
        herd.command_in(&work, "herd-launch", &args),
    ];
    let runs: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = commands
            .iter()
            .map(|cmd| scope.spawn(move || herd_e2e::cli::try_run(cmd)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let docs: Vec<ResurrectDoc> = runs
        .iter()
        .map(|out| {
            assert_eq!(out.code, 0, "{out}");
            out.doc()
        })
        .collect();
    let mut successors = Vec::new();
    for (id, session) in [&scout, &builder].iter().zip(&sessions) {
        let statuses: Vec<ResurrectStatus> = docs.iter().map(|d| entry(d, id).status).collect();
        let resumed: Vec<&ResurrectRun> = docs
            .iter()
            .map(|d| entry(d, id))
            .filter(|e| e.status == ResurrectStatus::Resumed)
            .collect();
        assert_eq!(resumed.len(), 1, "resumed once: {statuses:?} {docs:#?}");
        let other = docs
            .iter()
            .map(|d| entry(d, id))
            .find(|e| e.status != ResurrectStatus::Resumed)
            .unwrap();
        assert_eq!(other.status, ResurrectStatus::AlreadyResumed, "{docs:#?}");
        assert_eq!(other.successor, resumed[0].successor);
        let successor = resumed[0].successor.clone().unwrap();
        // The exact session file, and the record names the run it brings back.
        let record = herd.run_record(&successor);
        assert_eq!(&record.session_file, session, "{record:#?}");
        assert_eq!(
            record.extra.resurrects.as_deref(),
            Some(id.as_str()),
            "{record:#?}"
        );
        successors.push(successor);
    }
    assert_eq!(docs.iter().map(|d| d.resumed).sum::<u64>(), 2);
    // The worktree child runs in its retained worktree again.
    let builder_record = herd.run_record(&successors[1]);
    assert_eq!(Some(builder_record.cwd.as_str()), checkout.to_str());
    assert_eq!(
        builder_record.worktree.map(|w| w.path).as_deref(),
        checkout.to_str()
    );

    // Each result is delivered once, and each resumed Pi continued its own conversation.
    let events = herd.follow();
    for (successor, task) in successors.iter().zip([
        "Task of the scout: look around",
        "Task of the builder: build it",
    ]) {
        let results = results(&events, successor);
        assert_eq!(results.len(), 1, "{events:#?}");
        assert_eq!(results[0].outcome, Outcome::Completed, "{:#?}", results[0]);
        assert!(
            results[0].message.contains("RESUMED: picked up the task"),
            "{:#?}",
            results[0]
        );
        let requests = requests_of(&model, task);
        let resumed: Vec<&Value> = requests
            .iter()
            .filter(|r| {
                request::user_texts(r)
                    .iter()
                    .any(|t| t.contains("ended before it finished"))
            })
            .collect();
        assert!(!resumed.is_empty(), "{requests:#?}");
        // The first run's tool call is in the resumed conversation: the same session.
        assert!(
            resumed.iter().all(|r| request::assistant_count(r) >= 1),
            "{resumed:#?}"
        );
    }
    assert!(work.join("resumed-Scout.txt").exists());
    assert_eq!(
        std::fs::read_to_string(checkout.join("resumed-Builder.txt"))
            .unwrap()
            .trim(),
        checkout.to_str().unwrap()
    );
    let again = herd_e2e::herd::events(&herd.follow());
    assert!(
        !again.iter().any(|e| matches!(e, WatchEvent::Result { .. })),
        "{again:#?}"
    );

    // Run again, nothing is resumed twice.
    let (code, doc) = resurrect(&herd, &[]);
    assert_eq!(code, 0, "{doc:#?}");
    assert_eq!(doc.resumed, 0, "{doc:#?}");
    for id in [&scout, &builder] {
        assert_eq!(
            entry(&doc, id).status,
            ResurrectStatus::AlreadyResumed,
            "{doc:#?}"
        );
    }
}

#[test]
fn resurrect_lists_a_specialist_an_exec_child_and_a_run_without_its_policy_with_why() {
    let model = ModelServer::start(script());
    let env = PiEnv::new(&model);
    let herd = Herd::new(&env, Where::Tmux);
    let work = env.work_dir();
    let keeper = spawn(
        &herd,
        &work,
        json!({"name": "Keeper", "task": "Task of the keeper", "persistent": true,
               "model": Herd::model("fake-model")}),
    );
    let unbound = spawn(
        &herd,
        &work,
        json!({"name": "Unbound", "task": "Task of the unbound",
               "model": Herd::model("fake-model")}),
    );
    let request = env.root().join("exec-request.json");
    std::fs::write(
        &request,
        json!({"name": "Sleeper", "task": "sleep"}).to_string(),
    )
    .unwrap();
    let out = herd.run(
        "herd-launch",
        [
            OsString::from("spawn"),
            "--request".into(),
            request.into(),
            "--surface".into(),
            "tmux".into(),
            "--runner".into(),
            "exec".into(),
            "--json".into(),
            "--".into(),
            "sleep".into(),
            "120".into(),
        ],
    );
    assert!(out.success(), "{out}");
    let sleeper = out.doc::<LaunchAck>().run_id;
    wait_started(&[(&work, "Keeper"), (&work, "Unbound")]);
    herd.child_pid(&sleeper);

    kill_tmux(&herd);
    let events = herd.follow();
    for id in [&keeper, &unbound, &sleeper] {
        assert_eq!(results(&events, id).len(), 1, "{events:#?}");
    }
    // A child of an older launcher: no policy beside its session.
    let session = herd.run_record(&unbound).session_file;
    std::fs::remove_file(format!("{session}.pi-herdr-subagent-policy.json")).unwrap();

    let before = model.requests().len();
    let (code, doc) = resurrect(&herd, &[]);
    assert_eq!(code, 0, "{doc:#?}");
    assert_eq!(doc.resumed, 0, "{doc:#?}");
    let why = |id: &str| {
        let e = entry(&doc, id);
        assert_eq!(e.status, ResurrectStatus::Skipped, "{doc:#?}");
        (e.why, e.message.clone())
    };
    let (reason, message) = why(&keeper);
    assert_eq!(reason, Some(SkipReason::Persistent));
    assert!(message.contains("spawn a new one"), "{message}");
    assert_eq!(why(&sleeper).0, Some(SkipReason::NoSession));
    let (reason, message) = why(&unbound);
    assert_eq!(reason, Some(SkipReason::NoPolicy));
    assert!(message.contains("launch policy"), "{message}");
    // Nothing was started.
    assert_eq!(herd.run_ids().len(), 3);
    assert_eq!(model.requests().len(), before);
    // Bad input is refused with a usage error (exit 2) and a JSON error document.
    let refused = herd.run(
        "herd-launch",
        ["resurrect", "--surface", "nowhere", "--json"],
    );
    assert_eq!(refused.code, 2, "{refused}");
    assert_eq!(
        refused.doc::<ErrorDocument>().error.code,
        ErrorCode::InvalidRequest,
        "{refused}"
    );
    let human = herd.run("herd-launch", ["resurrect"]);
    assert!(
        human.stdout.contains("not resumed: Keeper"),
        "{}",
        human.stdout
    );
}

#[test]
fn after_a_herdr_restart_resurrect_resumes_a_lost_run_in_its_session() {
    let model = ModelServer::start(script());
    let env = PiEnv::new(&model);
    let Some(mut herd) = Herd::try_new(
        &env,
        Where::Herdr,
        "after_a_herdr_restart_resurrect_resumes_a_lost_run_in_its_session",
    ) else {
        return;
    };
    let work = env.work_dir();
    let scout = spawn(
        &herd,
        &work,
        json!({"name": "Scout", "task": "Task of the scout: look around",
               "model": Herd::model("fake-model")}),
    );
    wait_started(&[(&work, "Scout")]);
    let session = herd.run_record(&scout).session_file;
    herd.herdr_mut().unwrap().restart();
    let events = herd.follow();
    let lost = results(&events, &scout);
    assert_eq!(lost.len(), 1, "{events:#?}");
    assert_eq!(lost[0].outcome, Outcome::Failed, "{:#?}", lost[0]);

    let (code, doc) = resurrect(&herd, &[]);
    assert_eq!(code, 0, "{doc:#?}");
    let resumed = entry(&doc, &scout);
    assert_eq!(resumed.status, ResurrectStatus::Resumed, "{doc:#?}");
    assert_eq!(resumed.session_file.as_ref(), Some(&session));
    let successor = resumed.successor.clone().unwrap();
    let record = herd.run_record(&successor);
    assert_eq!(record.session_file, session);
    assert_eq!(record.surface, SurfaceKind::Herdr);

    let events = herd.follow();
    let results = results(&events, &successor);
    assert_eq!(results.len(), 1, "{events:#?}");
    assert_eq!(results[0].outcome, Outcome::Completed, "{:#?}", results[0]);
    assert!(work.join("resumed-Scout.txt").exists());
    let requests = requests_of(&model, "Task of the scout");
    assert!(
        requests.iter().any(|r| request::user_texts(r)
            .iter()
            .any(|t| t.contains("ended before it finished"))),
        "{requests:#?}"
    );
    let (_, doc) = resurrect(&herd, &[]);
    assert_eq!(
        entry(&doc, &scout).status,
        ResurrectStatus::AlreadyResumed,
        "{doc:#?}"
    );
}

/// The person's way back, from Pi: a real parent Pi whose child was lost with its tmux server is
/// told of the loss once; `/subagent resurrect` resumes the child in its own session, and the
/// resumed child's report reaches the parent once.
#[test]
fn a_parent_pi_brings_its_lost_child_back_with_subagent_resurrect() {
    use herd_e2e::model::Models;
    use herd_e2e::rpc::PiRpc;
    use herd_e2e::session;
    use herd_e2e::tmux::Tmux;

    let model = ModelServer::start_models(
        Models::new()
            .model(
                "parent",
                Script::new()
                    .step(ToolCall::new("tool_search", json!({"query": "subagent"})))
                    .step(ToolCall::new(
                        "subagent",
                        json!({"name": "Scout", "task": "Task of the scout: look around",
                               "model": PiEnv::model_arg("child")}),
                    ))
                    .step(Text("Launched; waiting."))
                    .step(Text("Noted."))
                    .step(Text("Noted."))
                    .step(Text("Noted."))
                    .step(Text("Noted.")),
            )
            .model("child", script()),
    );
    let env = PiEnv::new(&model);
    let tmux = Tmux::start(env.vars());
    let socket = tmux.socket_path();
    let session_file = env.session_path("parent");
    let mut parent = PiRpc::start_with(
        &env,
        &session_file,
        "parent",
        &[("HERD_TMUX_SOCKET", socket.as_os_str())],
        &["--herd-surface", "tmux"],
    );
    parent.prompt("Start a scout.");
    let work = env.work_dir();
    wait_started(&[(&work, "Scout")]);

    // The tmux server goes away with the child's pane; a new one knows nothing of it.
    let old = tmux.pid();
    let _ = tmux.try_cmd(["kill-server"]);
    wait_for("the tmux server to exit", BUDGET, || {
        (!herd_e2e::proc::process_alive(old)).then_some(())
    });
    tmux.cmd(["start-server"]);
    let results = || -> Vec<Value> {
        session::entries(&session_file)
            .into_iter()
            .filter(|e| e["type"] == "custom_message" && e["customType"] == "subagent_result")
            .collect()
    };
    let lost = wait_for("the loss told to the parent", BUDGET, || {
        let told = results();
        (!told.is_empty()).then_some(told)
    });
    assert_eq!(lost.len(), 1, "the loss is told once: {lost:#?}");
    assert!(lost[0].to_string().contains("failed"), "{lost:#?}");

    parent.prompt("/subagent resurrect");
    let notice = parent.wait_event("the resurrect notice", |e| {
        e["method"] == "notify"
            && e["message"]
                .as_str()
                .is_some_and(|m| m.contains("Scout") && m.contains("resumed"))
    });
    let text = notice["message"].as_str().unwrap();
    assert!(text.ends_with("1 resumed"), "{text}");

    // Resumed in its own session, from where it was: its next tool ran, and its report arrives
    // in the parent once.
    let resumed = work.join("resumed-Scout.txt");
    wait_for("the resumed scout's next tool", BUDGET, || {
        resumed.exists().then_some(())
    });
    let told = wait_for("the resumed scout's report in the parent", BUDGET, || {
        let told = results();
        (told.len() >= 2).then_some(told)
    });
    assert_eq!(told.len(), 2, "{told:#?}");
    let report = told[1].to_string();
    assert!(report.contains("RESUMED: picked up the task"), "{report}");
    let requests = requests_of(&model, "Task of the scout");
    assert!(
        requests.iter().any(|r| request::user_texts(r)
            .iter()
            .any(|t| t.contains("ended before it finished"))),
        "the resumed child was told its run was lost"
    );
    parent.close();
}
