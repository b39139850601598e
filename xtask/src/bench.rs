//! `cargo xtask bench`: every benchmark of the issues in one table, herd against its baseline
//! measured in the same run.
//!
//! These machines are noisy and shared, so no figure stands alone: each row times herd and the
//! plain tool doing the same work, interleaved round by round, and reports both medians and
//! their ratio beside the goal. A component that cannot be measured (its binary does not build,
//! its command is not implemented yet, a baseline tool is missing) gets a row saying
//! "not measured" and why, never a figure.
//!
//! Everything is timed in release: a debug build of this task re-executes itself with
//! `cargo run --release`, and the binaries it times are built with `cargo build --release`
//! first (or taken from `--bin-dir`). The measurements themselves live in `bench_*.rs`, one file
//! per binary; this file holds the options, the rows, the table and the shared helpers.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use herd_cli::Output;
use herd_core::subprocess::{self, Command, Keep};
use herd_core::{Error, ErrorCode};
use serde_json::{Value, json};

use crate::{
    bench_accept, bench_cleanup, bench_launch, bench_watch, bench_worktree, cargo, workspace_root,
};

/// The version of the `--json` document.
const FORMAT_VERSION: u64 = 1;

/// How long one release build may take.
const BUILD_BUDGET: Duration = Duration::from_secs(30 * 60);

/// Measure herd against its baselines and print one table (see docs/performance.md).
#[derive(Debug, Parser)]
#[command(name = "cargo xtask bench")]
pub struct Cli {
    /// Fewer rounds and smaller sizes: a smoke test of the harness, not figures to quote.
    #[arg(long)]
    pub quick: bool,
    /// Rounds per comparison, the medians' sample size [default: 7, with --quick 3].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub rounds: Option<u32>,
    /// Only these components or rows (repeatable), e.g. `watch` or `watch.status_history`
    /// [default: all].
    #[arg(long, value_name = "COMPONENT|ROW", value_parser = parse_only)]
    pub only: Vec<Only>,
    /// Time the binaries in DIR instead of building them with `cargo build --release`.
    #[arg(long, value_name = "DIR")]
    pub bin_dir: Option<PathBuf>,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Set by the release re-execution, so it never happens twice.
    #[arg(long, hide = true)]
    pub released: bool,
    /// Internal: the stat-polling baseline of the herd-watch row, run as its own process.
    #[arg(long, hide = true, value_name = "ARTIFACTS", requires = "poll_secs")]
    pub poll_baseline: Option<PathBuf>,
    #[arg(long, hide = true, value_name = "SECS")]
    pub poll_secs: Option<u64>,
}

/// Every row id, in the order of the table.
pub const ROW_IDS: [&str; 33] = [
    "accept.check",
    "accept.reap",
    "worktree.inspect",
    "worktree.create",
    "worktree.setup_hardlink",
    "worktree.setup_copy",
    "worktree.setup_remove",
    "cleanup.holders",
    "cleanup.ignored_time",
    "cleanup.ignored_rss",
    "cleanup.list_small",
    "cleanup.list_large",
    "cleanup.remove",
    "launch.process",
    "launch.sandboxed",
    "launch.sandboxed_run",
    "launch.tmux",
    crate::bench_start::ROWS[0],
    crate::bench_start::ROWS[1],
    crate::bench_start::ROWS[2],
    crate::bench_start::ROWS[3],
    crate::bench_start::ROWS[4],
    crate::bench_start::ROWS[5],
    crate::bench_sandbox::ROWS[0],
    crate::bench_sandbox::ROWS[1],
    "watch.idle_cpu",
    "watch.result_latency",
    crate::bench_history::STATUS_ID,
    crate::bench_history::WAIT_ID,
    crate::bench_remote::ROWS[0],
    crate::bench_remote::ROWS[1],
    crate::bench_remote::ROWS[2],
    crate::bench_remote::ROWS[3],
];

