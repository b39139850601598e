//! A stand-in `herdr` executable that replays recorded Herdr replies (see `herd_herdr::double`).

fn main() -> std::process::ExitCode {
    herd_herdr::double::main()
}
