"""orcmem inside the real GitHub Copilot CLI from npm (tests/agent_clis, pinned), offline against a loopback
OpenAI-compatible stand-in (tests/model_apis.OpenAIChat): the hooks and MCP server `orcmem setup copilot` writes
are run and connected, the brief reaches the first model request, recall the prompt's and a later prompt's (the
session resumed), memory before a tool call the request after it, orcmem's `memory_search` is offered and answered,
and the finished session is queued and distilled once.

Copilot CLI 1.0 takes a local model without a GitHub login in its documented offline mode: COPILOT_OFFLINE=true,
COPILOT_PROVIDER_TYPE=openai and COPILOT_PROVIDER_BASE_URL. It keeps those (and ANTHROPIC_API_KEY) out of the
environment of its hooks, so the run is distilled by the real Claude Code (`orcmem memory provider claude`) against
the Messages stand-in, the key given in the hook entries' `env`. The last two tests pin why Copilot CLI is not a
distilling provider itself: `copilot -p` runs the person's own hooks whatever flag, and a COPILOT_HOME of its own
leaves the sign-in behind (docs/agents.md).
Skipped where the CLIs are not installed.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from orcmem.service.memory_service import MemoryService
from orcmem.worker.control import stop_workers
from tests.agent_cli_harness import agent_env, cli, learned, orcmem
from tests.fakes import loopback_http
from tests.model_apis import ANSWER, DISTILL_MARK, FINAL_TEXT, AnthropicMessages, OpenAIChat

BRIEFED = ("Factorial must be iterative", "recursion blows the stack on CI")
RECALLED = ("Release builds need the lockfile", "cargo build --release fails without Cargo.lock committed")
PROMPT = "Why does cargo build --release fail here without the Cargo.lock lockfile committed?"


@pytest.fixture
def env(tmp_path: Path, orcmem_home: Path) -> Iterator[dict[str, str]]:
    """A HOME of its own (Copilot CLI's ~/.copilot too), the CLIs and this orcmem first on PATH, loopback only."""
    values = agent_env(
        tmp_path,
        orcmem_home,
        drop=("COPILOT_HOME", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_GITHUB_TOKEN", "CLAUDECODE", "OPENAI_BASE_URL"),
        COPILOT_OFFLINE="true",
        COPILOT_PROVIDER_TYPE="openai",
        COPILOT_PROVIDER_API_KEY="test-not-a-key",
        COPILOT_MODEL="gpt-4.1",
        COPILOT_AUTO_UPDATE="false",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    yield values
    stop_workers(orcmem_home)


def run_copilot(
    env: dict[str, str], project_dir: Path, url: str, prompt: str, *more: str
) -> subprocess.CompletedProcess[str]:
    """One `copilot -p` session against the stand-in at `url`, every tool allowed (as prompt mode needs)."""
    command = [str(cli("copilot")), "-p", prompt, "--allow-all-tools", "--output-format", "json", *more]
    run_env = {**env, "COPILOT_PROVIDER_BASE_URL": f"{url}/v1"}
    return subprocess.run(command, cwd=project_dir, env=run_env, capture_output=True, text=True, timeout=180)


def hooks_get_the_key(path: Path, key: str) -> None:
    """Give orcmem's hooks the Anthropic key, as a hook entry's `env`: Copilot CLI keeps ANTHROPIC_API_KEY (and its
    own provider's variables) out of the environment its hooks inherit, so the worker they start would find Claude
    Code signed out (a person signed in to Claude Code needs none of this)."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    for handlers in doc["hooks"].values():
        for handler in handlers:
            handler["env"] = {"ANTHROPIC_API_KEY": key}
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")


def said(request: dict[str, object]) -> list[str]:
    """The texts of a chat request's messages after the system prompt, in order."""
    messages = request.get("messages")
    assert isinstance(messages, list)
    return [json.dumps(m.get("content")) for m in messages if isinstance(m, dict) and m.get("role") != "system"]


def test_a_copilot_session_gets_the_brief_recall_and_search_and_is_distilled_once(
    env, project_dir: Path, orcmem_home: Path
) -> None:
    cli("copilot")
    cli("claude")  # distils the run
    OpenAIChat.requests.clear()
    AnthropicMessages.requests.clear()
    OpenAIChat.call = {"name": "orcmem-memory_search", "arguments": {"query": "lockfile release build"}}
    try:
        with loopback_http(OpenAIChat) as url, loopback_http(AnthropicMessages) as claude_url:
            env.update({"ANTHROPIC_BASE_URL": claude_url, "ANTHROPIC_API_KEY": "sk-ant-test-not-a-key"})
            orcmem(env, project_dir, "setup", "copilot")
            hooks_get_the_key(Path(env["HOME"]) / ".copilot" / "hooks" / "orcmem.json", env["ANTHROPIC_API_KEY"])
            orcmem(env, project_dir, "memory", "on")
            orcmem(env, project_dir, "memory", "provider", "claude")
            orcmem(env, project_dir, "add", "--type", "lesson", "--title", BRIEFED[0], "--body", BRIEFED[1])
            orcmem(env, project_dir, "add", "--type", "lesson", "--title", RECALLED[0], "--body", RECALLED[1])
            session = run_copilot(env, project_dir, url, PROMPT)
            assert session.returncode == 0, session.stderr
            turns, state, titles = learned(orcmem_home, project_dir)
    finally:
        OpenAIChat.call = None
    assert FINAL_TEXT in session.stdout
    first = said(OpenAIChat.requests[0])
    # sessionStart: a user message of its own before the prompt; userPromptSubmitted: after the prompt, in the
    # <system_reminder> Copilot CLI appends (neither escaped).
    assert 'kind=\\"brief\\"' in first[0] and BRIEFED[0] in first[0] and PROMPT not in first[0]
    assert PROMPT in first[1] and 'kind=\\"recall\\"' in first[1] and RECALLED[0] in first[1].split(PROMPT, 1)[1]
    offered = [tool["function"]["name"] for tool in OpenAIChat.requests[0].get("tools", [])]
    assert "orcmem-memory_search" in offered
    answers = [m for m in OpenAIChat.requests[-1]["messages"] if m.get("role") == "tool"]
    assert len(answers) == 1 and RECALLED[0] in answers[0]["content"]
    # sessionEnd read Copilot CLI's events.jsonl and queued the run once; Claude Code distilled it once.
    assert (turns, state) == (1, "done") and ANSWER["memories"][0]["title"] in titles
    distilled = [r for r in AnthropicMessages.requests if DISTILL_MARK in json.dumps(r.get("messages"))]
    assert len(distilled) == 1
    assert 'kind=\\"brief\\"' not in json.dumps(distilled[0]["messages"])  # its own context never learned


def test_copilot_gets_the_memory_citing_a_file_it_views_and_recall_in_a_resumed_sessions_prompt(
    env, project_dir: Path, orcmem_home: Path
) -> None:
    cli("copilot")
    (project_dir / "deploy.md").write_text("# Deploy\n", encoding="utf-8")
    title = "Deploy notes are out of date"
    orcmem(env, project_dir, "setup", "copilot")
    orcmem(env, project_dir, "memory", "on")
    orcmem(env, project_dir, "add", "--type", "lesson", "--title", title, "--body", "ask ops", "--file", "deploy.md")
    OpenAIChat.requests.clear()
    OpenAIChat.call = {"name": "view", "arguments": {"path": str(project_dir / "deploy.md")}}
    orcmem(env, project_dir, "add", "--type", "lesson", "--title", RECALLED[0], "--body", RECALLED[1])
    try:
        with loopback_http(OpenAIChat) as url:
            session = run_copilot(env, project_dir, url, "Show me the file")
            [session_id] = [
                e["sessionId"] for e in map(json.loads, session.stdout.splitlines()) if e["type"] == "result"
            ]
            OpenAIChat.call = None
            viewed = len(OpenAIChat.requests)
            resumed = run_copilot(env, project_dir, url, PROMPT, "--resume", session_id)
    finally:
        OpenAIChat.call = None
    assert session.returncode == 0 and resumed.returncode == 0, session.stderr + resumed.stderr
    # The later prompt, in the same session: recall after it, in its request.
    later = said(OpenAIChat.requests[viewed])
    assert PROMPT in later[-1] and 'kind=\\"recall\\"' in later[-1] and RECALLED[0] in later[-1].split(PROMPT, 1)[1]
    # Both sessions' ends read the same events.jsonl into one run: queued once, two turns.
    service = MemoryService.open(orcmem_home, vectors=False)
    try:
        jobs = service.store.jobs.list(None)
    finally:
        service.close()
    assert len(jobs) == 1 and jobs[0][1].turns == 2 and jobs[0][1].agent == "copilot"
    after = said(OpenAIChat.requests[viewed - 1])
    # preToolUse's context comes as a user message after the tool's result.
    hook_message = next(text for text in after if "preToolUse hook" in text)
    assert "<orcmem-context kind=" in hook_message and title in hook_message
    logged = (orcmem_home / "logs" / "recall.log").read_text()
    assert len([line for line in logged.splitlines() if " tool, " in line and "shown=1" in line]) == 1


# The flags that hold a `copilot -p` call to what the seed asks of a distilling call, as far as 1.0.102 allows: no
# tool (an allow-list naming none it has), no custom instructions, no built-in MCP server, no question back.
HELD_DOWN = ("--available-tools=no-such-tool", "--no-custom-instructions", "--disable-builtin-mcps", "--no-ask-user")
PERSONS_EVENTS = ("sessionStart", "userPromptSubmitted", "sessionEnd")


def persons_hooks(copilot_home: Path, ran: Path) -> None:
    """Hooks of the person's own in `copilot_home`/hooks/ (each appends its event and ORCMEM_DISTILLING to `ran`),
    and `disableAllHooks: true` in its settings.json beside one inline hook."""

    def hook(label: str) -> list[dict[str, object]]:
        line = f'echo "{label} ${{ORCMEM_DISTILLING:-unset}}" >> "{ran}"'
        return [{"type": "command", "bash": line, "timeoutSec": 10}]

    (copilot_home / "hooks").mkdir(parents=True)
    hooks = {"version": 1, "hooks": {event: hook(event) for event in PERSONS_EVENTS}}
    (copilot_home / "hooks" / "persons.json").write_text(json.dumps(hooks), encoding="utf-8")
    settings = {"disableAllHooks": True, "hooks": {"sessionStart": hook("inline")}}
    (copilot_home / "settings.json").write_text(json.dumps(settings), encoding="utf-8")


def test_copilot_p_runs_the_persons_own_hooks_whatever_flag_so_it_does_not_distil(
    env, project_dir: Path, tmp_path: Path
) -> None:
    """Why Copilot CLI is no distilling provider (docs/agents.md): tools, MCP and turns can be held down, but the
    hooks in ~/.copilot/hooks/ run under `copilot -p` even with every flag above and `disableAllHooks: true` in
    settings.json (which stops only the hooks written inline in settings.json). ORCMEM_DISTILLING does reach the
    hooks, so orcmem's own would exit; the person's would not."""
    cli("copilot")
    ran = tmp_path / "hooks-ran"
    persons_hooks(Path(env["HOME"]) / ".copilot", ran)
    OpenAIChat.requests.clear()
    with loopback_http(OpenAIChat) as url:
        session = run_copilot({**env, "ORCMEM_DISTILLING": "1"}, project_dir, url, "Say hi.", *HELD_DOWN)
    assert session.returncode == 0, session.stderr
    assert len(OpenAIChat.requests) == 1 and not OpenAIChat.requests[0].get("tools")  # one turn, no tool offered
    assert ran.read_text(encoding="utf-8").splitlines() == [f"{event} 1" for event in PERSONS_EVENTS]


def test_a_copilot_home_of_its_own_keeps_the_persons_hooks_out_and_the_sign_in_too(
    env, project_dir: Path, tmp_path: Path
) -> None:
    """The one way found to keep the person's hooks out, COPILOT_HOME elsewhere, leaves ~/.copilot's sign-in behind:
    it runs no hook of the person's with a bring-your-own model, but with no model and no token in the environment
    (a worker started by Copilot's hooks never has either) `copilot -p` finds no authentication."""
    cli("copilot")
    ran = tmp_path / "hooks-ran"
    persons_hooks(Path(env["HOME"]) / ".copilot", ran)
    own = {**env, "COPILOT_HOME": str(tmp_path / "orcmem-copilot-home")}
    OpenAIChat.requests.clear()
    with loopback_http(OpenAIChat) as url:
        session = run_copilot(own, project_dir, url, "Say hi.", *HELD_DOWN)
    assert session.returncode == 0 and len(OpenAIChat.requests) == 1, session.stderr
    assert not ran.exists()
    signed_out = {
        name: value for name, value in own.items() if not name.startswith(("COPILOT_PROVIDER", "COPILOT_OFF"))
    }
    command = [str(cli("copilot")), "-p", "Say hi.", *HELD_DOWN]
    session = subprocess.run(command, cwd=project_dir, env=signed_out, capture_output=True, text=True, timeout=120)
    assert session.returncode == 1 and "No authentication information found" in session.stdout + session.stderr