/// What `--only` names: a whole component or one row of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Only {
    Component(Component),
    Row(Component, String),
}

fn parse_only(value: &str) -> Result<Only, String> {
    let component = |name: &str| {
        Component::from_str(name, false).map_err(|_| {
            format!(
                "`{value}` is neither a component (accept, worktree, cleanup, launch, watch, remote) nor a row"
            )
        })
    };
    match value.split_once('.') {
        None => component(value).map(Only::Component),
        Some((prefix, _)) => {
            if !ROW_IDS.contains(&value) {
                return Err(format!(
                    "no row `{value}`; the rows are {}",
                    ROW_IDS.join(", ")
                ));
            }
            Ok(Only::Row(component(prefix)?, value.to_owned()))
        }
    }
}

/// A binary with benchmarks, by the name its row starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
pub enum Component {
    Accept,
    Worktree,
    Cleanup,
    Launch,
    Watch,
    Remote,
}

impl Component {
    /// In the order of the table.
    const ALL: [Component; 6] = [
        Component::Accept,
        Component::Worktree,
        Component::Cleanup,
        Component::Launch,
        Component::Watch,
        Component::Remote,
    ];

    /// The release binaries the component's rows time.
    fn binaries(self) -> &'static [&'static str] {
        match self {
            Component::Accept => &["herd-accept"],
            // The holder and ignored-file measurements call the library in this process; the
            // inventory and removal time the binary.
            Component::Cleanup => &["herd-cleanup"],
            Component::Worktree => &["herd-worktree", "herd-cleanup"],
            // A worktree spawn calls herd-worktree.
            Component::Launch => &["herd-launch", "herd-worktree"],
            Component::Watch => &["herd-launch", "herd-watch"],
            // `host add` copies all six to the host.
            Component::Remote => &herd_e2e::BINARIES,
        }
    }
}

/// What one run of the bench works with.
pub struct Ctx {
    pub quick: bool,
    pub rounds: usize,
    /// The components measured whole.
    whole: Vec<Component>,
    /// Single rows asked for by id.
    rows: Vec<String>,
    /// Each binary's path, or why there is none.
    binaries: BTreeMap<&'static str, Result<PathBuf, String>>,
}

impl Ctx {
    /// The release binary `name`, or why it cannot be timed.
    pub fn binary(&self, name: &str) -> Result<PathBuf, String> {
        match self.binaries.get(name) {
            Some(found) => found.clone(),
            None => Err(format!("{name} was not built")),
        }
    }

    /// Whether the row `id` is to be measured.
    pub fn wants(&self, id: &str) -> bool {
        let component = id
            .split_once('.')
            .and_then(|(prefix, _)| Component::from_str(prefix, false).ok());
        component.is_some_and(|c| self.whole.contains(&c)) || self.rows.iter().any(|r| r == id)
    }

    /// Picks the full or the quick size.
    pub fn size<T>(&self, full: T, quick: T) -> T {
        if self.quick { quick } else { full }
    }
}

/// What a row's goal bounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Goal {
    /// herd's median over the baseline's.
    RatioAtMost(f64),
    /// herd's own figure.
    AtMost(Quantity),
}

/// A value and its unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quantity {
    pub value: f64,
    pub unit: Unit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Ms,
    Mib,
    /// Percent of one CPU core.
    PercentCore,
}

impl Unit {
    fn as_str(self) -> &'static str {
        match self {
            Unit::Ms => "ms",
            Unit::Mib => "MiB",
            Unit::PercentCore => "% core",
        }
    }
}

impl Quantity {
    pub fn ms(d: Duration) -> Quantity {
        Quantity {
            value: d.as_secs_f64() * 1000.0,
            unit: Unit::Ms,
        }
    }

    pub fn mib(kib: u64) -> Quantity {
        Quantity {
            value: kib as f64 / 1024.0,
            unit: Unit::Mib,
        }
    }

