"""Learning through the real agent CLIs from npm (tests/agent_clis, installed by scripts/check), offline.

The real `claude` and `codex` run a one-prompt session against loopback stand-ins of their model APIs
(tests/model_apis.py), with the hooks and MCP entries `orcmem setup` wrote; orcmem's hooks ingest what the CLI
itself wrote, and the worker distils it with the same real CLI. Skipped where the CLIs are not installed.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orcmem.host.warm import ask
from orcmem.service.memory_service import MemoryService
from orcmem.setup_agents.codex_trust import codex_hooks
from orcmem.worker.control import stop_workers
from tests.agent_cli_harness import agent_env, cli, learned, orcmem
from tests.fakes import loopback_http
from tests.helpers import wait_for
from tests.model_apis import ANSWER, DISTILL_MARK, AnthropicMessages, OpenAIResponses

LEARNED = ANSWER["memories"][0]["title"]


@pytest.fixture
def env(tmp_path: Path, orcmem_home: Path) -> Iterator[dict[str, str]]:
    """A HOME of its own and the real CLIs first on PATH, with no way out but loopback."""
    values = agent_env(
        tmp_path,
        orcmem_home,
        drop=("CODEX_HOME", "ANTHROPIC_AUTH_TOKEN", "CLAUDECODE", "OPENAI_BASE_URL"),
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    yield values
    stop_workers(orcmem_home)


def run_claude(claude: Path, prompt: str, project_dir: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """One `claude -p` session, its echo tool allowed."""
    command = [str(claude), "-p", prompt, "--allowedTools", "Bash(echo:*)"]
    return subprocess.run(command, cwd=project_dir, env=env, capture_output=True, text=True, timeout=120)


def run_codex(codex: Path, prompt: str, project_dir: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """One `codex exec` session, hooks run without the trust step (as for vetted automation)."""
    command = [str(codex), "exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check"]
    command += ["--sandbox", "danger-full-access", prompt]
    return subprocess.run(command, cwd=project_dir, env=env, capture_output=True, text=True, timeout=120)


def use_standin_model(env: dict[str, str], url: str) -> None:
    """Point Codex's config.toml at the loopback Responses stand-in."""
    config = Path(env["HOME"]) / ".codex" / "config.toml"
    provider = (
        'model = "gpt-5.5"\nmodel_provider = "standin"\n\n'
        f'[model_providers.standin]\nname = "standin"\nbase_url = "{url}/v1"\nwire_api = "responses"\n'
        "request_max_retries = 0\nstream_max_retries = 0\n\n"
    )
    config.write_text(provider + config.read_text(encoding="utf-8"), encoding="utf-8")


def distillation_calls(home: Path) -> list[Any]:
    """The distillation calls recorded in the profile (their usage), newest first."""
    service = MemoryService.open(home, vectors=False)
    try:
        return service.cost.recent(None, 10)
    finally:
        service.close()


def test_a_real_claude_code_session_is_learned_by_claude_code(env, project_dir: Path, orcmem_home: Path) -> None:
    claude = cli("claude")
    AnthropicMessages.requests.clear()
    with loopback_http(AnthropicMessages) as url:
        env.update({"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-test-not-a-key"})
        orcmem(env, project_dir, "setup", "claude", "--scope", "project")
        orcmem(env, project_dir, "memory", "on")
        session = run_claude(claude, "Say hello with echo", project_dir, env)
        assert session.returncode == 0, session.stderr
        turns, state, titles = learned(orcmem_home, project_dir)
    assert (turns, state, titles) == (1, "done", [LEARNED])
    distilled = [r for r in AnthropicMessages.requests if DISTILL_MARK in str(r.get("messages"))]
    assert len(distilled) == 1 and "haiku" in distilled[0]["model"]
    # What the real CLI's stream-json result said the call cost (the stand-in API's usage: 10 in, 5 out).
    [call] = distillation_calls(orcmem_home)
    assert (call.provider, call.status) == ("claude", "ok") and "haiku" in (call.model or "")
    assert call.input_tokens >= 10 and call.output_tokens >= 5 and call.cost_usd is not None


