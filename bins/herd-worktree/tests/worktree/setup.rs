//! Setup of a new worktree: ignored files copied, dependency trees linked, the lockfile gate,
//! setup and background commands, the port, trust, and hostile descriptions refused.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_protocol::worktree::manifest::{SetupKind, SetupRecord, State};
use herd_protocol::worktree::{Manifest, TrustApproved, WorktreeCreate};
use sha2::Digest as _;

use crate::{Run, World};

pub(crate) trait All {
    fn all(&self) -> String;
}

impl All for Run {
    /// stdout and stderr: `--json` puts an error on stdout.
    fn all(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

/// A repository with `.gitignore` committed; `files` written after the commit (ignored ones).
pub(crate) fn repo(
    w: &World,
    gitignore: &str,
    committed: &[(&str, &str)],
    after: &[(&str, &str)],
) -> PathBuf {
    named_repo(w, "repo", gitignore, committed, after)
}

pub(crate) fn named_repo(
    w: &World,
    name: &str,
    gitignore: &str,
    committed: &[(&str, &str)],
    after: &[(&str, &str)],
) -> PathBuf {
    let repo = w.sb.repo(name);
    w.sb.write(&repo, ".gitignore", gitignore);
    for (rel, text) in committed {
        w.sb.write(&repo, rel, text);
    }
    w.sb.commit_all(&repo, "setup");
    for (rel, text) in after {
        w.sb.write(&repo, rel, text);
    }
    repo
}

pub(crate) fn create(
    w: &World,
    repo: &Path,
    branch: &str,
    run_id: &str,
    extra: &[(&str, &str)],
) -> Run {
    let extra: Vec<(OsString, OsString)> = extra
        .iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect();
    w.run_with_env(
        &[
            "create",
            "--cwd",
            repo.to_str().expect("a UTF-8 path"),
            "--branch",
            branch,
            "--run-id",
            run_id,
            "--surface",
            "git",
            "--json",
        ],
        &extra,
    )
}

pub(crate) fn checkout(w: &World, branch: &str) -> PathBuf {
    w.managed_root().join("repo").join(branch)
}

/// The setup record of `run_id`'s manifest, with the manifest for messages.
pub(crate) fn setup_of(w: &World, run_id: &str) -> (SetupRecord, Manifest) {
    let m = w.manifest(run_id);
    let setup = m
        .setup
        .clone()
        .unwrap_or_else(|| panic!("the manifest of {run_id} has a setup record: {m:?}"));
    (setup, m)
}

/// The port setup gave `run_id`.
pub(crate) fn port_of(w: &World, run_id: &str) -> u16 {
    let (setup, m) = setup_of(w, run_id);
    setup
        .port
        .unwrap_or_else(|| panic!("{run_id} has a port: {m:?}"))
}

/// Whether one of the diagnostics `create --json` printed says `text`.
pub(crate) fn says(run: &Run, text: &str) -> bool {
    run.doc::<WorktreeCreate>()
        .diagnostics
        .iter()
        .any(|d| d.contains(text))
}

pub(crate) fn trusted() -> [(&'static str, &'static str); 1] {
    [("HERD_PROJECT_TRUST", "trusted")]
}

pub(crate) fn approve(w: &World, repo: &Path) -> Run {
    let run = w.run(
        &[
            "trust",
            "--yes",
            "--cwd",
            repo.to_str().expect("a UTF-8 path"),
        ],
        None,
    );
    assert_eq!(run.code, 0, "{run:?}");
    run
}

/// Nothing was created: no manifest, no checkout, no branch.
pub(crate) fn nothing_created(w: &World, repo: &Path, branch: &str, run_id: &str) {
    assert!(
        !w.sb
            .path()
            .join(format!("artifacts/worktree-runs/{run_id}.json"))
            .exists()
    );
    assert!(checkout(w, branch).symlink_metadata().is_err());
    let branches = w.sb.git(repo, ["branch", "--list", branch]);
    assert!(branches.trim().is_empty(), "{branches}");
}

#[test]
fn copy_and_worktreeinclude_bring_only_ignored_files() {
    let w = World::new();
    let repo = repo(
        &w,
        ".env*\nconfig/local.json\nsecrets/\n*.log\n",
        &[
            (
                ".herd/worktree.toml",
                "copy = [\".env*\", \"config/local.json\", \"*.txt\"]\n",
            ),
            (".worktreeinclude", "# Claude Code's file\nsecrets/\n"),
        ],
        &[
            (".env", "A=1\n"),
            (".env.local", "B=2\n"),
            ("config/local.json", "{}\n"),
            ("secrets/key", "k\n"),
            ("untracked.txt", "not ignored\n"),
            ("build.log", "ignored but not asked for\n"),
        ],
    );
    let run = create(&w, &repo, "feat", "r1", &[]);
    assert_eq!(run.code, 0, "{run:?}");
    let wt = checkout(&w, "feat");
    assert_eq!(std::fs::read_to_string(wt.join(".env")).unwrap(), "A=1\n");
    assert_eq!(
        std::fs::read_to_string(wt.join(".env.local")).unwrap(),
        "B=2\n"
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("config/local.json")).unwrap(),
        "{}\n"
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("secrets/key")).unwrap(),
        "k\n"
    );
    assert!(
        !wt.join("untracked.txt").exists(),
        "only ignored files are copied"
    );
    assert!(
        !wt.join("build.log").exists(),
        "only files asked for are copied"
    );
    // A copy, not a link.
    let (a, b) = (
        std::fs::metadata(repo.join(".env")).unwrap(),
        std::fs::metadata(wt.join(".env")).unwrap(),
    );
    assert_ne!(a.ino(), b.ino());
    let (setup, m) = setup_of(&w, "r1");
    let entries: Vec<(&str, SetupKind)> = setup
        .entries
        .iter()
        .map(|e| (e.path.as_str(), e.kind))
        .collect();
    // `config/` holds only ignored files, so it is brought over as one ignored directory.
    for path in [".env", ".env.local", "config", "secrets"] {
        assert!(
            entries.contains(&(path, SetupKind::Copy)),
            "{path}: {entries:?}"
        );
    }
    assert!(setup.port.is_some(), "{m:?}");
}

