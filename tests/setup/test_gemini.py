"""setup_gemini: hooks and MCP server merged into Gemini CLI's settings.json, idempotent, removed byte for byte."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from orcmem.models.errors import OrcmemError
from orcmem.setup_agents.entries import is_orcmem_hook
from orcmem.setup_agents.gemini import setup_gemini
from orcmem.setup_agents.report import SetupOptions
from tests.setup.support import GEMINI_SETTINGS, ORCMEM_BACKUPS, backups, snapshot_tree


def settings_of(folder: Path) -> dict[str, Any]:
    return json.loads((folder / ".gemini" / "settings.json").read_text())


def ours(doc: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [h for g in doc["hooks"].get(event, []) for h in g["hooks"] if is_orcmem_hook(h)]


def wire(home: Path, project: Path, orcmem_bin: Path | None, **kwargs: Any) -> Any:
    command = None if orcmem_bin is None else [str(orcmem_bin)]
    scope = kwargs.pop("scope", "user")
    return setup_gemini(scope, home=home, options=SetupOptions(project, home / ORCMEM_BACKUPS, command, **kwargs))


def test_user_scope_adds_four_hooks_and_a_trusted_server(home: Path, project: Path, orcmem_bin: Path):
    report = wire(home, project, orcmem_bin)
    settings = settings_of(home)
    original = json.loads(GEMINI_SETTINGS)
    assert settings["general"] == original["general"] and settings["ui"] == original["ui"]
    assert settings["mcpServers"]["github"] == original["mcpServers"]["github"]
    assert settings["hooks"]["BeforeTool"] == original["hooks"]["BeforeTool"]
    assert settings["hooks"]["AfterAgent"][0] == original["hooks"]["AfterAgent"][0]  # the user's stays first
    wanted = {
        "SessionStart": "session-start",
        "BeforeAgent": "prompt",
        "AfterAgent": "stop",
        "SessionEnd": "session-end",
    }
    for event, name in wanted.items():
        (handler,) = ours(settings, event)
        assert shlex.split(handler["command"]) == [str(orcmem_bin), "hook", name]
        assert handler["type"] == "command" and handler["timeout"] == 10_000  # Gemini CLI counts milliseconds
    assert "UserPromptSubmit" not in settings["hooks"] and "Stop" not in settings["hooks"]
    server = settings["mcpServers"]["orcmem"]
    assert server == {"command": str(orcmem_bin), "args": ["mcp"], "trust": True}
    assert report.agent == "gemini" and [f.action for f in report.files] == ["updated"]


def test_second_run_is_a_no_op(home: Path, project: Path, orcmem_bin: Path):
    wire(home, project, orcmem_bin)
    before = snapshot_tree(home)
    report = wire(home, project, orcmem_bin)
    assert not report.changed and snapshot_tree(home) == before
    assert len(backups(home)) == 1


def test_remove_restores_the_settings_byte_for_byte(home: Path, project: Path, orcmem_bin: Path):
    wire(home, project, orcmem_bin)
    report = wire(home, project, None, remove=True)
    assert (home / ".gemini" / "settings.json").read_text() == GEMINI_SETTINGS
    assert [f.action for f in report.files] == ["updated"]


def test_a_settings_file_orcmem_created_goes_on_remove(tmp_path: Path, project: Path, orcmem_bin: Path):
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    wire(fresh, project, orcmem_bin)
    assert settings_of(fresh)["mcpServers"]["orcmem"]["trust"] is True
    wire(fresh, project, None, remove=True)
    assert not (fresh / ".gemini" / "settings.json").exists()


def test_the_profile_reaches_the_server(home: Path, project: Path, orcmem_bin: Path, tmp_path: Path):
    wire(home, project, orcmem_bin, profile_home=tmp_path / "profile")
    assert settings_of(home)["mcpServers"]["orcmem"]["env"] == {"ORCMEM_HOME": str(tmp_path / "profile")}


def test_project_scope_writes_the_projects_settings(home: Path, project: Path, orcmem_bin: Path):
    before = snapshot_tree(home)
    wire(home, project, orcmem_bin, scope="project")
    assert snapshot_tree(home) == before
    assert set(settings_of(project)["hooks"]) == {"SessionStart", "BeforeAgent", "AfterAgent", "SessionEnd"}
    wire(home, project, None, scope="project", remove=True)
    assert not (project / ".gemini" / "settings.json").exists()


def test_invalid_settings_are_refused_and_nothing_is_written(home: Path, project: Path, orcmem_bin: Path):
    path = home / ".gemini" / "settings.json"
    path.write_text('{"ui": {"theme": "GitHub"},}')
    with pytest.raises(OrcmemError, match="not valid JSON"):
        wire(home, project, orcmem_bin)
    assert path.read_text() == '{"ui": {"theme": "GitHub"},}'


def test_turned_off_hooks_are_pointed_out(home: Path, project: Path, orcmem_bin: Path):
    path = home / ".gemini" / "settings.json"
    path.write_text('{"hooksConfig": {"enabled": false}}\n')
    report = wire(home, project, orcmem_bin)
    assert any("hooksConfig.enabled" in note for note in report.notes)
