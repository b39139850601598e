//! The Herdr surface against a real headless Herdr server, one per test
//! (`herd_e2e::herdr::HerdrServer`: its own home and socket, stopped at the end).
//!
//! Without a Herdr (`HERD_TEST_HERDR`) each test says on stderr that it did not run; in CI it
//! fails.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test on any error"
)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use herd_e2e::herdr::HerdrServer;
use herd_e2e::wait::wait_for;

use crate::support::{PATIENCE, soon};
use herd_protocol::layout::Artifacts;
use herd_surface::herdr::{Herdr, MIN_PANE_HEIGHT, MIN_PANE_WIDTH};
use herd_surface::{
    AgentStatus, Closed, Error, Key, Launch, Presence, Surface, Target, close_confirmed,
};

/// A test's server, the parent's workspace and pane in its directory, and a grouped surface
/// as herd-launch makes it from inside that pane.
struct Fixture {
    herdr: HerdrServer,
    dir: tempfile::TempDir,
    parent: String,
    vars: Vec<(OsString, OsString)>,
}

impl Fixture {
    fn start(test: &str) -> Option<Fixture> {
        let herdr = HerdrServer::start(test, &[])?;
        let dir = tempfile::tempdir().unwrap();
        let (_, parent) = herdr.workspace(&dir.path().canonicalize().unwrap());
        let vars = herdr.pane_vars(&parent);
        Some(Fixture {
            herdr,
            dir,
            parent,
            vars,
        })
    }

    fn env(&self, key: &str) -> Option<String> {
        self.vars
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.to_string_lossy().into_owned())
    }

    /// The surface herd-launch uses inside the parent's pane: children in its `Agents` tab.
    fn surface(&self) -> Herdr {
        let env = |key: &str| self.env(key);
        Herdr::from_env(&env).grouped(&Artifacts::new(self.dir.path().join("artifacts")))
    }

    fn cwd(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    /// Writes the launch script `<name>.sh`: the surface's prologue, then `body`.
    fn script(&self, name: &str, surface: &dyn Surface, body: &str) -> PathBuf {
        crate::support::script(&self.cwd(), name, surface, body)
    }

    /// Launches `body` as the child `name`; returns its target.
    fn launch(&self, surface: &Herdr, name: &str, body: &str) -> Target {
        let script = self.script(name, surface, body);
        let session = self.cwd().join(format!("{name}.jsonl"));
        let cwd = self.cwd();
        let launch = Launch {
            run_id: name,
            name,
            cwd: &cwd,
            script: &script,
            session_file: &session,
            into: None,
        };
        surface
            .launch(&launch, &herd_surface::LaunchBudgets::default())
            .unwrap_or_else(|err| panic!("launch {name}: {:?}", err.error()))
    }

    fn pane_id(target: &Target) -> String {
        target.pane().unwrap().pane_id.clone()
    }
}

/// Waits until `path` holds something; returns it.
fn read_eventually(path: &Path) -> String {
    wait_for(
        &format!("{} to be written", path.display()),
        PATIENCE,
        || std::fs::read_to_string(path).ok().filter(|t| !t.is_empty()),
    )
}

