"""orcmem's hooks under GitHub Copilot CLI: its camel-case payloads (no event name; seen from the real 1.0.102,
docs/agents.md) read, and the answer in the only shape it passes to the model, a top-level `additionalContext`,
from the word path and from the warm server alike."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from orcmem.hooks.handlers import shared_shape
from orcmem.mcp_server.recall_socket import RecallSocket
from orcmem.models.types import Project
from orcmem.service.memory_service import MemoryService
from tests.helpers import user_memory
from tests.test_hooks import remembered, run_hook  # noqa: F401 - `remembered` is a fixture the tests use

SESSION = "b75e2511-b497-4628-8126-a29580735b5d"
TITLE = "Factorial must be iterative"


def copilot(project_dir: Path, **fields: object) -> dict[str, object]:
    """A Copilot CLI hook payload: `sessionId`, `timestamp` in ms, `cwd`, and the event's own fields."""
    return {"sessionId": SESSION, "timestamp": 1796673411733, "cwd": str(project_dir), **fields}


@pytest.mark.usefixtures("remembered")
def test_user_prompt_submitted_gets_recall_as_top_level_additional_context(project_dir: Path) -> None:
    answer = json.loads(run_hook("prompt", copilot(project_dir, prompt="Factorial?")))
    assert list(answer) == ["additionalContext"] and TITLE in answer["additionalContext"]


@pytest.mark.usefixtures("remembered")
def test_session_start_gets_the_brief_in_copilots_shape(project_dir: Path) -> None:
    event = copilot(project_dir, source="new", initialPrompt="Factorial?")
    answer = json.loads(run_hook("session-start", event))
    assert list(answer) == ["additionalContext"] and 'kind="brief"' in answer["additionalContext"]


def test_pre_tool_use_gets_the_memory_about_a_command_in_copilots_shape(
    service: MemoryService, project: Project, project_dir: Path
) -> None:
    service.record(project, user_memory("cargo build needs the lockfile", "cargo build fails", type="lesson"))
    event = copilot(project_dir, toolName="bash", toolArgs={"command": "cargo build --release"})
    answer = json.loads(run_hook("pre-tool-use", event))
    assert list(answer) == ["additionalContext"] and "cargo build needs the lockfile" in answer["additionalContext"]
    assert run_hook("pre-tool-use", event) == ""  # once per session


def test_session_end_finds_the_transcript_under_copilot_home(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "state"))
    shaped = shared_shape({"sessionId": SESSION, "cwd": "/w", "reason": "complete", "timestamp": 1})
    assert shaped["hook_event_name"] == "sessionEnd" and shaped["session_id"] == SESSION
    assert shaped["transcript_path"] == str(tmp_path / "state" / "session-state" / SESSION / "events.jsonl")
    stop = shared_shape({"sessionId": SESSION, "cwd": "/w", "transcriptPath": "/t/events.jsonl", "stopReason": "x"})
    assert (stop["hook_event_name"], stop["transcript_path"]) == ("agentStop", "/t/events.jsonl")
    odd = shared_shape({"sessionId": "../../x", "cwd": "/w", "reason": "complete"})
    assert odd["transcript_path"] is None  # a session id that is a path leads nowhere
    claude = {"session_id": "s", "hook_event_name": "Stop", "cwd": "/w"}
    assert shared_shape(claude) is claude


@pytest.fixture
def warm_home() -> Iterator[Path]:
    """A profile whose warm server answers every prompt with `about <prompt>`."""
    home = Path(tempfile.mkdtemp(dir="/tmp", prefix="om-"))  # a short path: the socket's name has a length limit
    server = RecallSocket(home, lambda request: {"text": f"about {request['prompt']}", "path": "warm"})
    server.start()
    assert server.holding.wait(5)
    yield home
    server.close()
    shutil.rmtree(home, ignore_errors=True)


def test_the_warm_server_answers_copilots_prompt_hook_in_its_shape(warm_home: Path, tmp_path: Path) -> None:
    hook, asked = [sys.executable, "-m", "orcmem", "hook", "prompt"], json.dumps(copilot(tmp_path, prompt="the pool"))
    env = {**os.environ, "ORCMEM_HOME": str(warm_home)}
    result = subprocess.run(hook, input=asked, capture_output=True, text=True, timeout=60, env=env)
    assert json.loads(result.stdout) == {"additionalContext": "about the pool"}, result.stderr
