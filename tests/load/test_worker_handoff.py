"""A run queued while the worker finishes up is distilled before the worker exits (found by the load run).

A session-end hook that queues a run starts no worker when one is running. A worker used to wait for its
embeddings (up to 120 s under write load) and then exit without looking at the queue again, leaving such a run
queued until some later hook started a worker.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from orcmem.extract.generator import GeneratorResult
from orcmem.extract.resolve import GeneratorChoice
from orcmem.models.types import Project
from orcmem.service.learning import Learning
from orcmem.service.memory_service import MemoryService
from orcmem.worker import loop as worker

SAMPLE = Path(__file__).parents[1] / "fixtures" / "agents" / "claude_transcript_sample.jsonl"
ANSWER = {
    "summary": {"request": "Say hello", "workDone": "Ran echo hello", "outcome": "printed hello", "openItems": []},
    "memories": [{"type": "command", "title": "Print with echo", "body": "echo hello prints hello", "files": []}],
}


Answer = GeneratorResult.answer  # what every generator returns: the text, and what the call cost


class Model:
    """A distillation model that answers at once, with a different memory title each call."""

    provider, model = "claude", None

    def __init__(self) -> None:
        self.calls = 0

    def generate(self, prompt: str, schema: object = None) -> Answer:
        self.calls += 1
        answer = json.loads(json.dumps(ANSWER))
        answer["memories"][0]["title"] += f" ({self.calls})"
        return Answer(json.dumps(answer))


class SessionEndsDuringTheWait:
    """The worker's embedding pump; while the worker waits for it, another agent session ends and is queued."""

    def __init__(self, session_ends) -> None:
        self.session_ends = session_ends
        self.waits = 0
        self.last_error = None

    def pending(self) -> int:
        """Every memory has its vector."""
        return 0

    def schedule(self, memory_ids=None) -> None:
        """Nothing to embed in the background here."""

    def wait(self, timeout: float) -> bool:
        self.waits += 1
        if self.waits == 1:
            self.session_ends()
        return True


def end_session(learning: Learning, project: Project, folder: Path, session: str) -> str:
    transcript = folder / f"{session}.jsonl"
    shutil.copy(SAMPLE, transcript)
    run = learning.ingest(project, transcript, session_id=session, ended=True).run
    assert learning.queue(run)
    return run.id


def test_a_run_queued_during_the_final_embedding_wait_is_distilled(
    service: MemoryService, project: Project, project_dir: Path
) -> None:
    learning = Learning(service)
    first = end_session(learning, project, project_dir, "first")
    later: list[str] = []
    service.pump = SessionEndsDuringTheWait(lambda: later.append(end_session(learning, project, project_dir, "later")))
    model = Model()
    outcomes = worker.run(service, lambda run: GeneratorChoice(model, None, "stand-in"), linger=False)
    assert [o.run_id for o in outcomes] == [first, *later] and len(later) == 1
    assert {job.run_id: job.state for job, _run in service.store.jobs.list(None)} == {first: "done", later[0]: "done"}
    assert service.pump.waits == 2  # it waited for the second run's vectors too before exiting


class CommandsWriteMeanwhile:
    """The worker's pump, while commands hand it memories: `pending` says how many still lack a vector each time
    the worker asks (a command wrote one while it embedded), `schedule` counts the rounds it was asked for."""

    def __init__(self, pending: list[int]) -> None:
        self.left = pending
        self.rounds = 0
        self.last_error = None

    def schedule(self, memory_ids=None) -> None:
        self.rounds += 1

    def wait(self, timeout: float) -> bool:
        return True

    def pending(self) -> int:
        return self.left.pop(0) if len(self.left) > 1 else self.left[0]


def test_the_worker_embeds_what_commands_left_and_what_they_write_while_it_runs(service: MemoryService) -> None:
    """It starts by embedding what commands handed over, goes round again while new memories lack a vector, and
    stops when a round changes nothing (a memory the model cannot embed does not keep it running)."""
    service.settings.set_enabled(True)
    pump = CommandsWriteMeanwhile([2, 1, 1])  # one written meanwhile, then one that stays without a vector
    service.pump = pump  # type: ignore[assignment]
    worker.run(service, lambda run: GeneratorChoice(Model(), None, "stand-in"), linger=False)
    assert pump.rounds == 3  # the start, then once for each count that changed (2, then 1), not again for 1
