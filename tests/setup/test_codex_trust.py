"""Asking Codex whether it trusts orcmem's hooks: what doctor says when Codex answers badly or not at all.

The real Codex's answers are checked in tests/test_real_agent_clis.py; these stand-ins reproduce its failures.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from orcmem.models.errors import OrcmemError
from orcmem.setup_agents.codex_trust import codex_hooks, trust_summary

HOOK = {
    "key": "/h/.codex/hooks.json:stop:0:0",
    "eventName": "stop",
    "handlerType": "command",
    "command": "/opt/bin/orcmem hook stop",
    "sourcePath": "/h/.codex/hooks.json",
    "currentHash": "sha256:00",
    "trustStatus": "untrusted",
}
OTHER = {**HOOK, "command": "/opt/bin/lint --fix", "key": "/h/.codex/hooks.json:stop:0:1"}


def stand_in(tmp_path: Path, body: str) -> Path:
    """A `codex` program whose app server behaves as the shell body says."""
    script = tmp_path / "codex"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return script


def answering(tmp_path: Path, *hooks: dict, status: str = "untrusted") -> Path:
    answer = {"id": 1, "result": {"data": [{"cwd": "/p", "hooks": list(hooks), "warnings": [], "errors": []}]}}
    lines = [
        "not json",
        json.dumps({"id": 0, "result": {}}),
        json.dumps({"method": "configWarning"}),
        json.dumps(answer),
    ]
    printed = "\n".join(f"echo '{line}'" for line in lines)
    return stand_in(tmp_path, f"read first\n{printed}\nsleep 30")  # stays up, as the real one does, until killed


def test_only_orcmem_hooks_are_reported_and_the_server_is_stopped(tmp_path: Path) -> None:
    started = time.monotonic()
    found = codex_hooks(str(answering(tmp_path, HOOK, OTHER)), tmp_path)
    assert time.monotonic() - started < 10  # killed once it answered, not left to its sleep
    assert [(hook.event, hook.status, hook.runs) for hook in found.orcmem] == [("stop", "untrusted", False)]
    assert trust_summary(found) == (
        False,
        "Codex skips 1 of orcmem's 1 hooks until they are trusted: stop (untrusted)",
        "Open /hooks in Codex and trust orcmem's hooks.",
    )


def test_trusted_and_managed_hooks_run(tmp_path: Path) -> None:
    hooks = [{**HOOK, "trustStatus": "trusted"}, {**HOOK, "eventName": "sessionStart", "trustStatus": "managed"}]
    ok, detail, fix = trust_summary(codex_hooks(str(answering(tmp_path, *hooks)), tmp_path))
    assert (ok, detail, fix) == (True, "Codex trusts all 2 of orcmem's hooks", "")


def test_no_orcmem_hooks_says_how_to_add_them(tmp_path: Path) -> None:
    ok, detail, fix = trust_summary(codex_hooks(str(answering(tmp_path, OTHER)), tmp_path))
    assert not ok and detail == "Codex finds none of orcmem's hooks" and "orcmem setup codex" in fix


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("exit 3", "stopped before it listed the hooks"),
        ("sleep 30", "did not list the hooks within 0.5 s"),
        (
            """read first; echo '{"id": 1, "error": {"code": -32601, "message": "no such method"}}'; sleep 30""",
            "refused hooks/list",
        ),
    ],
)
def test_a_codex_that_fails_gives_one_line(tmp_path: Path, body: str, said: str) -> None:
    with pytest.raises(OrcmemError, match=said):
        codex_hooks(str(stand_in(tmp_path, body)), tmp_path, timeout_s=0.5)


def test_a_missing_codex_gives_one_line(tmp_path: Path) -> None:
    with pytest.raises(OrcmemError, match="could not run"):
        codex_hooks(str(tmp_path / "nowhere" / "codex"), tmp_path)


def test_doctor_reports_a_broken_codex_without_failing(run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORCMEM_CODEX_BIN", str(stand_in(tmp_path, "exit 3")))
    result = run("doctor", ok=False)
    assert result.exit_code == 0, result.output + result.stderr
    assert "-- codex hooks: could not ask Codex: codex app-server stopped before it listed the hooks" in result.stdout
