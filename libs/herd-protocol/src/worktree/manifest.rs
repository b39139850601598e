//! The worktree ownership manifest `ART/worktree-runs/<run-id>.json` (pi-herdr-agents format):
//! its fields, its states, and the one reader and writer of its files.
//!
//! The manifest is written before anything is created, so a crash at any point leaves a record
//! of what may exist. Its format is the one pi-herdr-agents writes (camelCase keys, two-space
//! pretty JSON) so either implementation can read the other's files:
//!
//! - three constants are stamped on every write, `version: 1`, `kind: "worktree-run"` and
//!   `owner: "pi-herdr-subagents"`; a file whose constants differ is not a manifest, and a
//!   reader treats it as no evidence of anything;
//! - every update is a merge: the file is read, the new fields overlaid, the constants and
//!   `updatedAt` stamped, and the result written atomically; fields this build does not know
//!   are kept as they were;
//! - the state moves along [`State::can_become`]; `removed` is final;
//! - a `removed` manifest is never evidence that a checkout at its path is owned (a checkout
//!   re-created there later belongs to nobody); it only lets a repeated removal answer
//!   "already removed". [`crate::worktree::claims::ownership_of`] applies that rule for every
//!   caller.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::layout::{Artifacts, validate_run_id};
use herd_core::{ErrorCode, sidecar};

/// The `version` constant.
pub const VERSION: u64 = 1;
/// The `kind` constant.
pub const KIND: &str = "worktree-run";
/// The `owner` constant, kept from the extension that introduced the format.
pub const OWNER: &str = "pi-herdr-subagents";
/// The bound of a manifest read; a manifest carries at most two bounded file lists.
pub const READ_LIMIT: u64 = 4 * 1024 * 1024;

/// Where a managed worktree is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// The intent is recorded; nothing has been created yet (or creation is in flight).
    Provisioning,
    /// The checkout (and, on Herdr, its workspace and root pane) exists.
    Provisioned,
    /// A child was dispatched into it.
    Running,
    /// The child exited 0 (a rejected accept verdict does not change this).
    ReadyForReview,
    /// The child asked for help.
    NeedsHelp,
    /// Creation, launch or the run failed; whatever was recovered is recorded.
    Failed,
    /// A cancel with confirmed termination.
    Cancelled,
    /// Explicit cleanup verified the checkout is gone. Final.
    Removed,
}

