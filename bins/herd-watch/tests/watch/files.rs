//! The files herd writes: private whatever the umask, never in an artifacts directory others
//! may write, never through a planted symlink.

use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_core::error::{ErrorCode, ErrorDocument};

use crate::support::{Env, launch_bin};

/// Paths with their permission bits.
type Modes = Vec<(PathBuf, u32)>;

/// Every directory under `root` with its mode, then every file with its mode (symlinks too).
fn modes_under(root: &Path) -> (Modes, Modes) {
    use std::os::unix::fs::MetadataExt;
    let (mut dirs, mut files) = (Vec::new(), Vec::new());
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let meta = std::fs::symlink_metadata(&dir).unwrap();
        dirs.push((dir.clone(), meta.mode() & 0o7777));
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                pending.push(path);
            } else {
                files.push((path, meta.mode() & 0o7777));
            }
        }
    }
    (dirs, files)
}

#[test]
fn every_file_herd_writes_is_private_whatever_the_umask() {
    let mut env = Env::new();
    env.umask = Some("000");
    let id = env.spawn(
        "Private",
        "echo 'a secret result'; echo 'a secret error' >&2",
    );
    let (code, doc, text) = env.wait(&["wait", "--run", &id, "--json"]);
    assert_eq!(code, 0, "{text}");
    assert!(doc.message.contains("a secret result"), "{text}");
    let (_, _, text) = env.watch(&["status", "--json"]);
    assert!(text.contains(&id), "{text}");
    let (dirs, files) = modes_under(&env.art());
    for name in [
        format!("runs/{id}.json"),
        format!("runs/{id}.result.json"),
        format!("runs/{id}.events.jsonl"),
        format!("runs/{id}.delivered"),
        format!("runs/{id}.leader.json"),
        format!("runs/{id}.runner-exit.json"),
        format!("runs/{id}.session.jsonl.process.json"),
        format!("logs/{id}.out"),
        format!("logs/{id}.err"),
        "outcomes.jsonl".to_owned(),
    ] {
        assert!(
            files.iter().any(|(p, _)| *p == env.art().join(&name)),
            "{name} was written: {files:?}"
        );
    }
    let open: Vec<_> = dirs.iter().filter(|(_, mode)| *mode != 0o700).collect();
    assert!(open.is_empty(), "directories not 0700: {open:?}");
    let open: Vec<_> = files.iter().filter(|(_, mode)| *mode != 0o600).collect();
    assert!(open.is_empty(), "files not 0600: {open:?}");
}

#[test]
fn an_artifacts_directory_others_may_write_or_own_is_refused_with_nothing_written() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    std::fs::create_dir(env.art()).unwrap();
    let refused = |why: &str| {
        let path = env.dir.path().join("req.json");
        std::fs::write(&path, r#"{"name": "Refused", "task": "t"}"#).unwrap();
        let args = [
            "spawn",
            "--request",
            path.to_str().unwrap(),
            "--surface",
            "process",
            "--runner",
            "exec",
            "--json",
            "--",
            "true",
        ];
        let out = env.run(&launch_bin(), &args, &[], Duration::from_secs(30));
        assert_eq!(out.code, 2, "{why}: {out}");
        let launch: ErrorDocument = out.doc();
        assert_eq!(launch.error.code, ErrorCode::InvalidRequest, "{why}: {out}");
        assert_eq!(
            launch.error.field.as_deref(),
            Some("--artifacts"),
            "{why}: {out}"
        );
        let (code, doc, text) = env.doc::<ErrorDocument>(&["status", "--json"]);
        assert_eq!(
            (code, doc.error.field.as_deref()),
            (2, Some("--artifacts")),
            "{why}: {text}"
        );
        assert_eq!(
            std::fs::read_dir(env.art()).unwrap().count(),
            0,
            "{why}: nothing was written"
        );
        doc.error.message
    };
    std::fs::set_permissions(env.art(), std::fs::Permissions::from_mode(0o770)).unwrap();
    assert!(refused("group-writable").contains("writable"));
    std::fs::set_permissions(env.art(), std::fs::Permissions::from_mode(0o757)).unwrap();
    assert!(refused("writable by others").contains("writable"));
    std::fs::set_permissions(env.art(), std::fs::Permissions::from_mode(0o700)).unwrap();
    // Giving a directory to another user takes root; otherwise only the mode rule is tested.
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        std::os::unix::fs::chown(env.art(), Some(65534), Some(65534)).unwrap();
        assert!(refused("foreign-owned").contains("owned by uid 65534"));
    }
}

#[test]
fn a_symlink_planted_at_a_run_file_is_not_followed() {
    let env = Env::new();
    let id = env.spawn("Planted", "echo done");
    let victim = env.dir.path().join("victim.txt");
    std::fs::write(&victim, "untouched\n").unwrap();
    for name in [format!("{id}.events.jsonl"), format!("{id}.steer.json")] {
        let path = env.art().join("runs").join(name);
        let _ = std::fs::remove_file(&path);
        std::os::unix::fs::symlink(&victim, &path).unwrap();
    }
    let (code, doc, text) = env.wait(&["wait", "--run", &id, "--json"]);
    assert_eq!(code, 0, "{text}");
    assert!(doc.message.contains("done"), "{text}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched\n");
}
