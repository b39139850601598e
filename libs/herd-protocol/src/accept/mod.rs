//! The formats of `herd-accept`: the accept spec's file form, `herd-accept check --json`, the
//! verdict, and the child-written `<session>.accept-tries.json`.

mod check;
mod spec;
mod tries;
mod verdict;

pub use check::{AcceptCheck, CheckOutcome, CheckRun};
pub use spec::{
    MAX_RETRIES_DEFAULT, MAX_RETRIES_LIMIT, PATH_MAX_BYTES, PATHS_MAX, RUN_MAX_BYTES, SPEC_VERSION,
    SpecFile, TIMEOUT_SEC_DEFAULT, TIMEOUT_SEC_LIMIT,
};
pub use tries::{AcceptTries, TRIES_READ_LIMIT, read_tries, tries_file};
pub use verdict::{ChildReport, Reason, RunOutcome, Verdict, VerdictDetails};
