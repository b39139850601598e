//! Every binary answers `--help` and `--version`, and unknown input is a usage error.

use std::process::Command;

use herd_e2e::{BINARIES, bin};

fn run(name: &str, args: &[&str]) -> (i32, String, String) {
    #[expect(
        clippy::disallowed_methods,
        reason = "tests run the binaries under test directly"
    )]
    let out = Command::new(bin(name))
        .args(args)
        .output()
        .expect("binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_binary_answers_help_and_version() {
    for name in BINARIES {
        let (code, stdout, _) = run(name, &["--help"]);
        assert_eq!(code, 0, "{name} --help");
        assert!(stdout.contains("Usage:"), "{name} --help: {stdout}");
        let (code, stdout, _) = run(name, &["--version"]);
        assert_eq!(code, 0, "{name} --version");
        assert!(stdout.starts_with(name), "{name} --version: {stdout}");
    }
}

#[test]
fn unknown_flags_are_usage_errors_and_json_errors_name_the_argument() {
    for name in BINARIES {
        let (code, _, stderr) = run(name, &["--no-such-flag"]);
        assert_eq!(code, 2, "{name}: {stderr}");
        let (code, stdout, _) = run(name, &["--no-such-flag", "--json"]);
        assert_eq!(code, 2, "{name}");
        let doc: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON document");
        assert_eq!(doc["error"]["code"], "invalid_request", "{name}: {doc}");
    }
}
