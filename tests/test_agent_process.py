"""The agent CLI running a hook, found among the hook's parent processes (a real process tree)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from orcmem.host.agent_process import agent_command

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux's /proc")

# The agent runs its hook through a shell, as Claude Code and Codex do.
AGENT = """#!{python}
import subprocess, sys
subprocess.run(["/bin/sh", "-c", sys.argv[1]])
"""
ASK = f"{sys.executable} -c 'from orcmem.host.agent_process import agent_command; print(agent_command())'"


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


def fake_proc(root: Path, pid: int, argv: list[str], exe: str, ppid: int, cwd: str = "/") -> None:
    """One process as /proc shows it: cmdline, exe, cwd and stat."""
    entry = root / str(pid)
    entry.mkdir(parents=True)
    (entry / "cmdline").write_bytes(b"\0".join(part.encode() for part in argv) + b"\0")
    (entry / "exe").symlink_to(exe)
    (entry / "cwd").symlink_to(cwd)
    (entry / "stat").write_bytes(f"{pid} (x y) S {ppid} 1 1".encode())


def test_a_native_binary_a_renamed_interpreter_and_a_relative_script(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    native = tmp_path / "versions" / "2.1.197"
    native.parent.mkdir()
    native.write_text("")
    fake_proc(proc, 10, ["claude", "--resume", "x"], str(native), 1)
    assert json.loads(agent_command(10, str(proc))) == [str(native)]
    # node that rewrote its process title to "claude": the agent is its script, and here it has none
    fake_proc(proc, 20, ["claude"], "/usr/bin/node", 1)
    assert agent_command(20, str(proc)) is None
    project = tmp_path / "work"
    fake_proc(proc, 30, ["node", "node_modules/@openai/codex/bin/codex.js"], "/usr/bin/node", 1, str(project))
    assert json.loads(agent_command(30, str(proc))) == [
        "/usr/bin/node",
        str(project / "node_modules/@openai/codex/bin/codex.js"),
    ]
