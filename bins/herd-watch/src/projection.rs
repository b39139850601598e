//! The status projection and the widget (docs/lifecycle.md, "Status").
//!
//! A run's [`Lifecycle`] is fed observations — pane inspections, activity snapshots, an interrupt,
//! completion — and [`Lifecycle::project`] turns it into the label the widget and `herd-watch
//! status` show. The rules: pane inspection is the coarse authority, activity snapshots enrich it,
//! time alone never stalls a run.

use serde::Serialize;

use herd_protocol::child::{ActiveScope, Activity, Phase};
use herd_protocol::needs_input::{ChildState, InputReason, NeedsInput, NeedsInputFile};

/// The detail of a `stalled` specialist whose stop is unconfirmed.
pub const STOP_UNCONFIRMED: &str = "stop unconfirmed";

/// How long pane inspection must keep failing before a run is `stalled`.
pub const STALL_AFTER_MS: u64 = 60_000;

/// What Herdr says about the agent in a pane; a surface without agent statuses (or a pane not
/// asked) is `Unknown`, as little as Herdr's own `unknown` says.
use herd_surface::AgentStatus;

/// One inspection of the child's pane or process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaneObservation {
    Present(AgentStatus),
    /// The inspection failed: no answer about presence.
    ReadError,
    /// A per-pane query (or the verified identity) proved the child gone.
    Missing,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Turn {
    Unknown,
    Active {
        label: Option<String>,
        since_ms: u64,
    },
    Blocked {
        since_ms: u64,
    },
    Waiting {
        since_ms: u64,
    },
    Interrupted {
        at_ms: u64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pane {
    Unknown,
    Present,
    ReadError { first_failed_ms: u64 },
    Missing,
}

/// The cancel state a presentation adds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CancelState {
    #[default]
    None,
    Requested,
    Unconfirmed,
}

use herd_protocol::watch::Label;

/// Whether a transition into `label` from `stalled` is a recovery.
fn recovers(label: Label) -> bool {
    matches!(
        label,
        Label::Active
            | Label::Blocked
            | Label::Waiting
            | Label::WaitingForInput
            | Label::Interrupted
            | Label::Running
            | Label::Starting
    )
}

/// A projection: the label, its detail (the active label), and since when it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Projection {
    pub label: Label,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// When the state began (ms), for the duration on the right of a widget row.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since_ms: Option<u64>,
}

/// A transition the parent hears about (only for non-interactive children).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice {
    Stalled,
    Recovered,
}

/// Decides whether the move from `previous` to `next` is a `stalled` or `recovered` notice.
pub fn notice(previous: Label, next: Label) -> Option<Notice> {
    match (previous == Label::Stalled, next == Label::Stalled) {
        (false, true) => Some(Notice::Stalled),
        (true, false) if recovers(next) => Some(Notice::Recovered),
        _ => None,
    }
}

/// The process + turn lifecycle of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lifecycle {
    started_ms: u64,
    process_confirmed: bool,
    finalizing_ms: Option<u64>,
    terminal: Option<Label>,
    turn: Turn,
    pane: Pane,
    has_worked: bool,
    last_sequence: Option<u64>,
    pub cancel: CancelState,
    /// Since when a persistent specialist's stop is unconfirmed: its directive was published
    /// and its exit was not confirmed within the stop's deadline.
    pub stop_unconfirmed: Option<u64>,
    /// What the child waits for a person for, from its own files (never from its screen).
    input: Option<NeedsInput>,
    /// The last sequence of `<session>.needs-input.json` taken.
    input_sequence: Option<u64>,
}

impl Lifecycle {
    pub fn new(started_ms: u64) -> Lifecycle {
        Lifecycle {
            started_ms,
            process_confirmed: false,
            finalizing_ms: None,
            terminal: None,
            turn: Turn::Unknown,
            pane: Pane::Unknown,
            has_worked: false,
            last_sequence: None,
            cancel: CancelState::None,
            stop_unconfirmed: None,
            input: None,
            input_sequence: None,
        }
    }

