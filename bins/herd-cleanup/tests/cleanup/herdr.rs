//! The Herdr paths against the recorded-reply double: open workspaces, idle-shell exemption,
//! busy panes, and removal through Herdr.
//!
//! The replies have the shape of real Herdr's (herd-herdr's fixtures) with this sandbox's
//! paths and real PIDs. The double answers only the exact command lines written here, so every
//! test also checks the argv herd sends; it changes nothing on disk, which is what the removal
//! test relies on: Herdr says "removed" and the checkout is still there.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

use herd_protocol::cleanup::{BlockerCode, Classification, Outcome, Removal, Via};
use serde_json::json;

use crate::{Sleeper, World, codes, row};

const DOUBLE: &str = env!("CARGO_BIN_EXE_herd-cleanup-herdr-double");

struct Replies {
    dir: PathBuf,
    rows: Vec<String>,
}

impl Replies {
    fn new(w: &World) -> Replies {
        let dir = w.sb.path().join("recordings");
        std::fs::create_dir_all(&dir).unwrap();
        Replies {
            dir,
            rows: Vec::new(),
        }
    }

    fn add(&mut self, args: &str, body: &serde_json::Value) {
        let file = format!("{:03}-reply.txt", self.rows.len());
        std::fs::write(self.dir.join(&file), format!("herdr {args}\n{body}\n")).unwrap();
        self.rows
            .push(format!("| {file} | 0 | stdout | `herdr {args}` |"));
        let readme = format!(
            "# recordings of this test\n\n| file | exit | stream | command |\n|---|---|---|---|\n{}\n",
            self.rows.join("\n")
        );
        std::fs::write(self.dir.join("README.md"), readme).unwrap();
    }

    fn worktree_list(&mut self, repo: &Path, rows: &[(&Path, &str, &str)]) {
        let mut worktrees = vec![json!({
            "branch": "main", "is_bare": false, "is_detached": false, "is_linked_worktree": false,
            "is_prunable": false, "label": "repo", "path": repo.to_str().unwrap(),
        })];
        for (path, branch, workspace) in rows {
            worktrees.push(json!({
                "branch": branch, "is_bare": false, "is_detached": false, "is_linked_worktree": true,
                "is_prunable": false, "label": branch, "open_workspace_id": workspace,
                "path": path.to_str().unwrap(),
            }));
        }
        let body = json!({"id": "cli:worktree:list", "result": {
            "source": {"repo_key": format!("{}/.git", repo.display()), "repo_name": "repo",
                       "repo_root": repo.to_str().unwrap(), "source_checkout_path": repo.to_str().unwrap()},
            "type": "worktree_list", "worktrees": worktrees}});
        self.add(&format!("worktree list --cwd {}", repo.display()), &body);
    }

    fn panes(&mut self, workspace: &str, cwd: &Path, shell: u32, foreground: u32) {
        let pane = format!("{workspace}:p1");
        let body = json!({"id": "cli:pane:list", "result": {"type": "pane_list", "panes": [{
            "agent_status": "unknown", "cwd": cwd.to_str().unwrap(), "focused": false,
            "foreground_cwd": cwd.to_str().unwrap(), "pane_id": pane, "revision": 0,
            "tab_id": format!("{workspace}:t1"), "terminal_id": "term_1", "workspace_id": workspace}]}});
        self.add(&format!("pane list --workspace {workspace}"), &body);
        let body = json!({"id": "cli:pane:process_info", "result": {"type": "pane_process_info", "process_info": {
            "foreground_process_group_id": foreground, "foreground_processes": [],
            "pane_id": pane, "shell_pid": shell}}});
        self.add(&format!("pane process-info --pane {pane}"), &body);
    }

    fn remove(&mut self, workspace: &str, path: &Path) {
        let body = json!({"id": "cli:worktree:remove", "result": {"forced": false,
            "path": path.to_str().unwrap(), "type": "worktree_removed", "workspace_id": workspace}});
        self.add(&format!("worktree remove --workspace {workspace}"), &body);
    }
}

