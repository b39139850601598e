//! Inspection of one managed checkout: what it is, where it comes from, and what blocks its
//! removal (protocol.md §4).
//!
//! Every fact is read fresh from git, Herdr, `/proc` and the artifacts directory; nothing is
//! remembered between runs. Every git and Herdr call has its own 30-second budget. A fact that
//! cannot be read is a blocker of its own ("unknown"), never an assumption that things are fine.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use herd_core::identity::{self, Judgement};
use herd_git::index::{self, Gitlinks};
use herd_git::{Deadline, EntryKind, Git, Head, WorktreeEntry, budget};
use herd_herdr::{Herdr, Source, WorktreeList};
use herd_protocol::layout::{Artifacts, SessionFiles};
use herd_protocol::run::RunRecord;
use herd_protocol::worktree::claims;
use herd_protocol::worktree::manifest::Manifest;

use crate::holders::{self, SHELLS};
use crate::paths::{self, Found};

/// Where managed checkouts live unless `HERD_WORKTREE_ROOT` says otherwise: `~/.herdr/worktrees`.
pub use herd_protocol::layout::managed_root;

pub use herd_protocol::cleanup::{Blocker, BlockerCode, Classification, HolderRef, ManifestRef};

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
}

/// How much to inspect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// Identity only: source, registration, branch, workspace. Enough to match a target.
    Light,
    /// Everything eligibility rests on.
    Full,
}

/// How many checkouts a listing reads at once at most.
const PREFETCH_WORKERS: usize = 4;

/// The message printed with every scan: what the process inspection cannot see.
pub const COVERAGE_WARNING: &str = "incomplete coverage: only processes of the same user were inspected; \
     a process of another user, or a protected one, could hold the checkout undetected";

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

/// What every inspection of one command shares: the tools, the scope and some caches.
pub struct Context {
    pub git: Git,
    /// Herdr, when it is in use here (`HERDR_ENV=1` and the executable found).
    pub herdr: Option<Herdr>,
    pub artifacts: Artifacts,
    /// The canonical session cwd: sources outside it are out of scope.
    pub session_cwd: PathBuf,
    pub root: PathBuf,
    /// A warning every entry carries (e.g. Herdr announced but not found).
    pub notes: Vec<String>,
    herdr_lists: HashMap<PathBuf, Result<WorktreeList, String>>,
    /// The source repository of each shared git directory, found once per command.
    sources: HashMap<PathBuf, Result<PathBuf, String>>,
    /// Each source repository's registered checkouts with their resolved paths, listed once per
    /// command.
    worktree_lists: HashMap<PathBuf, Result<Vec<Listed>, String>>,
    /// The resolved shared git directory of a directory (`None`: git gave no answer).
    common_dirs: HashMap<PathBuf, Option<PathBuf>>,
    /// Status and ignored-file counts read ahead, concurrently, for a listing; each is used
    /// once, by the inspection of its checkout.
    prefetched: HashMap<PathBuf, GitReads>,
    /// The run records, read once for all the entries of a listing.
    runs: Option<Result<Vec<Run>, String>>,
    /// The ownership manifests, likewise.
    manifests: Option<Result<Vec<claims::ManifestFile>, String>>,
}

/// A registered checkout and its path resolved (`None` when it does not resolve).
struct Listed {
    record: WorktreeEntry,
    resolved: Option<PathBuf>,
}

/// A run of the artifacts directory, as the inspection of every entry needs it.
struct Run {
    id: String,
    /// The record and the places its child works in (its worktree and cwd, those that
    /// resolve), or why the record cannot be read.
    found: Result<(RunRecord, Vec<PathBuf>), String>,
}

impl Context {
    pub fn new(
        git: Git,
        herdr: Option<Herdr>,
        artifacts: Artifacts,
        session_cwd: PathBuf,
        root: PathBuf,
    ) -> Context {
        Context {
            git,
            herdr,
            artifacts,
            session_cwd,
            root,
            notes: Vec::new(),
            herdr_lists: HashMap::new(),
            sources: HashMap::new(),
            worktree_lists: HashMap::new(),
            common_dirs: HashMap::new(),
            prefetched: HashMap::new(),
            runs: None,
            manifests: None,
        }
    }

    /// Forgets what git, Herdr, the run records and the manifests said, so the next inspection
    /// asks again.
    pub fn forget(&mut self) {
        self.herdr_lists.clear();
        self.sources.clear();
        self.worktree_lists.clear();
        self.common_dirs.clear();
        self.prefetched.clear();
        self.runs = None;
        self.manifests = None;
    }

    /// The ownership manifests of the artifacts directory.
    fn manifest_files(&mut self) -> Result<&[claims::ManifestFile], &str> {
        let artifacts = &self.artifacts;
        let files = self
            .manifests
            .get_or_insert_with(|| claims::read_all(artifacts).map_err(|e| e.message));
        match files {
            Ok(files) => Ok(files),
            Err(message) => Err(message),
        }
    }

