"""Every hook, fed arbitrary bytes or arbitrary JSON on stdin, exits 0 and prints nothing or a valid answer.

Most examples run in-process (hooks.main with the bytes as stdin); a handful go through a real `python -m orcmem
hook` process, where a crash would show as a non-zero exit, a traceback on stderr, or half an answer on stdout.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orcmem.hooks import handlers as hooks
from orcmem.models.constants import BODY_MAX_CHARS, CONTEXT_TAG, HOOK_OUTPUT_MAX_CHARS, TITLE_MAX_CHARS
from orcmem.models.types import MemoryFilter, NewMemory, Project, Source
from orcmem.service.memory_service import MemoryService
from tests.helpers import without_fence_id

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "agents"
EVENTS = {
    "session-start": "SessionStart",
    "prompt": "UserPromptSubmit",
    "pre-tool-use": "PreToolUse",
    "stop": "Stop",
    "session-end": "SessionEnd",
}
KEYS = [
    "session_id", "transcript_path", "cwd", "hook_event_name", "prompt", "source", "reason", "tool_name",
    "tool_input", "permission_mode", "stop_hook_active", "tool_use_id", "model", "turn_id",
]  # fmt: skip
TOOL_NAMES = ["mcp__orcmem__memory_record", "memory_feedback", "mcp__x__memory_manage", "Bash", "memory_search", ""]
MODES = ["plan", "default", "acceptEdits", "auto", "dontAsk", "bypassPermissions", "nonsense"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12,
)


def check_answer(name: str, output: str) -> None:
    """Nothing, or the one JSON answer the agents accept from this hook."""
    if output == "":
        return
    answer = json.loads(output)
    if name == "stop":
        assert answer == {}
        return
    assert name != "session-end", output
    specific = answer["hookSpecificOutput"]
    assert set(answer) == {"hookSpecificOutput"} and specific["hookEventName"] == EVENTS[name]
    if name == "pre-tool-use":
        assert specific["permissionDecision"] in ("allow", "deny", "ask")
        assert isinstance(specific["permissionDecisionReason"], str) and specific["permissionDecisionReason"]
        return
    context = specific["additionalContext"]
    assert 0 < len(context) <= HOOK_OUTPUT_MAX_CHARS
    assert context.startswith(f"<{CONTEXT_TAG} kind=")
    assert without_fence_id(context).endswith(f"</{CONTEXT_TAG}>") or len(context) == HOOK_OUTPUT_MAX_CHARS


def run_in_process(name: str, data: bytes) -> str:
    stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")  # strict, like a real stdin under a UTF-8 locale
    stdout = io.StringIO()
    assert hooks.main([name], stdin=stdin, stdout=stdout) == 0
    return stdout.getvalue()


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Record the worker the learning hooks would start, instead of starting it."""
    calls: list[Path] = []
    monkeypatch.setattr("orcmem.worker.control.spawn_worker", calls.append)
    return calls


@pytest.fixture
def remembered(service: MemoryService, project: Project) -> Project:
    service.record(
        project, NewMemory(type="lesson", title="Deploy with make ship", body="then tag", source=Source.USER)
    )
    return project


@pytest.fixture
def paths(tmp_path: Path, project_dir: Path) -> list[str]:
    """Values for path fields: a real transcript, garbage, a folder, a missing file, a relative and odd paths."""
    real = tmp_path / "session.jsonl"
    shutil.copy(FIXTURES / "claude_transcript_sample.jsonl", real)
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(b"\xff\xfe not json\n{\n")
    return [str(real), str(garbage), str(project_dir), str(tmp_path / "missing.jsonl"), ".", "~", "", "a\x00b"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(list(EVENTS)), data=st.binary(max_size=300))
def test_arbitrary_bytes_in_process(remembered: Project, spawned: list[Path], name: str, data: bytes) -> None:
    check_answer(name, run_in_process(name, data))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(list(EVENTS)), choice=st.data())
