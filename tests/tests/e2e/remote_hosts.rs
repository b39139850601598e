//! Hosts that are not the friendly default: another user's control directory, a login shell
//! that is fish or tcsh and prints as it starts, and requests the host would refuse, which are
//! refused here before the host is asked anything.

use std::path::Path;

use herd_core::error::ErrorDocument;
use herd_e2e::ssh::{ALIAS, Remote};
use herd_e2e::wait::wait_for;
use herd_protocol::launch::LaunchAck;
use herd_protocol::result::Outcome;
use herd_protocol::run::SurfaceKind;

use crate::remote::{BUDGET, Scene, git};

/// A repository with one commit on `main`, under the scene's directory.
fn repository(scene: &Scene) -> std::path::PathBuf {
    let src = scene.dir.path().join("src");
    std::fs::create_dir_all(&src).expect("the source directory");
    git(&src, &["init", "-q", "-b", "main"]);
    std::fs::write(src.join("README"), "base\n").expect("a file to commit");
    git(&src, &["add", "README"]);
    git(&src, &["commit", "-q", "-m", "base"]);
    src
}

/// The refusal's code, field and message.
fn refused(out: &herd_e2e::cli::Run) -> (i32, Option<String>, String) {
    let error = out.doc::<ErrorDocument>().error;
    (out.code, error.field, error.message)
}

/// A request the host would refuse, or that would move a local branch, is refused here with exit
/// 2 before the first call to the host: no base commit pushed, no clone made, no run on either
/// side.
#[test]
fn a_remote_request_is_judged_here_before_anything_is_sent_to_the_host() {
    let scene = Scene::prepared();
    let src = repository(&scene);
    git(&src, &["branch", "fix/taken"]);
    let cwd = src.display().to_string();
    let clones = scene.remote.home().join(".herd/repos");
    let cases = [
        // A branch that exists here: its commits would come home onto it.
        (
            serde_json::json!({"name": "Fixer", "task": "fix", "cwd": cwd,
                               "worktree": {"branch": "fix/taken"}}),
            "worktree.branch",
            "already exists",
        ),
        // Not a branch name.
        (
            serde_json::json!({"name": "Fixer", "task": "fix", "cwd": cwd,
                               "worktree": {"branch": "fix..x"}}),
            "worktree.branch",
            "",
        ),
        // A base that names no commit.
        (
            serde_json::json!({"name": "Fixer", "task": "fix", "cwd": cwd,
                               "worktree": {"branch": "fix/new", "base": "no-such-rev"}}),
            "worktree.base",
            "no-such-rev",
        ),
        // A field of the request the schema refuses.
        (
            serde_json::json!({"name": "Fixer", "task": "fix", "cwd": cwd, "thinking": "loud",
                               "worktree": {"branch": "fix/new"}}),
            "thinking",
            "",
        ),
    ];
    for (request, field, says) in cases {
        let out = scene.spawn(&request, "echo never");
        let (code, got_field, message) = refused(&out);
        assert_eq!(code, 2, "{request}: {out}");
        assert_eq!(got_field.as_deref(), Some(field), "{request}: {out}");
        assert!(message.contains(says), "{request}: {out}");
        assert!(
            !clones.exists(),
            "{request}: something was sent to the host: {}",
            clones.display()
        );
        assert_eq!(scene.local_runs(), Vec::<String>::new(), "{request}");
        assert!(scene.remote_runs().is_empty(), "{request}");
    }
    assert_eq!(git(&src, &["branch", "--list", "fix/*"]), "fix/taken");
}

