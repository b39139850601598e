//! A run's hard budget (`subagent`'s `budget`): when what the run spent — its session with its
//! nested children's rolled up — reaches it, the watcher ends the run.
//!
//! The check runs where the watcher already looks at a run: when a file event names it (its
//! session grew) and at its reconciliation, and only for a run with a budget, so a run without
//! one costs nothing more. Its session is read from the usage cursor on (`crate::usage`): each
//! check reads only what was appended since. When the budget is reached, the watcher records the
//! stop once (`runs/<id>.budget.json`, what was spent and the budget) and then cancels the run
//! the way `herd-watch cancel` does — its cancel intent, then termination of the child through
//! its verified identity, its whole process group or sandbox — on a thread of its own, as a time
//! limit does. The finished run is `failed`, keeps its last report and says `Budget: spent … of
//! …; stopped` (see `finish::build`); a watcher that starts later finds the stop and the cancel
//! intent on disk and finishes the same way.

use std::thread::JoinHandle;

use herd_protocol::intents::BudgetStop;
use herd_protocol::result::{Details, Outcome};

use crate::message::Ending;
use herd_protocol::layout::Artifacts;
use herd_protocol::run::RunRecord;
use herd_protocol::run_file::RunFile;
use herd_protocol::usage::Spent;

/// What `record` spent so far, with its nested children, each session read at most
/// [`crate::usage::READ_PER_LOOK`] further; `None` when nothing can be read yet.
pub fn spent(artifacts: &Artifacts, record: &RunRecord) -> Option<Spent> {
    crate::usage::rolled_up_within(artifacts, record, crate::usage::READ_PER_LOOK)
        .map(|usage| Spent::of(&usage.tally))
}

/// The stop of `record`, when it has a budget and what it spent reached it at `now_ms`.
pub fn reached(artifacts: &Artifacts, record: &RunRecord, now_ms: u64) -> Option<BudgetStop> {
    let budget = record.extra.budget.filter(|b| b.is_bounded())?;
    let spent = spent(artifacts, record)?;
    budget.reached(&spent).then_some(BudgetStop {
        format_version: BudgetStop::VERSION,
        budget,
        spent,
        stopped_at_ms: now_ms,
    })
}

/// Records `stop` of `record` (the first record stands) and cancels the run on a thread.
pub fn enforce(artifacts: &Artifacts, record: &RunRecord, stop: BudgetStop) -> JoinHandle<()> {
    let artifacts = artifacts.clone();
    let record = record.clone();
    std::thread::spawn(move || {
        // The stop comes first: a cancel intent without it would read as the parent's. One
        // recorded before (by a watcher killed before its cancel) stands, and is carried out.
        let _ = artifacts.run(&record.run_id).create_once(stop);
        if herd_protocol::intents::read_budget_stop(&artifacts, &record.run_id).is_none() {
            return;
        }
        // An unconfirmed termination keeps its intent; supervision goes on as after a cancel.
        let _ = crate::control::cancel(&artifacts, &record);
    })
}

/// A cancel that a reached budget made, into the result: a failure saying what was spent of
/// what (`Budget: spent … of …; stopped`), its report already kept in `ending`.
pub fn spent_into(stop: BudgetStop, ending: &mut Ending, details: &mut Details) {
    ending.outcome = Some(Outcome::Failed);
    ending.budget_spent = true;
    ending.notes.push(stop.budget.host_line(&stop.spent, true));
    details.budget = Some(stop);
}

/// The budget stop a cancelled run ended on, unless a time limit ended it first.
pub fn stop_of(
    artifacts: &Artifacts,
    record: &RunRecord,
    observed: &crate::finish::Observed,
    expired: bool,
) -> Option<BudgetStop> {
    match observed {
        crate::finish::Observed::Cancelled(_) if !expired => {
            herd_protocol::intents::read_budget_stop(artifacts, &record.run_id)
        }
        _ => None,
    }
}
