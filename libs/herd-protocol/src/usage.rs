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
///
/// A token count is `null` (unknown) when a sum of it would pass the largest integer (a session
/// can record any number), as a cost is when a part of it is unknown: never a wrapped number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Figures {
    /// Input tokens not read from or written to a cache.
    pub input: Option<u64>,
    pub output: Option<u64>,
    pub cache_read: Option<u64>,
    pub cache_write: Option<u64>,
    /// The total Pi recorded (input, output and both caches).
    pub total_tokens: Option<u64>,
    /// US dollars; `null` when any counted part's cost is unknown.
    pub cost: Option<Usd>,
    /// How many entries with a usage were counted (assistant messages, cache warming, tool and
    /// summary usage).
    pub messages: u64,
}

impl Default for Figures {
    fn default() -> Figures {
        Figures::zero()
    }
}

/// `a + b`, unknown when either is or the sum passes the largest integer.
pub fn plus(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    a?.checked_add(b?)
}

/// `a - b`, at least zero; unknown when either is.
fn minus(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    Some(a?.saturating_sub(b?))
}

impl Figures {
    /// Nothing counted yet: no tokens and a known zero cost.
    pub fn zero() -> Figures {
        Figures {
            input: Some(0),
            output: Some(0),
            cache_read: Some(0),
            cache_write: Some(0),
            total_tokens: Some(0),
            cost: Some(Usd(0.0)),
            messages: 0,
        }
    }

    /// `self` with `other` added: a figure stays known only while both are and their sum is a
    /// number (a cost too large to be finite is unknown).
    pub fn add(&mut self, other: &Figures) {
        self.input = plus(self.input, other.input);
        self.output = plus(self.output, other.output);
        self.cache_read = plus(self.cache_read, other.cache_read);
        self.cache_write = plus(self.cache_write, other.cache_write);
        self.total_tokens = plus(self.total_tokens, other.total_tokens);
        self.messages = self.messages.saturating_add(other.messages);
        self.cost = match (self.cost, other.cost) {
            (Some(a), Some(b)) => Usd::new(a.0 + b.0),
            _ => None,
        };
    }

    /// `self` less `earlier` (figures of the same session read up to an earlier point): what
    /// was counted in between. A figure is known when both are.
    pub fn since(&self, earlier: &Figures) -> Figures {
        Figures {
            input: minus(self.input, earlier.input),
            output: minus(self.output, earlier.output),
            cache_read: minus(self.cache_read, earlier.cache_read),
            cache_write: minus(self.cache_write, earlier.cache_write),
            total_tokens: minus(self.total_tokens, earlier.total_tokens),
            messages: self.messages.saturating_sub(earlier.messages),
            cost: match (self.cost, earlier.cost) {
                (Some(a), Some(b)) => Usd::new((a.0 - b.0).max(0.0)),
                _ => None,
            },
        }
    }

