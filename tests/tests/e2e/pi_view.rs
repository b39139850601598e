//! What the person at an interactive parent Pi sees in its terminal (docs/tools.md, "What the
//! parent sees"): a child's result on the message background, its report fenced in the expanded
//! view (`Ctrl+O`), and the widget's frame amber once every row is open. Read from the pane with
//! `capture-pane -e`.

#![expect(
    clippy::unwrap_used,
    reason = "scenario steps fail loudly on a broken fixture"
)]

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use herd_e2e::model::{ModelServer, Models, Script, Text, ToolCall};
use herd_e2e::pi::{PiEnv, pi_bin};
use herd_e2e::rpc::parent_extension;
use herd_e2e::session;
use herd_e2e::tmux::Tmux;
use herd_e2e::wait::try_wait_for;
use serde_json::json;

const BUDGET: Duration = Duration::from_secs(90);

/// A tmux server whose panes run with herd's binaries, and the pane of an interactive parent
/// Pi with herd's parent extension, its editor ready; its children start on `surface`
/// (`tmux`: this server).
fn parent_in_tmux(env: &PiEnv, session: &Path, surface: &str) -> (Tmux, String) {
    // Pi's dark theme, whose message background is a colour of its own (the default theme
    // follows the terminal's palette, which a detached pane does not report).
    let settings = env.agent_dir().join("settings.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    doc["theme"] = json!("dark");
    std::fs::write(&settings, doc.to_string()).unwrap();
    let mut vars: Vec<(OsString, OsString)> = env.vars().to_vec();
    vars.push(("HERD_BIN_DIR".into(), herd_e2e::herd::bin_dir().into()));
    vars.push(("HERD_PI".into(), pi_bin().into()));
    vars.push(("HERD_HANG_WARNING_SECS".into(), "0".into()));
    let tmux = Tmux::start(&vars);
    let pi = env
        .pi()
        .model("parent")
        .session(session)
        .arg("--no-skills")
        .arg("--no-context-files")
        .extension(&parent_extension())
        .arg("--herd-surface")
        .arg(surface);
    let mut argv: Vec<OsString> = vec!["env".into()];
    let mut socket = OsString::from("HERD_TMUX_SOCKET=");
    socket.push(tmux.socket_path());
    argv.push(socket);
    argv.extend(pi.argv());
    let pane = tmux.new_session("parent", pi.dir(), &argv);
    tmux.wait_for_text(&pane, "parent", BUDGET);
    (tmux, pane)
}

/// The pane's text with its colours (`capture-pane -e`).
fn colours(tmux: &Tmux, pane: &str) -> String {
    tmux.cmd(["capture-pane", "-p", "-e", "-J", "-t", pane])
}

/// `text` without its SGR sequences.
fn plain(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// For each line of `capture-pane -e` output, the background under its first glyph, if any.
/// tmux writes an attribute only where it changes, so the state carries across lines.
fn backgrounds(text: &str) -> Vec<Option<String>> {
    let mut bg: Option<String> = None;
    let mut out = Vec::new();
    for line in text.lines() {
        let mut under = None;
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\u{1b}' && chars.peek() == Some(&'[') {
                chars.next();
                let mut seq = String::new();
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        if d == 'm' {
                            sgr(&seq, &mut bg);
                        }
                        break;
                    }
                    seq.push(d);
                }
            } else if under.is_none() && !c.is_whitespace() {
                under = Some(bg.clone());
            }
        }
        out.push(under.flatten());
    }
    out
}

/// Applies the SGR parameters `seq` to the background `bg`.
fn sgr(seq: &str, bg: &mut Option<String>) {
    let params: Vec<&str> = seq.split(';').collect();
    let mut i = 0;
    while i < params.len() {
        match params[i] {
            "" | "0" | "49" => *bg = None,
            "48" => {
                let n = if params.get(i + 1) == Some(&"5") {
                    3
                } else {
                    5
                };
                *bg = Some(params[i..(i + n).min(params.len())].join(";"));
                i += n - 1;
            }
            "38" => {
                i += if params.get(i + 1) == Some(&"5") {
                    2
                } else {
                    4
                }
            }
            p if p.len() == 2 && p.starts_with('4') && p != "49" => *bg = Some(p.to_owned()),
            _ => {}
        }
        i += 1;
    }
}

