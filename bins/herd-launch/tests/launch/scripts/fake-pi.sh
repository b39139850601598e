#!/bin/sh
# A stand-in for the Pi CLI that records how it was started: its argv (one argument per line) in
# pi.argv, its environment in pi.env, and then ends like a Pi child that called subagent_done.
# Each file appears whole (a reader may look at any moment).
printf '%s\n' "$@" > pi.argv.tmp && mv pi.argv.tmp pi.argv
env > pi.env.tmp && mv pi.env.tmp pi.env
echo $$ > pi.pid.tmp && mv pi.pid.tmp pi.pid
printf '{"type":"done"}\n' > "$PI_SUBAGENT_SESSION.exit"
exit 0
