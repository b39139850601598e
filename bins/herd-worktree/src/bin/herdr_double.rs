//! A stand-in `herdr` that replays recorded Herdr replies (`herd_herdr::double`), for tests.

fn main() -> std::process::ExitCode {
    herd_herdr::double::main()
}
