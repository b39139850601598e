//! `cargo xtask install`: herd in one step — the six binaries where the parent extension finds
//! them (`cargo install`, into `~/.cargo/bin` unless `--root` says otherwise), then the Pi
//! package registered with `pi install <checkout>/extension` when Pi is present.

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use herd_core::subprocess::{self, Command, Keep};

use crate::{cargo, workspace_root};

/// A release build of one binary from cold may take this long on a small machine.
const INSTALL_BUDGET: Duration = Duration::from_secs(60 * 60);
/// `pi install` of a local path copies nothing.
const PI_BUDGET: Duration = Duration::from_secs(120);

/// Install herd's binaries and its Pi package.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask install")]
pub struct Cli {
    /// Where the binaries go: `<ROOT>/bin` [default: cargo's, `~/.cargo/bin`].
    #[arg(long, value_name = "ROOT")]
    pub root: Option<PathBuf>,
    /// Install debug builds (faster to build; for trying a checkout).
    #[arg(long)]
    pub debug: bool,
    /// Do not register the Pi package, even when Pi is present.
    #[arg(long)]
    pub no_pi: bool,
    /// The Pi to register the package with [default: $HERD_PI, else `pi` on PATH].
    #[arg(long, value_name = "PROGRAM")]
    pub pi: Option<PathBuf>,
}

pub fn main_impl(args: Vec<OsString>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(if err.exit_code() == 0 { 0 } else { 2 });
        }
    };
    match run(&cli, &mut io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            herd_cli::diagnostic(&format!("install failed: {message}"));
            ExitCode::from(1)
        }
    }
}

/// Installs every binary, then the Pi package; says what it did on `out`.
pub fn run(cli: &Cli, out: &mut dyn Write) -> Result<(), String> {
    let root = workspace_root();
    for name in herd_e2e::BINARIES {
        let mut cmd = Command::new(cargo(), INSTALL_BUDGET)
            .args(["install", "--locked", "--quiet", "--path"])
            .arg(root.join("bins").join(name))
            // The workspace's own target directory: what is built already is not built again.
            .arg("--target-dir")
            .arg(root.join("target"))
            .cwd(&root)
            .stdout_cap(1024 * 1024, Keep::Tail)
            .stderr_cap(1024 * 1024, Keep::Tail);
        if cli.debug {
            cmd = cmd.arg("--debug");
        }
        if let Some(dir) = &cli.root {
            cmd = cmd.arg("--root").arg(dir);
        }
        let done = subprocess::run(&cmd).map_err(|e| e.to_string())?;
        if !done.success() {
            return Err(format!(
                "cargo install of {name} failed:\n{}",
                done.stderr.text()
            ));
        }
        let _ = writeln!(out, "installed {name}");
    }
    let bin_dir = match &cli.root {
        Some(dir) => dir.join("bin"),
        None => cargo_bin_dir(),
    };
    let _ = writeln!(out, "the binaries are in {}", bin_dir.display());
    if cli.no_pi {
        return Ok(());
    }
    let Some(pi) = cli.pi.clone().or_else(find_pi) else {
        let _ = writeln!(
            out,
            "Pi was not found: install it, then run `pi install {}`",
            root.join("extension").display()
        );
        return Ok(());
    };
    let done = subprocess::run(
        &Command::new(&pi, PI_BUDGET)
            .arg("install")
            .arg(root.join("extension"))
            .cwd(&root)
            .stdin_null()
            .stdout_cap(1024 * 1024, Keep::Tail)
            .stderr_cap(1024 * 1024, Keep::Tail),
    )
    .map_err(|e| e.to_string())?;
    if !done.success() {
        return Err(format!(
            "`{} install {}` failed:\n{}{}",
            pi.display(),
            root.join("extension").display(),
            done.stdout.text(),
            done.stderr.text()
        ));
    }
    let _ = writeln!(
        out,
        "registered the Pi package {} — start `pi` and ask it to hand a task to a subagent",
        root.join("extension").display()
    );
    Ok(())
}

/// `${CARGO_HOME:-~/.cargo}/bin`, where `cargo install` puts binaries by default.
fn cargo_bin_dir() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")))
        .unwrap_or_else(|| PathBuf::from(".cargo"))
        .join("bin")
}

/// `$HERD_PI`, else `pi` on `PATH`.
fn find_pi() -> Option<PathBuf> {
    if let Some(pi) = std::env::var_os("HERD_PI").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(pi));
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("pi"))
        .find(|p| p.is_file())
}
