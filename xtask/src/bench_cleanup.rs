//! herd-cleanup's rows: the `/proc` holder scan against `lsof`, and counting ignored files
//! against `git ls-files | wc -c`, time and peak memory (issue 5). The measurements are
//! `herd_cleanup::bench`'s own and run in this process, which is why the bench runs them
//! first and in release.

use herd_cleanup::bench;

use crate::bench::{Ctx, Goal, Measured, Quantity, Row, on_path};

const COMPONENT: &str = "herd-cleanup";

pub fn rows(ctx: &Ctx) -> Vec<Row> {
    let mut rows = vec![holders(ctx)];
    rows.extend(ignored(ctx));
    rows
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
