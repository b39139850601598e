//! The client against a real headless Herdr server (`herd_e2e::herdr::HerdrServer`), where
//! the recordings cannot show what a live server does next.
//!
//! Without a Herdr (`HERD_TEST_HERDR`) each test says on stderr that it did not run; in CI it
//! fails.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test on any error"
)]

use std::path::Path;
use std::time::Duration;

use herd_e2e::git::Sandbox;
use herd_e2e::herdr::HerdrServer;
use herd_herdr::{Herdr, Recovery, Source, WorktreeCreate};

/// A client of `herdr` (or of the executable `program`) on the test's server.
fn client(server: &HerdrServer, program: &Path) -> Herdr {
    Herdr::new(program)
        .with_env("HERDR_SOCKET_PATH", server.socket())
        .with_budget(Duration::from_secs(10))
}

/// An executable that runs the real `herdr`, except that a `worktree create` it passes on
/// answers only `{"type":"worktree_created"}`: the reply of a creation that happened, with
/// every part of it lost.
fn lossy_create(dir: &Path, herdr: &Path) -> std::path::PathBuf {
    let path = dir.join("herdr-lossy-create");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\n\
             case \"$1 $2\" in \"worktree create\")\n\
             '{0}' \"$@\" >/dev/null || exit $?\n\
             printf '%s\\n' '{{\"id\":\"cli:worktree:create\",\"result\":{{\"type\":\"worktree_created\"}}}}'\n\
             exit 0;;\n\
             esac\n\
             exec '{0}' \"$@\"\n",
            herdr.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn an_incomplete_worktree_create_reply_is_recovered_from_the_live_server() {
    let Some(server) = HerdrServer::start("an_incomplete_worktree_create_reply_is_recovered", &[])
    else {
        return;
    };
    let sb = Sandbox::new();
    let repo = sb.repo("repo");
    let dir = tempfile::tempdir().unwrap();
    let checkout = dir.path().canonicalize().unwrap().join("wt-feature");
    let lossy = client(&server, &lossy_create(dir.path(), server.bin()));
    let source = Source::Cwd(repo.clone());
    let created = lossy
        .worktree_create(&WorktreeCreate {
            source: source.clone(),
            branch: "feature/x".into(),
            base: None,
            path: Some(checkout.clone()),
            label: Some("feature-x".into()),
            no_focus: true,
        })
        .unwrap();
    assert!(created.complete().is_none(), "{created:?}");

    let Recovery::Found(found) = lossy
        .recover_worktree(&source, "feature/x", &created)
        .unwrap()
    else {
        panic!("the live server shows the worktree");
    };
    assert_eq!(found.path, checkout);
    assert_eq!(found.branch, "feature/x");
    // What recovery found is what Herdr holds: the workspace on the checkout and its one pane.
    let workspace = server.json(["workspace", "get", &found.workspace_id]);
    assert_eq!(
        workspace["workspace"]["worktree"]["checkout_path"].as_str(),
        Some(checkout.to_str().unwrap()),
        "{workspace}"
    );
    let pane = server.pane(&found.pane_id).unwrap();
    assert_eq!(
        pane["workspace_id"].as_str(),
        Some(found.workspace_id.as_str())
    );
    assert_eq!(pane["tab_id"].as_str(), Some(found.tab_id.as_str()));

    // Removal goes through Herdr: the checkout and its workspace go, the branch stays.
    let real = client(&server, server.bin());
    let removed = real.worktree_remove(&found.workspace_id).unwrap();
    assert_eq!(removed.path, checkout);
    assert!(!removed.forced);
    assert!(!checkout.exists());
    assert!(!server.pane_exists(&found.pane_id));
    assert!(!sb.git(&repo, ["rev-parse", "feature/x"]).is_empty());
}
