//! A stand-in `herdr` that replays recorded Herdr replies (`herd_herdr::double`), for tests.

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    let env = std::env::vars_os()
        .filter_map(|(key, value)| Some((key.into_string().ok()?, value.into_string().ok()?)))
        .collect();
    let outcome = herd_herdr::double::replay(&args, &env);
    if let Some(hang) = outcome.hang {
        std::thread::sleep(hang);
    }
    // A reader that went away is no reason to answer differently.
    let _ = std::io::stdout().write_all(&outcome.stdout);
    let _ = std::io::stderr().write_all(&outcome.stderr);
    ExitCode::from(u8::try_from(outcome.exit).unwrap_or(u8::MAX))
}
