//! herd-watch against real children: launched by the real herd-launch with the exec runner, each
//! child a small shell script that follows the on-disk protocol (or the real Pi CLI with the
//! scripted model), on the process surface, a private tmux server or a real headless Herdr
//! server.
//!
//! Without a Herdr (`HERD_TEST_HERDR`) each Herdr test says on stderr that it did not run; in CI
//! it fails.

#![expect(
    clippy::unwrap_used,
    reason = "a broken fixture should fail the test loudly"
)]

mod cancel;
mod completion;
mod fallback;
mod files;
mod follow;
mod gate;
mod herdr;
mod launch;
mod needs_input;
mod results;
mod specialist;
mod status;
mod steering;
mod support;
mod time_limit;
mod tmux;
