"""setup_codex: config.toml edited with comments kept, hooks.json merged, idempotent and removable."""

from __future__ import annotations

import json
import shlex
import tomllib
from pathlib import Path
from typing import Any

import pytest

from orcmem.models.errors import OrcmemError
from orcmem.setup_agents.codex import setup_codex
from orcmem.setup_agents.entries import is_orcmem_hook
from orcmem.setup_agents.report import SetupOptions
from tests.setup.support import CODEX_CONFIG, CODEX_HOOKS, ORCMEM_BACKUPS, backups, snapshot_tree


def wire(
    home: Path, command: list[str] | None = None, *, codex_home: Path | None = None, session_end: bool = True, **kw: Any
) -> Any:
    """setup_codex for `home`, its backups under it (Codex has no project: `home` stands in)."""
    options = SetupOptions(home, home / ORCMEM_BACKUPS, command, **kw)
    return setup_codex(home=home, options=options, codex_home=codex_home, session_end=session_end)


def config_of(home: Path) -> dict[str, Any]:
    return tomllib.loads((home / ".codex" / "config.toml").read_text())


def hooks_of(home: Path) -> dict[str, Any]:
    return json.loads((home / ".codex" / "hooks.json").read_text())


def ours(doc: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [h for g in doc["hooks"].get(event, []) for h in g["hooks"] if is_orcmem_hook(h)]


def test_adds_the_server_keeping_comments_and_the_users_tables(home: Path, orcmem_bin: Path):
    report = wire(home, [str(orcmem_bin)])
    text = (home / ".codex" / "config.toml").read_text()
    for line in CODEX_CONFIG.splitlines():
        assert line in text  # every line of the user's, comments included
    assert text.startswith(CODEX_CONFIG.split("[profiles.fast]")[0])
    config = config_of(home)
    original = tomllib.loads(CODEX_CONFIG)
    assert config["mcp_servers"]["context7"] == original["mcp_servers"]["context7"]
    assert config["profiles"] == original["profiles"] and config["model"] == "gpt-5"
    server = config["mcp_servers"]["orcmem"]
    assert server["command"] == str(orcmem_bin) and server["args"] == ["mcp"]
    assert server["startup_timeout_sec"] >= 10
    assert "\n\n[profiles.fast]" in text  # the blank line before the next table is still there

    hooks = hooks_of(home)
    assert hooks["hooks"]["Stop"][0] == json.loads(CODEX_HOOKS)["hooks"]["Stop"][0]
    for event, name in {"SessionStart": "session-start", "UserPromptSubmit": "prompt", "Stop": "stop"}.items():
        (handler,) = ours(hooks, event)
        assert handler["type"] == "command"
        assert shlex.split(handler["command"]) == [str(orcmem_bin), "hook", name]
    (handler,) = ours(hooks, "PreToolUse")  # memory before a shell command or a patch
    assert shlex.split(handler["command"]) == [str(orcmem_bin), "hook", "pre-tool-use"]
    assert hooks["hooks"]["PreToolUse"][-1]["matcher"] == "^(Bash|apply_patch)$"
    assert any("/hooks" in note for note in report.notes)  # Codex's trust step is pointed out


def test_second_run_is_a_no_op(home: Path, orcmem_bin: Path):
    wire(home, [str(orcmem_bin)])
    before = snapshot_tree(home)
    report = wire(home, [str(orcmem_bin)])
    assert not report.changed and snapshot_tree(home) == before
    assert len(backups(home)) == 2
    assert not any("/hooks" in note for note in report.notes)


def test_remove_restores_both_files_byte_for_byte(home: Path, orcmem_bin: Path):
    wire(home, [str(orcmem_bin)])
    report = wire(home, remove=True)
    assert (home / ".codex" / "config.toml").read_text() == CODEX_CONFIG
    assert (home / ".codex" / "hooks.json").read_text() == CODEX_HOOKS
    assert [f.action for f in report.files] == ["updated", "updated"]


def test_a_fresh_codex_home_is_created_and_cleaned_up(tmp_path: Path, orcmem_bin: Path):
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / ".codex").mkdir()
    (fresh / ".codex" / "config.toml").write_text('# only a comment\nmodel = "o3"\n')
    wire(fresh, [str(orcmem_bin)])
    assert config_of(fresh)["mcp_servers"]["orcmem"]["command"] == str(orcmem_bin)
    assert (fresh / ".codex" / "hooks.json").is_file()
    report = wire(fresh, remove=True)
    assert (fresh / ".codex" / "config.toml").read_text() == '# only a comment\nmodel = "o3"\n'
    assert not (fresh / ".codex" / "hooks.json").exists()
    assert [f.action for f in report.files] == ["updated", "deleted"]

    empty = tmp_path / "empty"
    empty.mkdir()
    wire(empty, [str(orcmem_bin)])
    assert sorted(p.name for p in (empty / ".codex").iterdir()) == ["config.toml", "hooks.json"]
    wire(empty, remove=True)
    assert not (empty / ".codex").exists()  # a folder setup made and left empty goes too


