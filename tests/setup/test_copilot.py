"""setup_copilot: orcmem's hooks in a hooks file of its own and its server merged into Copilot CLI's MCP config,
idempotent, removed byte for byte; the user's own hooks files never touched."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from orcmem.models.errors import OrcmemError
from orcmem.setup_agents.copilot import copilot_wiring, setup_copilot
from orcmem.setup_agents.report import SetupOptions
from tests.setup.support import ORCMEM_BACKUPS, backups, snapshot_tree

# A user's own Copilot CLI MCP config, in the shape `copilot mcp add` writes it.
MCP_CONFIG = """{
  "mcpServers": {
    "github-extra": {
      "type": "local",
      "command": "npx",
      "args": ["-y", "@example/mcp"],
      "tools": ["*"]
    }
  }
}
"""
USER_HOOKS = '{"version": 1, "hooks": {"sessionStart": [{"type": "command", "bash": "echo hi"}]}}\n'


@pytest.fixture
def state(tmp_path: Path) -> Path:
    """A user's ~/.copilot holding their own MCP server and hooks file."""
    folder = tmp_path / "home" / ".copilot"
    (folder / "hooks").mkdir(parents=True)
    (folder / "mcp-config.json").write_text(MCP_CONFIG)
    (folder / "hooks" / "mine.json").write_text(USER_HOOKS)
    return folder


def wire(state: Path, project: Path, orcmem_bin: Path | None, scope: str = "user", **kwargs: Any) -> Any:
    command = None if orcmem_bin is None else [str(orcmem_bin)]
    options = SetupOptions(project, state.parent / ORCMEM_BACKUPS, command, **kwargs)
    return setup_copilot(scope, state_dir=state, options=options)  # type: ignore[arg-type]


def test_user_scope_writes_five_hooks_and_a_local_server(state: Path, project: Path, orcmem_bin: Path) -> None:
    report = wire(state, project, orcmem_bin)
    hooks = json.loads((state / "hooks" / "orcmem.json").read_text())
    wanted = {
        "sessionStart": "session-start",
        "userPromptSubmitted": "prompt",
        "preToolUse": "pre-tool-use",
        "agentStop": "stop",
        "sessionEnd": "session-end",
    }
    assert hooks["version"] == 1 and set(hooks["hooks"]) == set(wanted)
    for event, name in wanted.items():
        (handler,) = hooks["hooks"][event]
        assert shlex.split(handler["bash"]) == [str(orcmem_bin), "hook", name]
        assert handler["type"] == "command" and handler["timeoutSec"] == 10  # Copilot CLI counts seconds
    servers = json.loads((state / "mcp-config.json").read_text())["mcpServers"]
    assert servers["github-extra"] == json.loads(MCP_CONFIG)["mcpServers"]["github-extra"]
    assert servers["orcmem"] == {"type": "local", "command": str(orcmem_bin), "args": ["mcp"], "tools": ["*"]}
    assert (state / "hooks" / "mine.json").read_text() == USER_HOOKS
    assert report.agent == "copilot" and [f.action for f in report.files] == ["created", "updated"]
    assert copilot_wiring(state / "hooks" / "orcmem.json", state / "mcp-config.json")[0]


def test_second_run_is_a_no_op_and_remove_restores_every_byte(state: Path, project: Path, orcmem_bin: Path) -> None:
    before = snapshot_tree(state)
    wire(state, project, orcmem_bin)
    wired = snapshot_tree(state)
    report = wire(state, project, orcmem_bin)
    assert not report.changed and snapshot_tree(state) == wired
    assert len(backups(state.parent)) == 1  # the MCP config's, once; the hooks file was orcmem's own
    removed = wire(state, project, None, remove=True)
    assert snapshot_tree(state) == before  # the hooks file orcmem created is gone, the config as it was
    assert [f.action for f in removed.files] == ["deleted", "updated"]
    wiring = copilot_wiring(state / "hooks" / "orcmem.json", state / "mcp-config.json")
    assert wiring[0] is False and "does not exist" in wiring[1]


def test_a_moved_orcmem_replaces_its_hooks_and_the_users_own_in_its_file_stay(
    state: Path, project: Path, orcmem_bin: Path, tmp_path: Path
) -> None:
    path = state / "hooks" / "orcmem.json"
    path.write_text(
        '{"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": "say done"}, '
        '{"type": "command", "bash": "/old/orcmem hook stop"}]}}\n'
    )
    wire(state, project, orcmem_bin)
    stops = json.loads(path.read_text())["hooks"]["agentStop"]
    assert [h["bash"] for h in stops] == ["say done", shlex.join([str(orcmem_bin), "hook", "stop"])]
    wire(state, project, None, remove=True)
    assert json.loads(path.read_text()) == {
        "version": 1,
        "hooks": {"agentStop": [{"type": "command", "bash": "say done"}]},
    }


def test_the_profile_reaches_the_server(state: Path, project: Path, orcmem_bin: Path, tmp_path: Path) -> None:
    wire(state, project, orcmem_bin, profile_home=tmp_path / "profile")
    server = json.loads((state / "mcp-config.json").read_text())["mcpServers"]["orcmem"]
    assert server["env"] == {"ORCMEM_HOME": str(tmp_path / "profile")}


def test_project_scope_writes_the_repositorys_github_folder(state: Path, project: Path, orcmem_bin: Path) -> None:
    before = snapshot_tree(state)
    report = wire(state, project, orcmem_bin, scope="project")
    assert snapshot_tree(state) == before
    assert set(json.loads((project / ".github" / "hooks" / "orcmem.json").read_text())["hooks"]) == {
        "sessionStart",
        "userPromptSubmitted",
        "preToolUse",
        "agentStop",
        "sessionEnd",
    }
    assert "orcmem" in json.loads((project / ".github" / "mcp.json").read_text())["mcpServers"]
    assert any("trust" in note for note in report.notes)
    wire(state, project, None, scope="project", remove=True)
    assert not (project / ".github" / "hooks" / "orcmem.json").exists()
    assert not (project / ".github" / "mcp.json").exists()


def test_an_invalid_config_is_refused_and_nothing_is_written(state: Path, project: Path, orcmem_bin: Path) -> None:
    (state / "mcp-config.json").write_text('{"mcpServers": [}')
    with pytest.raises(OrcmemError, match="not valid JSON"):
        wire(state, project, orcmem_bin)
    assert (state / "mcp-config.json").read_text() == '{"mcpServers": [}'
    assert not (state / "hooks" / "orcmem.json").exists()
