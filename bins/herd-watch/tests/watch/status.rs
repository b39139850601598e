//! What `status` and the widget show of running and delivered children.

use std::time::Duration;

use herd_core::error::ErrorDocument;
use herd_e2e::proc::process_alive;
use herd_e2e::wait::{try_wait_for, wait_for};
use herd_protocol::watch::{Accent, Label, StatusRuns, StatusWidget, WatchEvent};

use crate::support::{Env, events, kill, redact, result_events, watch_bin};

#[test]
fn status_shows_the_activity_label_and_the_widget() {
    let env = Env::new();
    let id = env.spawn(
        "Reader",
        r#"mkdir -p "$(dirname "$PI_SUBAGENT_ACTIVITY_FILE")"; now=$(date +%s%3N); printf '{"version":1,"runningChildId":"%s","createdAt":%s,"updatedAt":%s,"sequence":1,"latestEvent":"tool_execution_start","phase":"active","agentActive":true,"turnActive":true,"providerActive":false,"toolActive":true,"activeScope":"tool","toolName":"read"}' "$PI_SUBAGENT_ID" "$now" "$now" > "$PI_SUBAGENT_ACTIVITY_FILE"; sleep 30"#,
    );
    let pid = env.identity_pid(&id);
    let mut last = None;
    let row = try_wait_for(Duration::from_secs(10), || {
        let row = env.status(&id).runs.remove(0);
        if row.detail.as_deref() == Some("read") {
            return Some(row);
        }
        last = Some(row);
        None
    })
    .or(last)
    .unwrap();
    assert_eq!(row.label, Label::Active, "{row:?}");
    assert_eq!(row.detail.as_deref(), Some("read"), "{row:?}");
    let (code, widget, text) = env.doc::<StatusWidget>(&["status", "--widget", "--json"]);
    assert_eq!(code, 0, "{text}");
    insta::assert_snapshot!("widget", redact(env.dir.path(), &widget.widget));
    assert_eq!(widget.accent, Accent::Blue, "{text}");
    let (code, _, text) = env.watch(&["status", "--run", &id]);
    assert_eq!(code, 0, "{text}");
    insta::assert_snapshot!("status", redact(env.dir.path(), &text));
    // Escape has no meaning without a terminal: a clear error, nothing sent.
    let (code, doc, text) = env.doc::<ErrorDocument>(&["interrupt", "--run", &id, "--json"]);
    assert_ne!(code, 0);
    assert!(doc.error.message.contains("process"), "{text}");
    kill(pid);
}

