"""Learning in the order real agents write: turns split across ingests, resumed runs, incremental passes, tasks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orcmem.extract.resolve import GeneratorChoice
from orcmem.host.workspace import locate
from orcmem.models.errors import ValidationError
from orcmem.service.learning import Learning, TaskLink
from orcmem.service.memory_service import MemoryService
from orcmem.service.tasks import Tasks
from tests.service.test_learning import ANSWER, FakeGenerator


def user_line(text: str, uuid: str) -> dict:
    return {"type": "user", "uuid": uuid, "sessionId": "s", "message": {"role": "user", "content": text}}


def tool_use_line(uuid: str, message_id: str) -> dict:
    block = {"type": "tool_use", "id": f"tu-{uuid}", "name": "Bash", "input": {"command": "ls"}}
    return {"type": "assistant", "uuid": uuid, "message": {"id": message_id, "role": "assistant", "content": [block]}}


def tool_result_line(uuid: str, of: str) -> dict:
    block = {"type": "tool_result", "tool_use_id": f"tu-{of}", "content": "a.py"}
    return {"type": "user", "uuid": uuid, "message": {"role": "user", "content": [block]}}


def answer_line(text: str, uuid: str, message_id: str) -> dict:
    block = {"type": "text", "text": text}
    return {"type": "assistant", "uuid": uuid, "message": {"id": message_id, "role": "assistant", "content": [block]}}


def write(path: Path, *records: dict) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(record) + "\n" for record in records)


def turn_before_its_answer(path: Path, n: int) -> None:
    """What Claude Code has written when its Stop hook runs after a tool call: the prompt, the call, its result."""
    write(path, user_line(f"prompt {n}", f"u{n}"), tool_use_line(f"a{n}", f"m{n}"), tool_result_line(f"r{n}", f"a{n}"))


def distil(learning: Learning, generator: FakeGenerator) -> list:
    outcomes = []
    while (job := learning.claim(1, lambda pid: True)) is not None:
        outcomes.append(learning.run_job(job, lambda run: GeneratorChoice(generator, None, "stand-in")))
    return outcomes


@pytest.fixture
def learning(service: MemoryService) -> Learning:
    service.settings.set_enabled(True)
    return Learning(service)


def test_a_turn_answered_only_in_the_next_ingest_is_counted(learning, project_dir: Path) -> None:
    transcript = project_dir / "session.jsonl"
    turn_before_its_answer(transcript, 1)
    at_stop = learning.ingest(locate(project_dir), transcript, session_id="s")
    assert (at_stop.run.turns, at_stop.run.pending_prompts) == (0, 1)  # the answer is not written yet
    write(transcript, answer_line("listed", "b1", "m1b"))
    at_end = learning.ingest(locate(project_dir), transcript, session_id="s", ended=True)
    assert (at_end.new_turns, at_end.run.turns, at_end.run.pending_prompts) == (1, 1, 0)
    assert learning.queue(at_end.run)


def test_stop_reporting_the_last_answer_counts_the_turn_once(learning, project_dir: Path) -> None:
    transcript = project_dir / "session.jsonl"
    turn_before_its_answer(transcript, 1)
    at_stop = learning.ingest(locate(project_dir), transcript, session_id="s", answered=True)
    assert at_stop.run.turns == 1
    write(transcript, answer_line("listed", "b1", "m1b"))  # the answer lands afterwards: no second count
    assert learning.ingest(locate(project_dir), transcript, session_id="s", ended=True).run.turns == 1


def test_a_resumed_run_is_open_again_and_waits_for_idle(learning, service, clock, project_dir: Path) -> None:
    transcript = project_dir / "session.jsonl"
    turn_before_its_answer(transcript, 1)
    write(transcript, answer_line("done", "b1", "m1b"))
    ended = learning.ingest(locate(project_dir), transcript, session_id="s", ended=True).run
    assert ended.state == "ended"
    distil(learning, FakeGenerator())
    turn_before_its_answer(transcript, 2)  # `claude --resume`: a new turn; Stop runs before its answer
    resumed = learning.ingest(locate(project_dir), transcript, session_id="s").run
    assert (resumed.state, resumed.ended_at) == ("open", None)
    assert learning.sweep_idle(10 * 60_000) == []  # not distilled at once, and not before its answer
    clock.advance_days(1)
    assert learning.sweep_idle(10 * 60_000) == [resumed.id]


def test_a_late_stop_of_an_ended_session_does_not_reopen_it(learning, project_dir: Path) -> None:
    transcript = project_dir / "session.jsonl"
    write(transcript, user_line("go", "u1"), answer_line("done", "b1", "m1"))
    assert learning.ingest(locate(project_dir), transcript, session_id="s", ended=True).run.state == "ended"
    assert learning.ingest(locate(project_dir), transcript, session_id="s").run.state == "ended"  # nothing new


def test_a_second_pass_reads_only_new_events_with_the_earlier_context(learning, service, project_dir: Path) -> None:
    transcript = project_dir / "session.jsonl"
    write(transcript, user_line("make the tests fast", "u1"), answer_line("switched to forks", "b1", "m1"))
    run = learning.ingest(locate(project_dir), transcript, session_id="s", ended=True).run
    learning.queue(run)
    first = FakeGenerator()
    distil(learning, first)
    write(transcript, user_line("now fix the linter", "u2"), answer_line("ruff is clean", "b2", "m2"))
    learning.queue(learning.ingest(locate(project_dir), transcript, session_id="s", ended=True).run)
    second_answer = {
        "summary": {"request": "lint", "workDone": "Fixed ruff", "outcome": "clean", "openItems": ["add\nCI job"]},
        "memories": [],
    }
    second = FakeGenerator(json.dumps(second_answer))
    [outcome] = distil(learning, second)
    assert outcome.state == "done"
    [prompt] = second.prompts
    new_part = prompt.split("Run to distill:", 1)[1]
    assert "now fix the linter" in new_part and "make the tests fast" not in new_part
    earlier = prompt.split("Run to distill:", 1)[0]
    assert "Opening request: make the tests fast" in earlier
    assert "Memory already saved: Use the forks pool" in earlier
    assert "Open item: remove the retry wrapper" in earlier
    summary = service.store.summaries.get(run.id)
    assert summary.request == "Fix the flaky pool"  # the opening request stays
    assert summary.work_done == "Switched vitest to forks Fixed ruff"  # the work grows
    assert (summary.outcome, summary.open_items) == ("clean", ("add CI job",))  # one line each


def test_three_passes_of_the_same_answer_leave_one_memory_each(learning, service, project, project_dir) -> None:
    transcript = project_dir / "session.jsonl"
    no_topic = json.loads(json.dumps(ANSWER))
    for memory in no_topic["memories"]:
        memory["topicKey"] = None
    for n in range(3):
        write(transcript, user_line(f"step {n}", f"u{n}"), answer_line(f"did {n}", f"b{n}", f"m{n}"))
        learning.queue(learning.ingest(locate(project_dir), transcript, session_id="s", ended=True).run)
        distil(learning, FakeGenerator(json.dumps(no_topic)))
    memories = service.list(project)
    assert sorted(m.title for m in memories) == ["Run one test", "Use the forks pool"]
    assert {m.evidence_count for m in memories} == {1}  # later passes of one run saying it again add no evidence
    assert (
        "Use the forks pool" in service.context.brief(project)
        and service.context.brief(project).count("Use the forks pool") == 1
    )


def test_a_transcript_orcmem_cannot_read_registers_no_project(learning, service, tmp_path: Path) -> None:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    not_a_transcript = tmp_path / "shadow"
    not_a_transcript.write_text("root:*:19000:0:99999:7:::\n")
    with pytest.raises(ValidationError):
        learning.ingest(locate(folder), not_a_transcript, session_id="s", ended=True)
    assert service.projects() == []


def test_runs_join_the_task_in_progress_or_the_one_they_were_started_for(learning, service, project, project_dir):
    tasks = Tasks(service)
    started = tasks.start(project, tasks.add(project, "Speed up CI", "cut the suite under 5 minutes").id)
    transcript = project_dir / "a.jsonl"
    write(transcript, user_line("go", "u1"))
    run = learning.ingest(locate(project_dir), transcript, session_id="a").run
    assert (run.task_id, run.kind) == (started.id, "task")
    other = tasks.add(project, "Plan the release")
    talk = project_dir / "b.jsonl"
    write(talk, user_line("what should the release hold?", "u1"), answer_line("three things", "b1", "m1"))
    link = TaskLink(other.id, "discussion")
    discussion = learning.ingest(locate(project_dir), talk, session_id="b", ended=True, link=link).run
    assert (discussion.task_id, discussion.kind) == (other.id, "discussion")
    assert not learning.queue(discussion)  # discussions are never distilled
    assert learning.queue(learning.ingest(locate(project_dir), transcript, session_id="a", ended=True).run)
    generator = FakeGenerator()
    distil(learning, generator)
    assert "Project task: Speed up CI" in generator.prompts[0]
    assert "Spec: cut the suite under 5 minutes" in generator.prompts[0]
    assert "- [earlier run on this task] tests pass: Switched vitest to forks" in tasks.context(project, started)
    # A discussion of the task in progress, named by kind alone.
    chat = project_dir / "c.jsonl"
    write(chat, user_line("how should we split the suite?", "u1"), answer_line("by marker", "b1", "m1"))
    talk_only = TaskLink("", "discussion")
    chatted = learning.ingest(locate(project_dir), chat, session_id="c", ended=True, link=talk_only).run
    assert (chatted.task_id, chatted.kind) == (started.id, "discussion") and not learning.queue(chatted)


def test_a_stopped_worker_puts_its_job_back(learning, service, project_dir: Path) -> None:
    transcript = project_dir / "session.jsonl"
    write(transcript, user_line("go", "u1"), answer_line("done", "b1", "m1"))
    learning.queue(learning.ingest(locate(project_dir), transcript, session_id="s", ended=True).run)
    [outcome] = distil(learning, FakeGenerator(on_call=learning.cancelled.set))
    assert outcome.state == "queued"
    assert [job.state for job, _run in service.store.jobs.list(None)] == ["queued"]
    assert learning.claim(1, lambda pid: True) is None  # a cancelled worker takes nothing new
