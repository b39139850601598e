//! The herdr surface against the recorded-reply double.
//!
//! The replies are the recordings of a real Herdr (herd-herdr's fixtures), with the recorded
//! repository and checkout paths replaced by this sandbox's and the recorded `--base main`
//! by the exact commit herd passes. The double answers only the exact command lines written
//! here, so every test also checks the argv herd sends.

#![expect(
    clippy::unwrap_used,
    reason = "fixture helpers fail the test loudly, like the tests themselves"
)]

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use herd_core::ErrorCode;
use herd_herdr::Herdr;
use herd_herdr::double::RECORDINGS_ENV;
use herd_protocol::worktree::manifest::{Manifest, State};
use herd_protocol::worktree::{Surface, WorktreeCreate};
use herd_worktree::create::{CreateEnv, CreateRequest, create};

use crate::World;

const DOUBLE: &str = env!("CARGO_BIN_EXE_herd-worktree-herdr-double");

/// Recorded replies adapted to one sandbox.
struct Replies {
    dir: PathBuf,
    repo: PathBuf,
    checkout: PathBuf,
    managed: PathBuf,
    rows: Vec<String>,
}

impl Replies {
    fn new(w: &World, repo: &Path) -> Replies {
        let dir = w.sb.path().join("recordings");
        std::fs::create_dir_all(&dir).unwrap();
        Replies {
            dir,
            repo: repo.to_path_buf(),
            checkout: w.managed_root().join("repo/feat-y"),
            managed: w.managed_root().join("repo"),
            rows: Vec::new(),
        }
    }

    /// The recorded output of fixture `name` (everything after its command line).
    fn recorded(name: &str) -> String {
        let file = herd_herdr::recording::fixture_dir().join(format!("{name}.txt"));
        let text = std::fs::read_to_string(&file).unwrap();
        text.split_once('\n')
            .map(|(_, body)| body.to_owned())
            .unwrap_or_default()
    }

    /// Replaces the recorded paths with the sandbox's.
    fn localize(&self, text: &str) -> String {
        text.replace("/home/dev/src/wt-y", self.checkout.to_str().unwrap())
            .replace(
                "/home/dev/.herdr/worktrees/repo",
                self.managed.to_str().unwrap(),
            )
            .replace("/home/dev/src/repo", self.repo.to_str().unwrap())
    }

    /// Adds a recording answering `args` with `body` on `stream` and exit `exit`.
    fn add(&mut self, name: &str, exit: i32, stream: &str, args: &str, body: &str) {
        let file = format!("{name}.txt");
        std::fs::write(self.dir.join(&file), format!("herdr {args}\n{body}")).unwrap();
        self.rows
            .push(format!("| {file} | {exit} | {stream} | `herdr {args}` |"));
        let readme = format!(
            "# adapted recordings\n\n| file | exit | stream | command |\n|---|---|---|---|\n{}\n",
            self.rows.join("\n")
        );
        std::fs::write(self.dir.join("README.md"), readme).unwrap();
    }

    /// `worktree create` of feat/y from the repository at `base`, as recording 055 answered it.
    fn create_args(&self, base: &str) -> String {
        format!(
            "worktree create --cwd {} --branch feat/y --base {base} --path {} --label wt-y --no-focus",
            self.repo.display(),
            self.checkout.display()
        )
    }

    fn add_create(&mut self, base: &str) {
        let body = self.localize(&Replies::recorded("055-worktree-create-path"));
        let args = self.create_args(base);
        self.add("055-worktree-create-path", 0, "stdout", &args, &body);
    }

    /// The list Herdr gave after creating feat/y (056), asked by `--cwd`.
    fn add_list_after(&mut self) {
        let body = self.localize(&Replies::recorded("056-worktree-list-after"));
        let args = format!("worktree list --cwd {}", self.repo.display());
        self.add("056-worktree-list-after", 0, "stdout", &args, &body);
    }

    /// The pane list of the new workspace w4: its root pane as recording 055 reported it.
    fn add_panes_of_w4(&mut self) {
        let created: serde_json::Value =
            serde_json::from_str(&self.localize(&Replies::recorded("055-worktree-create-path")))
                .unwrap();
        let body = serde_json::json!({
            "id": "cli:pane:list",
            "result": {"type": "pane_list", "panes": [created["result"]["root_pane"].clone()]},
        });
        self.add(
            "013-pane-list-workspace",
            0,
            "stdout",
            "pane list --workspace w4",
            &format!("{body}\n"),
        );
    }

