//! The run record `runs/<run-id>.json`: what herd-launch started, for every other binary.
//!
//! The record is herd's own format (snake_case keys, `format_version`). herd-launch writes it
//! before it creates anything and updates it as the launch proceeds; herd-watch, herd-cleanup and
//! a person recovering by hand read it. [`find`] resolves a run by id or by exact, unambiguous
//! name from the files alone.

use serde::{Deserialize, Serialize};

use crate::layout::{Artifacts, validate_run_id};
use herd_core::{Error, ErrorCode, sidecar};

/// The newest record version this build reads and writes.
pub const FORMAT_VERSION: u64 = 1;

/// The bound of a run record read.
pub const READ_LIMIT: u64 = 256 * 1024;

/// What the child is: the Pi CLI, or any command as an argv with no shell (`exec`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Runner {
    Pi,
    Exec,
}

/// Where the child runs (docs/surfaces.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SurfaceKind {
    Herdr,
    Tmux,
    Process,
}

impl SurfaceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SurfaceKind::Herdr => "herdr",
            SurfaceKind::Tmux => "tmux",
            SurfaceKind::Process => "process",
        }
    }
}

/// How the launch ended, as the acknowledgement reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LaunchStatus {
    /// The record exists; nothing has been dispatched yet.
    Pending,
    Launched,
    /// Dispatch or rollback may have happened; the owner stays supervised.
    Uncertain,
    Failed,
}

/// The terminal pane that holds the child, on the herdr and tmux surfaces.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PaneRef {
    pub pane_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<String>,
    /// Whether herd created the pane (and may close it) or was given it.
    #[serde(default)]
    pub owned: bool,
    /// The multiplexer's socket (tmux `-S`, Herdr `HERDR_SOCKET_PATH`), so every program reaches
    /// the same server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<String>,
    /// The PID of the tmux server that created the pane: pane ids restart with a new server, so a
    /// pane id means this pane only while the same server runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_pid: Option<u32>,
    /// Herdr's terminal id of the pane when herd recorded it: a restarted Herdr brings its
    /// panes back under the same pane ids with fresh shells and new terminal ids, so a pane id
    /// means this pane only while its terminal id is the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal_id: Option<String>,
}

/// The managed worktree a child runs in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WorktreeRef {
    pub path: String,
    pub branch: String,
    pub base_sha: String,
    /// The ownership manifest `worktree-runs/<run-id>.json`.
    pub manifest: String,
}

/// `runs/<run-id>.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunRecord {
    pub format_version: u64,
    pub run_id: String,
    /// The display name the parent gave the run.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    pub created_at_ms: u64,
    #[serde(default)]
    pub updated_at_ms: u64,
    pub runner: Runner,
    pub surface: SurfaceKind,
    pub status: LaunchStatus,
    /// The child's working directory.
    pub cwd: String,
    /// The child's session file; the completion, identity and policy sidecars sit beside it.
    pub session_file: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pane: Option<PaneRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<WorktreeRef>,
    /// The accept spec, when a check was requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accept_spec: Option<String>,
    /// The model of this attempt and the candidates still to try after a provider error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fallback_models: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempted_models: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    #[serde(default)]
    pub persistent: bool,
    #[serde(default)]
    pub interactive: bool,
    #[serde(default)]
    pub auto_exit: bool,
    /// The attempt this one replaces after its provider error (a model fallback), so the chain of
    /// failed models can be walked from the files alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_of: Option<String>,
    /// The run that launched this one, for children that launch children.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_run_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_failure: Option<String>,
    /// The longest the child may run, from the record's creation: past it the watcher terminates
    /// the child through its verified identity and the run fails as timed out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_limit_ms: Option<u64>,
    /// Free-form launch diagnostics (host text, never child text).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<String>,
    /// What herd-launch keeps of the launch for the programs after it.
    #[serde(default, skip_serializing_if = "RunExtra::is_empty")]
    pub extra: RunExtra,
}

