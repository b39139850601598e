//! The open-run set `runs/open/<run-id>`: one empty entry per run not yet closed, so the commands
//! that look at runs in flight (`follow`, `wait`, the widget, a name lookup, spawn's checks) read
//! the few open runs and never the history.
//!
//! A run is *closed* once its result is marked delivered (`runs/<id>.delivered`) or a successor
//! replaced it (`runs/<id>.superseded.json` naming one); nothing reopens it. The run records stay
//! the source of truth and the set is only ever a superset of the open runs, whatever program is
//! killed at whatever instant:
//!
//! - herd-launch adds a run's entry before it claims the record, so no record exists without
//!   one. Nothing of the set is synced to disk (a directory fsync costs milliseconds on a busy
//!   disk): only a power loss could lose part of it, a power loss means a new boot, and the set
//!   names the boot it was last completed in (`runs/open/.boot`), so the first program of a new
//!   boot adds every open record to it again, and a set lost whole is built again;
//! - an entry goes only after its run is closed on disk, removed by whoever closes it or by any
//!   reader that finds it closed ([`forget_closed`]); a kill in between leaves a stale entry,
//!   which readers skip and remove;
//! - an entry without a record (a launch killed before its claim, or withdrawn) is removed once it
//!   is older than [`STALE_ENTRY`] ([`forget_unclaimed`]);
//! - a directory written before the set existed has no `runs/open/`: the first program that needs
//!   the set builds it from the records in a directory of its own and renames it into place
//!   without replacing (`RENAME_NOREPLACE`), so an entry another program added meanwhile is never
//!   lost; where it cannot be built (a read-only directory), [`list`] answers every run id, the
//!   largest superset.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::layout::{Artifacts, validate_run_id};
use herd_core::{Error, ErrorCode, sidecar};

/// The name of the set's directory inside `runs/`.
pub const DIR_NAME: &str = "open";

/// How old an entry without a record must be before a reader removes it: far longer than the
/// instant between a launch's entry and its claimed record.
pub const STALE_ENTRY: Duration = Duration::from_secs(10 * 60);

/// `runs/open/`.
pub fn dir(artifacts: &Artifacts) -> PathBuf {
    artifacts.runs_dir().join(DIR_NAME)
}

/// `runs/open/<run-id>`.
pub fn entry(artifacts: &Artifacts, run_id: &str) -> PathBuf {
    dir(artifacts).join(run_id)
}

/// Whether `run_id` is closed on disk: delivered, or replaced by a successor.
pub fn is_closed(artifacts: &Artifacts, run_id: &str) -> bool {
    artifacts.delivered(run_id).exists()
        || crate::run::Superseded::read(artifacts, run_id).is_some_and(|s| s.successor.is_some())
}

/// The file naming the boot in which the set was last known complete.
const BOOT_FILE: &str = ".boot";

/// Adds `run_id` to the set, building the set first where it does not exist.
pub fn add(artifacts: &Artifacts, run_id: &str) -> Result<(), Error> {
    validate_run_id(run_id)?;
    let dir = ensure(artifacts)?;
    create_entry(&dir.join(run_id))
}

fn create_entry(path: &Path) -> Result<(), Error> {
    sidecar::private()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map(drop)
        .map_err(|e| unavailable(path, e))
}

/// Adds every record not closed to the set in `dir` (never removing one).
fn add_open_records(artifacts: &Artifacts, dir: &Path) -> Result<(), Error> {
    for id in artifacts.run_ids()? {
        if !is_closed(artifacts, &id) {
            create_entry(&dir.join(&id))?;
        }
    }
    Ok(())
}

/// Records in the set that it is complete in this boot. A torn or lost stamp only makes the next
/// program add the open records again.
fn stamp_boot(dir: &Path, boot: &str) -> Result<(), Error> {
    use std::io::Write;
    let path = dir.join(BOOT_FILE);
    sidecar::private()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .and_then(|mut file| file.write_all(boot.as_bytes()))
        .map_err(|e| unavailable(&path, e))
}

