//! The description of a worktree's setup, read from the source checkout before anything is
//! created: the committed project file `.herd/worktree.toml`, the user's own file for the same
//! repository (`<config>/herd/worktrees/<repo>-<hash>.toml`, same keys) and `.worktreeinclude`
//! (gitignore syntax: ignored files to copy).
//!
//! Every read is bounded, every key is known (an unknown one is an error naming the file and the
//! key), and every path is checked: an absolute path, a `..` component or a pattern that could
//! match outside the repository is refused before anything exists. Only the user's own file may
//! name a link source outside the repository (an absolute `path`).

use std::path::{Component, Path, PathBuf};

use herd_core::{Error, ErrorCode};
use serde::Deserialize;
use sha2::{Digest, Sha256};

/// The committed project file, relative to the principal checkout.
pub const PROJECT_FILE: &str = ".herd/worktree.toml";
/// Claude Code's list of ignored files to copy, relative to the principal checkout.
pub const INCLUDE_FILE: &str = ".worktreeinclude";
/// The bound of every setup file read.
pub const READ_LIMIT: u64 = 64 * 1024;
/// The most entries of one list (`copy`, `setup`, `background`, `[[link]]`).
pub const MAX_ENTRIES: usize = 256;
/// The longest entry (a pattern, a path, a command).
pub const MAX_ENTRY_CHARS: usize = 4096;
/// A setup command's budget when the file names none.
pub const DEFAULT_SETUP_BUDGET_SECS: u64 = 300;
/// The largest `setup_budget` a file may ask for.
pub const MAX_SETUP_BUDGET_SECS: u64 = 3600;

/// Where a setup file comes from, which decides what it may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `.herd/worktree.toml`, committed: its commands and links need trust and approval.
    Project,
    /// The user's own file: honoured as it is, and alone may reach outside the repository.
    User,
    /// `.worktreeinclude`: ignored files to copy, honoured as it is.
    Include,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Project => "project",
            Origin::User => "user",
            Origin::Include => "worktreeinclude",
        }
    }
}

/// How a `[[link]]` brings an ignored directory over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// One symlink to the source's directory.
    Symlink,
    /// A tree of hard links (`cp -al`): directories made, files linked.
    #[default]
    Hardlink,
    /// A copy sharing blocks where the filesystem can; a plain copy where it cannot.
    Reflink,
    /// A plain copy.
    Copy,
}

impl Strategy {
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Symlink => "symlink",
            Strategy::Hardlink => "hardlink",
            Strategy::Reflink => "reflink",
            Strategy::Copy => "copy",
        }
    }
}

/// One `[[link]]` table.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    /// The ignored directory (or file), relative to the checkout root.
    pub path: String,
    #[serde(default)]
    pub strategy: Strategy,
    /// A file, relative to the root, that must be byte-identical in the source and the new
    /// worktree for the link to be made; otherwise `install` runs instead.
    #[serde(default)]
    pub when: Option<String>,
    /// Run in the new worktree when `when` differs.
    #[serde(default)]
    pub install: Option<String>,
}

/// The keys of a setup file (`.herd/worktree.toml` or the user's own).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Ignored files to copy, gitignore patterns relative to the root.
    #[serde(default)]
    pub copy: Vec<String>,
    /// Commands run (`sh -c`) in the new worktree before the child starts.
    #[serde(default)]
    pub setup: Vec<String>,
    /// Commands started detached beside the child.
    #[serde(default)]
    pub background: Vec<String>,
    #[serde(default)]
    pub link: Vec<Link>,
    /// The budget of each setup and install command, in seconds.
    #[serde(default)]
    pub setup_budget: Option<u64>,
}

/// A setup file as read: where, its exact bytes' SHA-256, and its keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded {
    pub origin: Origin,
    pub file: PathBuf,
    pub sha256: String,
    /// The exact content whose SHA-256 is `sha256`, what an approval shows.
    pub text: String,
    pub spec: Spec,
}

/// Everything the source checkout and the user say about setting up a new worktree of it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Description {
    pub project: Option<Loaded>,
    pub user: Option<Loaded>,
    /// The patterns of `.worktreeinclude`, comments and blank lines dropped.
    pub include: Vec<String>,
    pub include_file: Option<PathBuf>,
}

