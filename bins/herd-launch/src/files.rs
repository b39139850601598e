//! How herd-launch writes its files: whole or not at all, but without waiting for the disk.
//!
//! Every file is written to a temporary file beside it and renamed into place (or linked, for a
//! file created once), so a reader never sees a torn file and a process killed at any instant
//! leaves the old file or the new one. None of them is fsynced: a launch only matters while its
//! child can run, and no child survives the power loss an fsync would guard against, while an
//! fsync costs milliseconds on a busy disk for every launch. The files the child writes itself
//! (its identity record, through `herd-launch exec`) and the accept spec (herd-accept's) keep
//! their own, synced writers. Every reader of these files fails closed on a missing or malformed
//! file, so a file lost in a crash of the machine is refused, never trusted.
//!
//! Every file is private: 0600 (a launch script 0700), its directories 0700, whatever the umask.
//! The temporary file is created exclusively, and the rename or link into place replaces or
//! refuses a symlink planted at the final name, never following it.

use std::path::Path;

use herd_core::Error;
use herd_core::sidecar::{AtomicWrite, Durability};
use herd_protocol::layout::{Artifacts, validate_run_id};
use herd_protocol::run::{FORMAT_VERSION, RunRecord};

/// The writer of every herd-launch file: atomic, private, not fsynced (see the module docs).
const WRITER: AtomicWrite = AtomicWrite::new(Durability::Unsynced);

/// Replaces `path` with `bytes` atomically (mode 0600).
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    Ok(WRITER.replace(path, bytes)?)
}

/// [`write`] with a file mode (e.g. 0700 for a launch script).
pub fn write_mode(path: &Path, bytes: &[u8], mode: u32) -> Result<(), Error> {
    Ok(WRITER.mode(mode).replace(path, bytes)?)
}

/// Creates `path` with `bytes` unless it exists; `false` when it already did (the first wins).
pub fn create_once(path: &Path, bytes: &[u8]) -> Result<bool, Error> {
    Ok(WRITER.create_once(path, bytes)?)
}

fn record_bytes(record: &RunRecord) -> Result<Vec<u8>, Error> {
    let mut bytes =
        serde_json::to_vec_pretty(record).map_err(|e| Error::internal(e.to_string()))?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Claims `record.run_id` by creating its record; `false` when the id is taken. A child of a run
/// of `artifacts` is first added to its parent's list of children.
pub fn claim_record(artifacts: &Artifacts, record: &mut RunRecord) -> Result<bool, Error> {
    validate_run_id(&record.run_id)?;
    record.format_version = FORMAT_VERSION;
    record.extra.links_children = true;
    if let Some(parent) = &record.parent_run_id {
        herd_protocol::run::link_child(artifacts, parent, &record.run_id)?;
    }
    create_once(
        &artifacts.run_record(&record.run_id),
        &record_bytes(record)?,
    )
}

/// Saves the record, stamping its version and update time.
pub fn save_record(artifacts: &Artifacts, record: &mut RunRecord) -> Result<(), Error> {
    validate_run_id(&record.run_id)?;
    record.format_version = FORMAT_VERSION;
    record.updated_at_ms = herd_core::time::now_ms();
    write(
        &artifacts.run_record(&record.run_id),
        &record_bytes(record)?,
    )
}

/// Saves JSON (pretty, newline-terminated).
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<(), Error> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| Error::internal(e.to_string()))?;
    bytes.push(b'\n');
    write(path, &bytes)
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    #[test]
    fn writes_replace_creates_keep_the_first_and_no_temp_file_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a").join("x.json");
        write(&path, b"one").unwrap();
        write(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        let once = dir.path().join("a").join("y.json");
        assert!(create_once(&once, b"first").unwrap());
        assert!(!create_once(&once, b"second").unwrap());
        assert_eq!(fs::read(&once).unwrap(), b"first");
        write_mode(&dir.path().join("a").join("s.sh"), b"#!/bin/sh\n", 0o700).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = |name: &str| {
            fs::metadata(dir.path().join("a").join(name))
                .unwrap()
                .permissions()
                .mode()
                & 0o777
        };
        assert_eq!(mode("s.sh"), 0o700);
        assert_eq!((mode("x.json"), mode("y.json")), (0o600, 0o600));
        let mut names: Vec<_> = fs::read_dir(dir.path().join("a"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names, ["s.sh", "x.json", "y.json"]);
    }
}
