"""`orcmem doctor`'s checks as a function (app/doctor.py): the CLI prints them, any other front end can show them."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from orcmem.app.doctor import doctor_checks
from orcmem.models.errors import StoreError
from orcmem.service.memory_service import MemoryService
from orcmem.setup_agents.copilot import setup_copilot
from orcmem.setup_agents.gemini import setup_gemini
from orcmem.setup_agents.opencode import setup_opencode
from orcmem.setup_agents.report import SetupOptions


def test_a_database_that_cannot_open_is_the_one_failed_required_check(tmp_path: Path) -> None:
    def broken() -> MemoryService:
        raise StoreError("the database file is not a database")

    checks = doctor_checks(broken, tmp_path, tmp_path)
    assert checks[0] == {
        "check": "database",
        "ok": False,
        "required": True,
        "adds": "",
        "detail": "the database file is not a database",
        "fix": "Move the file aside or fix its permissions, then run orcmem again.",
    }
    assert not {c["check"] for c in checks[1:]} - {
        "codex hooks",
        "gemini hooks",
        "copilot hooks",
        "opencode plugin",
    }  # nothing else can be asked without it


def test_a_fresh_profile_passes_the_required_checks_and_says_what_optional_parts_add(tmp_path: Path) -> None:
    service = MemoryService.open(tmp_path / "home")
    try:
        checks = doctor_checks(lambda: service, tmp_path / "home", tmp_path)
    finally:
        service.close()
    by_name = {c["check"]: c for c in checks}
    assert by_name["database"]["ok"] and by_name["database"]["detail"] == str(tmp_path / "home" / "orcmem.db")
    assert by_name["memory"] == {
        "check": "memory",
        "ok": False,
        "required": False,
        "adds": "what every agent session gets: the brief, recall and learning",
        "detail": "off: agents get no brief or recall, and nothing is learned",
        "fix": "Run `orcmem memory on` (or `orcmem init`).",
    }
    assert all(c["ok"] for c in checks if c["required"])
    assert not by_name["embedding model"]["ok"] and by_name["embedding model"]["fix"].startswith("Run `orcmem model")


def test_gemini_cli_on_path_is_checked_for_orcmems_hooks_and_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    bin_dir, gemini_home = tmp_path / "bin", tmp_path / "gemini-home"
    bin_dir.mkdir()
    (bin_dir / "gemini").write_text("#!/bin/sh\nexit 0\n")  # doctor only looks for it
    (bin_dir / "gemini").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GEMINI_CLI_HOME", str(gemini_home))
    service = MemoryService.open(tmp_path / "home")
    try:

        def gemini_check() -> dict[str, object]:
            checks = doctor_checks(lambda: service, tmp_path / "home", tmp_path / "work")
            return next(dict(c) for c in checks if c["check"] == "gemini hooks")

        before = gemini_check()
        assert not before["ok"] and "does not exist" in str(before["detail"])
        assert before["fix"] == "Run `orcmem setup gemini` (or `orcmem init`)."
        orcmem = [sys.executable, "-m", "orcmem"]
        setup_gemini("user", home=gemini_home, options=SetupOptions(tmp_path, tmp_path / "b", orcmem))
        after = gemini_check()
        assert after["ok"] and str(gemini_home / ".gemini" / "settings.json") in str(after["detail"])
        settings = gemini_home / ".gemini" / "settings.json"
        settings.write_text(settings.read_text().replace('"BeforeAgent"', '"SomethingElse"'))
        broken = gemini_check()
        assert not broken["ok"] and "no orcmem hook for BeforeAgent" in str(broken["detail"])
    finally:
        service.close()


def test_copilot_cli_on_path_is_checked_for_orcmems_hooks_file_and_server(tmp_path: Path, monkeypatch) -> None:
    program, state = tmp_path / "bin" / "copilot", tmp_path / "copilot-state"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\nexit 0\n")  # doctor only looks for it
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{program.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("COPILOT_HOME", str(state))
    service = MemoryService.open(tmp_path / "home")

    def copilot_check() -> dict[str, object]:
        checks = doctor_checks(lambda: service, tmp_path / "home", tmp_path / "work")
        return next(dict(c) for c in checks if c["check"] == "copilot hooks")

    try:
        missing = copilot_check()
        assert not missing["ok"] and "does not exist" in str(missing["detail"])
        assert missing["fix"] == "Run `orcmem setup copilot` (or `orcmem init`)."
        options = SetupOptions(tmp_path, tmp_path / "b", [sys.executable, "-m", "orcmem"])
        setup_copilot("user", state_dir=state, options=options)
        assert copilot_check()["ok"] and str(state / "hooks" / "orcmem.json") in str(copilot_check()["detail"])
        hooks = state / "hooks" / "orcmem.json"
        hooks.write_text(hooks.read_text().replace('"preToolUse"', '"somethingElse"'))
        assert "no orcmem hook for preToolUse" in str(copilot_check()["detail"])
    finally:
        service.close()


def agent_check(service: MemoryService, tmp_path: Path, cwd: Path, program: str, name: str) -> dict[str, object]:
    """The doctor's check `name` with a stand-in `program` on PATH (doctor only looks for it, never runs it)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / program).write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / program).chmod(0o755)
    path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", path)
        checks = doctor_checks(lambda: service, tmp_path / "home", cwd)
    return next(dict(c) for c in checks if c["check"] == name)


def test_opencode_on_path_is_checked_for_orcmems_plugin_and_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    folder, work = tmp_path / "config" / "opencode", tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder.parent))
    orcmem = [sys.executable, "-m", "orcmem"]
    service = MemoryService.open(tmp_path / "home")
    try:
        before = agent_check(service, tmp_path, work, "opencode", "opencode plugin")
        assert not before["ok"] and "does not exist" in str(before["detail"])
        assert before["fix"] == "Run `orcmem setup opencode` (or `orcmem init`)."
        setup_opencode("user", config_dir=folder, options=SetupOptions(work, tmp_path / "b", orcmem))
        after = agent_check(service, tmp_path, work, "opencode", "opencode plugin")
        assert after["ok"] and str(folder / "opencode.json") in str(after["detail"])
        (folder / "opencode.json").write_text('{"mcp": {}}')
        broken = agent_check(service, tmp_path, work, "opencode", "opencode plugin")
        assert not broken["ok"] and "no orcmem MCP server" in str(broken["detail"])
        # Wired for this project alone is wired too.
        setup_opencode("project", config_dir=folder, options=SetupOptions(work, tmp_path / "b", orcmem))
        assert agent_check(service, tmp_path, work, "opencode", "opencode plugin")["ok"]
    finally:
        service.close()
