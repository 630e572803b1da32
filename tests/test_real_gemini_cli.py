"""orcmem inside the real Gemini CLI from npm (tests/agent_clis, pinned), offline against a loopback stand-in of the
Gemini API (tests/model_apis.GeminiGenerate): the settings `orcmem setup gemini` writes are accepted, its MCP server
is listed and connects, the brief reaches the first model request and recall a prompt's.

Gemini CLI 0.61 takes a local API only with `security.auth.selectedType: "gemini-api-key"` in its settings and
GOOGLE_GEMINI_BASE_URL; an untrusted folder needs GEMINI_CLI_TRUST_WORKSPACE=true. Skipped where it is not installed.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from orcmem.service.memory_service import MemoryService
from orcmem.worker.control import stop_workers
from tests.agent_cli_harness import agent_env, cli, learned, mcp_list_line, orcmem
from tests.fakes import loopback_http
from tests.model_apis import DISTILL_MARK, FINAL_TEXT, GeminiGenerate
from tests.test_real_agent_clis import LEARNED, distillation_calls

BRIEFED = ("Factorial must be iterative", "recursion blows the stack on CI")
RECALLED = ("Release builds need the lockfile", "cargo build --release fails without Cargo.lock committed")


@pytest.fixture
def env(tmp_path: Path, orcmem_home: Path) -> Iterator[dict[str, str]]:
    """A HOME of its own (Gemini CLI's too), the CLI and this orcmem first on PATH, no way out but loopback."""
    values = agent_env(
        tmp_path,
        orcmem_home,
        drop=("GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_GENAI_USE_VERTEXAI"),
        GEMINI_CLI_HOME=str(tmp_path / "home"),
        GEMINI_CLI_TRUST_WORKSPACE="true",
    )
    yield values
    stop_workers(orcmem_home)


def offline_settings(env: dict[str, str]) -> None:
    """Add to the settings orcmem wrote what keeps Gemini CLI on the loopback API and quiet."""
    path = Path(env["GEMINI_CLI_HOME"]) / ".gemini" / "settings.json"
    settings = json.loads(path.read_text())
    settings.update(
        security={"auth": {"selectedType": "gemini-api-key"}},
        privacy={"usageStatisticsEnabled": False},
        telemetry={"enabled": False},
        general={"enableAutoUpdate": False},
    )
    path.write_text(json.dumps(settings, indent=2))


def test_gemini_cli_lists_and_connects_the_server_setup_wrote(env, project_dir: Path) -> None:
    program = cli("gemini")
    orcmem(env, project_dir, "setup", "gemini")
    line = mcp_list_line(program, project_dir, env)
    assert "orcmem mcp" in line and "Connected" in line


def test_a_gemini_session_gets_the_brief_first_and_recall_with_its_prompt_and_is_queued(
    env, project_dir: Path, orcmem_home: Path
) -> None:
    program = cli("gemini")
    orcmem(env, project_dir, "setup", "gemini")
    offline_settings(env)
    orcmem(env, project_dir, "memory", "on")
    orcmem(env, project_dir, "add", "--type", "lesson", "--title", BRIEFED[0], "--body", BRIEFED[1])
    GeminiGenerate.requests.clear()
    GeminiGenerate.call = None
    with loopback_http(GeminiGenerate) as url:
        env.update({"GOOGLE_GEMINI_BASE_URL": url, "GEMINI_API_KEY": "test-not-a-key"})
        orcmem(env, project_dir, "add", "--type", "lesson", "--title", RECALLED[0], "--body", RECALLED[1])
        prompt = "Why does cargo build --release fail here without the Cargo.lock lockfile committed?"
        command = [str(program), "-p", prompt, "-m", "gemini-2.5-flash"]
        session = subprocess.run(command, cwd=project_dir, env=env, capture_output=True, text=True, timeout=180)
    assert session.returncode == 0, session.stderr
    assert FINAL_TEXT in session.stdout
    first = json.dumps(GeminiGenerate.requests[0]["contents"])
    # Gemini CLI wraps hook context in <hook_context> and escapes < and > inside it.
    assert '<hook_context>&lt;orcmem-context kind=\\"brief\\"' in first and BRIEFED[0] in first
    assert first.index(BRIEFED[0]) < first.index(prompt)  # SessionStart: before the prompt
    assert 'kind=\\"recall\\"' in first and RECALLED[0] in first.split(prompt, 1)[1]  # BeforeAgent: after it
    # SessionEnd read the session file Gemini CLI wrote and queued the run, once, without the brief in its prompt.
    service = MemoryService.open(orcmem_home, vectors=False)
    try:
        jobs = service.store.jobs.list(None)
    finally:
        service.close()
    assert len(jobs) == 1
    run = jobs[0][1]
    assert run.agent == "gemini" and run.turns == 1


def test_a_gemini_session_is_offered_orcmems_search_and_gets_its_answer(env, project_dir: Path) -> None:
    program = cli("gemini")
    orcmem(env, project_dir, "setup", "gemini")
    offline_settings(env)
    orcmem(env, project_dir, "memory", "on")
    orcmem(env, project_dir, "add", "--type", "lesson", "--title", RECALLED[0], "--body", RECALLED[1])
    GeminiGenerate.requests.clear()
    GeminiGenerate.call = {"name": "mcp_orcmem_memory_search", "args": {"query": "lockfile release build"}}
    try:
        with loopback_http(GeminiGenerate) as url:
            env.update({"GOOGLE_GEMINI_BASE_URL": url, "GEMINI_API_KEY": "test-not-a-key"})
            command = [str(program), "-p", "Look it up in memory", "-m", "gemini-2.5-flash"]
            session = subprocess.run(command, cwd=project_dir, env=env, capture_output=True, text=True, timeout=180)
    finally:
        GeminiGenerate.call = None
    assert session.returncode == 0, session.stderr
    streamed = [r for r in GeminiGenerate.requests if ":streamGenerateContent" in r["path"]]
    offered = json.dumps(streamed[0].get("tools", []))
    assert "mcp_orcmem_memory_search" in offered  # trusted: `gemini -p` keeps the server's tools
    assert streamed[-1] is not streamed[0]  # it called the tool and sent something back
    responses = [
        json.dumps(part["functionResponse"])
        for content in streamed[-1]["contents"]
        for part in content.get("parts", [])
        if "functionResponse" in part
    ]
    assert len(responses) == 1 and "mcp_orcmem_memory_search" in responses[0], responses
    # memory_search answers an object (MCP structuredContent): Gemini CLI 0.61's transport rejects a tool's answer
    # whose text parses as JSON but not as an object, which a bare list did.
    assert RECALLED[0] in responses[0] and '\\"memories\\"' in responses[0], responses[0]


def test_a_real_gemini_session_is_learned_by_gemini_cli(env, project_dir: Path, orcmem_home: Path) -> None:
    """`gemini -p` distils the run (provider auto: the agent that ran it), once, with no tool to call."""
    program = cli("gemini")
    orcmem(env, project_dir, "setup", "gemini")
    offline_settings(env)
    orcmem(env, project_dir, "memory", "on")
    GeminiGenerate.requests.clear()
    GeminiGenerate.call = None
    with loopback_http(GeminiGenerate) as url:
        env.update({"GOOGLE_GEMINI_BASE_URL": url, "GEMINI_API_KEY": "test-not-a-key"})
        command = [str(program), "-p", "Say hello", "-m", "gemini-2.5-flash"]
        session = subprocess.run(command, cwd=project_dir, env=env, capture_output=True, text=True, timeout=180)
        assert session.returncode == 0, session.stderr
        turns, state, titles = learned(orcmem_home, project_dir, timeout=150)
    assert (turns, state, titles) == (1, "done", [LEARNED])
    distilled = [r for r in GeminiGenerate.requests if DISTILL_MARK in json.dumps(r.get("contents"))]
    assert len(distilled) == 1 and "gemini-2.5-flash:" in distilled[0]["path"]
    declared = [tool.get("functionDeclarations") for tool in distilled[0].get("tools", [])]
    assert all(not functions for functions in declared)  # every tool denied: none offered, orcmem's MCP neither
    assert "hook_context" not in json.dumps(distilled[0]["contents"])  # no hook ran inside the distillation
    # What the real CLI's JSON stats said the call cost (the stand-in API's usage: 10 in, 4 out).
    [call] = distillation_calls(orcmem_home)
    assert (call.provider, call.status, call.model) == ("gemini", "ok", "gemini-2.5-flash")
    assert (call.input_tokens, call.output_tokens) == (10, 4)