/// A control directory another user owns or others may write to is refused (exit 4, saying why)
/// before anything is sent through it; herd's own is created private.
#[test]
fn a_control_directory_another_user_controls_is_refused_and_nothing_is_sent() {
    let scene = Scene::prepared();
    let request = serde_json::json!({"name": "Builder", "task": "the secret task"});
    let spawn = |cm: &Path| {
        let cm = cm.display().to_string();
        scene.herd_with(
            "herd-launch",
            &[
                "spawn",
                "--host",
                ALIAS,
                "--request",
                "-",
                "--json",
                "--runner",
                "exec",
                "--",
                "cat",
            ],
            &[("HERD_SSH_CONTROL_DIR", &cm)],
            Some(&request.to_string()),
        )
    };
    use std::os::unix::fs::PermissionsExt;
    let shared = scene.dir.path().join("cm-shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = spawn(&shared);
    let (code, _, message) = refused(&out);
    assert_eq!(code, 4, "{out}");
    assert!(
        message.contains("writable by its group or by others"),
        "{out}"
    );
    assert!(message.contains("HERD_SSH_CONTROL_DIR"), "{out}");

    // Another user's directory (a fake master could listen there): refused, never used.
    let theirs = scene.dir.path().join("cm-theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
    let out = spawn(&theirs);
    let (code, _, message) = refused(&out);
    assert_eq!(code, 4, "{out}");
    assert!(message.contains("owned by uid 65534"), "{out}");
    assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 0);
    assert_eq!(scene.local_runs(), Vec::<String>::new());
    assert!(scene.remote_runs().is_empty());

    // Herd's own, missing: created 0700 and used.
    let mine = scene.dir.path().join("cm-mine");
    let out = spawn(&mine);
    assert_eq!(out.code, 0, "{out}");
    let mode = std::fs::metadata(&mine).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o700);
}

/// Startup files of every login shell that print on stdout and on stderr.
fn chatty(remote: &Remote) {
    for (name, text) in [
        (
            ".bashrc",
            "echo 'bashrc says hi'; echo 'bashrc warns' >&2\n",
        ),
        (
            ".config/fish/config.fish",
            "echo 'fish says hi'; echo 'fish warns' >&2\n",
        ),
        (
            ".tcshrc",
            "echo 'tcsh says hi'\necho 'tcsh warns' > /dev/stderr\n",
        ),
    ] {
        let path = remote.home().join(name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("the startup file's directory");
        }
        std::fs::write(path, text).expect("the startup file");
    }
}

/// On a host whose login shell is fish or tcsh and whose startup files print on both streams:
/// `host add`, the launch's acknowledgement, steers and the relay all read herd's own output;
/// a steer containing `it\'s`, and one crafted to run `touch` under fish's or csh's quoting,
/// reach the child verbatim and run nothing; the result comes home once.
#[test]
fn a_fish_or_tcsh_host_that_prints_as_it_starts_launches_steers_and_reports_verbatim() {
    for shell in ["/usr/bin/fish", "/usr/bin/tcsh"] {
        let remote = Remote::start_with_shell(Path::new(shell));
        chatty(&remote);
        let raw = remote.ssh("true");
        assert!(raw.stdout.contains("says hi"), "{shell}: {raw}");
        let scene = Scene::prepare(Scene::on(remote));
        let request = serde_json::json!({"name": "Builder", "task": "it\\'s a task"});
        let out = scene.herd(
            "herd-launch",
            &[
                "spawn",
                "--host",
                ALIAS,
                "--surface",
                "tmux",
                "--request",
                "-",
                "--json",
                "--runner",
                "exec",
                "--",
                "sh",
                "-c",
                "t=$(cat); touch \"$HOME/reading-1\"; IFS= read -r a </dev/tty; \
                 touch \"$HOME/reading-2\"; IFS= read -r b </dev/tty; \
                 printf 'task: %s\\nfirst: %s\\nsecond: %s\\n' \"$t\" \"$a\" \"$b\"",
            ],
            Some(&request.to_string()),
        );
        assert_eq!(out.code, 0, "{shell}: {out}");
        let ack: LaunchAck = out.doc();
        assert_eq!(ack.surface, SurfaceKind::Tmux, "{shell}: {ack:?}");
        let id = ack.run_id;
        let follow = scene.follow("a");
        let messages = [
            "it\\'s fine",
            "x\\'; touch ~/pwned-fish; echo \\' '\\''; touch ~/pwned-sh #' !; touch ~/pwned-csh",
        ];
        for (n, message) in messages.iter().enumerate() {
            wait_for(
                &format!("{shell}: the child reading line {}", n + 1),
                BUDGET,
                || {
                    scene
                        .remote
                        .home()
                        .join(format!("reading-{}", n + 1))
                        .exists()
                        .then_some(())
                },
            );
            let out = scene.herd(
                "herd-watch",
                &["steer", "--run", &id, "--message", message, "--json"],
                None,
            );
            assert_eq!(out.code, 0, "{shell}: {out}");
        }
        let result = follow.wait_result(&id);
        assert_eq!(result.outcome, Outcome::Completed, "{shell}: {result:?}");
        let expected = format!(
            "task: it\\'s a task\nfirst: {}\nsecond: {}",
            messages[0], messages[1]
        );
        assert!(result.message.contains(&expected), "{shell}: {result:?}");
        assert_eq!(follow.results(&id).len(), 1, "{shell}");
        let pwned: Vec<String> = std::fs::read_dir(scene.remote.home())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("pwned"))
            .collect();
        assert!(pwned.is_empty(), "{shell}: {pwned:?}");
    }
}

