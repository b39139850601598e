//! herd-watch's history rows (issue 15): `status --widget` and `wait --name` in an artifacts
//! directory holding 5,000 finished runs (quick: 500) beside 10 open ones, against the same
//! commands in a directory holding the same 10 open runs and no history.
//!
//! Both directories get 10 real children (`herd-launch spawn --surface process --runner exec --
//! sleep …`). The history is made from one real run: a child running `true`, launched, waited
//! for and delivered, whose `runs/` files (record, events, result, delivered marker, launcher and
//! leader identities, runner exit, deliver lock) are copied under 5,000 new ids with the id
//! rewritten inside them, so the directory holds what 5,000 delivered runs leave there.
//!
//! `status --widget --json` is timed in both directories, interleaved round by round. For
//! `wait`, each round first launches (untimed) a child running `true` under a fresh name in each
//! directory, then times `herd-watch wait --name <it> --json` in both, alternating which goes
//! first: the name lookup, the supervision until the result is settled, and its delivery.

use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_core::identity::{self, Judgement, Record};
use herd_core::subprocess::Command;
use herd_protocol::layout::{Artifacts, SessionFiles};
use serde_json::Value;

use crate::bench::{Ctx, Goal, Measured, Quantity, Row, median, progress, timed};
use crate::bench_launch::{Scratch, spawn_once};

const COMPONENT: &str = "herd-watch";
/// The open runs in both directories.
const OPEN: usize = 10;
/// The budget of one herd call.
const CALL_BUDGET: Duration = Duration::from_secs(120);

pub const STATUS_ID: &str = "watch.status_history";
pub const WAIT_ID: &str = "watch.wait_history";

pub fn rows(ctx: &Ctx) -> Vec<Row> {
    let finished = ctx.size(5_000, 500);
    let status_figure = format!("status --widget, {OPEN} open + {finished} finished runs");
    let wait_figure = format!("wait --name, {OPEN} open + {finished} finished runs");
    let goal = Goal::RatioAtMost(1.2);
    let want_status = ctx.wants(STATUS_ID);
    let want_wait = ctx.wants(WAIT_ID);
    if !want_status && !want_wait {
        return Vec::new();
    }
    let fixture = (|| {
        let launch = ctx.binary("herd-launch")?;
        let watch = ctx.binary("herd-watch")?;
        Fixture::new(launch, watch, finished)
    })();
    let (status, wait) = match &fixture {
        Ok(fx) => (
            want_status.then(|| fx.status(ctx.rounds)),
            want_wait.then(|| fx.wait(ctx.rounds)),
        ),
        Err(e) => (
            want_status.then(|| Err(e.clone())),
            want_wait.then(|| Err(e.clone())),
        ),
    };
    if let Ok(fx) = &fixture {
        fx.stop();
    }
    let mut rows = Vec::new();
    if let Some(status) = status {
        rows.push(Row::from_result(
            STATUS_ID,
            COMPONENT,
            status_figure,
            goal,
            status,
        ));
    }
    if let Some(wait) = wait {
        rows.push(Row::from_result(
            WAIT_ID,
            COMPONENT,
            wait_figure,
            goal,
            wait,
        ));
    }
    rows
}

/// The two directories and their children.
struct Fixture {
    scratch: Scratch,
    launch: PathBuf,
    watch: PathBuf,
    /// The directory without history.
    bare: PathBuf,
    /// The directory with history.
    full: PathBuf,
    finished: usize,
    /// The session files of the open children, to stop them through their identities.
    sessions: Vec<PathBuf>,
}

impl Fixture {
    fn new(launch: PathBuf, watch: PathBuf, finished: usize) -> Result<Fixture, String> {
        let scratch = Scratch::new("herd-bench-history")?;
        let bare = scratch.artifacts("bare")?;
        let full = scratch.artifacts("history")?;
        let mut fx = Fixture {
            scratch,
            launch,
            watch,
            bare,
            full,
            finished,
            sessions: Vec::new(),
        };
        progress(&format!(
            "herd-watch: {OPEN} open runs in two directories, {finished} finished runs in one"
        ));
        let made = fx.populate();
        if made.is_err() {
            fx.stop();
        }
        made.map(|()| fx)
    }

    fn populate(&mut self) -> Result<(), String> {
        let (bare, full) = (self.bare.clone(), self.full.clone());
        // The history first, from one real delivered run.
        let template = self.spawn(&full, "template", &["true"])?;
        let out = self.watch_cmd(&full, &["wait", "--run", &template, "--json"]);
        let (_, done) = timed(&out)?;
        if done.code != Some(0) {
            return Err(format!(
                "the template run did not complete: {}",
                done.stderr.text()
            ));
        }
        copy_history(&Artifacts::new(&full), &template, self.finished)?;
        for dir in [&bare, &full] {
            for i in 0..OPEN {
                let id = self.spawn(dir, &format!("open {i}"), &["sleep", "900"])?;
                let record = herd_protocol::run::RunRecord::load(&Artifacts::new(dir), &id)
                    .map_err(|e| e.message)?;
                self.sessions.push(PathBuf::from(record.session_file));
            }
        }
        Ok(())
    }