    pub fn percent_core(value: f64) -> Quantity {
        Quantity {
            value,
            unit: Unit::PercentCore,
        }
    }

    fn render(self) -> String {
        let digits = match self.unit {
            _ if self.value >= 100.0 => 0,
            _ if self.value >= 10.0 => 1,
            Unit::PercentCore if self.value < 1.0 => 3,
            _ => 2,
        };
        format!("{:.digits$} {}", self.value, self.unit.as_str())
    }

    fn to_json(self) -> Value {
        json!({ "value": self.value, "unit": self.unit.as_str() })
    }
}

/// One line of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// A stable key, e.g. `accept.check`.
    pub id: &'static str,
    pub component: &'static str,
    /// What is measured, in a few words.
    pub figure: String,
    pub goal: Goal,
    pub outcome: Outcome,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Measured(Measured),
    /// Why there is no figure.
    NotMeasured(String),
}

/// A row's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub herd: Quantity,
    /// The baseline's name and figure, measured in the same run.
    pub baseline: Option<(String, Quantity)>,
    /// How many runs the medians (or the percentile) are of.
    pub runs: usize,
    /// Context worth a glance (sizes, other figures).
    pub note: Option<String>,
    /// A failure besides the figure (e.g. processes left behind): the goal is missed.
    pub problem: Option<String>,
}

impl Measured {
    pub fn new(herd: Quantity, runs: usize) -> Measured {
        Measured {
            herd,
            baseline: None,
            runs,
            note: None,
            problem: None,
        }
    }

    pub fn against(mut self, name: impl Into<String>, baseline: Quantity) -> Measured {
        self.baseline = Some((name.into(), baseline));
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Measured {
        self.note = Some(note.into());
        self
    }

    pub fn problem(mut self, problem: impl Into<String>) -> Measured {
        self.problem = Some(problem.into());
        self
    }

    /// herd's figure over the baseline's.
    pub fn ratio(&self) -> Option<f64> {
        let (_, baseline) = self.baseline.as_ref()?;
        (baseline.unit == self.herd.unit && baseline.value > 0.0)
            .then(|| self.herd.value / baseline.value)
    }
}

impl Row {
    pub fn measured(
        id: &'static str,
        component: &'static str,
        figure: impl Into<String>,
        goal: Goal,
        measured: Measured,
    ) -> Row {
        Row {
            id,
            component,
            figure: figure.into(),
            goal,
            outcome: Outcome::Measured(measured),
        }
    }

    pub fn not_measured(
        id: &'static str,
        component: &'static str,
        figure: impl Into<String>,
        goal: Goal,
        reason: impl Into<String>,
    ) -> Row {
        Row {
            id,
            component,
            figure: figure.into(),
            goal,
            outcome: Outcome::NotMeasured(reason.into()),
        }
    }

    /// Builds the row from a measurement that may have failed.
    pub fn from_result(
        id: &'static str,
        component: &'static str,
        figure: impl Into<String>,
        goal: Goal,
        result: Result<Measured, String>,
    ) -> Row {
        match result {
            Ok(m) => Row::measured(id, component, figure, goal, m),
            Err(reason) => Row::not_measured(id, component, figure, goal, reason),
        }
    }

    /// `Some(true)` when the goal is met, `Some(false)` when missed, `None` without a figure.
    pub fn met(&self) -> Option<bool> {
        let Outcome::Measured(m) = &self.outcome else {
            return None;
        };
        if m.problem.is_some() {
            return Some(false);
        }
        Some(match self.goal {
            Goal::RatioAtMost(max) => m.ratio().is_some_and(|r| r <= max),
            Goal::AtMost(max) => m.herd.unit == max.unit && m.herd.value <= max.value,
        })
    }

    fn status(&self) -> &'static str {
        match self.met() {
            Some(true) => "met",
            Some(false) => "missed",
            None => "not_measured",
        }
    }

