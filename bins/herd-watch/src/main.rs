//! The `herd-watch` binary: a thin shell over [`herd_watch::main_impl`].

fn main() -> std::process::ExitCode {
    herd_watch::main_impl(std::env::args_os())
}
