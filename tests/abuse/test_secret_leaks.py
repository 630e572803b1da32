"""Real-format fake secrets through every write path never reach the database, its WAL, an export or a page.

Write paths: `orcmem add/edit/task add` (CLI), memory_record and memory_manage (MCP), a transcript ingest (Claude
Code and Codex), a distilled run (stand-in generator), and an edit on the Memory page. After each, every file of
the profile is read while the database is still open (so the WAL still holds the new pages), every memory is
exported to CLAUDE.md and AGENTS.md, and the Memory page (listing and search), Runs, Overview and Settings pages
are fetched. What the stand-in model is sent is checked too: it leaves the machine.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from starlette.testclient import TestClient

from orcmem.extract.generator import GeneratorResult
from orcmem.extract.resolve import GeneratorChoice
from orcmem.mcp_server.root import build_server
from orcmem.models.constants import (
    BODY_MAX_CHARS,
    FILE_PATH_MAX_CHARS,
    MAX_EVENT_TEXT,
    TITLE_MAX_CHARS,
    TOPIC_KEY_MAX_CHARS,
)
from orcmem.models.types import MemoryFilter, NewMemory, Project, Source
from orcmem.rules.memory import check_files, check_topic_key
from orcmem.service.agent_tools import AgentTools
from orcmem.service.learning import Learning
from orcmem.service.memory_service import MemoryService
from orcmem.text.redact import redact
from tests.abuse.fake_secrets import FakeSecret, assert_nowhere, bundles, corpus, fake_secrets, joined, leaks
from tests.ingest.support import (
    c_assistant,
    c_user,
    jsonl,
    text,
    tool_result,
    tool_use,
    x_agent,
    x_call,
    x_meta,
    x_output,
    x_user,
)
from tests.web.support import form

SECRETS = corpus()


def shown(service: MemoryService, project: Project, web: TestClient) -> list[tuple[str, str]]:
    """Every place a stored memory or run is shown: exports of every memory, and the pages of the project."""
    root = Path(project.root_path)
    for memory in service.list(None, MemoryFilter(limit=500)) + service.list(project, MemoryFilter(limit=500)):
        for file_name in ("CLAUDE.md", "AGENTS.md"):
            service.export(project, memory.id, file_name, root)
    places = [(name, (root / name).read_text()) for name in ("CLAUDE.md", "AGENTS.md") if (root / name).exists()]
    for path in ("/", "/runs", "/overview", "/settings", "/?q=secret+token+password+key"):
        page = web.get(path, params={"project": project.id})
        assert page.status_code == 200, page.text
        places.append((f"page {path}", page.text))
    return places


def fits(secret: FakeSecret, limit: int) -> bool:
    return len(secret.text) <= limit


# --- the rules themselves ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("secret", SECRETS, ids=[s.kind for s in SECRETS])
def test_the_leak_check_finds_any_14_characters_of_a_secret(secret: FakeSecret) -> None:
    [found] = leaks(b"\x00" + secret.text.encode() + b"\x00", [secret])
    assert found.startswith(secret.kind)
    for part in secret.parts:
        for start in range(0, max(len(part) - 14, 0) + 1):
            piece = part[start : start + 14]
            assert leaks(f"noise {piece.upper()} noise", [secret]), piece  # the FTS index keeps lowercase terms
            assert leaks(f"noise {piece} noise", [secret]), piece
    assert leaks(redact(secret.text), [secret]) == []


@pytest.mark.parametrize("secret", SECRETS, ids=[s.kind for s in SECRETS])
def test_every_kind_is_redacted_in_any_surrounding_text(secret: FakeSecret) -> None:
    for context in ("{}", "before {} after", "`{}`", '"{}"', "line one\n{}\nline three", "x={}\n"):
        once = redact(context.format(secret.text))
        assert leaks(once, [secret]) == [], (context, once)
        assert redact(once) == once  # idempotent on the corpus too


@settings(max_examples=80, deadline=None)
@given(st.lists(fake_secrets(), min_size=1, max_size=4), st.lists(st.text(max_size=30), max_size=5))
def test_fake_secrets_mixed_with_any_text_never_survive(secrets: list[FakeSecret], noise: list[str]) -> None:
    pieces = [s.text for s in secrets] + noise
    random.Random(len(pieces)).shuffle(pieces)
    once = redact(" \n".join(pieces))
    assert leaks(once, secrets) == []
    assert redact(once) == once


def _all_rules(value: str) -> str:
    """Every rule on the text, without the cue shortcut."""
    from orcmem.text.redact import RULES, _apply

    fired: list[str] = []
    for rule in RULES:
        value = _apply(rule, value, fired)
    return value


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([s.text for s in SECRETS] + ["-u ", ";", "pwd", "SG.", " "]) | st.text(max_size=8)))
def test_the_cue_shortcut_never_skips_a_new_rule(pieces: list[str]) -> None:
    value = "".join(pieces)
    assert redact(value) == _all_rules(value)


# --- CLI ----------------------------------------------------------------------------------------------------------


def test_cli_add_edit_and_task_add(service: MemoryService, project: Project, web: TestClient, run, orcmem_home):
    for index, group in enumerate(bundles(SECRETS, BODY_MAX_CHARS - 20)):
        short = [s for s in group if fits(s, 60)]
        args = ["add", "--type", "lesson", "--title", f"Title {index}", "--body", f"Use\n{joined(group)}\nhere"]
        args += ["--topic", f"creds/{short[0].text}"] if short else []
        for secret in group:
            if "\n" not in secret.text:  # a path holds no line break: such a --file is refused, not stored
                args += ["--file", f"config/{secret.text}"]
        memory_id = run(*args).output.splitlines()[0]
        titled = [s for s in group if fits(s, TITLE_MAX_CHARS - 10)]
        if titled:
            run("edit", memory_id, "--title", f"Key {titled[-1].text}")
        run("task", "add", f"Rotate {group[0].text[:100]}", "--spec", f"old values\n{joined(group)}")
    listing = run("list", "--json").output + run("search", "key token password", "--json").output
    assert_nowhere(orcmem_home, SECRETS, ("orcmem list/search", listing), *shown(service, project, web))


@pytest.mark.parametrize("secret", [s for s in SECRETS if fits(s, 70)], ids=lambda s: s.kind)
def test_topic_keys_and_file_paths_are_redacted_within_their_limits(secret: FakeSecret) -> None:
    key = check_topic_key(f"k/{secret.text}")
    assert key is not None and len(key) <= TOPIC_KEY_MAX_CHARS and leaks(key, [secret]) == []
    files = check_files([f"/srv/{secret.text}", secret.text, "src/app.py"])
    assert all(len(f) <= FILE_PATH_MAX_CHARS for f in files) and leaks("\n".join(files), [secret]) == []
    assert "src/app.py" in files


# --- MCP ----------------------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_mcp_record_and_manage(service: MemoryService, project: Project, web: TestClient, orcmem_home):
    tools = AgentTools(service, project, mode="accept-edits", headless=True, auto_approve=False, session_id="s")
    answers = []

    async def call(client: Client, tool: str, arguments: dict[str, Any]) -> str:
        result = await client.call_tool(tool, arguments)
        answers.append(result.content[0].text)  # type: ignore[union-attr]
        assert not result.is_error, answers[-1]
        return answers[-1]

    async with Client(build_server(tools)) as client:
        for index, group in enumerate(bundles(SECRETS, BODY_MAX_CHARS - 20)):
            short = [s for s in group if fits(s, 60)]
            arguments = {"type": "lesson", "title": f"Rotate {index}", "body": f"Set\n{joined(group)}"}
            await call(client, "memory_record", {**arguments, "topic_key": f"creds/{short[0].text}" if short else None})
            manage = {"action": "create", "scope": "global", "kind": "fact", "title": f"Global {index}"}
            created = json.loads(await call(client, "memory_manage", {**manage, "body": f"Tokens\n{joined(group)}"}))
            titled = [s for s in group if fits(s, TITLE_MAX_CHARS - 10)]
            update = {"action": "update", "scope": "global", "id": created["id"], "body": f"Now {joined(group)}"}
            await call(client, "memory_manage", {**update, "title": f"Key {titled[0].text}" if titled else None})
        for query in ("rotate", "token", "global"):
            await call(client, "memory_search", {"query": query, "limit": 20})
    assert_nowhere(orcmem_home, SECRETS, ("mcp answers", "\n".join(answers)), *shown(service, project, web))


# --- transcripts and distillation -------------------------------------------------------------------------------


def claude_transcript(secrets: list[FakeSecret]) -> bytes:
    """A Claude Code session where secrets appear in every text it keeps, the title, a path, and a long output."""
    records: list[dict[str, Any]] = [{"type": "custom-title", "customTitle": f"Deploy with {secrets[0].text[:80]}"}]
    for i, secret in enumerate(secrets):
        straddling = "x" * (MAX_EVENT_TEXT - 40 - i % 30) + f" {secret.text}\n" + "y" * 200  # the cut falls in it
        records += [
            c_user(f"please use {secret.text} for the deploy", f"u{i}", i),
            c_assistant(f"m{i}", [text(f"I will export {secret.text} first")], f"a{i}", i),
            c_assistant(f"m{i}", [tool_use(f"t{i}", "Write", {"file_path": f"/p/{secret.text}"})], f"b{i}", i),
            c_user([tool_result(f"t{i}", straddling)], f"r{i}", i),
        ]
    return jsonl(*records)


def codex_rollout(secrets: list[FakeSecret]) -> bytes:
    """A Codex rollout with secrets in the prompt, a shell call's output and the agent's answer."""
    records: list[dict[str, Any]] = [x_meta()]
    for i, secret in enumerate(secrets):
        records += [
            x_user(f"deploy with {secret.text}", i),
            x_call("shell", f"c{i}", {"command": ["bash", "-lc", f"echo {secret.text}"]}, i),
            x_output(f"c{i}", json.dumps({"output": "z " * (MAX_EVENT_TEXT // 2 - 15) + secret.text}), i),
            x_agent(f"done; the key was {secret.text}", i),
        ]
    return jsonl(*records)


class SecretGenerator:
    """A stand-in model that answers with the given secrets in every field, some straddling the length limits."""

    provider = "claude"
    model = "stand-in"

    def __init__(self, secrets: list[FakeSecret]) -> None:
        self.secrets = secrets
        self.prompts: list[str] = []

    def answer(self) -> str:
        memories = []
        for secret in self.secrets[:6]:
            memories.append(
                {
                    "type": "lesson",
                    "title": "t " * (TITLE_MAX_CHARS // 2 - 5) + secret.text,  # cut at 120 inside the secret
                    "body": "b " * (BODY_MAX_CHARS // 2 - 8) + secret.text,  # cut at 800 inside the secret
                    "topicKey": f"k/{secret.text[:70]}",
                    "files": [f"/srv/{secret.text[:200]}", secret.text[:400]],
                    "confidence": 0.9,
                }
            )
        summary = {
            "request": f"deploy with {self.secrets[0].text}",
            "workDone": " ".join(s.text for s in self.secrets),
            "outcome": f"done {self.secrets[-1].text}",
            "openItems": [s.text for s in self.secrets],
        }
        return "```json\n" + json.dumps({"summary": summary, "memories": memories}) + "\n```"

    def generate(self, prompt: str, schema: object = None) -> GeneratorResult:
        self.prompts.append(prompt)
        return GeneratorResult.answer(self.answer())


def distil_all(learning: Learning, generator: Any) -> list[Any]:
    outcomes = []
    while (job := learning.claim(1, lambda pid: True)) is not None:
        outcomes.append(learning.run_job(job, lambda run: GeneratorChoice(generator, None, "stand-in")))
    return outcomes


@pytest.mark.parametrize(("name", "build"), [("session.jsonl", claude_transcript), ("rollout-1.jsonl", codex_rollout)])
def test_transcript_ingest_then_distillation(
    service: MemoryService,
    project: Project,
    web: TestClient,
    orcmem_home: Path,
    project_dir: Path,
    name: str,
    build: Callable[[list[FakeSecret]], bytes],
) -> None:
    transcript = project_dir.parent / name
    transcript.write_bytes(build(SECRETS))
    learning = Learning(service)
    result = learning.ingest(project, transcript, session_id=name, cwd=str(project_dir), ended=True)
    assert result.new_events >= 4 * len(SECRETS) and result.skipped_lines == 0
    assert learning.queue(result.run)
    generator = SecretGenerator(SECRETS)
    [outcome] = distil_all(learning, generator)
    assert outcome.state == "done" and outcome.written >= 1, outcome
    # What the model was sent left the machine: it must be as clean as the database.
    assert leaks("\n".join(generator.prompts), SECRETS) == []
    assert_nowhere(orcmem_home, SECRETS, *shown(service, project, web))


def test_a_failing_generator_error_is_stored_redacted(service: MemoryService, project: Project, orcmem_home: Path):
    learning = Learning(service)
    run = service.store.runs.for_session(
        project_id=project.id, agent="claude", session_id="s", transcript_path=None, cwd=None, now=service.clock()
    )
    transcript = project.root_path + "/t.jsonl"
    Path(transcript).write_bytes(claude_transcript(SECRETS[:3]))
    learning.ingest(project, Path(transcript), session_id="s", ended=True)
    assert learning.queue(service.store.runs.get(run.id))

    class Failing:
        provider, model = "claude", None

        def generate(self, prompt: str, schema: object = None) -> GeneratorResult:
            return GeneratorResult(None, "claude said: " + " ".join(s.text for s in SECRETS))

    [outcome] = distil_all(learning, Failing())
    assert outcome.state == "failed"
    assert_nowhere(orcmem_home, SECRETS)


# --- the Memory page ---------------------------------------------------------------------------------------------


def test_web_edit(service: MemoryService, project: Project, web: TestClient, orcmem_home: Path) -> None:
    answers = []
    for index, group in enumerate(bundles(SECRETS, BODY_MAX_CHARS - 20)):
        new = NewMemory(type="lesson", title=f"Plain {index}", body="plain", source=Source.USER)
        memory_id = service.record(project, new).memory.id
        titled = [s for s in group if fits(s, TITLE_MAX_CHARS - 4)]
        title = f"Key {titled[0].text}" if titled else f"Key {index}"
        fields = form(project=project.id, title=title, body=f"Rotate\n{joined(group)}\nmonthly", next="/")
        response = web.post(f"/memories/{memory_id}/edit", data=fields, headers={"accept": "application/json"})
        assert response.status_code == 200, response.text
        answers.append(response.text)
        response = web.post(
            f"/memories/{memory_id}/export", data=form(project=project.id, file="CLAUDE.md"), follow_redirects=False
        )
        assert response.status_code == 303
    assert_nowhere(orcmem_home, SECRETS, ("edit answers", "\n".join(answers)), *shown(service, project, web))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(secret=fake_secrets(), prefix=st.text(max_size=40), suffix=st.text(max_size=40))
def test_web_edit_with_any_surrounding_text(
    service: MemoryService, project: Project, web: TestClient, secret: FakeSecret, prefix: str, suffix: str
) -> None:
    memory = service.record(project, NewMemory(type="lesson", title="Plain", body="plain", source=Source.USER))
    body = f"{prefix} {secret.text} {suffix}"
    response = web.post(
        f"/memories/{memory.memory.id}/edit",
        data=form(project=project.id, title="Edited", body=body),
        headers={"accept": "application/json"},
    )
    assert response.status_code in (200, 400), response.text
    stored = service.get(project, memory.memory.id)
    assert leaks(stored.body + stored.title + response.text, [secret]) == []
    service.forget(project, memory.memory.id)