    /// Whether anything was used: an entry counted, or tokens that are not known to be none.
    pub fn used_any(&self) -> bool {
        self.messages > 0 || self.total_tokens != Some(0)
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

/// How many models a tally names; the usage of the others is summed as [`MoreModels`], so that
/// what a child's session names cannot make a result or a cursor larger than its read bound.
pub const MODELS_LISTED: usize = 10;
/// The longest model name a tally keeps, in characters; a longer one is cut there with `…`.
pub const MODEL_NAME_MAX: usize = 100;
/// How many names of unlisted models a cursor remembers to count each of them once; past it,
/// a name not remembered counts again.
pub const UNLISTED_REMEMBERED: usize = 50_000;

/// The usage of one session as read so far: the totals and each model's part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Tally {
    #[serde(flatten)]
    pub total: Figures,
    /// Each model's part, in the order first seen: the first [`MODELS_LISTED`] models.
    pub models: Vec<ModelFigures>,
    /// The models past the first [`MODELS_LISTED`], summed; absent when there were none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more_models: Option<MoreModels>,
    /// Lines too long to read (more than the reader's line bound); their usage is not counted,
    /// and the cost is unknown while there is one.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unread_lines: u64,
}

/// The usage of the models a tally does not name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MoreModels {
    /// How many models: each counted once in one session; a roll-up adds its sessions' counts.
    pub count: u64,
    #[serde(flatten)]
    pub figures: Figures,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Default for Tally {
    fn default() -> Tally {
        Tally::new()
    }
}

/// The names of unlisted models a reader has counted already (their hashes, sorted).
pub type Unlisted = Vec<u64>;

/// A model's name as a tally keeps it: at most [`MODEL_NAME_MAX`] characters.
pub fn model_name(model: &str) -> String {
    match model.char_indices().nth(MODEL_NAME_MAX) {
        None => model.to_owned(),
        Some((at, _)) => format!("{}…", &model[..at]),
    }
}

/// A stable 64-bit hash of a model name (FNV-1a), which a cursor keeps across versions.
fn name_hash(model: &str) -> u64 {
    model.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl Tally {
    /// An empty tally: no tokens and a known zero cost.
    pub fn new() -> Tally {
        Tally {
            total: Figures::zero(),
            models: Vec::new(),
            more_models: None,
            unread_lines: 0,
        }
    }

    /// Counts `figures` for `model`. A model past the listed ones counts as one more model.
    pub fn count(&mut self, model: &str, figures: &Figures) {
        self.count_once(model, figures, None);
    }

    /// Counts `figures` for `model`, one session's entry: a model past the listed ones counts as
    /// one more model the first time `unlisted` (the names counted so far) meets it.
    pub fn count_once(&mut self, model: &str, figures: &Figures, unlisted: Option<&mut Unlisted>) {
        self.total.add(figures);
        let model = model_name(model);
        if let Some(known) = self.models.iter_mut().find(|m| m.model == model) {
            known.figures.add(figures);
            return;
        }
        if self.models.len() < MODELS_LISTED {
            let mut own = Figures::zero();
            own.add(figures);
            self.models.push(ModelFigures {
                model,
                figures: own,
            });
            return;
        }
        let new = match unlisted {
            None => true,
            Some(seen) => {
                let hash = name_hash(&model);
                match seen.binary_search(&hash) {
                    Ok(_) => false,
                    Err(at) => {
                        if seen.len() < UNLISTED_REMEMBERED {
                            seen.insert(at, hash);
                        }
                        true
                    }
                }
            }
        };
        self.more(figures, u64::from(new));
    }

    /// Adds `figures` of `count` more unlisted models.
    fn more(&mut self, figures: &Figures, count: u64) {
        let more = self.more_models.get_or_insert(MoreModels {
            count: 0,
            figures: Figures::zero(),
        });
        more.count = more.count.saturating_add(count);
        more.figures.add(figures);
    }

    /// Adds every model's part of `other`.
    pub fn merge(&mut self, other: &Tally) {
        for model in &other.models {
            self.count(&model.model, &model.figures);
        }
        if let Some(more) = &other.more_models {
            self.total.add(&more.figures);
            self.more(&more.figures, more.count);
        }
        self.unread_lines = self.unread_lines.saturating_add(other.unread_lines);
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
            if delta.used_any() {
                out.count(&model.model, &delta);
            }
        }
        if let Some(more) = &self.more_models {
            let (count, before) = earlier
                .more_models
                .map_or((0, Figures::zero()), |m| (m.count, m.figures));
            let delta = more.figures.since(&before);
            if delta.used_any() {
                out.total.add(&delta);
                out.more(&delta, more.count.saturating_sub(count));
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
    /// The byte offset just after the last whole line counted, or, while `inLongLine`, how far
    /// a line too long to count was read.
    pub offset: u64,
    /// Whether `offset` is inside a line already longer than the reader's line bound: the next
    /// read drops the rest of it, instead of reading it again from its start.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_long_line: bool,
    /// The last bytes before `offset` (at most 64), hex: a file rewritten since does not match
    /// and is read again from its start.
    pub tail_hex: String,
    pub tally: Tally,
    /// The hashes of the model names `tally` counts among its more models, sorted: each is
    /// counted once (at most [`UNLISTED_REMEMBERED`] are remembered).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unlisted: Unlisted,
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
    /// The models past the ones `byModel` names, summed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more_models: Option<MoreModels>,
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
    /// The artifacts directory the run is in: set by `usage --all`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<String>,
}

/// One task of a persistent specialist and what it cost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskUsage {
    pub task: String,
    #[serde(flatten)]
    pub figures: Figures,
}

/// A run's hard budget (`subagent`'s `budget`): the most its session, with its nested children's,
/// may use before the watcher stops it. Each bound is positive; an absent one does not bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    /// Total tokens (input, output and both caches), as Pi counts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// US dollars, as Pi computes them from the model's price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usd: Option<Usd>,
}

/// What a budget is judged on: the tokens and the cost spent, the cost being what is known
/// when a part of it is not (`cost_unknown`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Spent {
    /// `null` when the count passed the largest integer.
    pub tokens: Option<u64>,
    /// The known part of the cost.
    pub usd: Usd,
    /// Whether a part of the cost is not known (Pi recorded none): `usd` is then a lower bound.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cost_unknown: bool,
}

impl Spent {
    /// What `tally` spent: its tokens, and its cost or, when that is unknown, the sum of the
    /// costs known model by model.
    pub fn of(tally: &Tally) -> Spent {
        let (usd, cost_unknown) = match tally.total.cost {
            Some(cost) => (cost, false),
            None => {
                let known = tally
                    .models
                    .iter()
                    .map(|m| m.figures.cost)
                    .chain(tally.more_models.map(|m| m.figures.cost))
                    .flatten()
                    .fold(0.0, |sum, c| sum + c.0);
                (Usd::new(known).unwrap_or_default(), true)
            }
        };
        Spent {
            tokens: tally.total.total_tokens,
            usd,
            cost_unknown,
        }
    }
}

impl Budget {
    /// Whether it bounds anything.
    pub fn is_bounded(&self) -> bool {
        self.tokens.is_some() || self.usd.is_some()
    }

