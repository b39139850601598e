//! A confined worktree child's branch, brought home from its private git overlay
//! (`herd_sandbox::git`) before the handoff inspects the worktree.

use herd_protocol::layout::Artifacts;

/// Brings a confined worktree child's branch home from its overlay (`herd_sandbox::git`), once:
/// a second call finds the branch already moved and the overlay unchanged from it. Returns what
/// the person should read when the branch did not come home.
pub(crate) fn bring_home(
    artifacts: &Artifacts,
    run_id: &str,
    git: &herd_git::Git,
    deadline: &herd_git::Deadline,
) -> Option<String> {
    use herd_sandbox::git::{HomeComing, Overlay};
    let overlay = match Overlay::read(&artifacts.sandbox(run_id)) {
        Ok(Some(overlay)) => overlay,
        Ok(None) => return None,
        Err(err) => {
            return Some(format!(
                "The sandbox's branch did not come home: {}",
                err.message
            ));
        }
    };
    match overlay.bring_home(git, deadline) {
        Ok(HomeComing::Unchanged | HomeComing::Moved { .. }) => None,
        Ok(HomeComing::Refused { why }) => Some(format!("The branch did not come home: {why}")),
        // Moved already by an earlier delivery attempt: the compare-and-swap refuses a second.
        Err(err) => Some(format!("The branch did not come home: {}", err.message)),
    }
}
