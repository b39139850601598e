//! Creating managed worktrees with git: bases, linked sources, refusals.

use herd_core::ErrorCode;
use herd_protocol::worktree::Surface;
use herd_protocol::worktree::manifest::{Manifest, State};
use herd_worktree::create::{CreateRequest, create};

use crate::{World, entries, refusal};

fn request(
    w: &World,
    src: &std::path::Path,
    branch: &str,
    base: Option<&str>,
    run_id: &str,
) -> CreateRequest {
    let _ = w;
    CreateRequest {
        source_cwd: src.to_path_buf(),
        branch: branch.into(),
        base: base.map(str::to_owned),
        run_id: run_id.into(),
        surface: Surface::Git,
        label: None,
    }
}

#[test]
fn default_base_is_the_committed_head_and_dirty_work_is_not_copied() {
    let w = World::new();
    let repo = w.sb.repo("repo");
    let head = w.sb.head(&repo);
    // Uncommitted work in the parent checkout stays there.
    w.sb.write(&repo, "README.md", "uncommitted edit\n");
    w.sb.write(&repo, "scratch.txt", "untracked\n");
    w.sb.write(&repo, "staged.txt", "staged\n");
    w.sb.git(&repo, ["add", "staged.txt"]);

    let created = create(
        &w.artifacts(),
        &request(&w, &repo, "feat/x", None, "r1"),
        &w.create_env(),
    )
    .unwrap();
    let expected = w.managed_root().join("repo").join("feat-x");
    assert_eq!(created.path, expected);
    assert_eq!(created.base_sha, head);
    assert_eq!(created.base_ref, "HEAD");
    assert_eq!(created.principal, repo);
    assert_eq!(w.sb.head(&expected), head);
    assert_eq!(
        w.sb.git(&expected, ["symbolic-ref", "--short", "HEAD"])
            .trim(),
        "feat/x"
    );
    assert_eq!(
        std::fs::read_to_string(expected.join("README.md")).unwrap(),
        "hello\n"
    );
    assert!(!expected.join("scratch.txt").exists());
    assert!(!expected.join("staged.txt").exists());
    assert_eq!(w.sb.git(&expected, ["status", "--porcelain"]), "");

    let m = Manifest::load(&w.artifacts(), "r1").unwrap();
    assert_eq!(m.state, State::Provisioned);
    assert_eq!(m.path.as_deref(), Some(expected.as_path()));
    assert_eq!(m.base_sha.as_deref(), Some(head.as_str()));
    assert_eq!(m.branch.as_deref(), Some("feat/x"));
    assert_eq!(m.name.as_deref(), Some("feat/x"));
    assert_eq!(m.surface.as_deref(), Some("git"));
    assert_eq!(m.workspace_id, None);
    assert_eq!(created.manifest, m);
}

#[test]
fn an_explicit_base_is_resolved_to_an_exact_commit() {
    let w = World::new();
    let repo = w.sb.repo("repo");
    let first = w.sb.head(&repo);
    w.sb.git(&repo, ["tag", "v1"]);
    w.sb.write(&repo, "later.txt", "later\n");
    w.sb.commit_all(&repo, "later");
    let created = create(
        &w.artifacts(),
        &request(&w, &repo, "fix/old", Some("v1"), "r1"),
        &w.create_env(),
    )
    .unwrap();
    assert_eq!(created.base_sha, first);
    assert_eq!(created.base_ref, "v1");
    assert_eq!(w.sb.head(&created.path), first);
    assert!(!created.path.join("later.txt").exists());

    let err = create(
        &w.artifacts(),
        &request(&w, &repo, "fix/none", Some("no-such-tag"), "r2"),
        &w.create_env(),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidRequest);
    assert_eq!(err.field.as_deref(), Some("base"));
    assert!(!w.artifacts().worktree_manifest("r2").exists());
}

#[test]
fn a_linked_source_provisions_from_the_principal_checkout_with_its_own_base() {
    let w = World::new();
    let repo = w.sb.repo("repo");
    let linked = w.sb.path().join("linked");
    w.sb.git(
        &repo,
        [
            "worktree",
            "add",
            "--quiet",
            "-b",
            "side",
            linked.to_str().unwrap(),
        ],
    );
    w.sb.write(&linked, "side.txt", "side\n");
    let side_head = w.sb.commit_all(&linked, "side work");
    assert_ne!(side_head, w.sb.head(&repo));

    let created = create(
        &w.artifacts(),
        &request(&w, &linked, "feat/from-side", None, "r1"),
        &w.create_env(),
    )
    .unwrap();
    assert_eq!(created.principal, repo);
    assert_eq!(created.base_sha, side_head);
    // The managed layout is named after the principal checkout, not the linked one.
    assert_eq!(created.path, w.managed_root().join("repo/feat-from-side"));
    assert!(created.path.join("side.txt").exists());
    let m = Manifest::load(&w.artifacts(), "r1").unwrap();
    assert_eq!(m.source_cwd.as_deref(), Some(linked.as_path()));
    assert_eq!(m.provision_cwd.as_deref(), Some(repo.as_path()));
}