#[test]
fn unknown_key_is_an_error_naming_the_file_and_key_and_nothing_is_created() {
    let w = World::new();
    let repo = repo(
        &w,
        "",
        &[(".herd/worktree.toml", "copy = []\npost_create = [\"x\"]\n")],
        &[],
    );
    let run = create(&w, &repo, "feat", "r1", &[]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.all().contains("worktree.toml"), "{run:?}");
    assert!(run.all().contains("post_create"), "{run:?}");
    nothing_created(&w, &repo, "feat", "r1");
}

#[test]
fn hostile_project_files_are_refused_with_nothing_created() {
    let cases: &[(&str, &str)] = &[
        ("copy = [\"../outside\"]\n", ".."),
        ("copy = [\"/etc/passwd\"]\n", "absolute"),
        ("copy = [\"**/../../*\"]\n", ".."),
        (
            "[[link]]\npath = \"/etc\"\nstrategy = \"symlink\"\n",
            "absolute",
        ),
        ("[[link]]\npath = \"../sibling\"\n", ".."),
        (
            "[[link]]\npath = \"root\"\nstrategy = \"symlink\"\n",
            "outside the repository",
        ),
        ("copy = [\"root\"]\n", "outside the repository"),
        ("[[link]]\npath = \"deps\"\nwhen = \"../lock\"\n", ".."),
    ];
    for (i, (toml, says)) in cases.iter().enumerate() {
        let w = World::new();
        let repo = repo(&w, "root\ndeps/\n", &[(".herd/worktree.toml", toml)], &[]);
        std::os::unix::fs::symlink("/", repo.join("root")).unwrap();
        // Hostile links are refused whether or not the parent trusts the project.
        let run = create(&w, &repo, "feat", &format!("r{i}"), &trusted());
        assert_eq!(run.code, 2, "{toml}: {run:?}");
        assert!(run.all().contains(says), "{toml}: {run:?}");
        nothing_created(&w, &repo, "feat", &format!("r{i}"));
    }
}

