//! End-to-end scenarios across the herd binaries.

mod cli;