    fn to_json(&self) -> Value {
        let goal = match self.goal {
            Goal::RatioAtMost(max) => json!({ "kind": "ratio_at_most", "value": max }),
            Goal::AtMost(max) => {
                json!({ "kind": "at_most", "value": max.value, "unit": max.unit.as_str() })
            }
        };
        let mut doc = json!({
            "id": self.id,
            "component": self.component,
            "figure": self.figure,
            "goal": goal,
            "status": self.status(),
        });
        match &self.outcome {
            Outcome::Measured(m) => {
                doc["herd"] = m.herd.to_json();
                doc["baseline"] = match &m.baseline {
                    Some((name, q)) => {
                        let mut b = q.to_json();
                        b["name"] = json!(name);
                        b
                    }
                    None => Value::Null,
                };
                doc["ratio"] = json!(m.ratio());
                doc["runs"] = json!(m.runs);
                doc["note"] = json!(m.note);
                doc["problem"] = json!(m.problem);
            }
            Outcome::NotMeasured(reason) => doc["reason"] = json!(reason),
        }
        doc
    }
}

fn render_goal(goal: Goal) -> String {
    match goal {
        Goal::RatioAtMost(max) => format!("ratio <= {max}"),
        Goal::AtMost(max) => format!("<= {}", max.render()),
    }
}

/// The entry point of `cargo xtask bench`; `args[0]` is the program name.
pub fn main_impl(args: Vec<OsString>) -> ExitCode {
    herd_cli::main(args, |cli: &Cli| cli.json, run)
}

pub fn run(cli: Cli) -> Result<Output, Error> {
    if let (Some(artifacts), Some(secs)) = (&cli.poll_baseline, cli.poll_secs) {
        let used = bench_watch::poll_baseline(artifacts, Duration::from_secs(secs))?;
        return Ok(Output::ok(used.clone(), used.to_string()));
    }
    if cfg!(debug_assertions) && !cli.released {
        return Err(reexec_in_release(&cli));
    }
    let quick = cli.quick;
    let rounds = cli.rounds.map_or(if quick { 3 } else { 7 }, |r| r as usize);
    let (mut whole, mut single) = (Vec::new(), Vec::new());
    for only in &cli.only {
        match only {
            Only::Component(c) => whole.push(*c),
            Only::Row(c, id) => single.push((*c, id.clone())),
        }
    }
    if cli.only.is_empty() {
        whole = Component::ALL.to_vec();
    }
    let mut components: Vec<Component> = whole
        .iter()
        .copied()
        .chain(single.iter().map(|(c, _)| *c))
        .collect();
    components.sort();
    components.dedup();
    let binaries = find_binaries(&components, cli.bin_dir.as_deref());
    let ctx = Ctx {
        quick,
        rounds,
        whole,
        rows: single.into_iter().map(|(_, id)| id).collect(),
        binaries,
    };
    let started = Instant::now();
    // herd-cleanup first, so the peak RSS of this process while it counts is the counting's
    // own, not what earlier measurements left in the heap; the table keeps the issues' order.
    let mut order = components.clone();
    order.sort_by_key(|c| *c != Component::Cleanup);
    let mut measured: BTreeMap<Component, Vec<Row>> = BTreeMap::new();
    for component in order {
        progress(&format!("measuring {}", component_name(component)));
        let rows = match component {
            Component::Cleanup => bench_cleanup::rows(&ctx),
            Component::Accept => bench_accept::rows(&ctx),
            Component::Worktree => bench_worktree::rows(&ctx),
            Component::Launch => {
                let mut rows = bench_launch::rows(&ctx);
                rows.extend(crate::bench_start::rows(&ctx));
                rows.extend(crate::bench_sandbox::rows(&ctx));
                rows
            }
            Component::Watch => {
                let mut rows = bench_watch::rows(&ctx);
                rows.extend(crate::bench_history::rows(&ctx));
                rows
            }
            Component::Remote => crate::bench_remote::rows(&ctx),
        };
        // Rows measured together with a wanted one, but not asked for, are left out.
        let rows = rows.into_iter().filter(|r| ctx.wants(r.id)).collect();
        measured.insert(component, rows);
    }
    let rows: Vec<Row> = measured.into_values().flatten().collect();
    let report = Report {
        quick,
        rounds,
        date: today(),
        cpus: std::thread::available_parallelism().map_or(0, |n| n.get()),
        took: started.elapsed(),
        rows,
    };
    Ok(Output::ok(report.to_json(), report.table()))
}

