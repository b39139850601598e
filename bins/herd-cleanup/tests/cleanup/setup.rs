//! Removal of worktrees that setup filled: what setup made does not block like a person's
//! untracked file, a symlink is removed and never its target, a hard-linked file changed in
//! place is a blocker, and the source checkout is byte-identical before and after.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use herd_protocol::cleanup::{Blocker, BlockerCode, Outcome, Removal};
use herd_protocol::worktree::Surface;
use herd_worktree::create::{CreateEnv, CreateRequest, SetupSource};

use crate::World;

/// Every file, symlink and directory below `dir` (`.git` left out: removal prunes its
/// worktree records), with its content, link target and inode.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, u64)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, (Vec<u8>, u64)>) {
        for e in std::fs::read_dir(dir).expect("a readable directory") {
            let e = e.expect("an entry");
            let path = e.path();
            let rel = path
                .strip_prefix(root)
                .expect("below the root")
                .to_path_buf();
            if rel == Path::new(".git") {
                continue;
            }
            let meta = path.symlink_metadata().expect("metadata");
            let content = if meta.file_type().is_symlink() {
                std::fs::read_link(&path)
                    .expect("a link")
                    .into_os_string()
                    .into_encoded_bytes()
            } else if meta.is_file() {
                std::fs::read(&path).expect("a file")
            } else {
                Vec::new()
            };
            out.insert(rel, (content, meta.ino()));
            if meta.is_dir() {
                walk(root, &path, out);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The blocker of `removal` with `code`; the test fails, showing the removal, when there is none.
fn blocker(removal: &Removal, code: BlockerCode) -> &Blocker {
    removal
        .blockers
        .iter()
        .find(|b| b.code == code)
        .unwrap_or_else(|| panic!("no {code:?} blocker: {removal:#?}"))
}

/// A repository whose project file links `node_modules` (by `strategy`) and `vendor` by
/// symlink, and copies `.env`; approved and trusted.
fn set_up(w: &World, strategy: &str) -> (PathBuf, PathBuf) {
    let repo = w.repo("repo");
    let toml = format!(
        "copy = [\".env\"]\n[[link]]\npath = \"node_modules\"\nstrategy = \"{strategy}\"\n[[link]]\npath = \"vendor\"\nstrategy = \"symlink\"\n"
    );
    w.sb.write(&repo, ".gitignore", ".env\nnode_modules/\nvendor/\n");
    w.sb.write(&repo, ".herd/worktree.toml", &toml);
    w.sb.commit_all(&repo, "setup");
    w.sb.write(&repo, ".env", "SECRET=1\n");
    for i in 0..40 {
        w.sb.write(
            &repo,
            &format!("node_modules/p{}/f{i}.js", i % 4),
            &format!("{i}\n"),
        );
    }
    w.sb.write(&repo, "vendor/lib.rb", "lib\n");
    let config = w.sb.home().join(".config/herd");
    let description =
        herd_worktree::setup::config::load(&repo, Some(&config)).expect("a valid description");
    herd_worktree::setup::trust::approve(
        &config,
        &repo,
        description.project.as_ref().expect("a project file"),
        // No command: no file of the repository to cover.
        &herd_worktree::setup::covered::Covered::default(),
    )
    .expect("approved");
    let created = herd_worktree::create::create_with(
        &w.artifacts(),
        &CreateRequest {
            source_cwd: repo.clone(),
            branch: "feat".to_owned(),
            base: None,
            run_id: "r1".to_owned(),
            surface: Surface::Git,
            label: None,
        },
        &CreateEnv {
            git: w.sb.git_handle(),
            herdr: herd_herdr::Herdr::new("herdr"),
            managed_root: w.root(),
        },
        &SetupSource {
            config_dir: Some(config),
            trusted_folder: Some(repo.clone()),
            undecided: false,
            confine: None,
        },
    )
    .expect("the worktree is created and set up");
    (repo, created.path)
}

#[test]
fn symlinked_and_hard_linked_trees_are_removed_and_the_source_is_unchanged() {
    for strategy in ["hardlink", "symlink", "copy"] {
        let w = World::new();
        let (repo, wt) = set_up(&w, strategy);
        assert!(
            wt.join("vendor")
                .symlink_metadata()
                .expect("linked")
                .file_type()
                .is_symlink()
        );
        assert!(wt.join(".env").is_file());
        let before = snapshot(&repo);
        let list = w.list();
        let shown = &list.worktrees[0].entry.setup;
        assert!(
            shown.iter().any(|s| s == "vendor (symlink)"),
            "{strategy}: {shown:?}"
        );
        assert!(
            shown
                .iter()
                .any(|s| *s == format!("node_modules ({strategy})")),
            "{strategy}: {shown:?}"
        );
        let human = w.cleanup(&[
            "list",
            "--session-cwd",
            w.session().to_str().expect("UTF-8"),
        ]);
        assert!(human.stdout.contains("added by setup: "), "{human:?}");

        let run = w.remove(&wt, &[]);
        assert_eq!(run.code, 0, "{strategy}: {run:?}");
        assert_eq!(
            run.doc::<Removal>().outcome,
            Outcome::Removed,
            "{strategy}: {run:?}"
        );
        assert!(!wt.exists());
        assert_eq!(
            snapshot(&repo),
            before,
            "{strategy}: the source is byte-identical"
        );
        assert_eq!(
            std::fs::read_to_string(repo.join("vendor/lib.rb")).expect("the target is there"),
            "lib\n"
        );
    }
}

#[test]
fn a_users_untracked_file_still_blocks_beside_what_setup_made() {
    let w = World::new();
    let (_repo, wt) = set_up(&w, "symlink");
    w.sb.write(&wt, "notes.txt", "mine\n");
    let run = w.remove(&wt, &[]);
    assert_ne!(run.code, 0, "{run:?}");
    let removal = run.doc::<Removal>();
    let untracked = blocker(&removal, BlockerCode::Untracked);
    assert!(
        untracked.message.contains("1 file untracked"),
        "only the person's file counts: {removal:#?}"
    );
    assert!(wt.join("notes.txt").exists());
}

#[test]
fn a_hard_linked_file_changed_in_place_is_a_blocker_naming_it() {
    let w = World::new();
    let (repo, wt) = set_up(&w, "hardlink");
    let rel = "node_modules/p1/f5.js";
    assert_eq!(
        std::fs::metadata(repo.join(rel)).expect("source").ino(),
        std::fs::metadata(wt.join(rel)).expect("worktree").ino()
    );
    // Written in place, as a tool that edits a dependency does: the source's copy changes too.
    std::fs::OpenOptions::new()
        .append(true)
        .open(wt.join(rel))
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"patched\n"))
        .expect("written in place");
    let run = w.remove(&wt, &[]);
    assert_ne!(run.code, 0, "{run:?}");
    let removal = run.doc::<Removal>();
    let changed = blocker(&removal, BlockerCode::LinkedFileChanged);
    assert!(changed.message.contains(rel), "{removal:#?}");
    assert!(
        changed.message.contains("already reached the source"),
        "{removal:#?}"
    );
    assert!(wt.exists());
}
