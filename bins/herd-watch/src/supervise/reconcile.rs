//! Reconciliation: what a run's surface, or its recorded identity alone, says of the child.

use std::time::Instant;

use herd_protocol::layout::Artifacts;
use herd_surface::{Inspection, Presence, Surface, Target};

use crate::finish::Observed;
use crate::projection::PaneObservation;
use herd_surface::AgentStatus;

use super::Tracked;

/// Queries the run's surface: presence proves the child is there; only a per-target query
/// proves it gone.
///
/// `listed` is what this interval's listing of the run's surface said of its pane: a running
/// pane there needs no query of its own. Herdr's agent status of the pane, from the listing or
/// the query, feeds the turn (docs/lifecycle.md, "Status").
pub(super) fn reconcile(
    run: &mut Tracked,
    artifacts: &Artifacts,
    now: u64,
    listed: Option<Inspection>,
    may_watch: bool,
) -> Option<Observed> {
    if run.surface.is_none() {
        match herd_surface::open(&run.record, artifacts) {
            Ok(pair) => run.surface = Some(pair),
            // No pane was recorded (its launcher died before it could say): the child's own
            // identity is the only owner to ask.
            Err(_) => return reconcile_identity(run, artifacts, now),
        }
    }
    let (surface, target) = run.surface.as_ref()?;
    let deadline = Instant::now() + herd_surface::REQUEST_BUDGET;
    let seen = match listed {
        Some(
            seen @ Inspection {
                presence: Presence::Running | Presence::Exited { status: Some(_) },
                ..
            },
        ) => {
            run.probe.answered();
            Ok(seen)
        }
        // Not listed, or listed without an answer: only a query of this pane can tell. While
        // that query keeps failing, it is asked again only once its backoff has passed.
        _ if !run.probe.ready(Instant::now()) => Err(herd_surface::Error::Io(
            "the last query failed: the next waits out its backoff".into(),
        )),
        _ => {
            let seen = surface.inspect(target, deadline);
            match &seen {
                Ok(_) => run.probe.answered(),
                Err(_) => run.probe.failed(Instant::now()),
            }
            seen
        }
    };
    match seen.map(|seen| (seen.presence, seen.agent)) {
        Ok((Presence::Running, agent)) => {
            run.lifecycle.observe_pane(
                PaneObservation::Present(agent.unwrap_or(AgentStatus::Unknown)),
                now,
            );
            if may_watch {
                run.exit_watch_asked = true;
                run.exit_watch = surface.exit_watch(target);
            }
            // A Herdr pane keeps its shell after the launch script: once the runner is gone,
            // the shell sentinel on the screen tells its status (the sidecars win, after grace).
            (run.record.surface == herd_protocol::run::SurfaceKind::Herdr
                && crate::status::runner_gone(&run.record))
            .then(|| sentinel(surface.as_ref(), target).map_or(Observed::Lost, Observed::Exited))
        }
        Ok((Presence::Exited { status }, _)) => {
            run.lifecycle
                .observe_pane(PaneObservation::Present(AgentStatus::Unknown), now);
            Some(match status {
                Some(code) => Observed::Exited(code),
                None => sentinel(surface.as_ref(), target).map_or(Observed::Lost, Observed::Exited),
            })
        }
        Ok((Presence::Absent, _)) => {
            run.lifecycle.observe_pane(PaneObservation::Missing, now);
            Some(Observed::Lost)
        }
        // The surface does not answer and the runner is gone without a completion (a stopped
        // Herdr ends its panes' processes): the run is lost, as if its pane had gone.
        Err(_) if crate::status::runner_gone(&run.record) => {
            run.lifecycle.observe_pane(PaneObservation::Missing, now);
            Some(Observed::Lost)
        }
        Err(_) => {
            run.lifecycle.observe_pane(PaneObservation::ReadError, now);
            None
        }
    }
}

/// How many exit watches (one descriptor each) a supervisor holds at most: half of what the
/// descriptor limit leaves after a reserve for files, pipes and sockets. Runs beyond it are
/// reconciled on the short interval, as without a watch.
pub(super) fn max_exit_watches() -> usize {
    static MAX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes one rlimit we own.
        let soft = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
            limit.rlim_cur
        } else {
            0
        };
        let soft = usize::try_from(soft).unwrap_or(usize::MAX);
        (soft.saturating_sub(256) / 2).min(16_384)
    })
}

/// Supervises a child that has no surface target through its recorded identity alone.
fn reconcile_identity(run: &mut Tracked, artifacts: &Artifacts, now: u64) -> Option<Observed> {
    let identity = (!run.record.session_file.is_empty())
        .then(|| {
            run.record
                .session_files()
                .read::<herd_core::identity::Record>()
        })
        .and_then(Result::ok)
        .flatten();
    let Some(identity) = identity else {
        run.lifecycle.observe_pane(PaneObservation::ReadError, now);
        return None;
    };
    if herd_core::identity::judge(&identity) == herd_core::identity::Judgement::Alive {
        run.lifecycle
            .observe_pane(PaneObservation::Present(AgentStatus::Unknown), now);
        return None;
    }
    if herd_core::identity::proven_gone(&identity).is_none() {
        run.lifecycle.observe_pane(PaneObservation::ReadError, now);
        return None;
    }
    run.lifecycle.observe_pane(PaneObservation::Missing, now);
    Some(
        herd_surface::read_runner_exit(&herd_surface::runner_exit_file(
            artifacts,
            &run.record.run_id,
        ))
        .map_or(Observed::Lost, Observed::Exited),
    )
}

/// Reads the shell sentinel from the child's screen or log.
fn sentinel(surface: &dyn Surface, target: &Target) -> Option<i32> {
    let deadline = Instant::now() + herd_surface::REQUEST_BUDGET;
    let text = surface
        .read_tail(target, herd_surface::SENTINEL_LINES, deadline)
        .ok()?;
    herd_surface::find_sentinel(&text)
}