def test_an_update_keeps_the_users_extra_keys_on_orcmems_server(home: Path, orcmem_bin: Path):
    config = home / ".codex" / "config.toml"
    config.write_text(
        CODEX_CONFIG
        + '\n[mcp_servers.orcmem]  # mine\ncommand = "/old/orcmem"\nargs = ["mcp"]\ntool_timeout_sec = 120\n'
        + '\n[mcp_servers.orcmem.env]\nORCMEM_HOME = "/data/orcmem"\n'
    )
    report = wire(home, [str(orcmem_bin)])
    assert report.files[0].items[0].action == "updated"
    server = config_of(home)["mcp_servers"]["orcmem"]
    assert server["command"] == str(orcmem_bin)
    assert server["tool_timeout_sec"] == 120 and server["env"] == {"ORCMEM_HOME": "/data/orcmem"}
    assert "[mcp_servers.orcmem]  # mine" in config.read_text()


def test_session_end_can_be_left_out_and_is_then_taken_out(home: Path, orcmem_bin: Path):
    wire(home, [str(orcmem_bin)])
    assert ours(hooks_of(home), "SessionEnd")
    report = wire(home, [str(orcmem_bin)], session_end=False)
    assert "SessionEnd" not in hooks_of(home)["hooks"]
    assert {i.item: i.action for i in report.files[1].items}["hook SessionEnd"] == "removed"


def test_invalid_toml_is_refused_and_nothing_is_written(home: Path, orcmem_bin: Path):
    config = home / ".codex" / "config.toml"
    config.write_text('model = "gpt-5"\n[mcp_servers.x\ncommand = 1\n')
    before = snapshot_tree(home)
    with pytest.raises(OrcmemError, match="config.toml"):
        wire(home, [str(orcmem_bin)])
    assert snapshot_tree(home) == before


def test_invalid_hooks_json_is_refused_and_nothing_is_written(home: Path, orcmem_bin: Path):
    (home / ".codex" / "hooks.json").write_text("{'hooks': {}}")
    before = snapshot_tree(home)
    with pytest.raises(OrcmemError, match="hooks.json"):
        wire(home, [str(orcmem_bin)])
    assert snapshot_tree(home) == before


def test_notes_point_out_hooks_turned_off(home: Path, orcmem_bin: Path):
    (home / ".codex" / "config.toml").write_text(CODEX_CONFIG + "\n[features]\nhooks = false\n")
    report = wire(home, [str(orcmem_bin)])
    assert any("turned off" in note for note in report.notes)


def test_an_inline_servers_table_stays_inline(home: Path, orcmem_bin: Path):
    config = home / ".codex" / "config.toml"
    config.write_text('mcp_servers = { docs = { command = "npx" } }\n')
    wire(home, [str(orcmem_bin)])
    text = config.read_text()
    assert text.count("\n") == 1 and text.startswith("mcp_servers = {")
    assert config_of(home)["mcp_servers"]["orcmem"]["args"] == ["mcp"]
    wire(home, remove=True)
    assert tomllib.loads(config.read_text()) == {"mcp_servers": {"docs": {"command": "npx"}}}


def test_codex_home_can_be_elsewhere(tmp_path: Path, orcmem_bin: Path):
    elsewhere = tmp_path / "codex-home"
    report = wire(tmp_path / "nobody", [str(orcmem_bin)], codex_home=elsewhere)
    assert [f.path for f in report.files] == [elsewhere / "config.toml", elsewhere / "hooks.json"]
    assert (elsewhere / "hooks.json").is_file()


def test_the_profile_is_carried_into_the_server_entry(home: Path, orcmem_bin: Path, tmp_path: Path) -> None:
    """Codex starts MCP servers with a minimal environment: without this the server opens another database."""
    profile = tmp_path / "my profile"
    report = wire(home, [str(orcmem_bin)], profile_home=profile)
    server = config_of(home)["mcp_servers"]["orcmem"]
    assert server["env"] == {"ORCMEM_HOME": str(profile)} and report.changed
    again = wire(home, [str(orcmem_bin)], profile_home=profile)
    assert not again.changed
    other = tmp_path / "another"
    wire(home, [str(orcmem_bin)], profile_home=other)
    assert config_of(home)["mcp_servers"]["orcmem"]["env"] == {"ORCMEM_HOME": str(other)}