/// The record's `extra`: the files herd-launch made for the run (removed if the launch is
/// withdrawn), a specialist's ids, what a fallback launch repeats, and the acceptance gate.
/// Readers ignore keys they do not know, so a record of a newer herd stays readable.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunExtra {
    /// The launch script the surface runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_script: Option<String>,
    /// The child's activity snapshot (`subagent-activity/<run-id>.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activity_file: Option<String>,
    /// The task the child was given, as a file (`subagent-tasks/…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_artifact: Option<String>,
    /// The launch request as given, kept for a model fallback's launch (`runs/<run-id>.request.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_file: Option<String>,
    /// The run's acceptance gate file (`runs/<run-id>.acceptance.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acceptance_file: Option<String>,
    /// A persistent specialist's ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logical_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Pi's project trust decided for the child's folder; a fallback launch repeats it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_trust: Option<ProjectTrust>,
    /// The exec runner's command, kept for a fallback launch of the same command.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exec_argv: Vec<String>,
    /// The run's acceptance gate, summarised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acceptance: Option<AcceptanceSummary>,
    /// The child runs on another machine, owned by that machine's herd.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<RemoteRun>,
    /// The lost run whose session this run resumed (`herd-launch resurrect`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resurrects: Option<String>,
    /// The run's hard budget (`subagent`'s `budget`): the watcher stops the child when its
    /// usage, with its nested children's, reaches it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<crate::usage::Budget>,
    /// The runs this run launches are listed in `runs/<run-id>.children` ([`link_child`]), so
    /// they are found without a search of the directory. A record written before the list
    /// existed lacks it, and its children are searched for.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub links_children: bool,
}

/// Where a run on another machine is: the host (an ssh destination `herd-launch host add`
/// prepared), the remote's artifacts directory and the run's id there. The remote's herd owns
/// the child; this machine only relays its result and forwards control.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RemoteRun {
    pub host: String,
    /// The artifacts directory on the host.
    pub artifacts: String,
    /// The run id on the host; absent until the host acknowledged the launch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The child's session file on the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_file: Option<String>,
    /// A worktree child's repositories: its branch is fetched back when its result comes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<RemoteWorktree>,
}

/// The repositories of a worktree child on another machine: the source repository here, the
/// herd-owned clone on the host its base commit was pushed to, the branch and its base.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RemoteWorktree {
    pub source: String,
    pub clone: String,
    pub branch: String,
    pub base_sha: String,
}

impl RunExtra {
    pub fn is_empty(&self) -> bool {
        *self == RunExtra::default()
    }

    /// The files made for the launch, to remove when it is withdrawn.
    pub fn launch_files(&self) -> impl Iterator<Item = &str> {
        [
            &self.launch_script,
            &self.activity_file,
            &self.task_artifact,
            &self.request_file,
            &self.acceptance_file,
        ]
        .into_iter()
        .filter_map(|file| file.as_deref())
    }
}

/// Whether Pi may trust the child's project folder (Pi 1.6's "Trust project folder?").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProjectTrust {
    Trusted,
    Untrusted,
}

impl ProjectTrust {
    pub fn as_str(self) -> &'static str {
        match self {
            ProjectTrust::Trusted => "trusted",
            ProjectTrust::Untrusted => "untrusted",
        }
    }

    pub fn parse(value: &str) -> Option<ProjectTrust> {
        match value {
            "trusted" => Some(ProjectTrust::Trusted),
            "untrusted" => Some(ProjectTrust::Untrusted),
            _ => None,
        }
    }
}

/// A run's acceptance gate as the record and the launch acknowledgement show it: its
/// level, whether the request asked for it, whether it requires a review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AcceptanceSummary {
    #[schemars(extend("enum" = ["none", "attested", "checked", "verified"]))]
    pub level: String,
    pub explicit: bool,
    pub review_required: bool,
    /// The run a reviewer reviews.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviews: Option<String>,
}

/// The largest list of a run's children read: 256 KiB, thousands of run ids.
pub const CHILDREN_READ_LIMIT: u64 = 256 * 1024;