    /// The run records of the artifacts directory, each with its error when it cannot be read.
    fn runs(&mut self) -> Result<&[Run], &str> {
        let artifacts = &self.artifacts;
        let runs = self.runs.get_or_insert_with(|| {
            let ids = artifacts.run_ids().map_err(|e| e.message)?;
            Ok(ids
                .into_iter()
                .map(|id| {
                    let found = RunRecord::load(artifacts, &id)
                        .map(|record| {
                            let places = record
                                .worktree
                                .iter()
                                .map(|w| w.path.as_str())
                                .chain([record.cwd.as_str()])
                                .filter_map(|p| paths::resolve(Path::new(p)).ok())
                                .collect();
                            (record, places)
                        })
                        .map_err(|e| e.message);
                    Run { id, found }
                })
                .collect())
        });
        match runs {
            Ok(runs) => Ok(runs),
            Err(message) => Err(message),
        }
    }

    /// Reads the status and ignored-file count of every plain linked checkout among `targets`
    /// whose repository lies inside the session cwd, ahead of their inspections, a few at a
    /// time: the git processes of different checkouts run concurrently instead of one after
    /// another. Anything else is read when inspected (or, out of scope, not at all).
    pub fn prefetch(&mut self, targets: &[PathBuf]) {
        let session_cwd = &self.session_cwd;
        let plain: Vec<&PathBuf> = targets
            .iter()
            .filter(|t| {
                linked_facts(t).is_some_and(|facts| {
                    facts
                        .common_dir
                        .parent()
                        .is_some_and(|repo| paths::is_within(repo, session_cwd))
                })
            })
            .collect();
        let workers = std::thread::available_parallelism()
            .map_or(2, |n| n.get() * 2)
            .clamp(1, PREFETCH_WORKERS)
            .min(plain.len());
        if workers == 0 {
            return;
        }
        let next = std::sync::atomic::AtomicUsize::new(0);
        let git = &self.git;
        let read: Vec<(PathBuf, GitReads)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|_| {
                    scope.spawn(|| {
                        let mut out = Vec::new();
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(target) = plain.get(i) else { break };
                            out.push(((*target).clone(), GitReads::of(git, target)));
                        }
                        out
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default())
                .collect()
        });
        self.prefetched.extend(read);
    }

    /// The source repository of the shared git directory `common_dir`, found once per command.
    fn source_of(&mut self, common_dir: &Path) -> Result<PathBuf, String> {
        let git = &self.git;
        self.sources
            .entry(common_dir.to_path_buf())
            .or_insert_with(|| source_root(git, common_dir))
            .clone()
    }

    /// The registered checkouts of `source`, listed once per command.
    fn worktree_list(&mut self, source: &Path) -> Result<&[Listed], &str> {
        let git = &self.git;
        let list = self
            .worktree_lists
            .entry(source.to_path_buf())
            .or_insert_with(|| {
                git.worktree_list(source, &Context::deadline())
                    .map(|list| {
                        list.into_iter()
                            .map(|record| Listed {
                                resolved: paths::resolve(&record.path).ok(),
                                record,
                            })
                            .collect()
                    })
                    .map_err(|e| e.to_string())
            });
        match list {
            Ok(list) => Ok(list),
            Err(message) => Err(message),
        }
    }

    /// The resolved shared git directory of the checkout `dir` is in, asked once per command.
    fn common_dir(&mut self, dir: &Path) -> Option<PathBuf> {
        let git = &self.git;
        self.common_dirs
            .entry(dir.to_path_buf())
            .or_insert_with(|| {
                git.facts(dir, &Context::deadline())
                    .ok()
                    .and_then(|f| paths::resolve(&f.common_dir).ok())
            })
            .clone()
    }

    fn deadline() -> Deadline {
        Deadline::after(budget::CLEANUP)
    }

    fn herdr_list(&mut self, source: &Path) -> Option<Result<WorktreeList, String>> {
        let herdr = self.herdr.as_ref()?;
        let answer = self
            .herdr_lists
            .entry(source.to_path_buf())
            .or_insert_with(|| {
                herdr
                    .worktree_list(Some(&Source::Cwd(source.to_path_buf())))
                    .map_err(|e| e.to_string())
            })
            .clone();
        Some(answer)
    }
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

