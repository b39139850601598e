//! Crash points: named places in a run's lifecycle where herd-watch kills itself on request, so
//! the crash tests can stop it exactly there and check that a restart still delivers once.

/// The environment variable naming a point at which herd-watch kills itself, for crash tests.
pub const CRASH_AT_ENV: &str = "HERD_WATCH_CRASH_AT";

/// The points [`point`] knows, in lifecycle order. Between `before-emit` and `after-mark`
/// lies the one window exactly-once cannot close: the result was written to stdout but the
/// marker not yet (see [`crate::delivery`]).
pub const CRASH_POINTS: [&str; 10] = [
    "scan",
    "evidence",
    "completion-observed",
    "finish-start",
    "before-settle",
    "after-settle",
    "before-deliver",
    "before-ledger",
    "before-emit",
    "after-mark",
];

/// A crash point off the common path: after a model fallback was claimed, before its launch.
pub const FALLBACK_CRASH_POINT: &str = "fallback-claimed";

/// Kills this process with SIGKILL when `HERD_WATCH_CRASH_AT` names `point`.
///
/// The crash tests use it to stop herd-watch at exact points of a lifecycle; it costs one
/// environment lookup otherwise.
pub fn point(name: &str) {
    if std::env::var_os(CRASH_AT_ENV).is_some_and(|v| v == name) {
        // SAFETY: raising a signal on our own process.
        unsafe {
            libc::raise(libc::SIGKILL);
        }
    }
}
