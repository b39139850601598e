//! What paths of a commit's tree name, through the symlinks inside it:
//! `git cat-file --batch-check --follow-symlinks`, one request line `<commit>:<path>` per path.
//!
//! A path reached through symlinks of the tree answers with the object it reaches (the file a
//! command would run), not the link; a symlink that leaves the tree answers with its target.

use std::ffi::OsString;
use std::path::Path;

use crate::{Deadline, Error, Git};

/// What one path of a commit names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathObject {
    /// An object of the repository, reached through any symlinks of the tree: its id and type
    /// (`blob`, `tree`, `commit` for a submodule).
    Object { id: String, kind: String },
    /// Nothing at that path.
    Missing,
    /// A symlink that leaves the tree: its target, as the link holds it.
    Outside { target: Vec<u8> },
    /// A path git cannot resolve: a dangling symlink, a loop, or a path through a file
    /// (`dangling`, `loop`, `notdir`).
    Unresolved { why: String },
}

const WHAT: &str = "git cat-file --batch-check --follow-symlinks";

impl Git {
    /// What each of `paths` (relative to the root, one line each) names at `commit`, in order.
    pub fn objects_at(
        &self,
        cwd: &Path,
        commit: &str,
        paths: &[String],
        deadline: &Deadline,
    ) -> Result<Vec<PathObject>, Error> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let mut input = Vec::new();
        for path in paths {
            if path.contains(['\n', '\0']) || commit.contains(['\n', ':']) {
                return Err(Error::Malformed {
                    what: WHAT.into(),
                    detail: format!("{path:?} cannot be asked on one line"),
                });
            }
            input.extend_from_slice(format!("{commit}:{path}\n").as_bytes());
        }
        let args: Vec<OsString> = vec![
            "cat-file".into(),
            "--batch-check".into(),
            "--follow-symlinks".into(),
        ];
        let out = self.run_with_input(cwd, &args, input, deadline)?;
        parse(&out, commit, paths).map_err(|detail| Error::Malformed {
            what: WHAT.into(),
            detail,
        })
    }
}

/// Parses the answers to the requests for `paths` at `commit`.
fn parse(out: &[u8], commit: &str, paths: &[String]) -> Result<Vec<PathObject>, String> {
    let mut at = 0;
    let mut answers = Vec::with_capacity(paths.len());
    for path in paths {
        let rest = &out[at..];
        let end = rest
            .iter()
            .position(|b| *b == b'\n')
            .ok_or("an answer without its end of line")?;
        at += end + 1;
        let first = String::from_utf8_lossy(&rest[..end]).into_owned();
        let asked = format!("{commit}:{path}");
        if first == format!("{asked} missing") {
            answers.push(PathObject::Missing);
            continue;
        }
        let words: Vec<&str> = first.split(' ').collect();
        let answer = match words.as_slice() {
            [word @ ("symlink" | "dangling" | "loop" | "notdir"), size] => {
                let size: usize = size
                    .parse()
                    .map_err(|_| format!("a size that is no number: {first:?}"))?;
                // The answer's second line: `size` bytes and a line end.
                let body = out
                    .get(at..at + size)
                    .ok_or("an answer shorter than its size")?
                    .to_vec();
                if out.get(at + size) != Some(&b'\n') {
                    return Err("an answer longer than its size".into());
                }
                at += size + 1;
                if *word == "symlink" {
                    PathObject::Outside { target: body }
                } else {
                    PathObject::Unresolved {
                        why: (*word).to_owned(),
                    }
                }
            }
            [id, kind, _size] if crate::status::is_object_id(id) => PathObject::Object {
                id: (*id).to_owned(),
                kind: (*kind).to_owned(),
            },
            _ => return Err(format!("an answer not understood: {first:?}")),
        };
        answers.push(answer);
    }
    if at != out.len() {
        return Err("more answers than requests".into());
    }
    Ok(answers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Sandbox;

    #[test]
    fn paths_are_answered_through_the_symlinks_of_the_tree() {
        let sb = Sandbox::new();
        let repo = sb.repo("r");
        sb.write(&repo, "scripts/gen.sh", "echo gen\n");
        sb.write(&repo, "scripts/lib/x", "x\n");
        for (link, target) in [
            ("alias.sh", "scripts/gen.sh"),
            ("dir", "scripts"),
            ("out", "/etc/passwd"),
            ("gone", "nothing-here"),
        ] {
            std::os::unix::fs::symlink(target, repo.join(link)).unwrap();
        }
        let head = sb.commit_all(&repo, "c");
        let git = sb.git_handle();
        let paths: Vec<String> = [
            "scripts/gen.sh",
            "alias.sh",
            "dir/gen.sh",
            "scripts/lib",
            "out",
            "gone",
            "scripts/gen.sh/x",
            "absent",
        ]
        .iter()
        .map(|p| (*p).to_owned())
        .collect();
        let got = git
            .objects_at(&repo, &head, &paths, &Deadline::after(crate::budget::BASE))
            .unwrap();
        let blob = |p: &PathObject| match p {
            PathObject::Object { id, kind } if kind == "blob" => id.clone(),
            other => panic!("not a blob: {other:?}"),
        };
        assert_eq!(blob(&got[0]), blob(&got[1]), "through the link, the file");
        assert_eq!(blob(&got[0]), blob(&got[2]), "through a linked directory");
        assert!(
            matches!(&got[3], PathObject::Object { kind, .. } if kind == "tree"),
            "{got:?}"
        );
        assert_eq!(
            got[4],
            PathObject::Outside {
                target: b"/etc/passwd".to_vec()
            }
        );
        assert!(matches!(got[5], PathObject::Unresolved { .. }), "{got:?}");
        assert!(
            matches!(got[6], PathObject::Unresolved { .. } | PathObject::Missing),
            "{got:?}"
        );
        assert_eq!(got[7], PathObject::Missing);
    }
}
