//! Prints herd-accept's benchmark figures: `cargo build --release -p herd-accept` first, then
//! `cargo run --release -p herd-accept --example accept-bench [RUNS]`.

#![expect(clippy::print_stdout, reason = "an example prints its measurements")]

use std::path::PathBuf;

fn main() -> Result<(), String> {
    let runs = std::env::args()
        .nth(1)
        .map(|arg| arg.parse::<usize>().map_err(|err| format!("RUNS: {err}")))
        .transpose()?
        .unwrap_or(50);
    // The example lives in `target/<profile>/examples/`; the binary one directory up.
    let exe = std::env::current_exe().map_err(|err| err.to_string())?;
    let bin: PathBuf = exe
        .parent()
        .and_then(|dir| dir.parent())
        .map(|dir| dir.join("herd-accept"))
        .ok_or("cannot locate the herd-accept binary")?;
    if !bin.is_file() {
        return Err(format!(
            "{} is missing; build it with `cargo build --release -p herd-accept`",
            bin.display()
        ));
    }
    let overhead = herd_accept::bench::check_overhead(&bin, runs)?;
    println!(
        "check `true` vs `sh -c true` ({} runs each): median {:.2} ms vs {:.2} ms, ratio {:.2} (target <= 1.5)",
        overhead.runs,
        overhead.herd_median.as_secs_f64() * 1e3,
        overhead.sh_median.as_secs_f64() * 1e3,
        overhead.ratio
    );
    let lib = herd_accept::bench::run_check_overhead(runs)?;
    println!(
        "in-process run_check `true` vs `sh -c true` ({} runs each): median {:.2} ms vs {:.2} ms, ratio {:.2}",
        lib.runs,
        lib.herd_median.as_secs_f64() * 1e3,
        lib.sh_median.as_secs_f64() * 1e3,
        lib.ratio
    );
    let reap = herd_accept::bench::tree_reap(200)?;
    println!(
        "{}-process tree ignoring SIGTERM, timeout 1 s + grace 5 s: total {:.3} s, {:.0} ms beyond the grace (target <= 200 ms), all gone: {}",
        reap.processes,
        reap.total.as_secs_f64(),
        reap.beyond_grace.as_secs_f64() * 1e3,
        reap.all_gone
    );
    Ok(())
}
