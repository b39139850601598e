//! The Pi child extension (`extension/herd-child.ts` of this repository), shipped inside the
//! binary and installed into the artifacts directory for `pi -e`.
//!
//! The file is content-addressed (`extension/herd-child-<sha256 prefix>.ts`) and created once, so
//! concurrent launches share it and a child always loads the extension of the herd-launch that
//! started it. `$HERD_PI_EXTENSION` names another file instead (for developing the extension).

use std::path::PathBuf;

use herd_core::layout::Artifacts;
use herd_core::{Error, ErrorCode};
use sha2::{Digest, Sha256};

/// The extension's source.
pub const SOURCE: &str = include_str!("../../../extension/herd-child.ts");

/// The environment variable naming an extension file to load instead.
pub const OVERRIDE_ENV: &str = "HERD_PI_EXTENSION";

/// Returns the extension file for a Pi child, installing it when needed.
pub fn install(
    artifacts: &Artifacts,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<PathBuf, Error> {
    if let Some(path) = env(OVERRIDE_ENV).filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        if !path.is_file() {
            return Err(Error::new(
                ErrorCode::Unavailable,
                format!("${OVERRIDE_ENV} ({}) is not a file", path.display()),
            ));
        }
        return Ok(path);
    }
    let digest = crate::policy::hex(&Sha256::digest(SOURCE.as_bytes()));
    let path = artifacts
        .root()
        .join("extension")
        .join(format!("herd-child-{}.ts", &digest[..16]));
    if !path.is_file() {
        crate::files::create_once(&path, SOURCE.as_bytes())?;
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installs_once_content_addressed() {
        let dir = tempfile::tempdir().unwrap();
        let art = Artifacts::new(dir.path());
        let first = install(&art, &|_| None).unwrap();
        assert_eq!(std::fs::read_to_string(&first).unwrap(), SOURCE);
        assert_eq!(install(&art, &|_| None).unwrap(), first);
        let other = dir.path().join("dev.ts");
        std::fs::write(&other, "export default function () {}\n").unwrap();
        let env = |k: &str| (k == OVERRIDE_ENV).then(|| other.to_string_lossy().into_owned());
        assert_eq!(install(&art, &env).unwrap(), other);
    }
}
