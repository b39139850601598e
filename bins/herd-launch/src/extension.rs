//! The Pi child extension (`extension/` of this repository: the entry `herd-child.ts` and the
//! modules under `src/child/`, `src/shared/` and `src/generated/` it imports), shipped inside the
//! binary as one prebuilt JavaScript bundle (`extension/dist/herd-child.js`, built by `cargo
//! xtask docs` with the pinned esbuild) and installed for `pi -e`.
//!
//! Pi loads an extension through jiti, which compiles it on first load and caches what it
//! compiled by the file's path: one bundled file compiles faster than twenty TypeScript modules,
//! and a path that stays the same across sessions is compiled once, not at every child's start.
//! So the bundle goes to one content-addressed file per user, `herd/extension/herd-child-<sha256
//! prefix>.js` in the cache directory (`$XDG_CACHE_HOME`, else `~/.cache`; the artifacts
//! directory's `extension/` where neither can be written), created once and compared with the
//! embedded bundle before each use, so a child always loads the extension of the herd-launch
//! that started it. `$HERD_PI_EXTENSION` names another entry file instead (for developing the
//! extension from its sources).
//!
//! [`SOURCES`] lists the TypeScript the bundle is built from; the bundle's first line names their
//! digest, and a test keeps the two in step. A development build whose sources moved on since the
//! bundle was built installs the sources instead (the content-addressed directory
//! `extension/herd-child-<sha256 prefix>/` of the artifacts directory), so a change to them runs
//! before the bundle is rebuilt; a release build always ships the bundle.

use std::path::PathBuf;

use herd_core::{Error, ErrorCode};
use herd_protocol::layout::Artifacts;
use sha2::{Digest, Sha256};

/// The sources' entry; it imports the others by relative paths.
pub const ENTRY: &str = "herd-child.ts";

/// The bundle, as `cargo xtask docs` built it from [`SOURCES`].
pub const BUNDLE: &str = include_str!("../../../extension/dist/herd-child.js");

/// Where the bundle is, under `extension/`.
pub const BUNDLE_PATH: &str = "dist/herd-child.js";

/// The bundle's first line, naming the digest of the sources it was built from.
pub fn bundle_header(digest: &str) -> String {
    format!(
        "// herd's child extension, bundled from extension/herd-child.ts by `cargo xtask docs`; \
         sources sha256 {digest}"
    )
}

/// The bundle's sources by their path under `extension/`, the entry first. A test keeps the list
/// equal to the TypeScript files of `extension/` the child loads (its `*.test.ts` stay at home).
pub const SOURCES: &[(&str, &str)] = &[
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
        "src/child/steering.ts",
        include_str!("../../../extension/src/child/steering.ts"),
    ),
    (
        "src/child/tools.ts",
        include_str!("../../../extension/src/child/tools.ts"),
    ),
    (
        "src/child/widget.ts",
        include_str!("../../../extension/src/child/widget.ts"),
    ),
    // What the parent extension uses too: the one decoder of other processes' documents and
    // their shapes, the one process runner, the reading of a run's files, and the Pi Herd face's
    // worker files and result envelope.
    (
        "src/shared/decode.ts",
        include_str!("../../../extension/src/shared/decode.ts"),
    ),
    (
        "src/shared/formats.ts",
        include_str!("../../../extension/src/shared/formats.ts"),
    ),
    (
        "src/shared/process.ts",
        include_str!("../../../extension/src/shared/process.ts"),
    ),
    (
        "src/shared/runs.ts",
        include_str!("../../../extension/src/shared/runs.ts"),
    ),
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
    // The names of a run's files and a session's files, which they use to find them.
    (
        "src/generated/run-files.ts",
        include_str!("../../../extension/src/generated/run-files.ts"),
    ),
];

/// The environment variable naming an extension file to load instead.
pub const OVERRIDE_ENV: &str = "HERD_PI_EXTENSION";

/// The digest of every source's path and content, as this build embedded them.
pub fn sources_digest() -> String {
    digest_of(SOURCES.iter().copied())
}

/// The digest of `(path, content)` pairs, in [`SOURCES`]' order: what a bundle's first line names.
pub fn digest_of<'a>(sources: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut hasher = Sha256::new();
    for (path, text) in sources {
        hasher.update(path.as_bytes());
        hasher.update([0]);
        hasher.update(text.as_bytes());
        hasher.update([0]);
    }
    herd_protocol::launch::policy::hex(&hasher.finalize())
}

/// Returns the extension's entry file for a Pi child, installing the bundle when needed.
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
    if cfg!(debug_assertions) && !bundle_is_current() {
        // A development build whose sources changed since the bundle was built: the sources
        // themselves, so what is being changed is what runs (a test keeps the shipped bundle
        // current).
        return install_sources(artifacts);
    }
    // `.mjs`: Pi's loader (jiti) imports an ES module natively instead of compiling it, which a
    // confined child, whose temporary directory starts empty, would otherwise do at every start.
    let name = format!("herd-child-{}.mjs", &bundle_digest()[..16]);
    if let Some(dir) = user_dir(env) {
        if let Ok(path) = place(&dir, &name) {
            return Ok(path);
        }
    }
    place(&artifacts.root().join("extension"), &name)
}

