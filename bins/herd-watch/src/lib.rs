//! `herd-watch`: supervise children — status, widget, stall watchdog, result delivery exactly
//! once, and control (cancel, interrupt, stop, steer).

mod backoff;
pub mod budget;
pub mod control;
pub mod crash;
pub mod delivery;
pub mod evidence;
pub mod fallback;
pub mod finish;
mod homecoming;
mod hosted;
pub mod launch;
pub mod message;
pub mod notify;
pub mod projection;
pub mod relay;
pub mod status;
pub mod supervise;
pub mod tasks;
pub mod timeout;
pub mod transcript;
pub mod usage;
mod wake;

pub use crash::{CRASH_AT_ENV, CRASH_POINTS, FALLBACK_CRASH_POINT};
// The name the supervisor's and the finish's call sites use.
pub(crate) use crash::point as crash_point;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use herd_cli::{ArtifactsArgs, Output};
use herd_core::{Error, exit};
use herd_protocol::layout::Artifacts;
use herd_protocol::run::{self, RunRecord, Selector};
use herd_protocol::watch::SteerMode;
use herd_protocol::watch::{Interrupted, WatchCancel, WatchInterrupt, WatchWait};

/// Supervise herd children and deliver their results exactly once.
#[derive(Debug, Parser)]
#[command(name = "herd-watch", version, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    pub artifacts: ArtifactsArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// One run, by id or by exact unambiguous name.
#[derive(Debug, Clone, clap::Args)]
#[command(group = clap::ArgGroup::new("target").required(true))]
pub struct Target {
    /// The run id.
    #[arg(long, group = "target")]
    pub run: Option<String>,
    /// The exact, unambiguous display name.
    #[arg(long, group = "target")]
    pub name: Option<String>,
}

/// What `notify` tells of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum NotifyKindArg {
    Completed,
    Failed,
    Waiting,
}

