//! The layout of an artifacts directory and of the files beside a child's session
//! (docs/sidecars.md, docs/protocol.md).
//!
//! Every binary finds every file through these types, so the layout is written down once.
//!
//! ```text
//! ART/runs/<run-id>.json               the run record (herd)
//! ART/runs/<run-id>.events.jsonl       its transitions (herd)
//! ART/runs/<run-id>.result.json        its delivered result (herd-watch)
//! ART/worktree-runs/<run-id>.json      worktree ownership manifest (pi-herdr-agents format)
//! ART/subagent-activity/<run-id>.json  child activity snapshot (pi-herdr-agents format)
//! ART/context/…                        task artifacts and system-prompt files
//! ART/subagent-scripts/…               launch scripts
//! ART/subagent-resume/…                resume messages
//! ART/accept/<run-id>.json             accept specs (mode 0600)
//! ART/logs/<run-id>.{out,err}          output of children on the process surface
//! ART/logs/<run-id>.screen             the kept screen of a failed child's pane (herd-watch)
//! ```

use std::ffi::OsString;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use herd_core::{Error, ErrorCode};

/// The environment variable naming the default artifacts directory.
pub const ARTIFACTS_ENV: &str = "HERD_ARTIFACTS";

/// The longest run id herd accepts.
pub const MAX_RUN_ID_LEN: usize = 64;

/// An artifacts directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifacts {
    root: PathBuf,
}

impl Artifacts {
    pub fn new(root: impl Into<PathBuf>) -> Artifacts {
        Artifacts { root: root.into() }
    }

    /// Resolves the directory from `--artifacts`, else `--parent-session`, else
    /// `$HERD_ARTIFACTS`, else the per-user state directory, and refuses one that another user
    /// owns or that its group or others may write to ([`herd_core::sidecar::check_private_root`]).
    pub fn resolve(
        artifacts: Option<&Path>,
        parent_session: Option<&Path>,
    ) -> Result<Artifacts, Error> {
        let art = Artifacts::locate(artifacts, parent_session)?;
        herd_core::sidecar::check_private_root(art.root())
            .map_err(|e| Error::from(e).with_field("--artifacts"))?;
        Ok(art)
    }

    fn locate(artifacts: Option<&Path>, parent_session: Option<&Path>) -> Result<Artifacts, Error> {
        // Children and launch scripts use these paths from other working directories.
        let absolute = |dir: &Path| {
            std::path::absolute(dir).map(Artifacts::new).map_err(|e| {
                Error::invalid(
                    "--artifacts",
                    format!("cannot make {} absolute: {e}", dir.display()),
                )
            })
        };
        if let Some(dir) = artifacts {
            return absolute(dir);
        }
        if let Some(session) = parent_session {
            return absolute(Artifacts::for_parent_session(session)?.root());
        }
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        if let Some(dir) = var(ARTIFACTS_ENV) {
            return absolute(Path::new(&dir));
        }
        let state = var("XDG_STATE_HOME")
            .map(PathBuf::from)
            .or_else(|| var("HOME").map(|home| PathBuf::from(home).join(".local/state")))
            .ok_or_else(|| {
                Error::invalid(
                    "--artifacts",
                    "no artifacts directory: pass --artifacts or --parent-session, \
                     or set HERD_ARTIFACTS or HOME",
                )
            })?;
        Ok(Artifacts::new(state.join("herd").join("artifacts")))
    }