/// Source, scope, registration, branch and workspace. Returns whether the entry is a
/// registered checkout worth examining further.
fn identify(ctx: &mut Context, entry: &mut Entry, canonical: &Path) -> bool {
    let git = ctx.git.clone();
    let facts = match linked_facts(canonical)
        .map_or_else(|| git.facts(canonical, &Context::deadline()), Ok)
    {
        Ok(facts) => facts,
        Err(e) => {
            entry.block(
                BlockerCode::GitUnknown,
                format!("not a readable git checkout: {}", shown(&e.to_string())),
            );
            return false;
        }
    };
    match paths::resolve(&facts.toplevel) {
        Ok(top) if top == canonical => {}
        Ok(top) => {
            entry.block(
                BlockerCode::NotRegistered,
                format!(
                    "not a checkout of its own: it lies inside the checkout {}",
                    shown_path(&top)
                ),
            );
            return false;
        }
        Err(e) => {
            entry.block(
                BlockerCode::GitUnknown,
                format!("cannot resolve the checkout's top: {e}"),
            );
            return false;
        }
    }
    if !facts.is_linked() {
        entry.block(
            BlockerCode::NotRegistered,
            "a principal checkout, not a linked worktree",
        );
        return false;
    }
    entry.internal.git_dir = Some(facts.git_dir.clone());
    let source = match ctx.source_of(&facts.common_dir) {
        Ok(source) => source,
        Err(message) => {
            entry.block(BlockerCode::GitUnknown, message);
            return false;
        }
    };
    entry.source = Some(text(&source));
    entry.internal.source = Some(source.clone());
    if !paths::is_within(&source, &ctx.session_cwd) {
        entry.classification = Classification::OutOfScope;
        entry.block(
            BlockerCode::OutsideSessionCwd,
            format!(
                "its source repository {} is not inside the session cwd {}",
                shown_path(&source),
                shown_path(&ctx.session_cwd)
            ),
        );
    }
    let list = match ctx.worktree_list(&source) {
        Ok(list) => list,
        Err(message) => {
            entry.block(
                BlockerCode::GitUnknown,
                format!("cannot list the repository's worktrees: {}", shown(message)),
            );
            return false;
        }
    };
    let record = list
        .iter()
        .enumerate()
        .find(|(_, listed)| listed.resolved.as_deref() == Some(canonical))
        .map(|(idx, listed)| (idx, listed.record.clone()));
    let Some((idx, record)) = record else {
        entry.block(
            BlockerCode::NotRegistered,
            "git does not list it as a worktree of its source repository",
        );
        return false;
    };
    if idx == 0 {
        entry.block(
            BlockerCode::NotRegistered,
            "it is the principal checkout of its repository",
        );
        return false;
    }
    entry.head = record.head.clone();
    entry.branch = record.branch.clone();
    entry.detached = record.detached || record.branch.is_none();
    if entry.detached {
        entry.block(
            BlockerCode::DetachedHead,
            "detached HEAD: the checkout is on no branch, so its commits could be lost",
        );
    }
    if let Some(reason) = &record.locked {
        let why = if reason.is_empty() {
            String::new()
        } else {
            format!(" ({})", shown(reason))
        };
        entry.block(
            BlockerCode::Locked,
            format!("locked{why}; unlock it with `git worktree unlock` first"),
        );
    }
    if entry.classification == Classification::OutOfScope {
        return true;
    }
    herdr_identity(ctx, entry, canonical, &source);
    true
}

/// What `git rev-parse --show-toplevel --git-dir --git-common-dir` says at the top of a plain
/// linked checkout, read from its files as git reads them: `<top>/.git` is a regular file
/// `gitdir: <dir>`, and `<dir>/commondir` names the shared directory. `None` for anything else
/// (a `.git` directory or link, a missing file, a path that is not UTF-8), which is git's to
/// answer. Registration itself is always git's word: the checkout must be in its repository's
/// `git worktree list`, and `git status` runs in it.
fn linked_facts(top: &Path) -> Option<herd_git::RepoFacts> {
    let small_file = |path: &Path| -> Option<String> {
        let meta = std::fs::symlink_metadata(path).ok()?;
        if !meta.file_type().is_file() || meta.len() > 4096 {
            return None;
        }
        let bytes = read_at_most(path, 4096)?;
        let text = String::from_utf8(bytes).ok()?;
        let line = text.strip_suffix('\n').unwrap_or(&text);
        (!line.is_empty() && !line.contains(['\n', '\r', '\0'])).then(|| line.to_owned())
    };
    let pointer = small_file(&top.join(".git"))?;
    let git_dir = top.join(pointer.strip_prefix("gitdir: ")?);
    let git_dir = paths::resolve(&git_dir).ok()?;
    let common = git_dir.join(small_file(&git_dir.join("commondir"))?);
    let common_dir = paths::resolve(&common).ok()?;
    (common_dir != git_dir).then(|| herd_git::RepoFacts {
        toplevel: top.to_path_buf(),
        git_dir,
        common_dir,
    })
}

/// The workspace Herdr has open on the checkout, and whether Herdr agrees with git about it.
fn herdr_identity(ctx: &mut Context, entry: &mut Entry, canonical: &Path, source: &Path) {
    let Some(answer) = ctx.herdr_list(source) else {
        return;
    };
    let list = match answer {
        Ok(list) => list,
        Err(e) => {
            entry.block(
                BlockerCode::HerdrUnknown,
                format!(
                    "herdr cannot list the repository's worktrees: {}",
                    shown(&e)
                ),
            );
            return;
        }
    };
    let rows: Vec<_> = list
        .worktrees
        .iter()
        .filter(|row| {
            row.path == canonical || paths::resolve(&row.path).ok().as_deref() == Some(canonical)
        })
        .collect();
    match rows.as_slice() {
        [] => {}
        [row] => {
            if !row.is_linked_worktree {
                entry.block(
                    BlockerCode::IdentityDisagrees,
                    "herdr does not list the checkout as a linked worktree",
                );
            } else if row.branch != entry.branch {
                entry.block(
                    BlockerCode::IdentityDisagrees,
                    format!(
                        "herdr says the checkout is on {}, git says {}",
                        row.branch.as_deref().map_or("no branch".into(), shown),
                        entry.branch.as_deref().map_or("no branch".into(), shown)
                    ),
                );
            }
            entry.workspace = row.open_workspace_id.clone();
        }
        rows => entry.block(
            BlockerCode::IdentityDisagrees,
            format!("herdr lists the checkout {} times", rows.len()),
        ),
    }
}

