//! The formats of `herd-cleanup`: the `--json` documents of `list`, `remove` and `doctor`.
//!
//! An [`Entry`] is what one inspection of a managed checkout established; `list` prints every
//! entry of the managed root, `remove` the one that decided, with what the removal did.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a listing concludes about an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Classification {
    /// Nothing blocks its removal.
    #[serde(rename = "eligible")]
    Eligible,
    /// Something named blocks its removal.
    #[serde(rename = "blocked")]
    Blocked,
    /// Some fact could not be established; removal is refused until it can.
    #[serde(rename = "unknown")]
    Unknown,
    /// Its source repository is not inside the session cwd; never removable from here.
    #[serde(rename = "out-of-scope")]
    OutOfScope,
}

impl Classification {
    pub fn as_str(self) -> &'static str {
        match self {
            Classification::Eligible => "eligible",
            Classification::Blocked => "blocked",
            Classification::Unknown => "unknown",
            Classification::OutOfScope => "out-of-scope",
        }
    }
}

/// The kind of a blocker: a stable code in `--json` output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BlockerCode {
    /// The source repository is not inside the session cwd.
    OutsideSessionCwd,
    /// The entry is a symlink whose target lies outside the managed root.
    SymlinkEscapesRoot,
    /// The entry cannot be resolved (dangling link, permission error).
    Unresolvable,
    /// Git gave no usable answer about the checkout.
    GitUnknown,
    /// Git does not list the directory as a linked checkout of its repository.
    NotRegistered,
    DetachedHead,
    Locked,
    Conflicts,
    InitializedSubmodules,
    /// Tracked changes, staged or not. `--preserve` lifts it.
    Dirty,
    /// Untracked files. `--preserve` lifts it.
    Untracked,
    /// The ignored files could not be counted.
    IgnoredCountFailed,
    /// Herdr, in use here, gave no usable answer.
    HerdrUnknown,
    /// Git, Herdr and the ownership manifest disagree about the checkout.
    IdentityDisagrees,
    /// The ownership manifests cannot be read or contradict each other.
    ManifestUndecidable,
    /// A run of the artifacts directory works in the checkout and its child is alive.
    LiveChild,
    /// A persistent specialist works in the checkout and is alive.
    PersistentLease,
    /// A run works in the checkout and whether its child is alive cannot be told.
    ChildUnknown,
    /// A pane of the checkout's workspace runs something other than its idle shell.
    ForegroundProcess,
    /// A process's cwd is inside the checkout.
    ProcessHolder,
    /// The processes could not be enumerated.
    EnumerationFailed,
    /// No process inspection exists for this platform.
    UnsupportedPlatform,
    /// A file of a tree setup hard-linked from the source checkout was changed in place: the
    /// source's copy (the same inode) changed with it. Removal would be safe, but the change
    /// already reached the source, so a person should look first.
    LinkedFileChanged,
}

impl BlockerCode {
    /// Whether the blocker means "could not be established" (the entry is `unknown`) rather
    /// than a definite reason to refuse (`blocked`).
    pub fn is_unknown(self) -> bool {
        use BlockerCode::*;
        matches!(
            self,
            Unresolvable
                | GitUnknown
                | NotRegistered
                | IgnoredCountFailed
                | HerdrUnknown
                | IdentityDisagrees
                | ManifestUndecidable
                | ChildUnknown
                | EnumerationFailed
                | UnsupportedPlatform
        )
    }

    /// Whether `--preserve` lifts the blocker (by committing the work first).
    pub fn preservable(self) -> bool {
        matches!(self, BlockerCode::Dirty | BlockerCode::Untracked)
    }
}

/// One reason the checkout cannot be removed now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Blocker {
    pub code: BlockerCode,
    /// Human text; child-influenced values in it are already encoded for one line.
    pub message: String,
}

/// An ownership manifest that names the checkout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ManifestRef {
    pub run_id: String,
    pub state: String,
    pub file: String,
    /// Whether it is evidence of ownership (not `removed`), and so is marked on removal.
    pub owner: bool,
}

