//! herd-accept's rows: a check's overhead over the shell it runs, and reaping a large tree
//! after the timeout's grace (issue 3). The measurements are `herd_accept::bench`'s own.

use std::time::Duration;

use herd_accept::bench;

use crate::bench::{Ctx, Goal, Measured, Quantity, Row, median};

const COMPONENT: &str = "herd-accept";

pub fn rows(ctx: &Ctx) -> Vec<Row> {
    vec![check(ctx), reap(ctx)]
}

/// `herd-accept check` of `true` against `sh -c true`, interleaved.
fn check(ctx: &Ctx) -> Row {
    let result = ctx.binary("herd-accept").and_then(|bin| {
        let o = bench::check_overhead(&bin, ctx.rounds)?;
        Ok(Measured::new(Quantity::ms(o.herd_median), o.runs)
            .against("sh -c true", Quantity::ms(o.sh_median)))
    });
    Row::from_result(
        "accept.check",
        COMPONENT,
        "check of `true` (binary)",
        Goal::RatioAtMost(1.5),
        result,
    )
}

/// A check whose tree of SIGTERM-ignoring sleepers outlives its 1 s timeout: how long the kill
/// and reap take beyond the timeout and the 5 s grace. Each run costs over 6 s, so the full
/// bench takes 5 runs and the quick one a single, smaller tree.
fn reap(ctx: &Ctx) -> Row {
    let processes = ctx.size(200, 50);
    let runs = ctx.size(5, 1);
    let result = (|| {
        let mut beyond = Vec::with_capacity(runs);
        let mut left = 0;
        for _ in 0..runs {
            let reap = bench::tree_reap(processes)?;
            beyond.push(reap.beyond_grace);
            if !reap.all_gone {
                left += 1;
            }
        }
        let mut m = Measured::new(Quantity::ms(median(&beyond)), runs).note(format!(
            "{processes} processes ignoring SIGTERM, 1 s timeout; slowest run {:.1} ms beyond the grace",
            beyond.iter().max().copied().unwrap_or(Duration::ZERO).as_secs_f64() * 1000.0
        ));
        if left > 0 {
            m = m.problem(format!(
                "{left} of {runs} runs left processes of the tree running"
            ));
        }
        Ok::<_, String>(m)
    })();
    Row::from_result(
        "accept.reap",
        COMPONENT,
        format!("{processes}-process tree reaped after the grace"),
        Goal::AtMost(Quantity::ms(Duration::from_millis(200))),
        result,
    )
}