impl Description {
    /// Whether nothing at all is described.
    pub fn is_empty(&self) -> bool {
        self.project.is_none() && self.user.is_none() && self.include.is_empty()
    }
}

/// The user's configuration directory of herd: `$XDG_CONFIG_HOME/herd`, else `~/.config/herd`.
pub fn config_dir() -> Result<PathBuf, Error> {
    let set = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(dir) = set("XDG_CONFIG_HOME") {
        return Ok(PathBuf::from(dir).join("herd"));
    }
    if let Some(home) = set("HOME") {
        return Ok(PathBuf::from(home).join(".config/herd"));
    }
    Err(Error::new(
        ErrorCode::Unavailable,
        "no configuration directory for herd: set XDG_CONFIG_HOME or HOME",
    ))
}

/// The name by which the user's files know a repository: `<dir name>-<16 hex of the SHA-256 of
/// the principal checkout's canonical path>`.
pub fn repo_key(principal: &Path) -> String {
    let canonical = std::fs::canonicalize(principal).unwrap_or_else(|_| principal.to_path_buf());
    let digest = Sha256::digest(canonical.as_os_str().as_encoded_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let name: String = canonical
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    format!("{name}-{hex}")
}

/// The user's own setup file of the repository at `principal`:
/// `<config>/herd/worktrees/<repo key>.toml`.
pub fn user_file(config: &Path, principal: &Path) -> PathBuf {
    config
        .join("worktrees")
        .join(format!("{}.toml", repo_key(principal)))
}

/// Reads the description of the checkout at `principal` (the principal checkout), with the
/// user's files under `config`; `None` for `config` reads no user file.
pub fn load(principal: &Path, config: Option<&Path>) -> Result<Description, Error> {
    let project = load_file(&principal.join(PROJECT_FILE), Origin::Project)?;
    let user = match config {
        Some(config) => load_file(&user_file(config, principal), Origin::User)?,
        None => None,
    };
    let include_path = principal.join(INCLUDE_FILE);
    let (include, include_file) = match read(&include_path)? {
        Some(bytes) => {
            let text = utf8(&include_path, bytes)?;
            let mut patterns = Vec::new();
            for line in text.lines() {
                let line = line.trim_end();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                check_pattern(&include_path, "pattern", line, true)?;
                patterns.push(line.to_owned());
            }
            check_count(&include_path, "pattern", patterns.len())?;
            (patterns, Some(include_path))
        }
        None => (Vec::new(), None),
    };
    Ok(Description {
        project,
        user,
        include,
        include_file,
    })
}

/// The SHA-256 of `bytes` in hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn read(path: &Path) -> Result<Option<Vec<u8>>, Error> {
    // A setup file that is a symlink is read through it only when it stays a regular file.
    herd_core::sidecar::read_given(path, READ_LIMIT).map_err(|e| {
        Error::invalid(
            "setup",
            format!("cannot read the setup file {}: {e}", path.display()),
        )
    })
}

fn utf8(path: &Path, bytes: Vec<u8>) -> Result<String, Error> {
    String::from_utf8(bytes).map_err(|_| {
        Error::invalid(
            "setup",
            format!("the setup file {} is not UTF-8", path.display()),
        )
    })
}

fn load_file(path: &Path, origin: Origin) -> Result<Option<Loaded>, Error> {
    let Some(bytes) = read(path)? else {
        return Ok(None);
    };
    if path.is_dir() {
        return Err(Error::invalid(
            "setup",
            format!("the setup file {} is a directory", path.display()),
        ));
    }
    let sha256 = sha256_hex(&bytes);
    let text = utf8(path, bytes)?;
    let spec: Spec = toml::from_str(&text).map_err(|e| {
        let why = e.message().trim_end().to_owned();
        Error::invalid(
            "setup",
            format!("the setup file {} is invalid: {why}", path.display()),
        )
    })?;
    check_spec(path, origin, &spec)?;
    Ok(Some(Loaded {
        origin,
        file: path.to_path_buf(),
        sha256,
        text,
        spec,
    }))
}

fn refuse(file: &Path, key: &str, why: String) -> Error {
    Error::invalid(
        "setup",
        format!("the setup file {}: {key}: {why}", file.display()),
    )
}

fn check_count(file: &Path, key: &str, n: usize) -> Result<(), Error> {
    if n > MAX_ENTRIES {
        return Err(refuse(
            file,
            key,
            format!("{n} entries; at most {MAX_ENTRIES}"),
        ));
    }
    Ok(())
}

