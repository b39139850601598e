//! The `herd-worktree` binary: a thin shell over [`herd_worktree::main_impl`].

fn main() -> std::process::ExitCode {
    herd_worktree::main_impl(std::env::args_os())
}
