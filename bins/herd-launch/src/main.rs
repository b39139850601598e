//! The `herd-launch` binary: a thin shell over [`herd_launch::main_impl`].

fn main() -> std::process::ExitCode {
    herd_launch::main_impl(std::env::args_os())
}