#[test]
fn herdr_children_run_in_usable_panes_of_the_agents_tab_and_are_what_their_pane_runs() {
    let Some(fx) = Fixture::start("herdr_children_run_in_usable_panes_of_the_agents_tab") else {
        return;
    };
    let herdr = fx.surface();
    let parent_tab = fx.herdr.pane(&fx.parent).unwrap()["tab_id"].clone();
    let mut targets = Vec::new();
    for n in 0..6 {
        let name = format!("child{n}");
        let body = format!("echo \"$PI_SUBAGENT_SURFACE\" > {name}.pane; exec sleep 60");
        targets.push(fx.launch(&herdr, &name, &body));
    }
    let mut tabs = Vec::new();
    for (n, target) in targets.iter().enumerate() {
        let pane = target.pane().unwrap();
        assert!(pane.owned);
        assert!(pane.terminal_id.is_some(), "{pane:?}");
        // The pane id the child sees is the one recorded.
        let seen = read_eventually(&fx.cwd().join(format!("child{n}.pane")));
        assert_eq!(seen.trim(), pane.pane_id);
        let info = fx.herdr.pane(&pane.pane_id).unwrap();
        assert_ne!(
            info["tab_id"], parent_tab,
            "a child never splits the parent's tab"
        );
        assert_eq!(info["tab_id"].as_str(), pane.tab_id.as_deref());
        assert_eq!(info["terminal_id"].as_str(), pane.terminal_id.as_deref());
        tabs.push(info["tab_id"].as_str().unwrap().to_owned());
        // The pane runs the child: the launch script, then what it execs.
        let running = wait_for("the child's process in its pane", PATIENCE, || {
            let info = fx
                .herdr
                .json(["pane", "process-info", "--pane", &pane.pane_id]);
            let argv: Vec<String> = info["process_info"]["foreground_processes"]
                .as_array()?
                .iter()
                .flat_map(|p| p["argv"].as_array().cloned().unwrap_or_default())
                .filter_map(|a| a.as_str().map(str::to_owned))
                .collect();
            (argv == ["sleep", "60"]).then_some(argv)
        });
        assert_eq!(running, ["sleep", "60"]);
    }
    // Every child's pane stays usable: a full tab gives the next child a tab of its own.
    for target in &targets {
        let pane = Fixture::pane_id(target);
        for (id, width, height) in fx.herdr.layout(&pane) {
            assert!(
                width >= MIN_PANE_WIDTH && height >= MIN_PANE_HEIGHT,
                "pane {id} of child pane {pane}'s tab is {width}x{height}"
            );
        }
    }
    let distinct: std::collections::BTreeSet<&String> = tabs.iter().collect();
    assert!(
        distinct.len() >= 2,
        "six children fill more than one tab: {tabs:?}"
    );
    // The listing shows every child, with its terminal.
    let listed = herdr.list(soon()).unwrap();
    for target in &targets {
        let pane = target.pane().unwrap();
        assert!(
            listed.iter().any(|row| row.pane_id == pane.pane_id
                && row.terminal_id == pane.terminal_id
                && row.presence == Presence::Running),
            "{listed:?}"
        );
    }
}

#[test]
fn herdr_pane_shows_output_takes_text_as_one_message_and_closes_confirmed() {
    let Some(fx) = Fixture::start("herdr_pane_shows_output_takes_text_as_one_message") else {
        return;
    };
    let herdr = fx.surface();
    let body = "echo hello-from-child; read -r line; printf '%s\\n' \"$line\" > answer.txt; \
                echo __SUBAGENT_DONE_3__; exit 3";
    let target = fx.launch(&herdr, "greeter", body);
    let pane = Fixture::pane_id(&target);
    fx.herdr.wait_for_text(&pane, "hello-from-child", PATIENCE);
    assert_eq!(herdr.presence(&target, soon()).unwrap(), Presence::Running);
    // Steering is literal text, then Enter: one line, quotes and semicolons included.
    herdr
        .send_keys(
            &target,
            &[
                Key::Text("check the parser; then 'the lexer'".into()),
                Key::Enter,
            ],
            soon(),
        )
        .unwrap();
    let answer = read_eventually(&fx.cwd().join("answer.txt"));
    assert_eq!(answer, "check the parser; then 'the lexer'\n");
    // The script ended; its shell keeps the pane, and the sentinel stays on the screen.
    let tail = wait_for("the sentinel", PATIENCE, || {
        let text = herdr.read_tail(&target, 50, soon()).unwrap();
        text.contains("__SUBAGENT_DONE_3__").then_some(text)
    });
    assert!(tail.contains("hello-from-child"), "{tail}");
    assert_eq!(herdr.presence(&target, soon()).unwrap(), Presence::Running);

    assert_eq!(close_confirmed(&herdr, &target, soon()), Closed::Confirmed);
    assert!(!fx.herdr.pane_exists(&pane));
    assert_eq!(herdr.presence(&target, soon()).unwrap(), Presence::Absent);
    assert!(matches!(
        herdr.close(&target, soon()),
        Err(Error::NotFound { .. })
    ));
    // The parent's own pane was never touched.
    assert!(fx.herdr.pane_exists(&fx.parent));
}

#[test]
fn herdr_agent_status_reported_in_the_pane_is_what_inspection_says() {
    let Some(fx) = Fixture::start("herdr_agent_status_reported_in_the_pane") else {
        return;
    };
    let herdr = fx.surface();
    let target = fx.launch(&herdr, "worker", "exec sleep 60");
    let pane = Fixture::pane_id(&target);
    assert_eq!(
        herdr.inspect(&target, soon()).unwrap().agent,
        Some(AgentStatus::Unknown)
    );
    // As a Pi child's Herdr integration reports it, from inside its pane.
    for (state, expected) in [
        ("working", AgentStatus::Working),
        ("blocked", AgentStatus::Blocked),
        // Headless, nothing is ever seen: a finished turn reads `done`.
        ("idle", AgentStatus::Done),
    ] {
        fx.herdr.ok([
            "pane",
            "report-agent",
            &pane,
            "--source",
            "custom:herd",
            "--agent",
            "herd-worker",
            "--state",
            state,
        ]);
        let seen = wait_for(
            &format!("inspection to say {expected:?}"),
            Duration::from_secs(10),
            || {
                let seen = herdr.inspect(&target, soon()).unwrap();
                (seen.agent == Some(expected)).then_some(seen)
            },
        );
        assert_eq!(seen.presence, Presence::Running);
        let listed = herdr.list(soon()).unwrap();
        let row = listed.iter().find(|row| row.pane_id == pane).unwrap();
        assert_eq!(row.agent, Some(expected));
    }
}

