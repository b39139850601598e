//! The pace of a supervision probe that keeps failing: after a failed inspection the next one waits
//! 1 s, then 2 s, 4 s, … up to a 30 s cap ([`herd_surface::retry_wait`]), and the first answer ends
//! the backoff. A failed probe is never exit evidence: it only paces the next.

use std::time::Instant;

/// The backoff of one probe: how many failed in a row, and when the next may run.
#[derive(Debug, Default, Clone)]
pub(crate) struct Backoff {
    failures: u32,
    next_at: Option<Instant>,
}

impl Backoff {
    /// Whether the probe may run at `now`: it is not failing, or its wait is over.
    pub(crate) fn ready(&self, now: Instant) -> bool {
        self.next_at.is_none_or(|at| now >= at)
    }

    /// The probe failed at `now`: the next waits one step longer than the last.
    pub(crate) fn failed(&mut self, now: Instant) {
        self.next_at = Some(now + herd_surface::retry_wait(self.failures));
        self.failures = self.failures.saturating_add(1);
    }

    /// The probe answered: the next runs on the usual interval.
    pub(crate) fn answered(&mut self) {
        *self = Backoff::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn waits_double_from_one_second_to_a_thirty_second_cap_and_an_answer_ends_them() {
        let start = Instant::now();
        let mut backoff = Backoff::default();
        assert!(backoff.ready(start));
        let mut at = start;
        let mut waits = Vec::new();
        for _ in 0..8 {
            backoff.failed(at);
            let next = backoff.next_at.unwrap();
            assert!(!backoff.ready(next - Duration::from_millis(1)));
            assert!(backoff.ready(next));
            waits.push((next - at).as_secs());
            at = next;
        }
        assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30, 30]);
        backoff.answered();
        assert!(backoff.ready(at));
        backoff.failed(at);
        assert_eq!(backoff.next_at.unwrap() - at, Duration::from_secs(1));
    }
}