/// git's own connections to a host whose login shell prints as it starts: the base commit goes
/// there and the child's branch comes home, the pack protocol reading only the remote git.
#[test]
fn a_worktree_childs_commits_travel_by_git_past_a_chatty_login_shell() {
    let remote = Remote::start(&[]);
    chatty(&remote);
    let raw = remote.ssh("true");
    assert!(raw.stdout.contains("bashrc says hi"), "{raw}");
    let scene = Scene::prepare(Scene::on(remote));
    let src = repository(&scene);
    let base = git(&src, &["rev-parse", "HEAD"]);
    let request = serde_json::json!({
        "name": "Fixer",
        "task": "fix it",
        "cwd": src.display().to_string(),
        "worktree": {"branch": "fix/chatty"},
    });
    let script = "cat >/dev/null; echo change > child.txt && git add child.txt && \
                  git -c user.name=Child -c user.email=child@example.org commit -q -m 'child work' \
                  && echo committed";
    let out = scene.spawn(&request, script);
    assert_eq!(out.code, 0, "{out}");
    let id = out.doc::<LaunchAck>().run_id;
    let (out, events) = scene.follow_all();
    assert_eq!(out.code, 0, "{out}");
    let results = herd_e2e::herd::results(&events, &id);
    assert_eq!(results.len(), 1, "{out}");
    assert_eq!(results[0].outcome, Outcome::Completed, "{:?}", results[0]);
    assert!(
        !results[0].message.contains("was not brought home"),
        "{:?}",
        results[0]
    );
    assert_eq!(
        git(&src, &["log", "-1", "--format=%s", "fix/chatty"]),
        "child work"
    );
    assert_eq!(git(&src, &["rev-parse", "fix/chatty~1"]), base);
}

/// A mistyped host is refused (exit 2, field `host`) with the prepared host it was close to and
/// the list of prepared hosts, not told to add the typo as a new host; nothing is recorded.
#[test]
fn a_mistyped_host_is_told_the_prepared_host_it_may_have_meant() {
    let scene = Scene::prepared();
    let request = serde_json::json!({"name": "Builder", "task": "build it"}).to_string();
    let args = [
        "spawn",
        "--host",
        "devbx",
        "--request",
        "-",
        "--runner",
        "exec",
        "--",
        "true",
    ];
    let out = scene.herd("herd-launch", &args, Some(&request));
    assert_eq!(out.code, 2, "{out}");
    assert_eq!(
        out.stderr.trim_end(),
        "error: devbx is not a prepared host: did you mean devbox? (prepared: devbox); a new host \
         is added with `herd-launch host add devbx`\n  field: host",
        "{out}"
    );
    let mut json = args.to_vec();
    json.insert(1, "--json");
    let out = scene.herd("herd-launch", &json, Some(&request));
    let (code, field, _) = refused(&out);
    assert_eq!((code, field.as_deref()), (2, Some("host")), "{out}");
    assert_eq!(scene.local_runs(), Vec::<String>::new());
}

/// `host remove` from a shell whose artifacts directory is another than the one a run on the
/// host was launched from is still refused (exit 7) while that run is open: every directory of
/// the user's index is looked through.
#[test]
fn host_remove_sees_an_open_run_of_another_artifacts_directory() {
    let scene = Scene::prepared();
    let (id, _) = scene.spawn_waiting("Builder", "build it");
    let elsewhere = scene.dir.path().join("elsewhere");
    let out = scene.herd_with(
        "herd-launch",
        &["host", "remove", ALIAS, "--json"],
        &[("HERD_ARTIFACTS", elsewhere.to_str().unwrap())],
        None,
    );
    let (code, field, message) = refused(&out);
    assert_eq!((code, field.as_deref()), (7, Some("host")), "{out}");
    assert!(message.contains(&id), "{out}");
    let out = scene.herd("herd-launch", &["host", "list", "--json"], None);
    assert!(out.stdout.contains(ALIAS), "the host is kept: {out}");
}