def test_a_real_codex_session_is_learned_by_codex(env, project_dir: Path, orcmem_home: Path) -> None:
    codex = cli("codex")
    OpenAIResponses.requests.clear()
    with loopback_http(OpenAIResponses) as url:
        env["OPENAI_API_KEY"] = "sk-test-not-a-key"
        orcmem(env, project_dir, "setup", "codex")
        use_standin_model(env, url)
        orcmem(env, project_dir, "memory", "on")
        session = run_codex(codex, "Say hello with echo", project_dir, env)
        assert session.returncode == 0, session.stderr
        turns, state, titles = learned(orcmem_home, project_dir)
    assert (turns, state, titles) == (1, "done", [LEARNED])
    distilled = [r for r in OpenAIResponses.requests if DISTILL_MARK in str(r.get("input"))]
    assert len(distilled) == 1
    asked = json.dumps(distilled[0])
    assert "mcp__orcmem" not in asked  # the configured MCP servers are switched off in the distillation run
    assert "json_schema" in json.dumps(distilled[0].get("text"))  # held to orcmem's output schema
    # What the real `codex exec --json` said the call cost: its turn.completed usage (the stand-in's 10 in, 5 out).
    [call] = distillation_calls(orcmem_home)
    assert (call.provider, call.status, call.input_tokens, call.output_tokens) == ("codex", "ok", 10, 5)


def test_codex_reads_the_server_entry_setup_writes_with_the_profile(env, project_dir: Path, orcmem_home: Path) -> None:
    """The real Codex parses config.toml: orcmem's server, its command, and $ORCMEM_HOME carried into its env."""
    codex = cli("codex")
    orcmem(env, project_dir, "setup", "codex")
    listed = subprocess.run(
        [str(codex), "mcp", "list", "--json"], env=env, cwd=project_dir, capture_output=True, text=True, timeout=60
    )
    assert listed.returncode == 0, listed.stderr
    [server] = [entry for entry in json.loads(listed.stdout) if entry["name"] == "orcmem"]
    assert server["enabled"] and server["transport"]["args"] == ["mcp"]
    assert Path(server["transport"]["command"]).name == "orcmem" or server["transport"]["command"].endswith("python")
    assert server["transport"]["env"] == {"ORCMEM_HOME": str(orcmem_home)}


def test_codex_reads_the_hooks_setup_writes_and_doctor_reports_their_trust(env, project_dir: Path) -> None:
    """Codex's own hook loader (`codex app-server`, hooks/list) finds orcmem's five hooks (PreToolUse too) with no
    warning; doctor reports them untrusted, trusted once the person trusts them in /hooks, and changed after a
    later setup."""
    codex = cli("codex")
    orcmem(env, project_dir, "setup", "codex")
    found = codex_hooks(str(codex), project_dir, env)
    assert sorted((hook.event, hook.command.rsplit(" ", 1)[-1]) for hook in found.orcmem) == [
        ("preToolUse", "pre-tool-use"),
        ("sessionEnd", "session-end"),
        ("sessionStart", "session-start"),
        ("stop", "stop"),
        ("userPromptSubmit", "prompt"),
    ]
    assert (found.warnings, found.errors) == ([], [])  # the SessionEnd timeout is within Codex's 3 s clamp
    assert {hook.status for hook in found.orcmem} == {"untrusted"}
    assert "skips 5 of orcmem's 5 hooks" in orcmem(env, project_dir, "doctor")

    config = Path(env["HOME"]) / ".codex" / "config.toml"
    with config.open("a") as file:  # what trusting them in Codex's /hooks records
        for hook in found.orcmem:
            file.write(f'\n[hooks.state."{hook.key}"]\ntrusted_hash = "{hook.current_hash}"\n')
    assert {hook.status for hook in codex_hooks(str(codex), project_dir, env).orcmem} == {"trusted"}
    assert "ok codex hooks: Codex trusts all 5 of orcmem's hooks" in orcmem(env, project_dir, "doctor")

    hooks_file = Path(env["HOME"]) / ".codex" / "hooks.json"
    hooks_file.write_text(hooks_file.read_text().replace("hook stop", "hook  stop"))  # changed since trusted
    assert "stop (modified)" in orcmem(env, project_dir, "doctor")


