"""orcmem inside the real OpenCode from npm (`opencode-ai`, pinned in tests/agent_clis), offline against a loopback
stand-in of an OpenAI-compatible API (tests/model_apis.OpenAIChat, a custom provider in opencode.json): the plugin
and MCP server `orcmem setup opencode` writes load, the brief reaches the model's requests, recall a prompt's, the
memories about a command its tool result, orcmem's search is offered and answered, and a finished session is
queued and distilled once (by a stand-in `claude`, tests/standin_agent.py, or by `opencode run` itself: one turn
with no tool offered, no plugin and no MCP server started).

OpenCode 1.18 needs OPENCODE_DISABLE_AUTOUPDATE, OPENCODE_DISABLE_MODELS_FETCH, OPENCODE_DISABLE_SHARE and
npm_config_offline to stay offline, and takes its folder from PWD. Skipped where it is not installed.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orcmem.service.memory_service import MemoryService
from orcmem.worker.control import stop_workers
from tests.agent_cli_harness import agent_env, cli, cli_path, learned, mcp_list_line, orcmem
from tests.fakes import loopback_http
from tests.model_apis import DISTILL_MARK, FINAL_TEXT, OpenAIChat
from tests.test_real_agent_clis import LEARNED, distillation_calls

STANDIN = Path(__file__).with_name("standin_agent.py")
BRIEFED = ("Factorial must be iterative", "recursion blows the stack on CI")
RECALLED = ("Release builds need the lockfile", "cargo build --release fails without Cargo.lock committed")
ACTING = ("deploytool publish needs the staging workspace", "select the staging workspace before deploytool publish")
PROMPT = "Why does cargo build --release fail here without the Cargo.lock lockfile committed?"


@pytest.fixture
def env(tmp_path: Path, orcmem_home: Path, project_dir: Path) -> Iterator[dict[str, str]]:
    """A HOME and XDG folders of its own, a stand-in `claude` to distil, the CLIs and this orcmem on PATH, offline."""
    home, bin_dir = tmp_path / "home", tmp_path / "bin"
    bin_dir.mkdir()
    claude = bin_dir / "claude"
    claude.write_text(f"#!{sys.executable}\n" + STANDIN.read_text(encoding="utf-8"), encoding="utf-8")
    claude.chmod(0o755)
    values = agent_env(
        tmp_path,
        orcmem_home,
        drop=("OPENCODE_CONFIG", "OPENCODE_CONFIG_DIR", "OPENCODE_DB", "OPENAI_API_KEY", "CODEX_HOME"),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        PWD=str(project_dir),  # OpenCode takes its folder from PWD, not the process's own
        PATH=f"{bin_dir}{os.pathsep}{cli_path()}",
        OPENCODE_DISABLE_AUTOUPDATE="1",
        OPENCODE_DISABLE_MODELS_FETCH="1",
        OPENCODE_DISABLE_SHARE="1",
        npm_config_offline="true",
        STANDIN_PROMPTS=str(tmp_path / "prompts.txt"),
    )
    yield values
    stop_workers(orcmem_home)


def use_standin_model(env: dict[str, str], url: str) -> None:
    """Add to the opencode.json orcmem wrote a custom provider on the loopback stand-in, and make it the model."""
    path = Path(env["XDG_CONFIG_HOME"]) / "opencode" / "opencode.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    provider = {"npm": "@ai-sdk/openai-compatible", "name": "Stand-in", "options": {"baseURL": f"{url}/v1"}}
    provider["options"]["apiKey"] = "test-not-a-key"
    provider["models"] = {"standin-1": {"name": "Stand-in 1"}}
    config.update(provider={"standin": provider}, model="standin/standin-1")
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")


def run_opencode(
    env: dict[str, str], cwd: Path, call: dict[str, Any] | None, prompt: str = PROMPT, *flags: str, url: str = ""
) -> subprocess.CompletedProcess[str]:
    """One `opencode run` against the stand-in (the prompt on stdin), the model making `call` first; on the
    stand-in already serving at `url`, else on one of its own."""
    OpenAIChat.requests.clear()
    OpenAIChat.call = call
    try:
        with contextlib.ExitStack() as stack:
            use_standin_model(env, url or stack.enter_context(loopback_http(OpenAIChat)))
            command = [str(cli("opencode")), "run", *flags]
            return subprocess.run(command, input=prompt, cwd=cwd, env=env, capture_output=True, text=True, timeout=180)
    finally:
        OpenAIChat.call = None


def session_requests() -> list[str]:
    """The coding session's requests (not OpenCode's side request for a title), as JSON text."""
    return [json.dumps(r["messages"]) for r in OpenAIChat.requests if r.get("tools")]


def set_up(env: dict[str, str], cwd: Path) -> None:
    cli("opencode")
    orcmem(env, cwd, "setup", "opencode")
    orcmem(env, cwd, "memory", "on")
    for kind, (title, body) in (("lesson", BRIEFED), ("lesson", RECALLED), ("env_quirk", ACTING)):
        orcmem(env, cwd, "add", "--type", kind, "--title", title, "--body", body)


def test_opencode_lists_and_connects_the_server_setup_wrote(env, project_dir: Path) -> None:
    program = cli("opencode")
    orcmem(env, project_dir, "setup", "opencode")
    line = mcp_list_line(program, project_dir, env)
    assert "connected" in line.lower(), line


def test_an_opencode_session_gets_the_brief_recall_and_tool_memory_and_is_learned_once(
    env, project_dir: Path, orcmem_home: Path
) -> None:
    set_up(env, project_dir)
    orcmem(env, project_dir, "memory", "provider", "claude")
    session = run_opencode(env, project_dir, {"name": "bash", "arguments": {"command": "deploytool publish --yes"}})
    assert session.returncode == 0, session.stderr
    assert FINAL_TEXT in session.stdout
    first, *later = session_requests()
    # The brief is in the system prompt of every request of the session, from the first.
    assert 'kind=\\"brief\\"' in first and BRIEFED[0] in first.split('"role": "user"')[0]
    # Recall: beside the prompt, in the user's message.
    user = first.split(PROMPT, 1)[1]
    assert 'kind=\\"recall\\"' in user and RECALLED[0] in user
    # Memory when the agent acts: the command's lesson came back with the tool's result.
    answered = json.loads(later[0])
    tool_results = [m["content"] for m in answered if m.get("role") == "tool"]
    assert len(tool_results) == 1 and ACTING[0] in tool_results[0] and "orcmem-context" in tool_results[0]
    # The session's end (the plugin's dispose) queued the run once, and the worker distilled it once.
    turns, state, titles = learned(orcmem_home, project_dir)
    assert (turns, state) == (1, "done") and "Run the tests with uv run pytest" in titles
    assert [run.agent for run in runs_of(orcmem_home)] == ["opencode"]  # one run, queued once
    prompts = Path(env["STANDIN_PROMPTS"]).read_text(encoding="utf-8").split("\n\f\n")
    distilled = [p for p in prompts if "Run to distill:" in p]
    assert len(distilled) == 1
    # It read the prompt and the tool's output from OpenCode's database, without orcmem's own context.
    assert PROMPT in distilled[0] and "deploytool" in distilled[0] and "orcmem-context" not in distilled[0]


def test_an_opencode_session_is_offered_orcmems_search_and_gets_its_answer(env, project_dir: Path) -> None:
    set_up(env, project_dir)
    session = run_opencode(env, project_dir, {"name": "orcmem_memory_search", "arguments": {"query": "lockfile"}})
    assert session.returncode == 0, session.stderr
    first, *later = [json.loads(text) for text in session_requests()]
    offered = [tool["function"]["name"] for tool in OpenAIChat.requests[-1]["tools"]]
    assert "orcmem_memory_search" in offered
    results = [m["content"] for m in later[0] if m.get("role") == "tool"]
    assert len(results) == 1 and RECALLED[0] in results[0], results


def test_a_continued_session_gets_recall_for_its_next_prompt_and_stays_one_run(
    env, project_dir: Path, orcmem_home: Path
) -> None:
    set_up(env, project_dir)
    assert run_opencode(env, project_dir, None).returncode == 0
    later = "Before deploytool publish, which workspace must be selected?"
    session = run_opencode(env, project_dir, None, later, "--continue")
    assert session.returncode == 0, session.stderr
    (request,) = session_requests()
    assert PROMPT in request  # the same session, its first prompt still there
    beside = request.split(later, 1)[1]
    assert 'kind=\\"recall\\"' in beside and ACTING[0] in beside
    assert [(run.agent, run.turns) for run in runs_of(orcmem_home)] == [("opencode", 2)]


def runs_of(home: Path) -> list[Any]:
    """The runs that have a job, one per job."""
    service = MemoryService.open(home, vectors=False)
    try:
        return [run for _job, run in service.store.jobs.list(None)]
    finally:
        service.close()


def test_an_opencode_session_is_learned_by_opencode_itself(env, project_dir: Path, orcmem_home: Path) -> None:
    """`opencode run` distils the run (provider auto), once, with no tool offered, no plugin and no MCP server."""
    set_up(env, project_dir)
    spy = project_dir.parent / "mcp-started.txt"  # a second MCP server that notes each start, distilling or not
    path = Path(env["XDG_CONFIG_HOME"]) / "opencode" / "opencode.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    note = f'echo "distilling=${{ORCMEM_DISTILLING:-0}}" >> {spy}; exec sleep 60'
    config["mcp"]["spy"] = {"type": "local", "command": ["/bin/sh", "-c", note]}
    path.write_text(json.dumps(config), encoding="utf-8")
    with loopback_http(OpenAIChat) as url:
        session = run_opencode(env, project_dir, None, url=url)
        assert session.returncode == 0, session.stderr
        turns, state, titles = learned(orcmem_home, project_dir, timeout=150)
    assert (turns, state) == (1, "done") and LEARNED in titles
    distilled = [r for r in OpenAIChat.requests if DISTILL_MARK in json.dumps(r["messages"])]
    assert len(distilled) == 1 and not distilled[0].get("tools")  # one request, no tool offered
    system = json.dumps([m for m in distilled[0]["messages"] if m["role"] == "system"])
    assert BRIEFED[0] not in system and "orcmem-context" not in system  # orcmem's plugin did not run in it
    assert spy.read_text(encoding="utf-8").split() == ["distilling=0"]  # the session's start only
    assert [run.agent for run in runs_of(orcmem_home)] == ["opencode"]  # the distillation is no run of its own
    [call] = distillation_calls(orcmem_home)
    assert (call.provider, call.status, call.model) == ("opencode", "ok", None)
    assert (call.input_tokens, call.output_tokens) == (10, 5)  # the stand-in API's usage, from step_finish