    /// `<session dir>/artifacts/<session id>/`, the directory pi-herdr-agents uses.
    ///
    /// The session id is the `id` of the session header (the file's first line); when the header
    /// cannot be read, the part of the file name after its last `_`, as Pi names session files.
    pub fn for_parent_session(session: &Path) -> Result<Artifacts, Error> {
        let dir = session
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let id = session_id_from_header(session)
            .or_else(|| session_id_from_name(session))
            .ok_or_else(|| {
                Error::invalid(
                    "--parent-session",
                    format!("cannot tell the session id of {}", session.display()),
                )
            })?;
        Ok(Artifacts::new(dir.join("artifacts").join(id)))
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn runs_dir(&self) -> PathBuf {
        self.root.join(RUNS_DIR)
    }

    /// The relay of one host: its lock and its connection state (`relays/<host>.lock`,
    /// `relays/<host>.json`).
    pub fn relay_dir(&self) -> PathBuf {
        self.root().join("relays")
    }

    /// `relays/<host>.json`, the connection state of `host`'s relay
    /// ([`crate::relay::RelayState`]).
    pub fn relay_state(&self, host: &str) -> PathBuf {
        self.relay_dir().join(format!("{host}.json"))
    }

    /// `relays/<host>.lock`, held by the one relay of `host`.
    pub fn relay_lock(&self, host: &str) -> PathBuf {
        self.relay_dir().join(format!("{host}.lock"))
    }

    /// A per-run file of `runs/`: `runs/<run-id>.<suffix>`; every one has its name in
    /// [`RUN_FILES`] or in [`crate::run_file`]'s table.
    fn run_file(&self, run_id: &str, suffix: &str) -> PathBuf {
        self.runs_dir().join(format!("{run_id}.{suffix}"))
    }

    /// `runs/resurrect.lock`, which one `herd-launch resurrect` at a time holds.
    pub fn resurrect_lock(&self) -> PathBuf {
        self.runs_dir().join("resurrect.lock")
    }

    /// `outcomes.jsonl`, the outcome ledger: a line per model attempt.
    pub fn outcome_ledger(&self) -> PathBuf {
        self.root.join("outcomes.jsonl")
    }

    pub fn worktree_runs_dir(&self) -> PathBuf {
        self.root.join("worktree-runs")
    }

    pub fn worktree_manifest(&self, run_id: &str) -> PathBuf {
        self.worktree_runs_dir().join(format!("{run_id}.json"))
    }

    pub fn activity_dir(&self) -> PathBuf {
        self.root.join("subagent-activity")
    }

    /// A confined worktree child's private git overlay (`herd_sandbox::git`).
    pub fn sandbox(&self, run_id: &str) -> PathBuf {
        self.root.join("sandbox").join(run_id)
    }

    /// The directory of a Pi child's session (its session file and sidecars), one per run: out
    /// of the list Pi's `pi -c` and `/resume` pick the person's own sessions from, and the one
    /// directory of sessions a confined child writes.
    pub fn session_dir(&self, run_id: &str) -> PathBuf {
        self.root.join("sessions").join(run_id)
    }

    pub fn activity(&self, run_id: &str) -> PathBuf {
        self.activity_dir().join(format!("{run_id}.json"))
    }

    pub fn context_dir(&self) -> PathBuf {
        self.root.join("context")
    }

    pub fn scripts_dir(&self) -> PathBuf {
        self.root.join("subagent-scripts")
    }

    pub fn resume_dir(&self) -> PathBuf {
        self.root.join("subagent-resume")
    }

    pub fn accept_spec(&self, run_id: &str) -> PathBuf {
        self.root.join("accept").join(format!("{run_id}.json"))
    }

    /// `handoffs/`: the `/worktree` handoffs, each a launch script and a record
    /// (`handoffs/<id>.sh`, `handoffs/<id>.json`).
    pub fn handoffs_dir(&self) -> PathBuf {
        self.root.join("handoffs")
    }

    /// A file of handoff `id`, e.g. `handoff_file(id, "json")`.
    pub fn handoff_file(&self, id: &str, suffix: &str) -> PathBuf {
        self.handoffs_dir().join(format!("{id}.{suffix}"))
    }

    pub fn logs_dir(&self) -> PathBuf {
        self.root.join("logs")
    }

    pub fn stdout_log(&self, run_id: &str) -> PathBuf {
        self.logs_dir().join(format!("{run_id}.out"))
    }

    pub fn stderr_log(&self, run_id: &str) -> PathBuf {
        self.logs_dir().join(format!("{run_id}.err"))
    }

    /// `logs/<run-id>.screen`: the last lines of a pane's screen, kept once the child ended, so
    /// what it showed outlives its pane.
    pub fn screen_log(&self, run_id: &str) -> PathBuf {
        self.logs_dir().join(format!("{run_id}.screen"))
    }

    /// The tasks of run `run_id` (a persistent specialist) that have a result of their own,
    /// `runs/<run-id>.task-<task>.result.json` ([`crate::result::stem`]), sorted.
    pub fn task_results(&self, run_id: &str) -> Vec<String> {
        let prefix = crate::result::stem(run_id, Some(""));
        let suffix = format!(".{RESULT}");
        let Ok(entries) = std::fs::read_dir(self.runs_dir()) else {
            return Vec::new();
        };
        let mut tasks: Vec<String> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let name = entry.file_name().into_string().ok()?;
                let task = name.strip_prefix(&prefix)?.strip_suffix(&suffix)?;
                Some(task.to_owned())
            })
            .collect();
        tasks.sort();
        tasks
    }

    /// The ids of every run that has a record, sorted.
    pub fn run_ids(&self) -> Result<Vec<String>, Error> {
        let dir = self.runs_dir();
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(Error::new(
                    ErrorCode::Unavailable,
                    format!("cannot list {}: {e}", dir.display()),
                ));
            }
        };
        let mut ids = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| {
                Error::new(
                    ErrorCode::Unavailable,
                    format!("cannot list {}: {e}", dir.display()),
                )
            })?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let Some(id) = name.strip_suffix(RECORD).and_then(|n| n.strip_suffix('.')) else {
                continue;
            };
            if id.contains('.') || validate_run_id(id).is_err() {
                continue;
            }
            ids.push(id.to_owned());
        }
        ids.sort();
        Ok(ids)
    }
}

