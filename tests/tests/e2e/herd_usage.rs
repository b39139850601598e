//! What each child cost: a lead that launches a helper of its own ends with `details.usage` and a
//! `Usage:` line that roll the helper's session into its own, the outcome ledger keeps the same
//! figures, a child on a model without a price says its cost is unknown, and
//! `herd-watch usage --json` totals the directory by model and by run. Every figure is checked
//! against the numbers Pi recorded in the sessions themselves.

#![expect(
    clippy::unwrap_used,
    reason = "scenario steps fail loudly on a broken fixture"
)]

use std::path::Path;

use herd_e2e::herd::{Herd, Where, decode, read_json};
use herd_e2e::model::{ModelServer, Models, Script, Text, ToolCall, Usage};
use herd_e2e::pi::PiEnv;
use herd_e2e::session;
use herd_protocol::launch::LaunchAck;
use herd_protocol::result::LedgerLine;
use herd_protocol::usage::{Figures, UsageReport};
use herd_protocol::watch::StatusRuns;
use serde_json::json;

/// The sums of the `usage` Pi recorded on the assistant messages of `session`: input, output,
/// cache read, cache write, total tokens, cost (None when a message used tokens at no recorded
/// cost), and how many messages.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Sums {
    input: u64,
    output: u64,
    cache_read: u64,
    cache_write: u64,
    total: u64,
    cost: Option<f64>,
    messages: u64,
}

impl Sums {
    fn of(session: &Path) -> Sums {
        let mut sums = Sums {
            input: 0,
            output: 0,
            cache_read: 0,
            cache_write: 0,
            total: 0,
            cost: Some(0.0),
            messages: 0,
        };
        for message in session::messages(session) {
            if message["role"] != "assistant" {
                continue;
            }
            let usage = &message["usage"];
            let n = |key: &str| usage[key].as_u64().unwrap();
            sums.input += n("input");
            sums.output += n("output");
            sums.cache_read += n("cacheRead");
            sums.cache_write += n("cacheWrite");
            sums.total += n("totalTokens");
            sums.messages += 1;
            let cost = usage["cost"]["total"].as_f64().unwrap();
            sums.cost = match sums.cost {
                Some(sum) if cost > 0.0 => Some(sum + cost),
                _ => None,
            };
        }
        assert!(
            sums.messages > 0,
            "{} has assistant messages",
            session.display()
        );
        sums
    }

    fn plus(self, other: Sums) -> Sums {
        Sums {
            input: self.input + other.input,
            output: self.output + other.output,
            cache_read: self.cache_read + other.cache_read,
            cache_write: self.cache_write + other.cache_write,
            total: self.total + other.total,
            cost: self.cost.zip(other.cost).map(|(a, b)| a + b),
            messages: self.messages + other.messages,
        }
    }

    /// Asserts that `figures` (herd's usage) are these sums.
    fn check(&self, figures: &Figures, what: &str) {
        assert_eq!(
            (
                figures.input,
                figures.output,
                figures.cache_read,
                figures.cache_write,
                figures.total_tokens,
                figures.messages
            ),
            (
                Some(self.input),
                Some(self.output),
                Some(self.cache_read),
                Some(self.cache_write),
                Some(self.total),
                self.messages
            ),
            "{what}: {figures:#?}"
        );
        match self.cost {
            Some(cost) => {
                let got = figures.cost.map_or(f64::NAN, |c| c.0);
                assert!((got - cost).abs() < 1e-9, "{what}: cost {got} for {cost}");
            }
            None => assert!(figures.cost.is_none(), "{what}: unknown cost: {figures:#?}"),
        }
    }
}

fn tokens(n: u64) -> String {
    #[expect(clippy::cast_precision_loss, reason = "test token counts are small")]
    let k = n as f64 / 1_000.0;
    if n < 1_000 {
        n.to_string()
    } else {
        format!("{k:.1}k")
    }
}

#[test]
fn on_process_a_run_s_usage_rolls_up_its_nested_child_and_the_directory_totals_it() {
    a_run_s_usage_rolls_up_its_nested_child_and_the_directory_totals_it(
        Where::Process,
        "on_process_a_run_s_usage_rolls_up_its_nested_child_and_the_directory_totals_it",
    );
}

#[test]
fn on_tmux_a_run_s_usage_rolls_up_its_nested_child_and_the_directory_totals_it() {
    a_run_s_usage_rolls_up_its_nested_child_and_the_directory_totals_it(
        Where::Tmux,
        "on_tmux_a_run_s_usage_rolls_up_its_nested_child_and_the_directory_totals_it",
    );
}

