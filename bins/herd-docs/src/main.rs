//! The `herd-docs` binary: a thin shell over [`herd_docs::main_impl`].

fn main() -> std::process::ExitCode {
    herd_docs::main_impl(std::env::args_os())
}
