//! The versioned documents beside a child's session, each a type: the twin of
//! [`crate::run_file`] for `<session><suffix>`.
//!
//! A file beside a session is `<session><suffix>` ([`crate::layout::SESSION_FILES`]). The JSON
//! documents among them with a `version` — the launch policy, the process record, whether the
//! child waits for input, the child's accept tries — say once, in [`SessionFile`], what every
//! reader and writer of them agrees on: the suffix, the version a write stamps and a read accepts,
//! the bound of a read, whether a write is fsynced, and how the document is encoded and checked
//! (each has its own tolerance: the policy and the process record fail closed, the child's
//! needs-input and accept-tries files read as unknown). [`SessionFiles`] reads, writes and
//! creates each through that table, so no caller spells a suffix, a version or a bound; the test
//! at the end of this file keeps it so in `bins/`, `libs/` and `xtask/`, and the extensions'
//! generated table carries the same versions and bounds.
//!
//! A file that is written once, the first one winning (the policy, the process record), has only
//! [`SessionFiles::create_once`]; [`SessionFiles::write`], which replaces, is for the
//! [`Replaceable`] ones.
//!
//! The other files beside a session are not documents of this kind: `<session>.exit` has no
//! version (its `type` is its format, read by [`crate::child::read_exit`] as missing, not yet or
//! found), and the task events, the ledger and the task inboxes are JSON Lines and numbered files
//! of [`crate::persistent`], whose version is [`crate::persistent::VERSION`].
//!
//! ```
//! use herd_protocol::layout::SessionFiles;
//! use herd_protocol::needs_input::{ChildState, NeedsInputFile};
//! let dir = tempfile::tempdir().unwrap();
//! let files = SessionFiles::new(dir.path().join("s.jsonl"));
//! files
//!     .write(&NeedsInputFile {
//!         version: 0,
//!         running_child_id: "r1".into(),
//!         sequence: 1,
//!         state: ChildState::Dialog,
//!         since: 7,
//!         kind: None,
//!         title: None,
//!     })
//!     .unwrap();
//! assert_eq!(files.read::<NeedsInputFile>().unwrap().unwrap().version, 1);
//! ```

use std::path::{Path, PathBuf};

use herd_core::sidecar::{self, AtomicWrite, Durability};

use crate::layout::SessionFiles;

/// A versioned JSON document beside a session, `<session><SUFFIX>`.
pub trait SessionFile: Sized {
    /// The file is `<session><SUFFIX>`, one of [`crate::layout::SESSION_FILES`].
    const SUFFIX: &'static str;
    /// The version a write stamps and the newest a read accepts.
    const VERSION: u64;
    /// The name of the version field on disk.
    const VERSION_FIELD: &'static str = "version";
    /// The most a read takes in.
    const READ_LIMIT: u64;
    /// Whether a write survives a crash of the machine ([`Durability::Synced`]) or only one of
    /// its writer.
    const DURABILITY: Durability;
    /// What a read or a write of the file fails with.
    type Error: From<sidecar::Error>;
    /// The file's bytes, stamped with [`SessionFile::VERSION`].
    fn encode(&self) -> Result<Vec<u8>, Self::Error>;
    /// The document of `bytes`, checked as its readers need; `path` names the file in errors.
    fn decode(bytes: &[u8], path: &Path) -> Result<Self, Self::Error>;
}

/// A file beside a session that a writer replaces; the others are written once and the first
/// one wins.
pub trait Replaceable: SessionFile {}

