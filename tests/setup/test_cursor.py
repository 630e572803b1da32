"""setup_cursor, `orcmem setup cursor`, init and doctor for Cursor, and its sessionStart hook's answer.

Cursor has no npm package to run offline (unlike the other agents' tests/test_real_*.py): everything here is checked
against Cursor's documented formats only (cursor.com/docs/agent/hooks, cursor.com/docs/context/mcp): hooks.json
`{"version": 1, "hooks": {event: [{"command": ...}]}}`, mcp.json `{"mcpServers": {...}}`, and sessionStart's
answer `{"additional_context": ...}`.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from orcmem.app.onboarding import installed_agents
from orcmem.host.workspace import locate
from orcmem.models.vocabulary import Agent
from orcmem.service.memory_service import MemoryService
from orcmem.setup_agents.cursor import cursor_paths, cursor_wiring, setup_cursor
from orcmem.setup_agents.report import SetupOptions
from tests.helpers import user_memory
from tests.setup.support import ORCMEM_BACKUPS, backups, snapshot_tree

# A user's own Cursor configuration: a hook of theirs on the same event, another event, another MCP server.
HOOKS = """{
  "version": 1,
  "hooks": {
    "sessionStart": [{ "command": "./hooks/log-start.sh" }],
    "beforeShellExecution": [{ "command": "./hooks/block-rm.sh" }]
  }
}
"""
MCP = """{
  "mcpServers": {
    "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"]}
  }
}
"""


@pytest.fixture
def cursor_home(tmp_path: Path) -> Path:
    home = tmp_path / "cursor-home"
    (home / ".cursor").mkdir(parents=True)
    (home / ".cursor" / "hooks.json").write_text(HOOKS)
    (home / ".cursor" / "mcp.json").write_text(MCP)
    return home


def wire(home: Path, project: Path, orcmem_bin: Path | None, scope: str = "user", **kwargs: Any) -> Any:
    command = None if orcmem_bin is None else [str(orcmem_bin)]
    options = SetupOptions(project, home / ORCMEM_BACKUPS, command, **kwargs)
    return setup_cursor(scope, home=home, options=options)  # type: ignore[arg-type]


def read(path: Path) -> Any:
    return json.loads(path.read_text())


def test_user_scope_adds_the_session_start_hook_and_the_server(cursor_home: Path, project: Path, orcmem_bin: Path):
    report = wire(cursor_home, project, orcmem_bin)
    hooks = read(cursor_home / ".cursor" / "hooks.json")
    assert hooks["version"] == 1
    assert hooks["hooks"]["beforeShellExecution"] == [{"command": "./hooks/block-rm.sh"}]
    first, ours = hooks["hooks"]["sessionStart"]
    assert first == {"command": "./hooks/log-start.sh"}  # the user's stays first
    assert shlex.split(ours["command"]) == [str(orcmem_bin), "hook", "session-start"]
    assert set(hooks["hooks"]) == {"sessionStart", "beforeShellExecution"}  # no event that cannot carry memory
    servers = read(cursor_home / ".cursor" / "mcp.json")["mcpServers"]
    assert servers["orcmem"] == {"command": str(orcmem_bin), "args": ["mcp"]}
    assert servers["github"]["args"] == ["-y", "@modelcontextprotocol/server-github"]
    assert report.agent == "cursor" and [f.action for f in report.files] == ["updated", "updated"]
    assert any("cannot add recall" in note for note in report.notes)
    assert cursor_wiring(*cursor_paths("user", home=cursor_home, project_dir=project))[0]


def test_second_run_is_a_no_op_and_remove_restores_both_files_byte_for_byte(
    cursor_home: Path, project: Path, orcmem_bin: Path
):
    wire(cursor_home, project, orcmem_bin)
    before = snapshot_tree(cursor_home)
    assert not wire(cursor_home, project, orcmem_bin).changed and snapshot_tree(cursor_home) == before
    assert len(backups(cursor_home)) == 2
    report = wire(cursor_home, project, None, remove=True)
    assert (cursor_home / ".cursor" / "hooks.json").read_text() == HOOKS
    assert (cursor_home / ".cursor" / "mcp.json").read_text() == MCP
    assert [f.action for f in report.files] == ["updated", "updated"]
    wired, detail = cursor_wiring(*cursor_paths("user", home=cursor_home, project_dir=project))
    assert not wired and "no orcmem hook for sessionStart" in detail and "no orcmem MCP server" in detail


def test_files_orcmem_created_go_on_remove_and_the_profile_reaches_the_server(
    tmp_path: Path, project: Path, orcmem_bin: Path
):
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    wire(fresh, project, orcmem_bin, profile_home=tmp_path / "profile")
    assert read(fresh / ".cursor" / "hooks.json")["version"] == 1
    assert read(fresh / ".cursor" / "mcp.json")["mcpServers"]["orcmem"]["env"] == {
        "ORCMEM_HOME": str(tmp_path / "profile")
    }
    wire(fresh, project, None, remove=True)
    assert not (fresh / ".cursor").exists()  # both files, then the folder they left empty


def test_project_scope_writes_the_projects_cursor_folder(cursor_home: Path, project: Path, orcmem_bin: Path):
    before = snapshot_tree(cursor_home)
    wire(cursor_home, project, orcmem_bin, scope="project")
    assert snapshot_tree(cursor_home) == before
    assert set(read(project / ".cursor" / "hooks.json")["hooks"]) == {"sessionStart"}
    wire(cursor_home, project, None, scope="project", remove=True)
    assert not (project / ".cursor").exists()


def test_cursor_is_found_by_its_folder_or_its_commands(tmp_path: Path):
    bare, bin_dir = tmp_path / "bare", tmp_path / "bin"
    bare.mkdir()
    bin_dir.mkdir()
    assert Agent.CURSOR not in installed_agents({"PATH": str(bin_dir)}, bare)
    (bare / ".cursor").mkdir()
    assert Agent.CURSOR in installed_agents({"PATH": str(bin_dir)}, bare)
    (bare / ".cursor").rmdir()
    program = bin_dir / "cursor-agent"
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    assert installed_agents({"PATH": str(bin_dir)}, bare) == [Agent.CURSOR]


def test_the_session_start_hook_answers_in_cursors_format(service: MemoryService, project_dir: Path, orcmem_home: Path):
    """The command setup writes, run as Cursor runs it: its documented payload (no `cwd`, `workspace_roots`)."""
    service.record(
        service.project(locate(project_dir)),
        user_memory("Factorial must be iterative", "recursion blows the stack on CI"),
    )
    payload = {
        "conversation_id": "c1",
        "generation_id": "g1",
        "session_id": "c1",
        "hook_event_name": "sessionStart",
        "cursor_version": "2.0.0",
        "workspace_roots": [str(project_dir)],
        "user_email": None,
        "is_background_agent": False,
        "composer_mode": "agent",
    }
    env = {**os.environ, "ORCMEM_HOME": str(orcmem_home)}
    answer = subprocess.run(
        [sys.executable, "-m", "orcmem", "hook", "session-start"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert answer.returncode == 0, answer.stderr
    out = json.loads(answer.stdout)
    assert set(out) == {"additional_context"}  # Cursor's field, not Claude Code's hookSpecificOutput
    assert out["additional_context"].startswith('<orcmem-context kind="brief"')
    assert "Factorial must be iterative" in out["additional_context"]


def test_init_wires_cursor_when_its_folder_exists_and_remove_gives_it_back(
    run, cursor_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    monkeypatch.setenv("HOME", str(cursor_home))
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    before = snapshot_tree(cursor_home)
    out = run("init", "--yes", "--no-model").stdout
    assert "wire Cursor: hooks and MCP server in" in out and "Cursor:" in out
    assert shlex.split(read(cursor_home / ".cursor" / "hooks.json")["hooks"]["sessionStart"][1]["command"])[-2:] == [
        "hook",
        "session-start",
    ]
    [line] = [line for line in run("doctor", ok=False).stdout.splitlines() if "cursor hooks" in line]
    assert "hook in" in line and "MCP server in" in line and not line.lstrip().startswith(("!!", "--")), line
    out = run("init", "--remove", "--yes").stdout
    assert "take orcmem out of Cursor" in out
    assert snapshot_tree(cursor_home) == before