#[test]
fn herdr_a_restarted_servers_fresh_shell_in_the_same_pane_id_is_not_the_child() {
    let Some(mut fx) = Fixture::start("herdr_a_restarted_servers_fresh_shell") else {
        return;
    };
    let herdr = fx.surface();
    let target = fx.launch(&herdr, "sleeper", "exec sleep 120");
    let pane = target.pane().unwrap().clone();
    assert_eq!(herdr.presence(&target, soon()).unwrap(), Presence::Running);

    fx.herdr.stop();
    // Unreachable is not absent: nothing is known of the pane.
    let err = herdr.inspect(&target, soon()).unwrap_err();
    assert!(!matches!(err, Error::NotFound { .. }), "{err:?}");
    assert!(herdr.list(soon()).is_err());

    fx.herdr.restart();
    // Herdr restores the layout: the same pane id, a fresh shell with a new terminal.
    let again = fx
        .herdr
        .pane(&pane.pane_id)
        .expect("the pane id comes back");
    assert_ne!(
        again["terminal_id"].as_str(),
        pane.terminal_id.as_deref(),
        "{again}"
    );
    assert_eq!(herdr.presence(&target, soon()).unwrap(), Presence::Absent);
    let listed = herdr.list(soon()).unwrap();
    let row = listed
        .iter()
        .find(|row| row.pane_id == pane.pane_id)
        .unwrap();
    assert_ne!(row.terminal_id, pane.terminal_id);
    // A finished child's pane of a restarted server is not the child's to close either.
    assert!(!herdr.close_finished(&target, soon()).unwrap());
    assert!(fx.herdr.pane_exists(&pane.pane_id));
}

#[test]
fn herdr_that_does_not_answer_costs_one_budget_and_is_never_absent() {
    let Some(fx) = Fixture::start("herdr_that_does_not_answer_costs_one_budget") else {
        return;
    };
    let herdr = fx.surface();
    let target = fx.launch(&herdr, "sleeper", "exec sleep 120");
    fx.herdr.hang();
    let started = Instant::now();
    let err = herdr
        .inspect(&target, Instant::now() + Duration::from_secs(2))
        .unwrap_err();
    let took = started.elapsed();
    fx.herdr.resume();
    assert!(err.is_uncertain(), "{err:?}");
    assert!(took < Duration::from_secs(6), "took {took:?}");
    assert_eq!(herdr.presence(&target, soon()).unwrap(), Presence::Running);
}

#[test]
fn herdr_a_finished_childs_pane_closes_unless_the_user_is_in_it() {
    let Some(fx) = Fixture::start("herdr_a_finished_childs_pane_closes") else {
        return;
    };
    let herdr = fx.surface();
    let first = fx.launch(&herdr, "first", "echo __SUBAGENT_DONE_0__");
    let second = fx.launch(&herdr, "second", "echo __SUBAGENT_DONE_0__");
    for target in [&first, &second] {
        fx.herdr
            .wait_for_text(&Fixture::pane_id(target), "__SUBAGENT_DONE_0__", PATIENCE);
    }
    // The user goes into the Agents tab, where the first child's pane has the focus.
    let pane = Fixture::pane_id(&first);
    let info = fx.herdr.pane(&pane).unwrap();
    fx.herdr
        .json(["workspace", "focus", info["workspace_id"].as_str().unwrap()]);
    fx.herdr
        .json(["tab", "focus", info["tab_id"].as_str().unwrap()]);
    wait_for("the pane to be focused", Duration::from_secs(10), || {
        (fx.herdr.pane(&pane)?["focused"] == true).then_some(())
    });
    assert!(herdr.close_finished(&second, soon()).unwrap());
    assert!(!fx.herdr.pane_exists(&Fixture::pane_id(&second)));
    assert!(!herdr.close_finished(&first, soon()).unwrap());
    assert!(fx.herdr.pane_exists(&pane));
    assert!(fx.herdr.pane_exists(&fx.parent));
}
