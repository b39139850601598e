//! The models a recent listing of this user's Pi named, kept so that a spawn naming a model it
//! already saw does not start Pi a second time (`pi --list-models` is a whole Pi start).
//!
//! Only a yes is taken from it: a model it holds is accepted without asking Pi again, for a day;
//! a model it does not hold is asked of Pi now, and a refusal always rests on that fresh answer.
//! A Pi that cannot answer (it fails, or takes too long) refuses nothing.
//! A model whose credentials went away since is launched and fails as any launch would. The file
//! (`herd/models-listed.json` in the cache directory) is one user's, bounded when read, and
//! anything in it that does not parse is ignored.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use herd_core::Error;
use serde::{Deserialize, Serialize};

use super::Model;
use crate::pi::PiCommand;

/// How long a listing answers yes.
const FRESH_FOR: Duration = Duration::from_secs(24 * 60 * 60);
/// The bound of the file when read.
const READ_LIMIT: u64 = 1024 * 1024;

#[derive(Serialize, Deserialize)]
struct Listing {
    /// Which Pi, from which directory, listed them.
    pi: String,
    cwd: PathBuf,
    listed_at: u64,
    models: Vec<Model>,
}

/// Checks the models `named` by a request: against a recent listing of the same Pi in the same
/// directory when it names them all, else against a listing now (which is then kept).
pub fn check_named(
    named: &[String],
    pi: &PiCommand,
    cwd: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), Error> {
    let file = cache_file(env);
    let who = pi.to_string();
    if let Some(listing) = file.as_deref().and_then(read) {
        let fresh = now().saturating_sub(listing.listed_at) < FRESH_FOR.as_secs();
        if fresh
            && listing.pi == who
            && listing.cwd == cwd
            && super::check_named(named, &listing.models).is_ok()
        {
            return Ok(());
        }
    }
    // A Pi that cannot answer refuses nothing: the launch goes on, and a child that cannot
    // start says why in its result (a check that could not be made is no refusal).
    let Ok(models) = super::list(pi, cwd) else {
        return Ok(());
    };
    if let Some(file) = &file {
        let listing = Listing {
            pi: who,
            cwd: cwd.to_path_buf(),
            listed_at: now(),
            models,
        };
        // A cache that cannot be written is only a slower next spawn.
        let _ = write(file, &listing);
        return super::check_named(named, &listing.models);
    }
    super::check_named(named, &models)
}

fn cache_file(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |k: &str| {
        env(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let cache = set("XDG_CACHE_HOME").or_else(|| set("HOME").map(|h| h.join(".cache")))?;
    Some(cache.join("herd").join("models-listed.json"))
}

fn read(file: &Path) -> Option<Listing> {
    let bytes = herd_core::sidecar::read_bounded(file, READ_LIMIT).ok()??;
    serde_json::from_slice(&bytes).ok()
}

fn write(file: &Path, listing: &Listing) -> Result<(), Error> {
    if let Some(dir) = file.parent() {
        herd_core::sidecar::ensure_private_dir(dir).map_err(|e| {
            Error::new(
                herd_core::ErrorCode::Unavailable,
                format!("cannot create {}: {e}", dir.display()),
            )
        })?;
    }
    crate::files::write_json(file, listing)
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Pi that counts its listings in `listed` and has credentials for `p/one`.
    fn counting_pi(dir: &Path) -> PiCommand {
        use std::os::unix::fs::PermissionsExt;
        let pi = dir.join("pi");
        std::fs::write(
            &pi,
            format!(
                "#!/bin/sh\necho x >> '{}'\nprintf 'provider  model  context  max-out  thinking  images\\n'\nprintf '%-15s  128K     4.1K     no        no    \\n' 'p         one'\n",
                dir.join("listed").display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&pi, std::fs::Permissions::from_mode(0o755)).unwrap();
        PiCommand::direct(pi)
    }

    fn listings(dir: &Path) -> usize {
        std::fs::read_to_string(dir.join("listed")).map_or(0, |text| text.lines().count())
    }

    #[test]
    fn a_model_a_recent_listing_named_is_taken_without_asking_pi_and_a_refusal_always_asks() {
        let dir = tempfile::tempdir().unwrap();
        let pi = counting_pi(dir.path());
        let cache = dir.path().join("cache");
        let cache_var = cache.display().to_string();
        let env = |key: &str| (key == "XDG_CACHE_HOME").then(|| cache_var.clone());
        let one = ["p/one".to_owned()];
        check_named(&one, &pi, dir.path(), &env).unwrap();
        assert_eq!(listings(dir.path()), 1);
        check_named(&one, &pi, dir.path(), &env).unwrap();
        assert_eq!(listings(dir.path()), 1, "the second spawn did not start Pi");
        // A model the listing does not hold is asked of Pi again, and refused on its answer.
        let err = check_named(&["p/onf".to_owned()], &pi, dir.path(), &env).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("model"));
        assert!(
            err.message.contains("did you mean p/one"),
            "{}",
            err.message
        );
        assert_eq!(listings(dir.path()), 2);
        // A listing of another directory answers nothing here.
        let other = tempfile::tempdir().unwrap();
        check_named(&one, &pi, other.path(), &env).unwrap();
        assert_eq!(listings(dir.path()), 3);
        // A file that does not parse is only a listing more.
        std::fs::write(cache.join("herd/models-listed.json"), "{").unwrap();
        check_named(&one, &pi, dir.path(), &env).unwrap();
        assert_eq!(listings(dir.path()), 4);
    }
}