#[test]
fn no_progress_is_a_notice_never_a_kill() {
    let env = Env::new();
    let id = env.spawn(
        "Quiet",
        r#"mkdir -p "$(dirname "$PI_SUBAGENT_ACTIVITY_FILE")"; now=$(date +%s%3N); printf '{"version":1,"runningChildId":"%s","createdAt":%s,"updatedAt":%s,"sequence":1,"latestEvent":"tool_execution_start","phase":"active","agentActive":true,"turnActive":true,"providerActive":false,"toolActive":true,"activeScope":"tool","toolName":"bash"}' "$PI_SUBAGENT_ID" "$now" "$now" > "$PI_SUBAGENT_ACTIVITY_FILE"; sleep 30"#,
    );
    let pid = env.identity_pid(&id);
    let out = env.run(
        &watch_bin(),
        &["follow", "--json", "--forever"],
        &[("HERD_HANG_WARNING_SECS", "1")],
        Duration::from_secs(4),
    );
    let notices: Vec<String> = events(&out.stdout)
        .into_iter()
        .filter_map(|e| match e {
            WatchEvent::Notice { run_id, message } if run_id == id => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(notices.len(), 1, "one notice per episode: {notices:?}");
    assert!(notices[0].contains("no progress"), "{notices:?}");
    assert!(process_alive(pid), "the advisory never stops a child");
    kill(pid);
}

#[test]
fn the_widget_carries_its_accent_to_a_terminal_and_not_to_a_pipe() {
    let env = Env::tmux();
    let id = env.spawn("Painted", "sleep 30");
    let pid = env.identity_pid(&id);
    // Piped: plain text.
    let (_, _, text) = env.watch(&["status", "--widget"]);
    assert!(!text.contains('\u{1b}'), "{text}");
    insta::assert_snapshot!("piped_widget", redact(env.dir.path(), &text));
    // In a terminal (a tmux pane): the frame in the accent.
    let command = format!(
        "{} --artifacts {} status --widget; sleep 30",
        watch_bin().display(),
        env.art().display()
    );
    let out = env.tmux_cmd(&["new-window", "-d", "-P", "-F", "#{pane_id}", &command]);
    assert!(out.success(), "{}", out.stderr);
    let pane = out.stdout.trim().to_owned();
    let screen = wait_for("the painted widget", Duration::from_secs(20), || {
        let out = env.tmux_cmd(&["capture-pane", "-e", "-p", "-t", &pane]);
        let text = out.stdout.clone();
        text.contains("Subagents").then_some(text)
    });
    assert!(
        screen.contains("\u{1b}[38;5;214m") || screen.contains("\u{1b}[38;5;33m"),
        "{screen:?}"
    );
    kill(pid);
}

/// The ids of the open-run set of `env`, sorted.
fn open_set(env: &Env) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(env.art().join("runs").join("open"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| !name.starts_with('.'))
        .collect();
    ids.sort();
    ids
}

fn widget_runs(env: &Env) -> Vec<String> {
    let (code, widget, text) = env.doc::<StatusWidget>(&["status", "--widget", "--json"]);
    assert_eq!(code, 0, "{text}");
    widget.runs.into_iter().map(|r| r.run_id).collect()
}

#[test]
fn delivered_runs_leave_the_open_run_set_and_a_directory_without_one_is_indexed() {
    let env = Env::new();
    let done = env.spawn("Done", "echo finished");
    let open = env.spawn("Open", "sleep 30");
    let mut both = vec![done.clone(), open.clone()];
    both.sort();
    assert_eq!(open_set(&env), both, "a launch enters the set");
    let (code, _, text) = env.watch(&["wait", "--run", &done, "--json"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(
        open_set(&env),
        vec![open.clone()],
        "a delivered run leaves it"
    );
    assert_eq!(
        widget_runs(&env),
        vec![open.clone()],
        "the widget shows runs in flight"
    );
    let (_, all, _) = env.doc::<StatusRuns>(&["status", "--json"]);
    assert_eq!(all.runs.len(), 2, "the listing keeps history");

    // A name a finished run and an open one share is the open one's.
    let again = env.spawn("Done", "sleep 30");
    let (code, found, text) = env.doc::<StatusRuns>(&["status", "--name", "Done", "--json"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(found.runs[0].run_id, again);

    // An entry left by a program killed between the delivery and the removal: the next follow
    // removes it and delivers nothing twice.
    std::fs::write(env.art().join("runs").join("open").join(&done), "").unwrap();
    kill(env.identity_pid(&open));
    kill(env.identity_pid(&again));
    let out = env.run(
        &watch_bin(),
        &["follow", "--json"],
        &[],
        Duration::from_secs(60),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let stdout = out.stdout;
    assert_eq!(result_events(&stdout, &done), 0, "{stdout}");
    assert_eq!(result_events(&stdout, &open), 1, "{stdout}");
    assert_eq!(result_events(&stdout, &again), 1, "{stdout}");
    assert!(open_set(&env).is_empty(), "{:?}", open_set(&env));

    // A directory an older herd wrote has no set: the first reader builds it from the records.
    let later = env.spawn("Later", "sleep 30");
    std::fs::remove_dir_all(env.art().join("runs").join("open")).unwrap();
    assert_eq!(widget_runs(&env), vec![later.clone()]);
    assert_eq!(open_set(&env), vec![later.clone()]);
    kill(env.identity_pid(&later));
    let (_, result, text) = env.wait(&["wait", "--name", "Later", "--json"]);
    assert_eq!(result.run_id, later, "{text}");
    assert!(open_set(&env).is_empty());
}

/// A Pi that writes a two-message conversation with line breaks and quotes, and ends.
const TALKING_PI: &str = r#"#!/bin/sh
printf '%s\n' '{"type":"message","message":{"role":"user","content":[{"type":"text","text":"Count the files.\nOnly in \"src/\"."}]}}' > "$PI_SUBAGENT_SESSION"
printf '%s\n' '{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"There are 3:\n- a.rs\n- b.rs"}],"stopReason":"stop","provider":"prov","model":"m"}}' >> "$PI_SUBAGENT_SESSION"
printf '{"type":"done"}' > "$PI_SUBAGENT_SESSION.exit"
"#;

/// `status --transcript` reads as a transcript: a heading per speaker and the messages' own line
/// breaks and quotes, not one encoded line per message (which `--json` keeps).
#[test]
fn the_transcript_reads_as_a_conversation() {
    let mut env = Env::new();
    crate::support::with_fake_pi(&mut env);
    crate::support::write_script(&env.dir.path().join("fake-pi"), TALKING_PI);
    let id = env.spawn_request(
        serde_json::json!({"name": "Counter", "task": "count"}),
        &["--runner", "pi"],
    );
    let (code, _, text) = env.watch(&["wait", "--run", &id, "--json"]);
    assert_eq!(code, 0, "{text}");
    let out = env.run(
        &watch_bin(),
        &["status", "--run", &id, "--transcript"],
        &[],
        Duration::from_secs(30),
    );
    assert_eq!(out.code, 0, "{out:?}");
    insta::assert_snapshot!(out.stdout.trim_end(), @r#"
    ── user ──
    Count the files.
    Only in "src/".

    ── assistant ──
    There are 3:
    - a.rs
    - b.rs
    "#);
}

/// `status --all` from a second terminal, whose own artifacts directory has no runs, shows the
/// runs launched from every directory of the user's index, grouped by directory, and forgets a
/// directory that is gone.
#[test]
fn status_all_shows_every_artifacts_directory_of_the_user() {
    let state = tempfile::tempdir().unwrap();
    let with_state = |mut env: Env| {
        env.extra.push((
            "XDG_STATE_HOME".into(),
            state.path().to_string_lossy().into_owned(),
        ));
        env
    };
    let (one, two, shell) = (
        with_state(Env::new()),
        with_state(Env::new()),
        with_state(Env::new()),
    );
    let first = one.spawn("Builder", "sleep 60");
    let second = two.spawn("Scout", "echo done");
    let (code, _, text) = two.watch(&["wait", "--run", &second, "--json"]);
    assert_eq!(code, 0, "{text}");

    let (code, doc, text) = shell.doc::<StatusRuns>(&["status", "--all", "--json"]);
    assert_eq!(code, 0, "{text}");
    let dirs: Vec<(String, Option<String>)> = doc
        .runs
        .iter()
        .map(|r| (r.run_id.clone(), r.artifacts.clone()))
        .collect();
    let art = |env: &Env| Some(env.art().to_string_lossy().into_owned());
    assert_eq!(
        dirs,
        [(first.clone(), art(&one)), (second.clone(), art(&two))]
    );
    let out = shell.run(
        &watch_bin(),
        &["status", "--all"],
        &[],
        Duration::from_secs(30),
    );
    let text = out
        .stdout
        .replace(&one.art().to_string_lossy().into_owned(), "[ONE]");
    let text = text.replace(&two.art().to_string_lossy().into_owned(), "[TWO]");
    insta::assert_snapshot!(redact(shell.dir.path(), &text));

    // `usage --all` counts the runs of every directory, each row naming its own.
    let (code, usage, text) =
        shell.doc::<herd_protocol::usage::UsageReport>(&["usage", "--all", "--json"]);
    assert_eq!(code, 0, "{text}");
    let rows: Vec<(String, Option<String>)> = usage
        .runs
        .iter()
        .map(|r| (r.run_id.clone(), r.artifacts.clone()))
        .collect();
    assert_eq!(
        rows,
        [(first.clone(), art(&one)), (second.clone(), art(&two))]
    );

    let (code, _, text) = one.watch(&["cancel", "--run", &first, "--json"]);
    assert_eq!(code, 0, "{text}");
    drop(one);
    let (_, doc, text) = shell.doc::<StatusRuns>(&["status", "--all", "--json"]);
    assert_eq!(doc.runs.len(), 1, "{text}");
    assert_eq!(doc.runs[0].run_id, second);
}