/// The directories whose set this process has found stamped with the current boot.
static CHECKED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// After a power loss, entries created without a sync may be gone: the first program of a
/// new boot adds every open record again, then stamps the set with the boot.
fn check_boot(artifacts: &Artifacts, dir: &Path) -> Result<(), Error> {
    let mut checked = CHECKED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if checked.iter().any(|d| d == dir) {
        return Ok(());
    }
    let Ok(boot) = herd_core::identity::boot_id() else {
        return Ok(());
    };
    let stamped = sidecar::read_bounded(&dir.join(BOOT_FILE), 256)?;
    if stamped.as_deref() != Some(boot.as_bytes()) {
        add_open_records(artifacts, dir)?;
        stamp_boot(dir, &boot)?;
    }
    checked.push(dir.to_path_buf());
    Ok(())
}

/// Removes `run_id`'s entry (nothing when there is none). Called once the run is closed on disk.
pub fn remove(artifacts: &Artifacts, run_id: &str) {
    if validate_run_id(run_id).is_ok() {
        let _ = fs::remove_file(entry(artifacts, run_id));
    }
}

/// Removes the entry of `run_id` when the run is closed; returns whether it is.
pub fn forget_closed(artifacts: &Artifacts, run_id: &str) -> bool {
    let closed = is_closed(artifacts, run_id);
    if closed {
        remove(artifacts, run_id);
    }
    closed
}

/// Removes the entry of `run_id` when it has no record and is older than [`STALE_ENTRY`].
pub fn forget_unclaimed(artifacts: &Artifacts, run_id: &str) {
    if artifacts.run_record(run_id).exists() {
        return;
    }
    let old = fs::symlink_metadata(entry(artifacts, run_id))
        .and_then(|m| m.modified())
        .ok()
        .and_then(|at| at.elapsed().ok())
        .is_some_and(|age| age >= STALE_ENTRY);
    if old {
        remove(artifacts, run_id);
    }
}

/// The ids of the set, sorted: every open run, and perhaps some closed or unclaimed ones the
/// caller skips (and may forget). Where the set cannot be read or built, every run id.
pub fn list(artifacts: &Artifacts) -> Result<Vec<String>, Error> {
    let Ok(dir) = ensure(artifacts) else {
        return artifacts.run_ids();
    };
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(_) => return artifacts.run_ids(),
    };
    let mut ids = Vec::new();
    for entry in entries {
        let Ok(entry) = entry else {
            return artifacts.run_ids();
        };
        if let Some(id) = entry.file_name().to_str() {
            if validate_run_id(id).is_ok() {
                ids.push(id.to_owned());
            }
        }
    }
    ids.sort();
    Ok(ids)
}

/// The set's directory, built from the run records when it does not exist yet.
pub fn ensure(artifacts: &Artifacts) -> Result<PathBuf, Error> {
    let dir = dir(artifacts);
    if dir.is_dir() {
        check_boot(artifacts, &dir)?;
        return Ok(dir);
    }
    let runs = artifacts.runs_dir();
    sidecar::ensure_private_dir(&runs)?;
    // A name no other builder uses; 0700 whatever the umask, like every directory herd makes.
    let building = sidecar::private_temp_dir(&runs, ".open-").map_err(|e| unavailable(&runs, e))?;
    add_open_records(artifacts, building.path())?;
    if let Ok(boot) = herd_core::identity::boot_id() {
        stamp_boot(building.path(), &boot)?;
    }
    match sidecar::rename_no_replace(building.path(), &dir) {
        Ok(()) => {
            // Renamed away: nothing is left for the guard to remove.
            let _ = building.keep();
            Ok(dir)
        }
        // Another program built it first; its set stands and this one goes with the guard.
        Err(_) if dir.is_dir() => Ok(dir),
        Err(e) => Err(unavailable(&dir, e)),
    }
}

