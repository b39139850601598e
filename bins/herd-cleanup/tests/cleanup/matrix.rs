//! One managed worktree per dangerous state: none is removed, each reports its blocker; the
//! clean one is eligible.

use std::os::unix::fs::symlink;
use std::path::PathBuf;

use herd_protocol::cleanup::{BlockerCode, Classification, Outcome, Removal};
use herd_protocol::worktree::manifest::Manifest;

use crate::{Sleeper, World, codes, row};

struct Case {
    name: &'static str,
    path: PathBuf,
    code: BlockerCode,
    class: Classification,
    exit: i32,
}

#[test]
fn every_dangerous_state_blocks_and_names_its_blocker() {
    let w = World::new();
    let sb = &w.sb;
    let repo = w.repo("repo");
    let mut cases = Vec::new();
    let mut case = |name, path, code, class, exit| {
        cases.push(Case {
            name,
            path,
            code,
            class,
            exit,
        })
    };

    let dirty = w.worktree(&repo, "dirty", "r-dirty");
    sb.write(&dirty, "README.md", "changed\n");
    case(
        "dirty",
        dirty,
        BlockerCode::Dirty,
        Classification::Blocked,
        1,
    );

    let untracked = w.worktree(&repo, "untracked", "r-untracked");
    sb.write(&untracked, "notes.txt", "new\n");
    case(
        "untracked",
        untracked,
        BlockerCode::Untracked,
        Classification::Blocked,
        1,
    );

    let conflicted = w.worktree(&repo, "conflicted", "r-conflicted");
    sb.write(&conflicted, "c.txt", "ours\n");
    sb.commit_all(&conflicted, "ours");
    sb.write(&repo, "c.txt", "theirs\n");
    sb.commit_all(&repo, "theirs");
    sb.git_fails(&conflicted, ["merge", "--quiet", "main"]);
    case(
        "conflicted",
        conflicted,
        BlockerCode::Conflicts,
        Classification::Blocked,
        1,
    );

    let locked = w.worktree(&repo, "locked", "r-locked");
    sb.git(
        &repo,
        [
            "worktree",
            "lock",
            "--reason",
            "in use",
            locked.to_str().unwrap(),
        ],
    );
    case(
        "locked",
        locked,
        BlockerCode::Locked,
        Classification::Blocked,
        1,
    );

    // An orphan (no manifest): detached HEAD is its only problem.
    let detached = w.root().join("repo/detached");
    sb.git(
        &repo,
        [
            "worktree",
            "add",
            "--quiet",
            "--detach",
            detached.to_str().unwrap(),
        ],
    );
    case(
        "detached",
        detached,
        BlockerCode::DetachedHead,
        Classification::Blocked,
        1,
    );

    let sub_source = sb.repo("subsource");
    let submodule = w.worktree(&repo, "submodule", "r-submodule");
    sb.git(
        &submodule,
        [
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "--quiet",
            sub_source.to_str().unwrap(),
            "sub",
        ],
    );
    sb.commit_all(&submodule, "add a submodule");
    case(
        "submodule",
        submodule,
        BlockerCode::InitializedSubmodules,
        Classification::Blocked,
        1,
    );

    let held = w.worktree(&repo, "held", "r-held");
    std::fs::create_dir(held.join("deep")).unwrap();
    let holder = Sleeper::in_dir(&held.join("deep"));
    case(
        "held",
        held.clone(),
        BlockerCode::ProcessHolder,
        Classification::Blocked,
        1,
    );

    // A run of the artifacts directory whose child is alive, though its cwd is elsewhere.
    let child = w.worktree(&repo, "child", "r-child");
    let live = Sleeper::in_dir(&w.sb.path());
    w.run_record("run-child", &child, live.pid(), false);
    case(
        "live child",
        child,
        BlockerCode::LiveChild,
        Classification::Blocked,
        1,
    );

    let outside = sb.path().join("outside/escape");
    sb.git(
        &repo,
        [
            "worktree",
            "add",
            "--quiet",
            "-b",
            "escape",
            outside.to_str().unwrap(),
        ],
    );
    let link = w.root().join("repo/escape");
    symlink(&outside, &link).unwrap();
    case(
        "symlink",
        link,
        BlockerCode::SymlinkEscapesRoot,
        Classification::Blocked,
        1,
    );

    let foreign = sb.repo("elsewhere/foreign");
    let out_of_scope = w.worktree(&foreign, "theirs", "r-foreign");
    case(
        "out of scope",
        out_of_scope,
        BlockerCode::OutsideSessionCwd,
        Classification::OutOfScope,
        1,
    );

    let disagree = w.worktree(&repo, "disagree", "r-disagree");
    Manifest::update(&w.artifacts(), "r-disagree", |m| {
        m.branch = Some("someone-else".into())
    })
    .unwrap();
    case(
        "manifest disagrees",
        disagree,
        BlockerCode::IdentityDisagrees,
        Classification::Unknown,
        4,
    );

    let clean = w.worktree(&repo, "clean", "r-clean");
    sb.write(&clean, "build/out.o", "x");
    sb.write(&clean, ".gitignore", "build/\n");
    sb.commit_all(&clean, "ignore build output");

    // The inventory names every blocker.
    let list = w.list();
    for c in &cases {
        let row = row(&list, &c.path);
        let entry = &row.entry;
        assert_eq!(entry.classification, c.class, "{}: {row:#?}", c.name);
        assert!(
            codes(&entry.blockers).contains(&c.code),
            "{} lists {:?}: {row:#?}",
            c.name,
            c.code
        );
        assert_eq!(row.remove_command, None, "{}", c.name);
    }
    let clean_row = row(&list, &clean);
    let clean_entry = &clean_row.entry;
    assert_eq!(
        clean_entry.classification,
        Classification::Eligible,
        "{clean_row:#?}"
    );
    assert_eq!(clean_entry.ignored_files, Some(1), "{clean_row:#?}");
    assert_eq!(clean_entry.branch.as_deref(), Some("clean"));
    assert_eq!(clean_entry.source.as_deref(), repo.to_str());
    assert_eq!(clean_entry.manifests[0].run_id, "r-clean");
    assert_eq!(
        clean_row.remove_command,
        Some(format!(
            "worktree_remove({{ target: \"{}\" }})",
            clean.to_str().unwrap()
        ))
    );
    assert_eq!(list.counts.total, list.worktrees.len());
    assert_eq!(list.counts.eligible, 1, "{list:#?}");
    assert_eq!(list.counts.out_of_scope, 1, "{list:#?}");

    // Removal rechecks each and refuses, naming the same blocker; nothing is touched.
    for c in &cases {
        let run = w.remove(&c.path, &[]);
        assert_eq!(run.code, c.exit, "{}: {run:?}", c.name);
        let doc = run.doc::<Removal>();
        assert_ne!(doc.outcome, Outcome::Removed, "{}", c.name);
        assert!(
            codes(&doc.blockers).contains(&c.code),
            "{} names {:?}: {doc:#?}",
            c.name,
            c.code
        );
        assert!(
            c.path.symlink_metadata().is_ok(),
            "{} is still there",
            c.name
        );
    }
    // `--preserve` lifts only uncommitted work: a held checkout stays blocked.
    let run = w.remove(&held, &["--preserve"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(codes(&run.doc::<Removal>().blockers).contains(&BlockerCode::ProcessHolder));

    // The human inventory names them too, one line each.
    let session = w.session();
    let human = w.cleanup(&["list", "--session-cwd", session.to_str().unwrap()]);
    assert_eq!(human.code, 0, "{human:?}");
    insta::assert_snapshot!(w.redact(&human.stdout));
    drop(holder);
    drop(live);
}
