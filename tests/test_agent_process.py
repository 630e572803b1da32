"""The agent CLI running a hook, found among the hook's parent processes (a real process tree)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from orcmem.agent_process import agent_command

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux's /proc")

# The agent runs its hook through a shell, as Claude Code and Codex do.
AGENT = """#!{python}
import subprocess, sys
subprocess.run(["/bin/sh", "-c", sys.argv[1]])
"""
ASK = f"{sys.executable} -c 'from orcmem.agent_process import agent_command; print(agent_command())'"


def run_as(tmp_path: Path, name: str) -> str:
    script = tmp_path / name
    script.write_text(AGENT.format(python=sys.executable))
    script.chmod(0o755)
    return subprocess.run([str(script), ASK], capture_output=True, text=True, check=True, timeout=30).stdout.strip()


def test_a_script_agent_is_found_with_its_interpreter(tmp_path: Path) -> None:
    found = json.loads(run_as(tmp_path, "claude"))
    assert found[0] == str(Path(sys.executable).resolve())
    assert found[1] == str(tmp_path / "claude")


def test_no_agent_among_the_parents_gives_none(tmp_path: Path) -> None:
    assert run_as(tmp_path, "not-an-agent") == "None"
    assert agent_command(pid=999_999_999) is None
