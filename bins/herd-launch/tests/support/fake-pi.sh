#!/bin/sh
# A stand-in for the Pi CLI that records how it was started: its argv (one argument per line) in
# pi.argv, its environment in pi.env, and then ends like a Pi child that called subagent_done.
printf '%s\n' "$@" > pi.argv
env > pi.env
echo $$ > pi.pid
printf '{"type":"done"}\n' > "$PI_SUBAGENT_SESSION.exit"
exit 0
