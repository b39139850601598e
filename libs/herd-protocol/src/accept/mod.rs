//! The formats of `herd-accept`: the accept spec's file form, `herd-accept check --json`, the
//! verdict, the child-written `<session>.accept-tries.json`, and the acceptance gate: the run's gate
//! `runs/<run-id>.acceptance.json`, the child's acceptance report, the ledger `herd-accept report
//! --json` prints, the review `runs/<run-id>.review.json` and the verify memo
//! `verify-memo/<key>.json`.

mod check;
mod gate;
mod ledger;
mod memo;
mod report;
mod review;
mod spec;
mod tries;
mod verdict;

pub use check::{AcceptCheck, CheckOutcome, CheckRun};
pub use gate::{
    Criterion, EvidenceKind, Gate, Level, RUN_GATE_READ_LIMIT, RUN_GATE_VERSION, Review,
    ReviewTarget, RunGate, Severity, VerifyCommand, read_run_gate,
};
pub use ledger::{
    CheckStatus, LEDGER_VERSION, Ledger, NotApplied, RuntimeCheck, Status, VerifyRun, VerifyStatus,
};
pub use memo::{MEMO_READ_LIMIT, MEMO_VERSION, Memo, memo_dir, memo_file, read_memo};
pub use report::{
    AcceptanceReport, CommandReport, CommandResult, CriterionReport, CriterionStatus, ReportSource,
};
pub use review::{REVIEW_VERSION, ReviewRecord};
pub use spec::{
    MAX_RETRIES_DEFAULT, MAX_RETRIES_LIMIT, PATH_MAX_BYTES, PATHS_MAX, RUN_MAX_BYTES,
    SPEC_READ_LIMIT, SPEC_VERSION, SpecFile, TIMEOUT_SEC_DEFAULT, TIMEOUT_SEC_LIMIT,
};
pub use tries::AcceptTries;
pub use verdict::{ChildReport, Reason, UnreadableSpec, Verdict, VerdictDetails};
// How a run ended, as the verdict's `outcome` names it, is the result's [`RunOutcome`].
pub use crate::result::RunOutcome;
