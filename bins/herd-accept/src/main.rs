//! The `herd-accept` binary: a thin shell over [`herd_accept::main_impl`].

fn main() -> std::process::ExitCode {
    herd_accept::main_impl(std::env::args_os())
}