/// A process whose cwd is inside the checkout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HolderRef {
    pub pid: u32,
    pub name: Option<String>,
    pub cwd: String,
}

/// Everything an inspection established about one entry of the managed root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Entry {
    /// The path under the managed root.
    pub path: String,
    /// Its canonical path, when it resolves.
    pub canonical_path: Option<String>,
    pub branch: Option<String>,
    pub detached: bool,
    /// The commit checked out.
    pub head: Option<String>,
    /// The canonical source repository (principal checkout, or submodule work tree).
    pub source: Option<String>,
    /// The open Herdr workspace on the checkout.
    pub workspace: Option<String>,
    pub manifests: Vec<ManifestRef>,
    pub classification: Classification,
    pub blockers: Vec<Blocker>,
    pub warnings: Vec<String>,
    /// Exact count of ignored files; `None` when not counted (or counting failed).
    pub ignored_files: Option<u64>,
    /// Tracked paths with changes, staged or not.
    pub changed_files: Option<u64>,
    pub untracked_files: Option<u64>,
    pub holders: Vec<HolderRef>,
    /// What the owners' worktree setup added, as `<path> (<kind>)` (kinds as in the
    /// manifest's `setup.entries`); absent when setup added nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<String>,
}

/// What `herd-cleanup list` prints: every entry of the managed root with its classification,
/// blockers and warnings; only sources inside the session cwd are in scope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CleanupList {
    pub managed_root: String,
    pub session_cwd: String,
    pub worktrees: Vec<ListedEntry>,
    pub counts: Counts,
    /// Warnings that concern every entry, said once.
    pub warnings: Vec<String>,
}

impl CleanupList {
    /// The version of this document's shape (not printed; see the crate docs).
    pub const FORMAT_VERSION: u64 = 1;
}

/// One entry of a [`CleanupList`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListedEntry {
    #[serde(flatten)]
    pub entry: Entry,
    /// The `worktree_remove` call that removes an eligible entry.
    pub remove_command: Option<String>,
}

/// The entries of a [`CleanupList`] by classification.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Counts {
    pub total: usize,
    pub eligible: usize,
    pub blocked: usize,
    pub unknown: usize,
    pub out_of_scope: usize,
}

impl Counts {
    pub fn of<'e>(entries: impl IntoIterator<Item = &'e Entry>) -> Counts {
        let mut c = Counts::default();
        for e in entries {
            c.total += 1;
            match e.classification {
                Classification::Eligible => c.eligible += 1,
                Classification::Blocked => c.blocked += 1,
                Classification::Unknown => c.unknown += 1,
                Classification::OutOfScope => c.out_of_scope += 1,
            }
        }
        c
    }
}

/// How a removal ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The checkout is gone (exit 0).
    Removed,
    /// A `removed` manifest names the target and the checkout is absent (exit 0).
    AlreadyRemoved,
    /// Something named blocks it; nothing was removed (exit 1).
    Blocked,
    /// A removal command was sent and its effect is unknown; the checkout is still there (exit 3).
    Uncertain,
    /// Some fact could not be established; nothing was removed (exit 4).
    Unknown,
}

impl Outcome {
    pub fn exit_code(self) -> i32 {
        use herd_core::exit;
        match self {
            Outcome::Removed | Outcome::AlreadyRemoved => exit::SUCCESS,
            Outcome::Blocked => exit::NEGATIVE,
            Outcome::Uncertain => exit::UNCERTAIN,
            Outcome::Unknown => exit::NO_ANSWER,
        }
    }
}

/// What `--preserve` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Preservation {
    /// The WIP commit, reported even when the removal is later refused or fails.
    pub sha: Option<String>,
    /// Why the commit was not made.
    pub error: Option<String>,
    /// After a failed commit: whether the index was put back exactly as it was.
    pub index_restored: Option<bool>,
}

/// Which tool removed the checkout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    Herdr,
    Git,
}