    /// Whether `spent` reached it: a token count too large to know reaches any bound.
    pub fn reached(&self, spent: &Spent) -> bool {
        self.tokens
            .is_some_and(|limit| spent.tokens.is_none_or(|n| n >= limit))
            || self.usd.is_some_and(|limit| spent.usd.0 >= limit.0)
    }

    /// The share of it `spent` used, the larger of its bounds' (1.0 is the whole budget).
    #[expect(clippy::cast_precision_loss, reason = "a share, not a count")]
    pub fn share(&self, spent: &Spent) -> f64 {
        let tokens = self.tokens.map(|limit| match spent.tokens {
            Some(n) => n as f64 / limit as f64,
            None => f64::INFINITY,
        });
        let usd = self.usd.map(|limit| spent.usd.0 / limit.0);
        tokens.into_iter().chain(usd).fold(0.0, f64::max)
    }

    /// What it has left after `spent`: each bound less what was spent, at least zero.
    pub fn left(&self, spent: &Spent) -> Budget {
        Budget {
            tokens: self
                .tokens
                .map(|limit| limit.saturating_sub(spent.tokens.unwrap_or(u64::MAX))),
            usd: self.usd.map(|limit| Usd((limit.0 - spent.usd.0).max(0.0))),
        }
    }

    /// The result's host line: `Budget: spent 1.02 M of 1 M tokens ($3.10 of $3.00); stopped`,
    /// each bound it has, the cost said to be partly unknown when it is.
    pub fn host_line(&self, spent: &Spent, stopped: bool) -> String {
        let unknown = if spent.cost_unknown {
            ", some cost unknown"
        } else {
            ""
        };
        let dollars = |limit: Usd| format!("${:.2} of ${:.2}{unknown}", spent.usd.0, limit.0);
        let mut line = "Budget: spent ".to_owned();
        match (self.tokens, self.usd) {
            (Some(tokens), usd) => {
                line.push_str(&format!(
                    "{} of {} tokens",
                    budget_tokens(spent.tokens),
                    budget_tokens(Some(tokens))
                ));
                if let Some(usd) = usd {
                    line.push_str(&format!(" ({})", dollars(usd)));
                }
            }
            (None, Some(usd)) => line.push_str(&dollars(usd)),
            (None, None) => line.push_str("nothing bounded"),
        }
        if stopped {
            line.push_str("; stopped");
        }
        line
    }
}

/// A token count as a budget line shows it: `950`, `41.2 k`, `1.02 M`, `1 M`, or `unknown`.
pub fn budget_tokens(n: Option<u64>) -> String {
    let Some(n) = n else {
        return "unknown".to_owned();
    };
    #[expect(clippy::cast_precision_loss, reason = "a count shown to two decimals")]
    let f = n as f64;
    let short = |x: f64, unit: &str| {
        let text = format!("{x:.2}");
        let text = text.trim_end_matches('0').trim_end_matches('.');
        format!("{text} {unit}")
    };
    if n < 1_000 {
        n.to_string()
    } else if n < 1_000_000 {
        short(f / 1_000.0, "k")
    } else {
        short(f / 1_000_000.0, "M")
    }
}

/// A token count as a host line shows it: `950`, `41.2k`, `3.4M`, or `unknown`.
pub fn tokens(n: Option<u64>) -> String {
    let Some(n) = n else {
        return "unknown".to_owned();
    };
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

/// `n` with its thousands separated: `11,990`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
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
        if t.cache_write != Some(0) {
            line.push_str(&format!(" · {} cache write", tokens(t.cache_write)));
        }
        line.push_str(&format!(" · {}", cost(t.cost)));
        // A model's name is the session's, which the child's Pi wrote: encoded, as every
        // child-influenced value on a host line is.
        let mut models: Vec<String> = self
            .tally
            .models
            .iter()
            .map(|m| herd_core::escape::encode_host_value(&m.model, 200))
            .collect();
        match self.tally.more_models.map(|m| m.count) {
            None | Some(0) => {}
            Some(1) => models.push("… and 1 more model".to_owned()),
            Some(n) => models.push(format!("… and {} more models", thousands(n))),
        }
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

/// What `record` spent as herd last read it, without reading any session: its usage cursor's
/// tally (`runs/<id>.usage.json`, which `herd-watch` advances each time it looks at a budgeted
/// run), with each child of its list rolled in as its settled result says or, while it runs, the
/// same way. Up to eight levels of nesting are counted. What a session gained since its last read
/// is not in it: a launch judges a budget on this without the cost of a session read.
pub fn recorded(artifacts: &crate::layout::Artifacts, record: &crate::run::RunRecord) -> Tally {
    recorded_at(artifacts, &record.run_id, 0)
}

fn recorded_at(artifacts: &crate::layout::Artifacts, run_id: &str, depth: usize) -> Tally {
    let mut tally = artifacts
        .run(run_id)
        .read::<UsageCursor>()
        .ok()
        .flatten()
        .map_or_else(Tally::new, |c| c.tally);
    if depth >= 8 {
        return tally;
    }
    for child in crate::run::linked_children(artifacts, run_id).unwrap_or_default() {
        let settled = crate::result::RunResult::load(artifacts, &child.run_id, None)
            .ok()
            .flatten()
            .and_then(|r| r.details.usage);
        match settled {
            Some(usage) => tally.merge(&usage.tally),
            None => tally.merge(&recorded_at(artifacts, &child.run_id, depth + 1)),
        }
    }
    tally
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(input: u64, cost: Option<f64>) -> Figures {
        Figures {
            input: Some(input),
            output: Some(1),
            cache_read: Some(2),
            cache_write: Some(0),
            total_tokens: Some(input + 3),
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
        assert_eq!(tally.total.input, Some(35));
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
        assert_eq!(delta.total.input, Some(8));
        assert_eq!(delta.total.messages, 2);
        assert_eq!(delta.total.cost, Some(Usd(0.25)));
        assert_eq!(delta.models.len(), 2);
    }

    #[test]
    fn tokens_and_cost_read_as_the_issue_writes_them() {
        assert_eq!(tokens(Some(950)), "950");
        assert_eq!(tokens(Some(41_234)), "41.2k");
        assert_eq!(tokens(Some(12_000)), "12.0k");
        assert_eq!(tokens(Some(3_400_000)), "3.4M");
        assert_eq!(tokens(None), "unknown");
        assert_eq!(cost(Some(Usd(0.0842))), "$0.084");
        assert_eq!(cost(None), "cost unknown");
    }

    #[test]
    fn a_sum_past_the_largest_integer_is_unknown_never_wrapped() {
        let mut tally = Tally::new();
        let huge = Figures {
            input: Some(u64::MAX - 1),
            total_tokens: Some(u64::MAX),
            cost: Usd::new(f64::MAX),
            ..figures(0, None)
        };
        tally.count("fake/a", &huge);
        tally.count("fake/a", &huge);
        assert_eq!(tally.total.input, None, "{tally:?}");
        assert_eq!(tally.total.total_tokens, None);
        assert_eq!(tally.total.cost, None, "an infinite cost is unknown");
        assert_eq!(
            tally.total.output,
            Some(2),
            "a figure that fits stays known"
        );
        assert_eq!(tally.models[0].figures.input, None);
        let usage = RunUsage {
            tally: tally.clone(),
            ..RunUsage::default()
        };
        assert!(
            usage.host_line().starts_with("Usage: unknown in · 2 out"),
            "{}",
            usage.host_line()
        );
        let json = serde_json::to_value(&usage).unwrap();
        assert_eq!(json["input"], serde_json::Value::Null);
        // What came between two unknown figures is unknown too.
        assert_eq!(tally.since(&Tally::new()).total.input, None);
    }

    #[test]
    fn a_tally_names_ten_models_and_sums_the_rest() {
        let mut tally = Tally::new();
        let mut unlisted = Unlisted::new();
        for round in 0..2 {
            for i in 0..12_000 {
                tally.count_once(
                    &format!("fake/m{i}"),
                    &figures(1, Some(0.5)),
                    Some(&mut unlisted),
                );
            }
            assert_eq!(tally.models.len(), MODELS_LISTED, "round {round}");
        }
        let more = tally.more_models.unwrap();
        assert_eq!(more.count, 11_990, "each model counted once");
        assert_eq!(more.figures.input, Some(2 * 11_990));
        assert_eq!(tally.total.input, Some(24_000));
        assert_eq!(tally.total.messages, 24_000);
        // A name longer than the bound is kept cut.
        let mut long = Tally::new();
        long.count(&"x".repeat(10_000), &figures(1, None));
        assert_eq!(long.models[0].model.chars().count(), MODEL_NAME_MAX + 1);
        let usage = RunUsage {
            tally,
            ..RunUsage::default()
        };
        let line = usage.host_line();
        assert!(
            line.ends_with("fake/m9, … and 11,990 more models)"),
            "{line}"
        );
        assert!(serde_json::to_vec(&usage).unwrap().len() < 8 * 1024);
        // A roll-up adds the unlisted models of its parts.
        let mut rolled = Tally::new();
        rolled.merge(&usage.tally);
        rolled.merge(&usage.tally);
        assert_eq!(rolled.more_models.unwrap().count, 2 * 11_990);
        assert_eq!(rolled.total.input, Some(48_000));
    }
}