impl State {
    pub const ALL: [State; 8] = [
        State::Provisioning,
        State::Provisioned,
        State::Running,
        State::ReadyForReview,
        State::NeedsHelp,
        State::Failed,
        State::Cancelled,
        State::Removed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            State::Provisioning => "provisioning",
            State::Provisioned => "provisioned",
            State::Running => "running",
            State::ReadyForReview => "ready_for_review",
            State::NeedsHelp => "needs_help",
            State::Failed => "failed",
            State::Cancelled => "cancelled",
            State::Removed => "removed",
        }
    }

    /// Whether an update may move a manifest from `self` to `next`.
    ///
    /// Staying in the same state is always allowed (an update that only adds fields), except
    /// that nothing leaves `removed`. Any other state may become `removed`, because cleanup
    /// verifies the checkout's absence itself and a process that died mid-run leaves its
    /// manifest wherever it was.
    pub fn can_become(self, next: State) -> bool {
        use State::*;
        if self == Removed {
            return next == Removed;
        }
        if self == next || next == Removed {
            return true;
        }
        match self {
            Provisioning => matches!(next, Provisioned | Failed | Cancelled),
            Provisioned => matches!(next, Running | Failed | Cancelled),
            Running => matches!(next, ReadyForReview | NeedsHelp | Failed | Cancelled),
            ReadyForReview | NeedsHelp | Failed | Cancelled | Removed => false,
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The worktree ownership manifest `worktree-runs/<run-id>.json` (pi-herdr-agents format,
/// camelCase keys). A file whose constants `version`, `kind` and `owner` differ is not a
/// manifest, and no evidence of anything.
//
// The typed fields of the ownership manifest plus every field this build does not know. Fields are
// optional because the manifest fills in over its life, and because a manifest written by
// another implementation may lack any of them. The Git handoff fields are `Option<Option<_>>`:
// absent (`None`) before a handoff was captured, `Some(None)` when the capture could not tell
// (written as JSON `null`, with `gitError` saying why).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = with_constants)]
pub struct Manifest {
    pub state: State,
    /// The run id; also the file name.
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The directory the caller named as the source repository (may be a linked checkout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_cwd: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The revision as requested (`HEAD` when none was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_ref: Option<String>,
    /// The exact commit the branch starts at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_sha: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<u64>,
    /// The checkout. herd records the planned path while provisioning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pane_id: Option<String>,
    /// herd addition: the tab of the root pane, when Herdr made one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_file: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_file: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_session_file: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handoff_message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub head_sha: Option<Option<String>>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub commits_ahead: Option<Option<u64>>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub clean: Option<Option<bool>>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub conflicted: Option<Option<bool>>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub changed_files: Option<Option<Vec<String>>>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub untracked_files: Option<Option<Vec<String>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_removed_at: Option<u64>,
    /// herd addition: the principal checkout the worktree was provisioned from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provision_cwd: Option<PathBuf>,
    /// herd addition: `herdr` or `git`, what created the checkout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<String>,
    /// herd addition: what the worktree's setup made (copies, links, installs, commands) and
    /// the port it was given. Absent in manifests written before setup existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<SetupRecord>,
    /// herd addition: the source repository's workspace that creating this worktree appeared
    /// to open (none was open on it before, one was after), with its one pane as then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opened_source_workspace: Option<OpenedWorkspace>,
    /// Every key this build does not know, kept verbatim across updates.
    #[serde(skip)]
    pub extra: BTreeMap<String, Value>,
}

/// A workspace Herdr opened on the source repository when it created the worktree, and its
/// only pane then: cleanup names it only while it is still exactly so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpenedWorkspace {
    pub workspace_id: String,
    pub pane_id: String,
    pub terminal_id: String,
}

/// What a worktree's setup made, recorded in its manifest so cleanup knows it as herd's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetupRecord {
    /// The port of `HERD_PORT`, unique among the manifests not yet `removed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// When setup began to bring files over (milliseconds since the epoch): a hard-linked file
    /// modified later was changed through the link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<u64>,
    /// What setup put into the checkout, relative to its root.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entries: Vec<SetupEntry>,
    /// What was not done, and why (an untrusted project file, a missing source).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
    /// The log of the setup and install commands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<PathBuf>,
    /// The PIDs of the background commands, as started.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub background_pids: Vec<u32>,
    /// The background commands as started, each with the identity of the process that leads
    /// its session: cleanup knows them, and every process they started, as the worktree's own,
    /// and an explicit removal stops them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub background: Vec<BackgroundCommand>,
}

/// A background command setup started, and the identity of its session's leader (the process
/// herd started, which called `setsid`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BackgroundCommand {
    /// The command, as the setup file gives it.
    pub command: String,
    /// The leader's PID, as seen in `pidNamespace`; its session id and process group id too.
    pub pid: u32,
    /// Field 22 of `/proc/<pid>/stat`: clock ticks after boot, as a decimal string.
    #[schemars(pattern("^[0-9]+$"))]
    pub start_time: String,
    /// `/proc/sys/kernel/random/boot_id` when it started.
    pub boot_id: String,
    /// The PID namespace the PID belongs to (`pid:[…]`).
    pub pid_namespace: String,
}

/// One thing setup put into the checkout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetupEntry {
    /// Relative to the checkout's root.
    pub path: String,
    pub kind: SetupKind,
    /// The source it came from (absolute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<PathBuf>,
}

/// How setup made an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SetupKind {
    /// An ignored file or directory copied (`copy`, `.worktreeinclude`, a `copy` link).
    Copy,
    /// A symlink to the source's directory; removal deletes the link, never its target.
    Symlink,
    /// A tree of hard links sharing the source's files.
    Hardlink,
    /// A copy sharing blocks with the source (or a plain copy where the filesystem has none).
    Reflink,
    /// Made by an `install` command in the checkout.
    Install,
}

impl SetupKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SetupKind::Copy => "copy",
            SetupKind::Symlink => "symlink",
            SetupKind::Hardlink => "hardlink",
            SetupKind::Reflink => "reflink",
            SetupKind::Install => "install",
        }
    }
}