#[derive(Debug, Clone, clap::Args)]
pub struct Control {
    #[command(flatten)]
    pub target: Target,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Supervise one run until it is terminal, deliver its result and print it.
    ///
    /// Exits 0 completed, 1 failed or completed with its check rejected, 4 completed with a check
    /// that gave no answer, 5 cancelled, 6 the child asked for help, 130 on Ctrl-C: the wait
    /// stops, the child keeps running, and stderr says so and how to wait again. A run with an acceptance
    /// gate has an `Acceptance:` line and `details.acceptance`; a rejected explicit gate fails
    /// the run (exit 1), an inferred one is only reported. A verify command already run on the
    /// same tree and environment is not run again: its earlier result says `reused: true`.
    Wait {
        #[command(flatten)]
        target: Target,
        #[arg(long)]
        json: bool,
    },
    /// Supervise every run of the artifacts directory, printing events as JSON Lines.
    Follow {
        /// Keep running when no run is left.
        #[arg(long)]
        forever: bool,
        /// Only runs a top-level session launched (no parent run), not the children's own.
        #[arg(long, conflicts_with = "launched_by")]
        top_level: bool,
        /// Only runs the child with this run id launched.
        #[arg(long, value_name = "RUN_ID")]
        launched_by: Option<String>,
        /// Mark a result delivered only when its key comes back on stdin as one line
        /// `{"ack":"<key>"}`; stdin's end stops the follower. Until then the result waits on disk.
        #[arg(long)]
        ack: bool,
        #[arg(long)]
        json: bool,
    },
    /// Show the status projection of one run or all runs.
    ///
    /// A persistent specialist whose stop was published and whose exit was not confirmed
    /// within the stop's 5 s is `stalled` (detail `stop unconfirmed`) until it exits or is
    /// stopped again.
    Status {
        #[arg(long, conflicts_with = "name")]
        run: Option<String>,
        #[arg(long)]
        name: Option<String>,
        /// Draw the widget as Pi shows it.
        #[arg(long)]
        widget: bool,
        /// Show the run's transcript as a person reads it: a heading per speaker, the messages'
        /// own line breaks, control characters shown as `\u{…}`; `--json` keeps one encoded line
        /// per message. A run on another machine's transcript is read from its host.
        #[arg(long)]
        transcript: bool,
        /// Lines of transcript to show (at most 500); with `--json`, messages.
        #[arg(long, default_value_t = 50)]
        lines: usize,
        /// The runs of every artifacts directory this user launched from on this machine (the
        /// index under the per-user state directory that herd-launch keeps, directories that are
        /// gone dropped), grouped by directory; `--json` rows name theirs in `artifacts`.
        #[arg(long, conflicts_with_all = ["run", "name", "widget", "transcript"])]
        all: bool,
        #[arg(long)]
        json: bool,
    },
    /// Cancel a running non-persistent child.
    Cancel(Control),
    /// Send Escape to a running child's active turn.
    Interrupt(Control),
    /// Stop a persistent specialist after its active task finishes.
    Stop(Control),
    /// Steer a running child with a message.
    ///
    /// Every request gets a receipt with its request id, kept in `runs/<id>.steering.json` (the
    /// last 20 requests) and printed: `delivered` (a Pi child's Pi took the message, seen in its
    /// activity within 3 s of the keys; a child with no Pi had the keys typed into its input),
    /// `pending` (typed, but its Pi was not seen taking it within 3 s: the receipt's note says so),
    /// `queued` (held, at most 20, for the next turn boundary, where the watcher types it and marks
    /// it delivered), `scheduled` (held so because the child has not started yet: no runner
    /// identity is recorded) or `failed` with the reason, and then the exit code of that reason: 7 the
    /// queue is full or the child has ended (nothing is typed or queued), 4 the surface did not
    /// answer, 3 the keys may have gone out. Keys go out only once the child is proven the live
    /// program its pane's input reaches: no exit record, its recorded identity alive, no sentinel
    /// on its screen, and on Herdr its runner in the pane's foreground, not the shell. Delivered
    /// means the child's Pi took the message, not that the model followed it. A message refused for
    /// its text (exit 2) records nothing.
    Steer {
        #[command(flatten)]
        target: Target,
        /// The message: one or more lines, not empty; any other control character is refused.
        #[arg(long)]
        message: String,
        #[arg(long, value_enum, default_value_t = SteerMode::Steer)]
        mode: SteerMode,
        #[arg(long)]
        json: bool,
    },
    /// What the runs of the artifacts directory cost, by model and by run.
    ///
    /// Each session file is counted once, from the `usage` Pi records on its entries (assistant
    /// messages by `provider/model`, cache warming, tool and summary usage), with the newest run
    /// that uses it: a resurrected run continues the lost run's session; a run's
    /// row also shows its nested children rolled up, and a persistent specialist's row each
    /// task's part. A cost Pi did not record, or recorded as zero for tokens used (a model it
    /// has no price for), is unknown, and so is every sum it is part of. Sessions are read
    /// incrementally: `runs/<id>.usage.json` keeps where the last read stopped.
    Usage {
        /// Only runs created at or after this: a duration back from now (`30m`, `2h`, `1d`), an
        /// ISO-8601 UTC time, or milliseconds since the epoch.
        #[arg(long, value_name = "WHEN")]
        since: Option<String>,
        /// Every artifacts directory this user launched from on this machine (the index that
        /// `status --all` reads), each session file still counted once; rows name their
        /// directory.
        #[arg(long)]
        all: bool,
        #[arg(long)]
        json: bool,
    },
    /// Tell the person at the parent that a run completed, failed or waits for input.
    ///
    /// On the parent's surface, from this process's environment: Herdr's notification (asked
    /// again while Herdr shows another, within 6 s), tmux's message and the bell on every client
    /// of the parent's session, and the terminal's own desktop notification (OSC 777 or 9) where the terminal is known to
    /// have one. Nothing is shown while a person looks at the run's pane (`looking`). It tells
    /// once per call: when to call it is the parent extension's (once per transition, a cooldown
    /// per run, `HERD_NOTIFY=0` for none).
    Notify {
        #[command(flatten)]
        target: Target,
        #[arg(long, value_enum)]
        kind: NotifyKindArg,
        #[arg(long)]
        json: bool,
    },
    /// Relay the results of the runs on another machine (started by `follow` and `wait`; one per
    /// host): the host's `herd-watch follow --json --ack` over ssh, each result settled here
    /// before it is acknowledged there.
    #[command(hide = true)]
    Relay {
        #[arg(long)]
        host: String,
    },
}

impl Cli {
    fn json(&self) -> bool {
        match &self.command {
            Command::Wait { json, .. }
            | Command::Follow { json, .. }
            | Command::Status { json, .. }
            | Command::Usage { json, .. }
            | Command::Notify { json, .. } => *json,
            Command::Steer { json, .. } => *json,
            Command::Relay { .. } => false,
            Command::Cancel(c) | Command::Interrupt(c) | Command::Stop(c) => c.json,
        }
    }
}

/// The entry point of the binary.
pub fn main_impl(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let code = herd_cli::main(args, Cli::json, run);
    // After the output: a finished pane still being closed is not worth a late answer.
    control::join_pane_closers();
    code
}

