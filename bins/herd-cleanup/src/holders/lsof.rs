//! The holder scan where there is no `/proc` (macOS): same-user `lsof` cwd records.
//!
//! One `lsof -n -P -w -a -d cwd -u <uid> -F pcfn` lists the cwd of every process of this user,
//! as `lsof` resolves it without opening the directory: no DNS or port lookups, no warnings
//! on stderr, only the `cwd` descriptors of this user's processes, and field output (`p` a
//! process, `c` its command, `f` the descriptor, `n` its name). A record whose name is not an
//! absolute path (`lsof` writes its error in its place, such as `(readlink: Permission
//! denied)`) leaves that process "not proven unrelated": a warning with a bounded sample of
//! PIDs, as on Linux. An `lsof` that fails, times out or prints more than it may, even with
//! some output, gives no answer, and the caller blocks on that.

use std::path::{Path, PathBuf};
use std::time::Duration;

use herd_core::subprocess::{self, Command, Keep};

use super::{Error, Holder, Scan};

/// The bound of one `lsof` run.
const BUDGET: Duration = Duration::from_secs(30);
/// The most output one run may print: a machine's worth of processes, well within.
const OUTPUT_LIMIT: usize = 16 * 1024 * 1024;

/// Runs `lsof` (`program`) for the cwd records of the user `uid` and reads them as a scan of
/// `targets`; this process (`me`) is skipped.
pub fn scan(program: &Path, uid: u32, me: u32, targets: &[PathBuf]) -> Result<Scan, Error> {
    let uid = uid.to_string();
    let cmd = Command::new(program, BUDGET)
        .args([
            "-n", "-P", "-w", "-a", "-d", "cwd", "-u", &uid, "-F", "pcfn",
        ])
        .stdin_null()
        .stdout_cap(OUTPUT_LIMIT, Keep::Head)
        .stderr_cap(4096, Keep::Tail);
    let out = subprocess::run(&cmd).map_err(|e| Error::Enumeration(format!("lsof: {e}")))?;
    if out.timed_out {
        return Err(Error::Enumeration(format!(
            "lsof did not answer within {}s",
            BUDGET.as_secs()
        )));
    }
    if out.stdout.truncated {
        return Err(Error::Enumeration(format!(
            "lsof printed more than {OUTPUT_LIMIT} bytes"
        )));
    }
    if !out.success() {
        return Err(Error::Enumeration(format!(
            "lsof failed ({}): {}",
            out.code
                .map_or("no exit code".to_owned(), |c| format!("exit {c}")),
            out.stderr.text().trim()
        )));
    }
    parse(&out.stdout.text(), me, targets)
}

/// Reads `lsof -F pcfn` output as a scan of `targets`: each process once, its cwd record a
/// holder when it is inside one of them, unreadable when `lsof` could not resolve it.
pub fn parse(text: &str, me: u32, targets: &[PathBuf]) -> Result<Scan, Error> {
    let mut scan = Scan::default();
    let mut pid: Option<u32> = None;
    let mut comm: Option<String> = None;
    let mut saw_any = false;
    for line in text.lines() {
        let (field, value) = line.split_at(line.len().min(1));
        match field {
            "p" => {
                let parsed = value.parse::<u32>().map_err(|_| {
                    Error::Enumeration(format!("lsof printed a malformed process line {line:?}"))
                })?;
                saw_any = true;
                comm = None;
                pid = (parsed != me).then_some(parsed);
                if pid.is_some() {
                    scan.inspected += 1;
                }
            }
            "c" => comm = Some(value.to_owned()),
            "n" => {
                let Some(pid) = pid else {
                    continue;
                };
                let cwd = Path::new(value);
                // A path inside a checkout holds it, whatever else it says.
                if let Some(target) = targets.iter().position(|t| cwd.starts_with(t)) {
                    scan.holders.push(Holder {
                        pid,
                        comm: comm.clone(),
                        cwd: cwd.to_path_buf(),
                        target,
                    });
                } else if !cwd.is_absolute() || is_error(value) {
                    scan.unreadable.add(pid);
                }
            }
            // `f` (always `cwd` here) and any field this reader does not use.
            _ => {}
        }
    }
    if !saw_any {
        return Err(Error::Enumeration("lsof lists no processes".to_owned()));
    }
    scan.holders.sort_by_key(|h| h.pid);
    Ok(scan)
}