/// Adds the three constants to the schema of [`Manifest`]: the writer stamps them on every
/// write outside serde ([`Manifest::to_json`]), and a reader checks them before it parses the
/// rest, so serde's derive cannot say they are there.
fn with_constants(schema: &mut schemars::Schema) {
    let constants = [
        ("version", serde_json::json!({"const": VERSION})),
        ("kind", serde_json::json!({"const": KIND})),
        ("owner", serde_json::json!({"const": OWNER})),
    ];
    let object = schema.ensure_object();
    if let Value::Object(properties) = object
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()))
    {
        for (name, constant) in &constants {
            properties.insert((*name).to_owned(), constant.clone());
        }
    }
    if let Value::Array(required) = object
        .entry("required")
        .or_insert_with(|| Value::Array(Vec::new()))
    {
        for (name, _) in &constants {
            required.push((*name).into());
        }
    }
}

/// Deserializes a present field (even `null`) as `Some(_)`; an absent one stays `None` by default.
fn present<'de, D, T>(de: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(de).map(Some)
}

/// The keys [`Manifest`] knows, besides the constants.
const KNOWN_KEYS: &[&str] = &[
    "state",
    "id",
    "name",
    "sourceCwd",
    "branch",
    "baseRef",
    "baseSha",
    "createdAt",
    "updatedAt",
    "path",
    "workspaceId",
    "paneId",
    "tabId",
    "manifestFile",
    "diagnostics",
    "sessionFile",
    "sourceSessionFile",
    "handoffMessage",
    "focusError",
    "error",
    "headSha",
    "commitsAhead",
    "clean",
    "conflicted",
    "changedFiles",
    "untrackedFiles",
    "gitError",
    "workspaceRemovedAt",
    "provisionCwd",
    "surface",
    "setup",
    "openedSourceWorkspace",
];

const CONSTANT_KEYS: [&str; 3] = ["version", "kind", "owner"];

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no worktree manifest for run {run_id} at {path}")]
    NotFound { run_id: String, path: PathBuf },
    #[error("{path} is not a worktree manifest: {reason}")]
    NotAManifest {
        path: PathBuf,
        field: &'static str,
        reason: String,
    },
    #[error("{path} has version {found}, newer than the supported {VERSION}")]
    NewerVersion { path: PathBuf, found: u64 },
    #[error("{path} is a worktree manifest of an unexpected shape")]
    Malformed {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("a worktree manifest for run {run_id} already exists at {path}")]
    Exists { run_id: String, path: PathBuf },
    #[error("worktree manifest {path} cannot move from {from} to {to}")]
    Transition {
        path: PathBuf,
        from: State,
        to: State,
    },
    #[error("worktree manifest {path} belongs to run {found}, not {expected}")]
    WrongRun {
        path: PathBuf,
        expected: String,
        found: String,
    },
    #[error("invalid run id")]
    RunId(#[source] herd_core::Error),
    #[error(transparent)]
    Sidecar(#[from] sidecar::Error),
    #[error(transparent)]
    Lock(#[from] herd_core::lock::Error),
}

impl Error {
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::NotFound { .. } => ErrorCode::NotFound,
            Error::NotAManifest { .. }
            | Error::Malformed { .. }
            | Error::WrongRun { .. }
            | Error::Exists { .. }
            | Error::RunId(_) => ErrorCode::InvalidRequest,
            Error::NewerVersion { .. } => ErrorCode::Conflict,
            Error::Transition { .. } => ErrorCode::Conflict,
            Error::Sidecar(err) => err.code(),
            Error::Lock(err) => err.code(),
        }
    }

    pub fn field(&self) -> Option<&str> {
        match self {
            Error::NotAManifest { field, .. } => Some(field),
            Error::NewerVersion { .. } => Some("version"),
            Error::Transition { .. } => Some("state"),
            Error::WrongRun { .. } => Some("id"),
            Error::Exists { .. } | Error::RunId(_) | Error::NotFound { .. } => Some("run_id"),
            Error::Sidecar(err) => err.field(),
            Error::Malformed { .. } | Error::Lock(_) => None,
        }
    }
}

impl herd_core::error::Report for Error {
    fn code(&self) -> ErrorCode {
        Error::code(self)
    }

    fn field(&self) -> Option<&str> {
        Error::field(self)
    }
}