/// Waits until the pane, read with its colours, satisfies `ok`.
fn wait_colours(tmux: &Tmux, pane: &str, what: &str, ok: impl Fn(&str) -> bool) -> String {
    try_wait_for(BUDGET, || {
        let text = colours(tmux, pane);
        ok(&text).then_some(text)
    })
    .unwrap_or_else(|| {
        panic!(
            "the pane never showed {what}; it shows:\n{}",
            tmux.capture(pane)
        )
    })
}

#[test]
fn ctrl_o_shows_the_childs_report_between_its_rules_on_the_message_background() {
    let model = ModelServer::start_models(
        Models::new()
            .model(
                "parent",
                Script::delegating(json!({
                    "name": "Scout", "task": "Report the answer",
                    "model": PiEnv::model_arg("child"),
                })),
            )
            .model(
                "child",
                Script::new().step(Text("REPORT: 42\nsecond line of the report")),
            ),
    );
    let env = PiEnv::new(&model);
    let session = env.session_path("parent");
    let (tmux, pane) = parent_in_tmux(&env, &session, "process");
    tmux.send_text(&pane, "Delegate to a scout.");
    tmux.send_keys(&pane, &["Enter"]);
    session::wait_for_answer(&session, "Integrated the report.", BUDGET);
    tmux.wait_for_text(&pane, "Integrated the report.", BUDGET);

    // Collapsed: herd's status line and how to expand, not the report.
    let collapsed = tmux.wait_for_text(&pane, "(child report, 2 lines)", BUDGET);
    assert!(
        collapsed.contains("Sub-agent \"Scout\" completed"),
        "{collapsed}"
    );
    assert!(!collapsed.contains("┌ Child report"), "{collapsed}");

    tmux.send_keys(&pane, &["C-o"]);
    let shown = wait_colours(&tmux, &pane, "the expanded report", |t| {
        plain(t).contains("└ end of child report")
    });
    let lines: Vec<&str> = shown.lines().collect();
    let open = lines
        .iter()
        .position(|l| plain(l).contains("┌ Child report from Scout (result)"))
        .unwrap_or_else(|| panic!("no opening rule:\n{}", plain(&shown)));
    let fenced: Vec<String> = lines[open..open + 4]
        .iter()
        .map(|l| plain(l).trim().to_owned())
        .collect();
    assert_eq!(
        fenced,
        [
            "┌ Child report from Scout (result)",
            "│ REPORT: 42",
            "│ second line of the report",
            "└ end of child report",
        ],
        "{}",
        plain(&shown)
    );
    // Each of them sits on the message's coloured background.
    let backgrounds = backgrounds(&shown);
    for (i, line) in lines.iter().enumerate().skip(open).take(4) {
        assert!(
            backgrounds[i].is_some(),
            "no background under {line:?}: {:#?}",
            &lines[open.saturating_sub(8)..]
        );
    }
    // The parent's own answer after it is not on that background.
    let answer = lines
        .iter()
        .position(|l| plain(l).contains("Integrated the report."))
        .unwrap();
    assert!(
        answer > open && backgrounds[answer].is_none(),
        "{:?}",
        lines[answer]
    );
    // Herd's host lines are outside the fence; the model's copy of the block is not shown.
    let text = plain(&shown);
    assert!(text.contains("Sub-agent \"Scout\" completed"), "{text}");
    assert!(!text.contains("<subagent_report"), "{text}");
}