#[test]
fn worktreeinclude_climbing_out_is_refused() {
    let w = World::new();
    let repo = repo(&w, ".env\n", &[(".worktreeinclude", "../../etc/*\n")], &[]);
    let run = create(&w, &repo, "feat", "r1", &[]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.all().contains(".worktreeinclude"), "{run:?}");
    nothing_created(&w, &repo, "feat", "r1");
}

/// A generated dependency tree of `n` files below `node_modules`.
fn deps(repo: &Path, n: usize) {
    for i in 0..n {
        let dir = repo.join(format!("node_modules/pkg{}", i % 10));
        std::fs::create_dir_all(&dir).expect("a directory");
        std::fs::write(
            dir.join(format!("f{i}.js")),
            format!("module.exports = {i};\n"),
        )
        .expect("a file");
    }
    std::os::unix::fs::symlink("pkg0", repo.join("node_modules/alias")).expect("a symlink");
}

fn link_repo(w: &World, strategy: &str) -> PathBuf {
    let toml = format!(
        "[[link]]\npath = \"node_modules\"\nstrategy = \"{strategy}\"\nwhen = \"package-lock.json\"\ninstall = \"mkdir -p node_modules && echo installed > node_modules/INSTALLED\"\n"
    );
    let repo = repo(
        w,
        "node_modules/\n",
        &[
            (".herd/worktree.toml", &toml),
            ("package-lock.json", "{\"v\":1}\n"),
        ],
        &[],
    );
    deps(&repo, 50);
    approve(w, &repo);
    repo
}

#[test]
fn hardlink_tree_shares_inodes_when_the_lockfile_matches() {
    let w = World::new();
    let repo = link_repo(&w, "hardlink");
    let run = create(&w, &repo, "feat", "r1", &trusted());
    assert_eq!(run.code, 0, "{run:?}");
    let wt = checkout(&w, "feat");
    let rel = "node_modules/pkg3/f13.js";
    let (a, b) = (
        std::fs::metadata(repo.join(rel)).unwrap(),
        std::fs::metadata(wt.join(rel)).unwrap(),
    );
    assert_eq!(a.ino(), b.ino(), "a hard link");
    assert!(
        std::fs::symlink_metadata(wt.join("node_modules"))
            .unwrap()
            .is_dir()
    );
    assert_eq!(
        std::fs::read_link(wt.join("node_modules/alias")).unwrap(),
        Path::new("pkg0")
    );
    assert!(!wt.join("node_modules/INSTALLED").exists());
    let (setup, m) = setup_of(&w, "r1");
    assert_eq!(setup.entries[0].kind, SetupKind::Hardlink, "{m:?}");
    assert_eq!(setup.entries[0].path, "node_modules", "{m:?}");
}

#[test]
fn a_differing_lockfile_runs_install_instead_of_linking() {
    let w = World::new();
    let repo = link_repo(&w, "hardlink");
    // The source's lockfile changed after the commit the worktree starts at.
    w.sb.write(&repo, "package-lock.json", "{\"v\":2}\n");
    let run = create(&w, &repo, "feat", "r1", &trusted());
    assert_eq!(run.code, 0, "{run:?}");
    let wt = checkout(&w, "feat");
    assert_eq!(
        std::fs::read_to_string(wt.join("node_modules/INSTALLED")).unwrap(),
        "installed\n"
    );
    assert!(!wt.join("node_modules/pkg3").exists(), "nothing linked");
    let (setup, m) = setup_of(&w, "r1");
    assert_eq!(setup.entries[0].kind, SetupKind::Install, "{m:?}");
}

