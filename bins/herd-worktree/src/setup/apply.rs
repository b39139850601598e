//! Doing a [`SetupPlan`] in a new checkout.
//!
//! Nothing is written outside the checkout: every destination is created component by
//! component below its root, and an existing component that is a symlink (a committed link into
//! elsewhere) refuses that entry. Trees are walked without following symlinks, which are
//! recreated as symlinks.

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use herd_core::subprocess::{self, Command, Detached, Keep};
use herd_core::{Error, ErrorCode};
use herd_protocol::worktree::manifest::{BackgroundCommand, SetupEntry, SetupKind, SetupRecord};

use super::config::Strategy;
use super::{CommandItem, SetupPlan};

/// The most bytes of each stream of one command kept in the setup log.
pub const LOG_STREAM_CAP: usize = 256 * 1024;
/// The most bytes of the setup log quoted in a failure.
pub const TAIL_BYTES: u64 = 2048;

/// The variables every setup command gets, besides the inherited environment.
#[derive(Debug, Clone)]
pub struct CommandEnv {
    pub worktree: PathBuf,
    pub source_root: PathBuf,
    pub branch: String,
    pub run_id: String,
    pub port: Option<u16>,
    /// `logs/<id>.setup.log`.
    pub log: PathBuf,
    /// `logs/<id>.background.log`.
    pub background_log: PathBuf,
    /// The sandbox the commands run in (`bwrap … --`), the child's; empty: unconfined.
    pub sandbox: Vec<OsString>,
}

impl CommandEnv {
    /// `sh` with `args`, in the sandbox when there is one: the program and its arguments.
    fn shell(&self, args: Vec<OsString>) -> (OsString, Vec<OsString>) {
        match self.sandbox.split_first() {
            Some((program, rest)) => {
                let mut all = rest.to_vec();
                all.push("sh".into());
                all.extend(args);
                (program.clone(), all)
            }
            None => ("sh".into(), args),
        }
    }
}

impl CommandEnv {
    fn vars(&self) -> Vec<(OsString, OsString)> {
        let mut vars: Vec<(OsString, OsString)> = vec![
            ("HERD_WORKTREE_PATH".into(), self.worktree.clone().into()),
            ("HERD_SOURCE_ROOT".into(), self.source_root.clone().into()),
            ("HERD_BRANCH".into(), self.branch.clone().into()),
            ("HERD_RUN_ID".into(), self.run_id.clone().into()),
        ];
        if let Some(port) = self.port {
            vars.push(("HERD_PORT".into(), port.to_string().into()));
        }
        vars
    }
}

/// What setup did, and the failure that stopped it if one did.
#[derive(Debug, Clone, Default)]
pub struct Applied {
    pub record: SetupRecord,
    pub error: Option<Error>,
}