/// The files pi-herdr-agents keeps beside a child's session file (docs/sidecars.md, "Beside a
/// child's session file").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFiles {
    session: PathBuf,
}

impl SessionFiles {
    pub fn new(session: impl Into<PathBuf>) -> SessionFiles {
        SessionFiles {
            session: session.into(),
        }
    }

    pub fn session(&self) -> &Path {
        &self.session
    }

    pub(crate) fn with_suffix(&self, suffix: &str) -> PathBuf {
        let mut name: OsString = self.session.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    }

    /// A persistent task inbox file `<session>.task-inbox.<seq:12 digits>.json`.
    pub fn inbox(&self, seq: u64) -> PathBuf {
        self.with_suffix(&format!("{TASK_INBOX_PREFIX}{seq:012}{TASK_INBOX_SUFFIX}"))
    }

    /// The sequence number of `name` when it is the name of one of this session's inbox files,
    /// claimed or not (its 12 digits may be followed by more than [`TASK_INBOX_SUFFIX`]).
    pub fn inbox_seq(&self, name: &std::ffi::OsStr) -> Option<u64> {
        let session = self.session.file_name()?.as_encoded_bytes();
        let digits = name
            .as_encoded_bytes()
            .strip_prefix(session)?
            .strip_prefix(TASK_INBOX_PREFIX.as_bytes())?
            .get(..12)?;
        std::str::from_utf8(digits).ok()?.parse().ok()
    }
}