pub fn run(cli: Cli) -> Result<Output, Error> {
    let artifacts = cli.artifacts.resolve()?;
    match cli.command {
        Command::Wait { target, json } => wait(&artifacts, &target, json),
        Command::Follow {
            forever,
            top_level,
            launched_by,
            ack,
            json,
        } => {
            let launcher = match (top_level, launched_by) {
                (true, _) => supervise::Launcher::TopLevel,
                (false, Some(id)) => supervise::Launcher::Run(id),
                (false, None) => supervise::Launcher::Anyone,
            };
            follow(&artifacts, launcher, forever, ack, json)
        }
        Command::Status {
            run,
            name,
            widget,
            transcript,
            lines,
            all,
            json: _,
        } => {
            if all {
                return status::status_all(&artifacts);
            }
            let selector = match (run.as_deref(), name.as_deref()) {
                (None, None) => None,
                (run, name) => Some(Selector::from_flags(run, name)?),
            };
            status::status(
                &artifacts,
                selector.as_ref(),
                widget,
                transcript.then_some(lines),
            )
        }
        Command::Relay { host } => relay::run(&artifacts, &host),
        Command::Notify { target, kind, .. } => {
            let record = find(&artifacts, &target)?;
            let kind = match kind {
                NotifyKindArg::Completed => herd_protocol::watch::NotifyKind::Completed,
                NotifyKindArg::Failed => herd_protocol::watch::NotifyKind::Failed,
                NotifyKindArg::Waiting => herd_protocol::watch::NotifyKind::Waiting,
            };
            notify::notify(&artifacts, &record, kind)
        }
        Command::Usage {
            since,
            all,
            json: _,
        } => {
            let since_ms = since
                .as_deref()
                .map(|s| usage::parse_since(s, herd_core::time::now_ms()))
                .transpose()?;
            let report = match (all, herd_protocol::artifacts_index::Index::of_user()) {
                (true, Some(index)) => {
                    usage::report_of(&index.directories(Some(&artifacts))?, since_ms, true)?
                }
                _ => usage::report(&artifacts, since_ms)?,
            };
            let human = usage::human(&report);
            Ok(Output::ok(report, human))
        }
        Command::Cancel(c) => cancel(&artifacts, &c.target),
        Command::Interrupt(c) => interrupt(&artifacts, &c.target),
        Command::Stop(c) => {
            let record = find(&artifacts, &c.target)?;
            if let Some(remote) = &record.extra.remote {
                return relay::forward(&record, remote, &["stop"]);
            }
            status::stop(&artifacts, &record)
        }
        Command::Steer {
            target,
            message,
            mode,
            json: _,
        } => steer(&artifacts, &target, &message, mode),
    }
}

/// `herd-watch cancel`: a run here, or forwarded to the host of a run on another machine.
fn cancel(artifacts: &Artifacts, target: &Target) -> Result<Output, Error> {
    let record = find_or_ended(artifacts, target)?;
    if let Some(remote) = &record.extra.remote {
        return relay::forward(&record, remote, &["cancel"]);
    }
    let reply = control::cancel(artifacts, &record)?;
    let json = WatchCancel {
        run_id: record.run_id.clone(),
        name: record.name.clone(),
        status: reply.status,
        requested_at_ms: reply.requested_at_ms,
        error: reply.error.clone(),
    };
    let mut human = format!("cancel {}: {}", quoted(&record.name), reply.status.as_str());
    if let Some(error) = &reply.error {
        human.push_str(&format!(
            " ({})",
            herd_core::escape::encode_host_value(error, 500)
        ));
    }
    Ok(Output::ok(json, human).with_exit(reply.status.exit_code()))
}

/// `herd-watch interrupt`: Escape to the run's active turn.
fn interrupt(artifacts: &Artifacts, target: &Target) -> Result<Output, Error> {
    let record = find(artifacts, target)?;
    if let Some(remote) = &record.extra.remote {
        return relay::forward(&record, remote, &["interrupt"]);
    }
    let at = control::interrupt(artifacts, &record)?;
    let json = WatchInterrupt {
        run_id: record.run_id.clone(),
        name: record.name.clone(),
        status: Interrupted::Interrupted,
        at_ms: at,
    };
    Ok(Output::ok(
        json,
        format!("interrupted {}", quoted(&record.name)),
    ))
}