WARM_TITLE = "The car will not start in winter"
PARAPHRASE = "why won't my vehicle turn on when it's cold"  # no word in common with WARM_TITLE


@contextlib.contextmanager
def warm_server(env: dict[str, str], project_dir: Path, orcmem_home: Path, models: Path) -> Iterator[None]:
    """Memory on, the model installed, one embedded memory, and another session's `orcmem mcp` holding the socket."""
    orcmem(env, project_dir, "memory", "on")
    orcmem(env, project_dir, "model", "install", "--from", str(models / "minilm-l6-v2-int8"))
    orcmem(
        env, project_dir, "add", "--type", "lesson", "--title", WARM_TITLE, "--body", "The battery drains overnight."
    )
    orcmem(env, project_dir, "reindex")
    server = subprocess.Popen(
        [sys.executable, "-m", "orcmem", "mcp", "--project", str(project_dir)],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: ask(str(orcmem_home), {"prompt": "x", "cwd": str(project_dir)})[1] == "warm", timeout=90)
        yield
    finally:
        server.kill()
        server.wait()


def answered_warm(orcmem_home: Path) -> bool:
    """Whether the last prompt's recall came from the warm server and showed the memory."""
    last = (orcmem_home / "logs" / "recall.log").read_text().splitlines()[-1].split()
    return last[1] == "warm" and "shown=1" in last


def test_the_real_claude_code_hands_the_model_what_the_warm_server_recalls(
    env, project_dir: Path, orcmem_home: Path, int8_models_dir: Path
) -> None:
    """The command hook `setup` writes, answered by a running `orcmem mcp`: the memory recalled by meaning reaches
    the model's request in the real Claude Code."""
    claude = cli("claude")
    orcmem(env, project_dir, "setup", "claude", "--scope", "project")
    AnthropicMessages.requests.clear()
    with warm_server(env, project_dir, orcmem_home, int8_models_dir), loopback_http(AnthropicMessages) as url:
        env.update({"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-test-not-a-key"})
        session = run_claude(claude, PARAPHRASE, project_dir, env)
    assert session.returncode == 0, session.stderr
    asked = [r for r in AnthropicMessages.requests if DISTILL_MARK not in json.dumps(r.get("messages"))]
    first = next(r for r in asked if "vehicle" in json.dumps(r.get("messages")))
    assert WARM_TITLE in json.dumps(first["messages"])  # the recall, as added context, before the first turn
    assert answered_warm(orcmem_home)


def test_the_real_codex_hands_the_model_what_the_warm_server_recalls(
    env, project_dir: Path, orcmem_home: Path, int8_models_dir: Path
) -> None:
    """The same through `setup codex`'s hook in the real Codex (hooks trusted for the run)."""
    codex = cli("codex")
    OpenAIResponses.requests.clear()
    with warm_server(env, project_dir, orcmem_home, int8_models_dir), loopback_http(OpenAIResponses) as url:
        env["OPENAI_API_KEY"] = "sk-test-not-a-key"
        orcmem(env, project_dir, "setup", "codex")
        use_standin_model(env, url)
        session = run_codex(codex, PARAPHRASE, project_dir, env)
    assert session.returncode == 0, session.stderr
    asked = [r for r in OpenAIResponses.requests if DISTILL_MARK not in json.dumps(r.get("input"))]
    first = next(r for r in asked if "vehicle" in json.dumps(r.get("input")))
    assert WARM_TITLE in json.dumps(first["input"])  # the hook's context, a developer message, in the first request
    assert answered_warm(orcmem_home)


