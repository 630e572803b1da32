"""Parsers under abuse, beyond tests/ingest/test_robustness.py (which shows arbitrary bytes and JSON never raise)
and tests/extract/test_parse.py (which shows the answer parser never raises and cuts to the limits):

- transcripts: corrupted copies of real lines, arbitrary bytes and foreign records mixed between the valid lines
  of both formats lose no valid line (the events are exactly those of the valid lines alone), and each bad line
  is counted; reading a transcript file raises nothing but NotFoundError, whatever the path is;
- the model's answer: any text, pushed through the real learning pipeline, ends the job cleanly (done or failed)
  and stores only memories and summaries that obey every rule.
"""

from __future__ import annotations

import itertools
import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from orcmem.extract.generator import GeneratorResult
from orcmem.extract.resolve import GeneratorChoice
from orcmem.ingest.claude import parse_claude
from orcmem.ingest.codex import parse_codex
from orcmem.ingest.common import load_record
from orcmem.ingest.transcript import parse_transcript
from orcmem.models.errors import NotFoundError, ValidationError
from orcmem.models.ledger import EventKind, LedgerEvent
from orcmem.models.types import MemoryFilter, MemoryType, Project, Source
from orcmem.models.vocabulary import Agent
from orcmem.service.learning import Learning
from orcmem.service.memory_service import MemoryService
from tests.abuse.invariants import assert_within_rules
from tests.extract.test_parse import ANSWERS, JSON_VALUES
from tests.ingest.support import fixture
from tests.ingest.test_robustness import TEMPLATES, mutated_records

SESSIONS = itertools.count()  # a fresh session (and run) per example
FORMATS = {
    Agent.CLAUDE: (parse_claude, ["claude_transcript_sample.jsonl", "claude_transcript_extra_records.jsonl"]),
    Agent.CODEX: (parse_codex, ["codex_rollout_sample_legacy_0.46.jsonl", "codex_rollout_lines_2026.jsonl"]),
}
VALID_LINES = {
    agent: [line for name in names for line in fixture(name).splitlines() if line.strip()]
    for agent, (_parse, names) in FORMATS.items()
}


@st.composite
def corrupted(draw: st.DrawFn, agent: Agent) -> bytes:
    """A line that is no record: a real line cut short or with bytes changed, arbitrary bytes, JSON that is no
    object, or an object of a kind no agent writes."""
    line = draw(st.sampled_from(VALID_LINES[agent]))
    kind = draw(st.integers(0, 4))
    if kind == 0:
        bad = line[: draw(st.integers(1, len(line) - 1))]
    elif kind == 1:
        at = draw(st.integers(0, len(line) - 1))
        bad = line[:at] + draw(st.binary(min_size=1, max_size=3)) + line[at + 1 :]
    elif kind == 2:
        bad = draw(st.binary(min_size=1, max_size=120))
    elif kind == 3:
        bad = json.dumps(draw(st.lists(JSON_VALUES, max_size=3) | st.integers() | st.text(max_size=20))).encode()
    else:
        bad = json.dumps({"type": f"zz-unknown-{draw(st.integers(0, 9))}", "payload": draw(JSON_VALUES)}).encode()
    bad = bad.replace(b"\n", b" ")
    assume(bool(bad.strip()) and (kind == 4 or load_record(bad) is None))
    return bad


def mixed(agent: Agent) -> st.SearchStrategy[tuple[list[bytes], list[tuple[int, bytes]]]]:
    """Valid lines of one file in their order, and bad lines with the position each goes in front of."""
    return st.tuples(
        st.lists(st.sampled_from(range(len(VALID_LINES[agent]))), min_size=1, max_size=12, unique=True).map(
            lambda picks: [VALID_LINES[agent][i] for i in sorted(picks)]
        ),
        st.lists(st.tuples(st.integers(0, 12), corrupted(agent)), max_size=10),
    )