/// `herd-watch steer`: a message to a running child, with its receipt.
fn steer(
    artifacts: &Artifacts,
    target: &Target,
    message: &str,
    mode: SteerMode,
) -> Result<Output, Error> {
    let record = find(artifacts, target)?;
    if let Some(remote) = &record.extra.remote {
        let mode = match mode {
            SteerMode::Steer => "steer",
            SteerMode::FollowUp => "follow-up",
            SteerMode::Auto => "auto",
        };
        let args = ["steer", "--message", message, "--mode", mode];
        return relay::forward(&record, remote, &args);
    }
    // Only a turn known to be in progress holds `auto` messages back.
    let label = status::project(artifacts, &record).projection.label;
    let active = matches!(
        label,
        herd_protocol::watch::Label::Active | herd_protocol::watch::Label::Blocked
    );
    let receipt = control::steer(artifacts, &record, message, mode, active)?;
    let json = receipt.document(&record.run_id, &record.name);
    let mut human = format!(
        "steer {}: {} (request {})",
        quoted(&record.name),
        receipt.state.as_str(),
        receipt.request_id
    );
    if let Some(error) = &receipt.error {
        human.push_str(": ");
        human.push_str(&herd_core::escape::encode_host_value(error, 500));
    }
    if let Some(note) = &receipt.note {
        human.push_str(": ");
        human.push_str(note);
    }
    // A failed receipt exits as its error would: 7 for a full queue, 4 for a surface
    // that is not there, 3 when the keys may have gone out.
    let code = receipt
        .error_code
        .as_deref()
        .and_then(|code| {
            herd_core::ErrorCode::ALL
                .into_iter()
                .find(|c| c.as_str() == code)
        })
        .map_or(exit::SUCCESS, herd_core::ErrorCode::exit_code);
    Ok(Output::ok(json, human).with_exit(code))
}

fn quoted(name: &str) -> String {
    herd_core::escape::json_string(&herd_core::escape::abbreviate_name(name))
}

/// [`find`], and for a name no run in flight has, the newest ended run of that name: a cancel
/// that comes after the end answers `already-terminal` rather than "no run named".
fn find_or_ended(artifacts: &Artifacts, target: &Target) -> Result<RunRecord, Error> {
    match find(artifacts, target) {
        Err(err) if err.code == herd_core::ErrorCode::NotFound && target.run.is_none() => {
            let Some(name) = target.name.as_deref() else {
                return Err(err);
            };
            let newest = artifacts
                .run_ids()?
                .into_iter()
                .filter_map(|id| RunRecord::load(artifacts, &id).ok())
                .filter(|r| r.name == name)
                .max_by_key(|r| r.created_at_ms);
            newest.ok_or(err)
        }
        other => other,
    }
}

fn find(artifacts: &Artifacts, target: &Target) -> Result<RunRecord, Error> {
    let selector = Selector::from_flags(target.run.as_deref(), target.name.as_deref())?;
    // A name addresses a run still in flight: one whose result is not settled.
    run::find(artifacts, &selector, |r| {
        delivery::load(artifacts, &r.run_id)
            .ok()
            .flatten()
            .is_none()
    })
}

fn wait(artifacts: &Artifacts, target: &Target, json: bool) -> Result<Output, Error> {
    let record = match Selector::from_flags(target.run.as_deref(), target.name.as_deref())? {
        Selector::Id(id) => RunRecord::load(artifacts, id)?,
        selector @ Selector::Name(_) => run::find(artifacts, &selector, |_| true)?,
    };
    say_on_interrupt(&record);
    let result = supervise::wait_for(
        artifacts,
        &record.run_id,
        supervise::Options::default(),
        |event| {
            if !json {
                if let supervise::Event::Stalled { line, .. }
                | supervise::Event::Recovered { line, .. } = event
                {
                    herd_cli::diagnostic(line);
                }
            }
        },
    )?;
    let doc = WatchWait::of(&result);
    // `--json` carries the message as the parent's model receives it; a person reads it without
    // the lines written for the model.
    let human = herd_core::escape::for_people(&result.message);
    Ok(Output::ok(doc, human).with_exit(result.exit_code()))
}

/// On Ctrl-C (or SIGTERM) while `wait` waits: the child is not this process's, so it goes on,
/// and the person is told so and how to wait again, before the exit with 128 + the signal
/// (130 for Ctrl-C). Nothing of the run is changed: whatever was settled stays on disk for the
/// next watcher, as after any kill.
fn say_on_interrupt(record: &RunRecord) {
    let Ok(signals) = herd_core::subprocess::termination_signals() else {
        return;
    };
    let note = interrupted_note(&record.name, &record.run_id);
    std::thread::spawn(move || {
        if let Ok(signal) = signals.recv() {
            herd_cli::diagnostic(&note);
            std::process::exit(128 + signal);
        }
    });
}