/// Adds `child` to the list of `parent`'s children, `runs/<parent>.children`, one run id a line.
///
/// herd-launch calls it before the child's record is created, so a crash leaves no child that
/// the list misses. An id whose claim then failed stays listed: a reader keeps only the listed
/// runs whose record names `parent` ([`linked_children`]). Nothing is written for a parent that
/// has no record in `artifacts`.
pub fn link_child(artifacts: &Artifacts, parent: &str, child: &str) -> Result<(), Error> {
    validate_run_id(parent)?;
    validate_run_id(child)?;
    if !artifacts.run_record(parent).is_file() {
        return Ok(());
    }
    Ok(sidecar::append_line(&artifacts.children(parent), child)?)
}

/// The records of the runs `parent` launched, oldest first: those of its list of children whose
/// record names it. `None` when the list cannot be read (larger than its bound, say), and the
/// caller searches instead; a missing list is an empty one.
pub fn linked_children(artifacts: &Artifacts, parent: &str) -> Option<Vec<RunRecord>> {
    let bytes = match sidecar::read_bounded(&artifacts.children(parent), CHILDREN_READ_LIMIT) {
        Ok(bytes) => bytes.unwrap_or_default(),
        Err(_) => return None,
    };
    let mut children: Vec<RunRecord> = String::from_utf8_lossy(&bytes)
        .lines()
        .filter(|id| validate_run_id(id).is_ok())
        .filter_map(|id| RunRecord::load(artifacts, id).ok())
        .filter(|r| r.parent_run_id.as_deref() == Some(parent))
        .collect();
    children.sort_by(|a, b| (a.created_at_ms, &a.run_id).cmp(&(b.created_at_ms, &b.run_id)));
    children.dedup_by(|a, b| a.run_id == b.run_id);
    Some(children)
}

impl RunRecord {
    /// Reads the record of `run_id`; `not_found` when there is none.
    pub fn load(artifacts: &Artifacts, run_id: &str) -> Result<RunRecord, Error> {
        validate_run_id(run_id)?;
        let path = artifacts.run_record(run_id);
        let record: RunRecord =
            sidecar::read_versioned(&path, READ_LIMIT, "format_version", FORMAT_VERSION)?
                .ok_or_else(|| {
                    Error::not_found(format!(
                        "no run `{run_id}` in {}",
                        artifacts.root().display()
                    ))
                })?;
        if record.run_id != run_id {
            return Err(Error::invalid(
                "run_id",
                format!("{} names run `{}`", path.display(), record.run_id),
            ));
        }
        Ok(record)
    }

    /// Writes the record atomically, stamping `updated_at_ms`.
    pub fn save(&mut self, artifacts: &Artifacts) -> Result<(), Error> {
        validate_run_id(&self.run_id)?;
        self.format_version = FORMAT_VERSION;
        self.updated_at_ms = herd_core::time::now_ms();
        let path = artifacts.run_record(&self.run_id);
        // A record no reader could read is not written (a request's argv, models or
        // diagnostics can be any size): refused, with the file left as it was.
        let size = serde_json::to_vec_pretty(self).map_or(u64::MAX, |b| b.len() as u64 + 1);
        if size > READ_LIMIT {
            return Err(Error::invalid(
                "run",
                format!(
                    "the run record would be {size} bytes, more than the {READ_LIMIT} a reader takes in"
                ),
            ));
        }
        Ok(sidecar::write_json(&path, self)?)
    }

    pub fn session_files(&self) -> crate::layout::SessionFiles {
        crate::layout::SessionFiles::new(&self.session_file)
    }
}

/// `runs/<id>.remote.json`: what the host of a run on another machine last said of it (its label
/// there and when), written by the relay; its path also stands as the run's local session file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteState {
    pub format_version: u64,
    pub label: crate::watch::Label,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_ms: Option<u64>,
    pub seen_at_ms: u64,
}

/// `runs/<id>.superseded.json`: the run was replaced by another attempt (a model fallback after
/// a provider error, or the next candidate after a definite launch failure) and is not delivered.
/// Written once, as a claim first (no successor yet) when the decision precedes the launch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Superseded {
    pub format_version: u64,
    pub at_ms: u64,
    /// The run of the next attempt, once it is launched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub successor: Option<String>,
    /// Why no successor exists, when the launch failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// The raw provider error that made this attempt give way, written with the claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Superseded {
    /// Reads the file of `run_id`; `None` when there is none or it cannot be read.
    pub fn read(artifacts: &Artifacts, run_id: &str) -> Option<Superseded> {
        artifacts.run(run_id).read().ok().flatten()
    }
}