    /// Feeds the child's `<session>.needs-input.json`: an open dialog waits for a person, and so
    /// does a settled run of an `interactive` child; anything else (new work) does not. A file
    /// read again, or an older one, is no news.
    pub fn observe_needs_input(&mut self, file: &NeedsInputFile, interactive: bool) {
        if self
            .input_sequence
            .is_some_and(|seen| file.sequence <= seen)
        {
            return;
        }
        self.input_sequence = Some(file.sequence);
        let reason = match file.state {
            ChildState::Dialog => Some(InputReason::Dialog),
            ChildState::Settled if interactive => Some(InputReason::TurnSettled),
            ChildState::Settled | ChildState::Working => None,
        };
        // A help request stands until the child is given new work ([`Lifecycle::help_requested`]).
        if reason.is_none()
            && self
                .input
                .as_ref()
                .is_some_and(|i| i.reason == InputReason::HelpRequest)
        {
            return;
        }
        self.input = reason.map(|reason| NeedsInput {
            reason,
            since_ms: file.since,
            kind: file.kind.clone(),
            title: file.title.clone(),
        });
    }

    /// The child asked for help at `since_ms` and waits for the answer; `None`: it took work
    /// since.
    pub fn help_requested(&mut self, since_ms: Option<u64>) {
        match since_ms {
            Some(since_ms) => {
                if self
                    .input
                    .as_ref()
                    .is_none_or(|i| i.reason != InputReason::HelpRequest)
                {
                    self.input = Some(NeedsInput {
                        reason: InputReason::HelpRequest,
                        since_ms,
                        kind: None,
                        title: None,
                    });
                }
            }
            None => {
                if self
                    .input
                    .as_ref()
                    .is_some_and(|i| i.reason == InputReason::HelpRequest)
                {
                    self.input = None;
                }
            }
        }
    }

    /// What the run waits for a person for, when its projection is `waiting for input`.
    pub fn needs_input(&self, now_ms: u64) -> Option<&NeedsInput> {
        (self.project(now_ms).label == Label::WaitingForInput)
            .then_some(self.input.as_ref())
            .flatten()
    }

    /// Feeds one pane (or process) inspection.
    pub fn observe_pane(&mut self, observation: PaneObservation, now_ms: u64) {
        match observation {
            PaneObservation::Present(status) => {
                self.pane = Pane::Present;
                self.process_confirmed = true;
                // The turn follows from what was known before this status; then it latches.
                let had_worked = self.has_worked;
                if matches!(
                    status,
                    AgentStatus::Working | AgentStatus::Blocked | AgentStatus::Done
                ) {
                    self.has_worked = true;
                }
                // Herdr lags an Escape: an interrupted turn ignores its status.
                if matches!(self.turn, Turn::Interrupted { .. }) {
                    return;
                }
                match status {
                    AgentStatus::Working if !matches!(self.turn, Turn::Active { .. }) => {
                        self.turn = Turn::Active {
                            label: None,
                            since_ms: now_ms,
                        };
                    }
                    AgentStatus::Blocked
                        if had_worked && !matches!(self.turn, Turn::Blocked { .. }) =>
                    {
                        self.turn = Turn::Blocked { since_ms: now_ms };
                    }
                    AgentStatus::Idle | AgentStatus::Done
                        if had_worked && !matches!(self.turn, Turn::Waiting { .. }) =>
                    {
                        self.turn = Turn::Waiting { since_ms: now_ms };
                    }
                    _ => {}
                }
            }
            PaneObservation::ReadError => {
                if !matches!(self.pane, Pane::ReadError { .. }) {
                    self.pane = Pane::ReadError {
                        first_failed_ms: now_ms,
                    };
                }
            }
            PaneObservation::Missing => self.pane = Pane::Missing,
        }
    }

    /// Feeds an activity snapshot. Stale snapshots (a sequence no newer than one already seen, or
    /// older than an interrupt) are ignored: the file is read again on every tick, and the same
    /// snapshot must not undo what a later pane status said.
    pub fn observe_activity(&mut self, activity: &Activity) {
        if self
            .last_sequence
            .is_some_and(|seen| activity.sequence <= seen)
        {
            return;
        }
        self.last_sequence = Some(activity.sequence);
        if let Turn::Interrupted { at_ms } = self.turn {
            // The aborted turn ends after the Escape and says so (`waiting`): that is the
            // interrupt, not news. Only new work after it leaves the interrupted state.
            if activity.updated_at <= at_ms || activity.phase != Phase::Active {
                if activity.phase != Phase::Starting {
                    self.has_worked = true;
                }
                return;
            }
        }
        match activity.phase {
            Phase::Active => {
                self.has_worked = true;
                let since_ms = match &self.turn {
                    Turn::Active { since_ms, .. } => *since_ms,
                    _ => activity.updated_at,
                };
                self.turn = Turn::Active {
                    label: active_label(activity),
                    since_ms,
                };
            }
            // The child writes these when a turn has ended: it has worked.
            Phase::Waiting | Phase::Done => {
                self.has_worked = true;
                if !matches!(self.turn, Turn::Waiting { .. }) {
                    self.turn = Turn::Waiting {
                        since_ms: activity.updated_at,
                    };
                }
            }
            _ => {}
        }
    }

