//! What a run cost: the tokens and the cost Pi records as `usage` on every assistant message of a
//! child's session, summed per model and per run (the run's own nested children rolled up), as
//! the result's `details.usage`, the outcome ledger's `usage`, `herd-watch status --json` and
//! `herd-watch usage --json` carry it; and the reader's cursor `runs/<run-id>.usage.json`, which
//! remembers how far a session was read so that no session is ever read twice.
//!
//! A cost is in US dollars, as Pi computes it from the model's price. It is `null` (unknown)
//! when a counted message recorded no cost, or a zero cost for tokens it used: Pi records a
//! zero for a model it has no price for, so a zero there is not known to be free. A sum whose
//! every part is known is known; otherwise it is unknown, never a smaller number or zero.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The version of the reader's cursor file.
pub const CURSOR_VERSION: u64 = 1;

/// An amount in US dollars: a finite number, never negative.
#[derive(
    Debug, Clone, Copy, PartialEq, PartialOrd, Default, Serialize, Deserialize, JsonSchema,
)]
#[serde(transparent)]
pub struct Usd(pub f64);

// A `Usd` is finite by construction (the reader refuses anything else), so equality is total.
impl Eq for Usd {}

impl Usd {
    /// `value` when it is a cost: finite and not negative.
    pub fn new(value: f64) -> Option<Usd> {
        (value.is_finite() && value >= 0.0).then_some(Usd(value))
    }
}

/// Token counts and their cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Figures {
    /// Input tokens not read from or written to a cache.
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    /// The total Pi recorded (input, output and both caches).
    pub total_tokens: u64,
    /// US dollars; `null` when any counted part's cost is unknown.
    pub cost: Option<Usd>,
    /// How many entries with a usage were counted (assistant messages, cache warming, tool and
    /// summary usage).
    pub messages: u64,
}

impl Figures {
    /// Nothing counted yet: no tokens and a known zero cost.
    pub fn zero() -> Figures {
        Figures {
            cost: Some(Usd(0.0)),
            ..Figures::default()
        }
    }

    /// `self` with `other` added: a cost stays known only while both are.
    pub fn add(&mut self, other: &Figures) {
        self.input += other.input;
        self.output += other.output;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.total_tokens += other.total_tokens;
        self.messages += other.messages;
        self.cost = match (self.cost, other.cost) {
            (Some(a), Some(b)) => Some(Usd(a.0 + b.0)),
            _ => None,
        };
    }

    /// `self` less `earlier` (figures of the same session read up to an earlier point): what
    /// was counted in between. A cost is known when both are.
    pub fn since(&self, earlier: &Figures) -> Figures {
        Figures {
            input: self.input.saturating_sub(earlier.input),
            output: self.output.saturating_sub(earlier.output),
            cache_read: self.cache_read.saturating_sub(earlier.cache_read),
            cache_write: self.cache_write.saturating_sub(earlier.cache_write),
            total_tokens: self.total_tokens.saturating_sub(earlier.total_tokens),
            messages: self.messages.saturating_sub(earlier.messages),
            cost: match (self.cost, earlier.cost) {
                (Some(a), Some(b)) => Usd::new((a.0 - b.0).max(0.0)),
                _ => None,
            },
        }
    }
}

/// The figures of one model (`provider/model`, as Pi names it in its own cost breakdown; usage
/// that no model is named for is `Tools/summaries`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelFigures {
    pub model: String,
    #[serde(flatten)]
    pub figures: Figures,
}

/// The usage of one session as read so far: the totals and each model's part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Tally {
    #[serde(flatten)]
    pub total: Figures,
    /// Each model's part, in the order first seen.
    pub models: Vec<ModelFigures>,
    /// Lines too long to read (more than the reader's line bound); their usage is not counted,
    /// and the cost is unknown while there is one.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unread_lines: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Default for Tally {
    fn default() -> Tally {
        Tally::new()
    }
}

impl Tally {
    /// An empty tally: no tokens and a known zero cost.
    pub fn new() -> Tally {
        Tally {
            total: Figures::zero(),
            models: Vec::new(),
            unread_lines: 0,
        }
    }

