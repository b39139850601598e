//! The review gate (docs/tools.md, "Acceptance gates", the review): a required review is
//! satisfied by an independent reviewer's result, which herd never produces itself.
//!
//! A reviewer is a run of its own, launched with `reviews` naming the run it reviews. When it
//! settles, its result decides the review: `reviewed` when its acceptance report lists no
//! blockers, `rejected` when it lists some. A reviewer that did not complete, or whose report
//! cannot be read or does not say `blockers`, supplies no review: the run stays
//! `review-required`, and the record says why.

use herd_protocol::accept::Status;

use super::parse::{Found, find_report};

/// How many blockers and findings a review record keeps.
const LIST_MAX: usize = 50;
/// The bound of one blocker or finding kept.
const ITEM_MAX_CHARS: usize = 500;

/// The review a reviewer's run gives: its status, blockers, findings and the reason.
pub fn decide(completed: bool, output: Option<&str>) -> (Status, Vec<String>, Vec<String>, String) {
    if !completed {
        return (
            Status::ReviewRequired,
            Vec::new(),
            Vec::new(),
            "the reviewer did not complete".to_owned(),
        );
    }
    let report = match output.map(find_report) {
        Some(Found::Report { report, .. }) => report,
        Some(Found::Invalid { diagnostics, .. }) => {
            return (
                Status::ReviewRequired,
                Vec::new(),
                Vec::new(),
                format!(
                    "the reviewer's acceptance report could not be read: {}",
                    diagnostics.to_strings().join("; ")
                ),
            );
        }
        Some(Found::NotFound) | None => {
            return (
                Status::ReviewRequired,
                Vec::new(),
                Vec::new(),
                "the reviewer's result has no acceptance report".to_owned(),
            );
        }
    };
    let keep = |items: &[String]| -> Vec<String> {
        items
            .iter()
            .filter(|item| !item.trim().is_empty())
            .take(LIST_MAX)
            .map(|item| herd_core::escape::encode_host_value(item, ITEM_MAX_CHARS))
            .collect()
    };
    let findings = keep(report.review_findings.as_deref().unwrap_or_default());
    match report.blockers.as_deref() {
        None => (
            Status::ReviewRequired,
            Vec::new(),
            findings,
            "the reviewer's acceptance report does not list `blockers`".to_owned(),
        ),
        Some(blockers) => {
            let blockers = keep(blockers);
            if blockers.is_empty() {
                (
                    Status::Reviewed,
                    blockers,
                    findings,
                    "the reviewer reported no blockers".to_owned(),
                )
            } else {
                let reason = format!("the reviewer reported {} blocker(s)", blockers.len());
                (Status::Rejected, blockers, findings, reason)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fenced(json: &str) -> String {
        format!("Reviewed.\n\n```acceptance-report\n{json}\n```\n")
    }

    #[test]
    fn no_blockers_is_reviewed_and_blockers_reject() {
        let (status, _, findings, _) = decide(
            true,
            Some(&fenced(r#"{"reviewFindings": ["naming"], "blockers": []}"#)),
        );
        assert_eq!((status, findings.len()), (Status::Reviewed, 1));
        let (status, blockers, _, reason) = decide(
            true,
            Some(&fenced(
                r#"{"reviewFindings": ["x"], "blockers": ["the lock is never released"]}"#,
            )),
        );
        assert_eq!(status, Status::Rejected);
        assert_eq!(blockers, vec!["the lock is never released".to_owned()]);
        assert!(reason.contains("1 blocker"), "{reason}");
    }

    #[test]
    fn no_readable_review_leaves_the_review_required() {
        for (completed, output) in [
            (false, Some(fenced(r#"{"blockers": []}"#))),
            (true, None),
            (true, Some("looks fine to me".to_owned())),
            (true, Some(fenced(r#"{"reviewFindings": ["x"]}"#))),
            (true, Some(fenced(r#"{"blockerz": []}"#))),
        ] {
            let (status, ..) = decide(completed, output.as_deref());
            assert_eq!(status, Status::ReviewRequired, "{output:?}");
        }
    }
}