fn unavailable(path: &Path, e: io::Error) -> Error {
    Error::new(
        ErrorCode::Unavailable,
        format!("cannot update the open-run set at {}: {e}", path.display()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(art: &Artifacts, id: &str) {
        sidecar::write_json(
            &art.run_record(id),
            &serde_json::json!({"format_version": 1, "run_id": id}),
        )
        .unwrap();
    }

    #[test]
    fn a_directory_without_the_set_is_indexed_from_its_records() {
        let tmp = tempfile::tempdir().unwrap();
        let art = Artifacts::new(tmp.path());
        for id in ["a1", "b2", "c3", "d4"] {
            record(&art, id);
        }
        fs::write(art.delivered("b2"), "{}").unwrap();
        sidecar::write_json(
            &art.run("c3").path::<crate::run::Superseded>(),
            &serde_json::json!({"format_version": 1, "at_ms": 1, "successor": "d4"}),
        )
        .unwrap();
        assert!(!dir(&art).exists());
        assert_eq!(list(&art).unwrap(), ["a1", "d4"]);
        assert!(dir(&art).is_dir());
        // Nothing of the build is left beside the set.
        let leftovers: Vec<_> = fs::read_dir(art.runs_dir())
            .unwrap()
            .filter_map(|e| e.unwrap().file_name().into_string().ok())
            .filter(|n| n.starts_with(".open-"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        // Once built, the set is read, not rebuilt: a new record alone is not in it.
        record(&art, "e5");
        assert_eq!(list(&art).unwrap(), ["a1", "d4"]);
        add(&art, "e5").unwrap();
        assert_eq!(list(&art).unwrap(), ["a1", "d4", "e5"]);
    }

    #[test]
    fn a_set_built_by_another_program_first_stands() {
        let tmp = tempfile::tempdir().unwrap();
        let art = Artifacts::new(tmp.path());
        record(&art, "a1");
        // Another program built the set and added a run this build's scan did not see.
        fs::create_dir_all(dir(&art)).unwrap();
        fs::write(entry(&art, "z9"), "").unwrap();
        fs::write(
            dir(&art).join(BOOT_FILE),
            herd_core::identity::boot_id().unwrap(),
        )
        .unwrap();
        assert_eq!(list(&art).unwrap(), ["z9"]);
        let other = tempfile::tempdir_in(art.runs_dir()).unwrap();
        assert!(sidecar::rename_no_replace(other.path(), &dir(&art)).is_err());
    }

    #[test]
    fn a_set_of_an_earlier_boot_gets_every_open_record_again() {
        let tmp = tempfile::tempdir().unwrap();
        let art = Artifacts::new(tmp.path());
        record(&art, "a1");
        record(&art, "b2");
        fs::write(art.delivered("b2"), "{}").unwrap();
        // A set left by an earlier boot that lost the entry of a1 in a power loss.
        fs::create_dir_all(dir(&art)).unwrap();
        fs::write(dir(&art).join(BOOT_FILE), "an-earlier-boot").unwrap();
        assert_eq!(list(&art).unwrap(), ["a1"]);
        assert_eq!(
            fs::read_to_string(dir(&art).join(BOOT_FILE)).unwrap(),
            herd_core::identity::boot_id().unwrap()
        );
    }

    #[test]
    fn closed_and_unclaimed_entries_are_forgotten() {
        let tmp = tempfile::tempdir().unwrap();
        let art = Artifacts::new(tmp.path());
        record(&art, "a1");
        add(&art, "a1").unwrap();
        add(&art, "b2").unwrap();
        assert!(!forget_closed(&art, "a1"));
        fs::write(art.delivered("a1"), "{}").unwrap();
        assert!(forget_closed(&art, "a1"));
        // A fresh entry without a record may be a launch about to claim it.
        forget_unclaimed(&art, "b2");
        assert_eq!(list(&art).unwrap(), ["b2"]);
        let old = std::time::SystemTime::now() - STALE_ENTRY - Duration::from_secs(1);
        fs::File::options()
            .write(true)
            .open(entry(&art, "b2"))
            .unwrap()
            .set_modified(old)
            .unwrap();
        forget_unclaimed(&art, "b2");
        assert!(list(&art).unwrap().is_empty());
    }
}
