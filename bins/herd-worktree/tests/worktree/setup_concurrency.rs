//! Setup under concurrency: many creations in one repository at once, and ports that are unique
//! on the machine, not only within one artifacts directory.

use herd_protocol::layout::Artifacts;
use herd_protocol::worktree::Manifest;
use herd_protocol::worktree::manifest::State;

use crate::setup::{approve, checkout, port_of, setup_repo, trusted};
use crate::{Run, World};

#[test]
fn many_concurrent_creations_in_one_repository_each_run_their_setup() {
    // git itself fails a `worktree add` that meets another one half made in the same
    // repository ("failed to read .git/worktrees/<name>/commondir"): every creation must
    // still get its checkout and run its setup.
    let w = World::new();
    let marks = w.sb.path().join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    let repo = setup_repo(
        &w,
        &format!("setup = [\"touch '{}'/$HERD_RUN_ID\"]\n", marks.display()),
    );
    approve(&w, &repo);
    // Three bursts of sixteen: one burst alone does not always meet git's race.
    let (bursts, n) = (3, 16);
    let mut failed = Vec::new();
    for burst in 0..bursts {
        let barrier = std::sync::Barrier::new(n);
        let runs: Vec<Run> = std::thread::scope(|s| {
            let handles: Vec<_> = (burst * n..(burst + 1) * n)
                .map(|i| {
                    let (w, repo, barrier) = (&w, &repo, &barrier);
                    s.spawn(move || {
                        barrier.wait();
                        crate::setup::create(
                            w,
                            repo,
                            &format!("b{i}"),
                            &format!("r{i}"),
                            &trusted(),
                        )
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (k, run) in runs.iter().enumerate() {
            if run.code != 0 {
                failed.push(format!("r{}: {run}", burst * n + k));
            }
        }
    }
    let n = bursts * n;
    assert!(
        failed.is_empty(),
        "{} of {n} creations failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
    let mut ports = std::collections::BTreeSet::new();
    for i in 0..n {
        let id = format!("r{i}");
        assert!(marks.join(&id).exists(), "the setup of {id} ran");
        assert!(checkout(&w, &format!("b{i}")).is_dir());
        assert_eq!(w.manifest(&id).state, State::Provisioned);
        ports.insert(port_of(&w, &id));
    }
    assert_eq!(ports.len(), n, "{ports:?}");
}

/// The port the manifest of `run_id` in the artifacts directory `artifacts` records.
fn port_in(artifacts: &std::path::Path, run_id: &str) -> u16 {
    let m = Manifest::load(&Artifacts::new(artifacts), run_id)
        .unwrap_or_else(|e| panic!("the manifest of {run_id}: {e}"));
    m.setup
        .as_ref()
        .and_then(|s| s.port)
        .unwrap_or_else(|| panic!("{run_id} has a port: {m:?}"))
}

#[test]
fn ports_are_unique_for_the_user_across_artifacts_directories_and_free_when_given() {
    // Each parent session has an artifacts directory of its own; the dev servers of their
    // worktrees share the machine.
    let w = World::new();
    let repo = crate::setup::repo(
        &w,
        ".env\n",
        &[(".herd/worktree.toml", "copy = [\".env\"]\n")],
        &[(".env", "x\n")],
    );
    let session = |i: usize| w.sb.path().join(format!("session{i}"));
    let create_in = |i: usize, branch: &str| {
        let art = session(i);
        let run = crate::setup::create(
            &w,
            &repo,
            branch,
            &format!("r{i}"),
            &[("HERD_ARTIFACTS", art.to_str().expect("a UTF-8 path"))],
        );
        assert_eq!(run.code, 0, "{run:?}");
        port_in(&art, &format!("r{i}"))
    };
    let first = create_in(1, "a");
    let second = create_in(2, "b");
    assert_ne!(first, second, "two sessions of one user share no port");

    // A port something else listens on is not given.
    let busy = second + 1;
    let listener = std::net::TcpListener::bind(("127.0.0.1", busy));
    let third = create_in(3, "c");
    assert!(![first, second, busy].contains(&third), "{third}");
    drop(listener);

    // Once its worktree is removed, the first port is free again, for any session.
    Manifest::update(&Artifacts::new(session(1)), "r1", |m| {
        m.state = State::Removed;
    })
    .expect("marked removed");
    assert_eq!(
        create_in(4, "d"),
        first,
        "the removed worktree's port is released"
    );
}