    /// Records an interrupt (Escape) sent at `at_ms`.
    pub fn interrupt(&mut self, at_ms: u64) {
        self.turn = Turn::Interrupted { at_ms };
    }

    /// Completion was observed: the process clock freezes here.
    pub fn finalize(&mut self, at_ms: u64) {
        self.finalizing_ms.get_or_insert(at_ms);
    }

    /// The run reached its terminal outcome.
    pub fn finish(&mut self, label: Label, at_ms: u64) {
        self.finalize(at_ms);
        self.terminal = Some(label);
    }

    /// The process clock: from launch to now, frozen at finalizing.
    pub fn elapsed_ms(&self, now_ms: u64) -> u64 {
        self.finalizing_ms
            .unwrap_or(now_ms)
            .saturating_sub(self.started_ms)
    }

    /// The projection at `now_ms`, with precedence finalizing → terminal → stalled → turn.
    pub fn project(&self, now_ms: u64) -> Projection {
        let mut projection = self.project_state(now_ms);
        if !matches!(
            projection.label,
            Label::Completed | Label::Stopped | Label::Failed | Label::Cancelled
        ) {
            match self.cancel {
                CancelState::None => {}
                CancelState::Requested => projection.label = Label::Cancelling,
                CancelState::Unconfirmed => projection.label = Label::CancelUnconfirmed,
            }
        }
        projection
    }

    fn project_state(&self, now_ms: u64) -> Projection {
        let plain = |label| Projection {
            label,
            detail: None,
            since_ms: None,
        };
        if let Some(label) = self.terminal {
            return Projection {
                label,
                detail: None,
                since_ms: self.finalizing_ms,
            };
        }
        if let Some(at) = self.finalizing_ms {
            return Projection {
                label: Label::Finalizing,
                detail: None,
                since_ms: Some(at),
            };
        }
        // If the confirmation of its exit times out, the specialist is `stalled` in an
        // unconfirmed-stop state (docs/lifecycle.md, "Persistent specialists").
        if let Some(since) = self.stop_unconfirmed {
            return Projection {
                label: Label::Stalled,
                detail: Some(STOP_UNCONFIRMED.into()),
                since_ms: Some(since),
            };
        }
        match self.pane {
            Pane::ReadError { first_failed_ms }
                if now_ms.saturating_sub(first_failed_ms) >= STALL_AFTER_MS =>
            {
                return Projection {
                    label: Label::Stalled,
                    detail: None,
                    since_ms: Some(first_failed_ms),
                };
            }
            Pane::Missing => return plain(Label::Stalled),
            _ => {}
        }
        // The child's own word that it waits for a person, unless an interrupt came after it.
        if let Some(input) = &self.input {
            let interrupted_since =
                matches!(self.turn, Turn::Interrupted { at_ms } if at_ms > input.since_ms);
            if !interrupted_since {
                return Projection {
                    label: Label::WaitingForInput,
                    detail: Some(input.reason.as_str().to_owned()),
                    since_ms: Some(input.since_ms),
                };
            }
        }
        match &self.turn {
            Turn::Interrupted { at_ms } => Projection {
                label: Label::Interrupted,
                detail: None,
                since_ms: Some(*at_ms),
            },
            Turn::Active { label, since_ms } => Projection {
                label: Label::Active,
                detail: label.clone(),
                since_ms: Some(*since_ms),
            },
            Turn::Blocked { since_ms } => Projection {
                label: Label::Blocked,
                detail: None,
                since_ms: Some(*since_ms),
            },
            Turn::Waiting { since_ms } => Projection {
                label: Label::Waiting,
                detail: None,
                since_ms: Some(*since_ms),
            },
            Turn::Unknown if self.process_confirmed => plain(Label::Running),
            Turn::Unknown => plain(Label::Starting),
        }
    }
}

/// Formats a duration as the widget does: `Ns` under a minute, `Mm` under an hour, else `Hh Mm`.
pub fn short_duration(ms: u64) -> String {
    let secs = ms / 1000;
    if secs < 60 {
        format!("{secs}s")
    } else if secs < 3600 {
        format!("{}m", secs / 60)
    } else {
        format!("{}h {}m", secs / 3600, (secs % 3600) / 60)
    }
}

/// Formats the process clock as `MM:SS` (minutes grow past 99 when they must).
pub fn clock(ms: u64) -> String {
    let secs = ms / 1000;
    format!("{:02}:{:02}", secs / 60, secs % 60)
}