fn component_name(c: Component) -> &'static str {
    match c {
        Component::Accept => "herd-accept",
        Component::Cleanup => "herd-cleanup",
        Component::Worktree => "herd-worktree",
        Component::Launch => "herd-launch",
        Component::Watch => "herd-watch",
        Component::Remote => "herd-remote",
    }
}

/// A line on stderr saying what the bench is doing; the table or JSON goes to stdout.
pub fn progress(line: &str) {
    herd_cli::diagnostic(&format!("bench: {line}"));
}

/// Replaces this debug build with a release build of itself, same arguments; returns only when
/// that failed. Timing herd's libraries compiled without optimisations would measure the
/// compiler, not herd.
fn reexec_in_release(cli: &Cli) -> Error {
    progress("re-running in release (cargo run --release -p xtask)");
    let mut argv: Vec<OsString> = vec![
        cargo(),
        "run".into(),
        "--release".into(),
        "--quiet".into(),
        "--manifest-path".into(),
        workspace_root().join("Cargo.toml").into(),
        "--package".into(),
        "xtask".into(),
        "--".into(),
        "bench".into(),
        "--released".into(),
    ];
    if cli.quick {
        argv.push("--quick".into());
    }
    if let Some(rounds) = cli.rounds {
        argv.push("--rounds".into());
        argv.push(rounds.to_string().into());
    }
    for only in &cli.only {
        argv.push("--only".into());
        match only {
            Only::Component(c) => argv.push(component_name(*c).trim_start_matches("herd-").into()),
            Only::Row(_, id) => argv.push(id.into()),
        }
    }
    if let Some(dir) = &cli.bin_dir {
        argv.push("--bin-dir".into());
        argv.push(dir.clone().into());
    }
    if cli.json {
        argv.push("--json".into());
    }
    let err = subprocess::exec_replace(&argv);
    Error::new(
        ErrorCode::Unavailable,
        format!("cannot re-run the bench in release with cargo: {err}"),
    )
}

/// Builds (or finds in `bin_dir`) every binary the components time. A binary that does not
/// build is a reason on its rows, not the end of the bench.
fn find_binaries(
    components: &[Component],
    bin_dir: Option<&Path>,
) -> BTreeMap<&'static str, Result<PathBuf, String>> {
    let mut names: Vec<&'static str> = components
        .iter()
        .flat_map(|c| c.binaries().iter().copied())
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut found = BTreeMap::new();
    for name in names {
        let path = match bin_dir {
            Some(dir) => {
                let path = dir.join(name);
                if path.is_file() {
                    Ok(path)
                } else {
                    Err(format!("{name} is not in {}", dir.display()))
                }
            }
            None => build_release(name),
        };
        found.insert(name, path);
    }
    found
}

/// `cargo build --release -p <package>`; the binary sits beside this (release) executable.
fn build_release(package: &str) -> Result<PathBuf, String> {
    progress(&format!("building {package} (cargo build --release)"));
    let cmd = Command::new(cargo(), BUILD_BUDGET)
        .args([
            "build",
            "--release",
            "--quiet",
            "--package",
            package,
            "--bins",
        ])
        .cwd(workspace_root())
        .stdout_cap(64 * 1024, Keep::Tail)
        .stderr_cap(1024 * 1024, Keep::Tail);
    let out = subprocess::run(&cmd).map_err(|e| format!("cannot build {package}: {e}"))?;
    if !out.success() {
        let stderr = out.stderr.text();
        let first_error = stderr
            .lines()
            .find(|l| l.starts_with("error"))
            .unwrap_or("cargo build failed");
        return Err(format!("{package} does not build: {first_error}"));
    }
    let path = subprocess::sibling_binary(package);
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "{package} built, but {} is missing",
            path.display()
        ))
    }
}

