//! The child extension's bundle, `extension/dist/herd-child.js`: `cargo xtask docs` builds it
//! from `extension/herd-child.ts` with the pinned esbuild (`extension/node_modules`, from `npm
//! ci`) when its first line does not name the digest of the sources on disk, and `--check`
//! refuses a bundle that is not built from them (which needs no Node). herd-launch embeds the
//! bundle and installs it for every Pi child (`herd_launch::extension`).

use std::path::Path;

use herd_launch::extension::{BUNDLE_PATH, ENTRY, SOURCES, bundle_header, digest_of};

/// esbuild's arguments after the entry: one ESM file for Node that imports nothing but Node's
/// own modules (typebox included; Pi's package is imported for its types only), so Node loads it
/// natively, as an `.mjs` file, and Pi's loader never has to compile it.
const ESBUILD_ARGS: &[&str] = &[
    "--bundle",
    "--format=esm",
    "--platform=node",
    "--target=node22",
    "--legal-comments=none",
    "--log-level=warning",
    "--external:@earendil-works/pi-coding-agent",
];

/// Builds (or with `check`, checks) the bundle; returns what it did, or why it cannot.
pub fn run(root: &Path, check: bool) -> Result<String, String> {
    let extension = root.join("extension");
    let bundle = extension.join(BUNDLE_PATH);
    // The sources as they are on disk now, not as this program embedded them: `cargo xtask
    // docs` has just regenerated some of them.
    let mut sources = Vec::with_capacity(SOURCES.len());
    for (path, _) in SOURCES {
        let text = std::fs::read_to_string(extension.join(path))
            .map_err(|e| format!("cannot read extension/{path}: {e}"))?;
        sources.push((*path, text));
    }
    let header = bundle_header(&digest_of(sources.iter().map(|(p, t)| (*p, t.as_str()))));
    let current = std::fs::read_to_string(&bundle).unwrap_or_default();
    if current.lines().next() == Some(header.as_str()) {
        return Ok(format!("extension/{BUNDLE_PATH} is up to date"));
    }
    if check {
        return Err(format!(
            "extension/{BUNDLE_PATH} is not built from the current sources: run `cargo xtask docs`"
        ));
    }
    let esbuild = extension.join("node_modules/.bin/esbuild");
    if !esbuild.is_file() {
        return Err(format!(
            "cannot build extension/{BUNDLE_PATH}: esbuild is not installed (run `npm ci` in \
             extension/)"
        ));
    }
    let scratch = tempfile::tempdir_in(&extension).map_err(|e| e.to_string())?;
    let out = scratch.path().join("herd-child.js");
    let mut outfile = std::ffi::OsString::from("--outfile=");
    outfile.push(&out);
    let cmd = herd_core::subprocess::Command::new(&esbuild, std::time::Duration::from_secs(120))
        .cwd(&extension)
        .arg(ENTRY)
        .args(ESBUILD_ARGS.iter().copied())
        .arg(outfile)
        .stdin_null();
    let ran = herd_core::subprocess::run(&cmd).map_err(|e| e.to_string())?;
    if !ran.success() {
        return Err(format!("esbuild failed: {}", ran.stderr.text().trim()));
    }
    let body = std::fs::read_to_string(&out).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(bundle.parent().unwrap_or(&extension)).map_err(|e| e.to_string())?;
    std::fs::write(&bundle, format!("{header}\n{body}")).map_err(|e| e.to_string())?;
    Ok(format!(
        "built extension/{BUNDLE_PATH}; rebuild herd-launch to ship it"
    ))
}
