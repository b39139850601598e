//! `cargo xtask`: the project's automation, in Rust so it needs nothing beyond the toolchain.
//!
//! - `cargo xtask docs [--check]` regenerates (or checks) the generated documentation and the
//!   child extension's bundle.
//! - `cargo xtask demo` runs one full lifecycle on the process surface.
//! - `cargo xtask bench` measures herd against its baselines and prints ratios.
//! - `cargo xtask install` installs the binaries and registers the Pi package.

mod bench;
mod bench_accept;
mod bench_cleanup;
mod bench_history;
mod bench_launch;
mod bench_remote;
mod bench_sandbox;
mod bench_start;
mod bench_watch;
mod bench_worktree;
mod bundle;
mod demo;
mod demo_child;
mod demo_parent;
mod install;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The workspace root, where cargo runs.
fn workspace_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .map_or_else(|| manifest_dir.to_path_buf(), Path::to_path_buf)
}

/// The cargo that runs this task.
fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("docs") => {
            let mut docs_args = vec!["herd-docs".into()];
            docs_args.extend(args[1..].iter().map(Into::into));
            let docs = herd_docs::main_impl(docs_args);
            // The child extension's bundle is generated from the sources as the docs are.
            let check = args[1..].iter().any(|a| a == "--check");
            match bundle::run(&workspace_root(), check) {
                Ok(said) => herd_cli::diagnostic(&said),
                Err(why) => {
                    herd_cli::diagnostic(&why);
                    return ExitCode::from(1);
                }
            }
            docs
        }
        Some("bench") => {
            let mut bench_args = vec!["cargo xtask bench".into()];
            bench_args.extend(std::env::args_os().skip(2));
            bench::main_impl(bench_args)
        }
        Some("demo") => {
            let mut demo_args = vec!["cargo xtask demo".into()];
            demo_args.extend(std::env::args_os().skip(2));
            demo::main_impl(demo_args)
        }
        Some("install") => {
            let mut install_args = vec!["cargo xtask install".into()];
            install_args.extend(std::env::args_os().skip(2));
            install::main_impl(install_args)
        }
        _ => {
            herd_cli::diagnostic("usage: cargo xtask <docs [--check] | demo | bench | install>");
            ExitCode::from(2)
        }
    }
}