def test_the_real_claude_code_hands_the_model_the_memory_citing_a_file_it_reads(
    env, project_dir: Path, orcmem_home: Path
) -> None:
    """The PreToolUse hook `setup` writes, on a Read of a cited file: the memory reaches the model's next request in
    the real Claude Code (answered by the session's own `orcmem mcp` once it runs, else directly)."""
    claude = cli("claude")
    (project_dir / "deploy.md").write_text("# Deploy\n\nRun the release script.\n")
    orcmem(env, project_dir, "setup", "claude", "--scope", "project")
    orcmem(env, project_dir, "memory", "on")
    title = "Deploys need the staging flag"
    orcmem(
        env,
        project_dir,
        "add",
        "--type",
        "lesson",
        "--title",
        title,
        "--body",
        "pass --staging first",
        "--file",
        "deploy.md",
    )

    class ReadsAFile(AnthropicMessages):
        tool_call = ("Read", {"file_path": str(project_dir / "deploy.md")})

    ReadsAFile.requests.clear()
    with loopback_http(ReadsAFile) as url:
        env.update({"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-test-not-a-key"})
        session = run_claude(claude, "Read the deploy notes", project_dir, env)
    assert session.returncode == 0, session.stderr
    asked = [r for r in ReadsAFile.requests if DISTILL_MARK not in json.dumps(r.get("messages"))]
    after = [r for r in asked if "tool_result" in json.dumps(r.get("messages"))]
    before = [r for r in asked if "tool_result" not in json.dumps(r.get("messages"))]
    # The brief already names it once; the Read's hook adds it again, next to the tool call.
    assert after and before
    assert json.dumps(after[0]["messages"]).count(title) > json.dumps(before[0]["messages"]).count(title)
    logged = (orcmem_home / "logs" / "recall.log").read_text()
    tool_lines = [line for line in logged.splitlines() if " tool, " in line]  # the session's own server, or direct
    assert len(tool_lines) == 1 and "shown=1" in tool_lines[0]


def test_the_real_codex_hands_the_model_the_memory_citing_a_file_it_patches(
    env, project_dir: Path, orcmem_home: Path
) -> None:
    """The PreToolUse hook `setup codex` writes, on an apply_patch of a cited file: Codex 0.171 runs it and its
    `additionalContext` reaches the model's next request (hooks trusted for the run)."""
    codex = cli("codex")
    (project_dir / "deploy.md").write_text("# Deploy\n\nRun the release script.\n")
    title = "Deploys need the staging flag"
    orcmem(env, project_dir, "memory", "on")
    add = ["add", "--type", "lesson", "--title", title, "--body", "pass --staging first", "--file", "deploy.md"]
    orcmem(env, project_dir, *add)
    patch = "*** Begin Patch\n*** Update File: deploy.md\n@@\n-Run the release script.\n+Run the release script.\n"
    patch += "*** End Patch\n"

    class PatchesAFile(OpenAIResponses):
        tool_item = {"type": "custom_tool_call", "name": "apply_patch", "input": patch}

    PatchesAFile.requests.clear()
    with loopback_http(PatchesAFile) as url:
        env["OPENAI_API_KEY"] = "sk-test-not-a-key"
        orcmem(env, project_dir, "setup", "codex")
        use_standin_model(env, url)
        session = run_codex(codex, "Tidy the deploy notes", project_dir, env)
    assert session.returncode == 0, session.stderr
    asked = [r for r in PatchesAFile.requests if DISTILL_MARK not in json.dumps(r.get("input"))]
    after = [r for r in asked if "custom_tool_call_output" in json.dumps(r.get("input"))]
    before = [r for r in asked if "custom_tool_call_output" not in json.dumps(r.get("input"))]
    assert after and before, [json.dumps(r.get("input"))[:300] for r in asked]
    # The brief already names it once; the patch's hook adds it again, next to the tool call.
    assert json.dumps(after[0]["input"]).count(title) > json.dumps(before[0]["input"]).count(title), json.dumps(
        after[0]["input"]
    )[-3000:]
    logged = (orcmem_home / "logs" / "recall.log").read_text()
    tool_lines = [line for line in logged.splitlines() if " tool, " in line]
    assert len(tool_lines) == 1 and "shown=1" in tool_lines[0]