/// Implements [`SessionFile`] for each type of the table, and lists them by name in
/// [`VERSIONED`].
macro_rules! session_file {
    ($($(#[$doc:meta])* $name:ident: $ty:ty => version $version:expr, limit $limit:expr, $durability:ident, error $error:ty, encode $encode:path, decode $decode:path $(, $replaceable:ident)?;)*) => {
        $(
            $(#[$doc])*
            impl SessionFile for $ty {
                const SUFFIX: &'static str = crate::layout::suffix::$name;
                const VERSION: u64 = $version;
                const READ_LIMIT: u64 = $limit;
                const DURABILITY: Durability = Durability::$durability;
                type Error = $error;
                fn encode(&self) -> Result<Vec<u8>, Self::Error> {
                    $encode(self)
                }
                fn decode(bytes: &[u8], path: &Path) -> Result<Self, Self::Error> {
                    $decode(bytes, path)
                }
            }
            $(session_file!(@$replaceable $ty);)?
        )*

        /// The versioned documents beside a session by name: `(name, version, read bound)`, the
        /// name one of [`crate::layout::SESSION_FILES`]. The extensions' generated table of
        /// versions and bounds is made from this list.
        pub const VERSIONED: &[(&str, u64, u64)] = &[$((
            stringify!($name),
            <$ty as SessionFile>::VERSION,
            <$ty as SessionFile>::READ_LIMIT,
        ),)*];
    };
    (@replaceable $ty:ty) => {
        impl Replaceable for $ty {}
    };
}

session_file! {
    /// The process identity of the child's runner, written once by whoever captures it first
    /// (pi-herdr-agents format, in herd-core beside the code that judges it).
    process: herd_core::identity::Record => version herd_core::identity::RECORD_VERSION,
        limit herd_core::identity::RECORD_READ_LIMIT, Unsynced,
        error herd_core::identity::Error,
        encode herd_core::identity::Record::to_json,
        decode herd_core::identity::Record::from_slice;
    /// The launch policy, written once at spawn: a later launch never replaces it. Version 1 is
    /// still read, never written.
    policy: crate::launch::policy::Policy => version 2, limit 256 * 1024, Unsynced,
        error herd_core::Error,
        encode crate::launch::policy::Policy::encode,
        decode crate::launch::policy::Policy::from_slice;
    /// Whether the child waits for a person (child-written, each time that changes).
    needs_input: crate::needs_input::NeedsInputFile => version 1, limit 16 * 1024, Unsynced,
        error sidecar::Error,
        encode crate::needs_input::NeedsInputFile::encode,
        decode crate::needs_input::NeedsInputFile::decode, replaceable;
    /// The child's own accept checks (child-written, after each).
    accept_tries: crate::accept::AcceptTries => version 1, limit 4096, Unsynced,
        error sidecar::Error,
        encode crate::accept::AcceptTries::encode,
        decode crate::accept::AcceptTries::decode, replaceable;
    /// The steering queued for the child's next turn boundary (host-written, each time the
    /// run's queue changes).
    steering_queued: crate::intents::SteeringQueued => version 1, limit 16 * 1024, Unsynced,
        error sidecar::Error,
        encode crate::intents::SteeringQueued::encode,
        decode crate::intents::SteeringQueued::decode, replaceable;
}

/// The versions of the other files beside a session that carry one, by name: `(name, version)`.
/// `tasks` is each line of `<session>.tasks`, `task_inbox` each task inbox file
/// ([`SessionFiles::inbox`]); the ledger's lines carry none.
pub const LINE_VERSIONS: &[(&str, u64)] = &[
    ("tasks", crate::persistent::VERSION),
    ("task_inbox", crate::persistent::VERSION),
];

/// The schema of the version field of file `F`: [`SessionFile::VERSION`], the only version a
/// writer stamps (`#[schemars(schema_with = "crate::session_file::version_of::<Type>")]`).
pub(crate) fn version_of<F: SessionFile>(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "const": F::VERSION })
}

/// A document the child writes, as it writes it: compact JSON and a newline.
pub(crate) fn compact<F: SessionFile + serde::Serialize>(
    file: &F,
) -> Result<Vec<u8>, sidecar::Error> {
    let mut bytes = serde_json::to_vec(file).map_err(|source| sidecar::Error::Malformed {
        path: PathBuf::from(F::SUFFIX),
        source,
    })?;
    bytes.push(b'\n');
    Ok(bytes)
}

impl SessionFiles {
    /// Where file `F` beside this session is.
    pub fn path<F: SessionFile>(&self) -> PathBuf {
        self.with_suffix(F::SUFFIX)
    }

    /// Reads file `F`: `Ok(None)` when there is none; an error when it is larger than its bound
    /// or [`SessionFile::decode`] refuses it.
    pub fn read<F: SessionFile>(&self) -> Result<Option<F>, F::Error> {
        let path = self.path::<F>();
        match sidecar::read_bounded(&path, F::READ_LIMIT)? {
            Some(bytes) => F::decode(&bytes, &path).map(Some),
            None => Ok(None),
        }
    }

    /// Writes file `F`, stamped with its version, atomically (replacing the one there).
    pub fn write<F: Replaceable>(&self, file: &F) -> Result<(), F::Error> {
        Ok(AtomicWrite::new(F::DURABILITY).replace(&self.path::<F>(), &file.encode()?)?)
    }

    /// Creates file `F`, stamped with its version, unless it exists: `false` when it did (and it
    /// is kept as it was).
    pub fn create_once<F: SessionFile>(&self, file: &F) -> Result<bool, F::Error> {
        create_once_at(&self.path::<F>(), file)
    }
}

/// [`SessionFiles::create_once`] of the file at `path`.
pub(crate) fn create_once_at<F: SessionFile>(path: &Path, file: &F) -> Result<bool, F::Error> {
    Ok(AtomicWrite::new(F::DURABILITY).create_once(path, &file.encode()?)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accept::{AcceptTries, ChildReport};
    use crate::launch::policy::{Owner, Policy};
    use crate::layout::SESSION_FILES;
    use crate::needs_input::NeedsInputFile;

    #[test]
    fn every_versioned_file_is_one_of_the_session_files() {
        let suffix = |name: &str| {
            SESSION_FILES
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, s)| *s)
        };
        for (name, _, _) in VERSIONED {
            assert!(suffix(name).is_some(), "{name}");
        }
        let files = SessionFiles::new("/s/a.jsonl");
        assert_eq!(files.path::<Policy>(), files.policy());
        assert_eq!(files.path::<herd_core::identity::Record>(), files.process());
        assert_eq!(files.path::<NeedsInputFile>(), files.needs_input());
        assert_eq!(files.path::<AcceptTries>(), files.accept_tries());
    }

    #[test]
    fn a_policy_is_created_once_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let files = SessionFiles::new(dir.path().join("s.jsonl"));
        assert!(files.read::<Policy>().unwrap().is_none());
        let policy = |id: &str| {
            Policy::new(
                Owner::Public,
                None,
                Vec::new(),
                false,
                id.into(),
                "g".into(),
                None,
            )
        };
        assert!(files.create_once(&policy("a")).unwrap());
        assert!(!files.create_once(&policy("b")).unwrap());
        assert_eq!(files.read::<Policy>().unwrap().unwrap(), policy("a"));
        std::fs::write(files.policy(), vec![b' '; 256 * 1024 + 1]).unwrap();
        assert!(files.read::<Policy>().is_err(), "beyond its bound");
    }

    #[test]
    fn the_childs_files_are_written_as_the_child_writes_them() {
        let dir = tempfile::tempdir().unwrap();
        let files = SessionFiles::new(dir.path().join("s.jsonl"));
        files
            .write(&AcceptTries {
                version: None,
                tries: 2,
                last: Some(ChildReport::Pass),
            })
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(files.accept_tries()).unwrap(),
            "{\"version\":1,\"tries\":2,\"last\":\"pass\"}\n"
        );
        assert_eq!(
            files.read::<AcceptTries>().unwrap().unwrap().version,
            Some(1)
        );
    }

    #[test]
    fn the_childs_files_schemas_name_their_tables_version() {
        let version =
            |schema: schemars::Schema| schema.as_value()["properties"]["version"]["const"].clone();
        assert_eq!(
            version(schemars::schema_for!(NeedsInputFile)),
            <NeedsInputFile as SessionFile>::VERSION
        );
        assert_eq!(
            version(schemars::schema_for!(AcceptTries)),
            <AcceptTries as SessionFile>::VERSION
        );
    }

    /// The suffixes and versions of the tables, spelled nowhere else in `bins/`, `libs/` and
    /// `xtask/` (their tests aside): a file of a run or beside a session is named, stamped and
    /// bounded through its type or its accessor.
    #[test]
    fn no_suffix_or_version_of_a_table_is_spelled_outside_herd_protocol() {
        let mut needles: Vec<String> = Vec::new();
        for (name, suffix) in crate::run_file::run_file_names() {
            // The record's `.json"` is every JSON file's.
            if name != "record" {
                needles.push(format!(".{suffix}\""));
            }
        }
        for (name, suffix) in SESSION_FILES {
            // `.exit"` and `.tasks"` are too common in other senses to be told apart here;
            // the extensions' test keeps them in the generated table.
            if !matches!(*name, "exit" | "tasks" | "ledger") {
                needles.push(format!("{suffix}\""));
            }
        }
        needles.push("format_version: 1,".to_owned());
        needles.push("version: 1,".to_owned());
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut found = Vec::new();
        for top in ["bins", "libs", "xtask"] {
            scan(&root.join(top), &needles, &mut found);
        }
        assert!(
            found.is_empty(),
            "a file's suffix or version spelled outside herd-protocol's tables: {found:#?}"
        );
    }

    /// The code of `dir`'s Rust files before their `#[cfg(test)]` module, comments aside, but
    /// herd-protocol's (which owns the tables) and the test directories'.
    fn scan(dir: &std::path::Path, needles: &[String], found: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.ends_with("herd-protocol")
                || path.ends_with("tests")
                || path.ends_with("tests.rs")
            {
                continue;
            }
            if path.is_dir() {
                scan(&path, needles, found);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let code = text.split("#[cfg(test)]").next().unwrap_or_default();
                let code: Vec<&str> = code
                    .lines()
                    .filter(|l| !l.trim_start().starts_with("//"))
                    .collect();
                let code = code.join("\n");
                for needle in needles {
                    if code.contains(needle.as_str()) {
                        found.push(format!("{}: {needle}", path.display()));
                    }
                }
                // A versioned file beside a session read by hand, with a bound of its own: its
                // path read on the line that makes it, or through a name bound to it first.
                let versioned: Vec<String> = VERSIONED
                    .iter()
                    .map(|(name, _, _)| format!(".{name}()"))
                    .collect();
                let by_hand = ["read_bounded(", "read_json(", "read_versioned(", "::read("];
                let mut paths: Vec<String> = Vec::new();
                for (at, line) in code.lines().enumerate() {
                    let makes_one = versioned.iter().any(|a| line.contains(a.as_str()));
                    let reads = by_hand.iter().any(|r| line.contains(r));
                    let reads_one = paths.iter().any(|p| {
                        line.contains(&format!("(&{p})")) || line.contains(&format!("({p})"))
                    });
                    if reads && (makes_one || reads_one) {
                        found.push(format!("{}:{}: {}", path.display(), at + 1, line.trim()));
                    }
                    if makes_one
                        && let Some(bound) = line.trim_start().strip_prefix("let ")
                        && let Some((name, _)) = bound.split_once(" = ")
                    {
                        paths.push(name.trim_start_matches("mut ").to_owned());
                    }
                }
            }
        }
    }
}
