//! What a person (and the parent's model) reads of a worktree child on another machine: the
//! result message names the host and marks the host's paths as the host's, a listing on the host
//! suggests the `worktree_remove` call with its `host`, and that call, made by a real Pi parent,
//! removes the checkout there.

use herd_e2e::ssh::ALIAS;
use herd_protocol::cleanup::CleanupList;
use herd_protocol::result::Outcome;

use crate::remote::{BUDGET, Scene, git};

/// A repository with one commit on `main`, `src` under `dir`.
fn repository(dir: &std::path::Path) -> std::path::PathBuf {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).expect("the source directory");
    git(&src, &["init", "-q", "-b", "main"]);
    std::fs::write(src.join("README"), "base\n").expect("a file to commit");
    git(&src, &["add", "README"]);
    git(&src, &["commit", "-q", "-m", "base"]);
    src
}

#[test]
fn a_remote_worktree_result_and_listing_name_the_host_and_the_hosts_paths() {
    let scene = Scene::prepared();
    let src = repository(scene.dir.path());
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
    let results = herd_e2e::herd::results(&events, &id);
    assert_eq!(results.len(), 1, "{out}");
    assert_eq!(results[0].outcome, Outcome::Completed, "{:?}", results[0]);

    // The result says where the child ran, and each path it names is the host's.
    let message = &results[0].message;
    let lines: Vec<&str> = message.lines().collect();
    assert!(
        lines[0].starts_with("Sub-agent \"Fixer\" completed (")
            && lines[0].ends_with(") on devbox."),
        "{message}"
    );
    let home = scene.remote.remote_home().display().to_string();
    let worktree = lines
        .iter()
        .find_map(|l| l.strip_prefix("Worktree: "))
        .unwrap_or_else(|| panic!("a Worktree line: {message}"));
    assert!(
        worktree.starts_with(&format!("{ALIAS}:{home}/.herdr/worktrees/")),
        "{message}"
    );
    let output = lines
        .iter()
        .find(|l| l.starts_with("Output: "))
        .unwrap_or_else(|| panic!("an Output line: {message}"));
    assert_eq!(
        output.matches(&format!("{ALIAS}:{home}/")).count(),
        2,
        "{message}"
    );
    // No line names a path of the host as if it were this machine's.
    assert!(
        !lines
            .iter()
            .any(|l| l.contains(&format!(" {home}/")) || l.contains(&format!(": {home}"))),
        "{message}"
    );
    // The structured details name the host too; their paths stay raw.
    let result_file = scene.art().join(format!("runs/{id}.result.json"));
    let result = herd_e2e::herd::read_json(&result_file).expect("the settled result");
    assert_eq!(result["details"]["host"], ALIAS, "{result:#}");

    // The listing on the host suggests the command and the tool call that remove it there.
    let path = worktree.strip_prefix(&format!("{ALIAS}:")).unwrap();
    let out = scene.herd("herd-cleanup", &["list", "--host", ALIAS], None);
    assert_eq!(out.code, 0, "{out}");
    assert!(
        out.stdout.contains(&format!(
            "  remove with: herd-cleanup remove --host {ALIAS} '{path}'\n"
        )),
        "{out}"
    );
    assert!(
        out.stdout.contains(&format!(
            "  or, as a tool call: worktree_remove({{ target: \"{path}\", host: \"{ALIAS}\" }})"
        )),
        "{out}"
    );
    let out = scene.herd("herd-cleanup", &["list", "--host", ALIAS, "--json"], None);
    let doc: CleanupList = out.doc();
    let listed = doc
        .worktrees
        .iter()
        .find(|e| e.entry.path == path)
        .unwrap_or_else(|| panic!("{path} is listed: {out}"));
    assert_eq!(
        listed.remove_command.as_deref(),
        Some(format!("worktree_remove({{ target: \"{path}\", host: \"{ALIAS}\" }})").as_str()),
        "{out}"
    );
}