    /// Launches `argv` named `name` into `artifacts`; returns its run id.
    fn spawn(&self, artifacts: &Path, name: &str, argv: &[&str]) -> Result<String, String> {
        let cmd = self
            .scratch
            .spawn_named(&self.launch, artifacts, name, argv)?;
        let (_, doc) = spawn_once(&cmd)?;
        Ok(doc["run_id"].as_str().unwrap_or_default().to_owned())
    }

    fn watch_cmd(&self, artifacts: &Path, args: &[&str]) -> Command {
        Command::new(&self.watch, CALL_BUDGET)
            .cwd(self.scratch.root().join("work"))
            .env("HOME", self.scratch.root().join("home"))
            .env_remove("HERD_ARTIFACTS")
            .env_remove_prefix("PI_SUBAGENT_")
            .stdin_null()
            .arg("--artifacts")
            .arg(artifacts)
            .args(args)
    }

    /// `status --widget --json`, checked to show the open runs only.
    fn status(&self, rounds: usize) -> Result<Measured, String> {
        let run = |dir: &Path| -> Result<Duration, String> {
            let (took, out) = timed(&self.watch_cmd(dir, &["status", "--widget", "--json"]))?;
            let doc: Value = serde_json::from_slice(&out.stdout.bytes)
                .map_err(|e| format!("status printed no JSON: {e}"))?;
            let shown = doc["runs"].as_array().map_or(0, Vec::len);
            if out.code != Some(0) || shown != OPEN {
                return Err(format!(
                    "status --widget showed {shown} runs, not {OPEN}: {}",
                    out.stderr.text()
                ));
            }
            Ok(took)
        };
        run(&self.full)?;
        run(&self.bare)?;
        let (mut herd, mut base) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            herd.push(run(&self.full)?);
            base.push(run(&self.bare)?);
        }
        // The history listing, for scale: plain `status` reads every record.
        let (listing, _) = timed(&self.watch_cmd(&self.full, &["status", "--json"]))?;
        Ok(Measured::new(Quantity::ms(median(&herd)), rounds)
            .against("no history", Quantity::ms(median(&base)))
            .note(format!(
                "plain `status --json` (the history listing) of the same directory took {:.0} ms",
                listing.as_secs_f64() * 1000.0
            )))
    }

    /// `wait --name` of a child running `true`, launched untimed just before.
    fn wait(&self, rounds: usize) -> Result<Measured, String> {
        let run = |dir: &Path, name: &str| -> Result<Duration, String> {
            let id = self.spawn(dir, name, &["true"])?;
            let (took, out) = timed(&self.watch_cmd(dir, &["wait", "--name", name, "--json"]))?;
            let doc: Value = serde_json::from_slice(&out.stdout.bytes)
                .map_err(|e| format!("wait printed no JSON: {e}"))?;
            if out.code != Some(0) || doc["run_id"] != id.as_str() {
                return Err(format!(
                    "wait --name {name} did not answer run {id}: {}",
                    out.stderr.text()
                ));
            }
            Ok(took)
        };
        run(&self.full, "warm-up")?;
        run(&self.bare, "warm-up")?;
        let (mut herd, mut base) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            let name = format!("waited {round}");
            if round % 2 == 0 {
                herd.push(run(&self.full, &name)?);
                base.push(run(&self.bare, &name)?);
            } else {
                base.push(run(&self.bare, &name)?);
                herd.push(run(&self.full, &name)?);
            }
        }
        Ok(Measured::new(Quantity::ms(median(&herd)), rounds)
            .against("no history", Quantity::ms(median(&base))))
    }

    /// Stops every open child through its recorded identity.
    fn stop(&self) {
        let records: Vec<Record> = self
            .sessions
            .iter()
            .filter_map(|s| SessionFiles::new(s).read::<Record>().ok()?)
            .collect();
        for record in &records {
            identity::terminate(record, libc::SIGTERM);
        }
        for record in &records {
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            if identity::wait_exited(record, deadline) == Judgement::Alive {
                identity::terminate(record, libc::SIGKILL);
            }
        }
    }
}

/// Copies the per-run files of the delivered run `template` under `n` new ids.
fn copy_history(art: &Artifacts, template: &str, n: usize) -> Result<(), String> {
    let mut files = Vec::new();
    for (index, path) in art.run(template).every_path().enumerate() {
        match std::fs::read_to_string(&path) {
            Ok(text) => files.push((index, text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        }
    }
    for i in 0..n {
        let id = format!("hist{i:06}");
        let paths: Vec<_> = art.run(&id).every_path().collect();
        for (index, text) in &files {
            std::fs::write(&paths[*index], text.replace(template, &id).as_bytes())
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}
