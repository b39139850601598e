//! The demo's first step: the binaries, built by the cargo that runs it.

use super::*;

/// Builds the binaries with the cargo that runs this task and returns their paths, as cargo
/// reports them (so `CARGO_TARGET_DIR` and profiles need no guessing).
pub(super) fn build(cancel: &Receiver<i32>) -> Result<Binaries, Stop> {
    let mut cmd = Command::new(cargo(), BUILD_BUDGET)
        .args([
            "build",
            "--quiet",
            "--message-format=json-render-diagnostics",
        ])
        // The profile of this task, so a release demo needs no second build.
        .args((!cfg!(debug_assertions)).then_some("--release"))
        .cwd(workspace_root())
        .stdout_cap(16 * 1024 * 1024, Keep::Head)
        .stderr_cap(1024 * 1024, Keep::Tail)
        .grace(STOP_GRACE);
    for name in BINARIES {
        cmd = cmd.args(["--package", name]);
    }
    let out = run_step(&cmd, cancel)?;
    if !out.success() {
        let stderr = out.stderr.text();
        let tail: Vec<&str> = stderr.lines().rev().take(20).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(Error::new(
            ErrorCode::Unavailable,
            format!(
                "cargo build exited {}:\n{}",
                exit_text(&out),
                tail.join("\n")
            ),
        )
        .into());
    }
    let mut paths = BTreeMap::new();
    for line in out.stdout.text().lines() {
        let Ok(msg) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let is_bin = msg["target"]["kind"]
            .as_array()
            .is_some_and(|kinds| kinds.iter().any(|k| k == "bin"));
        let name = msg["target"]["name"].as_str().unwrap_or_default();
        if msg["reason"] == "compiler-artifact" && is_bin && BINARIES.contains(&name) {
            if let Some(exe) = msg["executable"].as_str() {
                paths.insert(name.to_owned(), PathBuf::from(exe));
            }
        }
    }
    if let Some(missing) = BINARIES.iter().find(|name| !paths.contains_key(**name)) {
        return Err(
            Error::internal(format!("cargo build did not report the binary {missing}")).into(),
        );
    }
    Ok(Binaries { paths })
}