/// Everything one run measured.
struct Report {
    quick: bool,
    rounds: usize,
    date: String,
    cpus: usize,
    took: Duration,
    rows: Vec<Row>,
}

impl Report {
    fn to_json(&self) -> Value {
        json!({
            "format_version": FORMAT_VERSION,
            "mode": if self.quick { "quick" } else { "full" },
            "rounds": self.rounds,
            "date": self.date,
            "cpus": self.cpus,
            "took_ms": self.took.as_millis() as u64,
            "rows": self.rows.iter().map(Row::to_json).collect::<Vec<_>>(),
        })
    }

    /// The table: one line per figure, a mark where the goal is missed, notes below.
    fn table(&self) -> String {
        let header = [
            "component",
            "figure",
            "herd",
            "baseline",
            "ratio",
            "goal",
            "runs",
            "",
        ];
        let mut lines: Vec<[String; 8]> = Vec::new();
        let mut notes = Vec::new();
        for row in &self.rows {
            let mark = match row.met() {
                Some(true) => "ok".to_owned(),
                Some(false) => "MISSED".to_owned(),
                None => "not measured".to_owned(),
            };
            match &row.outcome {
                Outcome::Measured(m) => {
                    let baseline = m.baseline.as_ref().map_or_else(
                        || "-".to_owned(),
                        |(name, q)| format!("{} ({name})", q.render()),
                    );
                    let ratio = m
                        .ratio()
                        .map_or_else(|| "-".to_owned(), |r| format!("{r:.2}"));
                    lines.push([
                        row.component.to_owned(),
                        row.figure.clone(),
                        m.herd.render(),
                        baseline,
                        ratio,
                        render_goal(row.goal),
                        m.runs.to_string(),
                        mark,
                    ]);
                    if let Some(problem) = &m.problem {
                        notes.push(format!("{}: {problem}", row.id));
                    }
                    if let Some(note) = &m.note {
                        notes.push(format!("{}: {note}", row.id));
                    }
                }
                Outcome::NotMeasured(reason) => {
                    lines.push([
                        row.component.to_owned(),
                        row.figure.clone(),
                        "-".into(),
                        "-".into(),
                        "-".into(),
                        render_goal(row.goal),
                        "-".into(),
                        mark,
                    ]);
                    notes.push(format!("{}: not measured ({reason})", row.id));
                }
            }
        }
        let mut widths = header.map(str::len);
        for line in &lines {
            for (w, cell) in widths.iter_mut().zip(line) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        let _ = writeln!(
            out,
            "herd bench, {} mode, {} CPUs, {}: medians of {} rounds unless noted, ratio = herd / baseline",
            if self.quick { "quick" } else { "full" },
            self.cpus,
            self.date,
            self.rounds
        );
        let mut push = |cells: &[String]| {
            let mut line = String::new();
            for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
                // Figures align right, words left.
                let numeric = (2..=6).contains(&i);
                if numeric {
                    let _ = write!(line, "{cell:>w$}  ");
                } else {
                    let _ = write!(line, "{cell:<w$}  ");
                }
            }
            let _ = writeln!(out, "{}", line.trim_end());
        };
        push(&header.map(str::to_owned));
        for line in &lines {
            push(line);
        }
        if !notes.is_empty() {
            let _ = writeln!(out);
            for note in notes {
                let _ = writeln!(out, "  {note}");
            }
        }
        let missed = self.rows.iter().filter(|r| r.met() == Some(false)).count();
        let unmeasured = self.rows.iter().filter(|r| r.met().is_none()).count();
        let _ = write!(
            out,
            "\n{} rows: {} met, {missed} missed, {unmeasured} not measured; took {:.0} s",
            self.rows.len(),
            self.rows.len() - missed - unmeasured,
            self.took.as_secs_f64()
        );
        out
    }
}