/// `runs/<successor>.predecessor.json`: the attempts before this one, written once by the
/// watcher that launched the successor of a model fallback.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Predecessor {
    #[schemars(schema_with = "crate::format_version")]
    pub format_version: u64,
    /// The attempt the successor replaced.
    #[schemars(pattern(crate::layout::RUN_ID_PATTERN))]
    pub run_id: String,
    /// Every model attempted before the successor, in order.
    pub models: Vec<String>,
    /// The provider error that ended the attempt.
    pub error: String,
}

impl Predecessor {
    /// Reads the predecessor of `run_id`; `None` when there is none or it cannot be read.
    pub fn read(artifacts: &Artifacts, run_id: &str) -> Option<Predecessor> {
        artifacts.run(run_id).read().ok().flatten()
    }
}

/// How a command names a run: `--run ID` or `--name NAME`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector<'a> {
    Id(&'a str),
    Name(&'a str),
}

impl<'a> Selector<'a> {
    /// From the `--run`/`--name` pair of a command line; `--run` wins when both are given.
    pub fn from_flags(run: Option<&'a str>, name: Option<&'a str>) -> Result<Selector<'a>, Error> {
        match (run, name) {
            (Some(id), _) => Ok(Selector::Id(id)),
            (None, Some(name)) => Ok(Selector::Name(name)),
            (None, None) => Err(Error::invalid(
                "run",
                "name a run with --run ID or --name NAME",
            )),
        }
    }
}

/// Finds a run by id, or by exact name among the records that `filter` keeps.
///
/// A name is looked for among the open runs first ([`crate::open_runs`]), so history costs a
/// name lookup nothing; only a name no open run has is looked for among every record. A name
/// that matches no record is `not_found`; one that matches several is `ambiguous`. Records that
/// cannot be read are skipped in a name search (they are reported by `herd-cleanup doctor`), so
/// one broken file does not make every run unreachable.
pub fn find(
    artifacts: &Artifacts,
    selector: &Selector<'_>,
    filter: impl Fn(&RunRecord) -> bool,
) -> Result<RunRecord, Error> {
    match selector {
        Selector::Id(id) => RunRecord::load(artifacts, id),
        Selector::Name(name) => {
            // A run's name is kept abbreviated to 80 characters, as the launch that named it
            // abbreviated it, so the same long name finds it.
            let name = &herd_core::escape::abbreviate_name(name);
            let open: Vec<String> = crate::open_runs::list(artifacts)?
                .into_iter()
                .filter(|id| !crate::open_runs::is_closed(artifacts, id))
                .collect();
            match find_among(artifacts, &open, name, &filter) {
                Err(e) if e.code == ErrorCode::NotFound => {
                    find_among(artifacts, &artifacts.run_ids()?, name, &filter)
                }
                found => found,
            }
        }
    }
}

