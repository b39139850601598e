//! The surfaces against real processes, a real tmux server, the recorded-reply Herdr double and
//! a real headless Herdr server: one test binary, a module per behaviour.

mod herdr;
mod herdr_server;
mod support;
mod surfaces;
