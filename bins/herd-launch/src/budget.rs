//! A nested child's budget: what a child's own spawn may have of the budget its parent run has
//! left.
//!
//! A spawn from inside a child (`PI_SUBAGENT_ID` names its run) whose parent run has a budget is
//! judged before anything is launched, on what the parent's tree spent as herd last read it
//! (`herd_protocol::usage::recorded`): a tree with nothing left refuses every spawn, a budget
//! larger than what is left is refused, and a spawn without a budget of its own gets what is
//! left as its budget, so that it too is stopped when the tree's budget runs out.

use herd_core::Error;
use herd_protocol::layout::Artifacts;
use herd_protocol::run::RunRecord;
use herd_protocol::usage::{Budget, Spent, Usd, budget_tokens};

/// The budget of a spawn that asks for `asked`, within what its parent run has left; a refusal
/// (field `budget`) when the parent's tree has nothing left or `asked` is wider than what is.
/// `holds` says whether the child can be held to a budget (a Pi child, auto-exit, here).
pub fn within_parent(
    artifacts: &Artifacts,
    asked: Option<Budget>,
    holds: bool,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Budget>, Error> {
    let Some(parent) = env("PI_SUBAGENT_ID")
        .filter(|id| herd_protocol::layout::validate_run_id(id).is_ok())
        .and_then(|id| RunRecord::load(artifacts, &id).ok())
    else {
        return Ok(asked);
    };
    let Some(budget) = parent.extra.budget.filter(Budget::is_bounded) else {
        return Ok(asked);
    };
    let spent = Spent::of(&herd_protocol::usage::recorded(artifacts, &parent));
    let left = budget.left(&spent);
    if budget.reached(&spent) {
        return Err(Error::invalid(
            "budget",
            format!(
                "the parent run {} has no budget left ({}): nothing is launched",
                parent.run_id,
                budget.host_line(&spent, false)
            ),
        ));
    }
    let Some(asked) = asked else {
        return Ok(holds.then_some(left));
    };
    let wider_tokens = left
        .tokens
        .is_some_and(|l| asked.tokens.is_none_or(|t| t > l));
    let wider_usd = left
        .usd
        .is_some_and(|l| asked.usd.is_none_or(|u| u.0 > l.0));
    if wider_tokens || wider_usd {
        return Err(Error::invalid(
            "budget",
            format!(
                "a child's budget is at most what its parent run {} has left: {}",
                parent.run_id,
                describe(&left)
            ),
        ));
    }
    Ok(Some(asked))
}

/// `1.2 k tokens and $0.40`, the bounds a budget has.
fn describe(budget: &Budget) -> String {
    let tokens = budget
        .tokens
        .map(|n| format!("{} tokens", budget_tokens(Some(n))));
    let usd = budget.usd.map(|Usd(u)| format!("${u:.2}"));
    tokens
        .into_iter()
        .chain(usd)
        .collect::<Vec<_>>()
        .join(" and ")
}
