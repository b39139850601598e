//! Runs herd-cleanup's benchmarks and prints the figures:
//! `cargo run --release -p herd-cleanup --features bench --example cleanup-bench [ROUNDS]`.

fn main() -> std::process::ExitCode {
    let rounds = std::env::args()
        .nth(1)
        .and_then(|r| r.parse().ok())
        .unwrap_or(7);
    match herd_cleanup::bench::run_all(rounds) {
        Ok(lines) => {
            herd_cli::emit_line(false, &serde_json::Value::Null, lines.trim_end()).ok();
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            herd_cli::diagnostic(&format!("error: {e}"));
            std::process::ExitCode::FAILURE
        }
    }
}
