//! Inspection of one managed checkout: what it is, where it comes from, and what blocks its
//! removal (docs/protocol.md, "Worktree cleanup").
//!
//! Every fact is read fresh from git, Herdr, `/proc` and the artifacts directory; nothing is
//! remembered between runs. Every git and Herdr call has its own 30-second budget. A fact that
//! cannot be read is a blocker of its own ("unknown"), never an assumption that things are fine.
//!
//! The inspection runs in steps, each in its own module: [`identify`] establishes what the entry
//! is (source, scope, registration, branch, workspace); a full inspection then reads the
//! checkout's own state ([`worktree`]), its ownership manifests and what their setup made
//! ([`ownership`]), and the processes that could hold it ([`processes`]). [`context`] holds what
//! the inspections of one command share.

mod context;
mod identify;
mod ownership;
mod processes;
mod worktree;

use std::path::{Path, PathBuf};

use identify::identify;
use ownership::{changed_links, manifests, setup_links, setup_made};
use processes::{children, holders_of, panes};
use worktree::{GitReads, git_state};

use crate::holders;
use crate::paths::Found;

pub use context::Context;
pub use processes::{OWN_BACKGROUND, for_people, scan_warnings};

use herd_protocol::cleanup::{Blocker, BlockerCode, Classification, HolderRef, ManifestRef};

/// Everything an inspection established about one entry of the managed root: what is reported
/// (the protocol's [`Entry`](herd_protocol::cleanup::Entry), which this derefs to) and what
/// removal needs beyond it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub report: herd_protocol::cleanup::Entry,
    pub(crate) internal: Internal,
}

impl std::ops::Deref for Entry {
    type Target = herd_protocol::cleanup::Entry;

    fn deref(&self) -> &herd_protocol::cleanup::Entry {
        &self.report
    }
}

impl std::ops::DerefMut for Entry {
    fn deref_mut(&mut self) -> &mut herd_protocol::cleanup::Entry {
        &mut self.report
    }
}

/// What removal needs beyond the report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Internal {
    pub canonical: Option<PathBuf>,
    pub source: Option<PathBuf>,
    pub owners: Vec<String>,
    /// The checkout's own git directory (where its index is).
    pub git_dir: Option<PathBuf>,
    /// The untracked paths git status reported (directories end in `/`).
    pub untracked: Vec<String>,
    /// What the owners' setup made, from their manifests.
    pub setup: Vec<herd_protocol::worktree::manifest::SetupEntry>,
    /// When the owners' setup began (the earliest), in milliseconds.
    pub setup_started_at: Option<u64>,
    /// Setup's entries git sees as untracked (a symlink a directory pattern does not match):
    /// removal deletes them, never what they point to, before the checkout.
    pub setup_untracked: Vec<String>,
    /// The background commands the owners' setup started, with what of them still runs.
    pub background: Vec<Background>,
}

/// A background command the worktree's setup started: its own, which an explicit removal stops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Background {
    pub command: String,
    /// The process herd started, which leads the command's session.
    pub leader: herd_core::identity::Record,
    /// The live processes of that session, as the inspection found them.
    pub running: Vec<u32>,
}

impl Background {
    /// The background command `b` of the manifest `m`; `None` for a record that cannot be read
    /// as an identity (its processes then hold the checkout like any other).
    fn of(
        m: &herd_protocol::worktree::Manifest,
        b: &herd_protocol::worktree::manifest::BackgroundCommand,
    ) -> Option<Background> {
        Some(Background {
            command: b.command.clone(),
            leader: herd_core::identity::Record {
                id: m.id.clone(),
                session_file: PathBuf::from(&b.command),
                pid: b.pid,
                start_time: b.start_time.parse().ok()?,
                boot_id: b.boot_id.clone(),
                pid_namespace: b.pid_namespace.clone(),
            },
            running: Vec::new(),
        })
    }

    /// `` `npm run dev` `` for a person.
    pub fn shown(&self) -> String {
        format!("`{}`", shown(&self.command))
    }
}

impl Entry {
    fn new(path: &Path) -> Entry {
        Entry {
            report: herd_protocol::cleanup::Entry {
                path: text(path),
                canonical_path: None,
                branch: None,
                detached: false,
                head: None,
                source: None,
                workspace: None,
                manifests: Vec::new(),
                classification: Classification::Unknown,
                blockers: Vec::new(),
                warnings: Vec::new(),
                ignored_files: None,
                changed_files: None,
                untracked_files: None,
                holders: Vec::new(),
                setup: Vec::new(),
            },
            internal: Internal::default(),
        }
    }

    fn block(&mut self, code: BlockerCode, message: impl Into<String>) {
        self.blockers.push(Blocker {
            code,
            message: message.into(),
        });
    }

    fn warn(&mut self, message: impl Into<String>) {
        let message = message.into();
        if !self.warnings.contains(&message) {
            self.warnings.push(message);
        }
    }

