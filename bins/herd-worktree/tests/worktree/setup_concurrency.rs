//! Setup under concurrency: many creations in one repository at once, and ports that are unique
//! on the machine, not only within one artifacts directory.

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