#[test]
fn an_existing_branch_is_refused_and_nothing_is_created() {
    let w = World::new();
    let repo = w.sb.repo("repo");
    w.sb.git(&repo, ["branch", "taken"]);
    let before = w.sb.git(&repo, ["worktree", "list", "--porcelain"]);
    let err = create(
        &w.artifacts(),
        &request(&w, &repo, "taken", None, "r1"),
        &w.create_env(),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidRequest);
    assert_eq!(err.exit_code(), 2);
    assert_eq!(err.field.as_deref(), Some("branch"));
    assert!(err.message.contains("already exists"), "{err}");
    assert!(entries(&w.artifacts().worktree_runs_dir()).is_empty());
    assert!(!w.managed_root().exists());
    assert_eq!(w.sb.git(&repo, ["worktree", "list", "--porcelain"]), before);
}

#[test]
fn invalid_requests_change_nothing() {
    let w = World::new();
    let repo = w.sb.repo("repo");
    let plain = w.sb.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let cases = [
        (request(&w, &repo, "-bad", None, "r1"), "branch"),
        (request(&w, &repo, "a..b", None, "r1"), "branch"),
        (request(&w, &repo, "ok", None, "../r1"), "run_id"),
        (request(&w, &plain, "ok", None, "r1"), "cwd"),
        (
            request(&w, &w.sb.path().join("missing"), "ok", None, "r1"),
            "cwd",
        ),
        (request(&w, &repo, "ok", Some("--all"), "r1"), "base"),
    ];
    for (req, field) in cases {
        let err = create(&w.artifacts(), &req, &w.create_env()).unwrap_err();
        assert_eq!(err.field.as_deref(), Some(field), "{req:?}: {err}");
        assert_eq!(err.exit_code(), 2, "{req:?}: {err}");
    }
    // An occupied checkout directory is refused before the manifest.
    std::fs::create_dir_all(w.managed_root().join("repo/busy")).unwrap();
    let err = create(
        &w.artifacts(),
        &request(&w, &repo, "busy", None, "r1"),
        &w.create_env(),
    )
    .unwrap_err();
    assert_eq!(err.field.as_deref(), Some("branch"));
    assert!(entries(&w.artifacts().worktree_runs_dir()).is_empty());
    assert!(
        !w.sb
            .git(&repo, ["branch", "--list", "busy"])
            .contains("busy")
    );

    // A run id whose manifest exists is refused too.
    create(
        &w.artifacts(),
        &request(&w, &repo, "one", None, "r1"),
        &w.create_env(),
    )
    .unwrap();
    let err = create(
        &w.artifacts(),
        &request(&w, &repo, "two", None, "r1"),
        &w.create_env(),
    )
    .unwrap_err();
    assert_eq!(err.field.as_deref(), Some("run_id"));
    assert!(!w.sb.git(&repo, ["branch", "--list", "two"]).contains("two"));
}

#[test]
fn a_failed_acquisition_marks_the_manifest_failed() {
    let w = World::new();
    let repo = w.sb.repo("repo");
    // A git whose `worktree add` fails after everything before it went well.
    let real_git = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join("git"))
        .find(|git| git.is_file())
        .expect("git is on PATH");
    let bin = w.sb.path().join("fake-bin");
    crate::fake_git(
        &bin,
        &format!(
            "for a in \"$@\"; do [ \"$a\" = add ] && {{ echo 'fatal: no space left' >&2; exit 128; }}; done\nexec '{}' \"$@\"",
            real_git.display()
        ),
    );
    let run = w.run(
        &[
            "create",
            "--cwd",
            repo.to_str().unwrap(),
            "--branch",
            "feat/y",
            "--run-id",
            "r1",
            "--surface",
            "git",
            "--json",
        ],
        Some(&crate::path_with(&bin)),
    );
    assert_eq!(run.code, 4, "{run:?}");
    let err = refusal(&run);
    assert_eq!(err.code, ErrorCode::Unavailable, "{run}");
    assert!(err.message.contains("manifest"), "{run}");
    let m = Manifest::load(&w.artifacts(), "r1").unwrap();
    assert_eq!(m.state, State::Failed);
    assert!(m.error.is_some());
}
