//! The parent re-check and its verdict (docs/lifecycle.md, "Accept checks"): whether a finished
//! child's work is accepted, and the `Check:` host line that says so.
//!
//! The re-check alone decides; the child's own report is evidence. It runs only for a completed
//! run (exit 0, not cancelled, no help request, no provider error); any other run is `skipped`.
//!
//! | verdict    | when                                                                         |
//! |------------|------------------------------------------------------------------------------|
//! | `accepted` | the re-check exited 0                                                        |
//! | `rejected` | the re-check exited non-zero                                                 |
//! | `error`    | the re-check gave no answer: timed out, killed by a signal, directory missing, could not start |
//! | `skipped`  | a check was requested but the run was cancelled, asked for help, hit a provider error or exited non-zero, or the re-check was cancelled |
//! | `none`     | no check was requested                                                       |

use std::path::Path;

use herd_core::escape::{
    CHECK_MAX_CHARS, EVIDENCE_MAX_CHARS, Noun, encode_host_value, encode_list,
};
use herd_core::subprocess::Cancel;

use crate::check::run_check;
use crate::spec::AcceptSpec;
use crate::tail::{LINE_TAIL_CHARS, tail_str};
use herd_protocol::accept::CheckOutcome;
use herd_protocol::accept::CheckRun;

/// The prefix of the host line that carries the end of a failed re-check's output.
pub const CHECK_OUTPUT_PREFIX: &str = "Check output (last 1,500 characters, encoded): ";

use herd_protocol::accept::{ChildReport, Reason, RunOutcome, Verdict, VerdictDetails};

/// The version of the details record.
pub const DETAILS_VERSION: u64 = VerdictDetails::FORMAT_VERSION;

/// What the parent knows when it asks for a verdict.
#[derive(Debug, Clone)]
pub struct VerdictRequest<'a> {
    /// The run's accept spec; `None` when no check was requested.
    pub spec: Option<&'a AcceptSpec>,
    /// Where the re-check runs: the worktree of a worktree child, else the child's cwd.
    pub cwd: &'a Path,
    pub outcome: RunOutcome,
    /// How many times the child ran the check, when known.
    pub tries: Option<u32>,
    pub child_reported: Option<ChildReport>,
    /// The handoff's changed and untracked files (worktree children).
    pub changed_files: &'a [String],
    /// The re-check runs in an ordinary child's cwd, which others may share.
    pub shared_checkout: bool,
}

/// Decides the verdict: runs the re-check when the run completed and a check was requested,
/// stopping it (verdict `skipped (cancelled)`) when a message arrives on `cancel`.
pub fn verdict(req: &VerdictRequest<'_>, cancel: &dyn Cancel) -> VerdictDetails {
    let run = match (req.spec, req.outcome) {
        (Some(spec), RunOutcome::Completed) => Some(run_check(spec, req.cwd, cancel)),
        _ => None,
    };
    decide(req, run.as_ref())
}

