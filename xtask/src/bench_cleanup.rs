//! herd-cleanup's rows: the `/proc` holder scan against `lsof`, and counting ignored files
//! against `git ls-files | wc -c`, time and peak memory (issue 5); `list` of 10 and 50 managed
//! worktrees against the plain tools doing the same inspection, and `remove` of one against
//! `git status` and `git worktree remove` (issue 15). The measurements are
//! `herd_cleanup::bench`'s own and run in this process, which is why the bench runs them
//! first and in release.

use herd_cleanup::bench;

use crate::bench::{Ctx, Goal, Measured, Quantity, Row, on_path};

const COMPONENT: &str = "herd-cleanup";

pub fn rows(ctx: &Ctx) -> Vec<Row> {
    let mut rows = vec![holders(ctx)];
    rows.extend(ignored(ctx));
    rows.extend(inventory(ctx));
    rows.push(removal(ctx));
    rows
}

/// `list` of 10 and 50 (quick: 4 and 12) worktrees; the second row's note says how herd's time
/// grew against the number of worktrees.
fn inventory(ctx: &Ctx) -> [Row; 2] {
    let extra = ctx.size(1000, 200);
    let sizes = [ctx.size(10, 4), ctx.size(50, 12)];
    let baseline = "worktree list; status per worktree; lsof";
    let small = sizes[0];
    let mut first: Option<(usize, f64)> = None;
    sizes.map(|n| {
        let result = if on_path("lsof") {
            ctx.binary("herd-cleanup")
                .and_then(|bin| bench::inventory(&bin, n, extra, ctx.rounds))
                .map(|b| {
                    let herd_ms = b.timing.herd.as_secs_f64() * 1000.0;
                    let mut m = Measured::new(Quantity::ms(b.timing.herd), b.timing.rounds)
                        .against(baseline, Quantity::ms(b.timing.baseline));
                    match first {
                        None => first = Some((n, herd_ms)),
                        Some((n0, ms0)) => {
                            m = m.note(format!(
                                "{n} worktrees took {:.2}x the time of {n0} ({:.1}x the worktrees): \
                                 {:.1} ms per worktree beyond the first {n0}",
                                herd_ms / ms0,
                                n as f64 / n0 as f64,
                                (herd_ms - ms0) / (n - n0) as f64
                            ));
                        }
                    }
                    m
                })
        } else {
            Err("lsof is not on PATH (apt-get install lsof)".to_owned())
        };
        Row::from_result(
            if n == small {
                "cleanup.list_small"
            } else {
                "cleanup.list_large"
            },
            COMPONENT,
            format!("list {n} worktrees, {extra} extra processes"),
            Goal::RatioAtMost(1.0),
            result,
        )
    })
}

fn removal(ctx: &Ctx) -> Row {
    let files = ctx.size(200, 100);
    let result = ctx
        .binary("herd-cleanup")
        .and_then(|bin| bench::removal(&bin, files, ctx.rounds))
        .map(|t| {
            Measured::new(Quantity::ms(t.herd), t.rounds)
                .against("git status; git worktree remove", Quantity::ms(t.baseline))
        });
    Row::from_result(
        "cleanup.remove",
        COMPONENT,
        format!("remove 1 clean worktree, {files} files"),
        Goal::RatioAtMost(1.5),
        result,
    )
}

fn holders(ctx: &Ctx) -> Row {
    let extra = ctx.size(1000, 200);
    let result = if on_path("lsof") {
        bench::holder_scan(extra, ctx.rounds).map(|b| {
            Measured::new(Quantity::ms(b.timing.herd), b.timing.rounds)
                .against("lsof -n -P -d cwd", Quantity::ms(b.timing.baseline))
                .note(format!("{} processes of this user inspected", b.inspected))
        })
    } else {
        Err("lsof is not on PATH (apt-get install lsof)".to_owned())
    };
    Row::from_result(
        "cleanup.holders",
        COMPONENT,
        format!("holder scan, {extra} extra processes"),
        Goal::RatioAtMost(0.2),
        result,
    )
}

fn ignored(ctx: &Ctx) -> [Row; 2] {
    let files = ctx.size(200_000, 20_000);
    let time_figure = format!("count {files} ignored files: time");
    let rss_figure = format!("count {files} ignored files: peak RSS");
    let time_goal = Goal::RatioAtMost(1.2);
    let rss_goal = Goal::AtMost(Quantity::mib(20 * 1024));
    match bench::ignored_count(files, ctx.rounds) {
        Ok(b) => {
            let time = Measured::new(Quantity::ms(b.timing.herd), b.timing.rounds).against(
                "git ls-files -o -i --exclude-standard -z | wc -c",
                Quantity::ms(b.timing.baseline),
            );
            let rss = if b.herd_peak_rss_kib == 0 {
                Row::not_measured(
                    "cleanup.ignored_rss",
                    COMPONENT,
                    rss_figure,
                    rss_goal,
                    "the peak RSS cannot be reset here (/proc/self/clear_refs is not writable)",
                )
            } else {
                Row::measured(
                    "cleanup.ignored_rss",
                    COMPONENT,
                    rss_figure,
                    rss_goal,
                    Measured::new(Quantity::mib(b.herd_peak_rss_kib), b.timing.rounds)
                        .note("VmHWM of the counting process (this one), reset just before"),
                )
            };
            [
                Row::measured(
                    "cleanup.ignored_time",
                    COMPONENT,
                    time_figure,
                    time_goal,
                    time,
                ),
                rss,
            ]
        }
        Err(reason) => [
            Row::not_measured(
                "cleanup.ignored_time",
                COMPONENT,
                time_figure,
                time_goal,
                reason.clone(),
            ),
            Row::not_measured(
                "cleanup.ignored_rss",
                COMPONENT,
                rss_figure,
                rss_goal,
                reason,
            ),
        ],
    }
}