/// The report of one removal.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Removal {
    pub target: String,
    pub outcome: Outcome,
    pub path: Option<String>,
    pub branch: Option<String>,
    pub source: Option<String>,
    pub workspace: Option<String>,
    pub removed_via: Option<Via>,
    pub preservation: Option<Preservation>,
    pub ignored_files: Option<u64>,
    /// Why it was not removed (a blocker of the deciding inspection, or of the removal step).
    pub blockers: Vec<Blocker>,
    /// Every warning seen, including those of an earlier inspection of this removal.
    pub warnings: Vec<String>,
    /// Runs whose ownership manifest was marked `removed`.
    pub manifests_marked: Vec<String>,
    /// The worktree's own background commands (started by its setup) that this removal stopped
    /// first, each as `` `<command>` (<n> processes) ``, the command encoded.
    #[serde(default)]
    pub stopped: Vec<String>,
    /// Notes for the person after a removal: the source repository's workspace that creating
    /// the worktree appeared to open, while it is still untouched.
    #[serde(default)]
    pub notes: Vec<String>,
    /// The inspection that decided.
    pub entry: Option<Entry>,
}

impl Removal {
    /// A report of `outcome` for `target`, with nothing else known yet.
    pub fn new(target: &str, outcome: Outcome) -> Removal {
        Removal {
            target: target.to_owned(),
            outcome,
            path: None,
            branch: None,
            source: None,
            workspace: None,
            removed_via: None,
            preservation: None,
            ignored_files: None,
            blockers: Vec::new(),
            warnings: Vec::new(),
            manifests_marked: Vec::new(),
            stopped: Vec::new(),
            notes: Vec::new(),
            entry: None,
        }
    }

    /// A report of `outcome` for `target` from the inspection that decided it.
    pub fn from_entry(target: &str, outcome: Outcome, entry: &Entry) -> Removal {
        let mut r = Removal::new(target, outcome);
        r.path = Some(entry.path.clone());
        r.branch.clone_from(&entry.branch);
        r.source.clone_from(&entry.source);
        r.workspace.clone_from(&entry.workspace);
        r.ignored_files = entry.ignored_files;
        r.blockers.clone_from(&entry.blockers);
        r.add_warnings(&entry.warnings);
        r.entry = Some(entry.clone());
        r
    }

    /// Adds the warnings not already there, in order.
    pub fn add_warnings(&mut self, warnings: &[String]) {
        for w in warnings {
            if !self.warnings.contains(w) {
                self.warnings.push(w.clone());
            }
        }
    }

    /// Adds a blocker.
    pub fn block(&mut self, code: BlockerCode, message: String) {
        self.blockers.push(Blocker { code, message });
    }
}

impl Removal {
    /// The version of this document's shape (not printed; see the crate docs).
    pub const FORMAT_VERSION: u64 = 1;
}

/// One check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Check {
    pub name: String,
    pub ok: bool,
    /// Whether herd needs it here; a failed check that is not needed is reported, not fatal.
    pub needed: bool,
    /// What was seen, or why it failed.
    pub detail: String,
}

/// A run that needs a hand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RunFinding {
    pub run_id: String,
    pub name: Option<String>,
    pub state: FindingState,
    pub detail: String,
}

/// What `herd-cleanup doctor` prints: each check, and the runs that need a hand.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DoctorReport {
    /// Whether every needed check passed.
    pub ok: bool,
    pub checks: Vec<Check>,
    pub runs_inspected: usize,
    pub runs: Vec<RunFinding>,
}

impl DoctorReport {
    /// The version of this document's shape (not printed; see the crate docs).
    pub const FORMAT_VERSION: u64 = 1;
}

/// Why a run needs a hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FindingState {
    /// Its child is gone and no result was delivered.
    OwnerGone,
    /// Whether its child is alive cannot be told.
    OwnerUnknown,
    /// Its launch failed.
    LaunchFailed,
    /// Its herd-launch ended before it placed a child.
    LaunchLost,
    /// Its record cannot be read.
    Unreadable,
}