/// Decides the verdict from a re-check already run (`None` when none ran).
///
/// A pure function: [`verdict`] is this plus [`run_check`].
pub fn decide(req: &VerdictRequest<'_>, run: Option<&CheckRun>) -> VerdictDetails {
    let mut details = VerdictDetails {
        format_version: DETAILS_VERSION,
        verdict: Verdict::None,
        reason: None,
        outcome: req.outcome,
        tries: req.tries,
        child_reported: req.child_reported,
        exit_code: None,
        signal: None,
        timed_out: false,
        timeout_sec: None,
        command_sha256: None,
        recheck_dir: None,
        shared_checkout: false,
        changed_check_files: Vec::new(),
        output: String::new(),
        output_truncated: false,
        duration_ms: None,
        error: None,
        check_line: String::new(),
        check_output_line: None,
    };
    let Some(spec) = req.spec else {
        details.check_line = "Check: none".to_owned();
        return details;
    };
    details.timeout_sec = Some(spec.timeout_sec);
    details.command_sha256 = Some(spec.sha256());
    details.changed_check_files = spec.check_files_changed(req.changed_files);
    let skipped = match req.outcome {
        RunOutcome::Completed => None,
        RunOutcome::Failed => Some(Reason::ExitedNonZero),
        RunOutcome::Cancelled => Some(Reason::Cancelled),
        RunOutcome::Help => Some(Reason::AskedForHelp),
        RunOutcome::ProviderError => Some(Reason::ProviderError),
    };
    match (skipped, run) {
        (Some(reason), _) => {
            details.verdict = Verdict::Skipped;
            details.reason = Some(reason);
        }
        (None, None) => {
            // A completed run whose re-check was never started: only a cancel does that.
            details.verdict = Verdict::Skipped;
            details.reason = Some(Reason::Cancelled);
        }
        (None, Some(run)) => {
            details.recheck_dir = Some(req.cwd.display().to_string());
            details.exit_code = run.exit_code;
            details.signal = run.signal;
            details.timed_out = run.timed_out;
            details.output.clone_from(&run.output);
            details.output_truncated = run.output_truncated;
            details.duration_ms = Some(run.duration_ms);
            details.error.clone_from(&run.error);
            let (verdict, reason) = match run.outcome {
                CheckOutcome::Passed => (Verdict::Accepted, None),
                CheckOutcome::Failed => (Verdict::Rejected, None),
                CheckOutcome::TimedOut => (Verdict::Error, Some(Reason::TimedOut)),
                CheckOutcome::Signalled => (Verdict::Error, Some(Reason::KilledBySignal)),
                CheckOutcome::DirectoryMissing => (Verdict::Error, Some(Reason::DirectoryMissing)),
                CheckOutcome::CouldNotStart => (Verdict::Error, Some(Reason::CouldNotStart)),
                CheckOutcome::Cancelled => (Verdict::Skipped, Some(Reason::Cancelled)),
            };
            details.verdict = verdict;
            details.reason = reason;
            details.shared_checkout = req.shared_checkout && verdict != Verdict::Skipped;
        }
    }
    details.check_line = check_line(&details);
    details.check_output_line = check_output_line(&details);
    details
}

fn tries_phrase(tries: u32) -> String {
    if tries == 1 {
        "1 try".to_owned()
    } else {
        format!("{tries} tries")
    }
}

/// Renders the `Check:` line of `details`, within the message's bound for it.
fn check_line(details: &VerdictDetails) -> String {
    let exit = details
        .exit_code
        .map_or_else(|| "unknown".to_owned(), |code| code.to_string());
    let mut line = match details.verdict {
        Verdict::None => return "Check: none".to_owned(),
        Verdict::Accepted => match details.tries {
            Some(tries) => format!("Check: accepted ({})", tries_phrase(tries)),
            None => "Check: accepted".to_owned(),
        },
        Verdict::Rejected => match (details.child_reported, details.tries) {
            (Some(ChildReport::Pass), _) => {
                format!("Check: rejected (child reported a pass; parent re-check exit {exit})")
            }
            (_, Some(tries)) => format!(
                "Check: rejected after {} (exit {exit})",
                tries_phrase(tries)
            ),
            (_, None) => format!("Check: rejected (exit {exit})"),
        },
        Verdict::Error => {
            let why = match details.reason {
                Some(Reason::TimedOut) => format!(
                    "timed out after {}s",
                    details.timeout_sec.unwrap_or_default()
                ),
                Some(Reason::KilledBySignal) => {
                    format!("killed by signal {}", details.signal.unwrap_or_default())
                }
                Some(Reason::DirectoryMissing) => "directory missing".to_owned(),
                _ => match &details.error {
                    // The error names paths a child may have chosen: encoded, and short.
                    Some(error) => format!("could not start: {}", encode_host_value(error, 300)),
                    None => "could not start".to_owned(),
                },
            };
            format!("Check: error ({why})")
        }
        Verdict::Skipped => {
            let why = match details.reason {
                Some(Reason::AskedForHelp) => "asked for help",
                Some(Reason::ProviderError) => "provider error",
                Some(Reason::ExitedNonZero) => "exited non-zero",
                _ => "cancelled",
            };
            format!("Check: skipped ({why})")
        }
    };
    if details.shared_checkout {
        line.push_str(" · shared checkout");
    }
    if !details.changed_check_files.is_empty() {
        const LABEL: &str = " · check files changed by the child: ";
        let room = CHECK_MAX_CHARS.saturating_sub(line.chars().count() + LABEL.chars().count());
        line.push_str(LABEL);
        line.push_str(&encode_list(
            &details.changed_check_files,
            room,
            Noun::FILES,
        ));
    }
    line
}

