#!/bin/sh
# Claude Code status line: "memoir <branch> · <N> memories" for the session's project.
# Claude Code gives the session's JSON on stdin; its workspace's directory finds the store
# (repo mode). Prints nothing when the project has no store. Install in settings.json:
#   "statusLine": {"type": "command", "command": "sh /path/to/plugins/claude-code/scripts/statusline.sh"}
input=$(cat)
dir=$(printf '%s' "$input" | sed -n 's/.*"current_dir"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p')
[ -n "$dir" ] || dir=$(printf '%s' "$input" | sed -n 's/.*"cwd"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p')
[ -n "$dir" ] || dir=.
status=$(cd "$dir" 2>/dev/null && memoir --json status 2>/dev/null) || exit 0
branch=$(printf '%s' "$status" | sed -n 's/^[[:space:]]*"branch":[[:space:]]*"\([^"]*\)".*/\1/p')
count=$(printf '%s' "$status" | sed -n 's/^[[:space:]]*"memory_count":[[:space:]]*\([0-9]*\).*/\1/p')
printf 'memoir %s · %s memories\n' "${branch:-detached}" "${count:-0}"