/// One row of the widget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WidgetRow {
    /// The display name, already encoded as a host value.
    pub name: String,
    pub agent: Option<String>,
    pub elapsed_ms: u64,
    pub projection: Projection,
    /// What the run cost so far (`12.3k tok · $0.084`), once it used any.
    pub usage: Option<String>,
}

impl WidgetRow {
    fn left(&self) -> String {
        let usage = self
            .usage
            .as_deref()
            .map(|u| format!(" · {u}"))
            .unwrap_or_default();
        match &self.agent {
            Some(agent) => format!(
                " {}  {} ({agent}){usage} ",
                clock(self.elapsed_ms),
                self.name
            ),
            None => format!(" {}  {}{usage} ", clock(self.elapsed_ms), self.name),
        }
    }

    fn right(&self, now_ms: u64) -> String {
        let p = &self.projection;
        let dur = p
            .since_ms
            .map(|since| short_duration(now_ms.saturating_sub(since)))
            .unwrap_or_default();
        match p.label {
            Label::Active => {
                let detail = p
                    .detail
                    .as_deref()
                    .map(|d| format!(" · {}", encoded_detail(d)))
                    .unwrap_or_default();
                match dur.is_empty() {
                    true => format!(" active{detail} "),
                    false => format!(" active{detail} {dur} "),
                }
            }
            Label::Running => " running… ".to_owned(),
            Label::Finalizing => " finalizing… ".to_owned(),
            Label::Starting => " starting… ".to_owned(),
            Label::WaitingForInput if !dur.is_empty() => {
                format!(" waiting for input · since {dur} ")
            }
            label if dur.is_empty() => format!(" {} ", label.as_str()),
            label => format!(" {} {dur} ", label.as_str()),
        }
    }
}

/// A projection's detail for a host line or the widget: the child wrote it (its tool name), so it
/// is encoded, as every child-influenced value on a host line is, and bounded like the activity
/// field it came from.
pub fn encoded_detail(detail: &str) -> String {
    herd_core::escape::encode_host_value(detail, 200)
}

use herd_protocol::watch::Accent;

/// The terminal colour of the accent (256 colours: 33 blue, 214 amber).
fn sgr(accent: Accent) -> &'static str {
    match accent {
        Accent::Blue => "\x1b[38;5;33m",
        Accent::Amber => "\x1b[38;5;214m",
    }
}

/// `text` with its frame (the box-drawing characters) in `accent`, for a terminal. Row text
/// stays in the terminal's own colour; every line ends reset.
pub fn paint(accent: Accent, text: &str) -> String {
    const RESET: &str = "\x1b[0m";
    let mut out = String::with_capacity(text.len() * 2);
    for line in text.split_inclusive('\n') {
        let (body, newline) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        let mut framed = false;
        for c in body.chars() {
            let frame = matches!(c, '╭' | '╮' | '╰' | '╯' | '│' | '─');
            if frame != framed {
                out.push_str(if frame { sgr(accent) } else { RESET });
                framed = frame;
            }
            out.push(c);
        }
        if framed {
            out.push_str(RESET);
        }
        out.push_str(newline);
    }
    out
}

/// The widget as text, and its accent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Widget {
    pub text: String,
    pub accent: Accent,
    pub active: usize,
    pub open: usize,
}

/// The widget's default width in columns, as docs/lifecycle.md draws it.
pub const WIDGET_WIDTH: usize = 59;

/// Draws the widget above Pi's input: a rounded box `width` columns wide (wider when a row needs
/// it), a header `N active · M open`, one row per run still in flight. With nothing in flight
/// there is no box at all (the widget is cleared), not an empty one.
pub fn widget(rows: &[WidgetRow], now_ms: u64, width_cols: usize) -> Widget {
    if rows.is_empty() {
        return Widget {
            text: String::new(),
            accent: Accent::Amber,
            active: 0,
            open: 0,
        };
    }
    let active = rows
        .iter()
        .filter(|r| r.projection.label.is_active())
        .count();
    let open = rows.len() - active;
    let counts = match (active, open) {
        (a, 0) => format!("{a} active"),
        (0, o) => format!("{o} open"),
        (a, o) => format!("{a} active · {o} open"),
    };
    let cells: Vec<(String, String)> = rows.iter().map(|r| (r.left(), r.right(now_ms))).collect();
    let title = "─ Subagents ";
    let header_min = width(title) + width(&counts) + 4;
    let inner = cells
        .iter()
        .map(|(l, r)| width(l) + width(r) + 1)
        .chain([header_min, width_cols.saturating_sub(2)])
        .max()
        .unwrap_or(header_min);
    let mut text = String::new();
    let fill = inner - width(title) - width(&counts) - 3;
    text.push_str(&format!("╭{title}{} {counts} ─╮\n", "─".repeat(fill)));
    for (left, right) in &cells {
        let pad = inner - width(left) - width(right);
        text.push_str(&format!("│{left}{}{right}│\n", " ".repeat(pad)));
    }
    text.push_str(&format!("╰{}╯\n", "─".repeat(inner)));
    Widget {
        text,
        accent: if active == 0 {
            Accent::Amber
        } else {
            Accent::Blue
        },
        active,
        open,
    }
}

