//! What the inspections of one command share: the tools, the scope, and what git, Herdr and
//! the artifacts directory said, each asked once per command (and forgotten on demand).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use herd_git::{Deadline, Git, WorktreeEntry, budget};
use herd_herdr::{Herdr, Source, WorktreeList};
use herd_protocol::layout::Artifacts;
use herd_protocol::run::RunRecord;
use herd_protocol::worktree::claims;

use super::identify::{linked_facts, source_root};
use super::worktree::GitReads;
use crate::paths;

/// How many checkouts a listing reads at once at most.
const PREFETCH_WORKERS: usize = 4;

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
    pub(super) prefetched: HashMap<PathBuf, GitReads>,
    /// The run records, read once for all the entries of a listing.
    runs: Option<Result<Vec<Run>, String>>,
    /// The ownership manifests, likewise.
    manifests: Option<Result<Vec<claims::ManifestFile>, String>>,
}

/// A registered checkout and its path resolved (`None` when it does not resolve).
pub(super) struct Listed {
    pub(super) record: WorktreeEntry,
    pub(super) resolved: Option<PathBuf>,
}

/// A run of the artifacts directory, as the inspection of every entry needs it.
pub(super) struct Run {
    pub(super) id: String,
    /// The record and the places its child works in (its worktree and cwd, those that
    /// resolve), or why the record cannot be read.
    pub(super) found: Result<(RunRecord, Vec<PathBuf>), String>,
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
    pub(super) fn manifest_files(&mut self) -> Result<&[claims::ManifestFile], &str> {
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
    pub(super) fn runs(&mut self) -> Result<&[Run], &str> {
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
    pub(super) fn source_of(&mut self, common_dir: &Path) -> Result<PathBuf, String> {
        let git = &self.git;
        self.sources
            .entry(common_dir.to_path_buf())
            .or_insert_with(|| source_root(git, common_dir))
            .clone()
    }

    /// The registered checkouts of `source`, listed once per command.
    pub(super) fn worktree_list(&mut self, source: &Path) -> Result<&[Listed], &str> {
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
    pub(super) fn common_dir(&mut self, dir: &Path) -> Option<PathBuf> {
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

    pub(super) fn deadline() -> Deadline {
        Deadline::after(budget::CLEANUP)
    }

    pub(super) fn herdr_list(&mut self, source: &Path) -> Option<Result<WorktreeList, String>> {
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