/// The source repository of a linked checkout whose shared git directory is `common_dir`.
///
/// A submodule's git directory lives under the superproject's `.git/modules`, so its parent is
/// not the work tree: `core.worktree` of that directory names it. Otherwise the work tree is the
/// parent of the common directory. Either way, git must confirm it: its top is itself and its
/// common directory is the same.
pub fn source_root(git: &Git, common_dir: &Path) -> Result<PathBuf, String> {
    let common = paths::resolve(common_dir).map_err(|e| {
        format!(
            "cannot resolve the git directory {}: {e}",
            shown_path(common_dir)
        )
    })?;
    let config = common.join("config");
    // `git config --file` reads that one file (no includes): a file in which "worktree" does
    // not occur, in any case, cannot set core.worktree, and git need not be asked.
    // A file larger than a config file usually is, or one that cannot be read, is left to git.
    let unset = read_at_most(&config, 1024 * 1024).is_some_and(|bytes| {
        !bytes
            .windows(b"worktree".len())
            .any(|w| w.eq_ignore_ascii_case(b"worktree"))
    });
    let parent = || {
        common
            .parent()
            .map(Path::to_path_buf)
            .ok_or_else(|| "the git directory has no parent".to_owned())
    };
    let candidate = if unset {
        parent()?
    } else {
        let args: Vec<OsString> = vec![
            "config".into(),
            "--file".into(),
            config.into_os_string(),
            "--get".into(),
            "core.worktree".into(),
        ];
        let out = git
            .output(&common, &args, &Context::deadline())
            .map_err(|e| format!("cannot read core.worktree: {}", shown(&e.to_string())))?;
        match out.code {
            Some(0) => {
                let value = PathBuf::from(OsString::from(
                    out.stdout.text().trim_end_matches('\n').to_owned(),
                ));
                common.join(value)
            }
            // `git config --get` exits 1 when the key is not set.
            Some(1) => parent()?,
            _ => {
                return Err(format!(
                    "cannot read core.worktree: {}",
                    shown(out.stderr.text().trim())
                ));
            }
        }
    };
    let source = paths::resolve(&candidate).map_err(|e| {
        format!(
            "cannot resolve the source repository {}: {e}",
            shown_path(&candidate)
        )
    })?;
    let facts = git.facts(&source, &Context::deadline()).map_err(|e| {
        format!(
            "cannot confirm the source repository {}: {}",
            shown_path(&source),
            shown(&e.to_string())
        )
    })?;
    let top = paths::resolve(&facts.toplevel).ok();
    let again = paths::resolve(&facts.common_dir).ok();
    if top.as_deref() != Some(source.as_path()) || again.as_deref() != Some(common.as_path()) {
        return Err(format!(
            "cannot confirm the source repository {}: git places it elsewhere",
            shown_path(&source)
        ));
    }
    Ok(source)
}