/// A real idle `sh` (waiting on its standard input) with its cwd in `dir`.
fn idle_shell(dir: &Path) -> Child {
    #[expect(
        clippy::disallowed_methods,
        reason = "a real shell process the test owns and kills"
    )]
    let child = std::process::Command::new("sh")
        .current_dir(dir)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    child
}

#[test]
fn open_workspaces_exempt_idle_shells_block_busy_panes_and_remove_through_herdr() {
    let w = World::new();
    let repo = w.repo("repo");
    let idle = w.worktree(&repo, "idle", "r-idle");
    let busy = w.worktree(&repo, "busy", "r-busy");
    let posing = w.worktree(&repo, "posing", "r-posing");

    let mut shell = idle_shell(&idle);
    let busy_shell = Sleeper::in_dir(&w.sb.path());
    // A non-shell process reported as a pane's idle shell is never exempt.
    let runtime = Sleeper::in_dir(&posing);

    let mut replies = Replies::new(&w);
    replies.worktree_list(
        &repo,
        &[
            (&idle, "idle", "w3"),
            (&busy, "busy", "w4"),
            (&posing, "posing", "w5"),
        ],
    );
    replies.panes("w3", &idle, shell.id(), shell.id());
    replies.panes("w4", &busy, busy_shell.pid(), busy_shell.pid() + 1);
    replies.panes("w5", &posing, runtime.pid(), runtime.pid());
    replies.remove("w3", &idle);
    let dir = replies.dir.to_str().unwrap().to_owned();
    let env = [
        ("HERDR_ENV", "1"),
        ("HERD_HERDR_BIN", DOUBLE),
        ("HERDR_DOUBLE_RECORDINGS", dir.as_str()),
    ];

    let session = w.session();
    let list = w.list_with(&env);
    let idle_row = &row(&list, &idle).entry;
    assert_eq!(idle_row.workspace.as_deref(), Some("w3"));
    assert_eq!(
        idle_row.classification,
        Classification::Eligible,
        "the idle shell is exempt: {idle_row:#?}"
    );
    let busy_row = &row(&list, &busy).entry;
    assert_eq!(busy_row.classification, Classification::Blocked);
    assert_eq!(
        codes(&busy_row.blockers),
        [BlockerCode::ForegroundProcess],
        "{busy_row:#?}"
    );
    let posing_row = &row(&list, &posing).entry;
    assert_eq!(
        codes(&posing_row.blockers),
        [BlockerCode::ProcessHolder],
        "{posing_row:#?}"
    );

    // Removal by workspace id goes through Herdr, never git: the double removes nothing, so the
    // checkout is still there and the answer is "unknown", not "removed".
    let run = w.cleanup_with(
        &[
            "remove",
            "w3",
            "--json",
            "--session-cwd",
            session.to_str().unwrap(),
        ],
        &env,
    );
    assert_eq!(run.code, 4, "{run:?}");
    let doc = run.doc::<Removal>();
    assert_eq!(doc.removed_via, Some(Via::Herdr));
    assert_eq!(doc.outcome, Outcome::Unknown);
    assert!(doc.blockers[0].message.contains("still there"), "{doc:#?}");
    assert!(idle.exists());
    assert!(
        w.sb.git(&repo, ["worktree", "list", "--porcelain"])
            .contains("idle")
    );

    // Without Herdr's answers nothing is guessed: the entry is unknown.
    let run = w.cleanup_with(
        &["remove", idle.to_str().unwrap(), "--json"],
        &[
            ("HERDR_ENV", "1"),
            ("HERD_HERDR_BIN", DOUBLE),
            ("HERDR_DOUBLE_RECORDINGS", "/nonexistent"),
        ],
    );
    assert_eq!(run.code, 4, "{run:?}");
    assert!(
        codes(&run.doc::<Removal>().blockers).contains(&BlockerCode::HerdrUnknown),
        "{run:?}"
    );

    shell.kill().unwrap();
    shell.wait().unwrap();
}