/// How long an update waits for another process updating the same manifest.
const UPDATE_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Serialises read-modify-write updates of one manifest across processes (herd-launch,
/// herd-watch and herd-cleanup may update it at once), so no update is lost. The lock is
/// `locks/worktree-run-<run-id>.lock` in the artifacts directory.
fn update_lock(artifacts: &Artifacts, run_id: &str) -> Result<herd_core::lock::FileLock, Error> {
    // Kept out of `worktree-runs/`, whose every file other readers take for a manifest.
    let path = artifacts
        .root()
        .join("locks")
        .join(format!("worktree-run-{run_id}.lock"));
    let deadline = std::time::Instant::now() + UPDATE_LOCK_WAIT;
    Ok(herd_core::lock::exclusive(&path, deadline)?)
}

/// What a new manifest records before anything is created.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NewManifest {
    pub run_id: String,
    pub name: Option<String>,
    pub source_cwd: PathBuf,
    pub branch: String,
    pub base_ref: String,
    pub base_sha: String,
    /// The planned checkout path, when it is known before creation.
    pub path: Option<PathBuf>,
    pub provision_cwd: Option<PathBuf>,
    pub surface: Option<String>,
}

impl Manifest {
    /// An empty manifest of `run_id` in `state`, for building one in memory.
    pub fn new(run_id: impl Into<String>, state: State) -> Manifest {
        Manifest {
            state,
            id: run_id.into(),
            name: None,
            source_cwd: None,
            branch: None,
            base_ref: None,
            base_sha: None,
            created_at: None,
            updated_at: None,
            path: None,
            workspace_id: None,
            pane_id: None,
            tab_id: None,
            manifest_file: None,
            diagnostics: Vec::new(),
            session_file: None,
            source_session_file: None,
            handoff_message: None,
            focus_error: None,
            error: None,
            head_sha: None,
            commits_ahead: None,
            clean: None,
            conflicted: None,
            changed_files: None,
            untracked_files: None,
            git_error: None,
            workspace_removed_at: None,
            provision_cwd: None,
            surface: None,
            setup: None,
            opened_source_workspace: None,
            extra: BTreeMap::new(),
        }
    }

    /// Writes the manifest of a new run in state `provisioning`; refuses when one exists.
    ///
    /// The file appears complete or not at all, and of two concurrent creators only one wins.
    pub fn create(artifacts: &Artifacts, new: NewManifest) -> Result<Manifest, Error> {
        validate_run_id(&new.run_id).map_err(Error::RunId)?;
        let path = artifacts.worktree_manifest(&new.run_id);
        let now = herd_core::time::now_ms();
        let mut manifest = Manifest::new(new.run_id.clone(), State::Provisioning);
        manifest.name = new.name;
        manifest.source_cwd = Some(new.source_cwd);
        manifest.branch = Some(new.branch);
        manifest.base_ref = Some(new.base_ref);
        manifest.base_sha = Some(new.base_sha);
        manifest.created_at = Some(now);
        manifest.updated_at = Some(now);
        manifest.path = new.path;
        manifest.manifest_file = Some(path.clone());
        manifest.provision_cwd = new.provision_cwd;
        manifest.surface = new.surface;
        let bytes = manifest.to_bytes(&path)?;
        if sidecar::create_once(&path, &bytes)? {
            Ok(manifest)
        } else {
            Err(Error::Exists {
                run_id: new.run_id,
                path,
            })
        }
    }

    /// Reads the manifest of `run_id`; fails closed on anything that is not a manifest.
    pub fn load(artifacts: &Artifacts, run_id: &str) -> Result<Manifest, Error> {
        validate_run_id(run_id).map_err(Error::RunId)?;
        let path = artifacts.worktree_manifest(run_id);
        let manifest = Manifest::read(&path)?.ok_or_else(|| Error::NotFound {
            run_id: run_id.to_owned(),
            path: path.clone(),
        })?;
        if manifest.id != run_id {
            return Err(Error::WrongRun {
                path,
                expected: run_id.to_owned(),
                found: manifest.id,
            });
        }
        Ok(manifest)
    }

    /// Reads a manifest file; `Ok(None)` when it does not exist.
    pub fn read(path: &Path) -> Result<Option<Manifest>, Error> {
        let Some(bytes) = sidecar::read_bounded(path, READ_LIMIT)? else {
            return Ok(None);
        };
        Manifest::parse(path, &bytes).map(Some)
    }

