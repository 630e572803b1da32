"""setup_opencode: orcmem's plugin file and MCP server in OpenCode's config folder (or the project's), idempotent,
taken out byte for byte; the wiring `orcmem doctor` reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from orcmem.models.errors import OrcmemError
from orcmem.setup_agents.opencode import (
    PLUGIN_MARK,
    opencode_paths,
    opencode_wired,
    opencode_wiring,
    plugin_text,
    setup_opencode,
)
from orcmem.setup_agents.report import Scope, SetupOptions
from tests.setup.support import ORCMEM_BACKUPS, backups, snapshot_tree

# A user's own opencode.json: a theme, a provider and an MCP server of theirs, in their own layout.
OPENCODE_JSON = """{
  "$schema": "https://opencode.ai/config.json",
  "theme": "tokyonight",
  "mcp": {
    "github": { "type": "remote", "url": "https://example.invalid/mcp", "enabled": true }
  },
  "provider": {"ollama": {"npm": "@ai-sdk/openai-compatible", "options": {"baseURL": "http://localhost:11434/v1"}}}
}
"""


@pytest.fixture
def config_dir(home: Path) -> Path:
    folder = home / ".config" / "opencode"
    folder.mkdir(parents=True)
    (folder / "opencode.json").write_text(OPENCODE_JSON)
    return folder


def wire(config_dir: Path, project: Path, orcmem_bin: Path | None, scope: Scope = "user", **kwargs: Any) -> Any:
    command = None if orcmem_bin is None else [str(orcmem_bin)]
    options = SetupOptions(project, config_dir.parent / ORCMEM_BACKUPS, command, **kwargs)
    return setup_opencode(scope, config_dir=config_dir, options=options)


def test_user_scope_adds_the_plugin_and_a_local_server(config_dir: Path, project: Path, orcmem_bin: Path):
    report = wire(config_dir, project, orcmem_bin)
    config = json.loads((config_dir / "opencode.json").read_text())
    original = json.loads(OPENCODE_JSON)
    assert {k: v for k, v in config.items() if k != "mcp"} == {k: v for k, v in original.items() if k != "mcp"}
    assert config["mcp"]["github"] == original["mcp"]["github"]
    assert config["mcp"]["orcmem"] == {"type": "local", "command": [str(orcmem_bin), "mcp"]}
    plugin = (config_dir / "plugin" / "orcmem.js").read_text()
    assert plugin.startswith(PLUGIN_MARK) and json.dumps([str(orcmem_bin)]) in plugin
    assert "__ORCMEM_" not in plugin  # every placeholder filled
    assert report.agent == "opencode" and [f.action for f in report.files] == ["created", "updated"]


def test_second_run_is_a_no_op(config_dir: Path, project: Path, orcmem_bin: Path):
    wire(config_dir, project, orcmem_bin)
    before = snapshot_tree(config_dir)
    report = wire(config_dir, project, orcmem_bin)
    assert not report.changed and snapshot_tree(config_dir) == before
    assert len(backups(config_dir.parent)) == 1  # the user's opencode.json, once


def test_remove_restores_the_config_byte_for_byte_and_the_plugin_goes(
    config_dir: Path, project: Path, orcmem_bin: Path
):
    before = snapshot_tree(config_dir)
    wire(config_dir, project, orcmem_bin)
    report = wire(config_dir, project, None, remove=True)
    assert snapshot_tree(config_dir) == before
    assert not (config_dir / "plugin").exists()  # the folder orcmem made for its plugin goes with it
    assert [f.action for f in report.files] == ["deleted", "updated"]


def test_a_config_folder_orcmem_created_goes_on_remove(tmp_path: Path, project: Path, orcmem_bin: Path):
    config_dir = tmp_path / "fresh" / ".config" / "opencode"
    wire(config_dir, project, orcmem_bin)
    assert (config_dir / "plugin" / "orcmem.js").exists()
    wire(config_dir, project, None, remove=True)
    assert not config_dir.exists()


def test_the_profile_reaches_the_server_and_the_plugin(
    config_dir: Path, project: Path, orcmem_bin: Path, tmp_path: Path
):
    wire(config_dir, project, orcmem_bin, profile_home=tmp_path / "profile")
    config = json.loads((config_dir / "opencode.json").read_text())
    assert config["mcp"]["orcmem"]["environment"] == {"ORCMEM_HOME": str(tmp_path / "profile")}
    assert json.dumps({"ORCMEM_HOME": str(tmp_path / "profile")}) in (config_dir / "plugin" / "orcmem.js").read_text()


def test_a_turned_off_server_is_turned_on_and_the_users_variables_stay(
    config_dir: Path, project: Path, orcmem_bin: Path
):
    config = json.loads(OPENCODE_JSON)
    config["mcp"]["orcmem"] = {
        "type": "local",
        "command": ["/old/place/orcmem", "mcp"],
        "enabled": False,
        "environment": {"MY_VAR": "1"},
    }
    (config_dir / "opencode.json").write_text(json.dumps(config))
    wire(config_dir, project, orcmem_bin)
    entry = json.loads((config_dir / "opencode.json").read_text())["mcp"]["orcmem"]
    assert entry == {
        "type": "local",
        "command": [str(orcmem_bin), "mcp"],
        "enabled": True,
        "environment": {"MY_VAR": "1"},
    }


def test_project_scope_writes_the_projects_files_only(home: Path, config_dir: Path, project: Path, orcmem_bin: Path):
    before = snapshot_tree(home)
    wire(config_dir, project, orcmem_bin, scope="project")
    assert snapshot_tree(home) == before
    assert json.loads((project / "opencode.json").read_text())["mcp"]["orcmem"]["type"] == "local"
    assert (project / ".opencode" / "plugin" / "orcmem.js").read_text().startswith(PLUGIN_MARK)
    assert opencode_wired(config_dir, project)[0]  # wired for this project is wired
    wire(config_dir, project, None, scope="project", remove=True)
    assert not (project / "opencode.json").exists() and not (project / ".opencode" / "plugin").exists()


def test_a_plugin_file_of_someone_else_is_neither_overwritten_nor_removed(
    config_dir: Path, project: Path, orcmem_bin: Path
):
    theirs = config_dir / "plugin" / "orcmem.js"
    theirs.parent.mkdir()
    theirs.write_text("export const Mine = async () => ({})\n")
    with pytest.raises(OrcmemError, match="not orcmem's plugin"):
        wire(config_dir, project, orcmem_bin)
    assert (config_dir / "opencode.json").read_text() == OPENCODE_JSON  # nothing was written
    wire(config_dir, project, None, remove=True)
    assert theirs.read_text() == "export const Mine = async () => ({})\n"


def test_invalid_config_is_refused_and_nothing_is_written(config_dir: Path, project: Path, orcmem_bin: Path):
    path = config_dir / "opencode.json"
    path.write_text('{"theme": "tokyonight",}')
    with pytest.raises(OrcmemError, match="not valid JSON"):
        wire(config_dir, project, orcmem_bin)
    assert path.read_text() == '{"theme": "tokyonight",}' and not (config_dir / "plugin").exists()


def test_the_wiring_says_what_is_missing(config_dir: Path, project: Path, orcmem_bin: Path):
    config, plugin = opencode_paths("user", config_dir=config_dir, project_dir=project)
    assert opencode_wiring(config, plugin) == (False, f"{plugin} does not exist")
    wire(config_dir, project, orcmem_bin)
    assert opencode_wiring(config, plugin)[0]
    doc = json.loads(config.read_text())
    doc["mcp"]["orcmem"]["enabled"] = False
    config.write_text(json.dumps(doc))
    wired, detail = opencode_wiring(config, plugin)
    assert not wired and "turned off" in detail
    plugin.write_text(plugin_text([str(orcmem_bin)]).replace(PLUGIN_MARK, "// mine"))
    assert "is not orcmem's plugin" in opencode_wiring(config, plugin)[1]
