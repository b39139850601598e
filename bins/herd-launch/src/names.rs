//! Names herd-launch invents: run ids, timestamps in file names, and the child's session path.
//!
//! The shapes are pi-herdr-agents' (docs/protocol.md, "Names and places"), so files land where an
//! existing parent extension and a person used to it look for them.

use std::io::Read;
use std::path::{Path, PathBuf};

use herd_core::Error;
use herd_core::time::Utc;

/// Returns `n` random bytes from the kernel.
pub fn random_bytes(n: usize) -> Result<Vec<u8>, Error> {
    let mut buf = vec![0u8; n];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .map_err(|e| Error::internal(format!("cannot read /dev/urandom: {e}")))?;
    Ok(buf)
}

/// Returns `n` random lower-case hex characters (`n` even).
pub fn random_hex(n: usize) -> Result<String, Error> {
    Ok(herd_protocol::launch::policy::hex(&random_bytes(n.div_ceil(2))?)[..n].to_owned())
}

/// A fresh run id: 8 random hex characters, as pi-herdr-agents makes them.
pub fn new_run_id() -> Result<String, Error> {
    random_hex(8)
}

/// The Pi agent directory a child uses.
///
/// `<cwd>/.pi/agent` when the request named a cwd (or the child runs in a worktree) and that
/// directory exists, else `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`.
pub fn agent_dir(
    project_cwd: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<PathBuf, Error> {
    if let Some(cwd) = project_cwd {
        let local = cwd.join(".pi").join("agent");
        if local.is_dir() {
            return Ok(local);
        }
    }
    if let Some(dir) = env("PI_CODING_AGENT_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let home = env("HOME").filter(|h| !h.is_empty()).ok_or_else(|| {
        Error::invalid(
            "cwd",
            "cannot find the Pi agent directory: set PI_CODING_AGENT_DIR or HOME",
        )
    })?;
    Ok(PathBuf::from(home).join(".pi").join("agent"))
}

/// Pi's per-cwd session directory name: `--<cwd without its leading slash, / \ : as ->--`.
pub fn session_dir_name(cwd: &Path) -> String {
    let text = cwd.to_string_lossy();
    let trimmed = text.strip_prefix('/').unwrap_or(&text);
    let mapped: String = trimmed
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect();
    format!("--{mapped}--")
}

/// A session file's name, as Pi names its own:
/// `<YYYY-MM-DDTHH-MM-SS-mmmZ>_<run id>-<8hex>-<8hex>-<4hex>.jsonl`.
fn session_name(now_ms: u64, run_id: &str) -> Result<String, Error> {
    Ok(format!(
        "{}_{run_id}-{}-{}-{}.jsonl",
        Utc::from_ms(now_ms).file_millis(),
        random_hex(8)?,
        random_hex(8)?,
        random_hex(4)?
    ))
}

/// A session of the person's own in `cwd`, where Pi keeps it:
/// `<agent dir>/sessions/--<cwd>--/<name>` (the handoff's new Pi).
pub fn session_file(
    agent_dir: &Path,
    cwd: &Path,
    now_ms: u64,
    run_id: &str,
) -> Result<PathBuf, Error> {
    Ok(agent_dir
        .join("sessions")
        .join(session_dir_name(cwd))
        .join(session_name(now_ms, run_id)?))
}

/// A child's session file: `<artifacts>/sessions/<run id>/<name>`, in a directory of its own
/// under the parent's artifacts directory rather than among the person's sessions (`pi -c`
/// would continue the newest child instead of the conversation).
pub fn child_session_file(
    artifacts: &herd_protocol::layout::Artifacts,
    now_ms: u64,
    run_id: &str,
) -> Result<PathBuf, Error> {
    Ok(artifacts
        .session_dir(run_id)
        .join(session_name(now_ms, run_id)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_paths_follow_pi() {
        assert_eq!(
            session_dir_name(Path::new("/path/to/scratch")),
            "--path-to-scratch--"
        );
        let file = session_file(Path::new("/a"), Path::new("/w/x:y"), 0, "ab12cd34").unwrap();
        let name = file.file_name().unwrap().to_str().unwrap().to_owned();
        assert!(file.starts_with("/a/sessions/--w-x-y--"), "{file:?}");
        assert!(
            name.starts_with("1970-01-01T00-00-00-000Z_ab12cd34-"),
            "{name}"
        );
        assert_eq!(
            name.len(),
            "1970-01-01T00-00-00-000Z_ab12cd34-12345678-12345678-1234.jsonl".len()
        );
    }

    #[test]
    fn agent_dir_prefers_the_project_then_the_environment() {
        let dir = tempfile::tempdir().unwrap();
        let env = |k: &str| match k {
            "PI_CODING_AGENT_DIR" => Some("/env/agent".to_owned()),
            "HOME" => Some("/home/u".to_owned()),
            _ => None,
        };
        assert_eq!(
            agent_dir(Some(dir.path()), &env).unwrap(),
            PathBuf::from("/env/agent")
        );
        std::fs::create_dir_all(dir.path().join(".pi/agent")).unwrap();
        assert_eq!(
            agent_dir(Some(dir.path()), &env).unwrap(),
            dir.path().join(".pi/agent")
        );
        let home_only = |k: &str| (k == "HOME").then(|| "/home/u".to_owned());
        assert_eq!(
            agent_dir(None, &home_only).unwrap(),
            PathBuf::from("/home/u/.pi/agent")
        );
        assert!(agent_dir(None, &|_| None).is_err());
    }

    #[test]
    fn run_ids_are_eight_hex() {
        let id = new_run_id().unwrap();
        assert_eq!(id.len(), 8);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
    }
}
