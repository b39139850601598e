//! End-to-end scenarios across the herd binaries.

mod cli;
mod herd_accept;
mod herd_bounds;
mod herd_cancel;
mod herd_env;
mod herd_fallback;
mod herd_models;
mod herd_needs_input;
mod herd_nested;
mod herd_persistent;
mod herd_report;
mod herd_resurrect;
mod herd_trust;
mod herd_usage;
mod herd_worktree;
mod herd_worktree_setup;
mod model_server;
mod pi_herd;
mod pi_parent;
mod pi_print;
mod pi_start;
mod pi_tmux;
mod pi_view;
mod readme;
mod remote;
mod remote_hosts;
