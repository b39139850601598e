//! The Herdr client against the recorded-reply double and a real headless Herdr server: one test
//! binary, a module per behaviour.

mod process;
mod real_server;