    /// Sets the classification from the blockers (out-of-scope stays).
    fn classify(&mut self) {
        if self.classification == Classification::OutOfScope {
            return;
        }
        self.classification = if self.blockers.iter().any(|b| b.code.is_unknown()) {
            Classification::Unknown
        } else if self.blockers.is_empty() {
            Classification::Eligible
        } else {
            Classification::Blocked
        };
    }

    pub fn has(&self, code: BlockerCode) -> bool {
        self.blockers.iter().any(|b| b.code == code)
    }

    pub(crate) fn canonical(&self) -> Option<&Path> {
        self.internal.canonical.as_deref()
    }

    pub(crate) fn source_path(&self) -> Option<&Path> {
        self.internal.source.as_deref()
    }

    pub(crate) fn owner_run_ids(&self) -> &[String] {
        &self.internal.owners
    }

    /// The worktree's own background commands that still run.
    pub(crate) fn own_background(&self) -> impl Iterator<Item = &Background> {
        self.internal
            .background
            .iter()
            .filter(|b| !b.running.is_empty())
    }
}

/// How much to inspect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// Identity only: source, registration, branch, workspace. Enough to match a target.
    Light,
    /// Everything eligibility rests on.
    Full,
}

/// The bound of one child-influenced value (a path, a branch) in a message.
pub const VALUE_MAX_CHARS: usize = 300;

/// Encodes a child-influenced value for a human line.
pub fn shown(value: &str) -> String {
    herd_core::escape::encode_host_value(value, VALUE_MAX_CHARS)
}

/// Encodes a path for a human line.
pub fn shown_path(path: &Path) -> String {
    shown(&text(path))
}

/// A path as JSON text (lossy only for bytes that are not UTF-8).
pub fn text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Inspects one discovered entry. `scan` is the process scan of this command (shared by all
/// entries, taken once); `None` at [`Depth::Light`].
pub fn inspect(
    ctx: &mut Context,
    found: &Found,
    depth: Depth,
    scan: Option<&Result<holders::Scan, holders::Error>>,
) -> Entry {
    let mut entry = Entry::new(found.path());
    entry.warnings.extend(ctx.notes.iter().cloned());
    let canonical = match found {
        Found::Checkout { canonical, .. } => canonical.clone(),
        Found::Escapes { target, .. } => {
            entry.block(
                BlockerCode::SymlinkEscapesRoot,
                format!(
                    "the entry is a symlink to {}, outside the managed root; it is not followed",
                    shown_path(target)
                ),
            );
            entry.classify();
            return entry;
        }
        Found::Unresolvable { reason, .. } => {
            entry.block(
                BlockerCode::Unresolvable,
                format!("cannot resolve the entry: {}", shown(reason)),
            );
            entry.classify();
            return entry;
        }
    };
    entry.canonical_path = Some(text(&canonical));
    entry.internal.canonical = Some(canonical.clone());
    if !identify(ctx, &mut entry, &canonical) {
        entry.classify();
        return entry;
    }
    if depth == Depth::Full && entry.classification != Classification::OutOfScope {
        examine(ctx, &mut entry, &canonical, scan);
    }
    entry.classify();
    entry
}

/// Everything else eligibility rests on.
fn examine(
    ctx: &mut Context,
    entry: &mut Entry,
    canonical: &Path,
    scan: Option<&Result<holders::Scan, holders::Error>>,
) {
    let git = ctx.git.clone();
    let prefetched = ctx.prefetched.remove(canonical);
    // The walk of setup's hard-linked trees (herd's own work, in this process) runs while git
    // reads the status and counts the ignored files (each its own process), not after them.
    let linked = setup_links(ctx, canonical);
    let (read, changed) = std::thread::scope(|scope| {
        let read =
            scope.spawn(|| prefetched.unwrap_or_else(|| GitReads::concurrent(&git, canonical)));
        let changed = linked.map(|(started, links)| {
            let mut changed = Vec::new();
            for (path, source) in &links {
                changed_links(&canonical.join(path), source, path, started, &mut changed);
            }
            changed
        });
        let read = read
            .join()
            .unwrap_or_else(|_| GitReads::failed("the git reads panicked"));
        (read, changed)
    });
    git_state(&git, entry, canonical, Some(read));
    manifests(ctx, entry, canonical);
    setup_made(entry, changed);
    children(ctx, entry, canonical);
    let exempt = panes(ctx, entry);
    match scan {
        Some(scan) => holders_of(entry, canonical, scan, &exempt),
        None => {
            let scan = holders::scan(&[canonical.to_path_buf()]);
            holders_of(entry, canonical, &scan, &exempt);
        }
    }
}

fn files(n: u64) -> String {
    if n == 1 {
        "1 file".to_owned()
    } else {
        format!("{n} files")
    }
}
