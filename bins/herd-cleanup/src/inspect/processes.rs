//! The processes that could hold the checkout: the run records' children and persistent
//! specialists working in it, the panes of the workspace Herdr has open on it, and the process
//! scan's holders (less the idle shells of those panes).

use std::path::Path;

use herd_core::identity::{self, Judgement};
use herd_protocol::layout::SessionFiles;

use super::context::Run;
use super::{BlockerCode, Context, Entry, HolderRef, shown, shown_path, text};
use crate::holders::{self, SHELLS};
use crate::paths;

/// The message printed with every scan: what the process inspection cannot see.
const COVERAGE_WARNING: &str = "incomplete coverage: only processes of the same user were inspected; \
     a process of another user, or a protected one, could hold the checkout undetected";

/// Known live children and persistent leases: runs of the artifacts directory whose worktree
/// or cwd is the checkout, judged by their recorded process identity.
pub(super) fn children(ctx: &mut Context, entry: &mut Entry, canonical: &Path) {
    let runs = match ctx.runs() {
        Ok(runs) => runs,
        Err(message) => {
            entry.block(
                BlockerCode::ChildUnknown,
                format!("cannot list the run records: {}", shown(message)),
            );
            return;
        }
    };
    let boot_id = identity::boot_id().ok();
    for Run { id, found } in runs {
        let (record, places) = match found {
            Ok(found) => found,
            Err(message) => {
                entry.warn(format!(
                    "run record {id} cannot be read ({}); it is not proven unrelated",
                    shown(message)
                ));
                continue;
            }
        };
        if !places.iter().any(|p| paths::is_within(p, canonical)) {
            continue;
        }
        let what = if record.persistent {
            format!("persistent specialist {} (run {id})", shown(&record.name))
        } else {
            format!("child {} (run {id})", shown(&record.name))
        };
        match SessionFiles::new(&record.session_file).read::<identity::Record>() {
            Ok(Some(identity)) => {
                // Another boot means the recorded process is gone, whatever else judge says.
                if boot_id.as_deref().is_some_and(|b| b != identity.boot_id) {
                    continue;
                }
                match identity::judge(&identity) {
                    Judgement::Exited => {}
                    Judgement::Alive if record.persistent => entry.block(
                        BlockerCode::PersistentLease,
                        format!(
                            "{what} holds a lease on the checkout and is alive (PID {})",
                            identity.pid
                        ),
                    ),
                    Judgement::Alive => entry.block(
                        BlockerCode::LiveChild,
                        format!("{what} is alive (PID {})", identity.pid),
                    ),
                    Judgement::Unknown(reason) => entry.block(
                        BlockerCode::ChildUnknown,
                        format!("cannot tell whether {what} is alive: {}", shown(&reason)),
                    ),
                }
            }
            Ok(None) => entry.warn(format!(
                "{what} works in the checkout and has no identity record; \
                 only the process scan speaks for it"
            )),
            Err(e) => entry.block(
                BlockerCode::ChildUnknown,
                format!(
                    "cannot tell whether {what} is alive: {}",
                    shown(&e.to_string())
                ),
            ),
        }
    }
}

/// The panes of the open workspace: a pane running anything but its idle shell blocks, idle
/// shells are returned as the PIDs the process scan may exempt.
pub(super) fn panes(ctx: &mut Context, entry: &mut Entry) -> Vec<u32> {
    let (Some(herdr), Some(workspace)) = (ctx.herdr.clone(), entry.workspace.clone()) else {
        return Vec::new();
    };
    let list = match herdr.pane_list(Some(&workspace)) {
        Ok(list) => list,
        Err(e) => {
            entry.block(
                BlockerCode::HerdrUnknown,
                format!(
                    "herdr cannot list the panes of workspace {}: {}",
                    shown(&workspace),
                    shown(&e.to_string())
                ),
            );
            return Vec::new();
        }
    };
    let mut exempt = Vec::new();
    for pane in &list.panes {
        match herdr.pane_process_info(&pane.pane_id) {
            Ok(info) => match (info.shell_pid, info.foreground_pgid) {
                (Some(shell), Some(fg)) if shell == fg => exempt.push(shell),
                (Some(_), Some(_)) => entry.block(
                    BlockerCode::ForegroundProcess,
                    format!(
                        "pane {} runs a live child or foreground process",
                        shown(&pane.pane_id)
                    ),
                ),
                _ => entry.block(
                    BlockerCode::HerdrUnknown,
                    format!(
                        "herdr does not report the shell and foreground job of pane {}",
                        shown(&pane.pane_id)
                    ),
                ),
            },
            Err(e) => entry.block(
                BlockerCode::HerdrUnknown,
                format!(
                    "herdr cannot inspect pane {}: {}",
                    shown(&pane.pane_id),
                    shown(&e.to_string())
                ),
            ),
        }
    }
    exempt
}

