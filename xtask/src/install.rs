//! `cargo xtask install`: herd in one step — the six binaries where the parent extension finds
//! them (one `cargo build --release --workspace`, its six executables copied into
//! `~/.cargo/bin`, or `<ROOT>/bin` with `--root`), then the Pi package registered with
//! `pi install <checkout>/extension` when Pi is present.

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use herd_core::subprocess::{self, Command, Keep};

use crate::{cargo, workspace_root};

/// A release build of the workspace from cold may take this long on a small machine.
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
    let built = build(&root, cli.debug)?;
    let bin_dir = match &cli.root {
        Some(dir) => dir.join("bin"),
        None => cargo_bin_dir(),
    };
    std::fs::create_dir_all(&bin_dir)
        .map_err(|e| format!("cannot create {}: {e}", bin_dir.display()))?;
    for name in herd_e2e::BINARIES {
        copy_executable(&built.join(name), &bin_dir.join(name))?;
        let _ = writeln!(out, "installed {name}");
    }
    let _ = writeln!(out, "the binaries are in {}", bin_dir.display());
    // Children are confined by default: say up front when this machine cannot.
    let path = std::env::var_os("PATH");
    if herd_sandbox::bwrap::find(path.as_deref()).is_none() {
        let _ = writeln!(
            out,
            "bubblewrap (bwrap) is not on PATH, so every spawn will be refused until you {}",
            herd_sandbox::bwrap::FIX
        );
    }
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

/// Builds the workspace once, release (or debug) profile, and returns the directory its
/// executables are in.
///
/// The build is the workspace's, `cargo build --workspace`, not one `cargo install` per binary
/// (each of which resolved features, and so rebuilt, on its own): its units are exactly those of
/// a `cargo build --release --workspace` run before, so after one the install only copies. A
/// build of the six packages alone would not be: the workspace build unifies the features other
/// members ask of shared crates (the test kit's `herd-git/testkit`, the bench's
/// `herd-cleanup/bench`, both only additional modules), and every crate above them would be
/// built again.
fn build(root: &Path, debug: bool) -> Result<PathBuf, String> {
    let mut cmd = Command::new(cargo(), INSTALL_BUDGET)
        .args(["build", "--locked", "--quiet", "--workspace"])
        .cwd(root)
        .stdin_null()
        .stdout_cap(1024 * 1024, Keep::Tail)
        .stderr_cap(1024 * 1024, Keep::Tail);
    if !debug {
        cmd = cmd.arg("--release");
    }
    let done = subprocess::run(&cmd).map_err(|e| e.to_string())?;
    if !done.success() {
        return Err(format!("cargo build failed:\n{}", done.stderr.text()));
    }
    Ok(target_dir(root)?.join(if debug { "debug" } else { "release" }))
}

/// The workspace's target directory as cargo resolves it (`$CARGO_TARGET_DIR`, the
/// configuration, else `<workspace>/target`).
fn target_dir(root: &Path) -> Result<PathBuf, String> {
    let done = subprocess::run(
        &Command::new(cargo(), Duration::from_secs(60))
            .args(["metadata", "--format-version", "1", "--no-deps", "--locked"])
            .cwd(root)
            .stdin_null()
            .stdout_cap(16 * 1024 * 1024, Keep::Head)
            .stderr_cap(1024 * 1024, Keep::Tail),
    )
    .map_err(|e| e.to_string())?;
    if !done.success() {
        return Err(format!("cargo metadata failed:\n{}", done.stderr.text()));
    }
    let metadata: serde_json::Value = serde_json::from_str(&done.stdout.text())
        .map_err(|e| format!("cargo metadata printed no JSON document: {e}"))?;
    metadata["target_directory"]
        .as_str()
        .map(PathBuf::from)
        .ok_or_else(|| "cargo metadata names no target_directory".to_owned())
}

/// Copies the executable `from` to `to` as a new file renamed into place, so a running copy of
/// the old one (a watcher, say) keeps its own and nobody sees half a file.
fn copy_executable(from: &Path, to: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let name = to.file_name().map(|n| n.to_string_lossy().into_owned());
    let temp = to.with_file_name(format!(
        ".{}.{}.tmp",
        name.unwrap_or_default(),
        std::process::id()
    ));
    let result = std::fs::copy(from, &temp)
        .and_then(|_| std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(0o755)))
        .and_then(|()| std::fs::rename(&temp, to));
    result.map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        format!("cannot install {} as {}: {e}", from.display(), to.display())
    })
}

/// `$CARGO_INSTALL_ROOT/bin`, else `${CARGO_HOME:-~/.cargo}/bin`: where `cargo install` puts
/// binaries by default.
fn cargo_bin_dir() -> PathBuf {
    if let Some(root) = std::env::var_os("CARGO_INSTALL_ROOT").filter(|r| !r.is_empty()) {
        return PathBuf::from(root).join("bin");
    }
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