/// The user's path: a real parent Pi whose model delegates a worktree child to the host, reads
/// its result (on the host, with the host's paths), and calls `worktree_remove` with `host`; the
/// host's herd removes the checkout there.
#[test]
fn a_pi_parent_removes_a_worktree_on_the_host_with_the_tools_host() {
    use herd_e2e::model::{ModelServer, Models, Script, Text, ToolCall};
    use herd_e2e::pi::PiEnv;
    let work = tempfile::tempdir().expect("a temporary directory");
    let src = repository(work.path());
    let parent_script = Script::delegating(serde_json::json!({
        "name": "Builder",
        "task": "Build it there",
        "host": ALIAS,
        "model": PiEnv::model_arg("child"),
        "worktree": {"branch": "fix/tool"},
        "cwd": src.display().to_string(),
    }));
    // After the report: load the tool, remove the checkout on the host, and say so.
    let mut steps = parent_script.steps().to_vec();
    steps.pop();
    let mut parent_script = Script::new();
    for step in steps {
        parent_script = parent_script.step(step);
    }
    let parent_script = parent_script
        .step(ToolCall::new(
            "tool_search",
            serde_json::json!({"query": "worktree_remove"}),
        ))
        .step(ToolCall::new(
            "worktree_remove",
            serde_json::json!({"target": "fix/tool", "host": ALIAS}),
        ))
        .step(Text("Removed it there."));
    let model = ModelServer::start_models(
        Models::new()
            .model("parent", parent_script)
            .model("child", Script::new().step(Text("REMOTE REPORT: built"))),
    );
    let (_pi_env, scene, session, mut parent) = crate::remote::pi_parent_with_a_host(&model);
    parent.prompt("Build it on the devbox in a worktree, then remove the worktree.");
    herd_e2e::session::wait_for_answer(&session, "Removed it there.", BUDGET);

    // The result the model read names the host and the host's checkout.
    let found = herd_e2e::session::custom_entries(&session, "subagent_result");
    assert_eq!(found.len(), 1, "{found:#?}");
    let content = found[0]["content"].as_str().unwrap();
    assert!(content.contains(") on devbox.\n"), "{content}");
    let home = scene.remote.remote_home().display().to_string();
    let checkout = content
        .lines()
        .find_map(|l| l.strip_prefix(&format!("Worktree: {ALIAS}:")))
        .unwrap_or_else(|| panic!("the host's checkout: {content}"));
    assert!(checkout.starts_with(&home), "{content}");

    // The tool's answer is the host's removal, and the checkout is gone there.
    let messages = herd_e2e::session::messages(&session);
    let answer = messages
        .iter()
        .find(|m| m["role"] == "toolResult" && m["toolName"] == "worktree_remove")
        .unwrap_or_else(|| panic!("a worktree_remove result: {messages:#?}"));
    let text = herd_e2e::session::text(answer);
    assert!(text.contains(&format!("on {ALIAS}:")), "{text}");
    assert!(text.contains("removed "), "{text}");
    assert!(!scene.remote.local_path(checkout).exists(), "{text}");
    assert!(parent.close().success());
}

/// `herd-watch status --transcript` of a run on another machine reads the transcript on its host
/// and shows it as a local one: real line breaks, nothing raw for the terminal, bounded.
#[test]
fn a_remote_runs_transcript_is_read_from_its_host() {
    let scene = Scene::prepared();
    let script =
        "cat >/dev/null; printf 'first line\\n\"quoted\" and\\ttab\\n\\033]0;owned\\007done\\n'";
    let request = serde_json::json!({"name": "Reader", "task": "read it"});
    let id = Scene::launched(&scene.spawn(&request, script)).run_id;
    let (out, events) = scene.follow_all();
    let results = herd_e2e::herd::results(&events, &id);
    assert_eq!(results.len(), 1, "{out}");
    assert_eq!(results[0].outcome, Outcome::Completed, "{:?}", results[0]);

    let out = scene.herd(
        "herd-watch",
        &["status", "--run", &id, "--transcript"],
        None,
    );
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(
        out.stdout,
        "Transcript of \"Reader\" on devbox:\nfirst line\n\"quoted\" and\ttab\n\
         \\u{1b}]0;owned\\u{7}done\n__SUBAGENT_DONE_0__\n",
        "{out}"
    );
    let out = scene.herd(
        "herd-watch",
        &["status", "--run", &id, "--transcript", "--lines", "2"],
        None,
    );
    assert_eq!(
        out.stdout,
        "Transcript of \"Reader\" on devbox:\n\\u{1b}]0;owned\\u{7}done\n__SUBAGENT_DONE_0__\n",
        "{out}"
    );
    let out = scene.herd(
        "herd-watch",
        &["status", "--run", &id, "--transcript", "--json"],
        None,
    );
    let doc: herd_protocol::watch::StatusTranscript = out.doc();
    assert_eq!(doc.run_id, id);
    assert_eq!(
        doc.lines,
        [
            "first line",
            r#"\"quoted\" and\ttab"#,
            r"\u001b]0;owned\u0007done",
            "__SUBAGENT_DONE_0__"
        ]
    );
}

/// A worktree child on a host whose repository has setup: what is not done there is said in the
/// acknowledgement, not skipped silently.
#[test]
fn a_remote_worktree_says_what_setup_it_skipped() {
    let scene = Scene::prepared();
    let src = repository(scene.dir.path());
    std::fs::write(src.join(".gitignore"), ".env\n").unwrap();
    std::fs::create_dir_all(src.join(".herd")).unwrap();
    std::fs::write(
        src.join(".herd/worktree.toml"),
        "copy = [\".env\"]\nsetup = [\"echo ran > setup-out.txt\"]\n",
    )
    .unwrap();
    git(&src, &["add", ".gitignore", ".herd/worktree.toml"]);
    git(&src, &["commit", "-q", "-m", "setup"]);
    std::fs::write(src.join(".env"), "SECRET=here\n").unwrap();
    let request = serde_json::json!({
        "name": "Fixer",
        "task": "fix it",
        "cwd": src.display().to_string(),
        "worktree": {"branch": "fix/setup"},
    });
    let out = scene.spawn(&request, "cat >/dev/null; echo \"port=$HERD_PORT\"");
    let ack = Scene::launched(&out);
    let said = "skipped the worktree setup of .herd/worktree.toml on devbox: a worktree on \
                another machine gets no setup commands, links, copied ignored files or HERD_PORT \
                there";
    assert_eq!(ack.diagnostics, [said], "{out}");
    assert_eq!(scene.record(&ack.run_id).diagnostics, [said]);
}