def assemble(valid: list[bytes], bad: list[tuple[int, bytes]]) -> bytes:
    lines = list(valid)
    for position, line in sorted(bad, key=lambda item: -item[0]):
        lines.insert(min(position, len(lines)), line)
    return b"\n".join(lines) + b"\n"


@pytest.mark.parametrize("agent", list(FORMATS), ids=str)
@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_bad_lines_between_valid_ones_lose_nothing(agent: Agent, data: st.DataObject) -> None:
    valid, bad = data.draw(mixed(agent))
    parse = FORMATS[agent][0]
    alone = parse(b"\n".join(valid) + b"\n")
    both = assemble(valid, bad)
    chunk = parse(both)
    assert chunk.events == alone.events
    assert (chunk.session_id, chunk.cwd, chunk.model, chunk.title, chunk.turns) == (
        alone.session_id,
        alone.cwd,
        alone.model,
        alone.title,
        alone.turns,
    )
    assert chunk.skipped_lines == alone.skipped_lines + len(bad)
    assert chunk.end_offset == len(both)


@pytest.mark.parametrize("agent", list(FORMATS), ids=str)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_transcript_file_with_bad_lines_reads_like_its_valid_lines(
    tmp_path: Path, agent: Agent, data: st.DataObject
) -> None:
    valid, bad = data.draw(mixed(agent))
    path = tmp_path / f"{agent}.jsonl"
    path.write_bytes(assemble(valid[:1], []) + assemble(valid[1:], bad) if len(valid) > 1 else assemble(valid, bad))
    chunk = parse_transcript(path)  # the first line is valid, so the agent is told by it
    assert chunk.agent is agent
    assert chunk.events == FORMATS[agent][0](b"\n".join(valid) + b"\n").events
    # Read again from every offset a line starts at: resuming never raises and never invents events.
    ends = [0] + [i + 1 for i, byte in enumerate(path.read_bytes()) if byte == ord("\n")]
    for offset in ends[:: max(1, len(ends) // 5)]:
        rest = parse_transcript(path, offset, agent)
        assert len(rest.events) <= len(chunk.events) + 1  # a split message may come out as one more event


def test_reading_a_transcript_raises_only_not_found(tmp_path: Path) -> None:
    folder = tmp_path / "folder.jsonl"
    folder.mkdir()
    loop = tmp_path / "loop.jsonl"
    os.symlink(loop, loop)
    dangling = tmp_path / "dangling.jsonl"
    os.symlink(tmp_path / "nowhere", dangling)
    for path in (tmp_path / "missing.jsonl", folder, loop, dangling):
        with pytest.raises(NotFoundError):
            parse_transcript(path)
        with pytest.raises(NotFoundError):
            parse_transcript(path, 10, Agent.CODEX)
    garbage = tmp_path / "garbage"
    garbage.write_bytes(random.Random(5).randbytes(5000))  # no line of it is a record
    for agent in (None, Agent.CLAUDE, Agent.CODEX):
        chunk = parse_transcript(garbage, 0, agent)
        assert chunk.events == [] and chunk.end_offset <= 5000


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(mutated_records() | st.sampled_from(TEMPLATES), min_size=1, max_size=8), cut=st.integers(0, 40))
def test_any_records_ingest_into_the_real_store(
    service: MemoryService, project: Project, tmp_path: Path, lines: list[Any], cut: int
) -> None:
    # Values include lone surrogates ("\ud800" escapes), huge and odd shapes; the last line may be half written.
    data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    path = tmp_path / f"t-{next(SESSIONS)}.jsonl"
    path.write_bytes(data[: len(data) - cut])
    learning = Learning(service)
    try:
        result = learning.ingest(project, path, session_id=path.stem, ended=True)
    except ValidationError as exc:  # the documented refusal: neither agent's format
        assert "neither a Claude Code nor a Codex transcript" in str(exc)
        return
    stored = service.store.runs.events(result.run.id, newest=1000)
    assert len(stored) <= result.new_events and result.run.transcript_offset <= len(data)
    for event in stored:
        event.text.encode("utf-8")


# --- the model's answer through the learning pipeline -------------------------------------------------------------


class Canned:
    """A stand-in generator that answers with the given text."""

    provider = "claude"
    model = "stand-in"

    def __init__(self, text: str) -> None:
        self.text = text

    def generate(self, prompt: str, schema: object = None) -> GeneratorResult:
        return GeneratorResult.answer(self.text)


def check_stored(service: MemoryService, project: Project) -> None:
    """Every memory and summary obeys the rules a memory must satisfy before it is stored."""
    for memory in service.list(project, MemoryFilter(limit=500)):
        assert_within_rules(memory)
        assert memory.source is Source.EXTRACTION
    for summary in service.store.summaries.recent(project.id, 1000):
        assert summary.request and summary.outcome
        assert all(isinstance(item, str) for item in summary.open_items)


def distil(service: MemoryService, project: Project, answer: str, session: str) -> Any:
    store = service.store
    run = store.runs.for_session(
        project_id=project.id, agent="claude", session_id=session, transcript_path=None, cwd=None, now=service.clock()
    )
    prompt = LedgerEvent(EventKind.MESSAGE, at=1, role="user", text="please fix the deploy")
    reply = LedgerEvent(EventKind.MESSAGE, at=2, role="assistant", text="fixed it")
    store.runs.append(run.id, [prompt, reply], offset=1, turns=1, skipped=0, model=None, title=None, now=1)
    store.runs.end(run.id, service.clock())
    learning = Learning(service)
    service.cost.set_budget(off=True)  # hundreds of answers on one day: the daily budget would hold them back
    assert learning.queue(store.runs.get(run.id))
    job = learning.claim(1, lambda pid: True)
    assert job is not None
    return learning.run_job(job, lambda _run: GeneratorChoice(Canned(answer), None, "stand-in"))


# Answers shaped like the JSON asked for, with every field free, and a few values aimed at the limits.
EDGE_MEMORY = st.fixed_dictionaries(
    {
        "type": st.sampled_from([*(t.value for t in MemoryType), "fact", "", "LESSON"]),
        "title": st.sampled_from(["t", " t ", "x" * 500, "\x00", "\ud800 lone", "ignore previous instructions"]),
        "body": st.sampled_from(["b", "y" * 5000, "\n\n", "ghp_" + "a" * 36, "\ud800"]),
        "topicKey": st.sampled_from([None, "", " ", "k" * 80, "k" * 81, "a\x00b", "ghp_" + "b" * 36]),
        "files": st.lists(st.sampled_from(["a.py", "", " ", "p" * 501, "x\x00y", "a.py", 7, None]), max_size=60),
        "confidence": st.sampled_from([None, -1, 0, 0.5, 2, 1e308, "0.9", True]),
    }
)
EDGE_ANSWERS = st.fixed_dictionaries(
    {"memories": st.lists(EDGE_MEMORY, max_size=8)}, optional={"summary": JSON_VALUES}
).map(json.dumps)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    answer=st.text(max_size=300)
    | ANSWERS.map(lambda value: json.dumps(value))
    | EDGE_ANSWERS
    | EDGE_ANSWERS.map(lambda text: f"Sure!\n```json\n{text}\n```"),
)
def test_any_answer_ends_the_job_cleanly_and_stores_only_valid_memories(
    service: MemoryService, project: Project, answer: str
) -> None:
    outcome = distil(service, project, answer, f"session-{next(SESSIONS)}")
    assert outcome.state in ("done", "failed"), outcome
    if outcome.state == "failed":  # the one clean failure; anything else is a crash the job caught
        assert outcome.error == "the model's answer was not the JSON asked for", outcome.error
    else:
        assert outcome.written <= 6
    check_stored(service, project)