    /// Counts `figures` for `model`.
    pub fn count(&mut self, model: &str, figures: &Figures) {
        self.total.add(figures);
        match self.models.iter_mut().find(|m| m.model == model) {
            Some(known) => known.figures.add(figures),
            None => {
                let mut own = Figures::zero();
                own.add(figures);
                self.models.push(ModelFigures {
                    model: model.to_owned(),
                    figures: own,
                });
            }
        }
    }

    /// Adds every model's part of `other`.
    pub fn merge(&mut self, other: &Tally) {
        for model in &other.models {
            self.count(&model.model, &model.figures);
        }
        self.unread_lines += other.unread_lines;
        if other.unread_lines > 0 {
            self.total.cost = None;
        }
    }

    /// What was counted after `earlier`, a tally of the same session read up to an earlier
    /// point, model by model.
    pub fn since(&self, earlier: &Tally) -> Tally {
        let mut out = Tally::new();
        for model in &self.models {
            let before = earlier
                .models
                .iter()
                .find(|m| m.model == model.model)
                .map_or_else(Figures::zero, |m| m.figures);
            let delta = model.figures.since(&before);
            if delta.messages > 0 || delta.total_tokens > 0 {
                out.count(&model.model, &delta);
            }
        }
        out.unread_lines = self.unread_lines.saturating_sub(earlier.unread_lines);
        if out.unread_lines > 0 {
            out.total.cost = None;
        }
        out
    }
}

/// What a run cost: `details.usage` of its result, `usage` of its outcome ledger line and of its
/// row in `herd-watch status --json`.
///
/// The top-level figures and `models` are the run's own session with its nested children (the
/// runs it launched, and theirs) rolled up; `own` is its session alone and `nested` each child's
/// rolled-up figures, when it had any.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunUsage {
    #[serde(flatten)]
    pub tally: Tally,
    /// The run's own session, without its nested children; absent when it had none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own: Option<Figures>,
    /// The runs it launched, each with its own nested children rolled up.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nested: Vec<NestedUsage>,
}

/// One nested child's part of a run's usage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NestedUsage {
    #[schemars(pattern(crate::layout::RUN_ID_PATTERN))]
    pub run_id: String,
    pub name: String,
    #[serde(flatten)]
    pub figures: Figures,
}

/// `runs/<run-id>.usage.json`: how far the run's session was read and what was counted up to
/// there, so the next read starts where this one stopped; and, for a persistent specialist, the
/// figures at the end of each task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageCursor {
    #[schemars(schema_with = "crate::format_version")]
    pub format_version: u64,
    /// The session file read.
    pub session: String,
    /// Its device and inode when read: another file at that path is read from its start.
    pub device: u64,
    pub inode: u64,
    /// The byte offset just after the last whole line counted.
    pub offset: u64,
    /// The last bytes before `offset` (at most 64), hex: a file rewritten since does not match
    /// and is read again from its start.
    pub tail_hex: String,
    pub tally: Tally,
    /// A persistent specialist's tasks, oldest first, with the session's figures when each
    /// task's result was settled.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<TaskMark>,
}

/// The session's figures when a specialist's task was settled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskMark {
    pub task: String,
    pub tally: Tally,
}

/// `herd-watch usage --json`: what the runs of an artifacts directory cost, by model and by
/// run; each run's own session counted once (a nested child is its own row, and its parent's
/// `rolledUp` includes it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageReport {
    /// Only runs created at or after this time (ms since the epoch), when `--since` was given.
    pub since_ms: Option<u64>,
    /// Every run's own usage summed.
    pub total: Figures,
    pub by_model: Vec<ModelFigures>,
    pub runs: Vec<RunUsageRow>,
}

/// One run of `herd-watch usage --json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunUsageRow {
    #[schemars(pattern(crate::layout::RUN_ID_PATTERN))]
    pub run_id: String,
    pub name: String,
    pub parent_run_id: Option<String>,
    pub created_at_ms: u64,
    pub persistent: bool,
    /// Whether its result is settled (its figures are final).
    pub settled: bool,
    /// Its own session.
    pub own: Tally,
    /// Its own session with its nested children rolled up.
    pub rolled_up: Figures,
    /// A persistent specialist's tasks, each task's own figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<TaskUsage>,
}

/// One task of a persistent specialist and what it cost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskUsage {
    pub task: String,
    #[serde(flatten)]
    pub figures: Figures,
}

