#!/bin/sh
# A test child that follows the on-disk protocol of a Pi child (docs/protocol.md, docs/sidecars.md):
# it writes its activity snapshot and its `.exit` sidecar, and, as a persistent specialist, takes
# tasks from its inbox and reports them in `<session>.tasks`.
#
# Options (any order):
#   --exit N          exit with status N (default 0)
#   --done            write {"type":"done"} to the .exit sidecar before exiting
#   --ping MSG        write a ping sidecar instead
#   --wait FILE       wait (at most 60 s) until FILE exists before finishing
#   --hang            never finish by itself (60 s at most)
#   --ignore-term     ignore SIGTERM
#   --grandchild      leave a grandchild running (sleep 60), its pid in grandchild.pid
#   --persistent      serve inbox tasks until a stop entry arrives
# It always writes its pid to child.pid, its environment to child.env and its stdin to
# child.stdin in its working directory.

code=0 done=0 ping= wait= hang=0 persistent=0
while [ $# -gt 0 ]; do
  case "$1" in
    --exit) code=$2; shift ;;
    --done) done=1 ;;
    --ping) ping=$2; shift ;;
    --wait) wait=$2; shift ;;
    --hang) hang=1 ;;
    --ignore-term) trap '' TERM ;;
    --grandchild) sleep 60 & echo $! > grandchild.pid ;;
    --persistent) persistent=1 ;;
  esac
  shift
done
# Its environment first, each file whole: a reader that sees child.pid finds child.env complete.
env > child.env.tmp && mv child.env.tmp child.env
echo $$ > child.pid.tmp && mv child.pid.tmp child.pid
if [ -t 0 ]; then : > child.stdin.tmp; else cat > child.stdin.tmp; fi && mv child.stdin.tmp child.stdin

seq=0
activity() { # phase event
  seq=$((seq + 1))
  now=$(date +%s)000
  [ -n "$PI_SUBAGENT_ACTIVITY_FILE" ] || return 0
  mkdir -p "$(dirname "$PI_SUBAGENT_ACTIVITY_FILE")"
  printf '{"version":1,"runningChildId":"%s","createdAt":%s,"updatedAt":%s,"sequence":%d,"latestEvent":"%s","phase":"%s","agentActive":false,"turnActive":false,"providerActive":false,"toolActive":false}\n' \
    "$PI_SUBAGENT_ID" "$now" "$now" "$seq" "$2" "$1" > "$PI_SUBAGENT_ACTIVITY_FILE.$$.tmp" &&
    mv "$PI_SUBAGENT_ACTIVITY_FILE.$$.tmp" "$PI_SUBAGENT_ACTIVITY_FILE"
}
task_event() { # type task
  printf '{"version":1,"type":"%s","task":"%s","generation":"%s","at":"%s"}\n' \
    "$1" "$2" "$PI_SUBAGENT_GENERATION_ID" "$(date -u +%Y-%m-%dT%H:%M:%S.000Z)" >> "$PI_SUBAGENT_SESSION.tasks"
}
wait_for() { # file
  i=0
  while [ ! -e "$1" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
}

activity active agent_start
echo "child $PI_SUBAGENT_ID working"
[ -n "$wait" ] && wait_for "$wait"
if [ $hang -eq 1 ]; then i=0; while [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done; fi

if [ $persistent -eq 1 ]; then
  task_event task-done "$PI_SUBAGENT_TASK_ID"
  activity done subagent_done
  i=0
  while [ $i -lt 600 ]; do
    next=$(ls "$PI_SUBAGENT_SESSION".task-inbox.*.json 2>/dev/null | sort | head -n 1)
    if [ -n "$next" ] && mv "$next" "$next.consuming" 2>/dev/null; then
      entry=$(cat "$next.consuming"); rm -f "$next.consuming"
      task=$(printf '%s' "$entry" | sed -n 's/.*"task":"\([^"]*\)".*/\1/p')
      case "$entry" in
        *'"type":"stop"'*) break ;;
      esac
      activity active input
      echo "task $task: $entry" >> tasks.log
      [ -n "$wait" ] && wait_for "$wait.$task"
      task_event task-done "$task"
      activity done subagent_done
    fi
    sleep 0.1; i=$((i + 1))
  done
fi

if [ -n "$ping" ]; then
  printf '{"type":"ping","name":"%s","message":"%s"}\n' "$PI_SUBAGENT_NAME" "$ping" > "$PI_SUBAGENT_SESSION.exit"
elif [ $done -eq 1 ]; then
  printf '{"type":"done"}\n' > "$PI_SUBAGENT_SESSION.exit"
fi
activity done session_shutdown
echo "child $PI_SUBAGENT_ID finished"
exit "$code"
