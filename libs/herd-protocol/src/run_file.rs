//! The files beside a run's record, each a type.
//!
//! A per-run file is `runs/<run-id>.<suffix>`: a JSON document with a `format_version`. Its type
//! says, once, what every reader and writer of it must agree on ([`RunFile`]): the suffix, the
//! version herd stamps on a write and accepts on a read (a newer one is refused, never misread),
//! the bound of a read, and whether a write is fsynced. A [`Run`] handle reads, writes and
//! creates each file through that table, so no caller spells a suffix, a version or a bound;
//! a test of [`crate::session_file`], the twin of this table for the files beside a session,
//! keeps it so in `bins/`, `libs/` and `xtask/`.
//!
//! ```
//! use herd_protocol::intents::Interrupt;
//! use herd_protocol::layout::Artifacts;
//! let dir = tempfile::tempdir().unwrap();
//! let artifacts = Artifacts::new(dir.path());
//! let run = artifacts.run("ab12cd34");
//! run.write(Interrupt { format_version: 0, at_ms: 7 }).unwrap();
//! assert_eq!(run.read::<Interrupt>().unwrap().unwrap().format_version, 1);
//! ```

use std::path::PathBuf;

use herd_core::sidecar::{self, AtomicWrite, Durability};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::layout::Artifacts;

/// A file of `runs/` beside a run's record.
pub trait RunFile: Serialize + DeserializeOwned {
    /// The file is `runs/<run-id>.<SUFFIX>`.
    const SUFFIX: &'static str;
    /// The `format_version` a write stamps and the newest a read accepts.
    const VERSION: u64;
    /// The most a read takes in.
    const READ_LIMIT: u64;
    /// Whether a write survives a crash of the machine ([`Durability::Synced`]) or only one of
    /// its writer.
    const DURABILITY: Durability;
    /// The name of the version field on disk.
    const VERSION_FIELD: &'static str = "format_version";
    /// Sets the file's `format_version` to [`RunFile::VERSION`].
    fn stamp(&mut self);
}