/// The warnings a process scan carries for every checkout it covered: what it cannot see.
pub fn scan_warnings(scan: &Result<holders::Scan, holders::Error>) -> Vec<String> {
    let mut out = vec![COVERAGE_WARNING.to_owned()];
    if let Ok(scan) = scan {
        if scan.unreadable.count > 0 {
            out.push(unreadable_warning(&scan.unreadable));
        }
    }
    out
}

fn unreadable_warning(unreadable: &holders::Sample) -> String {
    format!(
        "not proven unrelated: {} of this user could not be inspected",
        unreadable.describe()
    )
}

/// A warning as a person reads it, `None` for the scan's standing caveats that say nothing
/// about this checkout and would be printed by every cleanup: what the scan never covers
/// (processes of other users, documented with the command) and PID 1 alone unreadable (the
/// namespace's init, whose cwd is set before any checkout exists). `--json` keeps both.
pub fn for_people(warning: &str) -> Option<&str> {
    let init_only = unreadable_warning(&holders::Sample {
        count: 1,
        pids: vec![1],
    });
    (warning != COVERAGE_WARNING && warning != init_only).then_some(warning)
}

pub(super) fn holders_of(
    entry: &mut Entry,
    canonical: &Path,
    scan: &Result<holders::Scan, holders::Error>,
    exempt: &[u32],
) {
    for w in scan_warnings(scan) {
        entry.warn(w);
    }
    let scan = match scan {
        Ok(scan) => scan,
        Err(e @ holders::Error::Unsupported) => {
            entry.block(BlockerCode::UnsupportedPlatform, e.to_string());
            return;
        }
        Err(e) => {
            entry.block(BlockerCode::EnumerationFailed, e.to_string());
            return;
        }
    };
    let own = own_background(entry);
    for h in scan.holders.iter().filter(|h| h.cwd.starts_with(canonical)) {
        let shell = h.comm.as_deref().is_some_and(|c| SHELLS.contains(&c));
        if shell && exempt.contains(&h.pid) || own.contains(&h.pid) {
            continue;
        }
        let name = h
            .comm
            .as_deref()
            .map_or_else(|| "name unreadable".to_owned(), shown);
        entry.block(
            BlockerCode::ProcessHolder,
            format!(
                "process {} ({name}) has its cwd in {}",
                h.pid,
                shown_path(&h.cwd)
            ),
        );
        entry.holders.push(HolderRef {
            pid: h.pid,
            name: h.comm.clone(),
            cwd: text(&h.cwd),
        });
    }
}

/// How the warning about a running background command of the worktree's own begins.
pub const OWN_BACKGROUND: &str = "its own background command ";

/// The processes of the worktree's own background commands (the sessions their recorded
/// leaders started, each judged by its identity), which hold the checkout as its own: a warning
/// says so, and an explicit removal stops them. A session that cannot be read is not the
/// worktree's own: its processes hold the checkout like any other.
fn own_background(entry: &mut Entry) -> Vec<u32> {
    let mut own = Vec::new();
    let mut warnings = Vec::new();
    for b in &mut entry.internal.background {
        b.running = identity::session_pids(&b.leader).unwrap_or_default();
        if b.running.is_empty() {
            continue;
        }
        let sample = holders::Sample {
            count: b.running.len(),
            pids: b
                .running
                .iter()
                .copied()
                .take(holders::PID_SAMPLE)
                .collect(),
        };
        warnings.push(format!(
            "{OWN_BACKGROUND}{} runs as {}: setup started it, so `herd-cleanup remove` stops it, the whole session, before it removes the checkout",
            b.shown(),
            sample.describe()
        ));
        own.extend(&b.running);
    }
    for w in warnings {
        entry.warn(w);
    }
    own
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_person_is_not_told_the_standing_caveats_on_every_cleanup() {
        let scan = |pids: Vec<u32>| {
            Ok(holders::Scan {
                unreadable: holders::Sample {
                    count: pids.len(),
                    pids,
                },
                ..holders::Scan::default()
            })
        };
        let init_only = scan_warnings(&scan(vec![1]));
        assert_eq!(init_only.len(), 2, "--json keeps both: {init_only:?}");
        assert_eq!(
            init_only.iter().filter_map(|w| for_people(w)).count(),
            0,
            "{init_only:?}"
        );
        let others = scan_warnings(&scan(vec![1, 4242]));
        let shown: Vec<&str> = others.iter().filter_map(|w| for_people(w)).collect();
        assert_eq!(
            shown,
            [
                "not proven unrelated: 2 processes (PIDs 1, 4242) of this user could not be inspected"
            ]
        );
    }
}
