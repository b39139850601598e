#!/bin/sh
# A stand-in for the Pi CLI that records how it was started: its argv (one argument per line) in
# pi.argv, its environment in pi.env, and then ends like a Pi child that called subagent_done.
# Each file appears whole (a reader may look at any moment). Asked which models it has
# credentials for, it lists the providers `p` and `fake` as Pi prints them.
if [ "$1" = --list-models ]; then
  printf 'provider  model  context  max-out  thinking  images\n'
  for row in 'p         one' 'p         two' 'fake      fast' 'fake      slow'; do
    printf '%-15s  128K     4.1K     no        no    \n' "$row"
  done
  exit 0
fi
printf '%s\n' "$@" > pi.argv.tmp && mv pi.argv.tmp pi.argv
env > pi.env.tmp && mv pi.env.tmp pi.env
echo $$ > pi.pid.tmp && mv pi.pid.tmp pi.pid
printf '{"type":"done"}\n' > "$PI_SUBAGENT_SESSION.exit"
exit 0