    /// A `herdr` that injects `fault` into `worktree create` only, then replays.
    fn herdr(&self, w: &World, fault: Option<&str>) -> Herdr {
        let script = w.sb.path().join("fakebin/herdr");
        std::fs::create_dir_all(script.parent().unwrap()).unwrap();
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\n\
                 if [ \"$1\" = worktree ] && [ \"$2\" = create ] && [ -n \"$CREATE_FAULT\" ]; then\n\
                 HERDR_DOUBLE_FAULT=\"$CREATE_FAULT\"; export HERDR_DOUBLE_FAULT\n\
                 fi\n\
                 exec {DOUBLE} \"$@\"\n"
            ),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        Herdr::new(script)
            .with_env(RECORDINGS_ENV, &self.dir)
            .with_env("CREATE_FAULT", fault.unwrap_or_default())
    }
}

fn request() -> impl Fn(&Path) -> CreateRequest {
    |repo| CreateRequest {
        source_cwd: repo.to_path_buf(),
        branch: "feat/y".into(),
        base: None,
        run_id: "r1".into(),
        surface: Surface::Herdr,
        label: Some("wt-y".into()),
    }
}

fn env(w: &World, herdr: Herdr) -> CreateEnv {
    CreateEnv {
        git: w.sb.git_handle(),
        herdr,
        managed_root: w.managed_root(),
    }
}

#[test]
fn a_complete_reply_provisions_workspace_and_pane() {
    let w = World::new();
    let repo = w.sb.repo("repo");
    let base = w.sb.head(&repo);
    let mut replies = Replies::new(&w, &repo);
    replies.add_create(&base);
    // The snapshots around the creation: the source repository already had its workspace.
    replies.add_list_after();
    let herdr = replies.herdr(&w, None);

    let created = create(&w.artifacts(), &request()(&repo), &env(&w, herdr)).unwrap();
    assert_eq!(created.path, replies.checkout);
    assert_eq!(created.workspace_id.as_deref(), Some("w4"));
    assert_eq!(created.pane_id.as_deref(), Some("w4:p1"));
    assert_eq!(created.tab_id.as_deref(), Some("w4:t1"));
    assert!(created.diagnostics.is_empty(), "{:?}", created.diagnostics);
    let m = Manifest::load(&w.artifacts(), "r1").unwrap();
    assert_eq!(m.state, State::Provisioned);
    assert_eq!(m.workspace_id.as_deref(), Some("w4"));
    assert_eq!(m.pane_id.as_deref(), Some("w4:p1"));
    assert_eq!(m.surface.as_deref(), Some("herdr"));
    assert_eq!(m.name.as_deref(), Some("wt-y"));
    assert_eq!(m.base_sha.as_deref(), Some(base.as_str()));
    assert_eq!(m.opened_source_workspace, None, "{m:#?}");
}

#[test]
fn an_incomplete_reply_is_recovered_through_worktree_list_and_pane_list() {
    for fault in [
        "omit:result.root_pane",
        "omit:result.workspace",
        "truncate:120",
    ] {
        let w = World::new();
        let repo = w.sb.repo("repo");
        let base = w.sb.head(&repo);
        let mut replies = Replies::new(&w, &repo);
        replies.add_create(&base);
        replies.add_list_after();
        replies.add_panes_of_w4();
        let herdr = replies.herdr(&w, Some(fault));
        let created = create(&w.artifacts(), &request()(&repo), &env(&w, herdr))
            .unwrap_or_else(|e| panic!("{fault}: {e}"));
        assert_eq!(created.workspace_id.as_deref(), Some("w4"), "{fault}");
        assert_eq!(created.pane_id.as_deref(), Some("w4:p1"), "{fault}");
        assert_eq!(created.tab_id.as_deref(), Some("w4:t1"), "{fault}");
        assert_eq!(created.path, replies.checkout, "{fault}");
        assert!(
            created.diagnostics.iter().any(|d| d.contains("recovered")),
            "{fault}: {:?}",
            created.diagnostics
        );
        let m = Manifest::load(&w.artifacts(), "r1").unwrap();
        assert_eq!(m.state, State::Provisioned, "{fault}");
        assert_eq!(m.diagnostics, created.diagnostics);
    }
}

