//! herd-docs against the repository and real output: the generated docs are fresh and kept
//! honest by check mode (`generated`), the committed schemas accept and reject their fixtures
//! (`schemas`), and what each binary really prints satisfies its schema (`outputs`).

#![expect(
    clippy::unwrap_used,
    reason = "a fixture or copy that cannot be set up should fail the test loudly"
)]

mod generated;
mod outputs;
mod schemas;
mod support;
