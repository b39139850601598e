//! `herd-watch notify`: telling the person at the parent that a run completed, failed or waits
//! for input, on the parent's surface (`herd_surface::notify`), unless a person looks at the
//! run's pane right now.
//!
//! The policy of when to tell (once per transition, a cooldown per run, nothing for a result the
//! parent extension delivers as a message, one setting for all of it) is the parent extension's;
//! this command tells once each time it is run.

use std::time::{Duration, Instant};

use herd_cli::Output;
use herd_core::{Error, escape};
use herd_protocol::layout::Artifacts;
use herd_protocol::run::RunRecord;
use herd_protocol::watch::{NotifyKind, NotifyTold, WatchNotify};
use herd_surface::notify::{self, Notification};

/// The deadline of one notice, every surface call included. Herdr shows one notice at a time
/// and answers `busy` while another is on screen (its own for 3 s, such as the one of a reload of
/// its configuration); the notice is asked again until this deadline, so it outlasts one of them.
const NOTIFY_BUDGET: Duration = Duration::from_secs(6);

/// The title of every notice.
const TITLE: &str = "herd";

/// Tells of `record`, on the surface of this process's environment (the parent's).
pub fn notify(
    artifacts: &Artifacts,
    record: &RunRecord,
    kind: NotifyKind,
) -> Result<Output, Error> {
    let deadline = Instant::now() + NOTIFY_BUDGET;
    let name = escape::json_string(&escape::abbreviate_name(&record.name));
    let text = match kind {
        NotifyKind::Completed => format!("{name} completed"),
        NotifyKind::Failed => format!("{name} failed"),
        NotifyKind::Waiting => {
            let status = crate::status::project(artifacts, record);
            match &status.needs_input {
                Some(input) => format!("{name} is waiting for input: {}", input.reason.as_str()),
                None => format!("{name} is waiting for input"),
            }
        }
    };
    let looking = herd_surface::open(record, artifacts)
        .is_ok_and(|(surface, target)| notify::looking_at(surface.as_ref(), &target, deadline));
    let told: Vec<NotifyTold> = if looking {
        Vec::new()
    } else {
        let env = |key: &str| std::env::var(key).ok();
        let n = Notification {
            title: TITLE,
            body: &text,
            request: kind == NotifyKind::Waiting,
        };
        notify::tell(&env, &n, deadline)
            .into_iter()
            .map(|t| NotifyTold {
                via: t.via.to_owned(),
                shown: t.shown,
                detail: t.detail,
            })
            .collect()
    };
    let human = if looking {
        format!("{text}: not shown, a person looks at its pane")
    } else if told.is_empty() {
        format!("{text}: no surface to show it on")
    } else {
        let ways: Vec<String> = told
            .iter()
            .map(|t| {
                format!(
                    "{} {} ({})",
                    t.via,
                    if t.shown { "shown" } else { "not shown" },
                    escape::encode_host_value(&t.detail, 200)
                )
            })
            .collect();
        format!("{text}: {}", ways.join(", "))
    };
    let json = WatchNotify {
        run_id: record.run_id.clone(),
        name: record.name.clone(),
        kind,
        text,
        looking,
        told,
    };
    Ok(Output::ok(json, human))
}
