//! The Pi child extension (`extension/` of this repository: the entry `herd-child.ts` and the
//! modules under `src/child/` and `src/shared/` it imports), shipped inside the binary and
//! installed into the artifacts directory for `pi -e`.
//!
//! The files go into a content-addressed directory (`extension/herd-child-<sha256 prefix>/`), each
//! created once and the entry last, so concurrent launches share them, an entry that exists has
//! every module beside it, and a child always loads the extension of the herd-launch that started
//! it. `$HERD_PI_EXTENSION` names another entry file instead (for developing the extension).

use std::path::PathBuf;

use herd_core::{Error, ErrorCode};
use herd_protocol::layout::Artifacts;
use sha2::{Digest, Sha256};

/// The entry file Pi loads; it imports the others by relative paths.
pub const ENTRY: &str = "herd-child.ts";

/// The extension's files by their path under `extension/`, the entry first. A test keeps the list
/// equal to the TypeScript files of `extension/` (its `*.test.ts` stay at home).
pub const FILES: &[(&str, &str)] = &[
    (ENTRY, include_str!("../../../extension/herd-child.ts")),
    (
        "src/child/accept.ts",
        include_str!("../../../extension/src/child/accept.ts"),
    ),
    (
        "src/child/activity.ts",
        include_str!("../../../extension/src/child/activity.ts"),
    ),
    (
        "src/child/config.ts",
        include_str!("../../../extension/src/child/config.ts"),
    ),
    (
        "src/child/files.ts",
        include_str!("../../../extension/src/child/files.ts"),
    ),
    (
        "src/child/inbox.ts",
        include_str!("../../../extension/src/child/inbox.ts"),
    ),
    (
        "src/child/messages.ts",
        include_str!("../../../extension/src/child/messages.ts"),
    ),
    (
        "src/child/needs-input.ts",
        include_str!("../../../extension/src/child/needs-input.ts"),
    ),
    (
        "src/child/own-children.ts",
        include_str!("../../../extension/src/child/own-children.ts"),
    ),
    (
        "src/child/programs.ts",
        include_str!("../../../extension/src/child/programs.ts"),
    ),
    (
        "src/child/settlement.ts",
        include_str!("../../../extension/src/child/settlement.ts"),
    ),
    (
        "src/child/sidecars.ts",
        include_str!("../../../extension/src/child/sidecars.ts"),
    ),
    (
        "src/child/tools.ts",
        include_str!("../../../extension/src/child/tools.ts"),
    ),
    (
        "src/child/widget.ts",
        include_str!("../../../extension/src/child/widget.ts"),
    ),
    // The Pi Herd face's worker files and result envelope, which the parent extension uses too.
    (
        "src/shared/piherd-records.ts",
        include_str!("../../../extension/src/shared/piherd-records.ts"),
    ),
    (
        "src/shared/piherd-result.ts",
        include_str!("../../../extension/src/shared/piherd-result.ts"),
    ),
    // The formats' types, which the modules above import (types only).
    (
        "src/generated/protocol.ts",
        include_str!("../../../extension/src/generated/protocol.ts"),
    ),
];

/// The environment variable naming an extension file to load instead.
pub const OVERRIDE_ENV: &str = "HERD_PI_EXTENSION";

/// The digest of every file's path and content.
fn digest() -> String {
    let mut hasher = Sha256::new();
    for (path, text) in FILES {
        hasher.update(path.as_bytes());
        hasher.update([0]);
        hasher.update(text.as_bytes());
        hasher.update([0]);
    }
    crate::policy::hex(&hasher.finalize())
}

/// Returns the extension's entry file for a Pi child, installing the extension when needed.
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
    let dir = artifacts
        .root()
        .join("extension")
        .join(format!("herd-child-{}", &digest()[..16]));
    let entry = dir.join(ENTRY);
    if !entry.is_file() {
        // The entry last: once it exists, so does every module it imports.
        for (path, text) in FILES.iter().skip(1).chain(FILES.iter().take(1)) {
            crate::files::create_once(&dir.join(path), text.as_bytes())?;
        }
    }
    Ok(entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::path::Path;

    #[test]
    fn installs_once_content_addressed() {
        let dir = tempfile::tempdir().unwrap();
        let art = Artifacts::new(dir.path());
        let first = install(&art, &|_| None).unwrap();
        assert_eq!(first.file_name().unwrap(), ENTRY);
        let root = first.parent().unwrap();
        for (path, text) in FILES {
            assert_eq!(std::fs::read_to_string(root.join(path)).unwrap(), *text);
        }
        assert_eq!(install(&art, &|_| None).unwrap(), first);
        let other = dir.path().join("dev.ts");
        std::fs::write(&other, "export default function () {}\n").unwrap();
        let env = |k: &str| (k == OVERRIDE_ENV).then(|| other.to_string_lossy().into_owned());
        assert_eq!(install(&art, &env).unwrap(), other);
    }

    /// The TypeScript files under `dir`, relative to `root`, without `node_modules` and tests.
    fn sources(root: &Path, dir: &Path, found: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().is_some_and(|n| n == "node_modules") {
                continue;
            }
            if path.is_dir() {
                sources(root, &path, found);
            } else if path.extension().is_some_and(|e| e == "ts")
                && !path.to_string_lossy().ends_with(".test.ts")
            {
                let relative = path.strip_prefix(root).unwrap();
                found.push(relative.to_string_lossy().into_owned());
            }
        }
    }

    #[test]
    fn every_file_of_the_child_extension_is_shipped() {
        // The child's entry and its modules; the parent extension is a Pi package of its own
        // (`pi install extension/`), never loaded with `-e`.
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../extension");
        let mut found = vec!["herd-child.ts".to_owned()];
        sources(&root, &root.join("src/child"), &mut found);
        sources(&root, &root.join("src/shared"), &mut found);
        sources(&root, &root.join("src/generated"), &mut found);
        found.sort();
        let mut shipped: Vec<String> = FILES.iter().map(|(p, _)| (*p).to_owned()).collect();
        shipped.sort();
        assert_eq!(shipped, found, "list every file of extension/ in FILES");
    }
}
