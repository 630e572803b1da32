"""The agent CLI running this hook, found among its parent processes (Linux's /proc; elsewhere nothing is found).

A hook runs as the agent's child (often through a shell). When `claude` or `codex` is not on the hook's PATH, the
agent that ran the session is still the best one to distil it: its command line is kept with the run.
"""

from __future__ import annotations

import json
import os

from orcmem.models.vocabulary import Agent

AGENT_NAMES = (Agent.CLAUDE.value, Agent.CODEX.value)  # the agents whose CLI distils a run (not Gemini CLI yet)
MAX_ANCESTORS = 6  # agent -> shell -> (timeout, env, uv run...) -> orcmem: a few levels at most
_SCRIPT_SUFFIXES = (".js", ".mjs", ".cjs")


def agent_command(pid: int | None = None, proc: str = "/proc") -> str | None:
    """The JSON argv prefix that starts the agent running this process (its executable, or node and its script)."""
    current = os.getppid() if pid is None else pid
    for _level in range(MAX_ANCESTORS):
        if current <= 1:
            return None
        command = _agent_argv(current, proc)
        if command is not None:
            return json.dumps(command)
        current = _parent_of(current, proc)
    return None


def _agent_argv(pid: int, proc: str) -> list[str] | None:
    """The argv prefix of `pid` when it is claude or codex (a native binary, or a node script), else None."""
    try:
        with open(f"{proc}/{pid}/cmdline", "rb") as handle:
            argv = [part.decode("utf-8", "replace") for part in handle.read().split(b"\0") if part]
        exe = os.readlink(f"{proc}/{pid}/exe")
    except OSError:
        return None
    if not argv:
        return None
    interpreted = os.path.basename(exe).startswith(_INTERPRETERS)
    if _is_agent(exe) or (_is_agent(argv[0]) and not interpreted):
        # a native binary (Claude Code's lives at versions/<version>): run as started when that was a path
        return [argv[0]] if os.path.isabs(argv[0]) and os.path.isfile(argv[0]) else [exe]
    script = argv[1] if len(argv) > 1 else ""
    if script and not os.path.isabs(script):
        try:
            script = os.path.join(os.readlink(f"{proc}/{pid}/cwd"), script)
        except OSError:
            return None
    if _is_agent(script) or (script.endswith(_SCRIPT_SUFFIXES) and any(name in script for name in _PACKAGES)):
        return [exe, script]
    return None


_PACKAGES = ("/@anthropic-ai/claude-code/", "/@openai/codex/")
_INTERPRETERS = ("node", "bun", "deno", "python")  # a script's runner: the agent is its script, not it


def _is_agent(path: str) -> bool:
    name = os.path.basename(path.removesuffix(" (deleted)"))
    return name in AGENT_NAMES


def _parent_of(pid: int, proc: str) -> int:
    """The parent process id (0 when unknown)."""
    try:
        with open(f"{proc}/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return 0
    # The command name in parentheses may hold spaces and parentheses: the fields after the last ")" are fixed.
    fields = stat[stat.rfind(b")") + 2 :].split()
    try:
        return int(fields[1])
    except (IndexError, ValueError):
        return 0