    /// Parses manifest bytes; `path` only names the file in errors.
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<Manifest, Error> {
        let value: Value = serde_json::from_slice(bytes).map_err(|e| Error::NotAManifest {
            path: path.to_path_buf(),
            field: "version",
            reason: format!("not JSON ({e})"),
        })?;
        let Value::Object(map) = value else {
            return Err(Error::NotAManifest {
                path: path.to_path_buf(),
                field: "version",
                reason: "not a JSON object".into(),
            });
        };
        check_constants(path, &map)?;
        Manifest::from_map(path, map)
    }

    fn from_map(path: &Path, mut map: Map<String, Value>) -> Result<Manifest, Error> {
        for key in CONSTANT_KEYS {
            map.remove(key);
        }
        let extra: BTreeMap<String, Value> = map
            .iter()
            .filter(|(k, _)| !KNOWN_KEYS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut manifest: Manifest =
            serde_json::from_value(Value::Object(map)).map_err(|e| Error::Malformed {
                path: path.to_path_buf(),
                source: e,
            })?;
        // The id names the file and is printed as it is in listings and host lines: anything
        // but a run id (a line break, a path) makes the file no manifest at all.
        if validate_run_id(&manifest.id).is_err() {
            return Err(Error::NotAManifest {
                path: path.to_path_buf(),
                field: "id",
                reason: "its id is not a run id".into(),
            });
        }
        manifest.extra = extra;
        Ok(manifest)
    }

    /// The JSON object as written: known fields, then the unknown ones, then the constants.
    pub fn to_json(&self) -> Value {
        // A struct of strings, numbers and paths always serializes; a non-UTF-8 path is the one
        // exception and is refused in `to_bytes`.
        self.to_json_with(self.known_fields().unwrap_or_default())
    }

    /// The known fields as a JSON object.
    fn known_fields(&self) -> Result<Map<String, Value>, serde_json::Error> {
        match serde_json::to_value(self)? {
            Value::Object(map) => Ok(map),
            _ => Ok(Map::new()),
        }
    }

    /// `known` completed with the unknown fields and the constants.
    fn to_json_with(&self, mut known: Map<String, Value>) -> Value {
        for (key, value) in &self.extra {
            known.entry(key.clone()).or_insert_with(|| value.clone());
        }
        known.insert("version".into(), VERSION.into());
        known.insert("kind".into(), KIND.into());
        known.insert("owner".into(), OWNER.into());
        Value::Object(known)
    }

    fn to_bytes(&self, path: &Path) -> Result<Vec<u8>, Error> {
        let malformed = |e| Error::Malformed {
            path: path.to_path_buf(),
            source: e,
        };
        // Unlike `to_json`, a field that cannot be serialized (a non-UTF-8 path) is an error
        // here, never a manifest written without it.
        let known = self.known_fields().map_err(malformed)?;
        let mut bytes = serde_json::to_vec_pretty(&self.to_json_with(known)).map_err(malformed)?;
        bytes.push(b'\n');
        Ok(bytes)
    }

    /// Reads the manifest of `run_id`, lets `change` edit it, and writes the merge back atomically.
    ///
    /// Fields `change` leaves alone keep their values, unknown fields are kept, and the
    /// constants and `updatedAt` are stamped. The state change is checked with
    /// [`State::can_become`] against the state on disk.
    pub fn update(
        artifacts: &Artifacts,
        run_id: &str,
        change: impl FnOnce(&mut Manifest),
    ) -> Result<Manifest, Error> {
        let _lock = update_lock(artifacts, run_id)?;
        let current = Manifest::load(artifacts, run_id)?;
        let path = artifacts.worktree_manifest(run_id);
        let mut next = current.clone();
        change(&mut next);
        next.id = current.id.clone();
        Manifest::replace(&current, next, path)
    }

    /// Overlays the keys of `patch` (camelCase JSON, as pi-herdr-agents merges) onto the
    /// manifest of `run_id` and writes it back atomically.
    ///
    /// The constants and `id` in `patch` are ignored; the result must still be a manifest
    /// of a known shape, and its state change allowed.
    pub fn merge(
        artifacts: &Artifacts,
        run_id: &str,
        patch: Map<String, Value>,
    ) -> Result<Manifest, Error> {
        let _lock = update_lock(artifacts, run_id)?;
        let current = Manifest::load(artifacts, run_id)?;
        let path = artifacts.worktree_manifest(run_id);
        let Value::Object(mut map) = current.to_json() else {
            return Err(Error::NotAManifest {
                path,
                field: "version",
                reason: "not a JSON object".into(),
            });
        };
        for (key, value) in patch {
            if CONSTANT_KEYS.contains(&key.as_str()) || key == "id" {
                continue;
            }
            map.insert(key, value);
        }
        let next = Manifest::from_map(&path, map)?;
        Manifest::replace(&current, next, path)
    }

    /// Writes `next` over `current` at `path`: the state change checked, `updatedAt` stamped,
    /// the file replaced atomically.
    fn replace(current: &Manifest, mut next: Manifest, path: PathBuf) -> Result<Manifest, Error> {
        if !current.state.can_become(next.state) {
            return Err(Error::Transition {
                path,
                from: current.state,
                to: next.state,
            });
        }
        next.updated_at = Some(herd_core::time::now_ms());
        let bytes = next.to_bytes(&path)?;
        sidecar::write_atomic(&path, &bytes)?;
        Ok(next)
    }

    /// Moves the manifest of `run_id` to the result `state` of its run and records the
    /// captured handoff, in one merge (what a watcher writes when a worktree child ends).
    pub fn record_result(
        artifacts: &Artifacts,
        run_id: &str,
        state: State,
        handoff: &super::Handoff,
    ) -> Result<Manifest, Error> {
        Manifest::update(artifacts, run_id, |m| {
            m.state = state;
            m.set_handoff(handoff);
        })
    }

    /// Marks the manifest of `run_id` `removed` at `at_ms` (what cleanup writes once it has
    /// verified the checkout is gone). Marking a removed manifest again keeps the first time.
    pub fn mark_removed(
        artifacts: &Artifacts,
        run_id: &str,
        at_ms: u64,
    ) -> Result<Manifest, Error> {
        Manifest::update(artifacts, run_id, |m| {
            m.state = State::Removed;
            m.workspace_removed_at.get_or_insert(at_ms);
        })
    }

    /// Records a captured handoff: the Git fields, `null` where inspection could not tell.
    pub fn set_handoff(&mut self, handoff: &super::Handoff) {
        self.head_sha = Some(handoff.head_sha.clone());
        self.commits_ahead = Some(handoff.commits_ahead);
        self.clean = Some(handoff.tree.map(|t| t == super::TreeState::Clean));
        self.conflicted = Some(handoff.tree.map(|t| t == super::TreeState::Conflicted));
        self.changed_files = Some(handoff.changed_files.clone());
        self.untracked_files = Some(handoff.untracked_files.clone());
        self.git_error = handoff.warning.clone();
    }
}

/// Checks the three constants; the first mismatch names its field.
fn check_constants(path: &Path, map: &Map<String, Value>) -> Result<(), Error> {
    let not = |field: &'static str, reason: String| Error::NotAManifest {
        path: path.to_path_buf(),
        field,
        reason,
    };
    match map.get("version") {
        Some(Value::Number(n)) if n.as_u64() == Some(VERSION) => {}
        Some(Value::Number(n)) if n.as_u64().is_some_and(|v| v > VERSION) => {
            return Err(Error::NewerVersion {
                path: path.to_path_buf(),
                found: n.as_u64().unwrap_or_default(),
            });
        }
        other => return Err(not("version", format!("version is {}", shown(other)))),
    }
    match map.get("kind") {
        Some(Value::String(s)) if s == KIND => {}
        other => return Err(not("kind", format!("kind is {}", shown(other)))),
    }
    match map.get("owner") {
        Some(Value::String(s)) if s == OWNER => {}
        other => return Err(not("owner", format!("owner is {}", shown(other)))),
    }
    Ok(())
}

fn shown(value: Option<&Value>) -> String {
    match value {
        None => "missing".into(),
        Some(v) => {
            let mut s = v.to_string();
            if s.len() > 40 {
                let mut cut = 40;
                while !s.is_char_boundary(cut) {
                    cut -= 1;
                }
                s.truncate(cut);
                s.push('…');
            }
            s
        }
    }
}
