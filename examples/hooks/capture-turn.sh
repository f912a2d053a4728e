#!/usr/bin/env sh
# Capture one conversation turn into memoir in the background, from any agent host or script
# that can run a command after a turn.
#
#   capture-turn.sh "what the user said" "what the agent answered"
#   printf '[Human] ...\n[Assistant] ...' | capture-turn.sh        # or JSON messages
#
# With two arguments, the turn is "[Human] $1" and "[Assistant] $2"; without, it is read on
# stdin as `memoir capture` reads it (marked text or JSON). memoir runs detached and this
# returns at once. Settings from the environment: MEMOIR_STORE and the model settings as for
# `memoir capture`; MEMOIR_BIN (default `memoir` on PATH); MEMOIR_CAPTURE_LOG (a file that
# collects memoir's output, default: discarded); MEMOIR_CAPTURE_PROFILE (`coding`, the
# default, or `assistant`). Always exits 0.

memoir=${MEMOIR_BIN:-memoir}
log=${MEMOIR_CAPTURE_LOG:-/dev/null}
profile=${MEMOIR_CAPTURE_PROFILE:-coding}
tmp=$(mktemp "${TMPDIR:-/tmp}/memoir-turn.XXXXXX") || exit 0
if [ "$#" -ge 2 ]; then
  printf '[Human] %s\n[Assistant] %s\n' "$1" "$2" >"$tmp"
else
  head -c 16777216 >"$tmp"
fi
# A subshell in the background, its stdin the saved turn: the hook does not wait for memoir.
(
  "$memoir" --json capture --profile "$profile" <"$tmp" >>"$log" 2>&1
  rm -f "$tmp"
) </dev/null >/dev/null 2>&1 &
exit 0