/// Does `plan` in the checkout `env.worktree`. A failed setup command stops it: the record
/// holds what was made before, and the error the log's tail (`unavailable`, exit 4).
pub fn apply(plan: &SetupPlan, env: &CommandEnv) -> Applied {
    let mut applied = Applied::default();
    applied.record.port = env.port;
    applied.record.started_at = Some(herd_core::time::now_ms());
    applied.record.skipped.clone_from(&plan.skipped);
    let root = &env.worktree;
    let source_root = &env.source_root;
    for item in &plan.copies {
        let source = source_root.join(&item.rel);
        match bring(&source, root, &item.rel, Strategy::Copy) {
            Ok(Made::Done(_)) => applied.record.entries.push(SetupEntry {
                path: item.rel.clone(),
                kind: SetupKind::Copy,
                source: Some(source),
            }),
            Ok(Made::Skipped(why)) | Err(why) => applied
                .record
                .skipped
                .push(format!("copy of {}: {why}", item.rel)),
        }
    }
    for link in &plan.links {
        let identical = match &link.when {
            None => Ok(true),
            Some(when) => same_bytes(&source_root.join(when), &root.join(when)),
        };
        match identical {
            Ok(true) => match bring(&link.source, root, &link.dest, link.strategy) {
                Ok(Made::Done(kind)) => applied.record.entries.push(SetupEntry {
                    path: link.dest.clone(),
                    kind,
                    source: Some(link.source.clone()),
                }),
                Ok(Made::Skipped(why)) | Err(why) => applied
                    .record
                    .skipped
                    .push(format!("link of {}: {why}", link.dest)),
            },
            Ok(false) => {
                let when = link.when.as_deref().unwrap_or_default();
                match &link.install {
                    Some(install) => {
                        let item = CommandItem {
                            command: install.clone(),
                            origin: link.origin,
                        };
                        if let Err(e) = run_setup(&item, env, plan.budget) {
                            applied.error = Some(e);
                            return applied;
                        }
                        applied.record.entries.push(SetupEntry {
                            path: link.dest.clone(),
                            kind: SetupKind::Install,
                            source: None,
                        });
                        applied.record.log = Some(env.log.clone());
                    }
                    None => applied.record.skipped.push(format!(
                        "link of {}: {when} differs from the source's and no install is given",
                        link.dest
                    )),
                }
            }
            Err(why) => applied
                .record
                .skipped
                .push(format!("link of {}: {why}", link.dest)),
        }
    }
    for item in &plan.setup {
        applied.record.log = Some(env.log.clone());
        if let Err(e) = run_setup(item, env, plan.budget) {
            applied.error = Some(e);
            return applied;
        }
    }
    for item in &plan.background {
        match start_background(item, env) {
            Ok(pid) => {
                applied.record.background_pids.push(pid);
                // Its identity, taken at once (it leads its own session): cleanup stops it, and
                // everything it started, only as this process.
                match herd_core::identity::capture(pid, &env.run_id, &env.background_log) {
                    Ok(id) => applied.record.background.push(BackgroundCommand {
                        command: item.command.clone(),
                        pid,
                        start_time: id.start_time.to_string(),
                        boot_id: id.boot_id,
                        pid_namespace: id.pid_namespace,
                    }),
                    // Gone already: nothing of it is left to stop.
                    Err(herd_core::identity::Error::NoSuchProcess { .. }) => {}
                    Err(e) => applied.record.skipped.push(format!(
                        "the identity of background command {:?} (process {pid}): {e}; cleanup cannot tell it as the worktree's own",
                        item.command
                    )),
                }
            }
            Err(e) => applied
                .record
                .skipped
                .push(format!("background command {:?}: {e}", item.command)),
        }
    }
    applied
}

enum Made {
    Done(SetupKind),
    Skipped(String),
}

/// Whether two files have the same bytes; a missing file differs from everything. Either may
/// come from a commit the request chose, so neither is opened unless it is a regular file.
fn same_bytes(a: &Path, b: &Path) -> Result<bool, String> {
    let (Some(mut fa), Some(mut fb)) = (open_regular(a)?, open_regular(b)?) else {
        return Ok(false);
    };
    let (ma, mb) = (
        fa.metadata().map_err(|e| e.to_string())?,
        fb.metadata().map_err(|e| e.to_string())?,
    );
    if !ma.is_file() || !mb.is_file() || ma.len() != mb.len() {
        return Ok(false);
    }
    let mut ba = vec![0u8; 64 * 1024];
    let mut bb = vec![0u8; 64 * 1024];
    loop {
        let n = fa.read(&mut ba).map_err(|e| e.to_string())?;
        if n == 0 {
            return Ok(true);
        }
        fb.read_exact(&mut bb[..n]).map_err(|e| e.to_string())?;
        if ba[..n] != bb[..n] {
            return Ok(false);
        }
    }
}

