//! The cost of confinement on real work (issue 44): a small project built by a confined child
//! against the same build by an unconfined one, each spawned by herd on the process surface and
//! timed until its runner has exited, interleaved round by round.
//!
//! - `launch.sandboxed_cargo`: `cargo build --offline` of a small crate (a fresh target
//!   directory each time, so every build compiles).
//! - `launch.sandboxed_npm`: `npm ci --offline` of a small package.
//!
//! Both children run with the person's toolchains (`RUSTUP_HOME`, `CARGO_HOME`) and a scratch
//! home whose `~/.npm` and `~/.cargo` the confined child may write, as the default policy allows.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use herd_protocol::layout::Artifacts;

use crate::bench::{Ctx, Goal, Measured, Quantity, Row, median, on_path, progress};
use crate::bench_launch::{Scratch, spawn_once};

const COMPONENT: &str = "herd-launch";

/// The longest one build may take.
const BUILD_BUDGET: Duration = Duration::from_secs(300);

pub const ROWS: [&str; 2] = ["launch.sandboxed_cargo", "launch.sandboxed_npm"];

#[derive(Clone, Copy)]
enum Build {
    Cargo,
    Npm,
}

pub fn rows(ctx: &Ctx) -> Vec<Row> {
    let mut rows = Vec::new();
    for (id, build, figure) in [
        (
            ROWS[0],
            Build::Cargo,
            "a confined `cargo build` of a small crate",
        ),
        (
            ROWS[1],
            Build::Npm,
            "a confined `npm ci` of a small package",
        ),
    ] {
        if !ctx.wants(id) {
            continue;
        }
        progress(&format!("herd-launch: {id}"));
        let result = ctx
            .binary("herd-launch")
            .and_then(|bin| measure(&bin, build, ctx.rounds));
        rows.push(Row::from_result(
            id,
            COMPONENT,
            figure,
            Goal::RatioAtMost(1.05),
            result,
        ));
    }
    rows
}

fn measure(bin: &Path, build: Build, rounds: usize) -> Result<Measured, String> {
    if !on_path("bwrap") {
        return Err("bwrap is not on PATH (apt-get install bubblewrap)".into());
    }
    let tool = match build {
        Build::Cargo => "cargo",
        Build::Npm => "npm",
    };
    if !on_path(tool) {
        return Err(format!("{tool} is not on PATH"));
    }
    let s = Scratch::new("herd-bench-build")?;
    let work = s.root().join("work");
    write_project(&work, build)?;
    for cache in [".npm", ".cargo/registry", ".cache"] {
        std::fs::create_dir_all(s.root().join("home").join(cache)).map_err(|e| e.to_string())?;
    }
    let config = |name: &str, mode: &str| -> Result<PathBuf, String> {
        let dir = s.root().join(name);
        std::fs::create_dir_all(dir.join("herd")).map_err(|e| e.to_string())?;
        std::fs::write(
            dir.join("herd/config.toml"),
            format!("[sandbox]\nmode = \"{mode}\"\n"),
        )
        .map_err(|e| e.to_string())?;
        Ok(dir)
    };
    let confined = config("config-confined", "workspace")?;
    let open = config("config-open", "off")?;
    let toolchain = toolchain_vars();
    let once = |config: &Path, name: String| -> Result<Duration, String> {
        let artifacts = s.artifacts(&name)?;
        let target = work.join(format!("target-{name}"));
        let target = target.to_string_lossy();
        let argv: Vec<&str> = match build {
            Build::Cargo => vec!["cargo", "build", "--offline", "-q", "--target-dir", &target],
            Build::Npm => vec!["npm", "ci", "--offline", "--no-audit", "--no-fund", "-s"],
        };
        let mut cmd = s
            .spawn(bin, "process", &artifacts, &argv)
            .env("XDG_CONFIG_HOME", config);
        for (key, value) in &toolchain {
            cmd = cmd.env(key, value);
        }
        let started = Instant::now();
        let (_, doc) = spawn_once(&cmd)?;
        let run = doc["run_id"].as_str().unwrap_or_default().to_owned();
        let exit = Artifacts::new(&artifacts).runner_exit(&run);
        while !exit.exists() {
            if started.elapsed() > BUILD_BUDGET {
                return Err(format!("the build of run {run} did not end"));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let took = started.elapsed();
        let status: serde_json::Value = serde_json::from_slice(
            &std::fs::read(&exit).map_err(|e| format!("{}: {e}", exit.display()))?,
        )
        .map_err(|e| format!("{}: {e}", exit.display()))?;
        if status["exit_code"] != 0 {
            let log = std::fs::read_to_string(artifacts.join("logs").join(format!("{run}.err")))
                .unwrap_or_default();
            return Err(format!(
                "the {tool} build of {name} failed ({status}): {}",
                crate::bench::first_line(&log)
            ));
        }
        Ok(took)
    };
    let mut confined_times = Vec::with_capacity(rounds);
    let mut open_times = Vec::with_capacity(rounds);
    // Round 0 warms the caches.
    for round in 0..=rounds {
        let c = once(&confined, format!("confined-{round}"))?;
        let o = once(&open, format!("open-{round}"))?;
        if round > 0 {
            confined_times.push(c);
            open_times.push(o);
        }
    }
    Ok(
        Measured::new(Quantity::ms(median(&confined_times)), rounds).against(
            format!("the same {tool} build unconfined"),
            Quantity::ms(median(&open_times)),
        ),
    )
}

/// The person's toolchains, which a scratch home would otherwise hide from the build.
fn toolchain_vars() -> Vec<(String, PathBuf)> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    ["RUSTUP_HOME", "CARGO_HOME"]
        .into_iter()
        .filter_map(|key| {
            let value = std::env::var_os(key).map(PathBuf::from).or_else(|| {
                let dir = if key == "RUSTUP_HOME" {
                    ".rustup"
                } else {
                    ".cargo"
                };
                home.as_ref().map(|h| h.join(dir)).filter(|d| d.is_dir())
            })?;
            Some((key.to_owned(), value))
        })
        .collect()
}

fn write_project(work: &Path, build: Build) -> Result<(), String> {
    let write = |name: &str, text: String| {
        let path = work.join(name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        }
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))
    };
    match build {
        Build::Cargo => {
            write(
                "Cargo.toml",
                "[package]\nname = \"small\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n".into(),
            )?;
            let mut main =
                String::from("mod parts;\nfn main() {\n    println!(\"{}\", parts::total());\n}\n");
            let mut parts = String::new();
            for i in 0..40 {
                parts.push_str(&format!(
                    "#[derive(Debug, Clone, PartialEq)]\npub struct Part{i} {{ pub name: String, pub size: u64 }}\npub fn part{i}() -> Part{i} {{ Part{i} {{ name: format!(\"part {{}}\", {i}), size: {i} }} }}\n"
                ));
            }
            parts.push_str("pub fn total() -> u64 {\n    0");
            for i in 0..40 {
                parts.push_str(&format!(" + part{i}().size"));
            }
            parts.push_str("\n}\n");
            main.push('\n');
            write("src/main.rs", main)?;
            write("src/parts.rs", parts)
        }
        Build::Npm => {
            write(
                "package.json",
                r#"{"name":"small","version":"1.0.0","private":true,"scripts":{"build":"node -e 1"}}"#.into(),
            )?;
            write(
                "package-lock.json",
                r#"{"name":"small","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{"":{"name":"small","version":"1.0.0"}}}"#.into(),
            )
        }
    }
}