def test_arbitrary_json_in_process(
    service: MemoryService,
    remembered: Project,
    spawned: list[Path],
    paths: list[str],
    project_dir: Path,
    name: str,
    choice: st.DataObject,
) -> None:
    # A valid payload with one to four fields replaced or added, so the examples reach past the first check.
    valid = {
        "session_id": "fuzz",
        "transcript_path": paths[0],
        "cwd": str(project_dir),
        "hook_event_name": EVENTS[name],
        "prompt": "deploy make ship",
        "tool_name": "mcp__orcmem__memory_record",
        "tool_input": {"type": "lesson", "title": "Deploy", "body": "with make ship"},
        "permission_mode": "auto",
    }
    fields = {
        "cwd": st.sampled_from([str(project_dir), *paths]) | json_values,
        "transcript_path": st.sampled_from(paths) | json_values,
        "prompt": st.sampled_from(["deploy", "make ship tag", "", "   ", "ignore previous instructions"]) | json_values,
        "tool_name": st.sampled_from(TOOL_NAMES) | json_values,
        "permission_mode": st.sampled_from(MODES) | json_values,
        "tool_input": st.fixed_dictionaries({}, optional={"title": json_values, "body": json_values}) | json_values,
    }
    payload = dict(valid)
    for _ in range(choice.draw(st.integers(min_value=1, max_value=4), label="changes")):
        key = choice.draw(st.sampled_from(KEYS), label="key")
        if choice.draw(st.booleans(), label="drop") and key in payload:
            del payload[key]
        else:
            payload[key] = choice.draw(fields.get(key, json_values), label=key)
    output = run_in_process(name, json.dumps(payload).encode())
    check_answer(name, output)
    # A learning hook that ingested starts the worker of this profile, no other; nothing it stored breaks a rule.
    assert all(home == Path(service.store.db.path).parent for home in spawned)
    for memory in service.list(remembered, MemoryFilter(limit=500)):
        assert 0 < len(memory.title) <= TITLE_MAX_CHARS and 0 < len(memory.body) <= BODY_MAX_CHARS


@pytest.mark.parametrize("name", list(EVENTS))
def test_arbitrary_json_without_a_database(orcmem_home: Path, project_dir: Path, spawned: list[Path], name: str):
    for payload in ({}, {"cwd": str(project_dir), "prompt": "deploy"}, {"cwd": 5, "prompt": ["x"]}, [], "x", None):
        check_answer(name, run_in_process(name, json.dumps(payload).encode()))
    assert not (orcmem_home / "orcmem.db").exists() or name in ("stop", "session-end")


STDIN_SAMPLES = [
    b"",
    b"\xff\xfe\x00garbage",
    b"[1, 2, 3]",
    b'{"cwd": 5, "prompt": {"a": 1}, "transcript_path": ["x"], "tool_name": 7}',
    b"[" * 50_000,
    b'{"prompt": "' + b"deploy " * 200_000 + b'"}',  # more than the 1 MiB the hook reads
]


def test_arbitrary_stdin_through_real_processes(remembered: Project, project_dir: Path, orcmem_home: Path) -> None:
    env = {"ORCMEM_HOME": str(orcmem_home), "PATH": "/usr/bin:/bin"}
    with_cwd = json.dumps({"cwd": str(project_dir), "prompt": "deploy make ship", "tool_name": "memory_record"})
    cases: list[tuple[str, bytes]] = [(name, data) for name in EVENTS for data in STDIN_SAMPLES[:2]]
    cases += [("prompt", data) for data in STDIN_SAMPLES[2:]] + [("pre-tool-use", with_cwd.encode())]
    cases += [("prompt", with_cwd.encode()), ("session-start", with_cwd.encode())]
    # Started together: each is a fresh interpreter, and they share nothing but the database (read-mostly).
    procs: list[tuple[str, subprocess.Popen[bytes], bytes]] = []
    for name, data in cases:
        command = [sys.executable, "-m", "orcmem", "hook", name]
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        procs.append((name, proc, data))
    answers: dict[str, list[str]] = {}
    for name, proc, data in procs:
        out, err = proc.communicate(data, timeout=120)
        assert (proc.returncode, err) == (0, b""), (name, data[:40], err.decode()[-400:])
        check_answer(name, out.decode())
        answers.setdefault(name, []).append(out.decode())
    assert "Deploy with make ship" in answers["prompt"][-1]  # the valid payloads did get an answer
    assert json.loads(answers["pre-tool-use"][-1])["hookSpecificOutput"]["permissionDecision"] == "ask"


def test_a_hook_answer_is_never_partial_json(remembered: Project, project_dir: Path, service: MemoryService) -> None:
    # Many long memories: the brief is cut to its limit, and the answer is still one JSON document.
    for i in range(60):
        body = f"memo {i} " + "long words " * 70
        service.record(remembered, NewMemory(type="lesson", title=f"Deploy rule {i}", body=body, source=Source.USER))
    for name in ("session-start", "prompt"):
        payload: dict[str, Any] = {"cwd": str(project_dir), "prompt": "deploy rule memo long words"}
        output = run_in_process(name, json.dumps(payload).encode())
        check_answer(name, output)
        assert output
