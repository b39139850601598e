//! herd-accept's rows: a check's overhead over the plain tool that runs a command under a time
//! limit, and reaping a large tree after the timeout's grace (issues 3 and 15). The reap is
//! `herd_accept::bench`'s own measurement.

use std::path::Path;
use std::time::Duration;

use herd_accept::bench;
use herd_core::subprocess::Command;

use crate::bench::{Ctx, Goal, Measured, Quantity, Row, median, on_path, timed};

const COMPONENT: &str = "herd-accept";

/// How many interleaved checks of each side a round of `accept.check` times.
const SAMPLES_PER_ROUND: usize = 9;

pub fn rows(ctx: &Ctx) -> Vec<Row> {
    let mut rows = Vec::new();
    if ctx.wants("accept.check") {
        rows.push(check(ctx));
    }
    if ctx.wants("accept.reap") {
        rows.push(reap(ctx));
    }
    rows
}

/// `herd-accept check` of `true` against `timeout 600 sh -c true` (a command run under a time
/// limit, what a check is), interleaved after one untimed round of each. The note gives the
/// bare `sh -c true` of the same rounds.
///
/// A check of `true` takes about 3 ms, where one scheduling hiccup of a shared machine is as
/// large as the difference measured; each round therefore times [`SAMPLES_PER_ROUND`] checks
/// of each side, and the median is over all of them.
fn check(ctx: &Ctx) -> Row {
    let result = ctx.binary("herd-accept").and_then(|bin| {
        if !on_path("timeout") {
            return Err("timeout is not on PATH".to_owned());
        }
        check_against_timeout(&bin, ctx.rounds)
    });
    Row::from_result(
        "accept.check",
        COMPONENT,
        "check of `true` (binary)",
        Goal::RatioAtMost(1.15),
        result,
    )
}

fn check_against_timeout(bin: &Path, rounds: usize) -> Result<Measured, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let spec_path = dir.path().join("spec.json");
    herd_accept::AcceptSpec::new("true")
        .and_then(|spec| spec.write(&spec_path))
        .map_err(|e| e.message)?;
    let budget = Duration::from_secs(60);
    let herd = Command::new(bin, budget)
        .arg("check")
        .arg("--spec")
        .arg(&spec_path)
        .arg("--cwd")
        .arg(dir.path())
        .cwd(dir.path());
    let limited = Command::new("timeout", budget)
        .args(["600", "sh", "-c", "true"])
        .cwd(dir.path());
    let sh = Command::new("/bin/sh", budget)
        .args(["-c", "true"])
        .cwd(dir.path());
    let run = |cmd: &Command, what: &str| -> Result<Duration, String> {
        let (took, out) = timed(cmd)?;
        if out.code != Some(0) {
            return Err(format!(
                "{what} exited {:?}: {}",
                out.code,
                out.stderr.text()
            ));
        }
        Ok(took)
    };
    run(&herd, "herd-accept check")?;
    run(&limited, "timeout")?;
    let (mut h, mut t, mut s) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds.max(1) * SAMPLES_PER_ROUND {
        h.push(run(&herd, "herd-accept check")?);
        t.push(run(&limited, "timeout")?);
        s.push(run(&sh, "sh")?);
    }
    Ok(Measured::new(Quantity::ms(median(&h)), h.len())
        .against("timeout 600 sh -c true", Quantity::ms(median(&t)))
        .note(format!(
            "sh -c true alone: {:.2} ms",
            median(&s).as_secs_f64() * 1000.0
        )))
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