/// `Builder keeps running; `herd-watch wait --name Builder` picks it up`: the name as a shell
/// word when it is one, else the run id.
fn interrupted_note(name: &str, run_id: &str) -> String {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    let again = match plain {
        true => format!("herd-watch wait --name {name}"),
        false => format!("herd-watch wait --run {run_id}"),
    };
    format!(
        "{} keeps running; `{again}` picks it up",
        herd_core::escape::encode_host_value(name, 80)
    )
}

fn follow(
    artifacts: &Artifacts,
    launcher: supervise::Launcher,
    forever: bool,
    ack: bool,
    json: bool,
) -> Result<Output, Error> {
    let mut supervisor =
        supervise::Supervisor::new(artifacts.clone(), None, supervise::Options::default())
            .launched_by(launcher);
    let acks = ack.then(|| {
        delivery::await_acknowledgements();
        acknowledgements(supervisor.alarm())
    });
    let scan_interval = supervise::Options::default().reconcile_interval;
    let mut last_scan: Option<std::time::Instant> = None;
    let mut woke = true;
    loop {
        if let Some(acks) = &acks {
            loop {
                match acks.try_recv() {
                    Ok(Ack::Key(key)) => {
                        if let Err(err) = delivery::acknowledge(artifacts, &key) {
                            herd_cli::diagnostic(&format!("ignored acknowledgement: {err}"));
                        }
                    }
                    Ok(Ack::Malformed(line)) => herd_cli::diagnostic(&format!(
                        "ignored a line that is not {{\"ack\":\"<key>\"}}: {}",
                        herd_core::escape::encode_host_value(&line, 200)
                    )),
                    // The consumer is gone: nothing emitted now could reach it.
                    Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                        return Ok(Output::streamed(exit::SUCCESS));
                    }
                    Err(std::sync::mpsc::TryRecvError::Empty) => break,
                }
            }
        }
        // New runs are looked for when a file event arrived, else once per interval.
        if woke || last_scan.is_none_or(|at| at.elapsed() >= scan_interval) {
            supervisor.scan()?;
            last_scan = Some(std::time::Instant::now());
        }
        let events = supervisor.tick(|result| {
            let event = supervise::Event::Result(Box::new(result.clone()));
            herd_cli::emit_line(json, &event.to_json(), &event.human())
        })?;
        for event in &events {
            match event {
                // Results were emitted by the delivery itself, before they were marked.
                supervise::Event::Result(_) => {}
                other => {
                    herd_cli::emit_line(json, &other.to_json(), &other.human()).map_err(|e| {
                        Error::new(
                            herd_core::ErrorCode::Unavailable,
                            format!("cannot write an event: {e}"),
                        )
                    })?;
                }
            }
        }
        if supervisor.is_idle() && !forever && delivery::unacknowledged() == 0 {
            // A run may have appeared since the scan (a model fallback's successor).
            supervisor.scan()?;
            if supervisor.is_idle() {
                break;
            }
        }
        woke = supervisor.sleep();
    }
    Ok(Output::streamed(exit::SUCCESS))
}

/// A line of `follow --ack`'s stdin.
enum Ack {
    Key(String),
    Malformed(String),
}

/// The longest acknowledgement line read; a longer one is malformed.
const ACK_LINE_LIMIT: u64 = 4096;

/// Reads acknowledgements from stdin on a thread of their own; the channel disconnects at the
/// end of stdin (or a read error).
fn acknowledgements(alarm: Option<wake::Alarm>) -> std::sync::mpsc::Receiver<Ack> {
    use std::io::{BufRead, Read};
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // Each acknowledgement, and the end of the input, wakes the loop to take it in.
        let ring = || alarm.as_ref().map(wake::Alarm::ring);
        let mut stdin = std::io::stdin().lock();
        loop {
            let mut line = Vec::new();
            match (&mut stdin)
                .take(ACK_LINE_LIMIT)
                .read_until(b'\n', &mut line)
            {
                Ok(0) | Err(_) => {
                    drop(tx);
                    ring();
                    return;
                }
                Ok(_) => {}
            }
            if line.last() != Some(&b'\n') && line.len() as u64 == ACK_LINE_LIMIT {
                // Skip the rest of an overlong line.
                let _ = stdin.skip_until(b'\n');
            }
            let text = String::from_utf8_lossy(&line).trim().to_owned();
            if text.is_empty() {
                continue;
            }
            let ack = match serde_json::from_str::<herd_protocol::watch::WatchAck>(&text) {
                Ok(line) => Ack::Key(line.ack),
                Err(_) => Ack::Malformed(text),
            };
            if tx.send(ack).is_err() {
                return;
            }
            ring();
        }
    });
    rx
}