#[test]
fn an_inconclusive_recovery_is_uncertain_and_keeps_what_was_seen() {
    let w = World::new();
    let repo = w.sb.repo("repo");
    let base = w.sb.head(&repo);
    let mut replies = Replies::new(&w, &repo);
    replies.add_create(&base);
    // Herdr's list does not show the new branch (the list before creation, 051).
    let body = replies.localize(&Replies::recorded(
        "051-worktree-list-no-workspace-for-repo",
    ));
    let args = format!("worktree list --cwd {}", repo.display());
    replies.add(
        "051-worktree-list-no-workspace-for-repo",
        0,
        "stdout",
        &args,
        &body,
    );
    let herdr = replies.herdr(&w, Some("omit:result.root_pane"));

    let err = create(&w.artifacts(), &request()(&repo), &env(&w, herdr)).unwrap_err();
    assert_eq!(err.code, ErrorCode::Uncertain);
    assert_eq!(err.exit_code(), 3);
    assert!(err.message.contains("may hold a checkout"), "{err}");
    let m = Manifest::load(&w.artifacts(), "r1").unwrap();
    assert_eq!(m.state, State::Failed);
    // The parts the reply did name are kept for whoever recovers by hand.
    assert_eq!(m.workspace_id.as_deref(), Some("w4"));
    assert_eq!(m.tab_id.as_deref(), Some("w4:t1"));
    assert_eq!(m.pane_id, None);
    assert_eq!(m.path.as_deref(), Some(replies.checkout.as_path()));
    assert!(
        m.error
            .as_deref()
            .unwrap()
            .contains("recovery could not identify")
    );
}

#[test]
fn a_herdr_refusal_fails_the_manifest() {
    let w = World::new();
    let repo = w.sb.repo("repo");
    let base = w.sb.head(&repo);
    let mut replies = Replies::new(&w, &repo);
    let body = Replies::recorded("064-worktree-create-not-git");
    let args = replies.create_args(&base);
    replies.add("064-worktree-create-not-git", 1, "+stderr", &args, &body);
    let herdr = replies.herdr(&w, None);
    let err = create(&w.artifacts(), &request()(&repo), &env(&w, herdr)).unwrap_err();
    assert_ne!(err.code, ErrorCode::Uncertain);
    assert!(err.message.contains("not_git_worktree"), "{err}");
    let m = Manifest::load(&w.artifacts(), "r1").unwrap();
    assert_eq!(m.state, State::Failed);
    assert_eq!(m.workspace_id, None);
}

#[test]
fn the_binary_picks_herdr_inside_herdr_and_prints_its_ids() {
    let w = World::new();
    let repo = w.sb.repo("repo");
    let base = w.sb.head(&repo);
    let mut replies = Replies::new(&w, &repo);
    replies.add_create(&base);
    let script = replies.herdr(&w, None);
    let extra: Vec<(OsString, OsString)> = vec![
        ("HERDR_ENV".into(), "1".into()),
        (herd_herdr::BIN_ENV.into(), script.program().to_owned()),
        (RECORDINGS_ENV.into(), replies.dir.clone().into_os_string()),
    ];
    let run = w.run_with_env(
        &[
            "create",
            "--cwd",
            repo.to_str().unwrap(),
            "--branch",
            "feat/y",
            "--run-id",
            "r1",
            "--label",
            "wt-y",
            "--json",
        ],
        &extra,
    );
    assert_eq!(run.code, 0, "{run:?}");
    let doc = run.doc::<WorktreeCreate>();
    assert_eq!(doc.surface, Surface::Herdr);
    assert_eq!(doc.workspace_id.as_deref(), Some("w4"));
    assert_eq!(doc.pane_id.as_deref(), Some("w4:p1"));
    assert_eq!(doc.tab_id.as_deref(), Some("w4:t1"));
    assert_eq!(doc.path, replies.checkout.to_str().unwrap());
    let run = w.run_with_env(&["show", "--run-id", "r1"], &extra);
    assert!(run.stdout.contains("Workspace: w4"), "{run:?}");
}
