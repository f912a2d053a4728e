#!/usr/bin/env python3
"""Claude Code Stop hook: capture the turn that just ended into memoir, in the background.

Claude Code runs this when the agent finishes answering, with a JSON object on stdin that
names the session's transcript (`transcript_path`, JSON Lines). The hook reads the end of the
transcript, keeps the last turn (the last user message with text and what the assistant
wrote after it; tool calls and results are left out), starts `memoir capture` with that turn
as a JSON list of messages, and exits at once without waiting for it: the agent is not
delayed, and memoir stores the turn's facts on its own a moment later.

Install, in .claude/settings.json (project) or ~/.claude/settings.json (user):

    {
      "hooks": {
        "Stop": [
          {"hooks": [{"type": "command",
                      "command": "python3 /path/to/memoir/examples/hooks/claude-code-stop.py"}]}
        ]
      }
    }

Settings, from the environment Claude Code passes on (or an `env` block in settings.json):
MEMOIR_STORE (the store; it must exist, `memoir new`), the model (MEMOIR_LLM_BASE_URL,
OPENAI_API_KEY, ANTHROPIC_API_KEY, ... as for `memoir recall`), MEMOIR_BIN (the memoir
program, default `memoir` on PATH), MEMOIR_CAPTURE_LOG (a file that collects memoir's output,
default: discarded), MEMOIR_CAPTURE_PROFILE (`coding`, the default, or `assistant`).
MEMOIR_ACTOR defaults to `claude-code`. The hook never fails the session: whatever goes
wrong, it exits 0 and prints nothing.
"""

import json
import os
import subprocess
import sys

# Bytes read from the end of the transcript: the last turn is there.
TAIL_BYTES = 4 << 20


def text_of(content):
    """The text of a message content: a string, or the text blocks of a list."""
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        parts = [
            b.get("text", "")
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        ]
        return "\n".join(p for p in parts if p).strip()
    return ""


def last_turn(path):
    """The messages of the transcript's last turn, as [{"role", "content"}]."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - TAIL_BYTES))
        data = f.read()
    lines = data.decode("utf-8", "replace").splitlines()
    if size > TAIL_BYTES:
        lines = lines[1:]  # the first line read may be cut
    messages = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict) or entry.get("type") not in ("user", "assistant"):
            continue
        if entry.get("isMeta") or entry.get("isSidechain"):
            continue
        message = entry.get("message")
        if not isinstance(message, dict):
            continue
        text = text_of(message.get("content"))
        if text:
            messages.append({"role": message.get("role", entry["type"]), "content": text})
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    return messages[users[-1]:] if users else messages


def main():
    try:
        hook = json.load(sys.stdin)
        path = os.path.expanduser(hook["transcript_path"])
        turn = last_turn(path)
    except (ValueError, KeyError, TypeError, OSError):
        return 0
    if not any(m["role"] == "assistant" for m in turn):
        return 0
    env = dict(os.environ)
    env.setdefault("MEMOIR_ACTOR", "claude-code")
    log = env.get("MEMOIR_CAPTURE_LOG")
    command = [
        env.get("MEMOIR_BIN", "memoir"),
        "--json",
        "capture",
        "--profile",
        env.get("MEMOIR_CAPTURE_PROFILE", "coding"),
    ]
    try:
        out = open(log, "ab") if log else subprocess.DEVNULL
        child = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=out,
            env=env,
            start_new_session=True,  # outlives the hook, and any signal sent to its group
        )
        child.stdin.write(json.dumps(turn).encode("utf-8"))
        child.stdin.close()
    except OSError:
        pass
    return 0  # not waiting for memoir: it finishes on its own


if __name__ == "__main__":
    sys.exit(main())