fn check_text(file: &Path, key: &str, value: &str) -> Result<(), Error> {
    if value.trim().is_empty() {
        return Err(refuse(file, key, "an empty entry".into()));
    }
    if value.chars().count() > MAX_ENTRY_CHARS || value.contains('\0') {
        return Err(refuse(
            file,
            key,
            format!("an entry is at most {MAX_ENTRY_CHARS} characters without NUL"),
        ));
    }
    Ok(())
}

/// A copy pattern: gitignore syntax relative to the root. An absolute path, a `..` component and
/// a leading `~` are refused; a leading `/` anchors a `.worktreeinclude` pattern at the root as
/// gitignore does (`anchor_ok`), and is refused in `copy`, whose entries are relative already.
fn check_pattern(file: &Path, key: &str, pattern: &str, anchor_ok: bool) -> Result<(), Error> {
    check_text(file, key, pattern)?;
    if pattern.contains('\n') {
        return Err(refuse(file, key, "a pattern is one line".into()));
    }
    let body = pattern.strip_prefix('!').unwrap_or(pattern);
    if body.starts_with('/') && !anchor_ok {
        return Err(refuse(
            file,
            key,
            format!("{pattern:?} is an absolute path; patterns are relative to the repository"),
        ));
    }
    if body.starts_with('~') {
        return Err(refuse(
            file,
            key,
            format!("{pattern:?} names a home directory; patterns are relative to the repository"),
        ));
    }
    if body.split(['/', '\\']).any(|c| c == "..") {
        return Err(refuse(
            file,
            key,
            format!("{pattern:?} climbs out of the repository with \"..\""),
        ));
    }
    Ok(())
}

/// A path relative to the root: no `..`, not absolute, not the root itself.
fn check_relative(file: &Path, key: &str, path: &str) -> Result<(), Error> {
    check_text(file, key, path)?;
    let p = Path::new(path);
    if p.is_absolute() {
        return Err(refuse(
            file,
            key,
            format!(
                "{path:?} is an absolute path; only your own file may reach outside the repository"
            ),
        ));
    }
    let mut normal = 0;
    for c in p.components() {
        match c {
            Component::Normal(_) => normal += 1,
            Component::CurDir => {}
            _ => {
                return Err(refuse(
                    file,
                    key,
                    format!("{path:?} climbs out of the repository with \"..\""),
                ));
            }
        }
    }
    if normal == 0 {
        return Err(refuse(
            file,
            key,
            format!("{path:?} is the repository itself"),
        ));
    }
    if p.components().next() == Some(Component::Normal(".git".as_ref())) {
        return Err(refuse(file, key, format!("{path:?} is inside .git")));
    }
    Ok(())
}

fn check_spec(file: &Path, origin: Origin, spec: &Spec) -> Result<(), Error> {
    check_count(file, "copy", spec.copy.len())?;
    check_count(file, "setup", spec.setup.len())?;
    check_count(file, "background", spec.background.len())?;
    check_count(file, "link", spec.link.len())?;
    for pattern in &spec.copy {
        check_pattern(file, "copy", pattern, false)?;
    }
    for command in spec.setup.iter().chain(&spec.background) {
        check_text(file, "setup", command)?;
    }
    if let Some(secs) = spec.setup_budget {
        if secs == 0 || secs > MAX_SETUP_BUDGET_SECS {
            return Err(refuse(
                file,
                "setup_budget",
                format!("{secs}: 1 to {MAX_SETUP_BUDGET_SECS} seconds"),
            ));
        }
    }
    for link in &spec.link {
        let outside_ok = origin == Origin::User && Path::new(&link.path).is_absolute();
        if outside_ok {
            check_text(file, "link.path", &link.path)?;
            if Path::new(&link.path).file_name().is_none()
                || Path::new(&link.path)
                    .components()
                    .any(|c| c == Component::ParentDir)
            {
                return Err(refuse(
                    file,
                    "link.path",
                    format!("{:?} names no directory", link.path),
                ));
            }
        } else {
            check_relative(file, "link.path", &link.path)?;
        }
        if let Some(when) = &link.when {
            check_relative(file, "link.when", when)?;
        }
        if let Some(install) = &link.install {
            check_text(file, "link.install", install)?;
        }
    }
    Ok(())
}