#[test]
fn symlink_copy_and_reflink_strategies() {
    for (strategy, kind) in [
        ("symlink", Some(SetupKind::Symlink)),
        ("copy", Some(SetupKind::Copy)),
        ("reflink", None),
    ] {
        let w = World::new();
        let repo = link_repo(&w, strategy);
        let run = create(&w, &repo, "feat", "r1", &trusted());
        assert_eq!(run.code, 0, "{strategy}: {run:?}");
        let wt = checkout(&w, "feat");
        let meta = std::fs::symlink_metadata(wt.join("node_modules")).unwrap();
        assert_eq!(
            meta.file_type().is_symlink(),
            strategy == "symlink",
            "{strategy}"
        );
        assert_eq!(
            std::fs::read_to_string(wt.join("node_modules/pkg3/f13.js")).unwrap(),
            "module.exports = 13;\n"
        );
        let (setup, m) = setup_of(&w, "r1");
        let got = setup.entries[0].kind;
        if strategy == "reflink" {
            // Where the filesystem has no reflink, a plain copy, recorded as one.
            assert!(got == SetupKind::Reflink || got == SetupKind::Copy, "{m:?}");
        } else {
            assert_eq!(Some(got), kind, "{m:?}");
        }
        if strategy != "symlink" {
            let a = std::fs::metadata(repo.join("node_modules/pkg3/f13.js")).unwrap();
            let b = std::fs::metadata(wt.join("node_modules/pkg3/f13.js")).unwrap();
            assert_ne!(a.ino(), b.ino(), "{strategy}: not a hard link");
        }
    }
}

pub(crate) fn setup_repo(w: &World, toml: &str) -> PathBuf {
    repo(w, "", &[(".herd/worktree.toml", toml)], &[])
}

#[test]
fn project_commands_need_trust_and_approval_and_a_change_needs_a_new_one() {
    let w = World::new();
    let toml = "setup = [\"echo \\\"$HERD_RUN_ID $HERD_BRANCH $HERD_PORT\\\" > ran.txt; echo \\\"$HERD_WORKTREE_PATH|$HERD_SOURCE_ROOT\\\" >> ran.txt\"]\n";
    let repo = setup_repo(&w, toml);

    // Not trusted by the parent: skipped, said how to approve, the worktree is created.
    let run = create(&w, &repo, "a", "ra", &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!checkout(&w, "a").join("ran.txt").exists());
    assert!(says(&run, "1 setup command"), "{run}");
    assert!(says(&run, "herd-worktree trust --cwd"), "{run}");

    // Trusted by the parent, not approved by the user: skipped.
    let run = create(&w, &repo, "b", "rb", &trusted());
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!checkout(&w, "b").join("ran.txt").exists());
    assert!(says(&run, "not approved"), "{run:?}");

    // Approved: runs, with its variables.
    let shown = approve(&w, &repo);
    assert!(
        shown.stdout.contains("HERD_RUN_ID"),
        "the file is shown: {shown:?}"
    );
    let run = create(&w, &repo, "c", "rc", &trusted());
    assert_eq!(run.code, 0, "{run:?}");
    let wt = checkout(&w, "c");
    let ran = std::fs::read_to_string(wt.join("ran.txt")).unwrap();
    let port = port_of(&w, "rc");
    let canonical = std::fs::canonicalize(&repo).unwrap();
    assert_eq!(
        ran,
        format!("rc c {port}\n{}|{}\n", wt.display(), canonical.display()),
        "{ran}"
    );

    // Changed (and committed): asked again.
    w.sb.write(&repo, ".herd/worktree.toml", &format!("{toml}# changed\n"));
    w.sb.commit_all(&repo, "change");
    let run = create(&w, &repo, "d", "rd", &trusted());
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!checkout(&w, "d").join("ran.txt").exists());
    assert!(says(&run, "it changed since you approved it"), "{run:?}");

    // Approved again, as a document: the file as it is now, and where its approval is.
    let run = w.run(
        &[
            "trust",
            "--yes",
            "--json",
            "--cwd",
            repo.to_str().expect("a UTF-8 path"),
        ],
        None,
    );
    assert_eq!(run.code, 0, "{run:?}");
    let approved = run.doc::<TrustApproved>();
    let file = std::fs::canonicalize(&repo)
        .unwrap()
        .join(".herd/worktree.toml");
    assert_eq!(Path::new(&approved.file), file, "{approved:?}");
    let digest = sha2::Sha256::digest(std::fs::read(&file).unwrap());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(approved.sha256, hex);
    assert_eq!(
        std::fs::read_to_string(&approved.approval).unwrap().trim(),
        hex
    );
    let run = create(&w, &repo, "e", "re", &trusted());
    assert_eq!(run.code, 0, "{run:?}");
    assert!(checkout(&w, "e").join("ran.txt").exists(), "{run:?}");
}