/// Today's date (UTC) as `YYYY-MM-DD`.
fn today() -> String {
    herd_core::time::Utc::from_ms(herd_core::time::now_ms()).date()
}

/// The median of `times` (the upper one of an even count); zero when empty.
pub fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort_unstable();
    sorted.get(sorted.len() / 2).copied().unwrap_or_default()
}

/// The nearest-rank percentile `p` (0–100) of `times`; zero when empty.
pub fn percentile(times: &[Duration], p: f64) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort_unstable();
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Runs `cmd` and returns its wall time and output; a failure to start, a timeout or a non-zero
/// exit is an error naming the command and its stderr.
pub fn timed(cmd: &Command) -> Result<(Duration, subprocess::Output), String> {
    let started = Instant::now();
    let out = subprocess::run(cmd).map_err(|e| e.to_string())?;
    let elapsed = started.elapsed();
    if !out.success() {
        let what = cmd.program().to_string_lossy().into_owned();
        let stderr = out.stderr.text();
        let stdout = out.stdout.text();
        let detail = if stderr.trim().is_empty() {
            stdout.trim().to_owned()
        } else {
            stderr.trim().to_owned()
        };
        return Err(format!(
            "{what} failed ({}): {}",
            match (out.code, out.signal, out.timed_out) {
                (_, _, true) => "timed out".to_owned(),
                (Some(code), _, _) => format!("exit {code}"),
                (None, Some(sig), _) => format!("signal {sig}"),
                _ => "no status".to_owned(),
            },
            first_line(&detail)
        ));
    }
    Ok((elapsed, out))
}

/// The first line of `text`, at most 200 characters.
pub fn first_line(text: &str) -> String {
    text.lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(200)
        .collect()
}

/// A temporary directory for a fixture, removed when dropped.
pub fn scratch(prefix: &str) -> Result<tempfile::TempDir, String> {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .map_err(|e| format!("cannot create a temporary directory: {e}"))
}

/// Whether `program` is on `PATH`.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_percentiles() {
        let ms = |v: &[u64]| {
            v.iter()
                .map(|&m| Duration::from_millis(m))
                .collect::<Vec<_>>()
        };
        assert_eq!(median(&ms(&[5, 1, 3])), Duration::from_millis(3));
        assert_eq!(median(&[]), Duration::ZERO);
        let twenty = ms(&(1..=20).collect::<Vec<_>>());
        assert_eq!(percentile(&twenty, 95.0), Duration::from_millis(19));
        assert_eq!(percentile(&ms(&[7]), 95.0), Duration::from_millis(7));
    }

    #[test]
    fn goals_judge_the_ratio_or_the_figure() {
        let ms = |v| Quantity {
            value: v,
            unit: Unit::Ms,
        };
        let row = |goal, m| Row::measured("x", "herd-x", "f", goal, m);
        let faster = Measured::new(ms(1.0), 5).against("sh", ms(2.0));
        assert_eq!(faster.ratio(), Some(0.5));
        assert_eq!(
            row(Goal::RatioAtMost(1.0), faster.clone()).met(),
            Some(true)
        );
        assert_eq!(
            row(Goal::RatioAtMost(0.2), faster.clone()).met(),
            Some(false)
        );
        assert_eq!(row(Goal::AtMost(ms(1.0)), faster.clone()).met(), Some(true));
        assert_eq!(
            row(Goal::AtMost(ms(1.0)), faster.problem("left 3 processes")).met(),
            Some(false)
        );
        let none = Row::not_measured("x", "herd-x", "f", Goal::RatioAtMost(1.0), "absent");
        assert_eq!(none.met(), None);
        assert_eq!(none.to_json()["status"], "not_measured");
    }
}