/// Whether a name is `lsof`'s report of a cwd it could not resolve: what went wrong, in
/// parentheses after the name (`/proc/9/cwd (readlink: Permission denied)`).
fn is_error(name: &str) -> bool {
    let Some(inner) = name
        .strip_suffix(')')
        .and_then(|n| n.rsplit_once(" ("))
        .map(|(_, inner)| inner)
    else {
        return false;
    };
    inner.split_once(": ").is_some_and(|(call, _)| {
        !call.is_empty() && call.chars().all(|c| c.is_ascii_alphanumeric())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Output of `lsof -n -P -w -a -d cwd -u <uid> -F pcfn` (lsof 4.95), its paths replaced
    /// with neutral ones: a shell and a `sleep` in a checkout, another process elsewhere, the
    /// scan's own process, a record lsof could not resolve, and two directories whose names end
    /// in parentheses.
    const RECORDED: &str = "p412\ncbash\nfcwd\nn/Users/dev/repo/.worktrees/fix\n\
        p413\ncsleep\nfcwd\nn/Users/dev/repo/.worktrees/fix/sub\n\
        p500\ncPi\nfcwd\nn/Users/dev/elsewhere\n\
        p777\ncherd-cleanup\nfcwd\nn/Users/dev/repo/.worktrees/fix\n\
        p901\ncnode\nfcwd\nn/proc/901/cwd (readlink: Permission denied)\n\
        p902\ncvim\nfcwd\nn/Users/dev/repo/.worktrees/fix/notes (old)\n\
        p903\ncvim\nfcwd\nn/Users/dev/photos (2024)\n";

    #[test]
    fn reads_recorded_lsof_field_output() {
        let targets = [
            PathBuf::from("/Users/dev/repo/.worktrees/other"),
            PathBuf::from("/Users/dev/repo/.worktrees/fix"),
        ];
        let scan = parse(RECORDED, 777, &targets).unwrap();
        let held: Vec<(u32, Option<&str>, usize)> = scan
            .holders
            .iter()
            .map(|h| (h.pid, h.comm.as_deref(), h.target))
            .collect();
        // A directory whose own name ends in parentheses is a path, not an error.
        assert_eq!(
            held,
            [
                (412, Some("bash"), 1),
                (413, Some("sleep"), 1),
                (902, Some("vim"), 1)
            ]
        );
        assert_eq!(
            scan.holders[1].cwd,
            Path::new("/Users/dev/repo/.worktrees/fix/sub")
        );
        assert_eq!(scan.inspected, 6, "every process but the scan's own");
        assert_eq!(scan.unreadable.count, 1);
        assert_eq!(scan.unreadable.pids, [901]);
    }

    #[test]
    fn output_that_lists_nothing_or_is_malformed_gives_no_answer() {
        assert!(matches!(parse("", 1, &[]), Err(Error::Enumeration(_))));
        assert!(matches!(
            parse("pnot-a-pid\n", 1, &[]),
            Err(Error::Enumeration(_))
        ));
    }

    #[test]
    fn a_failed_lsof_gives_no_answer_even_with_output() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("lsof");
        std::fs::write(
            &fake,
            "#!/bin/sh\nprintf 'p1\\ncinit\\nfcwd\\nn/\\n'\nexit 1\n",
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let err = scan(&fake, 0, 2, &[]).unwrap_err();
        assert!(
            matches!(err, Error::Enumeration(ref m) if m.contains("exit 1")),
            "{err}"
        );
    }
}
