//! What ends a run early besides its budget: a message on a channel, or SIGTERM and SIGINT of the
//! current process, either as a [`Cancel`] a run watches or as messages on a channel.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd};
use std::thread;

use crossbeam_channel::{Receiver, TryRecvError};

use super::Error;
use super::pump::{nonblocking, pipe};

/// What stops a run early, for [`run_with_cancel`](super::run_with_cancel): a message on a
/// channel ([`Receiver`]), or a termination signal of this process ([`TerminationSignals`]).
pub trait Cancel {
    /// A descriptor that turns readable when a cancel may be waiting, watched in the run's one
    /// `poll`; `None` when there is none, and the run then looks every 10 ms.
    fn fd(&self) -> Option<BorrowedFd<'_>>;
    /// Takes a waiting cancel.
    fn take(&self) -> Taken;
}

/// What [`Cancel::take`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taken {
    /// A cancel, now consumed.
    Cancel,
    /// Nothing yet.
    Nothing,
    /// Nothing, ever again (a disconnected channel).
    Never,
}

impl<T> Cancel for Receiver<T> {
    fn fd(&self) -> Option<BorrowedFd<'_>> {
        None
    }

    fn take(&self) -> Taken {
        match self.try_recv() {
            Ok(_) => Taken::Cancel,
            Err(TryRecvError::Empty) => Taken::Nothing,
            Err(TryRecvError::Disconnected) => Taken::Never,
        }
    }
}

/// SIGTERM and SIGINT of the current process as a [`Cancel`]: the signal handlers write to a
/// pipe that a run polls with its child's pipes, so no thread waits for them.
///
/// From [`TerminationSignals::install`] on, these signals no longer end the process by
/// themselves: the caller must react to the cancel it gets (its run stops the child's group),
/// then exit, typically with 128 + the signal. The handlers stay installed for the life of the
/// process. A signal that arrives between runs cancels the next one at once.
#[derive(Debug)]
pub struct TerminationSignals {
    read: File,
}

impl TerminationSignals {
    pub fn install() -> Result<TerminationSignals, Error> {
        let signals = || -> io::Result<TerminationSignals> {
            let (read, write) = pipe()?;
            let again = write.try_clone()?;
            // The handlers write without blocking (signal-hook sets O_NONBLOCK on the write
            // end); a full pipe already says that a signal came.
            signal_hook::low_level::pipe::register(signal_hook::consts::SIGTERM, write)?;
            signal_hook::low_level::pipe::register(signal_hook::consts::SIGINT, again)?;
            Ok(TerminationSignals {
                read: nonblocking(read)?,
            })
        };
        signals().map_err(|source| Error::Signals { source })
    }
}

impl Cancel for TerminationSignals {
    fn fd(&self) -> Option<BorrowedFd<'_>> {
        Some(self.read.as_fd())
    }

    fn take(&self) -> Taken {
        let mut bytes = [0u8; 64];
        let mut taken = Taken::Nothing;
        loop {
            match (&self.read).read(&mut bytes) {
                Ok(0) => return Taken::Never,
                Ok(_) => taken = Taken::Cancel,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return taken,
            }
        }
    }
}

/// Turns SIGTERM and SIGINT of the current process into messages (the signal number) on a
/// channel, for code that selects over channels; a run is cancelled by [`TerminationSignals`]
/// without the thread this starts.
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
