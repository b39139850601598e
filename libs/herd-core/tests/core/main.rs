//! herd-core against adversarial text and real process trees: one test binary, a module per
//! behaviour.

mod escape;
mod escape_invariants;
mod identity;
mod subprocess;