fn find_among(
    artifacts: &Artifacts,
    ids: &[String],
    name: &str,
    filter: &impl Fn(&RunRecord) -> bool,
) -> Result<RunRecord, Error> {
    let mut matches = Vec::new();
    for id in ids {
        let Ok(record) = RunRecord::load(artifacts, id) else {
            continue;
        };
        if record.name == *name && filter(&record) {
            matches.push(record);
        }
    }
    match matches.len() {
        0 => Err(Error::not_found(format!("no run named {name:?}")).with_field("name")),
        1 => Ok(matches.remove(0)),
        n => {
            let ids: Vec<&str> = matches.iter().map(|r| r.run_id.as_str()).collect();
            Err(Error::new(
                ErrorCode::Ambiguous,
                format!(
                    "{n} runs are named {name:?} ({}); use --run",
                    ids.join(", ")
                ),
            )
            .with_field("name"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, name: &str) -> RunRecord {
        RunRecord {
            format_version: FORMAT_VERSION,
            run_id: id.into(),
            name: name.into(),
            agent: None,
            created_at_ms: 1,
            updated_at_ms: 1,
            runner: Runner::Exec,
            surface: SurfaceKind::Process,
            status: LaunchStatus::Launched,
            cwd: "/".into(),
            session_file: format!("/s/{id}.jsonl"),
            pane: None,
            worktree: None,
            accept_spec: None,
            model: None,
            fallback_models: vec![],
            attempted_models: vec![],
            thinking: None,
            persistent: false,
            interactive: false,
            auto_exit: true,
            fallback_of: None,
            parent_run_id: None,
            launch_failure: None,
            time_limit_ms: None,
            diagnostics: vec![],
            extra: Default::default(),
        }
    }

    #[test]
    fn a_run_s_children_are_the_listed_runs_whose_record_names_it_oldest_first() {
        let dir = tempfile::tempdir().unwrap();
        let art = Artifacts::new(dir.path());
        // No record of the parent here: nothing is listed.
        link_child(&art, "p1", "c0").unwrap();
        assert!(!art.children("p1").exists());
        record("p1", "lead").save(&art).unwrap();
        assert_eq!(linked_children(&art, "p1").unwrap(), []);
        let child = |id: &str, parent: &str, at: u64| {
            let mut r = record(id, id);
            r.parent_run_id = Some(parent.into());
            r.created_at_ms = at;
            r.save(&art).unwrap();
        };
        for id in ["c2", "c1", "lost", "other", "c2"] {
            link_child(&art, "p1", id).unwrap();
        }
        child("c1", "p1", 5);
        child("c2", "p1", 3);
        // `lost` never got its record; `other` is another run's child.
        child("other", "p9", 1);
        let ids: Vec<String> = linked_children(&art, "p1")
            .unwrap()
            .into_iter()
            .map(|r| r.run_id)
            .collect();
        assert_eq!(ids, ["c2", "c1"]);
        // A list past its bound is not read: the caller searches instead.
        std::fs::write(art.children("p1"), "c1\n".repeat(100_000)).unwrap();
        assert!(linked_children(&art, "p1").is_none());
        assert!(link_child(&art, "p1", "../x").is_err());
    }

    #[test]
    fn find_by_id_and_by_unambiguous_name() {
        let dir = tempfile::tempdir().unwrap();
        let art = Artifacts::new(dir.path());
        record("a1", "scout").save(&art).unwrap();
        record("b2", "twin").save(&art).unwrap();
        record("c3", "twin").save(&art).unwrap();
        assert_eq!(
            find(&art, &Selector::Id("a1"), |_| true).unwrap().name,
            "scout"
        );
        assert_eq!(
            find(&art, &Selector::Name("scout"), |_| true)
                .unwrap()
                .run_id,
            "a1"
        );
        assert_eq!(
            find(&art, &Selector::Name("twin"), |_| true)
                .unwrap_err()
                .code,
            ErrorCode::Ambiguous
        );
        assert_eq!(
            find(&art, &Selector::Name("twin"), |r| r.run_id == "c3")
                .unwrap()
                .run_id,
            "c3"
        );
        assert_eq!(
            find(&art, &Selector::Name("nobody"), |_| true)
                .unwrap_err()
                .code,
            ErrorCode::NotFound
        );
        assert_eq!(
            find(&art, &Selector::Id("zz"), |_| true).unwrap_err().code,
            ErrorCode::NotFound
        );
        assert_eq!(
            find(&art, &Selector::Id("../x"), |_| true)
                .unwrap_err()
                .code,
            ErrorCode::InvalidRequest
        );
    }

    #[test]
    fn a_record_under_another_name_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let art = Artifacts::new(dir.path());
        record("a1", "scout").save(&art).unwrap();
        std::fs::copy(art.run_record("a1"), art.run_record("b2")).unwrap();
        let err = RunRecord::load(&art, "b2").unwrap_err();
        assert_eq!(err.field.as_deref(), Some("run_id"));
    }
}