/// The files beside a session: `<session><suffix>`, each with its accessor on [`SessionFiles`]
/// and its name in [`SESSION_FILES`] (which the extensions' generated table is made from). The
/// versioned documents among them are also types ([`crate::session_file::SessionFile`]), read and
/// written through [`SessionFiles::read`], [`SessionFiles::write`] and
/// [`SessionFiles::create_once`].
macro_rules! session_files {
    ($($(#[$doc:meta])* $name:ident => $suffix:literal,)*) => {
        impl SessionFiles {
            $($(#[$doc])* pub fn $name(&self) -> PathBuf {
                self.with_suffix(suffix::$name)
            })*
        }

        /// Every file beside a session with one name, by name: `(name, suffix)`, the suffix
        /// appended to the session file's path.
        pub const SESSION_FILES: &[(&str, &str)] = &[$((stringify!($name), $suffix),)*];

        /// The suffixes of [`SESSION_FILES`] by name, for the types of
        /// [`crate::session_file`].
        #[allow(non_upper_case_globals)]
        pub(crate) mod suffix {
            $(pub(crate) const $name: &str = $suffix;)*
        }
    };
}

session_files! {
    /// The completion sidecar `<session>.exit` (child-written).
    exit => ".exit",
    /// The process-identity record `<session>.process.json`.
    process => ".process.json",
    /// The launch-policy sidecar `<session>.pi-herdr-subagent-policy.json`.
    policy => ".pi-herdr-subagent-policy.json",
    /// Persistent task events `<session>.tasks` (JSON Lines, child-written).
    tasks => ".tasks",
    /// Persistent delivery ledger `<session>.ledger` (JSON Lines, host-written).
    ledger => ".ledger",
    /// The advisory lock every writer of the ledger takes (`<session>.ledger.lock`).
    ledger_lock => ".ledger.lock",
    /// Whether the child waits for a person, `<session>.needs-input.json` (child-written).
    needs_input => ".needs-input.json",
    /// The child's own accept checks, `<session>.accept-tries.json` (child-written).
    accept_tries => ".accept-tries.json",
    /// The steering queued for the child's next turn boundary,
    /// `<session>.steering-queued.json` (host-written).
    steering_queued => ".steering-queued.json",
}

/// A task inbox file is `<session><TASK_INBOX_PREFIX><seq:12 digits><TASK_INBOX_SUFFIX>`.
pub const TASK_INBOX_PREFIX: &str = ".task-inbox.";
/// The end of a task inbox file's name.
pub const TASK_INBOX_SUFFIX: &str = ".json";

/// The rule of a run id as a regular expression, for the schemas and the extensions' types; it
/// says what [`validate_run_id`] checks.
pub const RUN_ID_PATTERN: &str = "^[A-Za-z0-9_-]{1,64}$";

/// Checks that a run id is safe as a file-name component: 1–64 of `[A-Za-z0-9_-]`.
pub fn validate_run_id(id: &str) -> Result<(), Error> {
    let ok = !id.is_empty()
        && id.len() <= MAX_RUN_ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(
            "run_id",
            "a run id is 1 to 64 characters of A-Z, a-z, 0-9, '-' and '_'",
        ))
    }
}

/// Pi's `safeName`: lower case, only `[a-z0-9 -]`, whitespace to `-`, dashes collapsed and trimmed.
pub fn safe_name(name: &str, fallback: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars().flat_map(char::to_lowercase) {
        let c = if c.is_whitespace() { '-' } else { c };
        if !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
            continue;
        }
        if c == '-' && (out.is_empty() || out.ends_with('-')) {
            continue;
        }
        out.push(c);
    }
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() {
        fallback.to_owned()
    } else {
        out
    }
}

fn session_id_from_header(session: &Path) -> Option<String> {
    let file = herd_core::sidecar::open_given(session).ok()??;
    let mut line = Vec::new();
    std::io::BufReader::new(std::io::Read::take(file, 64 * 1024))
        .read_until(b'\n', &mut line)
        .ok()?;
    let Some(crate::session::Entry::Session { id: Some(id), .. }) =
        crate::session::parse_line(std::str::from_utf8(&line).ok()?)
    else {
        return None;
    };
    validate_run_id(&id).ok().map(|()| id)
}

fn session_id_from_name(session: &Path) -> Option<String> {
    let stem = session.file_stem()?.to_str()?;
    let id = stem.rsplit('_').next()?;
    validate_run_id(id).ok().map(|()| id.to_owned())
}

/// The environment variable that overrides the managed root.
pub const ROOT_ENV: &str = "HERD_WORKTREE_ROOT";

/// The managed root: `$HERD_WORKTREE_ROOT`, else `$HOME/.herdr/worktrees`; refused when another
/// user owns it or its group or others may write to it (whoever can write there can swap a
/// checkout, or plant a symlink out of the root).
pub fn managed_root() -> Result<PathBuf, Error> {
    let root = configured_root()?;
    herd_core::sidecar::check_private_root(&root)
        .map_err(|e| Error::from(e).with_field(ROOT_ENV))?;
    Ok(root)
}

