"""A fake home with a user's own Claude Code and Codex configuration, and an orcmem to point at."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.setup.support import CLAUDE_JSON, CLAUDE_SETTINGS, CODEX_CONFIG, CODEX_HOOKS, GEMINI_SETTINGS


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A user's home holding their own agent configuration."""
    folder = tmp_path / "home"
    (folder / ".claude").mkdir(parents=True)
    (folder / ".codex").mkdir()
    (folder / ".claude" / "settings.json").write_text(CLAUDE_SETTINGS)
    (folder / ".claude.json").write_text(CLAUDE_JSON)
    (folder / ".codex" / "config.toml").write_text(CODEX_CONFIG)
    (folder / ".codex" / "hooks.json").write_text(CODEX_HOOKS)
    (folder / ".gemini").mkdir()
    (folder / ".gemini" / "settings.json").write_text(GEMINI_SETTINGS)
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder with no agent configuration yet."""
    folder = tmp_path / "work" / "my project"
    folder.mkdir(parents=True)
    return folder


@pytest.fixture
def orcmem_bin(tmp_path: Path) -> Path:
    """An `orcmem` program in a folder whose name has a space: it runs this checkout's orcmem."""
    folder = tmp_path / "my tools"
    folder.mkdir()
    script = folder / "orcmem"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m orcmem "$@"\n')
    script.chmod(0o755)
    return script
