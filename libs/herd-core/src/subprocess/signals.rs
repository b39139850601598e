//! SIGTERM and SIGINT of the current process as messages on a channel.

use std::thread;

use crossbeam_channel::Receiver;

use super::Error;

/// Turns SIGTERM and SIGINT of the current process into messages (the signal number) on a
/// channel, for [`run_with_cancel`](super::run_with_cancel).
///
/// From the first call on, these signals no longer end the process by themselves: the caller
/// must react to the messages (stop its children, then exit, typically with 128 + the signal).
/// The handlers stay installed for the life of the process; each call installs another set and
/// returns its own channel. A message is dropped when eight are already waiting.
pub fn termination_signals() -> Result<Receiver<i32>, Error> {
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
    ])
    .map_err(|source| Error::Signals { source })?;
    let (tx, rx) = crossbeam_channel::bounded(8);
    thread::Builder::new()
        .name("herd-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                let _ = tx.try_send(signal);
            }
        })
        .map_err(|source| Error::Signals { source })?;
    Ok(rx)
}