#[test]
fn on_herdr_a_run_s_usage_rolls_up_its_nested_child_and_the_directory_totals_it() {
    a_run_s_usage_rolls_up_its_nested_child_and_the_directory_totals_it(
        Where::Herdr,
        "on_herdr_a_run_s_usage_rolls_up_its_nested_child_and_the_directory_totals_it",
    );
}

/// The lead runs on `place` (an interactive Pi in a pane on tmux and Herdr, `pi -p` on the
/// process surface); its helper, launched from its own shell, on the process surface.
fn a_run_s_usage_rolls_up_its_nested_child_and_the_directory_totals_it(place: Where, test: &str) {
    let env_root = tempfile::Builder::new()
        .prefix("herd-e2e-usage-")
        .tempdir()
        .unwrap();
    let helper_request = env_root.path().join("helper.json");
    std::fs::write(
        &helper_request,
        json!({"name": "Helper", "task": "Find the answer", "model": Herd::model("helper")})
            .to_string(),
    )
    .unwrap();
    let launch = format!(
        "\"$HERD_BIN_DIR/herd-launch\" spawn --request {} --surface process --json > launched.json",
        helper_request.display()
    );
    let model = ModelServer::start_models(
        Models::new()
            .model(
                "lead",
                Script::new()
                    .step(ToolCall::bash(launch))
                    .step(Text("LEAD: waiting for the helper"))
                    .step(Text("LEAD REPORT: the helper found 42")),
            )
            .model("helper", Script::new().step(Text("HELPER REPORT: 42")))
            .model("scout", Script::new().step(Text("SCOUT REPORT: nothing")))
            // Dollars per million tokens, as Pi's models.json gives them.
            .priced(
                "lead",
                json!({"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}),
            )
            .priced(
                "helper",
                json!({"input": 1.0, "output": 2.0, "cacheRead": 0.1, "cacheWrite": 1.0}),
            )
            .reporting(
                "lead",
                Usage {
                    prompt: 40_000,
                    completion: 1_000,
                    cached: 12_000,
                },
            )
            .reporting(
                "helper",
                Usage {
                    prompt: 2_000,
                    completion: 100,
                    cached: 0,
                },
            ),
    );
    let env = PiEnv::new(&model);
    let Some(herd) = Herd::try_new(&env, place, test) else {
        return;
    };
    let lead = herd
        .launch(&json!({
            "name": "Lead", "task": "Delegate the question", "model": Herd::model("lead"),
        }))
        .run_id;
    let (code, result) = herd.wait_result(&lead);
    assert_eq!(code, 0, "{result:#?}");
    let helper =
        decode::<LaunchAck>(&read_json(&env.work_dir().join("launched.json")).unwrap()).run_id;
    let session_of = |run: &str| herd.run_record(run).session_file;
    let lead_own = Sums::of(session_of(&lead).as_ref());
    let helper_own = Sums::of(session_of(&helper).as_ref());
    let rolled = lead_own.plus(helper_own);
    // What the scripted models reported reached the sessions as Pi counts it.
    assert_eq!((lead_own.cache_read, lead_own.messages), (36_000, 3));

    // The lead's result: its session and its helper's, rolled up.
    let usage = result.details.usage.as_ref().expect("details.usage");
    rolled.check(&usage.tally.total, "the lead's details.usage");
    lead_own.check(
        usage.own.as_ref().expect("the own part"),
        "the lead's own part",
    );
    assert_eq!(usage.nested.len(), 1, "{usage:#?}");
    assert_eq!(usage.nested[0].run_id, helper, "{usage:#?}");
    // The lead's helper was found in its list of children, not by a search of the directory.
    let art = herd_protocol::layout::Artifacts::new(herd.artifacts());
    assert!(herd.run_record(&lead).extra.links_children);
    let listed = std::fs::read_to_string(art.children(&lead)).expect("the lead's children");
    assert_eq!(listed.lines().collect::<Vec<_>>(), [helper.as_str()]);
    helper_own.check(&usage.nested[0].figures, "the helper's part");
    let models: Vec<&str> = usage
        .tally
        .models
        .iter()
        .map(|m| m.model.as_str())
        .collect();
    assert_eq!(models, ["fake/lead", "fake/helper"]);
    let line = format!(
        "Usage: {} in · {} out · {} cached · ${:.3} (fake/lead, fake/helper) · with 1 nested run",
        tokens(rolled.input),
        tokens(rolled.output),
        tokens(rolled.cache_read),
        rolled.cost.unwrap()
    );
    assert_eq!(
        line,
        "Usage: 86.0k in · 3.1k out · 36.0k cached · $0.310 (fake/lead, fake/helper) · with 1 nested run"
    );
    let message = &result.message;
    assert!(
        message.lines().any(|l| l == line),
        "the host line {line:?} in:\n{message}"
    );
    // The helper's own result counts its own session.
    let (_, helper_result) = herd.wait_result(&helper);
    helper_own.check(
        &helper_result
            .details
            .usage
            .expect("details.usage")
            .tally
            .total,
        "the helper's details.usage",
    );

    // A child on a model without a price: its tokens, and a cost that is unknown, never $0.
    let scout = herd
        .launch(&json!({
            "name": "Scout", "task": "Look around", "model": Herd::model("scout"),
        }))
        .run_id;
    let (code, scout_result) = herd.wait_result(&scout);
    assert_eq!(code, 0, "{scout_result:#?}");
    let scout_own = Sums::of(session_of(&scout).as_ref());
    assert_eq!(
        scout_own.cost, None,
        "Pi records a zero cost for an unpriced model"
    );
    scout_own.check(
        &scout_result
            .details
            .usage
            .expect("details.usage")
            .tally
            .total,
        "the scout's details.usage",
    );
    let scout_message = &scout_result.message;
    assert!(
        scout_message.contains(&format!(
            "Usage: {} in · {} out · 0 cached · cost unknown (fake/scout)",
            scout_own.input, scout_own.output
        )),
        "{scout_message}"
    );
    assert!(!scout_message.contains("$0.000"), "{scout_message}");

    // `herd-watch status --json`: each row with its run's figures, the lead's rolled up.
    let out = herd.run("herd-watch", ["status", "--json"]);
    assert!(out.success(), "{out}");
    let status: StatusRuns = out.doc();
    let status_usage = |run: &str| {
        status
            .runs
            .iter()
            .find(|r| r.run_id == run)
            .unwrap_or_else(|| panic!("{run} in {status:#?}"))
            .usage
            .unwrap_or_else(|| panic!("the usage of {run} in {status:#?}"))
    };
    rolled.check(&status_usage(&lead), "the lead's status row");
    scout_own.check(&status_usage(&scout), "the scout's status row");

    // The outcome ledger keeps each run's rolled-up figures.
    let ledger: Vec<LedgerLine> = herd.ledger().iter().map(decode).collect();
    let ledger_usage = |run: &str| {
        ledger
            .iter()
            .find(|l| l.run_id == run)
            .unwrap_or_else(|| panic!("a ledger line for {run}: {ledger:#?}"))
            .usage
            .unwrap_or_else(|| panic!("the usage of {run}'s ledger line: {ledger:#?}"))
    };
    rolled.check(&ledger_usage(&lead), "the lead's ledger line");
    scout_own.check(&ledger_usage(&scout), "the scout's ledger line");

    // `herd-watch usage --json`: every run's own session once, by model and by run.
    let out = herd.run("herd-watch", ["usage", "--json"]);
    assert!(out.success(), "{out}");
    let report: UsageReport = out.doc();
    rolled
        .plus(scout_own)
        .check(&report.total, "the directory's total");
    let by_model = |id: &str| {
        report
            .by_model
            .iter()
            .find(|m| m.model == id)
            .unwrap_or_else(|| panic!("{id} in {report:#?}"))
            .figures
    };
    lead_own.check(&by_model("fake/lead"), "fake/lead");
    helper_own.check(&by_model("fake/helper"), "fake/helper");
    scout_own.check(&by_model("fake/scout"), "fake/scout");
    let row = |run: &str| {
        report
            .runs
            .iter()
            .find(|r| r.run_id == run)
            .unwrap_or_else(|| panic!("{run} in {report:#?}"))
    };
    lead_own.check(&row(&lead).own.total, "the lead's row");
    rolled.check(&row(&lead).rolled_up, "the lead's row, rolled up");
    assert_eq!(row(&helper).parent_run_id.as_deref(), Some(lead.as_str()));
    helper_own.check(&row(&helper).own.total, "the helper's row");
    // Read again, nothing is counted twice.
    let again: UsageReport = herd.run("herd-watch", ["usage", "--json"]).doc();
    assert_eq!(again.total, report.total);
    // --since leaves out the runs created before it.
    let later = herd_core::time::now_ms() + 60_000;
    let none: UsageReport = herd
        .run(
            "herd-watch",
            ["usage", "--json", "--since", &later.to_string()],
        )
        .doc();
    assert!(none.runs.is_empty(), "{none:#?}");
    assert_eq!(none.total.messages, 0, "{none:#?}");
}