#[test]
fn the_widget_frame_is_amber_once_every_row_is_open() {
    let model = ModelServer::start_models(
        Models::new()
            .model(
                "parent",
                Script::new()
                    .step(ToolCall::new("tool_search", json!({"query": "subagent"})))
                    .step(ToolCall::new(
                        "subagent",
                        json!({
                            "name": "Planner", "agent": "planner", "task": "Wait for me",
                            "model": PiEnv::model_arg("child"),
                        }),
                    ))
                    .step(Text("Launched; waiting.")),
            )
            .model("child", Script::new().step(Text("Ready when you are."))),
    );
    let env = PiEnv::new(&model);
    std::fs::create_dir_all(env.agent_dir().join("agents")).unwrap();
    std::fs::write(
        env.agent_dir().join("agents/planner.md"),
        "---\nauto-exit: false\n---\nPlan with the user.\n",
    )
    .unwrap();
    let session = env.session_path("parent");
    let (tmux, pane) = parent_in_tmux(&env, &session, "tmux");
    tmux.send_text(&pane, "Start a planner.");
    tmux.send_keys(&pane, &["Enter"]);
    // The child's turn settled and it stays open for more: its row is open, none is active.
    let shown = wait_colours(&tmux, &pane, "an amber widget with one open row", |t| {
        plain(t).contains("1 open ─╮") && t.contains("\u{1b}[38;5;214m╭")
    });
    let header = shown
        .lines()
        .find(|l| plain(l).contains("─ Subagents "))
        .unwrap();
    assert!(!header.contains("\u{1b}[38;5;33m"), "{header:?}");
    let row = shown
        .lines()
        .find(|l| plain(l).trim_start().starts_with("│") && plain(l).contains("Planner"))
        .unwrap_or_else(|| panic!("no row:\n{}", plain(&shown)));
    assert!(row.contains("\u{1b}[38;5;214m│"), "{row:?}");
}

/// herd's Pi package ships its operating skill under the seed's name: "`pi-herdr-agents` |
/// Operating guide for this host: launching, supervising, interrupting, cancelling and resuming
/// children, worktrees, persistent specialists, model routing and configuration". Once
/// installed, Pi offers it to the parent's model by that name and description, once, and its
/// file teaches naming, collecting and the configuration (`config.json`, `models.tasks`,
/// `/subagents-init`).
#[test]
fn the_installed_package_offers_the_pi_herdr_agents_operating_skill_to_the_parent_model() {
    let model = ModelServer::start(Script::new().step(Text("Noted.")));
    let env = PiEnv::new(&model);
    let package = parent_extension().parent().unwrap().to_path_buf();
    let mut install = env.command(pi_bin());
    install.arg("install").arg(&package);
    let installed = herd_e2e::proc::run(install, herd_e2e::pi::PI_BUDGET);
    assert!(installed.success(), "{installed}");
    let ran = env.pi().arg("--no-context-files").print("Hello.").run();
    assert!(ran.success(), "{ran}");
    let requests = model.requests();
    let prompt = requests[0].to_string();
    assert_eq!(
        prompt.matches("<name>pi-herdr-agents</name>").count(),
        1,
        "{prompt}"
    );
    assert!(
        prompt.contains(
            "Operating guide for this host: launching, supervising, interrupting, cancelling and \
             resuming children, worktrees, persistent specialists, model routing and configuration."
        ) && prompt.contains("skills/pi-herdr-agents/SKILL.md"),
        "{prompt}"
    );
    // One operating skill: no second entry under the old name.
    assert!(!prompt.contains("herd-subagents"), "{prompt}");
    let skill = std::fs::read_to_string(package.join("skills/pi-herdr-agents/SKILL.md")).unwrap();
    assert!(skill.contains("`<task>-<role>[-n]`"), "{skill}");
    assert!(
        skill.contains("| name | agent kind | role | model | worktree |"),
        "{skill}"
    );
    assert!(skill.contains("Do not poll"), "{skill}");
    for topic in [
        "## Supervising",
        "## Model routing",
        "## Configuration",
        "config.json",
        "models.tasks",
        "/subagents-init",
        "guidelines.launchRoster",
    ] {
        assert!(skill.contains(topic), "{topic}: {skill}");
    }
}
