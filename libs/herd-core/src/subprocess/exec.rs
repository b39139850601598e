//! Finding another herd binary, and becoming one.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use super::BIN_DIR_ENV;

/// Returns the path of the herd binary `name`.
///
/// `$HERD_BIN_DIR/<name>` when that variable is set and not empty; else `<name>` beside the
/// running executable, if it exists there (or one directory up, when the running executable is
/// a test in cargo's `deps/`); else the plain name, to be looked up on `PATH`.
pub fn sibling_binary(name: &str) -> PathBuf {
    sibling_in(
        name,
        std::env::var_os(BIN_DIR_ENV),
        std::env::current_exe().ok(),
    )
}

/// Replaces the current process with `argv[0]` run with the rest of `argv`, looked up on `PATH`
/// when it has no slash. The environment, working directory and open descriptors are kept.
///
/// This starts nothing new, so no budget applies: the process stays the same process, with the
/// same PID and start time. That is the point of `herd-launch exec`, which records its own
/// identity and then becomes the runner. Returns only when the exec failed, with the reason.
#[expect(
    clippy::disallowed_methods,
    reason = "exec replaces this process image; nothing is spawned, so no budget or group applies"
)]
pub fn exec_replace(argv: &[OsString]) -> io::Error {
    let Some((program, args)) = argv.split_first() else {
        return io::Error::new(io::ErrorKind::InvalidInput, "no program to exec");
    };
    std::process::Command::new(program).args(args).exec()
}

fn sibling_in(name: &str, bin_dir: Option<OsString>, exe: Option<PathBuf>) -> PathBuf {
    if let Some(dir) = bin_dir.filter(|dir| !dir.is_empty()) {
        return PathBuf::from(dir).join(name);
    }
    if let Some(dir) = exe.as_deref().and_then(Path::parent) {
        let beside = dir.join(name);
        if beside.is_file() {
            return beside;
        }
        if dir.file_name() == Some(OsStr::new("deps")) {
            if let Some(above) = dir.parent().map(|parent| parent.join(name)) {
                if above.is_file() {
                    return above;
                }
            }
        }
    }
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn siblings_come_from_the_override_then_beside_the_executable_then_path() {
        let dir = tempfile::tempdir().unwrap();
        let deps = dir.path().join("deps");
        std::fs::create_dir(&deps).unwrap();
        std::fs::write(dir.path().join("herd-watch"), "").unwrap();
        std::fs::write(deps.join("herd-accept"), "").unwrap();
        let exe = Some(deps.join("test-binary"));

        assert_eq!(
            sibling_in("herd-watch", Some("/opt/herd/bin".into()), exe.clone()),
            PathBuf::from("/opt/herd/bin/herd-watch")
        );
        assert_eq!(
            sibling_in("herd-accept", Some("".into()), exe.clone()),
            deps.join("herd-accept")
        );
        assert_eq!(
            sibling_in("herd-watch", None, exe.clone()),
            dir.path().join("herd-watch")
        );
        assert_eq!(
            sibling_in("herd-docs", None, exe),
            PathBuf::from("herd-docs")
        );
        assert_eq!(
            sibling_in("herd-docs", None, None),
            PathBuf::from("herd-docs")
        );
    }
}