/// Implements [`RunFile`] for types whose version is their `format_version` field, and lists
/// them by name in [`VERSIONED`].
macro_rules! run_file {
    ($($(#[$doc:meta])* $name:ident: $ty:ty => $suffix:literal, version $version:expr, limit $limit:expr, $durability:ident $(, field $field:literal)?;)*) => {
        $(
            $(#[$doc])*
            impl RunFile for $ty {
                const SUFFIX: &'static str = $suffix;
                const VERSION: u64 = $version;
                const READ_LIMIT: u64 = $limit;
                const DURABILITY: Durability = Durability::$durability;
                $(const VERSION_FIELD: &'static str = $field;)?
                fn stamp(&mut self) {
                    self.format_version = $version;
                }
            }
        )*

        /// The files of the table by name: `(name, suffix)`, the file being
        /// `runs/<run-id>.<suffix>`.
        pub const VERSIONED: &[(&str, &str)] = &[$((stringify!($name), <$ty as RunFile>::SUFFIX),)*];

        /// The files of the table by name with their version and read bound: `(name, version,
        /// bound)`, for the extensions' generated table.
        pub const VERSIONS: &[(&str, u64, u64)] = &[$((
            stringify!($name),
            <$ty as RunFile>::VERSION,
            <$ty as RunFile>::READ_LIMIT,
        ),)*];
    };
}

run_file! {
    /// `herd-watch cancel`'s intent, then the termination's outcome.
    cancel: crate::intents::CancelIntent => "cancel.json", version 1, limit 16 * 1024, Synced;
    /// When `herd-watch interrupt` last sent Escape.
    interrupt: crate::intents::Interrupt => "interrupt.json", version 1, limit 4 * 1024, Synced;
    /// The time limit that passed, written once before the cancel it leads to.
    timeout: crate::intents::Expiry => "timeout.json", version 1, limit 4 * 1024, Synced;
    /// The hard budget that was reached, written once before the cancel it leads to.
    budget: crate::intents::BudgetStop => "budget.json", version 1, limit 4 * 1024, Synced;
    /// The steering messages not yet delivered.
    steer: crate::intents::SteerQueue => "steer.json", version 1, limit 1024 * 1024, Synced;
    /// The receipts of the last steering requests.
    steering: crate::intents::SteeringLedger => "steering.json", version 1, limit 1024 * 1024, Synced;
    /// The attempt was replaced and is not delivered.
    superseded: crate::run::Superseded => "superseded.json", version 1, limit 16 * 1024, Synced;
    /// The attempts a model fallback replaced, beside their successor.
    predecessor: crate::run::Predecessor => "predecessor.json", version 1, limit 64 * 1024, Synced;
    /// `herd-launch resurrect` took up the lost run: its successor, once launched.
    resurrected: crate::launch::resurrect::Resurrected => "resurrected.json", version 1, limit 16 * 1024, Synced;
    /// The run's acceptance gate.
    acceptance: crate::accept::RunGate => "acceptance.json", version crate::accept::RUN_GATE_VERSION, limit crate::accept::RUN_GATE_READ_LIMIT, Synced;
    /// A reviewer's decision on the run.
    review: crate::accept::ReviewRecord => "review.json", version crate::accept::REVIEW_VERSION, limit 256 * 1024, Synced;
    /// What the host of a run on another machine last said of it.
    remote: crate::run::RemoteState => "remote.json", version 1, limit 64 * 1024, Synced;
    /// How far `herd-watch` read the run's session for its usage. A lost write only costs a read
    /// from the start, so it is not fsynced.
    usage: crate::usage::UsageCursor => "usage.json", version crate::usage::CURSOR_VERSION, limit 4 * 1024 * 1024, Unsynced, field "formatVersion";
}

/// Every per-run file by name, `(name, suffix)`, the file being `runs/<run-id>.<suffix>`: the
/// record, its events, its result and the markers ([`crate::layout::RUN_FILES`]), then the
/// versioned documents of the table ([`VERSIONED`]). The extensions' generated table of file
/// names is made from this list.
pub fn run_file_names() -> Vec<(&'static str, &'static str)> {
    crate::layout::RUN_FILES
        .iter()
        .chain(VERSIONED)
        .copied()
        .collect()
}

/// The files of one run: `runs/<run-id>.*` of an artifacts directory.
#[derive(Debug, Clone, Copy)]
pub struct Run<'a> {
    artifacts: &'a Artifacts,
    run_id: &'a str,
}

impl Artifacts {
    /// The files of run `run_id`.
    pub fn run<'a>(&'a self, run_id: &'a str) -> Run<'a> {
        Run {
            artifacts: self,
            run_id,
        }
    }
}

impl Run<'_> {
    /// Where file `F` of this run is.
    pub fn path<F: RunFile>(&self) -> PathBuf {
        self.artifacts
            .runs_dir()
            .join(format!("{}.{}", self.run_id, F::SUFFIX))
    }

    /// Where every per-run file of the table ([`run_file_names`]) of this run is, present or
    /// not, in the table's order.
    pub fn every_path(&self) -> impl Iterator<Item = PathBuf> + '_ {
        let runs = self.artifacts.runs_dir();
        run_file_names()
            .into_iter()
            .map(move |(_, suffix)| runs.join(format!("{}.{suffix}", self.run_id)))
    }

    /// Reads file `F`: `Ok(None)` when there is none; an error when it is larger than its bound,
    /// malformed, or of a newer version than this build knows.
    pub fn read<F: RunFile>(&self) -> Result<Option<F>, sidecar::Error> {
        sidecar::read_versioned(
            &self.path::<F>(),
            F::READ_LIMIT,
            F::VERSION_FIELD,
            F::VERSION,
        )
    }

    /// Writes file `F`, stamped with its version, atomically (replacing the one there).
    pub fn write<F: RunFile>(&self, mut file: F) -> Result<(), sidecar::Error> {
        file.stamp();
        AtomicWrite::new(F::DURABILITY).replace(&self.path::<F>(), &encode(&file)?)
    }

    /// Creates file `F`, stamped with its version, unless it exists: `false` when it did (and it
    /// is kept as it was).
    pub fn create_once<F: RunFile>(&self, mut file: F) -> Result<bool, sidecar::Error> {
        file.stamp();
        AtomicWrite::new(F::DURABILITY).create_once(&self.path::<F>(), &encode(&file)?)
    }
}

/// Pretty JSON and a newline, as every herd file; refused (and nothing written) when it would
/// be larger than the bound every reader applies, so no write makes a file no one can read.
fn encode<F: RunFile>(file: &F) -> Result<Vec<u8>, sidecar::Error> {
    let mut bytes = serde_json::to_vec_pretty(file).map_err(|e| sidecar::Error::Malformed {
        path: PathBuf::from(F::SUFFIX),
        source: e,
    })?;
    bytes.push(b'\n');
    if bytes.len() as u64 > F::READ_LIMIT {
        return Err(sidecar::Error::TooLarge {
            path: PathBuf::from(F::SUFFIX),
            limit: F::READ_LIMIT,
        });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intents::{CancelIntent, Interrupt};

    #[test]
    fn a_write_stamps_the_version_and_a_read_refuses_a_newer_one() {
        let dir = tempfile::tempdir().unwrap();
        let artifacts = Artifacts::new(dir.path());
        let run = artifacts.run("ab12cd34");
        assert!(run.read::<Interrupt>().unwrap().is_none());
        run.write(Interrupt {
            format_version: 9,
            at_ms: 5,
        })
        .unwrap();
        let path = run.path::<Interrupt>();
        assert_eq!(path, dir.path().join("runs/ab12cd34.interrupt.json"));
        assert_eq!(
            run.read::<Interrupt>().unwrap(),
            Some(Interrupt {
                format_version: 1,
                at_ms: 5
            })
        );
        std::fs::write(&path, r#"{"format_version": 2, "at_ms": 5}"#).unwrap();
        assert!(matches!(
            run.read::<Interrupt>(),
            Err(sidecar::Error::NewerVersion { found: 2, .. })
        ));
        std::fs::write(&path, vec![b' '; 5 * 1024]).unwrap();
        assert!(run.read::<Interrupt>().is_err(), "beyond its bound");
        // A write that would pass the bound is refused, and the file is left as it was.
        let queue = crate::intents::SteerQueue {
            messages: vec!["m".repeat(1024); 1100],
            ..Default::default()
        };
        let steer = run.path::<crate::intents::SteerQueue>();
        assert!(matches!(
            run.write(queue),
            Err(sidecar::Error::TooLarge { .. })
        ));
        assert!(!steer.exists());
    }

    #[test]
    fn every_per_run_file_has_one_name_and_one_suffix() {
        let names = run_file_names();
        let mut keys: Vec<&str> = names.iter().map(|(name, _)| *name).collect();
        let mut suffixes: Vec<&str> = names.iter().map(|(_, suffix)| *suffix).collect();
        keys.sort_unstable();
        keys.dedup();
        suffixes.sort_unstable();
        suffixes.dedup();
        assert_eq!((keys.len(), suffixes.len()), (names.len(), names.len()));
        let artifacts = Artifacts::new("/a");
        let run = artifacts.run("r1");
        let find = |name: &str| names.iter().find(|(n, _)| *n == name).unwrap().1;
        assert_eq!(
            artifacts.run_record("r1"),
            artifacts.runs_dir().join(format!("r1.{}", find("record")))
        );
        assert_eq!(
            run.path::<crate::run::Superseded>(),
            artifacts
                .runs_dir()
                .join(format!("r1.{}", find("superseded")))
        );
    }

    #[test]
    fn create_once_keeps_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let artifacts = Artifacts::new(dir.path());
        let run = artifacts.run("ab12cd34");
        let intent = |at| CancelIntent {
            format_version: 0,
            requested_at_ms: at,
            termination: None,
            confirmed_at_ms: None,
            error: None,
        };
        assert!(run.create_once(intent(1)).unwrap());
        assert!(!run.create_once(intent(2)).unwrap());
        let kept = run.read::<CancelIntent>().unwrap().unwrap();
        assert_eq!((kept.format_version, kept.requested_at_ms), (1, 1));
    }
}