fn width(s: &str) -> usize {
    s.chars().count()
}

/// The label an active snapshot adds to `active`: the tool name, `provider`, `streaming`, or
/// the scope.
fn active_label(activity: &Activity) -> Option<String> {
    if activity.phase != Phase::Active {
        return None;
    }
    match activity.active_scope {
        Some(ActiveScope::Tool) => Some(
            activity
                .tool_name
                .clone()
                .unwrap_or_else(|| "tool".to_owned()),
        ),
        Some(scope) => Some(scope.as_str().to_owned()),
        None => activity.tool_name.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn activity(seq: u64, at: u64, phase: Phase, tool: Option<&str>) -> Activity {
        Activity {
            version: 1,
            running_child_id: "r1".into(),
            created_at: Some(1),
            updated_at: at,
            sequence: seq,
            latest_event: "tool_execution_start".into(),
            phase,
            agent_active: phase == Phase::Active,
            turn_active: phase == Phase::Active,
            provider_active: false,
            tool_active: tool.is_some(),
            active_scope: tool.map(|_| ActiveScope::Tool),
            active_since: None,
            waiting_since: None,
            turn_index: None,
            message_event_type: None,
            tool_call_id: None,
            tool_name: tool.map(Into::into),
            tool_started_at: None,
            tool_ended_at: None,
            input_count: None,
        }
    }

    #[test]
    fn starting_until_the_pane_is_present_then_running() {
        let mut life = Lifecycle::new(0);
        assert_eq!(life.project(10).label, Label::Starting);
        life.observe_pane(PaneObservation::Present(AgentStatus::Unknown), 20);
        assert_eq!(life.project(30).label, Label::Running);
    }

    #[test]
    fn herdr_status_drives_the_turn_and_activity_labels_it() {
        let mut life = Lifecycle::new(0);
        life.observe_pane(PaneObservation::Present(AgentStatus::Idle), 1);
        // Idle before any work is still starting up.
        assert_eq!(life.project(2).label, Label::Running);
        life.observe_pane(PaneObservation::Present(AgentStatus::Working), 3);
        life.observe_activity(&activity(1, 4, Phase::Active, Some("read")));
        let p = life.project(5);
        assert_eq!(
            (p.label, p.detail.as_deref()),
            (Label::Active, Some("read"))
        );
        life.observe_pane(PaneObservation::Present(AgentStatus::Idle), 8);
        assert_eq!(life.project(9).label, Label::Waiting);
        life.observe_pane(PaneObservation::Present(AgentStatus::Blocked), 10);
        assert_eq!(life.project(11).label, Label::Blocked);
    }

    #[test]
    fn a_snapshot_read_again_does_not_undo_a_later_pane_status() {
        // Supervision reads the activity file on every tick; an unchanged snapshot is no news.
        let mut life = Lifecycle::new(0);
        life.observe_pane(PaneObservation::Present(AgentStatus::Working), 1);
        let snapshot = activity(1, 2, Phase::Active, Some("read"));
        life.observe_activity(&snapshot);
        assert_eq!(life.project(3).label, Label::Active);
        life.observe_pane(PaneObservation::Present(AgentStatus::Idle), 4);
        assert_eq!(life.project(5).label, Label::Waiting);
        life.observe_activity(&snapshot);
        assert_eq!(life.project(6).label, Label::Waiting);
        // A new snapshot is news again.
        life.observe_activity(&activity(2, 7, Phase::Active, Some("edit")));
        assert_eq!(life.project(8).label, Label::Active);
    }

    #[test]
    fn a_waiting_snapshot_proves_work_for_a_status_taken_once() {
        // `herd-watch status` starts without history: the child's last snapshot says its turn
        // ended, and Herdr says blocked.
        let mut life = Lifecycle::new(0);
        life.observe_activity(&activity(9, 50, Phase::Waiting, None));
        assert_eq!(life.project(60).label, Label::Waiting);
        life.observe_pane(PaneObservation::Present(AgentStatus::Blocked), 70);
        assert_eq!(life.project(80).label, Label::Blocked);
    }

    #[test]
    fn blocked_or_done_before_any_work_is_not_yet_a_turn() {
        let mut life = Lifecycle::new(0);
        life.observe_pane(PaneObservation::Present(AgentStatus::Blocked), 1);
        assert_ne!(life.project(2).label, Label::Blocked);
        let mut life = Lifecycle::new(0);
        life.observe_pane(PaneObservation::Present(AgentStatus::Done), 1);
        assert_ne!(life.project(2).label, Label::Waiting);
        // Once it has worked, the same statuses count.
        life.observe_pane(PaneObservation::Present(AgentStatus::Blocked), 3);
        assert_eq!(life.project(4).label, Label::Blocked);
    }

    #[test]
    fn interrupt_ignores_stale_activity_and_herdr_lag() {
        let mut life = Lifecycle::new(0);
        life.observe_activity(&activity(5, 100, Phase::Active, Some("bash")));
        life.interrupt(200);
        life.observe_pane(PaneObservation::Present(AgentStatus::Working), 210);
        life.observe_activity(&activity(6, 150, Phase::Active, Some("bash")));
        assert_eq!(life.project(220).label, Label::Interrupted);
        // A lower sequence is ignored whatever its time.
        life.observe_activity(&activity(4, 300, Phase::Active, Some("bash")));
        assert_eq!(life.project(310).label, Label::Interrupted);
        life.observe_activity(&activity(7, 300, Phase::Active, Some("edit")));
        let p = life.project(310);
        assert_eq!(
            (p.label, p.detail.as_deref()),
            (Label::Active, Some("edit"))
        );
    }

    #[test]
    fn the_accent_paints_the_frame_and_resets_every_line() {
        let text = "╭─ Subagents ─╮\n│\"Scout\" · active│\n╰──╯\n";
        let painted = paint(Accent::Amber, text);
        assert_eq!(
            painted,
            "\x1b[38;5;214m╭─\x1b[0m Subagents \x1b[38;5;214m─╮\x1b[0m\n\
             \x1b[38;5;214m│\x1b[0m\"Scout\" · active\x1b[38;5;214m│\x1b[0m\n\
             \x1b[38;5;214m╰──╯\x1b[0m\n"
        );
        let plain: String = painted.replace("\x1b[38;5;214m", "").replace("\x1b[0m", "");
        assert_eq!(plain, text);
    }

    #[test]
    fn interrupted_holds_through_the_aborted_turns_own_end() {
        let mut life = Lifecycle::new(0);
        life.observe_activity(&activity(1, 100, Phase::Active, Some("bash")));
        life.interrupt(200);
        // The aborted turn's final snapshot, written just after the Escape.
        life.observe_activity(&activity(2, 250, Phase::Waiting, None));
        let p = life.project(2_000);
        assert_eq!((p.label, p.since_ms), (Label::Interrupted, Some(200)));
        // The process clock keeps running while the interrupted duration is shown.
        assert_eq!(life.elapsed_ms(2_000), 2_000);
        life.observe_activity(&activity(3, 3_000, Phase::Active, Some("read")));
        assert_eq!(life.project(3_100).label, Label::Active);
    }

    #[test]
    fn stall_only_from_failed_inspection_or_a_missing_pane() {
        let mut life = Lifecycle::new(0);
        life.observe_pane(PaneObservation::Present(AgentStatus::Working), 0);
        // Time alone never stalls.
        assert_eq!(life.project(10 * STALL_AFTER_MS).label, Label::Active);
        life.observe_pane(PaneObservation::ReadError, 1_000);
        life.observe_pane(PaneObservation::ReadError, 30_000);
        assert_eq!(life.project(60_999).label, Label::Active);
        assert_eq!(life.project(61_000).label, Label::Stalled);
        assert_eq!(notice(Label::Active, Label::Stalled), Some(Notice::Stalled));
        life.observe_pane(PaneObservation::Present(AgentStatus::Working), 62_000);
        assert_eq!(life.project(62_001).label, Label::Active);
        assert_eq!(
            notice(Label::Stalled, Label::Active),
            Some(Notice::Recovered)
        );
        assert_eq!(notice(Label::Stalled, Label::Completed), None);
        life.observe_pane(PaneObservation::Missing, 63_000);
        assert_eq!(life.project(63_001).label, Label::Stalled);
    }

    #[test]
    fn an_unconfirmed_stop_is_stalled_until_its_exit_is_observed() {
        let mut life = Lifecycle::new(0);
        life.observe_pane(PaneObservation::Present(AgentStatus::Idle), 1_000);
        life.stop_unconfirmed = Some(7_000);
        let p = life.project(8_000);
        assert_eq!(
            (p.label, p.detail.as_deref(), p.since_ms),
            (Label::Stalled, Some("stop unconfirmed"), Some(7_000))
        );
        assert_eq!(notice(Label::Waiting, p.label), Some(Notice::Stalled));
        life.finalize(9_000);
        assert_eq!(life.project(9_500).label, Label::Finalizing);
    }

    #[test]
    fn finalizing_freezes_the_clock_and_cancel_states_show() {
        let mut life = Lifecycle::new(1_000);
        life.finalize(5_000);
        assert_eq!(life.project(9_000).label, Label::Finalizing);
        assert_eq!(life.elapsed_ms(9_000), 4_000);
        life.cancel = CancelState::Unconfirmed;
        assert_eq!(life.project(9_000).label, Label::CancelUnconfirmed);
        life.finish(Label::Completed, 6_000);
        assert_eq!(life.project(9_000).label, Label::Completed);
        life.finish(Label::Stopped, 6_000);
        assert_eq!(life.project(9_000).label, Label::Stopped);
    }

    fn needs(seq: u64, state: ChildState, since: u64) -> NeedsInputFile {
        NeedsInputFile {
            version: 1,
            running_child_id: "r1".into(),
            sequence: seq,
            state,
            since,
            kind: (state == ChildState::Dialog).then(|| "confirm".into()),
            title: (state == ChildState::Dialog).then(|| "Delete?".into()),
        }
    }

    #[test]
    fn a_dialog_or_an_interactive_settled_run_waits_for_input_and_new_work_ends_it() {
        let mut life = Lifecycle::new(0);
        life.observe_activity(&activity(1, 10, Phase::Active, Some("bash")));
        life.observe_needs_input(&needs(1, ChildState::Dialog, 20), false);
        let p = life.project(30);
        assert_eq!(
            (p.label, p.detail.as_deref(), p.since_ms),
            (Label::WaitingForInput, Some("dialog"), Some(20))
        );
        assert_eq!(
            life.needs_input(30).and_then(|i| i.title.as_deref()),
            Some("Delete?")
        );
        // The same file read again changes nothing; the dialog closed is work again.
        life.observe_needs_input(&needs(1, ChildState::Working, 40), false);
        assert_eq!(life.project(45).label, Label::WaitingForInput);
        life.observe_needs_input(&needs(2, ChildState::Working, 40), false);
        assert_eq!(life.project(45).label, Label::Active);
        // A settled run waits for a person only in an interactive child.
        life.observe_needs_input(&needs(3, ChildState::Settled, 50), false);
        assert_ne!(life.project(55).label, Label::WaitingForInput);
        let mut interactive = Lifecycle::new(0);
        interactive.observe_needs_input(&needs(3, ChildState::Settled, 50), true);
        assert_eq!(
            interactive.project(55).detail.as_deref(),
            Some("turn settled")
        );
        // A slow child writes nothing: time alone never makes it wait.
        let mut slow = Lifecycle::new(0);
        slow.observe_activity(&activity(1, 10, Phase::Active, Some("bash")));
        assert_eq!(slow.project(10 * STALL_AFTER_MS).label, Label::Active);
        assert!(slow.needs_input(10 * STALL_AFTER_MS).is_none());
    }

    #[test]
    fn a_help_request_stands_until_new_work_is_given() {
        let mut life = Lifecycle::new(0);
        life.help_requested(Some(100));
        life.observe_needs_input(&needs(1, ChildState::Settled, 120), false);
        let p = life.project(130);
        assert_eq!(
            (p.label, p.detail.as_deref(), p.since_ms),
            (Label::WaitingForInput, Some("help request"), Some(100))
        );
        life.help_requested(Some(100));
        assert_eq!(life.project(140).since_ms, Some(100));
        life.help_requested(None);
        assert_ne!(life.project(150).label, Label::WaitingForInput);
    }

    #[test]
    fn durations_and_clock() {
        assert_eq!(short_duration(59_999), "59s");
        assert_eq!(short_duration(7 * 60_000 + 5), "7m");
        assert_eq!(short_duration(3_600_000 + 120_000), "1h 2m");
        assert_eq!(clock(83_000), "01:23");
    }

    fn row(
        name: &str,
        agent: &str,
        elapsed_s: u64,
        label: Label,
        detail: Option<&str>,
        since: Option<u64>,
    ) -> WidgetRow {
        WidgetRow {
            name: name.into(),
            agent: Some(agent.into()),
            elapsed_ms: elapsed_s * 1000,
            projection: Projection {
                label,
                detail: detail.map(Into::into),
                since_ms: since,
            },
            usage: None,
        }
    }

    /// The widget of one run in each open label, as the person sees it.
    #[test]
    fn every_open_label_draws_as_its_snapshot() {
        let now = 1_000_000;
        let ago = |s: u64| Some(now - s * 1000);
        let rows = [
            row(
                "Builder",
                "worker",
                3_725,
                Label::Active,
                Some("bash"),
                ago(12),
            ),
            row("Planner", "planner", 600, Label::Blocked, None, ago(95)),
            row("Scout", "scout", 59, Label::Waiting, None, ago(4)),
            row(
                "Asker",
                "worker",
                75,
                Label::WaitingForInput,
                Some("dialog"),
                ago(130),
            ),
            row("Fixer", "worker", 61, Label::Interrupted, None, ago(30)),
            row(
                "Reviewer",
                "reviewer",
                300,
                Label::Stalled,
                Some(STOP_UNCONFIRMED),
                ago(240),
            ),
            row("Tester", "worker", 42, Label::Finalizing, None, ago(1)),
            row("Runner", "worker", 7, Label::Cancelling, None, None),
            row("Stuck", "worker", 9, Label::CancelUnconfirmed, None, None),
            row("Fresh", "scout", 0, Label::Starting, None, None),
        ];
        insta::assert_snapshot!(widget(&rows, now, WIDGET_WIDTH).text);
    }

    #[test]
    fn a_child_written_tool_name_is_encoded_in_the_widget() {
        let rows = [row(
            "Scout",
            "scout",
            5,
            Label::Active,
            Some("read\u{1b}[2J\u{2028}x"),
            Some(0),
        )];
        let w = widget(&rows, 5_000, WIDGET_WIDTH);
        assert!(!w.text.contains(['\u{1b}', '\u{2028}']), "{:?}", w.text);
        assert!(w.text.contains(r"read\u001b[2J\u2028x"), "{:?}", w.text);
    }

    #[test]
    fn widget_matches_the_seed_drawing() {
        // The drawing of docs/lifecycle.md ("Status"), character for character: the rows are
        // pi-herdr-agents' drawing, whose header line is narrower than its rows; ours has the
        // rows' width.
        let now = 1_000_000;
        let rows = [
            row(
                "Scout: Auth",
                "scout",
                83,
                Label::Active,
                Some("read"),
                Some(now - 7 * 60_000),
            ),
            row(
                "Reviewer",
                "reviewer",
                45,
                Label::Stalled,
                None,
                Some(now - 4 * 60_000),
            ),
            row("Scout: DB", "scout", 12, Label::Starting, None, None),
        ];
        let w = widget(&rows, now, WIDGET_WIDTH);
        assert_eq!((w.active, w.open, w.accent), (2, 1, Accent::Blue));
        let expected = "\
╭─ Subagents ───────────────────────── 2 active · 1 open ─╮
│ 01:23  Scout: Auth (scout)             active · read 7m │
│ 00:45  Reviewer (reviewer)                   stalled 4m │
│ 00:12  Scout: DB (scout)                      starting… │
╰─────────────────────────────────────────────────────────╯
";
        assert_eq!(w.text, expected);
        let lines: Vec<usize> = w.text.lines().map(width).collect();
        assert!(
            lines.windows(2).all(|p| p[0] == p[1]),
            "every line has the same width: {lines:?}"
        );
    }

    #[test]
    fn widget_with_nothing_in_flight_draws_no_box() {
        let w = widget(&[], 0, WIDGET_WIDTH);
        assert_eq!(w.text, "");
        assert_eq!((w.active, w.open), (0, 0));
    }

    #[test]
    fn widget_is_amber_when_nothing_is_active() {
        let rows = [row(
            "Reviewer",
            "reviewer",
            45,
            Label::Waiting,
            None,
            Some(0),
        )];
        let w = widget(&rows, 5_000, WIDGET_WIDTH);
        assert_eq!(w.accent, Accent::Amber);
        assert!(
            w.text.starts_with("╭─ Subagents ")
                && w.text.lines().next().unwrap().ends_with(" 1 open ─╮")
        );
    }
}