/// Renders the encoded output line for `rejected` and `error`, when there is output.
fn check_output_line(details: &VerdictDetails) -> Option<String> {
    if !matches!(details.verdict, Verdict::Rejected | Verdict::Error) || details.output.is_empty() {
        return None;
    }
    let tail = tail_str(&details.output, LINE_TAIL_CHARS);
    // Escapes can make 1,500 characters longer than an evidence line may be; the encoder then
    // keeps the head and the end around its marker, so the line is never cut by the message.
    let room = EVIDENCE_MAX_CHARS - CHECK_OUTPUT_PREFIX.chars().count();
    Some(format!(
        "{CHECK_OUTPUT_PREFIX}{}",
        encode_host_value(tail, room)
    ))
}

/// The details of a run that requested no check: `Check: none`.
pub fn none(outcome: RunOutcome) -> VerdictDetails {
    decide(
        &VerdictRequest {
            spec: None,
            cwd: Path::new(""),
            outcome,
            tries: None,
            child_reported: None,
            changed_files: &[],
            shared_checkout: false,
        },
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> AcceptSpec {
        AcceptSpec {
            run: "npm test".into(),
            max_retries: 1,
            timeout_sec: 600,
            paths: vec!["test".into()],
        }
    }

    fn run(outcome: CheckOutcome, code: Option<i32>, output: &str) -> CheckRun {
        CheckRun {
            outcome,
            exit_code: code,
            signal: if outcome == CheckOutcome::Signalled {
                Some(9)
            } else {
                None
            },
            timed_out: outcome == CheckOutcome::TimedOut,
            cancelled: outcome == CheckOutcome::Cancelled,
            duration_ms: 5,
            output: output.into(),
            output_truncated: false,
            output_bytes: output.len() as u64,
            error: match outcome {
                CheckOutcome::CouldNotStart => {
                    Some("cannot start `/bin/sh`: permission denied".into())
                }
                CheckOutcome::DirectoryMissing => Some("/x is not an existing directory".into()),
                _ => None,
            },
        }
    }

    fn line(
        outcome: RunOutcome,
        tries: Option<u32>,
        reported: Option<ChildReport>,
        check: Option<CheckRun>,
        shared: bool,
        changed: &[&str],
    ) -> VerdictDetails {
        let spec = spec();
        let changed: Vec<String> = changed.iter().map(|s| (*s).to_owned()).collect();
        let req = VerdictRequest {
            spec: Some(&spec),
            cwd: Path::new("/checkout"),
            outcome,
            tries,
            child_reported: reported,
            changed_files: &changed,
            shared_checkout: shared,
        };
        decide(&req, check.as_ref())
    }

    #[test]
    fn every_check_line_form() {
        use CheckOutcome as C;
        use RunOutcome as R;
        let cases: Vec<(VerdictDetails, &str, Verdict)> = vec![
            (
                line(
                    R::Completed,
                    Some(2),
                    Some(ChildReport::Pass),
                    Some(run(C::Passed, Some(0), "")),
                    false,
                    &[],
                ),
                "Check: accepted (2 tries)",
                Verdict::Accepted,
            ),
            (
                line(
                    R::Completed,
                    Some(1),
                    None,
                    Some(run(C::Passed, Some(0), "")),
                    false,
                    &[],
                ),
                "Check: accepted (1 try)",
                Verdict::Accepted,
            ),
            (
                line(
                    R::Completed,
                    None,
                    None,
                    Some(run(C::Passed, Some(0), "")),
                    false,
                    &[],
                ),
                "Check: accepted",
                Verdict::Accepted,
            ),
            (
                line(
                    R::Completed,
                    Some(2),
                    Some(ChildReport::Fail),
                    Some(run(C::Failed, Some(1), "boom")),
                    false,
                    &[],
                ),
                "Check: rejected after 2 tries (exit 1)",
                Verdict::Rejected,
            ),
            (
                line(
                    R::Completed,
                    Some(1),
                    Some(ChildReport::Pass),
                    Some(run(C::Failed, Some(1), "boom")),
                    false,
                    &[],
                ),
                "Check: rejected (child reported a pass; parent re-check exit 1)",
                Verdict::Rejected,
            ),
            (
                line(
                    R::Completed,
                    None,
                    None,
                    Some(run(C::Failed, Some(3), "x")),
                    false,
                    &[],
                ),
                "Check: rejected (exit 3)",
                Verdict::Rejected,
            ),
            (
                line(
                    R::Completed,
                    Some(1),
                    None,
                    Some(run(C::TimedOut, None, "")),
                    false,
                    &[],
                ),
                "Check: error (timed out after 600s)",
                Verdict::Error,
            ),
            (
                line(
                    R::Completed,
                    Some(1),
                    None,
                    Some(run(C::Signalled, None, "")),
                    false,
                    &[],
                ),
                "Check: error (killed by signal 9)",
                Verdict::Error,
            ),
            (
                line(
                    R::Completed,
                    Some(1),
                    None,
                    Some(run(C::DirectoryMissing, None, "")),
                    false,
                    &[],
                ),
                "Check: error (directory missing)",
                Verdict::Error,
            ),
            (
                line(
                    R::Completed,
                    Some(1),
                    None,
                    Some(run(C::CouldNotStart, None, "")),
                    false,
                    &[],
                ),
                "Check: error (could not start: cannot start `/bin/sh`: permission denied)",
                Verdict::Error,
            ),
            (
                line(
                    R::Completed,
                    Some(1),
                    None,
                    Some(run(C::Cancelled, None, "")),
                    true,
                    &[],
                ),
                "Check: skipped (cancelled)",
                Verdict::Skipped,
            ),
            (
                line(R::Cancelled, Some(1), None, None, true, &[]),
                "Check: skipped (cancelled)",
                Verdict::Skipped,
            ),
            (
                line(R::Help, Some(1), None, None, false, &[]),
                "Check: skipped (asked for help)",
                Verdict::Skipped,
            ),
            (
                line(R::ProviderError, None, None, None, false, &[]),
                "Check: skipped (provider error)",
                Verdict::Skipped,
            ),
            (
                line(R::Failed, None, None, None, false, &[]),
                "Check: skipped (exited non-zero)",
                Verdict::Skipped,
            ),
            (
                line(R::Completed, None, None, None, false, &[]),
                "Check: skipped (cancelled)",
                Verdict::Skipped,
            ),
            (none(R::Completed), "Check: none", Verdict::None),
            (
                line(
                    R::Completed,
                    Some(1),
                    None,
                    Some(run(C::Passed, Some(0), "")),
                    true,
                    &[],
                ),
                "Check: accepted (1 try) · shared checkout",
                Verdict::Accepted,
            ),
            (
                line(
                    R::Completed,
                    Some(2),
                    None,
                    Some(run(C::Failed, Some(1), "x")),
                    false,
                    &["src/a.rs", "test/a\nb.js", "test/c.js"],
                ),
                "Check: rejected after 2 tries (exit 1) · check files changed by the child: test/a\\nb.js, test/c.js",
                Verdict::Rejected,
            ),
            (
                line(R::Help, None, None, None, false, &["test/x.js"]),
                "Check: skipped (asked for help) · check files changed by the child: test/x.js",
                Verdict::Skipped,
            ),
        ];
        for (details, want_line, want_verdict) in cases {
            assert_eq!(details.check_line(), want_line);
            assert_eq!(details.verdict, want_verdict, "{want_line}");
        }
    }

    #[test]
    fn the_output_line_follows_rejected_and_error_only() {
        let rejected = line(
            RunOutcome::Completed,
            Some(1),
            None,
            Some(run(CheckOutcome::Failed, Some(1), "FAIL a\n\"b\"")),
            false,
            &[],
        );
        assert_eq!(
            rejected.check_output_line(),
            Some("Check output (last 1,500 characters, encoded): FAIL a\\n\\\"b\\\"")
        );
        let error = line(
            RunOutcome::Completed,
            Some(1),
            None,
            Some(run(CheckOutcome::TimedOut, None, "slow")),
            false,
            &[],
        );
        assert!(error.check_output_line().is_some());
        let accepted = line(
            RunOutcome::Completed,
            Some(1),
            None,
            Some(run(CheckOutcome::Passed, Some(0), "ok")),
            false,
            &[],
        );
        assert_eq!(accepted.check_output_line(), None);
        let silent = line(
            RunOutcome::Completed,
            Some(1),
            None,
            Some(run(CheckOutcome::Failed, Some(1), "")),
            false,
            &[],
        );
        assert_eq!(silent.check_output_line(), None);
    }

    #[test]
    fn the_output_line_shows_the_last_1500_characters() {
        let output = format!("{}{}", "a".repeat(2_500), "é".repeat(1_500));
        let details = line(
            RunOutcome::Completed,
            Some(1),
            None,
            Some(run(CheckOutcome::Failed, Some(1), &output)),
            false,
            &[],
        );
        let shown = details
            .check_output_line()
            .unwrap()
            .strip_prefix(CHECK_OUTPUT_PREFIX)
            .unwrap();
        assert_eq!(shown, "é".repeat(1_500));
        assert_eq!(details.output.chars().count(), 4_000);
    }

    #[test]
    fn a_long_file_list_stays_within_the_line_bound() {
        let files: Vec<String> = (0..500).map(|i| format!("test/file-{i:04}.js")).collect();
        let files: Vec<&str> = files.iter().map(String::as_str).collect();
        let details = line(
            RunOutcome::Completed,
            Some(1),
            None,
            Some(run(CheckOutcome::Passed, Some(0), "")),
            true,
            &files,
        );
        let text = details.check_line();
        assert!(text.chars().count() <= CHECK_MAX_CHARS, "{}", text.len());
        assert!(text.ends_with("more files)"), "{text}");
        assert_eq!(details.changed_check_files.len(), 500);
    }

    #[test]
    fn details_carry_the_record_fields() {
        let details = line(
            RunOutcome::Completed,
            Some(2),
            None,
            Some(run(CheckOutcome::Failed, Some(1), "out")),
            false,
            &["test/a.js"],
        );
        let json = serde_json::to_value(&details).unwrap();
        assert_eq!(json["verdict"], "rejected");
        assert_eq!(json["tries"], 2);
        assert_eq!(json["exit_code"], 1);
        assert_eq!(json["timed_out"], false);
        assert_eq!(json["command_sha256"], spec().sha256());
        assert_eq!(json["recheck_dir"], "/checkout");
        assert_eq!(
            json["changed_check_files"],
            serde_json::json!(["test/a.js"])
        );
        assert_eq!(json["output"], "out");
        let back: VerdictDetails = serde_json::from_value(json).unwrap();
        assert_eq!(back, details);
    }

    #[test]
    fn exit_codes_follow_the_table() {
        let codes: Vec<i32> = [
            Verdict::Accepted,
            Verdict::Rejected,
            Verdict::Error,
            Verdict::Skipped,
            Verdict::None,
        ]
        .map(Verdict::exit_code)
        .to_vec();
        assert_eq!(codes, [0, 1, 4, 5, 0]);
    }
}