/// The bytes of the file `path` when it can be read and holds at most `max` of them.
fn read_at_most(path: &Path, max: u64) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(max + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    (bytes.len() as u64 <= max).then_some(bytes)
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

fn git_state(git: &Git, entry: &mut Entry, canonical: &Path, read: Option<GitReads>) {
    let read = read.unwrap_or_else(|| GitReads::of(git, canonical));
    match read.status {
        Ok(status) => {
            let mut changed = 0u64;
            let mut untracked = 0u64;
            let mut conflicted = 0u64;
            for e in &status.entries {
                match e.kind {
                    EntryKind::Changed | EntryKind::Renamed { .. } => changed += 1,
                    EntryKind::Unmerged => conflicted += 1,
                    EntryKind::Untracked => {
                        untracked += 1;
                        entry.internal.untracked.push(e.path.clone());
                    }
                    EntryKind::Ignored => {}
                }
            }
            entry.changed_files = Some(changed + conflicted);
            entry.untracked_files = Some(untracked);
            if conflicted > 0 {
                entry.block(
                    BlockerCode::Conflicts,
                    format!("{} with merge conflicts", files(conflicted)),
                );
            }
            if changed > 0 {
                entry.block(
                    BlockerCode::Dirty,
                    format!("{} with uncommitted changes", files(changed)),
                );
            }
            // Untracked files block once the owners' manifests say which of them setup made
            // ([`setup_made`]).
            if let (Some(Head::Branch(now)), Some(listed)) = (&status.head, &entry.branch) {
                if now != listed {
                    entry.block(
                        BlockerCode::IdentityDisagrees,
                        format!(
                            "the branch changed during inspection: {} became {}",
                            shown(listed),
                            shown(now)
                        ),
                    );
                }
            }
            if status.head_oid.is_some() {
                entry.head = status.head_oid.clone();
            }
        }
        Err(e) => entry.block(
            BlockerCode::GitUnknown,
            format!("git status failed: {}", shown(&e)),
        ),
    }
    match initialised_submodules(git, entry, canonical) {
        Ok(initialised) => {
            if !initialised.is_empty() {
                entry.block(
                    BlockerCode::InitializedSubmodules,
                    format!(
                        "initialised submodules: {}",
                        herd_core::escape::encode_list(
                            &initialised,
                            VALUE_MAX_CHARS,
                            herd_core::escape::Noun::new("submodule", "submodules")
                        )
                    ),
                );
            }
        }
        Err(message) => entry.block(BlockerCode::GitUnknown, message),
    }
    match read.ignored {
        Ok(n) => entry.ignored_files = Some(n),
        Err(e) => entry.block(
            BlockerCode::IgnoredCountFailed,
            format!("the ignored files could not be counted: {}", shown(&e)),
        ),
    }
}

/// The two git reads of a checkout that take longest, its status and its ignored-file count,
/// each its own call with its own budget; an error is kept as its message.
pub(crate) struct GitReads {
    status: Result<herd_git::Status, String>,
    ignored: Result<u64, String>,
}

impl GitReads {
    /// Both reads, each in its own process, at the same time.
    fn concurrent(git: &Git, canonical: &Path) -> GitReads {
        std::thread::scope(|scope| {
            let ignored = scope.spawn(|| {
                git.count_ignored(canonical, &Context::deadline())
                    .map_err(|e| e.to_string())
            });
            let status = git
                .status(canonical, &Context::deadline())
                .map_err(|e| e.to_string());
            GitReads {
                status,
                ignored: ignored
                    .join()
                    .unwrap_or_else(|_| Err("the count panicked".to_owned())),
            }
        })
    }

    fn failed(why: &str) -> GitReads {
        GitReads {
            status: Err(why.to_owned()),
            ignored: Err(why.to_owned()),
        }
    }

    fn of(git: &Git, canonical: &Path) -> GitReads {
        GitReads {
            status: git
                .status(canonical, &Context::deadline())
                .map_err(|e| e.to_string()),
            ignored: git
                .count_ignored(canonical, &Context::deadline())
                .map_err(|e| e.to_string()),
        }
    }
}

/// The submodules of the checkout that are initialised: the gitlinks its index records whose
/// directory holds a `.git` (what `git worktree remove` refuses), and those in conflict.
///
/// The index is read in process; an index this reader does not cover (a split or sparse index,
/// an unborn head whose hash size is unknown) is left to `git submodule status --recursive`.
fn initialised_submodules(
    git: &Git,
    entry: &Entry,
    canonical: &Path,
) -> Result<Vec<String>, String> {
    let hash_len = entry.head.as_ref().map(|oid| oid.len() / 2);
    if let (Some(git_dir), Some(hash_len)) = (&entry.internal.git_dir, hash_len) {
        if let Gitlinks::Paths(links) = index::gitlinks(git_dir, hash_len) {
            let mut initialised = Vec::new();
            for link in links {
                let dot_git = canonical.join(&link.path).join(".git");
                let populated = match std::fs::symlink_metadata(&dot_git) {
                    Ok(_) => true,
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                        ) =>
                    {
                        false
                    }
                    Err(e) => {
                        return Err(format!(
                            "cannot tell whether submodule {} is initialised: {e}",
                            shown_path(&link.path)
                        ));
                    }
                };
                if link.conflicted || populated {
                    initialised.push(text(&link.path));
                }
            }
            return Ok(initialised);
        }
    }
    let out = git
        .run(
            canonical,
            ["submodule", "status", "--recursive"],
            &Context::deadline(),
        )
        .map_err(|e| format!("git submodule status failed: {}", shown(&e.to_string())))?;
    let text = String::from_utf8_lossy(&out);
    Ok(text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('-'))
        .filter_map(|l| {
            l.get(1..)
                .and_then(|rest| rest.split(' ').nth(1))
                .map(str::to_owned)
        })
        .collect())
}

/// The ownership manifests of this artifacts directory that name the checkout, and whether they
/// agree with git and Herdr.
fn manifests(ctx: &mut Context, entry: &mut Entry, canonical: &Path) {
    let ownership = match ctx.manifest_files() {
        Ok(files) => claims::ownership_among(files, canonical),
        Err(message) => {
            entry.block(
                BlockerCode::ManifestUndecidable,
                format!("cannot read the ownership manifests: {}", shown(message)),
            );
            return;
        }
    };
    for m in &ownership.removed {
        entry.manifests.push(manifest_ref(ctx, m, false));
    }
    for m in &ownership.owners {
        entry.manifests.push(manifest_ref(ctx, m, true));
        entry.internal.owners.push(m.id.clone());
        if let Some(setup) = &m.setup {
            entry.internal.setup.extend(setup.entries.iter().cloned());
            if let Some(at) = setup.started_at {
                let earliest = entry.internal.setup_started_at.map_or(at, |e| e.min(at));
                entry.internal.setup_started_at = Some(earliest);
            }
        }
    }
    for (file, reason) in &ownership.undecidable {
        entry.block(
            BlockerCode::ManifestUndecidable,
            format!(
                "manifest {} cannot be matched: {}",
                shown_path(file),
                shown(reason)
            ),
        );
    }
    if ownership.owners.len() > 1 {
        let ids: Vec<&str> = ownership.owners.iter().map(|m| m.id.as_str()).collect();
        entry.block(
            BlockerCode::ManifestUndecidable,
            format!(
                "{} manifests claim the checkout (runs {})",
                ids.len(),
                ids.join(", ")
            ),
        );
    }
    for m in &ownership.owners {
        if let Some(reason) = disagreement(ctx, entry, m) {
            entry.block(
                BlockerCode::IdentityDisagrees,
                format!("manifest of run {} disagrees: {reason}", m.id),
            );
        }
    }
}