#[test]
fn the_users_own_file_runs_without_approval() {
    let w = World::new();
    let repo = repo(&w, "", &[], &[]);
    let key_dir = w.sb.home().join(".config/herd/worktrees");
    std::fs::create_dir_all(&key_dir).unwrap();
    let user_file =
        herd_worktree::setup::config::user_file(&w.sb.home().join(".config/herd"), &repo);
    std::fs::write(&user_file, "setup = [\"touch mine.txt\"]\n").unwrap();
    let run = create(&w, &repo, "feat", "r1", &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(checkout(&w, "feat").join("mine.txt").exists());
}

#[test]
fn a_failing_setup_command_fails_with_exit_4_and_the_logs_tail() {
    let w = World::new();
    let repo = setup_repo(
        &w,
        "setup = [\"echo about to fail; echo oops >&2; exit 3\"]\n",
    );
    approve(&w, &repo);
    let run = create(&w, &repo, "feat", "r1", &trusted());
    assert_eq!(run.code, 4, "{run:?}");
    assert!(run.all().contains("exited 3"), "{run:?}");
    assert!(run.all().contains("oops"), "the log's tail: {run:?}");
    assert!(run.all().contains("r1.setup.log"), "{run:?}");
    assert_eq!(w.manifest("r1").state, State::Failed);
    let log = std::fs::read_to_string(w.sb.path().join("artifacts/logs/r1.setup.log")).unwrap();
    assert!(log.contains("about to fail"), "{log}");
}

#[test]
fn a_hanging_setup_command_is_stopped_at_its_budget() {
    let w = World::new();
    let repo = setup_repo(&w, "setup_budget = 1\nsetup = [\"sleep 30\"]\n");
    approve(&w, &repo);
    let started = std::time::Instant::now();
    let run = create(&w, &repo, "feat", "r1", &trusted());
    assert_eq!(run.code, 4, "{run:?}");
    assert!(run.all().contains("timed out"), "{run:?}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_flood_of_output_is_bounded_in_the_log() {
    let w = World::new();
    let repo = setup_repo(
        &w,
        "setup = [\"head -c 20000000 /dev/zero | tr '\\\\0' x; echo; echo last-line\"]\n",
    );
    approve(&w, &repo);
    let run = create(&w, &repo, "feat", "r1", &trusted());
    assert_eq!(run.code, 0, "{run:?}");
    let log = w.sb.path().join("artifacts/logs/r1.setup.log");
    let len = std::fs::metadata(&log).unwrap().len();
    assert!(len < 1024 * 1024, "{len}");
    assert!(std::fs::read_to_string(&log).unwrap().contains("last-line"));
}

#[test]
fn background_commands_start_beside_and_never_delay() {
    let w = World::new();
    let repo = setup_repo(
        &w,
        "background = [\"echo $HERD_PORT > bg.txt; sleep 30\"]\n",
    );
    approve(&w, &repo);
    let started = std::time::Instant::now();
    let run = create(&w, &repo, "feat", "r1", &trusted());
    assert_eq!(run.code, 0, "{run:?}");
    assert!(started.elapsed() < Duration::from_secs(20));
    let wt = checkout(&w, "feat");
    let port = port_of(&w, "r1");
    let got = herd_e2e::wait::wait_for(
        "the background command's file",
        Duration::from_secs(10),
        || {
            std::fs::read_to_string(wt.join("bg.txt"))
                .ok()
                .filter(|s| s.ends_with('\n'))
        },
    );
    assert_eq!(got.trim(), port.to_string());
    let pid = setup_of(&w, "r1").0.background_pids[0];
    // Still running after the creation returned; stop it.
    stop_group(pid);
}

#[test]
fn chatty_background_commands_cannot_grow_their_log_past_the_bound() {
    // Two background commands flood one log at once, far past its bound, then say they are
    // done; the log never holds more than the bound, and keeps the end.
    let w = World::new();
    let flood = |name: &str| {
        format!(
            "i=0; while [ $i -lt 40 ]; do head -c 100000 /dev/zero | tr '\\\\0' {name} | fold -w 99; i=$((i+1)); done; echo {name}-done"
        )
    };
    let repo = setup_repo(
        &w,
        &format!("background = [\"{}\", \"{}\"]\n", flood("a"), flood("b")),
    );
    approve(&w, &repo);
    let run = create(&w, &repo, "feat", "r1", &trusted());
    assert_eq!(run.code, 0, "{run:?}");
    let pids: Vec<u32> = setup_of(&w, "r1").0.background_pids;
    assert_eq!(pids.len(), 2, "{pids:?}");
    let log = w.sb.path().join("artifacts/logs/r1.background.log");
    let cap = herd_worktree::setup::log::BACKGROUND_LOG_CAP;
    let mut most = 0;
    herd_e2e::wait::wait_for(
        "both background commands to finish",
        Duration::from_secs(120),
        || {
            most = most.max(std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0));
            pids.iter()
                .all(|pid| !herd_e2e::proc::process_alive(*pid))
                .then_some(())
        },
    );
    let text = std::fs::read_to_string(&log).unwrap();
    most = most.max(text.len() as u64);
    // 8 MB were written.
    assert!(most <= cap, "the log reached {most} bytes, past {cap}");
    assert!(
        text.starts_with("[herd: "),
        "{}",
        &text[..200.min(text.len())]
    );
    assert!(
        text.ends_with("a-done\n") || text.ends_with("b-done\n"),
        "the end is kept: {:?}",
        &text[text.len().saturating_sub(200)..]
    );
}

/// Stops the background command's process group (it leads its own session).
fn stop_group(pid: u32) {
    assert!(
        herd_e2e::proc::process_alive(pid),
        "still running after the creation"
    );
    herd_e2e::proc::signal_group(pid, 9);
}

#[test]
fn ten_concurrent_creations_get_distinct_ports() {
    // Ten repositories (git itself does not take concurrent `worktree add` in one repository),
    // one artifacts directory: the ports are unique across all of them.
    let w = World::new();
    let repos: Vec<PathBuf> = (0..10)
        .map(|i| {
            named_repo(
                &w,
                &format!("repo{i}"),
                ".env\n",
                &[(".herd/worktree.toml", "copy = [\".env\"]\n")],
                &[(".env", "x\n")],
            )
        })
        .collect();
    let runs: Vec<Run> = std::thread::scope(|s| {
        let handles: Vec<_> = repos
            .iter()
            .enumerate()
            .map(|(i, repo)| {
                let w = &w;
                s.spawn(move || create(w, repo, "feat", &format!("r{i}"), &[]))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut ports = std::collections::BTreeSet::new();
    for (i, run) in runs.iter().enumerate() {
        assert_eq!(run.code, 0, "{run:?}");
        ports.insert(port_of(&w, &format!("r{i}")));
    }
    assert_eq!(ports.len(), 10, "{ports:?}");
}

#[test]
fn a_removed_worktrees_port_is_given_again() {
    let w = World::new();
    let repo = repo(
        &w,
        ".env\n",
        &[(".herd/worktree.toml", "copy = [\".env\"]\n")],
        &[(".env", "x\n")],
    );
    assert_eq!(create(&w, &repo, "a", "ra", &[]).code, 0);
    assert_eq!(create(&w, &repo, "b", "rb", &[]).code, 0);
    let port = |id: &str| port_of(&w, id);
    let (a, b) = (port("ra"), port("rb"));
    assert_ne!(a, b);
    // While ra is live its port is held; once removed, it is free again.
    assert_eq!(create(&w, &repo, "c", "rc", &[]).code, 0);
    assert!(![a, b].contains(&port("rc")));
    Manifest::update(&w.artifacts(), "ra", |m| {
        m.state = State::Removed;
    })
    .expect("marked removed");
    assert_eq!(create(&w, &repo, "d", "rd", &[]).code, 0);
    assert_eq!(port("rd"), a, "the removed worktree's port is released");
}
