//! Waiting with a deadline: every wait in the scenarios names what it waits for and how long.

use std::thread;
use std::time::{Duration, Instant};

/// How often a probe is retried.
const POLL: Duration = Duration::from_millis(25);

/// Calls `probe` until it returns `Some`, for at most `budget`, and returns the value.
///
/// # Panics
///
/// When the budget is spent, with `what` in the message.
pub fn wait_for<T>(what: &str, budget: Duration, probe: impl FnMut() -> Option<T>) -> T {
    try_wait_for(budget, probe)
        .unwrap_or_else(|| panic!("timed out after {budget:?} waiting for {what}"))
}

/// Calls `probe` until it returns `Some`, for at most `budget`; `None` when the budget is spent.
///
/// The probe runs at least once, and once more after the deadline, so a slow probe that
/// succeeds at the last moment still counts.
pub fn try_wait_for<T>(budget: Duration, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + budget;
    loop {
        if let Some(value) = probe() {
            return Some(value);
        }
        let now = Instant::now();
        if now >= deadline {
            return None;
        }
        thread::sleep(POLL.min(deadline - now));
    }
}