/// What setup made does not block like a person's untracked file: an untracked path is
/// setup's when an owner's manifest records it (or a directory above it). A hard-linked file
/// changed in place since setup (`changed`, found by [`changed_links`]) is a blocker naming
/// it: its change already reached the source.
fn setup_made(entry: &mut Entry, changed: Option<Vec<String>>) {
    let setup = std::mem::take(&mut entry.internal.setup);
    entry.report.setup = setup
        .iter()
        .map(|s| format!("{} ({})", shown(&s.path), s.kind.as_str()))
        .collect();
    let covers = |u: &str| {
        let u = u.trim_end_matches('/');
        setup.iter().find(|s| {
            let p = s.path.trim_end_matches('/');
            u == p || u.strip_prefix(p).is_some_and(|rest| rest.starts_with('/'))
        })
    };
    let mut theirs = 0u64;
    let untracked = std::mem::take(&mut entry.internal.untracked);
    for u in &untracked {
        match covers(u) {
            Some(s) => {
                if !entry.internal.setup_untracked.contains(&s.path) {
                    entry.internal.setup_untracked.push(s.path.clone());
                }
            }
            None => theirs += 1,
        }
    }
    entry.internal.untracked = untracked;
    if theirs > 0 {
        entry.block(
            BlockerCode::Untracked,
            format!("{} untracked", files(theirs)),
        );
    }
    if let Some(changed) = changed {
        if !changed.is_empty() {
            let names = herd_core::escape::encode_list(
                &changed,
                VALUE_MAX_CHARS,
                herd_core::escape::Noun::new("file", "files"),
            );
            entry.block(
                BlockerCode::LinkedFileChanged,
                format!(
                    "hard-linked from the source checkout and changed since setup: {names}; removing the worktree is safe, but the change already reached the source's copy (the same file)"
                ),
            );
        }
    }
    entry.internal.setup = setup;
}

/// The most changed hard-linked files named.
const CHANGED_LINKS_MAX: usize = 20;

/// The hard-linked trees the owners' setup made (path in the checkout, source) and when that
/// setup began, as [`manifests`] will find them; `None` when there are none to walk.
fn setup_links(ctx: &mut Context, canonical: &Path) -> Option<(u64, Vec<(String, PathBuf)>)> {
    use herd_protocol::worktree::manifest::SetupKind;
    let files = ctx.manifest_files().ok()?;
    let owners = claims::ownership_among(files, canonical).owners;
    let mut started: Option<u64> = None;
    let mut links = Vec::new();
    for m in &owners {
        let Some(setup) = &m.setup else { continue };
        if let Some(at) = setup.started_at {
            started = Some(started.map_or(at, |e| e.min(at)));
        }
        for s in setup
            .entries
            .iter()
            .filter(|s| s.kind == SetupKind::Hardlink)
        {
            if let Some(source) = &s.source {
                links.push((s.path.clone(), source.clone()));
            }
        }
    }
    started.map(|started| (started, links))
}

/// Walks `dir` (not following symlinks) for regular files that share their inode with the file
/// at the same place under `source` and were modified after `started` (ms). A directory's
/// entries take their type from the listing and are read relative to it, so a file costs one
/// `statx` of its name alone; only a file modified since setup costs a second, of the source's.
fn changed_links(dir: &Path, source: &Path, rel: &str, started: u64, out: &mut Vec<String>) {
    let Ok(meta) = dir.symlink_metadata() else {
        return;
    };
    if meta.is_dir() {
        changed_links_in(dir, source, rel, started, out);
    } else if meta.is_file() && changed_link(&meta, source, started) {
        out.push(rel.to_owned());
    }
}

fn changed_links_in(dir: &Path, source: &Path, rel: &str, started: u64, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if out.len() >= CHANGED_LINKS_MAX {
            return;
        }
        let Ok(kind) = e.file_type() else { continue };
        let name = e.file_name();
        if kind.is_dir() {
            let child_rel = format!("{rel}/{}", name.to_string_lossy());
            changed_links_in(&e.path(), &source.join(&name), &child_rel, started, out);
        } else if kind.is_file() {
            let Ok(meta) = e.metadata() else { continue };
            if changed_link(&meta, &source.join(&name), started) {
                out.push(format!("{rel}/{}", name.to_string_lossy()));
            }
        }
    }
}

