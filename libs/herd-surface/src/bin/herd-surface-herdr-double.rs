//! The recorded-reply `herdr` double (`herd_herdr::double`), built for this package's tests.

fn main() -> std::process::ExitCode {
    herd_herdr::double::main()
}