/// A token count as a host line shows it: `950`, `41.2k`, `3.4M`.
pub fn tokens(n: u64) -> String {
    #[expect(clippy::cast_precision_loss, reason = "a count shown to one decimal")]
    let f = n as f64;
    if n < 1_000 {
        n.to_string()
    } else if n < 1_000_000 {
        format!("{:.1}k", f / 1_000.0)
    } else {
        format!("{:.1}M", f / 1_000_000.0)
    }
}

/// A cost as a host line shows it: `$0.084`, or `cost unknown`.
pub fn cost(cost: Option<Usd>) -> String {
    match cost {
        Some(Usd(c)) => format!("${c:.3}"),
        None => "cost unknown".to_owned(),
    }
}

impl RunUsage {
    /// The result's host line: `Usage: 41.2k in · 3.1k out · 12.0k cached · $0.084
    /// (fake/child-model)`, with the cache writes when there were any, each model named, and
    /// the nested runs counted when they are rolled in.
    pub fn host_line(&self) -> String {
        let t = &self.tally.total;
        let mut line = format!(
            "Usage: {} in · {} out · {} cached",
            tokens(t.input),
            tokens(t.output),
            tokens(t.cache_read)
        );
        if t.cache_write > 0 {
            line.push_str(&format!(" · {} cache write", tokens(t.cache_write)));
        }
        line.push_str(&format!(" · {}", cost(t.cost)));
        // A model's name is the session's, which the child's Pi wrote: encoded, as every
        // child-influenced value on a host line is.
        let models: Vec<String> = self
            .tally
            .models
            .iter()
            .map(|m| herd_core::escape::encode_host_value(&m.model, 200))
            .collect();
        if !models.is_empty() {
            line.push_str(&format!(" ({})", models.join(", ")));
        }
        match self.nested.len() {
            0 => {}
            1 => line.push_str(" · with 1 nested run"),
            n => line.push_str(&format!(" · with {n} nested runs")),
        }
        if self.tally.unread_lines > 0 {
            line.push_str(&format!(
                " · {} session lines too long to read",
                self.tally.unread_lines
            ));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(input: u64, cost: Option<f64>) -> Figures {
        Figures {
            input,
            output: 1,
            cache_read: 2,
            cache_write: 0,
            total_tokens: input + 3,
            cost: cost.and_then(Usd::new),
            messages: 1,
        }
    }

    #[test]
    fn an_unknown_part_makes_the_sum_unknown_never_smaller() {
        let mut tally = Tally::new();
        tally.count("fake/a", &figures(10, Some(0.5)));
        tally.count("fake/b", &figures(20, None));
        tally.count("fake/a", &figures(5, Some(0.25)));
        assert_eq!(tally.total.input, 35);
        assert_eq!(tally.total.cost, None);
        assert_eq!(tally.models[0].figures.cost, Some(Usd(0.75)));
        assert_eq!(tally.models[1].figures.cost, None);
        let usage = RunUsage {
            tally,
            ..RunUsage::default()
        };
        assert_eq!(
            usage.host_line(),
            "Usage: 35 in · 3 out · 6 cached · cost unknown (fake/a, fake/b)"
        );
        let json = serde_json::to_value(&usage).unwrap();
        assert_eq!(json["cost"], serde_json::Value::Null);
        assert_eq!(json["models"][0]["cost"], 0.75);
    }

    #[test]
    fn a_later_tally_less_an_earlier_one_is_what_came_between() {
        let mut earlier = Tally::new();
        earlier.count("fake/a", &figures(10, Some(0.5)));
        let mut later = earlier.clone();
        later.count("fake/a", &figures(7, Some(0.25)));
        later.count("fake/b", &figures(1, Some(0.0)));
        let delta = later.since(&earlier);
        assert_eq!(delta.total.input, 8);
        assert_eq!(delta.total.messages, 2);
        assert_eq!(delta.total.cost, Some(Usd(0.25)));
        assert_eq!(delta.models.len(), 2);
    }

    #[test]
    fn tokens_and_cost_read_as_the_issue_writes_them() {
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(41_234), "41.2k");
        assert_eq!(tokens(12_000), "12.0k");
        assert_eq!(tokens(3_400_000), "3.4M");
        assert_eq!(cost(Some(Usd(0.0842))), "$0.084");
        assert_eq!(cost(None), "cost unknown");
    }
}