/// Opens a file of a checkout for reading without ever waiting: only what is a regular file
/// (through symlinks) is opened, without blocking (`O_NONBLOCK`), and it is checked again once
/// open; anything else (a FIFO, a device, a socket, a directory) is refused. `Ok(None)` when
/// nothing is there.
///
/// A plain open of a FIFO waits for a writer, forever if none comes, and a commit can put a
/// symlink to one where a file belongs.
fn open_regular(path: &Path) -> Result<Option<std::fs::File>, String> {
    let not_regular = || format!("{} is not a regular file", path.display());
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => {}
        Ok(_) => return Err(not_regular()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    }
    let file = match herd_core::sidecar::open_given(path) {
        Ok(Some(file)) => file,
        Ok(None) => return Ok(None),
        Err(herd_core::sidecar::Error::NotAFile { .. }) => return Err(not_regular()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    match file.metadata() {
        Ok(m) if m.is_file() => Ok(Some(file)),
        Ok(_) => Err(not_regular()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Copies the regular file `source` (not followed if it is a symlink) to `dest`, which must not
/// exist, with its mode. The source is opened without waiting and refused if it is no longer a
/// regular file (replaced by a FIFO since it was listed).
fn copy_regular(source: &Path, dest: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut from = match herd_core::sidecar::open_file(source) {
        Ok(Some(file)) => file,
        Ok(None) => return Err(std::io::ErrorKind::NotFound.into()),
        Err(e) => return Err(std::io::Error::other(e.to_string())),
    };
    let meta = from.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut to = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(dest)?;
    std::io::copy(&mut from, &mut to)?;
    std::fs::set_permissions(dest, std::fs::Permissions::from_mode(meta.mode() & 0o7777))
}

/// Makes the parent directories of `rel` below `root`, refusing any existing component that is
/// not a real directory, and returns the destination (which must not exist yet).
fn destination(root: &Path, rel: &str) -> Result<PathBuf, String> {
    let rel = Path::new(rel);
    let mut at = root.to_path_buf();
    let parts: Vec<_> = rel.components().collect();
    let Some((last, parents)) = parts.split_last() else {
        return Err("an empty path".into());
    };
    for part in parents {
        let Component::Normal(name) = part else {
            return Err("a path that is not plain".into());
        };
        at.push(name);
        match at.symlink_metadata() {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(format!(
                    "{} in the new worktree is not a directory of its own (a symlink or a file)",
                    at.display()
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir(&at)
                    .map_err(|e| format!("cannot create {}: {e}", at.display()))?;
            }
            Err(e) => return Err(format!("cannot read {}: {e}", at.display())),
        }
    }
    let Component::Normal(name) = last else {
        return Err("a path that is not plain".into());
    };
    at.push(name);
    if at.symlink_metadata().is_ok() {
        return Err(format!("{} is already in the new worktree", at.display()));
    }
    Ok(at)
}

/// Brings `source` to `rel` below `root` by `strategy`.
fn bring(source: &Path, root: &Path, rel: &str, strategy: Strategy) -> Result<Made, String> {
    let meta = match source.symlink_metadata() {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Made::Skipped(format!(
                "{} does not exist",
                source.display()
            )));
        }
        Err(e) => return Err(format!("cannot read {}: {e}", source.display())),
    };
    let kind = meta.file_type();
    if !kind.is_file() && !kind.is_dir() && !kind.is_symlink() {
        return Ok(Made::Skipped(format!(
            "{} is not a regular file, a directory or a symlink",
            source.display()
        )));
    }
    let dest = destination(root, rel)?;
    match strategy {
        Strategy::Symlink => {
            std::os::unix::fs::symlink(source, &dest)
                .map_err(|e| format!("cannot link {}: {e}", dest.display()))?;
            Ok(Made::Done(SetupKind::Symlink))
        }
        Strategy::Hardlink => {
            tree(source, &dest, meta.file_type(), Leaf::HardLink)?;
            Ok(Made::Done(SetupKind::Hardlink))
        }
        Strategy::Copy => {
            tree(source, &dest, meta.file_type(), Leaf::Copy)?;
            Ok(Made::Done(SetupKind::Copy))
        }
        Strategy::Reflink => {
            if reflink_copy(source, &dest) {
                return Ok(Made::Done(SetupKind::Reflink));
            }
            // No reflink here (ext4, tmpfs): a plain copy, recorded as one.
            if dest.symlink_metadata().is_ok() {
                let _ = std::fs::remove_dir_all(&dest).or_else(|_| std::fs::remove_file(&dest));
            }
            tree(source, &dest, meta.file_type(), Leaf::Copy)?;
            Ok(Made::Done(SetupKind::Copy))
        }
    }
}

/// `cp -a --reflink=always`; false when the filesystem cannot (or cp is not GNU's).
fn reflink_copy(source: &Path, dest: &Path) -> bool {
    let cmd = Command::new("cp", Duration::from_secs(600))
        .args([
            OsString::from("-a"),
            "--reflink=always".into(),
            "--".into(),
            source.into(),
            dest.into(),
        ])
        .stdin_null()
        .stdout_cap(4096, Keep::Tail)
        .stderr_cap(4096, Keep::Tail);
    subprocess::run(&cmd).is_ok_and(|out| out.success())
}

#[derive(Clone, Copy)]
enum Leaf {
    HardLink,
    Copy,
}

/// Recreates `source` (of type `kind`, not followed) at `dest`: directories made with their
/// mode, symlinks recreated, files hard-linked or copied; sockets, FIFOs and devices skipped.
/// The type of a directory's entries comes from the listing itself, so a file costs no `lstat`,
/// and a file is hard-linked by its name relative to the two directories, opened once each.
fn tree(source: &Path, dest: &Path, kind: std::fs::FileType, leaf: Leaf) -> Result<(), String> {
    let fail =
        |what: &str, p: &Path, e: std::io::Error| format!("cannot {what} {}: {e}", p.display());
    if kind.is_symlink() {
        let target = std::fs::read_link(source).map_err(|e| fail("read", source, e))?;
        std::os::unix::fs::symlink(&target, dest).map_err(|e| fail("create", dest, e))?;
    } else if kind.is_dir() {
        std::fs::create_dir(dest).map_err(|e| fail("create", dest, e))?;
        let entries = std::fs::read_dir(source).map_err(|e| fail("read", source, e))?;
        // The two directories, for linking their files by name (not through a symlink).
        let dirs = match leaf {
            Leaf::HardLink => Some((
                at::open_dir(source).map_err(|e| fail("open", source, e))?,
                at::open_dir(dest).map_err(|e| fail("open", dest, e))?,
            )),
            Leaf::Copy => None,
        };
        for entry in entries {
            let entry = entry.map_err(|e| fail("read", source, e))?;
            let kind = entry
                .file_type()
                .map_err(|e| fail("read", &entry.path(), e))?;
            match &dirs {
                Some((from, to)) if kind.is_file() => {
                    let name = entry.file_name();
                    at::hard_link(from, to, &name)
                        .map_err(|e| fail("link", &dest.join(&name), e))?;
                }
                _ => tree(&entry.path(), &dest.join(entry.file_name()), kind, leaf)?,
            }
        }
        let mode = std::fs::symlink_metadata(source)
            .map_err(|e| fail("read", source, e))?
            .mode();
        std::fs::set_permissions(dest, std::fs::Permissions::from_mode(mode & 0o7777))
            .map_err(|e| fail("set the mode of", dest, e))?;
    } else if kind.is_file() {
        match leaf {
            Leaf::HardLink => {
                std::fs::hard_link(source, dest).map_err(|e| fail("link", dest, e))?
            }
            Leaf::Copy => {
                copy_regular(source, dest).map_err(|e| fail("copy", source, e))?;
            }
        }
    }
    Ok(())
}

/// Hard links by name within open directories (`linkat`), which spares the kernel a walk of
/// both full paths for every file of a tree.
mod at {
    use std::ffi::{CString, OsStr};
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    fn c(bytes: &[u8]) -> io::Result<CString> {
        CString::new(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
    }

    /// Opens the directory `path` for `linkat`; a symlink in its place is refused.
    pub fn open_dir(path: &Path) -> io::Result<OwnedFd> {
        let path = c(path.as_os_str().as_bytes())?;
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: a NUL-terminated path; the descriptor returned is owned here alone.
        let fd = unsafe { libc::open(path.as_ptr(), flags) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just opened and nothing else owns it.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// Links the file `name` of the directory `from` as `name` in the directory `to`, not
    /// following it if it is a symlink.
    pub fn hard_link(from: &OwnedFd, to: &OwnedFd, name: &OsStr) -> io::Result<()> {
        let name = c(name.as_bytes())?;
        // SAFETY: two open directory descriptors and a NUL-terminated name; flags 0 never
        // follows a symlink.
        let rc = unsafe {
            libc::linkat(
                from.as_raw_fd(),
                name.as_ptr(),
                to.as_raw_fd(),
                name.as_ptr(),
                0,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// Runs one setup (or install) command in the worktree within `budget`, appending its output
/// to the setup log; a failure is `unavailable` (exit 4) with the log's tail.
fn run_setup(item: &CommandItem, env: &CommandEnv, budget: Duration) -> Result<(), Error> {
    let (program, args) = env.shell(vec!["-c".into(), item.command.as_str().into()]);
    let mut cmd = Command::new(program, budget)
        .args(args)
        .cwd(&env.worktree)
        .stdin_null()
        .stdout_cap(LOG_STREAM_CAP, Keep::Tail)
        .stderr_cap(LOG_STREAM_CAP, Keep::Tail);
    for (k, v) in env.vars() {
        cmd = cmd.env(k, v);
    }
    let out = subprocess::run(&cmd);
    let mut log = format!(
        "$ {}   # from the {} file\n",
        item.command,
        item.origin.as_str()
    );
    let verdict = match &out {
        Ok(out) => {
            for (name, stream) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
                if stream.truncated {
                    log.push_str(&format!(
                        "[{name}: {} bytes, the last {} kept]\n",
                        stream.total,
                        stream.bytes.len()
                    ));
                }
                log.push_str(&stream.text());
                if !stream.bytes.is_empty() && !stream.bytes.ends_with(b"\n") {
                    log.push('\n');
                }
            }
            if out.timed_out {
                Err(format!("timed out after {} s", budget.as_secs()))
            } else if out.success() {
                Ok(())
            } else {
                Err(match (out.code, out.signal) {
                    (Some(code), _) => format!("exited {code}"),
                    (_, Some(sig)) => format!("killed by signal {sig}"),
                    _ => "failed".to_owned(),
                })
            }
        }
        Err(e) => Err(format!("could not start: {e}")),
    };
    if let Err(why) = &verdict {
        log.push_str(&format!("[{why}]\n"));
    }
    let written = append_log(&env.log, &log);
    match verdict {
        Ok(()) => written,
        Err(why) => {
            let tail = herd_core::sidecar::read_tail_lines(&env.log, TAIL_BYTES)
                .ok()
                .flatten()
                .unwrap_or_default();
            Err(Error::new(
                ErrorCode::Unavailable,
                format!(
                    "the setup command {:?} {why}; the end of {}:\n{}",
                    item.command,
                    env.log.display(),
                    tail.trim_end()
                ),
            )
            .with_field("setup"))
        }
    }
}

fn append_log(path: &Path, text: &str) -> Result<(), Error> {
    use std::io::Write;
    if let Some(dir) = path.parent() {
        herd_core::sidecar::ensure_private_dir(dir)?;
    }
    let mut file = herd_core::sidecar::private()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| {
            Error::new(
                ErrorCode::Unavailable,
                format!("cannot open {}: {e}", path.display()),
            )
        })?;
    file.write_all(text.as_bytes()).map_err(|e| {
        Error::new(
            ErrorCode::Unavailable,
            format!("cannot write {}: {e}", path.display()),
        )
    })
}

/// How a background command is started: `sh -c COMMAND` with its stdout and stderr piped into
/// `herd-worktree background-log`, which keeps `logs/<id>.background.log` bounded
/// ([`super::log`]). The outer shell leads the session and the process group of both.
const BACKGROUND_SCRIPT: &str = r#"sh -c "$1" 2>&1 | "$2" background-log --path "$3""#;

/// Starts a background command detached in the worktree, its output appended to
/// `logs/<id>.background.log` through the bounded writer; returns at once.
fn start_background(item: &CommandItem, env: &CommandEnv) -> Result<u32, Error> {
    if let Some(dir) = env.background_log.parent() {
        herd_core::sidecar::ensure_private_dir(dir)?;
    }
    let writer = subprocess::sibling_binary("herd-worktree");
    if !writer.is_file() {
        return Err(Error::new(
            ErrorCode::Unavailable,
            format!(
                "cannot find {}, which keeps its log bounded",
                writer.display()
            ),
        ));
    }
    let (program, args) = env.shell(vec![
        OsString::from("-c"),
        BACKGROUND_SCRIPT.into(),
        "herd-background".into(),
        item.command.as_str().into(),
        writer.into(),
        env.background_log.clone().into(),
    ]);
    let mut cmd = Detached::new(program, &env.background_log, &env.background_log)
        .args(args)
        .cwd(&env.worktree);
    for (k, v) in env.vars() {
        cmd = cmd.env(k, v);
    }
    subprocess::spawn_detached(&cmd).map_err(|e| Error::new(e.code(), e.to_string()))
}