/// Whether a worktree file (`meta`, not followed) is a hard link modified after `started` (ms)
/// that is still the same file as `source`'s.
fn changed_link(meta: &std::fs::Metadata, source: &Path, started: u64) -> bool {
    use std::os::unix::fs::MetadataExt;
    if meta.nlink() <= 1 {
        return false;
    }
    let modified_ms = u64::try_from(meta.mtime()).unwrap_or(0) * 1000
        + u64::try_from(meta.mtime_nsec()).unwrap_or(0) / 1_000_000;
    // Only a file modified since setup is compared with the source's (one more stat).
    if modified_ms <= started {
        return false;
    }
    source
        .symlink_metadata()
        .is_ok_and(|theirs| theirs.dev() == meta.dev() && theirs.ino() == meta.ino())
}

fn manifest_ref(ctx: &Context, m: &Manifest, owner: bool) -> ManifestRef {
    ManifestRef {
        run_id: m.id.clone(),
        state: m.state.as_str().to_owned(),
        file: text(&ctx.artifacts.worktree_manifest(&m.id)),
        owner,
    }
}

/// Why the manifest `m` does not describe the checkout git and Herdr describe, if it does not.
fn disagreement(ctx: &mut Context, entry: &Entry, m: &Manifest) -> Option<String> {
    if let Some(branch) = &m.branch {
        if entry.branch.as_ref() != Some(branch) {
            return Some(format!(
                "it records branch {}, git says {}",
                shown(branch),
                entry.branch.as_deref().map_or("no branch".into(), shown)
            ));
        }
    }
    if let (Some(recorded), Some(open)) = (&m.workspace_id, &entry.workspace) {
        if recorded != open {
            return Some(format!(
                "it records workspace {}, herdr has {} open",
                shown(recorded),
                shown(open)
            ));
        }
    }
    let recorded_source = m.provision_cwd.as_ref().or(m.source_cwd.as_ref())?;
    let source = entry.source_path()?;
    let same = ctx
        .common_dir(recorded_source)
        .zip(ctx.common_dir(source))
        .is_some_and(|(a, b)| a == b);
    (!same).then(|| {
        format!(
            "its source {} is not (or no longer) a checkout of the repository {}",
            shown_path(recorded_source),
            shown_path(source)
        )
    })
}

/// Known live children and persistent leases: runs of the artifacts directory whose worktree
/// or cwd is the checkout, judged by their recorded process identity.
fn children(ctx: &mut Context, entry: &mut Entry, canonical: &Path) {
    let runs = match ctx.runs() {
        Ok(runs) => runs,
        Err(message) => {
            entry.block(
                BlockerCode::ChildUnknown,
                format!("cannot list the run records: {}", shown(message)),
            );
            return;
        }
    };
    let boot_id = identity::boot_id().ok();
    for Run { id, found } in runs {
        let (record, places) = match found {
            Ok(found) => found,
            Err(message) => {
                entry.warn(format!(
                    "run record {id} cannot be read ({}); it is not proven unrelated",
                    shown(message)
                ));
                continue;
            }
        };
        if !places.iter().any(|p| paths::is_within(p, canonical)) {
            continue;
        }
        let what = if record.persistent {
            format!("persistent specialist {} (run {id})", shown(&record.name))
        } else {
            format!("child {} (run {id})", shown(&record.name))
        };
        let process = SessionFiles::new(&record.session_file).process();
        match identity::Record::read(&process) {
            Ok(Some(identity)) => {
                // Another boot means the recorded process is gone, whatever else judge says.
                if boot_id.as_deref().is_some_and(|b| b != identity.boot_id) {
                    continue;
                }
                match identity::judge(&identity) {
                    Judgement::Exited => {}
                    Judgement::Alive if record.persistent => entry.block(
                        BlockerCode::PersistentLease,
                        format!(
                            "{what} holds a lease on the checkout and is alive (PID {})",
                            identity.pid
                        ),
                    ),
                    Judgement::Alive => entry.block(
                        BlockerCode::LiveChild,
                        format!("{what} is alive (PID {})", identity.pid),
                    ),
                    Judgement::Unknown(reason) => entry.block(
                        BlockerCode::ChildUnknown,
                        format!("cannot tell whether {what} is alive: {}", shown(&reason)),
                    ),
                }
            }
            Ok(None) => entry.warn(format!(
                "{what} works in the checkout and has no identity record; \
                 only the process scan speaks for it"
            )),
            Err(e) => entry.block(
                BlockerCode::ChildUnknown,
                format!(
                    "cannot tell whether {what} is alive: {}",
                    shown(&e.to_string())
                ),
            ),
        }
    }
}

