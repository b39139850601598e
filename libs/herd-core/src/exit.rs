//! The one exit-code table, the same in every herd binary (docs/exit-codes.md renders it).
//!
//! The docs render [`TABLE`]; binaries turn an [`crate::ErrorCode`] or a domain outcome into one
//! of these constants and nowhere else.

/// Success: launched, completed, accepted, removed, confirmed.
pub const SUCCESS: i32 = 0;
/// A valid negative answer: check rejected, removal blocked, child failed.
pub const NEGATIVE: i32 = 1;
/// Usage error or invalid request; nothing was changed.
pub const USAGE: i32 = 2;
/// Uncertain: an effect may have happened; state is kept, do not retry blindly.
pub const UNCERTAIN: i32 = 3;
/// No answer: check error, surface or git unavailable, inspection unknown.
pub const NO_ANSWER: i32 = 4;
/// Cancelled or skipped.
pub const CANCELLED: i32 = 5;
/// The child asked for help (`caller_ping`).
pub const HELP: i32 = 6;
/// Refused because busy or held (persistent specialist busy, lock held, a worktree branch another
/// creation holds).
pub const BUSY: i32 = 7;
/// Internal error, including "not yet implemented".
pub const INTERNAL: i32 = 70;
/// Interrupted by Ctrl-C (128 + SIGINT): the command stopped; a child it waited for goes on.
pub const INTERRUPTED: i32 = 130;

/// One row of the exit-code table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitRow {
    pub code: i32,
    pub meaning: &'static str,
}

/// Every exit code herd uses, in order, with the meaning the docs print.
pub const TABLE: &[ExitRow] = &[
    ExitRow {
        code: SUCCESS,
        meaning: "success: launched, completed, accepted, removed, confirmed",
    },
    ExitRow {
        code: NEGATIVE,
        meaning: "a valid negative answer: check rejected, removal blocked, child failed",
    },
    ExitRow {
        code: USAGE,
        meaning: "usage error or invalid request; nothing was changed",
    },
    ExitRow {
        code: UNCERTAIN,
        meaning: "uncertain: an effect may have happened (dispatch, cancel unconfirmed); state is kept, do not retry blindly",
    },
    ExitRow {
        code: NO_ANSWER,
        meaning: "no answer: check error (timeout, could not start), surface or git unavailable, inspection unknown",
    },
    ExitRow {
        code: CANCELLED,
        meaning: "cancelled or skipped",
    },
    ExitRow {
        code: HELP,
        meaning: "the child asked for help (`caller_ping`)",
    },
    ExitRow {
        code: BUSY,
        meaning: "refused because busy or held (persistent specialist busy, lock held, a worktree branch another creation holds)",
    },
    ExitRow {
        code: INTERNAL,
        meaning: "internal error",
    },
    ExitRow {
        code: INTERRUPTED,
        meaning: "interrupted by Ctrl-C (128 + SIGINT; 143 for SIGTERM): the command stopped, a child it waited for keeps running (`herd-watch wait` says so and how to wait again)",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_unique() {
        let codes: Vec<i32> = TABLE.iter().map(|row| row.code).collect();
        let mut sorted = codes.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(codes, sorted);
        assert_eq!(codes, [0, 1, 2, 3, 4, 5, 6, 7, 70, 130]);
    }
}
