//! Every binary answers `--help` and `--version`, and unknown input is a usage error.

use herd_core::error::{ErrorCode, ErrorDocument};
use herd_e2e::cli::{self, Run};
use herd_e2e::{BINARIES, bin};

fn run(name: &str, args: &[&str]) -> Run {
    cli::run(&cli::command(bin(name)).args(args.iter().copied()))
}

#[test]
fn every_binary_answers_help_and_version() {
    for name in BINARIES {
        let out = run(name, &["--help"]);
        assert_eq!(out.code, 0, "{name} --help: {out}");
        assert!(out.stdout.contains("Usage:"), "{name} --help: {out}");
        let out = run(name, &["--version"]);
        assert_eq!(out.code, 0, "{name} --version: {out}");
        assert!(out.stdout.starts_with(name), "{name} --version: {out}");
    }
}

#[test]
fn unknown_flags_are_usage_errors_and_json_errors_name_the_argument() {
    for name in BINARIES {
        let out = run(name, &["--no-such-flag"]);
        assert_eq!(out.code, 2, "{name}: {out}");
        let out = run(name, &["--no-such-flag", "--json"]);
        assert_eq!(out.code, 2, "{name}: {out}");
        let doc: ErrorDocument = out.doc();
        assert_eq!(doc.error.code, ErrorCode::InvalidRequest, "{name}: {out}");
    }
}