/// The panes of the open workspace: a pane running anything but its idle shell blocks, idle
/// shells are returned as the PIDs the process scan may exempt.
fn panes(ctx: &mut Context, entry: &mut Entry) -> Vec<u32> {
    let (Some(herdr), Some(workspace)) = (ctx.herdr.clone(), entry.workspace.clone()) else {
        return Vec::new();
    };
    let list = match herdr.pane_list(Some(&workspace)) {
        Ok(list) => list,
        Err(e) => {
            entry.block(
                BlockerCode::HerdrUnknown,
                format!(
                    "herdr cannot list the panes of workspace {}: {}",
                    shown(&workspace),
                    shown(&e.to_string())
                ),
            );
            return Vec::new();
        }
    };
    let mut exempt = Vec::new();
    for pane in &list.panes {
        match herdr.pane_process_info(&pane.pane_id) {
            Ok(info) => match (info.shell_pid, info.foreground_pgid) {
                (Some(shell), Some(fg)) if shell == fg => exempt.push(shell),
                (Some(_), Some(_)) => entry.block(
                    BlockerCode::ForegroundProcess,
                    format!(
                        "pane {} runs a live child or foreground process",
                        shown(&pane.pane_id)
                    ),
                ),
                _ => entry.block(
                    BlockerCode::HerdrUnknown,
                    format!(
                        "herdr does not report the shell and foreground job of pane {}",
                        shown(&pane.pane_id)
                    ),
                ),
            },
            Err(e) => entry.block(
                BlockerCode::HerdrUnknown,
                format!(
                    "herdr cannot inspect pane {}: {}",
                    shown(&pane.pane_id),
                    shown(&e.to_string())
                ),
            ),
        }
    }
    exempt
}

/// The warnings a process scan carries for every checkout it covered: what it cannot see.
pub fn scan_warnings(scan: &Result<holders::Scan, holders::Error>) -> Vec<String> {
    let mut out = vec![COVERAGE_WARNING.to_owned()];
    if let Ok(scan) = scan {
        if scan.unreadable.count > 0 {
            out.push(format!(
                "not proven unrelated: {} of this user could not be inspected",
                scan.unreadable.describe()
            ));
        }
    }
    out
}

fn holders_of(
    entry: &mut Entry,
    canonical: &Path,
    scan: &Result<holders::Scan, holders::Error>,
    exempt: &[u32],
) {
    for w in scan_warnings(scan) {
        entry.warn(w);
    }
    let scan = match scan {
        Ok(scan) => scan,
        Err(e @ holders::Error::Unsupported) => {
            entry.block(BlockerCode::UnsupportedPlatform, e.to_string());
            return;
        }
        Err(e) => {
            entry.block(BlockerCode::EnumerationFailed, e.to_string());
            return;
        }
    };
    for h in scan.holders.iter().filter(|h| h.cwd.starts_with(canonical)) {
        let shell = h.comm.as_deref().is_some_and(|c| SHELLS.contains(&c));
        if shell && exempt.contains(&h.pid) {
            continue;
        }
        let name = h
            .comm
            .as_deref()
            .map_or_else(|| "name unreadable".to_owned(), shown);
        entry.block(
            BlockerCode::ProcessHolder,
            format!(
                "process {} ({name}) has its cwd in {}",
                h.pid,
                shown_path(&h.cwd)
            ),
        );
        entry.holders.push(HolderRef {
            pid: h.pid,
            name: h.comm.clone(),
            cwd: text(&h.cwd),
        });
    }
}

fn files(n: u64) -> String {
    if n == 1 {
        "1 file".to_owned()
    } else {
        format!("{n} files")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use herd_e2e::git::Sandbox;

    #[test]
    fn linked_facts_from_files_agree_with_git_or_leave_it_to_git() {
        let sb = Sandbox::new();
        let repo = sb.repo("repo");
        let git = sb.git_handle();
        let linked = sb.path().join("linked");
        let relative = sb.path().join("relative");
        sb.git(
            &repo,
            [
                "worktree",
                "add",
                "--quiet",
                "-b",
                "a",
                linked.to_str().unwrap(),
            ],
        );
        sb.git(
            &repo,
            [
                "worktree",
                "add",
                "--quiet",
                "-b",
                "b",
                relative.to_str().unwrap(),
            ],
        );
        // A pointer relative to the checkout, which git follows as well.
        std::fs::write(
            relative.join(".git"),
            "gitdir: ../repo/.git/worktrees/relative\n",
        )
        .unwrap();
        let resolved = |f: herd_git::RepoFacts| {
            (
                paths::resolve(&f.toplevel).unwrap(),
                paths::resolve(&f.git_dir).unwrap(),
                paths::resolve(&f.common_dir).unwrap(),
            )
        };
        for top in [&linked, &relative] {
            let top = paths::resolve(top).unwrap();
            let from_files = linked_facts(&top).expect("a plain linked checkout is read");
            let from_git = git.facts(&top, &Context::deadline()).unwrap();
            assert_eq!(resolved(from_files), resolved(from_git));
        }
        // A principal checkout, a directory inside a checkout, and a `.git` that is not the
        // plain pointer file are git's to answer.
        assert!(linked_facts(&repo).is_none());
        std::fs::create_dir_all(linked.join("inner")).unwrap();
        assert!(linked_facts(&linked.join("inner")).is_none());
        let odd = sb.path().join("odd");
        std::fs::create_dir_all(&odd).unwrap();
        std::fs::write(odd.join(".git"), "gitdir: /nonexistent/x\n").unwrap();
        assert!(linked_facts(&odd).is_none());
    }
}
