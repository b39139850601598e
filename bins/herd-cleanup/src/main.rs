//! The `herd-cleanup` binary: a thin shell over [`herd_cleanup::main_impl`].

fn main() -> std::process::ExitCode {
    herd_cleanup::main_impl(std::env::args_os())
}