/// Whether the bundle's first line names the digest of [`SOURCES`].
fn bundle_is_current() -> bool {
    BUNDLE.lines().next() == Some(bundle_header(&sources_digest()).as_str())
}

/// The sources in a content-addressed directory of the artifacts directory, the entry last: once
/// it exists, so does every module it imports.
fn install_sources(artifacts: &Artifacts) -> Result<PathBuf, Error> {
    let dir = artifacts
        .root()
        .join("extension")
        .join(format!("herd-child-{}", &sources_digest()[..16]));
    let entry = dir.join(ENTRY);
    if !entry.is_file() {
        for (path, text) in SOURCES.iter().skip(1).chain(SOURCES.iter().take(1)) {
            crate::files::create_once(&dir.join(path), text.as_bytes())?;
        }
    }
    Ok(entry)
}

/// The digest of the bundle itself, which names its file.
fn bundle_digest() -> String {
    herd_protocol::launch::policy::hex(&Sha256::digest(BUNDLE.as_bytes()))
}

/// `herd/extension` in the user's cache directory.
fn user_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |k: &str| env(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    let cache = set("XDG_CACHE_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| {
            set("HOME")
                .filter(|p| p.is_absolute())
                .map(|h| h.join(".cache"))
        })?;
    Some(cache.join("herd").join("extension"))
}

/// The bundle as `dir/name`: created once (private), and used only when it holds the bundle.
fn place(dir: &std::path::Path, name: &str) -> Result<PathBuf, Error> {
    let path = dir.join(name);
    if std::fs::read(&path).ok().as_deref() != Some(BUNDLE.as_bytes()) {
        herd_core::sidecar::ensure_private_dir(dir).map_err(|e| {
            Error::new(
                ErrorCode::Unavailable,
                format!("cannot create {}: {e}", dir.display()),
            )
        })?;
        crate::files::create_once(&path, BUNDLE.as_bytes())?;
        if std::fs::read(&path).ok().as_deref() != Some(BUNDLE.as_bytes()) {
            return Err(Error::new(
                ErrorCode::Unavailable,
                format!(
                    "{} holds something other than this herd's child extension",
                    path.display()
                ),
            ));
        }
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::path::Path;

    #[test]
    fn installs_the_bundle_once_per_user_and_never_another_file() {
        if !bundle_is_current() {
            // The sources are installed instead; the test below says why it fails.
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let art = Artifacts::new(dir.path().join("art"));
        let cache = dir.path().join("cache");
        let cache_text = cache.to_string_lossy().into_owned();
        let env = |k: &str| (k == "XDG_CACHE_HOME").then(|| cache_text.clone());
        let first = install(&art, &env).unwrap();
        assert!(first.starts_with(cache.join("herd/extension")), "{first:?}");
        assert_eq!(std::fs::read_to_string(&first).unwrap(), BUNDLE);
        // Another artifacts directory, the same file: what jiti compiled once stays compiled.
        let other = Artifacts::new(dir.path().join("art2"));
        assert_eq!(install(&other, &env).unwrap(), first);
        // A file in its place that is not the bundle is never loaded.
        std::fs::write(&first, "export default function () {}\n").unwrap();
        let fallback = install(&art, &env).unwrap();
        assert!(
            fallback.starts_with(dir.path().join("art/extension")),
            "{fallback:?}"
        );
        assert_eq!(std::fs::read_to_string(&fallback).unwrap(), BUNDLE);
        // Without a cache directory, the artifacts directory holds it.
        assert_eq!(install(&art, &|_| None).unwrap(), fallback);
        let dev = dir.path().join("dev.ts");
        std::fs::write(&dev, "export default function () {}\n").unwrap();
        let env = |k: &str| (k == OVERRIDE_ENV).then(|| dev.to_string_lossy().into_owned());
        assert_eq!(install(&art, &env).unwrap(), dev);
    }

    #[test]
    fn the_bundle_is_built_from_the_sources_of_this_tree() {
        let first = BUNDLE.lines().next().unwrap_or_default();
        assert_eq!(
            first,
            bundle_header(&sources_digest()),
            "extension/{BUNDLE_PATH} is not built from the current sources: run `cargo xtask docs`"
        );
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
    fn every_file_of_the_child_extension_is_a_source_of_the_bundle() {
        // The child's entry and its modules; the parent extension is a Pi package of its own
        // (`pi install extension/`), never loaded with `-e`.
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../extension");
        let mut found = vec!["herd-child.ts".to_owned()];
        sources(&root, &root.join("src/child"), &mut found);
        sources(&root, &root.join("src/shared"), &mut found);
        sources(&root, &root.join("src/generated"), &mut found);
        found.sort();
        let mut shipped: Vec<String> = SOURCES.iter().map(|(p, _)| (*p).to_owned()).collect();
        shipped.sort();
        assert_eq!(shipped, found, "list every file of extension/ in SOURCES");
    }
}
