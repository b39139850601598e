//! The demo's scratch project and its two children: a scripted one (plain `sh`, no Pi needed)
//! and the script of the model the real Pi child talks to.
//!
//! Both children do the same work in the same steps (read the file, edit it, run the check and
//! commit, report), so the demo looks the same whichever runs.

use herd_e2e::model::{Script, Text, ToolCall};
use serde_json::json;

/// The scratch repository's file the child changes, before and after.
pub const FILE: &str = "greeting.txt";
pub const BEFORE: &str = "hello\n";
pub const AFTER: &str = "hello, world\n";

/// The accept check the parent asks for; it fails until the greeting is right.
pub const CHECK_FILE: &str = "check.sh";
pub const CHECK_SCRIPT: &str = "# Passes when the greeting says hello to the world.\n\
grep -qx 'hello, world' greeting.txt || { echo \"greeting.txt says: $(cat greeting.txt)\"; exit 1; }\n";
pub const CHECK_RUN: &str = "sh check.sh";

/// The child's name, branch and task: what the parent's `subagent` tool call says.
pub const NAME: &str = "fix greeting";
pub const BRANCH: &str = "demo/greeting";
pub const TASK: &str = "greeting.txt should say \"hello, world\". Fix it so that `sh check.sh` \
passes, commit the change, and report what you did.";

/// The commit message both children use.
pub const COMMIT_MESSAGE: &str = "Greet the world";

/// The scripted child, run as `sh child.sh <herd-accept>` in the worktree.
///
/// It follows the on-disk protocol a Pi child with herd's extension follows: activity snapshots
/// in `$PI_SUBAGENT_ACTIVITY_FILE` (written atomically), the accept check from
/// `$PI_SUBAGENT_ACCEPT_FILE` run before it finishes, the completion sidecar
/// `$PI_SUBAGENT_SESSION.exit`; its standard output is its report. Each step pauses so a person
/// can watch the widget follow it.
pub const SCRIPTED_CHILD: &str = r#"# The demo's scripted child: the steps a Pi child takes, without a model.
set -u
herd_accept=$1
created=$(date +%s)000
sequence=0

# One activity snapshot, replaced atomically: `activity TOOL` while a tool runs, `activity done`.
activity() {
    sequence=$((sequence + 1))
    now=$(date +%s)000
    if [ "$1" = done ]; then
        state='"latestEvent":"subagent_done","phase":"done","agentActive":false,"turnActive":false,"providerActive":false,"toolActive":false'
    else
        state="\"latestEvent\":\"tool_execution_start\",\"phase\":\"active\",\"agentActive\":true,\"turnActive\":true,\"providerActive\":false,\"toolActive\":true,\"activeScope\":\"tool\",\"toolName\":\"$1\",\"toolCallId\":\"call-$sequence\",\"toolStartedAt\":$now"
    fi
    printf '{"version":1,"runningChildId":"%s","createdAt":%s,"updatedAt":%s,"sequence":%s,%s}\n' \
        "$PI_SUBAGENT_ID" "$created" "$now" "$sequence" "$state" > "$PI_SUBAGENT_ACTIVITY_FILE.tmp"
    mv -f "$PI_SUBAGENT_ACTIVITY_FILE.tmp" "$PI_SUBAGENT_ACTIVITY_FILE"
}

mkdir -p "$(dirname "$PI_SUBAGENT_ACTIVITY_FILE")"

activity read
before=$(cat greeting.txt)
sleep 1

activity edit
printf 'hello, world\n' > greeting.txt
sleep 1

activity bash
if check=$("$herd_accept" check --spec "$PI_SUBAGENT_ACCEPT_FILE" --cwd . 2>&1); then
    git add greeting.txt && git commit -q -m 'Greet the world' || exit 1
    committed=$(git log -1 --format='%h %s')
else
    committed='nothing: the check failed'
fi
sleep 1

activity done
echo "greeting.txt said \"$before\"; it now says \"hello, world\"."
echo "The accept check, run here before finishing: $check."
echo "Committed: $committed."
printf '{"type":"done"}' > "$PI_SUBAGENT_SESSION.exit"
"#;

/// The model the real Pi child talks to: the same steps as [`SCRIPTED_CHILD`], as tool calls.
///
/// After the last reply, herd's child extension runs the accept check and writes the completion
/// sidecar; the model is not asked again unless the check fails.
pub fn pi_model_script() -> Script {
    Script::new()
        .step(ToolCall::new("read", json!({ "path": FILE })))
        .step(ToolCall::new(
            "edit",
            json!({ "path": FILE, "edits": [{ "oldText": "hello", "newText": "hello, world" }] }),
        ))
        .step(ToolCall::bash(format!(
            "{CHECK_RUN} && git add {FILE} && git commit -q -m '{COMMIT_MESSAGE}' && git log -1 --format='%h %s'"
        )))
        .step(Text(
            "greeting.txt said \"hello\"; it now says \"hello, world\". `sh check.sh` passes, \
             and the change is committed on this branch.",
        ))
}
