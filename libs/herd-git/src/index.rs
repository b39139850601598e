//! The gitlinks (submodule entries) of a checkout's index, read in process.
//!
//! `git submodule status` is a shell script that starts a dozen processes per call; what
//! cleanup needs from it is which submodule paths the index records. The index format
//! (versions 2 to 4) is read here for exactly that: the mode, stage and path of each entry.
//! A form this reader does not cover (a split or sparse index, an unknown version or hash size,
//! anything malformed) is [`Gitlinks::Unreadable`], never an empty answer: the caller then asks
//! git.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

/// The largest index read in process; a bigger one is left to git.
const MAX_INDEX_BYTES: u64 = 256 * 1024 * 1024;

/// The file mode git records for a gitlink.
const GITLINK: u32 = 0o160000;
/// The file mode of a sparse directory entry.
const DIRECTORY: u32 = 0o040000;
const TYPE_MASK: u32 = 0o170000;

/// One gitlink of the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gitlink {
    pub path: PathBuf,
    /// Whether the entry is in conflict (recorded at a stage other than 0).
    pub conflicted: bool,
}

/// What the index says about submodules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gitlinks {
    /// The gitlink entries, each path once, in index order.
    Paths(Vec<Gitlink>),
    /// The index is in a form this reader does not cover; the reason says which.
    Unreadable(String),
}

/// Reads the gitlinks of the index in `git_dir` (a checkout's own git directory), whose object
/// ids are `hash_len` bytes (20 for SHA-1, 32 for SHA-256). A missing index records nothing.
pub fn gitlinks(git_dir: &Path, hash_len: usize) -> Gitlinks {
    let path = git_dir.join("index");
    let bytes = match read_bounded(&path) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Gitlinks::Paths(Vec::new()),
        Err(reason) => return Gitlinks::Unreadable(reason),
    };
    match parse(&bytes, hash_len) {
        Ok(paths) => Gitlinks::Paths(paths),
        Err(reason) => Gitlinks::Unreadable(reason),
    }
}

/// Reads the index without ever waiting: a FIFO, a device or a symlink in its place (a child
/// can write there) is unreadable, never opened in a way that blocks.
fn read_bounded(path: &Path) -> Result<Option<Vec<u8>>, String> {
    match herd_core::sidecar::read_bounded(path, MAX_INDEX_BYTES) {
        Ok(bytes) => Ok(bytes),
        Err(herd_core::sidecar::Error::TooLarge { .. }) => {
            Err("the index is larger than this reader reads".into())
        }
        Err(e) => Err(format!("cannot read the index: {e}")),
    }
}

/// The gitlink paths of an index file's bytes.
fn parse(bytes: &[u8], hash_len: usize) -> Result<Vec<Gitlink>, String> {
    if hash_len != 20 && hash_len != 32 {
        return Err(format!("an object id of {hash_len} bytes"));
    }
    let mut r = Reader { bytes, at: 0 };
    if r.take(4)? != b"DIRC" {
        return Err("not an index file (no DIRC signature)".into());
    }
    let version = r.u32()?;
    if !(2..=4).contains(&version) {
        return Err(format!("index version {version}"));
    }
    let count = r.u32()?;
    let mut out: Vec<Gitlink> = Vec::new();
    let mut name: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = r.at;
        r.take(24)?; // ctime, mtime, dev, ino
        let mode = r.u32()?;
        r.take(12)?; // uid, gid, size
        r.take(hash_len)?;
        let flags = r.u16()?;
        let extended = flags & 0x4000 != 0;
        if extended {
            if version < 3 {
                return Err("an extended entry in a version 2 index".into());
            }
            r.u16()?;
        }
        if version == 4 {
            let strip = r.varint()?;
            let keep = name
                .len()
                .checked_sub(strip)
                .ok_or_else(|| "a path prefix longer than the previous path".to_owned())?;
            name.truncate(keep);
            name.extend_from_slice(r.until_nul()?);
        } else {
            name.clear();
            name.extend_from_slice(r.until_nul()?);
            // The entry is padded with NULs to a multiple of 8 bytes (one NUL at least, already
            // read as the terminator).
            let len = r.at - start;
            let padded = len.div_ceil(8) * 8;
            r.take(padded - len)?;
        }
        match mode & TYPE_MASK {
            GITLINK => {
                let path = PathBuf::from(OsString::from_vec(name.clone()));
                let conflicted = flags & 0x3000 != 0;
                // A conflicted gitlink has up to three stages, one after another.
                match out.last_mut() {
                    Some(last) if last.path == path => last.conflicted |= conflicted,
                    _ => out.push(Gitlink { path, conflicted }),
                }
            }
            DIRECTORY => return Err("a sparse index (a directory entry)".into()),
            _ => {}
        }
    }
    // Extensions follow the entries; the last `hash_len` bytes are the checksum.
    while r.bytes.len().saturating_sub(r.at) > hash_len {
        let signature = r.take(4)?;
        if signature == b"link" {
            return Err("a split index".into());
        }
        if signature == b"sdir" {
            return Err("a sparse index".into());
        }
        let size = r.u32()? as usize;
        r.take(size)?;
    }
    if r.bytes.len() - r.at != hash_len {
        return Err("a truncated index".into());
    }
    Ok(out)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| "a truncated index".to_owned())?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u16(&mut self) -> Result<u16, String> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    /// Git's offset varint (`decode_varint`).
    fn varint(&mut self) -> Result<usize, String> {
        let mut c = self.take(1)?[0];
        let mut value = usize::from(c & 0x7f);
        while c & 0x80 != 0 {
            c = self.take(1)?[0];
            value = value
                .checked_add(1)
                .and_then(|v| v.checked_mul(128))
                .map(|v| v | usize::from(c & 0x7f))
                .ok_or_else(|| "a path prefix length out of range".to_owned())?;
        }
        Ok(value)
    }

    fn until_nul(&mut self) -> Result<&'a [u8], String> {
        let rest = &self.bytes[self.at..];
        let len = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| "a path without its terminator".to_owned())?;
        self.at += len + 1;
        Ok(&rest[..len])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_that_is_a_fifo_is_unreadable_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let cmd = herd_core::subprocess::Command::new("mkfifo", std::time::Duration::from_secs(10))
            .args([dir.path().join("index")])
            .stdin_null();
        assert!(herd_core::subprocess::run(&cmd).unwrap().success());
        let (tx, rx) = std::sync::mpsc::channel();
        let git_dir = dir.path().to_path_buf();
        std::thread::spawn(move || tx.send(gitlinks(&git_dir, 20)));
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("reading an index that is a FIFO does not wait for a writer");
        assert!(matches!(got, Gitlinks::Unreadable(_)), "{got:?}");
    }

    #[test]
    fn garbage_is_unreadable_never_empty() {
        for bad in [
            &b""[..],
            b"DIRC",
            b"XXXX\0\0\0\x02\0\0\0\0",
            b"DIRC\0\0\0\x09\0\0\0\0",
        ] {
            assert!(parse(bad, 20).is_err(), "{bad:?}");
        }
        // A well-formed empty index: header and checksum only.
        let mut empty = b"DIRC\0\0\0\x02\0\0\0\0".to_vec();
        empty.extend([0u8; 20]);
        assert_eq!(parse(&empty, 20), Ok(Vec::new()));
        assert!(parse(&empty, 21).is_err());
        // An entry count that promises more than the file holds.
        let mut short = b"DIRC\0\0\0\x02\0\0\0\x01".to_vec();
        short.extend([0u8; 20]);
        assert!(parse(&short, 20).is_err());
    }
}
