#!/bin/sh
# A stand-in for the Pi CLI that tries to write its working directory and appends how that went
# (`wrote` or `refused`) beside its session, which a confined child always writes; then it ends
# like a Pi child that called subagent_done.
if echo x > probe.txt 2>/dev/null; then said=wrote; else said=refused; fi
echo "$said" >> "$PI_SUBAGENT_SESSION.probe"
printf '{"type":"done"}\n' > "$PI_SUBAGENT_SESSION.exit"
exit 0