fn configured_root() -> Result<PathBuf, Error> {
    if let Some(root) = std::env::var_os(ROOT_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(root));
    }
    let home = std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .ok_or_else(|| {
            Error::new(
                ErrorCode::Unavailable,
                format!("no managed root: set {ROOT_ENV} or HOME"),
            )
        })?;
    Ok(PathBuf::from(home).join(".herdr").join("worktrees"))
}

/// The directory of the run records and every per-run file, under the artifacts directory.
pub const RUNS_DIR: &str = "runs";

/// The run record is `runs/<run-id>.<RECORD>`; every other per-run file has a longer suffix.
const RECORD: &str = "json";

/// A delivered result is `runs/<stem>.<RESULT>`, the stem a run's id or one of its tasks'.
const RESULT: &str = "result.json";
/// Where an unreadable result is set aside: `runs/<stem>.<UNREADABLE_RESULT>`.
pub const UNREADABLE_RESULT: &str = "result.unreadable.json";

/// The per-run files of `runs/` that are not one of [`crate::run_file`]'s versioned documents
/// (the record, its events and result, markers, locks, a request as given, an exec child's own
/// files): each `runs/<run-id>.<suffix>`, with its accessor on [`Artifacts`] and its name in
/// [`RUN_FILES`].
macro_rules! run_files {
    ($($(#[$doc:meta])* $key:ident: $name:ident => $suffix:expr,)*) => {
        impl Artifacts {
            $($(#[$doc])* pub fn $name(&self, run_id: &str) -> PathBuf {
                self.run_file(run_id, $suffix)
            })*
        }

        /// These per-run files by name: `(name, suffix)`, the file being `runs/<run-id>.<suffix>`.
        /// [`crate::run_file::run_file_names`] adds the versioned ones.
        pub const RUN_FILES: &[(&str, &str)] = &[$((stringify!($key), $suffix),)*];
    };
}

run_files! {
    /// The run record (herd).
    record: run_record => RECORD,
    /// Its transitions, JSON Lines (herd).
    events: run_events => "events.jsonl",
    /// Its delivered result (herd-watch).
    result: run_result => RESULT,
    /// A result no reader could read (past its bound, or malformed), set aside by the watcher
    /// that settled the run failed in its place (a task's: `<run-id>.task-<task>.<this>`).
    unreadable_result: unreadable_result => UNREADABLE_RESULT,
    /// The identity of the herd-launch process that claimed the run (in the `.process.json`
    /// format), so a watcher can prove a launch that never finished has lost its launcher.
    launcher: launcher => "launcher.json",
    /// The lock every steering writer takes.
    steer_lock: steer_lock => "steer.lock",
    /// The lock a reader of the run's usage takes while it advances the cursor.
    usage_lock: usage_lock => "usage.lock",
    /// The result was delivered (exactly once).
    delivered: delivered => "delivered",
    /// The run's line was appended to `outcomes.jsonl`.
    ledgered: ledgered => "ledgered",
    /// The launch request as given, for a model fallback's launch.
    launch_request: launch_request => "request.json",
    /// An exec child's prompt.
    exec_prompt: exec_prompt => "prompt.md",
    /// The session file of an exec child, which has no Pi session.
    exec_session: exec_session => "session.jsonl",
    /// The runner's exit status, written by the launch script.
    runner_exit: runner_exit => "runner-exit.json",
    /// The identity of the launch script's shell on the process surface.
    leader: leader => "leader.json",
    /// The runs this run launched, one run id a line (herd-launch, [`crate::run::link_child`]).
    children: children => "children",
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inbox_file_is_known_by_its_session_and_twelve_digits_claimed_or_not() {
        let files = SessionFiles::new(PathBuf::from("/s/run.jsonl"));
        let seq = |name: &str| files.inbox_seq(std::ffi::OsStr::new(name));
        let name = files.inbox(42);
        assert_eq!(files.inbox_seq(name.file_name().unwrap()), Some(42));
        assert_eq!(
            seq("run.jsonl.task-inbox.000000000007.json.consuming"),
            Some(7)
        );
        assert_eq!(
            seq("run.jsonl.task-inbox.000000000008.json.invalid"),
            Some(8)
        );
        // Another session's inbox, a session whose name starts alike, and short digits.
        assert_eq!(seq("other.jsonl.task-inbox.000000000001.json"), None);
        assert_eq!(seq("run.jsonl2.task-inbox.000000000001.json"), None);
        assert_eq!(seq("run.jsonl.task-inbox.12.json"), None);
        assert_eq!(seq("run.jsonl.tasks"), None);
    }

    #[test]
    fn parent_session_derives_artifacts_from_header_then_name() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir
            .path()
            .join("2026-11-30T10-00-00-000Z_1234abcd-0000.jsonl");
        std::fs::write(
            &session,
            "{\"type\":\"session\",\"version\":3,\"id\":\"uuid-1\"}\n",
        )
        .unwrap();
        let art = Artifacts::for_parent_session(&session).unwrap();
        assert_eq!(art.root(), dir.path().join("artifacts/uuid-1"));
        std::fs::write(&session, "not json\n").unwrap();
        let art = Artifacts::for_parent_session(&session).unwrap();
        assert_eq!(art.root(), dir.path().join("artifacts/1234abcd-0000"));
    }

    #[test]
    fn resolved_directories_are_absolute() {
        let art = Artifacts::resolve(Some(Path::new("rel/art")), None).unwrap();
        assert!(art.root().is_absolute());
        assert!(art.root().ends_with("rel/art"));
    }

    #[test]
    fn session_files_sit_beside_the_session() {
        let files = SessionFiles::new("/s/a.jsonl");
        assert_eq!(files.exit(), Path::new("/s/a.jsonl.exit"));
        assert_eq!(files.process(), Path::new("/s/a.jsonl.process.json"));
        assert_eq!(
            files.inbox(7),
            Path::new("/s/a.jsonl.task-inbox.000000000007.json")
        );
    }

    #[test]
    fn run_ids_reject_path_tricks() {
        for bad in ["", "../x", "a/b", "a.b", &"x".repeat(65)] {
            assert!(validate_run_id(bad).is_err(), "{bad:?}");
        }
        validate_run_id("ab12-cd_3").unwrap();
    }

    #[test]
    fn run_ids_lists_only_records() {
        let dir = tempfile::tempdir().unwrap();
        let art = Artifacts::new(dir.path());
        assert!(art.run_ids().unwrap().is_empty());
        std::fs::create_dir_all(art.runs_dir()).unwrap();
        for name in [
            "b.json",
            "a.json",
            "a.events.jsonl",
            "a.result.json",
            ".tmp.json",
        ] {
            std::fs::write(art.runs_dir().join(name), "{}").unwrap();
        }
        assert_eq!(art.run_ids().unwrap(), ["a", "b"]);
    }

    #[test]
    fn task_results_are_the_result_files_of_a_runs_tasks() {
        let dir = tempfile::tempdir().unwrap();
        let art = Artifacts::new(dir.path());
        assert!(art.task_results("a").is_empty());
        std::fs::create_dir_all(art.runs_dir()).unwrap();
        for name in [
            "a.json",
            "a.result.json",
            "a.task-t2.result.json",
            "a.task-t1.result.json",
            "a.task-t1.delivered",
            "ab.task-t3.result.json",
        ] {
            std::fs::write(art.runs_dir().join(name), "{}").unwrap();
        }
        assert_eq!(art.task_results("a"), ["t1", "t2"]);
        assert_eq!(
            art.run_result(&crate::result::stem("a", Some("t1"))),
            art.runs_dir().join("a.task-t1.result.json")
        );
    }

    #[test]
    fn safe_name_matches_pi() {
        assert_eq!(safe_name("Scout: Auth  DB!", "subagent"), "scout-auth-db");
        assert_eq!(safe_name("--", "subagent"), "subagent");
    }
}
